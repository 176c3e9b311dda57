//! The `projects` component (issue 21, docs/projects.md): `/api/projects` and everything
//! under it — a principal's projects and their files. The rules are `eve_projects`'; this
//! component parses and replies.
//!
//! - [`routes`]: the route table (404 / 405 on the path and method alone).
//! - [`admission`]: the checks on the request's head, before its body is read.
//! - [`api`]: which handler serves which route; [`projects`], [`files`]: the handlers.

mod admission;
mod api;
mod files;
mod projects;

use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::http_component;

/// Admits the request on its head, reads its body with the route's cap (an upload: the
/// owner's `attachment_max_bytes`, refused from `Content-Length` alone), then routes
/// (`eve_spin::api_component`).
#[http_component]
async fn handle(incoming: IncomingRequest, out: ResponseOutparam) {
    eve_spin::api_component::serve(incoming, out, admission::admit, api::route).await;
}
