//! The `admin` component: `/api/admin/*` (`docs/accounts.md`, `docs/runtime.md`): admins of
//! accounts mode, and in local-dev the one local developer. Admins manage accounts and what
//! the agent can use; no route here reads a chat, an event, an attachment or a memory.
//!
//! - [`admission`]: who is calling (401) and whether they are an enabled admin, read from SQL
//!   on every request, or the local developer (403) — before the body is read.
//! - [`api`]: the route table.
//! - [`users`], [`invites`], [`audit`]: the handlers; the decisions are `eve_accounts`'.
//! - [`usage`]: usage, quotas and the models members may use; the decisions are `eve_usage`'.
//! - [`settings`]: the system settings; the decisions are `eve_runtime::settings`'.
//! - [`mcp_servers`]: MCP servers as data; the decisions are `eve_runtime`'s, the tools
//!   refresh uses the agent's MCP client.
//! - [`providers`]: model providers as data and secret rotation; the decisions are
//!   `eve_runtime`'s.

mod admission;
mod api;
mod audit;
mod invites;
mod mcp_servers;
mod providers;
mod settings;
mod usage;
mod users;

use eve_spin::body::MAX_SMALL_BODY_BYTES;
use spin_sdk::http::{IncomingRequest, Method, ResponseOutparam};
use spin_sdk::http_component;

/// Admits the caller on the request's head, then reads a POST / PATCH / PUT body (capped) and
/// routes.
#[http_component]
async fn handle(incoming: IncomingRequest, out: ResponseOutparam) {
    let mut req = eve_spin::body::head(&incoming);
    let admin = match admission::admit(&req) {
        Ok(admin) => admin,
        Err(e) => return send(out, eve_spin::error(&e)).await,
    };
    if matches!(*req.method(), Method::Post | Method::Patch | Method::Put) {
        match eve_spin::body::read_capped(incoming, MAX_SMALL_BODY_BYTES).await {
            Ok(bytes) => *req.body_mut() = bytes,
            Err(e) => return send(out, eve_spin::error(&e.api_error(MAX_SMALL_BODY_BYTES))).await,
        }
    }
    send(out, api::route(&req, &admin)).await;
}

async fn send(out: ResponseOutparam, response: spin_sdk::http::Response) {
    eve_spin::auth::send_with_cookies(out, response, &[]).await;
}
