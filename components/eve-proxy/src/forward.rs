//! Forwarding to the agent: the upstream URL and the headers it gets (the principal's token,
//! the app's origin), the agent's failure as eve's error body, and the response streamed
//! through as it arrives while the stream's slot is renewed.

use std::time::Duration;

use eve_agent::protocol::Refusal;
use eve_api::eve::APP_ORIGIN_HEADER;
use eve_spin::streaming::{self, BodyWriter, Incoming, Read};
use eve_spin::streams::StreamLease;
use spin_sdk::http::{Request, ResponseOutparam};

use crate::env::{header, variable};

/// The agent's base URL when `eve_upstream_url` is unset.
pub const DEFAULT_UPSTREAM: &str = "http://agent.spin.internal";
/// How long the agent may take to answer with its response head.
const UPSTREAM_CONNECT_WAIT: Duration = Duration::from_secs(30);
/// The longest wait for the next chunk (the agent sends keep-alives every 15 s).
const UPSTREAM_READ_WAIT: Duration = Duration::from_secs(600);

/// One read's wait: the stream's slot is renewed between reads (`eve_spin::streams`).
const READ_POLL: Duration = Duration::from_secs(2);
/// How often an open stream asks again whether its reader is still signed in: a logout, a
/// narrowed allow-list or a rotated secret ends the streams already open within this time,
/// not only the requests that come after.
const SIGN_IN_RECHECK: Duration = Duration::from_secs(4);

/// Request headers forwarded to the agent.
const FORWARDED_REQUEST_HEADERS: &[&str] = &["content-type", "accept", "last-event-id"];
/// Response headers passed back to the browser.
const FORWARDED_RESPONSE_HEADERS: &[&str] = &[
    "content-type",
    // An attachment's (a download, never sniffed).
    "content-disposition",
    "x-content-type-options",
    "location",
    "cache-control",
    "retry-after",
    "content-security-policy",
    "x-accel-buffering",
    "www-authenticate",
    "x-eve-session-id",
    "x-eve-stream-format",
    "x-eve-stream-tail-index",
    "x-eve-stream-version",
];

/// The agent's base URL (`eve_upstream_url`).
pub fn upstream() -> String {
    variable("eve_upstream_url").unwrap_or_else(|| DEFAULT_UPSTREAM.to_string())
}

/// The request's path and query under `upstream`.
pub fn upstream_url(upstream: &str, path: &str, query: &str) -> String {
    if query.is_empty() {
        format!("{}{}", upstream.trim_end_matches('/'), path)
    } else {
        format!("{}{}?{query}", upstream.trim_end_matches('/'), path)
    }
}

/// The headers the agent gets: the forwarded ones, the principal's token, the app's origin.
pub fn request_headers(req: &Request, bearer: Option<String>) -> Vec<(String, Vec<u8>)> {
    let mut headers: Vec<(String, Vec<u8>)> = FORWARDED_REQUEST_HEADERS
        .iter()
        .filter_map(|name| header(req, name).map(|v| (name.to_string(), v.as_bytes().to_vec())))
        .collect();
    if let Some(b) = bearer {
        headers.push(("authorization".to_string(), b.into_bytes()));
    }
    // The app's public origin, for the redirect URI of a connection's OAuth flow.
    if let Some(origin) = eve_spin::auth::base_origin(&eve_spin::auth::config(), req) {
        headers.push((
            APP_ORIGIN_HEADER.to_string(),
            origin.serialize().into_bytes(),
        ));
    }
    headers
}

/// Sends the request to the agent (renewing the stream's slot while it waits for the head).
pub fn send(
    req: &Request,
    upstream: &str,
    url: &str,
    headers: &[(String, Vec<u8>)],
    lease: &mut Option<StreamLease>,
) -> Result<Incoming, Refusal> {
    streaming::send_with(
        req.method().clone(),
        url,
        headers,
        req.body(),
        UPSTREAM_CONNECT_WAIT,
        &mut || {
            if let Some(lease) = lease.as_mut() {
                lease.renew_if_due();
            }
            true
        },
    )
    .map_err(|e| {
        eprintln!("eve-proxy: agent unreachable at {upstream}: {e}");
        Refusal::new(
            502,
            Some("upstream"),
            "The agent is unreachable; try again.",
        )
    })
}

/// An agent's 5xx without a JSON error body, as eve's error body (503 stays 503); `None` for
/// any other answer, which is passed through.
pub fn agent_failure(status: u16, is_json: bool) -> Option<Refusal> {
    if status < 500 || is_json {
        return None;
    }
    eprintln!("eve-proxy: agent answered {status} without an error body");
    let (status, code) = if status == 503 {
        (503, "not_configured")
    } else {
        (502, "upstream")
    };
    Some(Refusal::new(
        status,
        Some(code),
        "The agent failed; try again.",
    ))
}

/// The agent's response headers the browser gets, and the refreshed session cookie.
pub fn response_headers(
    upstream: &[(String, Vec<u8>)],
    cookie: Option<&str>,
) -> Vec<(String, Vec<u8>)> {
    let mut headers: Vec<(String, Vec<u8>)> = upstream
        .iter()
        .filter(|(k, _)| {
            FORWARDED_RESPONSE_HEADERS
                .iter()
                .any(|f| k.eq_ignore_ascii_case(f))
        })
        .cloned()
        .collect();
    if let Some(c) = cookie {
        headers.push(("set-cookie".into(), c.as_bytes().to_vec()));
    }
    headers
}

/// Streams the agent's response through: status and headers first, then each chunk the
/// moment it is read. Nothing is buffered; a browser that goes away drops the upstream stream.
/// Every [`SIGN_IN_RECHECK`] the reader's sign-in is asked again (`signed_in`); once it is
/// gone the stream ends, as a new request would be refused.
pub fn pipe(
    mut incoming: Incoming,
    out: ResponseOutparam,
    headers: &[(String, Vec<u8>)],
    lease: &mut Option<StreamLease>,
    signed_in: &mut dyn FnMut() -> bool,
) {
    let mut w = BodyWriter::start(out, incoming.status, headers);
    let mut quiet = Duration::ZERO;
    let mut checked = std::time::Instant::now();
    loop {
        if let Some(lease) = lease.as_mut() {
            lease.renew_if_due();
        }
        if checked.elapsed() >= SIGN_IN_RECHECK {
            checked = std::time::Instant::now();
            if !signed_in() {
                eprintln!("eve-proxy: the reader is no longer signed in; ending the stream");
                break;
            }
        }
        match incoming.read(READ_POLL) {
            Ok(Read::Data(bytes)) => {
                quiet = Duration::ZERO;
                if !w.write(&bytes) {
                    // The browser went away: dropping the upstream ends the agent's stream too.
                    return;
                }
            }
            Ok(Read::Idle) => {
                quiet += READ_POLL;
                if quiet >= UPSTREAM_READ_WAIT {
                    eprintln!("eve-proxy: the agent sent nothing for {UPSTREAM_READ_WAIT:?}; ending the stream");
                    break;
                }
            }
            Ok(Read::End) => break,
            Err(e) => {
                // The upstream broke mid-body; the reader resumes from its last index.
                eprintln!("eve-proxy: upstream stream broke: {e}");
                break;
            }
        }
    }
    w.finish();
}
