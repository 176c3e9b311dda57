//! The private `agent` component: the eve session API behind `eve-proxy` (reached through
//! service chaining, `http://agent.spin.internal`, or by URL where chaining does not exist).
//!
//! - [`api`]: reads the request, checks the proxy's HS256 bearer token, routes.
//! - [`reply`]: what handlers share: the call, the database, JSON answers, eve's error body.
//! - [`handlers`]: one function per route (create, send, cancel, clear/compact, reset, info,
//!   connect page, OAuth callback).
//! - [`reader`]: the stream of a session from a cursor: eve's NDJSON (or SSE), following,
//!   keep-alives, lease control, taking over an orphaned session.
//! - [`runner`]: runs a session's work after the request has answered (the inbox, turns,
//!   resume), holding and renewing the lease.
//! - [`transport`]: outbound HTTP for the model providers.
//!
//! All the decisions are in `eve-agent`; the SQL is in `eve_agent::session::store`.

mod api;
mod handlers;
mod reader;
mod reply;
mod runner;
mod transport;

use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::http_component;

#[http_component]
async fn handle(req: IncomingRequest, out: ResponseOutparam) {
    api::serve(req, out).await;
}
