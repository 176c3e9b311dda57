//! `GET /api/admin/audit?cursor=`: the audit log, newest first.

use eve_api::ApiError;
use eve_spin::json;
use spin_sdk::http::{Request, Response};

use crate::admission::{query_param, Admin};

pub fn list(req: &Request, a: &Admin) -> Result<Response, ApiError> {
    let cursor = query_param(req, "cursor");
    Ok(json(
        200,
        &eve_accounts::audit::list(&a.db, cursor.as_deref())?,
    ))
}
