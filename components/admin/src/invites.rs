//! `/api/admin/invites*`: create (the token shown once), list, revoke.

use eve_api::accounts::{InviteCreate, InviteList};
use eve_api::ApiError;
use eve_spin::db::now_ms;
use eve_spin::json;
use spin_sdk::http::{Request, Response};

use crate::admission::{base_url, Admin};

/// `POST /api/admin/invites` `{role, email?}`: 201, 7 days.
pub fn create(req: &Request, a: &Admin) -> Result<Response, ApiError> {
    let body: InviteCreate = eve_spin::json_body(req)?;
    let base = base_url(req)?;
    let created = eve_accounts::invites::create(&a.db, &body, a.account()?, &base, now_ms())?;
    let detail =
        serde_json::json!({"id": created.id, "role": created.role, "email": created.email});
    a.record("invite_created", None, Some(detail))?;
    Ok(json(201, &created))
}

/// `GET /api/admin/invites`.
pub fn list(a: &Admin) -> Result<Response, ApiError> {
    let invites = eve_accounts::invites::list(&a.db)?;
    Ok(json(200, &InviteList { invites }))
}

/// `DELETE /api/admin/invites/:id`: 204 (revoking twice is fine).
pub fn revoke(a: &Admin, id: &str) -> Result<Response, ApiError> {
    if eve_accounts::invites::revoke(&a.db, id)? {
        a.record("invite_revoked", None, Some(serde_json::json!({"id": id})))?;
    }
    Ok(Response::builder()
        .status(204)
        .header("cache-control", "no-store")
        .build())
}
