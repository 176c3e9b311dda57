//! The `skills` component (issue 22, docs/skills.md): `/api/skills` and everything under it.
//! The rules are `eve_skills`'; this component parses and replies.
//!
//! A component of its own rather than a part of `admin`: every signed-in principal uses it
//! (for its own skills and its switches), while `admin` admits admins only; the admin check
//! here covers the global skills alone.
//!
//! - [`routes`]: the route table (404 / 405 on the path and method alone).
//! - [`api`]: admission (same origin, sign-in, the caller's role) and the handlers.

mod api;

use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::http_component;

/// Admits the request on its head, reads its body with the route's cap (a zip import:
/// [`eve_skills::import::MAX_ZIP_BYTES`]), then routes
/// (`eve_spin::api_component`).
#[http_component]
async fn handle(incoming: IncomingRequest, out: ResponseOutparam) {
    eve_spin::api_component::serve(incoming, out, api::admit, api::route).await;
}
