//! The `auth` component: `/api/setup` and `/api/auth/*`.
//!
//! - [`api`]: the route table.
//! - [`handlers`]: setup status, session, password login, logout.
//! - [`oidc_flow`]: OIDC start and callback (the outbound calls to the provider).
//! - [`probe`]: whether the SQLite database and key-value store answer (for setup).
//! - [`reply`]: a response plus the cookies it sets.

mod api;
mod handlers;
mod oidc_flow;
mod probe;
mod reply;

use spin_sdk::http::conversions::TryFromIncomingRequest;
use spin_sdk::http::{IncomingRequest, Request, ResponseOutparam};
use spin_sdk::http_component;

/// Reads the whole request, routes it, and writes the response with every cookie it sets
/// (Spin's simple `Response` holds one `Set-Cookie`; the OIDC callback needs two).
#[http_component]
async fn handle(incoming: IncomingRequest, out: ResponseOutparam) {
    let reply = match Request::try_from_incoming_request(incoming).await {
        Ok(req) => api::route(req).await,
        Err(_) => reply::Reply::error(&eve_api::ApiError::bad_request("unreadable request")),
    };
    eve_spin::auth::send_with_cookies(out, reply.response, &reply.cookies).await;
}
