//! The route table of the `auth` component.

use eve_api::ApiError;
use spin_sdk::http::{Method, Request};

use crate::reply::Reply;
use crate::tokens::{self, TOKEN_PATH_PREFIX};
use crate::{accounts, handlers, oidc_flow};

/// The `:id` of `/api/tokens/:id` (one non-empty segment).
fn token_id(path: &str) -> Option<&str> {
    path.strip_prefix(TOKEN_PATH_PREFIX)
        .filter(|id| !id.is_empty() && !id.contains('/'))
}

pub async fn route(req: Request) -> Reply {
    let path = req.path().trim_end_matches('/').to_string();
    let method = req.method().clone();
    let result = match (path.as_str(), method) {
        ("/api/setup", Method::Get) => handlers::setup(&req),
        ("/api/auth/session", Method::Get) => handlers::session(&req),
        ("/api/auth/login", Method::Post) => handlers::login(&req),
        ("/api/auth/logout", Method::Post) => handlers::logout(&req),
        ("/api/auth/oidc/start", Method::Get) => Ok(oidc_flow::start(&req).await),
        ("/api/auth/oidc/callback", Method::Get) => Ok(oidc_flow::callback(&req).await),
        ("/api/auth/signup", Method::Post) => accounts::signup(&req),
        ("/api/auth/invite", Method::Post) => accounts::invite(&req),
        ("/api/auth/password", Method::Post) => accounts::change_password(&req),
        ("/api/auth/reset", Method::Post) => accounts::reset(&req),
        ("/api/auth/account", Method::Get) => accounts::account(&req),
        ("/api/auth/account", Method::Patch) => accounts::patch_account(&req),
        ("/api/tokens", Method::Get) => tokens::list(&req),
        ("/api/tokens", Method::Post) => tokens::create(&req),
        (p, m) if token_id(p).is_some() => match m {
            Method::Delete => tokens::revoke(&req, token_id(p).unwrap_or_default()),
            _ => Err(ApiError::method_not_allowed()),
        },
        (
            "/api/setup"
            | "/api/auth/session"
            | "/api/auth/login"
            | "/api/auth/logout"
            | "/api/auth/oidc/start"
            | "/api/auth/oidc/callback"
            | "/api/auth/signup"
            | "/api/auth/invite"
            | "/api/auth/password"
            | "/api/auth/reset"
            | "/api/auth/account"
            | "/api/tokens",
            _,
        ) => Err(ApiError::method_not_allowed()),
        _ => Err(ApiError::not_found("no such auth route")),
    };
    let reply: Reply = result.into();
    // Every page load asks /api/auth/session, so the browser learns HSTS from this component.
    if eve_spin::auth::is_https(&eve_spin::auth::config(), &req) {
        reply.with_hsts(eve_spin::auth::HSTS)
    } else {
        reply
    }
}
