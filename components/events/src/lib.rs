//! The `events` component: everything under `/api/chats/:id/` except `/export` — the event log
//! (single and batch upserts, snapshots), the pending user message, the eve session, and the
//! authorization skip. The route table is in [`api`], the handlers in [`handlers`]; the SQL
//! and the rules are in `eve-store`.

mod api;
mod handlers;

use eve_store::routes::Component;
use spin_sdk::http::{IncomingRequest, ResponseOutparam};
use spin_sdk::http_component;

/// The checks run on the request's head; the body is read (capped) only after them.
#[http_component]
async fn handle(req: IncomingRequest, out: ResponseOutparam) {
    eve_spin::chat_request::serve(req, out, Component::Events, api::route).await;
}
