//! `eve-proxy`: the public face of the eve session API. Forwards `/eve/v1/*` to the private
//! `agent` component through Spin service chaining.

use spin_sdk::http::{IntoResponse, Method, Request, Response};
use spin_sdk::http_component;

const AGENT: &str = "http://agent.spin.internal";

#[http_component]
async fn handle(req: Request) -> anyhow::Result<impl IntoResponse> {
    let path = eve_spin::spin_header(&req, "spin-path-info").unwrap_or("").to_string();
    let query = req.query();
    let url = if query.is_empty() {
        format!("{AGENT}/eve/v1{path}")
    } else {
        format!("{AGENT}/eve/v1{path}?{query}")
    };
    let method: Method = req.method().clone();
    let out = Request::builder().method(method).uri(url).body(req.body().to_vec()).build();
    let resp: Result<Response, _> = spin_sdk::http::send(out).await;
    Ok(match resp {
        Ok(r) => r,
        Err(e) => eve_spin::error(&eve_api::ApiError::new(
            eve_api::ErrorCode::Upstream,
            format!("agent unreachable: {e}"),
        )),
    })
}
