//! The proxy's own answers: eve's error body, with `Retry-After` and the refreshed session
//! cookie when there is one.

use eve_agent::protocol::Refusal;
use eve_spin::streaming;
use spin_sdk::http::ResponseOutparam;

/// Sends eve's error body for `err` (setting `set_cookie`, if any).
pub fn send_error(out: ResponseOutparam, err: &Refusal, set_cookie: Option<&str>) {
    let mut headers = vec![
        ("content-type".to_string(), b"application/json".to_vec()),
        ("cache-control".to_string(), b"no-store".to_vec()),
    ];
    if let Some(s) = err.retry_after_secs {
        headers.push(("retry-after".into(), s.to_string().into_bytes()));
    }
    if let Some(c) = set_cookie {
        headers.push(("set-cookie".into(), c.as_bytes().to_vec()));
    }
    streaming::respond(out, err.status, &headers, err.to_json().as_bytes());
}
