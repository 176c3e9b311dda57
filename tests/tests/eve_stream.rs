//! The eve session API end to end, through `eve-proxy` and the private `agent` in the local
//! host: full turns, exact resume from every index, disconnect and reconnect, SSE with
//! `Last-Event-ID`, interrupts with synthetic tool results, authorization (skip, decline,
//! connect), principal isolation, the `chat:send` limit, a host killed mid-turn, keep-alives,
//! and the OpenAI-compatible and Anthropic providers against local servers that speak their
//! streaming wire formats.
//!
//! Every test starts its own host (~0.2 s) with the demo model paced at 1 ms per token.

#[path = "eve/llm_server.rs"]
mod llm_server;

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use eve_chat_tests::{Host, HostOptions};
use llm_server::{pieces, LlmServer, Script};
use serde_json::{json, Value};

fn host_with(vars: &[(&str, &str)]) -> Option<Host> {
    let mut o = HostOptions::default()
        .var("demo_pacing_ms", "1")
        .var("chat_send_per_hour", "1000");
    for (k, v) in vars {
        o = o.var(k, v);
    }
    Host::start(o)
}

/// A fast local host, or the outside instance at `EVE_CHAT_BASE_URL` (for the tests that need
/// no special configuration).
fn any_host() -> Host {
    if eve_chat_tests::external_base_url().is_some() {
        return Host::shared();
    }
    host_with(&[]).expect("a local host")
}

fn start(h: &Host, message: &str) -> (String, u64) {
    let r = h.json("POST", "/eve/v1/session", &json!({ "message": message }));
    assert_eq!(r.status, 201, "{}", r.text());
    let v = r.json();
    let sid = v["sessionId"].as_str().unwrap().to_string();
    assert_eq!(r.header("x-eve-session-id"), Some(sid.as_str()));
    (sid, v["streamIndex"].as_u64().unwrap())
}

fn send(h: &Host, sid: &str, body: Value) -> eve_chat_tests::Response {
    h.json("POST", &format!("/eve/v1/session/{sid}"), &body)
}

fn is_event(v: &Value) -> bool {
    v.get("index").and_then(Value::as_u64).is_some()
}

/// Reads the whole stream from `start` (tailing a running turn until it settles).
fn read_all(h: &Host, sid: &str, start: u64) -> Vec<Value> {
    let r = h.get(&format!("/eve/v1/session/{sid}/stream?startIndex={start}"));
    assert_eq!(r.status, 200, "{}", r.text());
    r.text()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("bad line {l:?}: {e}")))
        .filter(is_event)
        .collect()
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

fn indices(events: &[Value]) -> Vec<u64> {
    events
        .iter()
        .map(|e| e["index"].as_u64().unwrap())
        .collect()
}

fn text_of(events: &[Value]) -> String {
    events
        .iter()
        .filter(|e| e["type"] == "assistant.text.delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect()
}

/// A stream opened for reading line by line.
struct Reader {
    lines: std::io::Lines<BufReader<Box<dyn std::io::Read + Send + Sync>>>,
}

impl Reader {
    fn open(h: &Host, sid: &str, start: u64) -> Reader {
        let resp = h
            .client()
            .get(&h.url(&format!("/eve/v1/session/{sid}/stream?startIndex={start}")))
            .call()
            .expect("stream opens");
        Reader {
            lines: BufReader::new(resp.into_reader()).lines(),
        }
    }

    /// The next event (keep-alives skipped), or `None` at the end.
    fn next_event(&mut self) -> Option<Value> {
        for line in self.lines.by_ref() {
            let line = line.ok()?;
            if line.trim().is_empty() {
                continue;
            }
            let v: Value = serde_json::from_str(&line).expect("a JSON line");
            if is_event(&v) {
                return Some(v);
            }
        }
        None
    }

    fn until(&mut self, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut out = Vec::new();
        while let Some(e) = self.next_event() {
            let stop = pred(&e);
            out.push(e);
            if stop {
                break;
            }
        }
        out
    }
}

fn assert_contiguous(events: &[Value], from: u64) {
    let want: Vec<u64> = (from..from + events.len() as u64).collect();
    assert_eq!(
        indices(events),
        want,
        "indices must be contiguous, without gap or duplicate"
    );
}

// ------------------------------------------------------------------------------ full turns

#[test]
fn a_full_demo_turn_streams_ndjson_from_the_user_message_to_session_completed() {
    let h = any_host();
    let (sid, index) = start(&h, "What's the weather in Paris?");
    assert_eq!(index, 0);
    let r = h.get(&format!("/eve/v1/session/{sid}/stream?startIndex=0"));
    assert_eq!(r.header("content-type"), Some("application/x-ndjson"));
    assert_eq!(r.header("x-eve-session-id"), Some(sid.as_str()));
    let events = read_all(&h, &sid, 0);
    assert_contiguous(&events, 0);
    let t = types(&events);
    assert_eq!(t[0], "user.message");
    assert_eq!(events[0]["text"], "What's the weather in Paris?");
    assert!(t.contains(&"assistant.reasoning.delta"));
    for needed in [
        "tool.call.started",
        "tool.call.input.delta",
        "tool.call.ready",
        "tool.call.result",
        "usage",
    ] {
        assert!(t.contains(&needed), "missing {needed} in {t:?}");
    }
    let result = events
        .iter()
        .find(|e| e["type"] == "tool.call.result")
        .unwrap();
    assert_eq!(result["toolName"], "get_weather");
    assert_eq!(result["output"]["city"], "Paris");
    assert!(text_of(&events).contains("**Paris**"));
    assert_eq!(*t.last().unwrap(), "session.completed");
}

#[test]
fn resume_from_every_index_of_a_finished_turn_returns_exactly_the_suffix() {
    let h = any_host();
    let (sid, _) = start(&h, "weather in Oslo and Lima");
    let full = read_all(&h, &sid, 0);
    assert!(full.len() > 20);
    for k in 0..=full.len() as u64 + 2 {
        let suffix = read_all(&h, &sid, k);
        let want: Vec<Value> = full.iter().skip(k as usize).cloned().collect();
        assert_eq!(suffix, want, "resume from {k}");
    }
}

#[test]
fn a_reader_that_disconnects_mid_turn_and_reconnects_gets_the_rest_exactly_once() {
    let Some(h) = host_with(&[("demo_pacing_ms", "3")]) else {
        return;
    };
    let (sid, _) = start(&h, "count to 300");
    let mut first = Reader::open(&h, &sid, 0);
    let mut seen: Vec<Value> = (0..20)
        .map(|_| first.next_event().expect("an event"))
        .collect();
    drop(first); // the reader goes away mid-turn; the turn keeps running
    std::thread::sleep(Duration::from_millis(300));
    let next = seen.last().unwrap()["index"].as_u64().unwrap() + 1;
    let rest = read_all(&h, &sid, next);
    seen.extend(rest);
    assert_contiguous(&seen, 0);
    assert_eq!(seen.last().unwrap()["type"], "session.completed");
    let numbers: Vec<String> = (1..=300).map(|i| i.to_string()).collect();
    assert_eq!(text_of(&seen), format!("{}.", numbers.join(" ")));
}

#[test]
fn two_readers_of_a_running_turn_both_tail_it_to_the_end() {
    let Some(h) = host_with(&[("demo_pacing_ms", "2")]) else {
        return;
    };
    let (sid, _) = start(&h, "count to 150");
    let h = std::sync::Arc::new(h);
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let h = h.clone();
            let sid = sid.clone();
            std::thread::spawn(move || read_all(&h, &sid, 0))
        })
        .collect();
    let logs: Vec<Vec<Value>> = readers.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(logs[0], logs[1]);
    assert_contiguous(&logs[0], 0);
    assert_eq!(logs[0].last().unwrap()["type"], "session.completed");
}

#[test]
fn sse_frames_carry_the_index_as_id_and_last_event_id_resumes_after_it() {
    let h = any_host();
    let (sid, _) = start(&h, "hello there");
    let ndjson = read_all(&h, &sid, 0);
    let path = format!("/eve/v1/session/{sid}/stream?startIndex=0");
    let r = h.send("GET", &path, &[("accept", "text/event-stream")], None);
    assert_eq!(r.status, 200);
    assert!(r
        .header("content-type")
        .unwrap()
        .starts_with("text/event-stream"));
    let frames = parse_sse(&r.text());
    assert_eq!(frames.len(), ndjson.len());
    for ((id, data), e) in frames.iter().zip(&ndjson) {
        assert_eq!(*id, e["index"].as_u64().unwrap());
        assert_eq!(data, e);
    }
    // EventSource reconnects with its original URL and the last id it saw.
    let r = h.send(
        "GET",
        &path,
        &[("accept", "text/event-stream"), ("last-event-id", "5")],
        None,
    );
    let resumed = parse_sse(&r.text());
    assert_eq!(resumed.first().unwrap().0, 6);
    assert_eq!(resumed.len(), ndjson.len() - 6);
    let bad = h.send("GET", &path, &[("last-event-id", "x")], None);
    assert_eq!(bad.status, 400);
}

fn parse_sse(text: &str) -> Vec<(u64, Value)> {
    text.split("\n\n")
        .filter_map(|frame| {
            let mut id = None;
            let mut data = None;
            for line in frame.lines() {
                if let Some(v) = line.strip_prefix("id: ") {
                    id = v.parse().ok();
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data = serde_json::from_str(v).ok();
                }
            }
            Some((id?, data?))
        })
        .collect()
}

// ------------------------------------------------------------------------------ interrupts

#[test]
fn interrupt_during_a_tool_call_gives_synthetic_results_and_the_next_turn_is_consistent() {
    let Some(h) = host_with(&[]) else { return };
    let (sid, _) = start(&h, "wait 30");
    let mut reader = Reader::open(&h, &sid, 0);
    let before = reader.until(|e| e["type"] == "tool.call.ready");
    let call_id = before.last().unwrap()["toolCallId"]
        .as_str()
        .unwrap()
        .to_string();
    std::thread::sleep(Duration::from_millis(300)); // the tool is running now
    let stopped_at = Instant::now();
    let r = h.json(
        "POST",
        &format!("/eve/v1/session/{sid}/interrupt"),
        &json!({}),
    );
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(r.json()["interrupted"], true);
    let mut after = Vec::new();
    while let Some(e) = reader.next_event() {
        after.push(e);
    }
    assert!(
        stopped_at.elapsed() < Duration::from_secs(5),
        "the stop is prompt"
    );
    let result = after
        .iter()
        .find(|e| e["type"] == "tool.call.result")
        .expect("a synthetic result");
    assert_eq!(result["toolCallId"], call_id.as_str());
    assert_eq!(result["isError"], true);
    assert_eq!(result["synthetic"], true);
    assert_eq!(result["output"]["error"], "interrupted by the user");
    let last = after.last().unwrap();
    assert_eq!(last["type"], "session.waiting");
    assert_eq!(last["reason"], "interrupted");

    // Nothing runs now: a second interrupt changes nothing.
    let again = h.json(
        "POST",
        &format!("/eve/v1/session/{sid}/interrupt"),
        &json!({}),
    );
    assert_eq!(
        (again.status, again.json()["interrupted"].clone()),
        (200, json!(false))
    );

    // The next message starts a consistent turn right after the settled one.
    let r = send(&h, &sid, json!({ "message": "weather in Rome" }));
    assert_eq!(r.status, 200, "{}", r.text());
    let next = r.json()["streamIndex"].as_u64().unwrap();
    assert_eq!(next, last["index"].as_u64().unwrap() + 1);
    let turn2 = read_all(&h, &sid, next);
    assert_eq!(turn2[0]["type"], "user.message");
    assert_eq!(turn2.last().unwrap()["type"], "session.completed");
    let all = read_all(&h, &sid, 0);
    assert_contiguous(&all, 0);
}

#[test]
fn interrupt_while_text_streams_stops_the_turn_at_the_next_event() {
    let Some(h) = host_with(&[("demo_pacing_ms", "5")]) else {
        return;
    };
    let (sid, _) = start(&h, "count to 5000");
    let mut reader = Reader::open(&h, &sid, 0);
    let _ = reader.until(|e| e["type"] == "assistant.text.delta");
    let r = h.json(
        "POST",
        &format!("/eve/v1/session/{sid}/interrupt"),
        &json!({}),
    );
    assert_eq!(r.status, 202);
    let mut rest = Vec::new();
    while let Some(e) = reader.next_event() {
        rest.push(e);
    }
    assert_eq!(rest.last().unwrap()["type"], "session.waiting");
    let all = read_all(&h, &sid, 0);
    assert!(
        all.len() < 1000,
        "the turn stopped early ({} events)",
        all.len()
    );
    assert_contiguous(&all, 0);
}

#[test]
fn a_message_while_a_turn_runs_is_refused_with_409() {
    let Some(h) = host_with(&[("demo_pacing_ms", "5")]) else {
        return;
    };
    let (sid, _) = start(&h, "count to 1000");
    let r = send(&h, &sid, json!({ "message": "hello" }));
    assert_eq!(r.status, 409, "{}", r.text());
    assert_eq!(r.error_code().as_deref(), Some("conflict"));
    h.json(
        "POST",
        &format!("/eve/v1/session/{sid}/interrupt"),
        &json!({}),
    );
}

// --------------------------------------------------------------------------- authorization

fn authorization_turn(h: &Host, prompt: &str) -> (String, Value) {
    let (sid, _) = start(h, prompt);
    let events = read_all(h, &sid, 0);
    let last = events.last().unwrap().clone();
    assert_eq!(
        last["type"],
        "authorization.required",
        "{:?}",
        types(&events)
    );
    (sid, last)
}

#[test]
fn authorization_required_settles_the_turn_and_describes_the_connection() {
    let Some(h) = host_with(&[]) else { return };
    let (sid, required) = authorization_turn(&h, "search Notion for the roadmap");
    assert_eq!(required["connection"], "notion");
    assert_eq!(required["displayName"], "Notion");
    assert!(required["description"].as_str().unwrap().contains("Notion"));
    let url = required["connectUrl"].as_str().unwrap();
    assert!(url.starts_with(&format!("/eve/v1/session/{sid}/authorizations/")));
    // A plain message while the authorization is pending declines it first.
    let r = send(&h, &sid, json!({ "message": "never mind, hello" }));
    assert_eq!(r.status, 200, "{}", r.text());
    let all = read_all(&h, &sid, 0);
    let t = types(&all);
    let i = t
        .iter()
        .position(|x| *x == "authorization.required")
        .unwrap();
    assert_eq!(
        &t[i + 1..i + 5],
        &[
            "authorization.completed",
            "tool.call.result",
            "session.waiting",
            "user.message"
        ]
    );
    assert_eq!(all[i + 1]["outcome"], "declined");
    assert_eq!(r.json()["streamIndex"].as_u64().unwrap(), (i + 4) as u64);
    assert_eq!(*t.last().unwrap(), "session.completed");
}

#[test]
fn a_replay_that_starts_after_a_pending_authorization_still_delivers_it_first() {
    let Some(h) = host_with(&[]) else { return };
    let (sid, required) = authorization_turn(&h, "look up errors in Sentry");
    let at = required["index"].as_u64().unwrap();
    let r = h.get(&format!(
        "/eve/v1/session/{sid}/stream?startIndex={}",
        at + 1
    ));
    assert_eq!(
        r.header("x-eve-session-state"),
        Some("awaiting_authorization")
    );
    let replay = read_all(&h, &sid, at + 1);
    assert_eq!(
        replay,
        vec![required.clone()],
        "the pending request, with its own index"
    );
}

#[test]
fn skipping_an_authorization_declines_it_and_the_next_message_works() {
    let Some(h) = host_with(&[]) else { return };
    let (sid, required) = authorization_turn(&h, "find my Linear issues");
    let aid = required["authorizationId"].as_str().unwrap();
    let granted = send(
        &h,
        &sid,
        json!({ "inputResponses": [{ "requestId": aid, "outcome": "granted" }] }),
    );
    assert_eq!(granted.status, 400, "granting goes through the connect URL");
    let r = send(
        &h,
        &sid,
        json!({ "inputResponses": [{ "requestId": aid, "outcome": "declined" }] }),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let from = r.json()["streamIndex"].as_u64().unwrap();
    let closing = read_all(&h, &sid, from);
    assert_eq!(
        types(&closing),
        vec![
            "authorization.completed",
            "tool.call.result",
            "session.waiting"
        ]
    );
    assert_eq!(closing[0]["outcome"], "declined");
    assert_eq!(closing[1]["isError"], true);
    let again = send(
        &h,
        &sid,
        json!({ "inputResponses": [{ "requestId": aid, "outcome": "declined" }] }),
    );
    assert_eq!(again.status, 409, "nothing is pending any more");
    let r = send(&h, &sid, json!({ "message": "hello again" }));
    assert_eq!(r.status, 200);
    let turn = read_all(&h, &sid, r.json()["streamIndex"].as_u64().unwrap());
    assert_eq!(turn.last().unwrap()["type"], "session.completed");
}

#[test]
fn connecting_grants_the_connection_and_the_turn_continues() {
    let Some(h) = host_with(&[]) else { return };
    let (sid, required) = authorization_turn(&h, "search Notion for the roadmap");
    let url = required["connectUrl"].as_str().unwrap();
    let page = h.get(url);
    assert_eq!(page.status, 200);
    assert!(page
        .header("content-type")
        .unwrap()
        .starts_with("text/html"));
    assert!(page.text().contains("Allow") && page.text().contains("Notion"));
    let origin = h.origin();
    let cross = h.send(
        "POST",
        url,
        &[
            ("content-type", "application/x-www-form-urlencoded"),
            ("origin", "https://evil.example"),
            ("sec-fetch-site", "cross-site"),
        ],
        Some(b"decision=allow"),
    );
    assert_eq!(cross.status, 403, "a cross-site grant is refused");
    let done = h.send(
        "POST",
        url,
        &[
            ("content-type", "application/x-www-form-urlencoded"),
            ("origin", &origin),
            ("sec-fetch-site", "same-origin"),
        ],
        Some(b"decision=allow"),
    );
    assert_eq!(done.status, 200, "{}", done.text());
    let after = read_all(&h, &sid, required["index"].as_u64().unwrap() + 1);
    assert_eq!(after[0]["type"], "authorization.completed");
    assert_eq!(after[0]["outcome"], "granted");
    assert_eq!(after[1]["type"], "tool.call.result");
    assert_eq!(after[1]["isError"], false);
    assert_eq!(after.last().unwrap()["type"], "session.completed");
    assert!(text_of(&after).contains("Notion result 1"));
    // The grant is remembered for this principal.
    let (sid2, _) = start(&h, "search Notion for the budget");
    let events = read_all(&h, &sid2, 0);
    assert!(!types(&events).contains(&"authorization.required"));
    assert_eq!(events.last().unwrap()["type"], "session.completed");
}

#[test]
fn a_disabled_connection_is_not_used() {
    let Some(h) = host_with(&[]) else { return };
    let r = h.json(
        "POST",
        "/eve/v1/session",
        &json!({
            "message": "search Notion for the roadmap",
            "clientContext": "Connections the user enabled for this turn: Linear. Connections the user disabled (do not use them): Notion, Sentry."
        }),
    );
    let sid = r.json()["sessionId"].as_str().unwrap().to_string();
    let events = read_all(&h, &sid, 0);
    assert!(!types(&events).contains(&"authorization.required"));
    assert!(text_of(&events).contains("turned off"));
}

// --------------------------------------------------------------------------------- memory

#[test]
fn memory_keeps_facts_across_sessions_and_refuses_secrets() {
    let Some(h) = host_with(&[]) else { return };
    let (sid, _) = start(&h, "remember that my password is hunter22");
    let events = read_all(&h, &sid, 0);
    let result = events
        .iter()
        .find(|e| e["type"] == "tool.call.result")
        .unwrap();
    assert_eq!(result["isError"], true);
    assert!(result["output"]["error"]
        .as_str()
        .unwrap()
        .contains("refused"));
    let (sid, _) = start(&h, "remember that I prefer green tea");
    read_all(&h, &sid, 0);
    let (sid, _) = start(&h, "what do you remember about me?");
    let events = read_all(&h, &sid, 0);
    let result = events
        .iter()
        .find(|e| e["type"] == "tool.call.result")
        .unwrap();
    assert_eq!(result["output"]["facts"], json!(["I prefer green tea"]));
}

// ------------------------------------------------------------------------------ bad input

#[test]
fn bad_input_is_refused_with_clear_errors() {
    let Some(h) = host_with(&[]) else { return };
    let origin = h.origin();
    let post = |path: &str, ct: &str, body: &[u8]| {
        h.send(
            "POST",
            path,
            &[
                ("content-type", ct),
                ("origin", &origin),
                ("sec-fetch-site", "same-origin"),
            ],
            Some(body),
        )
    };
    assert_eq!(
        post("/eve/v1/session", "application/json", b"{")
            .error_code()
            .as_deref(),
        Some("invalid_json")
    );
    assert_eq!(
        post(
            "/eve/v1/session",
            "application/json",
            br#"{"message":"  "}"#
        )
        .status,
        400
    );
    let long = json!({ "message": "x".repeat(8001) }).to_string();
    assert_eq!(
        post("/eve/v1/session", "application/json", long.as_bytes()).status,
        400
    );
    assert_eq!(
        post("/eve/v1/session", "text/plain", br#"{"message":"hi"}"#).status,
        415
    );
    let cross = h.send(
        "POST",
        "/eve/v1/session",
        &[
            ("content-type", "application/json"),
            ("origin", "https://evil.example"),
            ("sec-fetch-site", "cross-site"),
        ],
        Some(br#"{"message":"hi"}"#),
    );
    assert_eq!(cross.status, 403);
    assert_eq!(h.get("/eve/v1/session/ses_doesnotexist/stream").status, 404);
    assert_eq!(h.get("/eve/v1/session/not-an-id/stream").status, 404);
    assert_eq!(h.get("/eve/v1/session").status, 405);
    assert_eq!(h.get("/eve/v1/elsewhere").status, 404);
    let (sid, _) = start(&h, "hi");
    assert_eq!(
        h.get(&format!("/eve/v1/session/{sid}/stream?startIndex=-1"))
            .status,
        400
    );
    let ok = json!({ "message": "é".repeat(8000) }).to_string();
    read_all(&h, &sid, 0);
    assert_eq!(
        post(
            &format!("/eve/v1/session/{sid}"),
            "application/json",
            ok.as_bytes()
        )
        .status,
        200
    );
}

// ------------------------------------------------------------- principals and rate limit

const SECRET: &str = "eve-stream-tests-session-secret-0123456789";

fn oidc_vars() -> Vec<(&'static str, String)> {
    vec![
        ("auth_mode", "oidc".into()),
        ("session_secret", SECRET.into()),
        ("oidc_issuer", "http://127.0.0.1:9".into()),
        ("oidc_client_id", "eve".into()),
        ("oidc_client_secret", "client-secret".into()),
    ]
}

fn oidc_host(extra: &[(&str, &str)]) -> Option<Host> {
    let mut o = HostOptions::default().var("demo_pacing_ms", "1");
    for (k, v) in oidc_vars() {
        o = o.var(k, &v);
    }
    for (k, v) in extra {
        o = o.var(k, v);
    }
    Host::start(o)
}

fn cookie_for(subject: &str) -> String {
    let vars = oidc_vars();
    let codec = eve_auth::AuthConfig::from_lookup(move |n| {
        vars.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone())
    })
    .session_codec()
    .expect("a ready OIDC configuration");
    let principal = eve_api::auth::Principal {
        id: format!("oidc:test:{subject}"),
        mode: eve_api::auth::AuthMode::Oidc,
        name: None,
        email: None,
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let (value, _) = codec.issue(&principal, now);
    format!("{}={value}", eve_auth::cookie::SESSION_COOKIE_NAME)
}

fn as_user(
    h: &Host,
    cookie: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> eve_chat_tests::Response {
    let origin = h.origin();
    let b = body.map(|b| b.to_string().into_bytes());
    h.send(
        method,
        path,
        &[
            ("cookie", cookie),
            ("content-type", "application/json"),
            ("origin", &origin),
            ("sec-fetch-site", "same-origin"),
        ],
        b.as_deref(),
    )
}

#[test]
fn another_principals_session_answers_404_on_every_route() {
    let Some(h) = oidc_host(&[]) else { return };
    let (alice, bob) = (cookie_for("alice"), cookie_for("bob"));
    assert_eq!(
        as_user(
            &h,
            "",
            "POST",
            "/eve/v1/session",
            Some(json!({"message":"hi"}))
        )
        .status,
        401
    );
    let r = as_user(
        &h,
        &alice,
        "POST",
        "/eve/v1/session",
        Some(json!({"message":"search Notion for plans"})),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    let sid = r.json()["sessionId"].as_str().unwrap().to_string();
    let own = as_user(
        &h,
        &alice,
        "GET",
        &format!("/eve/v1/session/{sid}/stream"),
        None,
    );
    assert_eq!(own.status, 200);
    let required: Value = own
        .text()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .next_back()
        .unwrap();
    assert_eq!(required["type"], "authorization.required");
    for (method, path, body) in [
        ("GET", format!("/eve/v1/session/{sid}/stream"), None),
        (
            "POST",
            format!("/eve/v1/session/{sid}"),
            Some(json!({"message":"mine now"})),
        ),
        (
            "POST",
            format!("/eve/v1/session/{sid}/interrupt"),
            Some(json!({})),
        ),
        (
            "GET",
            required["connectUrl"].as_str().unwrap().to_string(),
            None,
        ),
    ] {
        let r = as_user(&h, &bob, method, &path, body);
        assert_eq!(r.status, 404, "{method} {path}: {}", r.text());
    }
    // A client cannot speak for someone else by sending the agent's header itself.
    let forged = h.send(
        "GET",
        &format!("/eve/v1/session/{sid}/stream"),
        &[
            ("cookie", &bob),
            (
                "x-eve-principal-assertion",
                "v1.eyJwIjp7ImlkIjoib2lkYzp0ZXN0OmFsaWNlIn19.AAAA",
            ),
        ],
        None,
    );
    assert_eq!(forged.status, 404);
    // Alice's session is untouched.
    let again = as_user(
        &h,
        &alice,
        "GET",
        &format!("/eve/v1/session/{sid}/stream"),
        None,
    );
    assert_eq!(again.text(), own.text());
}

#[test]
fn chat_send_is_limited_per_principal_with_retry_after() {
    let Some(h) = oidc_host(&[("chat_send_per_hour", "3")]) else {
        return;
    };
    let (alice, bob) = (cookie_for("alice"), cookie_for("bob"));
    for i in 0..3 {
        let r = as_user(
            &h,
            &alice,
            "POST",
            "/eve/v1/session",
            Some(json!({"message": format!("hello {i}")})),
        );
        assert_eq!(r.status, 201, "{}", r.text());
    }
    let r = as_user(
        &h,
        &alice,
        "POST",
        "/eve/v1/session",
        Some(json!({"message":"one too many"})),
    );
    assert_eq!(r.status, 429);
    assert_eq!(r.error_code().as_deref(), Some("rate_limited"));
    let retry: u64 = r.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=3600).contains(&retry));
    // Invalid input is not counted, and another principal has its own window.
    let r = as_user(
        &h,
        &bob,
        "POST",
        "/eve/v1/session",
        Some(json!({"message":""})),
    );
    assert_eq!(r.status, 400);
    let r = as_user(
        &h,
        &bob,
        "POST",
        "/eve/v1/session",
        Some(json!({"message":"hi"})),
    );
    assert_eq!(r.status, 201);
}

// ------------------------------------------------------------------------------ durability

#[test]
fn a_demo_turn_whose_host_was_killed_is_resumed_after_restart_to_the_same_reply() {
    let Some(mut h) = host_with(&[("demo_pacing_ms", "5")]) else {
        return;
    };
    let (sid, _) = start(&h, "count to 1000");
    let mut reader = Reader::open(&h, &sid, 0);
    let seen: Vec<Value> = (0..30).map(|_| reader.next_event().unwrap()).collect();
    drop(reader);
    h.kill_and_restart();
    let from = seen.last().unwrap()["index"].as_u64().unwrap() + 1;
    let started = Instant::now();
    // The dead runner's lease expires (at most 10 s), this reader takes the turn over and
    // resumes it: the demo model replays deterministically.
    let rest = read_all(&h, &sid, from);
    assert!(started.elapsed() < Duration::from_secs(30));
    let mut all = seen.clone();
    all.extend(rest);
    assert_contiguous(&all, 0);
    assert_eq!(all.last().unwrap()["type"], "session.completed");
    let expected: Vec<String> = (1..=1000).map(|i| i.to_string()).collect();
    assert_eq!(text_of(&all), format!("{}.", expected.join(" ")));
    assert_eq!(read_all(&h, &sid, 0), all, "the log is stable");
    let r = send(&h, &sid, json!({ "message": "hello" }));
    assert_eq!(r.status, 200, "{}", r.text());
    let turn = read_all(&h, &sid, r.json()["streamIndex"].as_u64().unwrap());
    assert_eq!(turn.last().unwrap()["type"], "session.completed");
}

#[test]
fn a_hosted_model_turn_whose_host_was_killed_is_settled_as_failed_after_restart() {
    // The model answers after 3.5 s: the host is killed while the turn waits for it.
    let slow = Script {
        delay: Duration::from_millis(3500),
        ..openai_text_script(&["Never ", "seen."])
    };
    let server = LlmServer::start(vec![slow, openai_text_script(&["Hello ", "again."])]);
    let Some(mut h) = provider_host("openai", &server, &[]) else {
        return;
    };
    let (sid, _) = start(&h, "hello");
    let mut reader = Reader::open(&h, &sid, 0);
    let first = reader.next_event().unwrap();
    assert_eq!(first["type"], "user.message");
    drop(reader);
    h.kill_and_restart();
    let started = Instant::now();
    let all = read_all(&h, &sid, 0);
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_contiguous(&all, 0);
    let last = all.last().unwrap();
    assert_eq!(last["type"], "session.failed", "{all:?}");
    assert_eq!(last["code"], "runner_lost");
    assert_eq!(text_of(&all), "", "a sampling model is never replayed");
    assert_eq!(read_all(&h, &sid, 0), all, "the log is stable");
    let r = send(&h, &sid, json!({ "message": "hello" }));
    assert_eq!(r.status, 200, "{}", r.text());
    let turn = read_all(&h, &sid, r.json()["streamIndex"].as_u64().unwrap());
    assert_eq!(text_of(&turn), "Hello again.");
}

// ---------------------------------------------------------------------- model providers

fn openai_chunk(delta: Value, finish: Option<&str>) -> String {
    format!(
        "data: {}\n\n",
        json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
    )
}

fn openai_tool_call_script() -> Script {
    let stream = [
        openai_chunk(json!({"role":"assistant","content":null}), None),
        openai_chunk(json!({"tool_calls":[{"index":0,"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":""}}]}), None),
        openai_chunk(json!({"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]}), None),
        openai_chunk(json!({"tool_calls":[{"index":0,"function":{"arguments":"ty\": \"Par"}}]}), None),
        openai_chunk(json!({"tool_calls":[{"index":0,"function":{"arguments":"is\"}"}}]}), None),
        openai_chunk(json!({}), Some("tool_calls")),
        "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":12,\"total_tokens\":62}}\n\n".into(),
        "data: [DONE]\n\n".into(),
    ]
    .concat();
    // Byte pieces that split SSE lines and JSON documents.
    Script::new(pieces(&stream, 37))
}

fn openai_text_script(text: &[&str]) -> Script {
    let mut chunks: Vec<String> = text
        .iter()
        .map(|t| openai_chunk(json!({"content": t}), None))
        .collect();
    chunks.push(openai_chunk(json!({}), Some("stop")));
    chunks.push("data: [DONE]\n\n".into());
    Script::new(chunks)
}

fn provider_host(provider: &str, server: &LlmServer, extra: &[(&str, &str)]) -> Option<Host> {
    let base = if provider == "openai" {
        format!("{}/v1", server.base)
    } else {
        server.base.clone()
    };
    let mut vars = vec![
        ("llm_provider", provider),
        ("llm_api_key", "test-key"),
        ("llm_model", "test-model"),
    ];
    vars.extend_from_slice(extra);
    let mut o = HostOptions::default()
        .var("llm_base_url", &base)
        .var("chat_send_per_hour", "1000");
    for (k, v) in vars {
        o = o.var(k, v);
    }
    Host::start(o)
}

#[test]
fn the_openai_compatible_provider_streams_tool_calls_split_across_chunks_and_text() {
    let server = LlmServer::start(vec![
        openai_tool_call_script(),
        openai_text_script(&["It is ", "mild in ", "Paris."]),
    ]);
    let Some(h) = provider_host("openai", &server, &[]) else {
        return;
    };
    let (sid, _) = start(&h, "weather in Paris?");
    let events = read_all(&h, &sid, 0);
    assert_contiguous(&events, 0);
    let ready = events
        .iter()
        .find(|e| e["type"] == "tool.call.ready")
        .expect("a complete call");
    assert_eq!(ready["toolCallId"], "call_abc");
    assert_eq!(ready["input"], json!({"city": "Paris"}));
    let deltas: String = events
        .iter()
        .filter(|e| e["type"] == "tool.call.input.delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, "{\"city\": \"Paris\"}");
    let result = events
        .iter()
        .find(|e| e["type"] == "tool.call.result")
        .unwrap();
    assert_eq!(result["output"]["city"], "Paris");
    assert!(events
        .iter()
        .any(|e| e["type"] == "usage" && e["inputTokens"] == 50));
    assert_eq!(text_of(&events), "It is mild in Paris.");
    assert_eq!(events.last().unwrap()["type"], "session.completed");

    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2);
    let (head, _) = &server.requests.lock().unwrap()[0];
    assert!(head.starts_with("POST /v1/chat/completions "), "{head}");
    assert!(head
        .to_ascii_lowercase()
        .contains("authorization: bearer test-key"));
    assert_eq!(bodies[0]["model"], "test-model");
    assert_eq!(bodies[0]["stream"], true);
    assert!(bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["function"]["name"] == "get_weather"));
    let msgs = bodies[1]["messages"].as_array().unwrap();
    let tool_msg = msgs
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("the tool result goes back");
    assert_eq!(tool_msg["tool_call_id"], "call_abc");
    let assistant = msgs.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(
        assistant["tool_calls"][0]["function"]["name"],
        "get_weather"
    );
}

#[test]
fn an_openai_compatible_stream_cut_in_the_middle_fails_the_turn_and_drops_the_fragment() {
    let cut = Script {
        cut: true,
        ..Script::new(vec![
            openai_chunk(json!({"content":"Let me check"}), None),
            openai_chunk(
                json!({"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"get_weather","arguments":"{\"ci"}}]}),
                None,
            ),
        ])
    };
    let server = LlmServer::start(vec![cut, openai_text_script(&["Hello again."])]);
    let Some(h) = provider_host("openai", &server, &[]) else {
        return;
    };
    let (sid, _) = start(&h, "weather?");
    let events = read_all(&h, &sid, 0);
    let t = types(&events);
    assert!(!t.contains(&"tool.call.ready"));
    let result = events
        .iter()
        .find(|e| e["type"] == "tool.call.result")
        .expect("the fragment is closed");
    assert_eq!(result["discarded"], true);
    assert_eq!(events.last().unwrap()["type"], "session.failed");
    // The next turn does not send the fragment to the model.
    let r = send(&h, &sid, json!({"message":"hello"}));
    let turn = read_all(&h, &sid, r.json()["streamIndex"].as_u64().unwrap());
    assert_eq!(turn.last().unwrap()["type"], "session.completed");
    let second = &server.bodies()[1];
    assert!(second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m.get("tool_calls").is_none() && m["role"] != "tool"));
}

fn anthropic_event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

#[test]
fn the_anthropic_provider_streams_thinking_text_and_tool_use() {
    let tool_turn = [
        anthropic_event("message_start", json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","usage":{"input_tokens":40,"output_tokens":1}}})),
        anthropic_event("content_block_start", json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}})),
        anthropic_event("content_block_delta", json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Need the weather."}})),
        anthropic_event("content_block_stop", json!({"type":"content_block_stop","index":0})),
        anthropic_event("content_block_start", json!({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{}}})),
        anthropic_event("ping", json!({"type":"ping"})),
        anthropic_event("content_block_delta", json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"city\":"}})),
        anthropic_event("content_block_delta", json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" \"Lima\"}"}})),
        anthropic_event("content_block_stop", json!({"type":"content_block_stop","index":1})),
        anthropic_event("message_delta", json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":25}})),
        anthropic_event("message_stop", json!({"type":"message_stop"})),
    ]
    .concat();
    let text_turn = [
        anthropic_event("message_start", json!({"type":"message_start","message":{"id":"msg_2","usage":{"input_tokens":80,"output_tokens":1}}})),
        anthropic_event("content_block_start", json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})),
        anthropic_event("content_block_delta", json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Lima is "}})),
        anthropic_event("content_block_delta", json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"pleasant."}})),
        anthropic_event("content_block_stop", json!({"type":"content_block_stop","index":0})),
        anthropic_event("message_delta", json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":6}})),
        anthropic_event("message_stop", json!({"type":"message_stop"})),
    ]
    .concat();
    let server = LlmServer::start(vec![
        Script::new(pieces(&tool_turn, 29)),
        Script::new(pieces(&text_turn, 41)),
    ]);
    let Some(h) = provider_host("anthropic", &server, &[]) else {
        return;
    };
    let (sid, _) = start(&h, "weather in Lima?");
    let events = read_all(&h, &sid, 0);
    assert_contiguous(&events, 0);
    assert!(events
        .iter()
        .any(|e| e["type"] == "assistant.reasoning.delta" && e["delta"] == "Need the weather."));
    let ready = events
        .iter()
        .find(|e| e["type"] == "tool.call.ready")
        .unwrap();
    assert_eq!(
        (ready["toolCallId"].clone(), ready["input"].clone()),
        (json!("toolu_01"), json!({"city": "Lima"}))
    );
    assert!(events
        .iter()
        .any(|e| e["type"] == "tool.call.result" && e["output"]["city"] == "Lima"));
    assert!(events
        .iter()
        .any(|e| e["type"] == "usage" && e["inputTokens"] == 40 && e["outputTokens"] == 25));
    assert_eq!(text_of(&events), "Lima is pleasant.");
    assert_eq!(events.last().unwrap()["type"], "session.completed");

    let requests = server.requests.lock().unwrap().clone();
    let (head, first) = &requests[0];
    assert!(head.starts_with("POST /v1/messages "), "{head}");
    let lower = head.to_ascii_lowercase();
    assert!(
        lower.contains("x-api-key: test-key") && lower.contains("anthropic-version: 2023-06-01")
    );
    assert_eq!(first["stream"], true);
    assert!(first["system"].as_str().unwrap().contains("eve"));
    let second = &requests[1].1;
    let msgs = second["messages"].as_array().unwrap();
    assert_eq!(msgs[1]["content"][0]["type"], "tool_use");
    assert_eq!(msgs[2]["content"][0]["type"], "tool_result");
    assert_eq!(msgs[2]["content"][0]["tool_use_id"], "toolu_01");
}

#[test]
fn an_anthropic_stream_cut_before_message_stop_fails_the_turn() {
    let cut = Script {
        cut: true,
        ..Script::new(vec![
            anthropic_event(
                "message_start",
                json!({"type":"message_start","message":{"usage":{"input_tokens":1}}}),
            ),
            anthropic_event(
                "content_block_start",
                json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
            ),
            anthropic_event(
                "content_block_delta",
                json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Partial"}}),
            ),
        ])
    };
    let server = LlmServer::start(vec![cut]);
    let Some(h) = provider_host("anthropic", &server, &[]) else {
        return;
    };
    let (sid, _) = start(&h, "hello");
    let events = read_all(&h, &sid, 0);
    assert_eq!(text_of(&events), "Partial");
    let last = events.last().unwrap();
    assert_eq!(last["type"], "session.failed");
    assert!(last["message"].as_str().unwrap().contains("Anthropic"));
}

#[test]
fn a_waiting_stream_sends_keep_alives_that_are_not_events() {
    let slow = Script {
        delay: Duration::from_millis(3500),
        ..openai_text_script(&["Finally."])
    };
    let server = LlmServer::start(vec![slow]);
    let Some(h) = provider_host("openai", &server, &[("agent_keepalive_secs", "1")]) else {
        return;
    };
    let (sid, _) = start(&h, "hello");
    let r = h.get(&format!("/eve/v1/session/{sid}/stream?startIndex=0"));
    let lines: Vec<Value> = r
        .text()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let keepalives = lines.iter().filter(|v| v["type"] == "keepalive").count();
    assert!(keepalives >= 2, "{lines:?}");
    assert!(lines
        .iter()
        .filter(|v| v["type"] == "keepalive")
        .all(|v| v.get("index").is_none()));
    let events: Vec<Value> = lines.into_iter().filter(is_event).collect();
    assert_contiguous(&events, 0);
    assert_eq!(text_of(&events), "Finally.");
    let sse = h.send(
        "GET",
        &format!("/eve/v1/session/{sid}/stream?startIndex=0"),
        &[("accept", "text/event-stream")],
        None,
    );
    assert!(
        !sse.text().contains("keepalive"),
        "a settled stream needs none"
    );
}

#[test]
fn an_unreachable_model_provider_fails_the_turn_with_a_clear_message() {
    let Some(h) = host_with(&[
        ("llm_provider", "openai"),
        ("llm_base_url", "http://127.0.0.1:9/v1"),
    ]) else {
        return;
    };
    let (sid, _) = start(&h, "hello");
    let events = read_all(&h, &sid, 0);
    let last = events.last().unwrap();
    assert_eq!(last["type"], "session.failed");
    assert!(
        last["message"].as_str().unwrap().contains("unreachable"),
        "{last}"
    );
    let ids: HashSet<u64> = indices(&events).into_iter().collect();
    assert_eq!(ids.len(), events.len());
}

// ------------------------------------------------------------------------ the private agent

/// A manifest that exposes `agent.wasm` publicly (as on a platform without service chaining,
/// where the agent must be reachable by URL), in password mode.
fn public_agent_manifest(dir: &std::path::Path) -> std::path::PathBuf {
    let wasm = eve_chat_tests::repo_root().join("target/wasm32-wasip2/release/agent.wasm");
    let manifest = format!(
        r#"spin_manifest_version = 2
[application]
name = "public-agent"
[variables]
auth_mode = {{ default = "password" }}
chat_password = {{ default = "a-long-enough-shared-password", secret = true }}
session_secret = {{ default = "{SECRET}", secret = true }}
[[trigger.http]]
route = "/eve/v1/..."
component = "agent"
[component.agent]
source = "{}"
sqlite_databases = ["default"]
[component.agent.variables]
auth_mode = "{{{{ auth_mode }}}}"
chat_password = "{{{{ chat_password }}}}"
session_secret = "{{{{ session_secret }}}}"
"#,
        wasm.display()
    );
    let path = dir.join("spin.toml");
    std::fs::write(&path, manifest).unwrap();
    path
}

#[test]
fn the_agent_is_reached_only_through_the_proxy_and_trusts_only_its_signed_assertion() {
    let Some(h) = host_with(&[]) else { return };
    let (sid, _) = start(&h, "hello");
    read_all(&h, &sid, 0);
    // Only the project's host logs requests; on another Spin the rest still runs.
    if h.is_project_host() {
        let log = h.wait_for_log(Duration::from_secs(10), |log| {
            log.contains("-> agent (chained)")
        });
        assert!(
            log.contains("-> agent (chained)"),
            "the proxy reaches the agent by service chaining"
        );
        assert!(!log
            .lines()
            .any(|l| l.starts_with("GET") && l.contains("-> agent ") && !l.contains("chained")));
    }
    // No public route leads to the agent: a client-sent assertion header changes nothing.
    let r = h.send(
        "POST",
        "/eve/v1/session",
        &[("x-eve-principal-assertion", "forged")],
        Some(b"{}"),
    );
    assert_ne!(r.status, 201);

    // Where the agent must be public, it refuses anything without a valid assertion.
    let dir = tempfile::tempdir().unwrap();
    let opts = HostOptions {
        manifest: public_agent_manifest(dir.path()),
        ..HostOptions::default()
    };
    let Some(agent) = Host::start(opts.var("auth_mode", "password")) else {
        return;
    };
    let body = json!({ "message": "hi" }).to_string();
    let post = |assertion: Option<&str>| {
        let mut headers = vec![("content-type", "application/json")];
        if let Some(a) = assertion {
            headers.push(("x-eve-principal-assertion", a));
        }
        agent.send("POST", "/eve/v1/session", &headers, Some(body.as_bytes()))
    };
    assert_eq!(post(None).status, 401);
    assert_eq!(post(Some("v1.e30.AAAA")).status, 401);
    let principal = json!({ "id": "eve-chat-user", "mode": "password" });
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let seal = |key: &str, exp: u64| {
        eve_auth::cookie::SignedValueCodec::new(key, None, "agent-principal", "password")
            .seal(json!({ "p": principal, "exp": exp }).to_string().as_bytes())
    };
    assert_eq!(
        post(Some(&seal(
            "some-other-secret-of-enough-length-000",
            now + 60
        )))
        .status,
        401
    );
    assert_eq!(post(Some(&seal(SECRET, now - 1))).status, 401, "expired");
    assert_eq!(
        post(Some(&seal(SECRET, now + 60))).status,
        201,
        "the proxy's assertion is accepted"
    );
}

// ------------------------------------------------------------------------ input requests

#[test]
fn a_question_from_the_agent_is_answered_with_input_responses_and_the_turn_continues() {
    let Some(h) = host_with(&[]) else { return };
    let (sid, _) = start(&h, "ask me to choose a city");
    let events = read_all(&h, &sid, 0);
    let t = types(&events);
    assert_eq!(&t[t.len() - 2..], &["input.requested", "session.waiting"]);
    let question = &events[events.len() - 2];
    assert_eq!(question["options"], json!(["Paris", "Tokyo", "Lima"]));
    let request_id = question["requestId"].as_str().unwrap();
    let wrong = send(
        &h,
        &sid,
        json!({ "inputResponses": [{ "requestId": "input_other", "value": "x" }] }),
    );
    assert_eq!(wrong.status, 409);
    let r = send(
        &h,
        &sid,
        json!({ "inputResponses": [{ "requestId": request_id, "value": "Tokyo" }] }),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let from = r.json()["streamIndex"].as_u64().unwrap();
    let rest = read_all(&h, &sid, from);
    assert_eq!(rest[0]["type"], "tool.call.result");
    assert_eq!(rest[0]["output"]["answer"], "Tokyo");
    assert!(text_of(&rest).contains("Tokyo"));
    assert_eq!(rest.last().unwrap()["type"], "session.completed");

    // Unanswered, a new message closes the question and starts a consistent turn.
    let (sid, _) = start(&h, "quiz me");
    read_all(&h, &sid, 0);
    let r = send(&h, &sid, json!({ "message": "hello instead" }));
    assert_eq!(r.status, 200);
    let all = read_all(&h, &sid, 0);
    let t = types(&all);
    let asked = t.iter().position(|x| *x == "input.requested").unwrap();
    assert_eq!(
        &t[asked + 1..asked + 4],
        &["session.waiting", "tool.call.result", "user.message"]
    );
    assert_eq!(*t.last().unwrap(), "session.completed");
}

#[test]
fn a_model_slow_to_answer_keeps_its_turn_alive_and_can_still_be_interrupted() {
    // Longer than the 10 s lease: the runner renews it while it waits for the response head.
    let slow = Script {
        head_delay: Duration::from_secs(12),
        ..openai_text_script(&["Worth the wait."])
    };
    let stuck = Script {
        head_delay: Duration::from_secs(60),
        ..openai_text_script(&["never"])
    };
    let server = LlmServer::start(vec![slow, stuck]);
    let Some(h) = provider_host("openai", &server, &[]) else {
        return;
    };
    let (sid, _) = start(&h, "hello");
    let events = read_all(&h, &sid, 0);
    assert_eq!(text_of(&events), "Worth the wait.");
    assert_eq!(events.last().unwrap()["type"], "session.completed");

    let r = send(&h, &sid, json!({ "message": "again" }));
    let from = r.json()["streamIndex"].as_u64().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let stopped = Instant::now();
    let r = h.json(
        "POST",
        &format!("/eve/v1/session/{sid}/interrupt"),
        &json!({}),
    );
    assert_eq!(r.status, 202);
    let rest = read_all(&h, &sid, from);
    assert!(stopped.elapsed() < Duration::from_secs(3));
    assert_eq!(rest.last().unwrap()["type"], "session.waiting");
}

// ------------------------------------------------------------------ OAuth for connections

fn oauth_host(token_server: &LlmServer) -> Option<Host> {
    host_with(&[
        (
            "notion_oauth_authorize_url",
            "https://provider.example/oauth/authorize",
        ),
        (
            "notion_oauth_token_url",
            &format!("{}/oauth/token", token_server.base),
        ),
        ("notion_oauth_client_id", "notion-client"),
        ("notion_oauth_client_secret", "notion-client-secret"),
    ])
}

/// Follows the connect URL to the provider's authorize URL; returns (location, state).
fn authorize(h: &Host, required: &Value) -> (String, String) {
    let r = h.get(required["connectUrl"].as_str().unwrap());
    assert_eq!(r.status, 302, "{}", r.text());
    let location = r.header("location").unwrap().to_string();
    let state = location
        .split(['?', '&'])
        .find_map(|kv| kv.strip_prefix("state="))
        .unwrap()
        .to_string();
    (location, state)
}

#[test]
fn with_oauth_variables_connect_goes_through_the_providers_code_flow() {
    let token = LlmServer::start(vec![Script::new(vec![
        r#"{"access_token":"notion-token-123","token_type":"bearer"}"#.into(),
    ])]);
    let Some(h) = oauth_host(&token) else { return };
    let (sid, required) = authorization_turn(&h, "search Notion for plans");
    let (location, state) = authorize(&h, &required);
    assert!(location.starts_with(
        "https://provider.example/oauth/authorize?response_type=code&client_id=notion-client&"
    ));
    let callback = format!("{}/eve/v1/connections/callback", h.origin())
        .replace(':', "%3A")
        .replace('/', "%2F");
    assert!(
        location.contains(&format!("redirect_uri={callback}")),
        "{location}"
    );

    // The local Allow button cannot stand in for the provider.
    let origin = h.origin();
    let form = [
        ("content-type", "application/x-www-form-urlencoded"),
        ("origin", origin.as_str()),
        ("sec-fetch-site", "same-origin"),
    ];
    let local = h.send(
        "POST",
        required["connectUrl"].as_str().unwrap(),
        &form,
        Some(b"decision=allow"),
    );
    assert_eq!(local.status, 403);
    // A forged state is refused.
    let forged = h.get("/eve/v1/connections/callback?code=abc&state=v1.eyJ4IjoxfQ.AAAA");
    assert_eq!(forged.status, 400);

    let done = h.get(&format!(
        "/eve/v1/connections/callback?code=the-code&state={state}"
    ));
    assert_eq!(done.status, 200, "{}", done.text());
    let sent = token.raw.lock().unwrap().clone();
    assert_eq!(sent.len(), 1);
    for part in [
        "grant_type=authorization_code",
        "code=the-code",
        "client_id=notion-client",
        "client_secret=notion-client-secret",
    ] {
        assert!(sent[0].contains(part), "{}", sent[0]);
    }
    let after = read_all(&h, &sid, required["index"].as_u64().unwrap() + 1);
    assert_eq!(after[0]["outcome"], "granted");
    assert_eq!(after[1]["type"], "tool.call.result");
    assert_eq!(after.last().unwrap()["type"], "session.completed");
    let again = h.get(&format!(
        "/eve/v1/connections/callback?code=the-code&state={state}"
    ));
    assert_eq!(
        again.status, 409,
        "a state is good for one pending authorization only"
    );
}

#[test]
fn a_provider_refusal_declines_the_authorization_cleanly() {
    let token = LlmServer::start(vec![]);
    let Some(h) = oauth_host(&token) else { return };
    let (sid, required) = authorization_turn(&h, "search Notion for plans");
    let (_, state) = authorize(&h, &required);
    let r = h.get(&format!(
        "/eve/v1/connections/callback?error=access_denied&state={state}"
    ));
    assert_eq!(r.status, 200);
    let after = read_all(&h, &sid, required["index"].as_u64().unwrap() + 1);
    assert_eq!(
        types(&after),
        vec![
            "authorization.completed",
            "tool.call.result",
            "session.waiting"
        ]
    );
    assert_eq!(after[0]["outcome"], "declined");
    assert!(token.raw.lock().unwrap().is_empty(), "no token request");
}

#[test]
fn an_unreachable_agent_is_a_clear_502_json_error() {
    let Some(h) = host_with(&[("eve_upstream_url", "http://127.0.0.1:9")]) else {
        return;
    };
    let r = h.json("POST", "/eve/v1/session", &json!({ "message": "hello" }));
    assert_eq!(r.status, 502, "{}", r.text());
    assert_eq!(r.error_code().as_deref(), Some("upstream"));
    let r = h.get("/eve/v1/session/ses_abc/stream");
    assert_eq!(r.status, 502);
    assert_eq!(r.header("content-type"), Some("application/json"));
}
