//! The private `agent` component: the eve session API behind `eve-proxy` (reached through
//! service chaining, `http://agent.spin.internal`, or by URL where chaining does not exist).
//!
//! - [`api`]: reads the request, checks the proxy's HS256 bearer token, routes.
//! - [`reply`]: what handlers share: the call, the database, JSON answers, eve's error body,
//!   the connect pages.
//! - [`handlers`]: one function per route (create, send, cancel, clear/compact, reset, info,
//!   connect page, OAuth callback, connections, attachments): parse, call the one
//!   `eve_agent::service` function that decides, reply, then run the work.
//! - [`reader`]: the stream of a session from a cursor, served into the response body as it
//!   is written (`eve_agent::service::stream` decides: eve's NDJSON or SSE, following,
//!   keep-alives, lease control, taking over an orphaned session).
//! - [`env`]: running a session's work after the request has answered, over the platform
//!   the agent's logic runs over (`eve_agent_spin::Spin`: clock, variables, outbound HTTP).
//!
//! All the decisions are in `eve-agent` (`eve_agent::service` for each route, the work loop
//! and the sign-in flow); the SQL is in `eve_agent::session::store`.

mod api;
mod env;
mod handlers;
mod reader;
mod reply;

use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::http_component;

#[http_component]
async fn handle(req: IncomingRequest, out: ResponseOutparam) {
    api::serve(req, out).await;
}
