//! `/api/admin/users*`: list and search, change role or disabled, delete, reset link.

use eve_accounts::admin;
use eve_api::accounts::UserPatch;
use eve_api::auth::account_principal_id;
use eve_api::ApiError;
use eve_spin::db::now_ms;
use eve_spin::json;
use spin_sdk::http::{Request, Response};

use crate::admission::{base_url, query_param, Admin};

fn no_content() -> Response {
    Response::builder()
        .status(204)
        .header("cache-control", "no-store")
        .build()
}

/// `GET /api/admin/users?q=&cursor=`.
pub fn list(req: &Request, a: &Admin) -> Result<Response, ApiError> {
    let q = query_param(req, "q");
    let cursor = query_param(req, "cursor");
    Ok(json(
        200,
        &admin::list_users(&a.db, q.as_deref(), cursor.as_deref())?,
    ))
}

/// `PATCH /api/admin/users/:id` `{role?, disabled?}`. Disabling is the one write of the
/// account row that every request reads (`eve_spin::auth::admit`), so the account's cookies
/// and tokens stop at its next request and its open streams at the proxy's next re-check; it
/// also asks its running turns to stop.
pub fn patch(req: &Request, a: &Admin, id: &str) -> Result<Response, ApiError> {
    let patch: UserPatch = eve_spin::json_body(req)?;
    let account = admin::patch_user(&a.db, id, &patch, now_ms())?;
    let detail = serde_json::to_value(&patch).ok();
    a.record("user_updated", Some(&account_principal_id(id)), detail)?;
    Ok(json(200, &admin::admin_user(&account)))
}

/// `DELETE /api/admin/users/:id`: 204, also for an account already gone (a retry). The
/// account is disabled before its data goes and its row goes last, so from the first write
/// on no cookie or token of it works again.
pub fn delete(a: &Admin, id: &str) -> Result<Response, ApiError> {
    let principal = account_principal_id(id);
    let deleted = admin::delete_user(&a.db, id, now_ms())?;
    if deleted {
        a.record("user_deleted", Some(&principal), None)?;
    }
    Ok(no_content())
}

/// `POST /api/admin/users/:id/reset`: a one-time link, 24 h.
pub fn reset(req: &Request, a: &Admin, id: &str) -> Result<Response, ApiError> {
    let base = base_url(req)?;
    let link = eve_accounts::resets::create(&a.db, id, a.account()?, &base, now_ms())?;
    a.record("reset_created", Some(&account_principal_id(id)), None)?;
    Ok(json(200, &link))
}
