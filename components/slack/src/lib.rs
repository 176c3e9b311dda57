//! `slack`: the public `POST /eve/v1/slack` route, eve's `slackChannel` in a Spin component
//! (docs/slack.md). In order, as eve does it:
//!
//! 1. The body is read (capped) and Slack's v0 signature checked with `slack_signing_secret`
//!    (`eve_slack::verify`): anything unsigned, mis-signed or older than five minutes is 401
//!    `unauthorized`, before anything is parsed, read from or written to a store.
//! 2. A retry after our answer timed out (`X-Slack-Retry-Num` ≥ 1 with reason
//!    `http_timeout`) is answered `ok` and dropped.
//! 3. `url_verification` answers its challenge; an app mention or a DM becomes a turn unless
//!    its `event_id` was seen before (SQLite, `eve_slack::store`); a click on a question's
//!    button answers it, "Type your answer" opens the answer modal and its submission answers;
//!    everything else is `ok`.
//! 4. The answer (200) goes out at once; the turn then runs in this same invocation, after the
//!    response, as the agent's `drain` does ([`turn`]).
//!
//! [`agent`] reaches the agent over service chaining, [`slack_api`] the Slack Web API,
//! [`http`] is the buffered outbound call both use.

mod agent;
mod http;
mod slack_api;
mod turn;

use eve_slack::inbound::{self, Inbound};
use eve_slack::{store, verify};
use eve_spin::body::BodyError;
use eve_spin::streaming;
use spin_sdk::http::{IncomingRequest, Request, ResponseOutparam};
use spin_sdk::http_component;

/// The largest body read (Slack's events and interaction payloads are a few kB).
const MAX_BODY: usize = 1024 * 1024;

/// A variable, trimmed; unset or empty is `None`.
pub(crate) fn variable(name: &str) -> Option<String> {
    spin_sdk::variables::get(name)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

fn header<'a>(req: &'a Request, name: &str) -> Option<&'a str> {
    req.header(name).and_then(|v| v.as_str())
}

fn text(out: ResponseOutparam, status: u16, body: &str) {
    let headers = vec![("content-type".to_string(), b"text/plain".to_vec())];
    streaming::respond(out, status, &headers, body.as_bytes());
}

#[http_component]
async fn handle(incoming: IncomingRequest, out: ResponseOutparam) {
    let req = eve_spin::body::head(&incoming);
    // eve routes POST only: any other method finds no route (404 with eve's error body, as
    // eve-proxy answers a wrong method).
    let method = req.method().to_string();
    if method != "POST" {
        let refusal = eve_agent::protocol::Refusal::no_route(&method, req.path());
        let headers = vec![("content-type".to_string(), b"application/json".to_vec())];
        return streaming::respond(out, refusal.status, &headers, refusal.to_json().as_bytes());
    }
    let body = match eve_spin::body::read_capped(incoming, MAX_BODY).await {
        Ok(b) => b,
        Err(BodyError::TooLarge) => return text(out, 413, "payload too large"),
        Err(BodyError::Unreadable) => return text(out, 400, "bad request"),
    };
    let secret = variable("slack_signing_secret").unwrap_or_default();
    let now = eve_spin::auth::now_secs() as i64;
    let signature = header(&req, "x-slack-signature");
    let timestamp = header(&req, "x-slack-request-timestamp");
    if let Err(why) = verify::verify(&secret, timestamp, signature, &body, now) {
        eprintln!("slack: inbound request refused: {why:?}");
        return text(out, 401, "unauthorized");
    }
    let (num, reason) = (
        header(&req, "x-slack-retry-num"),
        header(&req, "x-slack-retry-reason"),
    );
    if inbound::is_timeout_retry(num, reason) {
        return text(out, 200, "ok");
    }
    let form = header(&req, "content-type")
        .is_some_and(|t| t.contains("application/x-www-form-urlencoded"));
    match inbound::parse(&body, form) {
        Inbound::Challenge(c) => text(out, 200, &c),
        Inbound::Ignored => text(out, 200, "ok"),
        Inbound::Message(m) => {
            if let Some(id) = &m.event_id {
                match first_delivery(id) {
                    Ok(true) => {}
                    Ok(false) => {
                        eprintln!("slack: received a duplicate event {id}");
                        return text(out, 200, "ok");
                    }
                    // Slack delivers it again later: nothing was started.
                    Err(()) => return text(out, 503, "unavailable"),
                }
            }
            text(out, 200, "ok");
            turn::on_message(&m);
        }
        Inbound::Answer(a) => {
            // eve answers a modal's submission with an empty 200 (the modal closes), a click "ok".
            text(out, 200, if a.text.is_some() { "" } else { "ok" });
            turn::on_answer(&a);
        }
        Inbound::OpenModal(m) => {
            // The trigger id lasts about three seconds: the modal opens before the answer.
            turn::open_modal(&m);
            text(out, 200, "ok");
        }
    }
}

/// Whether `event_id` is new (then it is taken for this request).
fn first_delivery(event_id: &str) -> Result<bool, ()> {
    let db = eve_spin::db::open().map_err(|_| ())?;
    store::claim_event(&db, event_id, eve_spin::db::now_ms()).map_err(|_| ())
}
