//! The private `agent` component: the eve session API behind `eve-proxy` (reached through
//! service chaining, `http://agent.spin.internal`, or by URL where chaining does not exist).
//!
//! - [`api`]: reads the request, checks the proxy's signed principal assertion, routes.
//! - [`handlers`]: one function per route (create, send, interrupt, connect page).
//! - [`reader`]: the stream of a session from an index: NDJSON or SSE, tailing a running turn,
//!   keep-alives, settling an orphaned turn.
//! - [`runner`]: runs a turn after the POST has answered, holding and renewing the lease.
//! - [`transport`]: outbound HTTP for the model providers.
//!
//! All the decisions are in `eve-agent`; the SQL is in `eve_agent::store`.

mod api;
mod handlers;
mod reader;
mod runner;
mod transport;

use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::http_component;

#[http_component]
async fn handle(req: IncomingRequest, out: ResponseOutparam) {
    api::serve(req, out).await;
}
