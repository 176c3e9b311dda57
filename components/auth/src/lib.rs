//! The `auth` component: `/api/setup`, `/api/auth/*` and `/api/tokens*`.
//!
//! - [`api`]: the route table.
//! - [`handlers`]: setup status, session, password login, logout.
//! - [`accounts`]: accounts mode's sign-up, login, invitation lookup, password, reset, settings.
//! - [`oidc_flow`]: OIDC start and callback (the outbound calls to the provider).
//! - [`probe`]: whether the SQLite database and key-value store answer (for setup).
//! - [`reply`]: a response plus the cookies it sets.
//! - [`tokens`]: the caller's API tokens (list, create, revoke).

mod accounts;
mod api;
mod handlers;
mod oidc_flow;
mod probe;
mod reply;
mod tokens;

use eve_spin::body::MAX_SMALL_BODY_BYTES;
use spin_sdk::http::{IncomingRequest, Method, ResponseOutparam};
use spin_sdk::http_component;

/// Routes the request and writes the response with every cookie it sets (Spin's simple
/// `Response` holds one `Set-Cookie`; the OIDC callback needs two). Only a POST (or PATCH)
/// has a body worth reading (the login's password, a settings change), and at most the small
/// cap of it; every other request is answered from its head alone. A request with
/// `Authorization: Bearer` (an API token) never gets a `Set-Cookie`: a script's token must
/// not turn into a browser session, nor clear one.
#[http_component]
async fn handle(incoming: IncomingRequest, out: ResponseOutparam) {
    let mut req = eve_spin::body::head(&incoming);
    let bearer = eve_spin::auth::bearer_token(&req).is_some();
    let mut reply = if matches!(*req.method(), Method::Post | Method::Patch) {
        match eve_spin::body::read_capped(incoming, MAX_SMALL_BODY_BYTES).await {
            Ok(bytes) => {
                *req.body_mut() = bytes;
                api::route(req).await
            }
            Err(e) => reply::Reply::error(&e.api_error(MAX_SMALL_BODY_BYTES)),
        }
    } else {
        api::route(req).await
    };
    if bearer {
        reply.cookies.clear();
    }
    eve_spin::auth::send_with_cookies(out, reply.response, &reply.cookies).await;
}
