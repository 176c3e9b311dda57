//! The route table of `/api/admin/*`; every arm runs after [`crate::admission::admit`].

use eve_api::ApiError;
use spin_sdk::http::{Method, Request, Response};

use crate::admission::Admin;
use crate::{audit, invites, mcp_servers, providers, settings, usage, users};

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
        (["usage"], Method::Get) => usage::overview(req, admin),
        (["users", id, "usage"], Method::Get) => usage::user_days(req, admin, id),
        (["users", id, "quota"], Method::Put) => usage::set_quota(req, admin, id),
        (["models"], Method::Get) => usage::models(admin),
        (["models"], Method::Put) => usage::set_models(req, admin),
        (["settings"], Method::Get) => settings::get(admin),
        (["settings"], Method::Patch) => settings::patch(req, admin),
        (["mcp-servers"], Method::Get) => mcp_servers::list(admin),
        (["mcp-servers"], Method::Post) => mcp_servers::create(req, admin),
        (["mcp-servers", id], Method::Patch) => mcp_servers::patch(req, admin, id),
        (["mcp-servers", id], Method::Delete) => mcp_servers::delete(admin, id),
        (["mcp-servers", id, "tools"], Method::Post) => mcp_servers::refresh(admin, id),
        (["providers"], Method::Get) => providers::list(admin),
        (["providers"], Method::Post) => providers::create(req, admin),
        (["providers", id], Method::Patch) => providers::patch(req, admin, id),
        (["providers", id], Method::Delete) => providers::delete(admin, id),
        (["providers", id, "test"], Method::Post) => providers::test(admin, id),
        (["secrets", "rotate"], Method::Post) => providers::rotate(admin),
        (
            ["users"]
            | ["users", _]
            | ["users", _, "reset"]
            | ["invites"]
            | ["invites", _]
            | ["audit"]
            | ["usage"]
            | ["users", _, "usage" | "quota"]
            | ["models"]
            | ["settings"]
            | ["mcp-servers"]
            | ["mcp-servers", _]
            | ["mcp-servers", _, "tools"]
            | ["providers"]
            | ["providers", _]
            | ["providers", _, "test"]
            | ["secrets", "rotate"],
            _,
        ) => Err(ApiError::method_not_allowed()),
        _ => Err(ApiError::not_found("no such admin route")),
    };
    result.unwrap_or_else(|e| eve_spin::error(&e))
}
