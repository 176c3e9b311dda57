//! The Slack side of the Slack channel's tests (issue 23): the Web API simulator
//! (`tests/slack/slack-sim.mjs`, the methods eve's slackChannel calls on Slack's real wire
//! format, every call recorded) and events sent to `POST /eve/v1/slack` signed as Slack signs
//! them. A simulator that does not start fails the test.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::mcp_servers::{node_in, NodeServer};
use crate::{repo_root, Host, Response};

/// The bot token the simulator accepts and the signing secret events are signed with.
pub const BOT_TOKEN: &str = "xoxb-test";
pub const SIGNING_SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";
/// The route.
pub const ROUTE: &str = "/eve/v1/slack";

/// A running simulator.
pub struct SlackSim {
    _server: NodeServer,
    pub base: String,
}

impl SlackSim {
    pub fn start() -> SlackSim {
        let server = node_in(
            &repo_root().join("tests/slack"),
            "slack-sim.mjs",
            &[],
            &[("SLACK_BOT_TOKEN", BOT_TOKEN)],
            "slack simulator listening",
        );
        let base = format!("http://127.0.0.1:{}", server.port);
        SlackSim {
            _server: server,
            base,
        }
    }

    /// The API base the app is pointed at (`slack_api_base_url`).
    pub fn api_base(&self) -> String {
        format!("{}/api", self.base)
    }

    /// Every call so far, in order.
    pub fn calls(&self) -> Vec<Value> {
        let r = ureq::get(&format!("{}/_calls", self.base))
            .call()
            .expect("the simulator answers");
        r.into_json::<Value>()
            .expect("a JSON record")
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// Waits until `done(calls)` holds (at most `timeout`); the calls, or a panic naming them.
    pub fn wait_for(&self, timeout: Duration, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let calls = self.calls();
            if done(&calls) {
                return calls;
            }
            assert!(
                Instant::now() < deadline,
                "Slack never saw what the test waits for; it saw:\n{}",
                serde_json::to_string_pretty(&calls).unwrap()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The `(method, body)` of calls.
pub fn methods(calls: &[Value]) -> Vec<String> {
    calls
        .iter()
        .map(|c| c["method"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The Unix time now, as Slack's timestamp header carries it.
pub fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// Posts `body` to the route as Slack does: `content_type`, signed at `timestamp` with
/// `secret`, with `extra` headers (retries).
pub fn post_signed(
    h: &Host,
    body: &str,
    content_type: &str,
    timestamp: i64,
    secret: &str,
    extra: &[(&str, &str)],
) -> Response {
    let ts = timestamp.to_string();
    let sig = eve_slack::verify::sign(secret, &ts, body.as_bytes());
    let mut headers = vec![
        ("content-type", content_type),
        ("x-slack-request-timestamp", ts.as_str()),
        ("x-slack-signature", sig.as_str()),
    ];
    headers.extend_from_slice(extra);
    h.send("POST", ROUTE, &headers, Some(body.as_bytes()))
}

/// Posts an Events API JSON body, signed now with the right secret.
pub fn post_event(h: &Host, body: &Value, extra: &[(&str, &str)]) -> Response {
    post_signed(
        h,
        &body.to_string(),
        "application/json",
        now_secs(),
        SIGNING_SECRET,
        extra,
    )
}

/// An `event_callback` envelope around `event`, for app `A1` installed in `T1` as bot `UBOT`.
pub fn envelope(event_id: &str, event: Value) -> Value {
    json!({
        "token": "legacy-verification-token",
        "team_id": "T1",
        "api_app_id": "A1",
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": now_secs(),
        "authorizations": [{"enterprise_id": null, "team_id": "T1", "user_id": "UBOT", "is_bot": true, "is_enterprise_install": false}],
        "is_ext_shared_channel": false,
        "event_context": "4-eyJldCI6ImFwcF9tZW50aW9uIn0",
    })
}

/// An `app_mention` by `user` in channel `C1` at `ts` (in thread `thread_ts` when given).
pub fn mention(user: &str, text: &str, ts: &str, thread_ts: Option<&str>) -> Value {
    let mut e = json!({
        "type": "app_mention", "user": user, "text": format!("<@UBOT> {text}"), "ts": ts,
        "team": "T1", "channel": "C1", "event_ts": ts,
    });
    if let Some(t) = thread_ts {
        e["thread_ts"] = json!(t);
    }
    e
}
