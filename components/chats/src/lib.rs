//! The `chats` component. A placeholder that names itself until its issue fills it in.

use spin_sdk::http::{IntoResponse, Request};
use spin_sdk::http_component;

#[http_component]
fn handle(req: Request) -> anyhow::Result<impl IntoResponse> {
    let path = eve_spin::spin_header(&req, "spin-path-info").unwrap_or("").to_string();
    Ok(eve_spin::json(
        200,
        &serde_json::json!({ "component": "chats", "path": path }),
    ))
}
