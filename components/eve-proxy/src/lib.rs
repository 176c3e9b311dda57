//! `eve-proxy`: the public face of the eve session API (`/eve/v1/*`).
//!
//! 1. Routes and validates as eve does (`eve_agent::protocol`): unknown route 404, bad body 400
//!    with eve's texts, 413, 415, message ≤ 8000 characters — before anything is forwarded.
//!    Every refusal is eve's error body `{"ok":false,"code"?,"error"}`.
//! 2. Authenticates the session cookie or an API token (`Authorization: Bearer evc_…`, looked
//!    up in SQLite: eve's CLI uses one) (`eve_spin::auth`; 401), and requires a same-origin
//!    request for every POST (403). `GET|HEAD /eve/v1/health` is open.
//! 3. Counts `chat:send` (25 per hour per principal, variable `chat_send_per_hour`) for each
//!    request that starts model work (a message, answers to a question, a decision on a
//!    connect page, a connection's OAuth callback whose `state` verifies), in an atomic fixed
//!    window (`eve_spin::ratelimit`; 429 with `Retry-After`); clears, compacts and creates
//!    without a message on their own `chat:control` budget (`chat_control_per_hour`, 120).
//!    The body is read only after the head's checks (authentication first), capped at the
//!    agent's limit.
//! 4. Holds one of the principal's stream slots for each open stream read
//!    (`eve_spin::streams`, variable `max_streams_per_user`, default 8; the next is 429 with
//!    `Retry-After`).
//! 5. Forwards to the agent (`eve_upstream_url`, default `http://agent.spin.internal`, or any
//!    real eve agent) with the principal in a short-lived HS256 JWT (`Authorization: Bearer`,
//!    `eve_agent::connections::jwt`): the scheme eve's `jwtHmac` verifies. The cookie is not forwarded.
//! 6. Streams the agent's response through as it arrives: status and headers
//!    (`x-eve-session-id`, content type) first, then each chunk the moment it is read. Nothing
//!    is buffered; a browser that goes away drops the upstream stream (the turn runs on in the
//!    agent regardless). An open stream asks every few seconds whether its cookie still signs
//!    in, and ends once a logout, a narrowed allow-list or a rotated secret says no.
//!
//! The steps are one module each: [`admission`] (head and body checks), [`body`] (the capped
//! read), [`lease`] (the stream slot), [`forward`] (the call and the streamed answer);
//! [`reply`] answers refusals, [`env`] reads variables and headers.

mod admission;
mod body;
mod env;
mod forward;
mod lease;
mod reply;

use eve_spin::streams::StreamLease;
use spin_sdk::http::{IncomingRequest, Request, ResponseOutparam};
use spin_sdk::http_component;

use crate::admission::Refused;
use crate::reply::send_error;

pub use crate::forward::DEFAULT_UPSTREAM;

/// A request that passed every check: ready to forward.
struct Ready {
    req: Request,
    /// The principal's token for the agent (`None` on the open health route).
    bearer: Option<String>,
    /// Held until the handler returns, however it returns (the slot is emptied on drop).
    lease: Option<StreamLease>,
}

#[http_component]
async fn handle(incoming: IncomingRequest, out: ResponseOutparam) {
    let (ready, cookie) = match admit(incoming).await {
        Ok(a) => a,
        Err((e, cookie)) => return send_error(out, &e, cookie.as_deref()),
    };
    let Ready {
        req,
        bearer,
        mut lease,
    } = ready;
    let upstream = forward::upstream();
    let url = forward::upstream_url(&upstream, req.path(), req.query());
    let bearer_sent = bearer.is_some();
    let headers = forward::request_headers(&req, bearer);
    let response = match forward::send(&req, &upstream, &url, &headers, &mut lease) {
        Ok(r) => r,
        Err(e) => return send_error(out, &e, cookie.as_deref()),
    };
    // A body the agent meant (eve's JSON error, or one of its pages: a sign-in that could not
    // start is a 502 page the user must read) passes; a failure without one is replaced.
    let is_json = response
        .header("content-type")
        .is_some_and(|v| v.starts_with(b"application/json") || v.starts_with(b"text/html"));
    if let Some(e) = forward::agent_failure(response.status, is_json) {
        return send_error(out, &e, cookie.as_deref());
    }
    let headers = forward::response_headers(&response.headers, cookie.as_deref());
    let signs_in = bearer_sent;
    forward::pipe(response, out, &headers, &mut lease, &mut || {
        !signs_in || still_signed_in(&req)
    });
}

/// Whether the request's cookie still signs its principal in (not logged out, still allowed,
/// the secret not rotated away). Only a definite 401 ends a stream: a key-value store that
/// cannot answer for a moment does not cut every open stream.
fn still_signed_in(req: &Request) -> bool {
    match eve_spin::auth::authenticate(req) {
        Ok(_) => true,
        Err(e) => e.code != eve_api::error::ErrorCode::Unauthorized,
    }
}

/// Every check, in order: the head (route, cookie, origin), the body (read capped, then
/// validated and counted), the stream slot. A refusal carries the refreshed cookie, if any;
/// so does the admitted request (the second value).
async fn admit(incoming: IncomingRequest) -> Result<(Ready, Option<String>), Refused> {
    let mut req = eve_spin::body::head(&incoming);
    let head = admission::admit_head(&req)?;
    let cookie = head
        .session
        .as_ref()
        .and_then(|s| s.refreshed_cookie.clone());
    let with_cookie = |e| (e, cookie.clone());
    *req.body_mut() = body::read_body(incoming, &head.route)
        .await
        .map_err(with_cookie)?;
    let bearer = admission::admit_body(&req, &head)?;
    let lease = lease::stream_lease(&req, &head).map_err(with_cookie)?;
    Ok((Ready { req, bearer, lease }, cookie))
}
