//! The `chats` component: `/api/chats` and `/api/chats/:id` (and its `/export`). The route
//! table is in [`api`], the handlers in [`handlers`]; the SQL and the rules are in `eve-store`.

mod api;
mod handlers;

use spin_sdk::http::{Request, Response};
use spin_sdk::http_component;

#[http_component]
fn handle(req: Request) -> Response {
    api::route(&req)
}
