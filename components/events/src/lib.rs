//! The `events` component: everything under `/api/chats/:id/` except `/export` — the event log
//! (single and batch upserts, snapshots), the pending user message, the eve session, and the
//! authorization skip. The route table is in [`api`], the handlers in [`handlers`]; the SQL
//! and the rules are in `eve-store`.

mod api;
mod handlers;

use spin_sdk::http::{Request, Response};
use spin_sdk::http_component;

#[http_component]
fn handle(req: Request) -> Response {
    api::route(&req)
}
