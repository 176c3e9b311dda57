//! What the proxy reads besides the body: its Spin variables and the request's headers, and
//! how it maps the app's errors to eve's error body.

use eve_agent::protocol::Refusal;
use spin_sdk::http::Request;

/// A variable, trimmed; unset or empty is `None`.
pub fn variable(name: &str) -> Option<String> {
    spin_sdk::variables::get(name)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// A request header as text.
pub fn header<'a>(req: &'a Request, name: &str) -> Option<&'a str> {
    req.header(name).and_then(|v| v.as_str())
}

/// The app's error envelope (auth, rate limits) as eve's error body.
pub fn api(e: eve_api::ApiError) -> Refusal {
    Refusal::from_api(&e)
}
