//! The route table of `/api/admin/*`. Usage, quotas and model access (`usage.rs`, issue 20)
//! join here as further arms; every arm runs after [`crate::admission::admit`].

use eve_api::ApiError;
use spin_sdk::http::{Method, Request, Response};

use crate::admission::Admin;
use crate::{audit, invites, users};

pub fn route(req: &Request, admin: &Admin) -> Response {
    let path = req.path().trim_end_matches('/').to_string();
    let segments: Vec<&str> = path
        .strip_prefix("/api/admin")
        .unwrap_or_default()
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let method = req.method().clone();
    let result = match (segments.as_slice(), method) {
        (["users"], Method::Get) => users::list(req, admin),
        (["users", id], Method::Patch) => users::patch(req, admin, id),
        (["users", id], Method::Delete) => users::delete(admin, id),
        (["users", id, "reset"], Method::Post) => users::reset(req, admin, id),
        (["invites"], Method::Post) => invites::create(req, admin),
        (["invites"], Method::Get) => invites::list(admin),
        (["invites", id], Method::Delete) => invites::revoke(admin, id),
        (["audit"], Method::Get) => audit::list(req, admin),
        (
            ["users"]
            | ["users", _]
            | ["users", _, "reset"]
            | ["invites"]
            | ["invites", _]
            | ["audit"],
            _,
        ) => Err(ApiError::method_not_allowed()),
        _ => Err(ApiError::not_found("no such admin route")),
    };
    result.unwrap_or_else(|e| eve_spin::error(&e))
}
