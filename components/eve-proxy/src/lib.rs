//! `eve-proxy`: the public face of the eve session API (`/eve/v1/*`).
//!
//! 1. Routes and validates as eve does (`eve_agent::protocol`): unknown route 404, bad body 400
//!    with eve's texts, 413, 415, message ≤ 8000 characters — before anything is forwarded.
//!    Every refusal is eve's error body `{"ok":false,"code"?,"error"}`.
//! 2. Authenticates the session cookie (`eve_spin::auth`; 401), and requires a same-origin
//!    request for every POST (403). `GET|HEAD /eve/v1/health` is open.
//! 3. Counts `chat:send` (25 per hour per principal, variable `chat_send_per_hour`) for each
//!    request that starts model work (a message, answers to a question, a decision on a
//!    connect page, a connection's OAuth callback), in an atomic fixed window
//!    (`eve_spin::ratelimit`; 429 with `Retry-After`). The body is read only after the
//!    head's checks (authentication first), capped at the agent's limit.
//! 4. Holds one of the principal's stream slots for each open stream read
//!    (`eve_spin::streams`, variable `max_streams_per_user`, default 8; the next is 429 with
//!    `Retry-After`).
//! 5. Forwards to the agent (`eve_upstream_url`, default `http://agent.spin.internal`, or any
//!    real eve agent) with the principal in a short-lived HS256 JWT (`Authorization: Bearer`,
//!    `eve_agent::jwt`): the scheme eve's `jwtHmac` verifies. The cookie is not forwarded.
//! 6. Streams the agent's response through as it arrives: status and headers
//!    (`x-eve-session-id`, content type) first, then each chunk the moment it is read. Nothing
//!    is buffered; a browser that goes away drops the upstream stream (the turn runs on in the
//!    agent regardless).

use std::time::Duration;

use eve_agent::jwt::UpstreamJwt;
use eve_agent::protocol::{self, Refusal, Route, SessionRequest};
use eve_api::eve::APP_ORIGIN_HEADER;
use eve_spin::body::BodyError;
use eve_spin::streaming::{self, BodyWriter, Read};
use eve_spin::streams::{self, StreamLease};
use eve_store::limits::{RatePolicy, CHAT_SEND};
use spin_sdk::http::{IncomingRequest, Request, ResponseOutparam};
use spin_sdk::http_component;

/// The agent's base URL when `eve_upstream_url` is unset.
pub const DEFAULT_UPSTREAM: &str = "http://agent.spin.internal";
/// How long the agent may take to answer with its response head.
const UPSTREAM_CONNECT_WAIT: Duration = Duration::from_secs(30);
/// The longest wait for the next chunk (the agent sends keep-alives every 15 s).
const UPSTREAM_READ_WAIT: Duration = Duration::from_secs(600);

/// One read's wait: the stream's slot is renewed between reads (`eve_spin::streams`).
const READ_POLL: Duration = Duration::from_secs(2);

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

fn variable(name: &str) -> Option<String> {
    spin_sdk::variables::get(name)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The `chat:send` policy: `chat_send_per_hour` (a positive integer) or the seed's 25.
fn send_policy() -> RatePolicy {
    let limit = variable("chat_send_per_hour")
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|n| *n > 0);
    RatePolicy {
        limit: limit.unwrap_or(CHAT_SEND.limit),
        ..CHAT_SEND
    }
}

fn send_error(out: ResponseOutparam, err: &Refusal, set_cookie: Option<&str>) {
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

fn header<'a>(req: &'a Request, name: &str) -> Option<&'a str> {
    req.header(name).and_then(|v| v.as_str())
}

fn api(e: eve_api::ApiError) -> Refusal {
    Refusal::from_api(&e)
}

/// A refusal, with the refreshed session cookie to set on it (if any).
type Refused = (Refusal, Option<String>);

/// What the head's checks found: the route and the session (`None` for the open health
/// route).
struct Admitted {
    route: Route,
    session: Option<eve_spin::auth::Session>,
}

/// The checks on the request's head, before any body byte is read: the route, the session
/// cookie (401), a same-origin POST (403).
fn admit_head(req: &Request) -> Result<Admitted, Refused> {
    let method = req.method().to_string();
    let route = protocol::route(&method, req.path()).map_err(|e| (e, None))?;
    if route == Route::Health {
        return Ok(Admitted {
            route,
            session: None,
        });
    }
    let session = eve_spin::auth::authenticate_session(req).map_err(|e| (api(e), None))?;
    if method == "POST" {
        eve_spin::auth::require_same_origin(req)
            .map_err(|e| (api(e), session.refreshed_cookie.clone()))?;
    }
    Ok(Admitted {
        route,
        session: Some(session),
    })
}

/// The checks on the body, and the principal's token for the upstream call.
fn admit_body(req: &Request, admitted: &Admitted) -> Result<Option<String>, Refused> {
    let Some(session) = &admitted.session else {
        return Ok(None);
    };
    let route = &admitted.route;
    let fail = |e: Refusal| (e, session.refreshed_cookie.clone());
    // The provider's callback resumes a parked turn: the model runs again, so it counts as a
    // send too (whether or not it turns out to be valid: the count is taken before the agent
    // is asked).
    let mut starts_turn = matches!(route, Route::ConnectionCallback);
    if route.takes_session_request() {
        let media = header(req, "content-type")
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        // eve reads the body as JSON whatever it is labelled (a missing type and `text/plain`
        // too); cross-site requests are already refused above. A body declared as a form or
        // anything else that is not JSON-like is refused.
        if !media.is_empty() && media != "application/json" && media != "text/plain" {
            return Err(fail(Refusal::new(
                415,
                Some("unsupported_media_type"),
                "Expected a JSON body (content-type: application/json).",
            )));
        }
        let request =
            protocol::session_request(req.body(), *route == Route::Create).map_err(fail)?;
        starts_turn |= matches!(
            request,
            SessionRequest::Message(_) | SessionRequest::InputResponses(_)
        );
    }
    if starts_turn {
        eve_spin::ratelimit::check_policy(send_policy(), &session.principal.id)
            .map_err(|e| fail(api(e)))?;
    }
    let jwt = UpstreamJwt::from_config(&eve_spin::auth::config(), variable)
        .ok_or_else(|| fail(Refusal::unauthorized()))?;
    Ok(Some(
        jwt.bearer(&session.principal, eve_spin::auth::now_secs()),
    ))
}

/// A following stream read holds one of its principal's stream slots while it is open
/// (variable `max_streams_per_user`); when all are taken it is refused with 429 and
/// `Retry-After`. A `follow=false` read ends at the tail, and every other route answers at
/// once: they hold none.
fn stream_lease(req: &Request, admitted: &Admitted) -> Result<Option<StreamLease>, Refusal> {
    let (Route::Stream(_), Some(session)) = (&admitted.route, &admitted.session) else {
        return Ok(None);
    };
    let follows =
        protocol::stream_query(req.query(), header(req, "last-event-id")).is_ok_and(|q| q.follow);
    if !follows {
        return Ok(None);
    }
    let max = streams::max_streams(variable("max_streams_per_user").as_deref());
    match streams::acquire(&session.principal.id, max) {
        Ok(Some(lease)) => Ok(Some(lease)),
        Ok(None) => Err(Refusal {
            retry_after_secs: Some(streams::RETRY_AFTER_SECS),
            ..Refusal::new(
                429,
                Some("too_many_streams"),
                streams::too_many_message(max),
            )
        }),
        Err(e) => Err(api(e)),
    }
}

/// The body, read only after the head's checks and at most the agent's cap: the agent stops
/// reading past it (a control's body too), so a larger one is refused here rather than
/// breaking mid-forward (502).
async fn read_body(incoming: IncomingRequest, route: &Route) -> Result<Vec<u8>, Refusal> {
    // A message may carry a file at the agent's upload cap (the same variable), in base64.
    let max = if route.takes_session_request() {
        eve_agent::attachments::UploadPolicy::from_vars(
            variable("attachment_max_bytes").as_deref(),
            None,
            None,
        )
        .message_body_cap()
    } else {
        protocol::MAX_BODY_BYTES
    };
    eve_spin::body::read_capped(incoming, max)
        .await
        .map_err(|e| match e {
            BodyError::TooLarge => Refusal::too_large(),
            BodyError::Unreadable => Refusal::bad_request("Could not read the request body."),
        })
}

#[http_component]
async fn handle(incoming: IncomingRequest, out: ResponseOutparam) {
    let mut req = eve_spin::body::head(&incoming);
    let admitted = match admit_head(&req) {
        Ok(a) => a,
        Err((e, cookie)) => return send_error(out, &e, cookie.as_deref()),
    };
    let cookie = admitted
        .session
        .as_ref()
        .and_then(|s| s.refreshed_cookie.clone());
    match read_body(incoming, &admitted.route).await {
        Ok(bytes) => *req.body_mut() = bytes,
        Err(e) => return send_error(out, &e, cookie.as_deref()),
    }
    let bearer = match admit_body(&req, &admitted) {
        Ok(b) => b,
        Err((e, cookie)) => return send_error(out, &e, cookie.as_deref()),
    };
    // Held until this handler returns, however it returns (the slot is emptied on drop).
    let mut lease = match stream_lease(&req, &admitted) {
        Ok(lease) => lease,
        Err(e) => return send_error(out, &e, cookie.as_deref()),
    };
    let upstream = variable("eve_upstream_url").unwrap_or_else(|| DEFAULT_UPSTREAM.to_string());
    let query = req.query();
    let url = if query.is_empty() {
        format!("{}{}", upstream.trim_end_matches('/'), req.path())
    } else {
        format!("{}{}?{query}", upstream.trim_end_matches('/'), req.path())
    };
    let mut headers: Vec<(String, Vec<u8>)> = FORWARDED_REQUEST_HEADERS
        .iter()
        .filter_map(|name| header(&req, name).map(|v| (name.to_string(), v.as_bytes().to_vec())))
        .collect();
    if let Some(b) = bearer {
        headers.push(("authorization".to_string(), b.into_bytes()));
    }
    // The app's public origin, for the redirect URI of a connection's OAuth flow.
    if let Some(origin) = eve_spin::auth::base_origin(&eve_spin::auth::config(), &req) {
        headers.push((
            APP_ORIGIN_HEADER.to_string(),
            origin.serialize().into_bytes(),
        ));
    }

    let mut incoming = match streaming::send_with(
        req.method().clone(),
        &url,
        &headers,
        req.body(),
        UPSTREAM_CONNECT_WAIT,
        &mut || {
            if let Some(lease) = lease.as_mut() {
                lease.renew_if_due();
            }
            true
        },
    ) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("eve-proxy: agent unreachable at {upstream}: {e}");
            return send_error(
                out,
                &Refusal::new(
                    502,
                    Some("upstream"),
                    "The agent is unreachable; try again.",
                ),
                cookie.as_deref(),
            );
        }
    };
    let is_json = incoming
        .header("content-type")
        .is_some_and(|v| v.starts_with(b"application/json"));
    if incoming.status >= 500 && !is_json {
        eprintln!(
            "eve-proxy: agent answered {} without an error body",
            incoming.status
        );
        let (status, code) = if incoming.status == 503 {
            (503, "not_configured")
        } else {
            (502, "upstream")
        };
        return send_error(
            out,
            &Refusal::new(status, Some(code), "The agent failed; try again."),
            cookie.as_deref(),
        );
    }
    let mut response_headers: Vec<(String, Vec<u8>)> = incoming
        .headers
        .iter()
        .filter(|(k, _)| {
            FORWARDED_RESPONSE_HEADERS
                .iter()
                .any(|f| k.eq_ignore_ascii_case(f))
        })
        .cloned()
        .collect();
    if let Some(c) = &cookie {
        response_headers.push(("set-cookie".into(), c.as_bytes().to_vec()));
    }
    let mut w = BodyWriter::start(out, incoming.status, &response_headers);
    let mut quiet = Duration::ZERO;
    loop {
        if let Some(lease) = lease.as_mut() {
            lease.renew_if_due();
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
