//! eve's v1 session API end to end, through `eve-proxy` and the private `agent` in the local
//! host: full turns in eve's events, reads from every cursor (`startIndex`, negative, past the
//! tail, `follow=false`), disconnect and reconnect, two readers, SSE with `Last-Event-ID`, a
//! following stream that stays open while the session waits, cancel (during a tool call,
//! while text streams), messages sent during a turn (queued for the next
//! one), questions answered with `inputResponses`, principal isolation (connection sign-ins:
//! tests/tests/mcp.rs), the `chat:send` limit, hosts killed mid-turn (resumed, for the
//! demo and a hosted provider), keep-alives, model failures, and the OpenAI-compatible and
//! Anthropic providers against local servers that speak their streaming wire formats.
//!
//! Every test starts its own host (~0.2 s) with the demo model paced at 1 ms per token.

// Shared with models.rs and attachments.rs; each suite uses part of it.
#[allow(dead_code)]
use crate::llm_server;

use std::time::{Duration, Instant};

use eve_chat_tests::eve::{
    self, assert_accepted, assert_control_accepted, assert_unique_ids, completed_text, control,
    error_of, first, of_type, position, read_until, read_until_settled, send, send_message,
    snapshot, start, streamed_text, types, Stream,
};
use eve_chat_tests::{mcp_servers, Host, HostOptions};
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

/// `1 2 … n.`, the demo's answer to "count to n".
fn counted(n: u64) -> String {
    let numbers: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
    format!("{}.", numbers.join(" "))
}

/// The events of the turn `deliveryId` started (its `meta.deliveryIds` name it).
fn delivered<'a>(events: &'a [Value], delivery: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| eve::has_delivery(e, delivery))
        .collect()
}

// ------------------------------------------------------------------------------ full turns

#[test]
fn a_full_demo_turn_streams_eves_events_from_session_started_to_session_waiting() {
    let h = any_host();
    let sid = start(&h, "What's the weather in Paris?");
    let turn = read_until_settled(&h, &sid, 0);
    let t = types(&turn);
    assert_eq!(
        t[..4],
        [
            "session.started",
            "turn.started",
            "message.received",
            "step.started"
        ]
    );
    assert_eq!(turn[0]["data"]["runtime"]["eveVersion"], "0.80.1");
    assert_eq!(turn[1]["data"], json!({"sequence": 0, "turnId": "turn_0"}));
    let received = &turn[2]["data"];
    assert_eq!(received["message"], "What's the weather in Paris?");
    assert_eq!(
        received["parts"],
        json!([{"type": "text", "text": "What's the weather in Paris?"}])
    );
    assert_eq!(turn[3]["data"]["stepIndex"], 0);

    // Step 0: reasoning, the call's input as it streams, the call, its result.
    let reasoning: String = of_type(&turn, "reasoning.appended")
        .iter()
        .map(|e| e["data"]["reasoningDelta"].as_str().unwrap())
        .collect();
    assert!(reasoning.contains("Paris"), "{reasoning}");
    assert_eq!(
        first(&turn, "reasoning.completed")["data"]["reasoning"],
        reasoning.as_str()
    );
    let input: String = of_type(&turn, "action.input.appended")
        .iter()
        .map(|e| e["data"]["inputTextDelta"].as_str().unwrap())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&input).unwrap(),
        json!({"city": "Paris"})
    );
    let action = &first(&turn, "actions.requested")["data"]["actions"][0];
    assert_eq!(action["toolName"], "get_weather");
    assert_eq!(action["kind"], "tool-call");
    assert_eq!(action["input"], json!({"city": "Paris"}));
    let result = &first(&turn, "action.result")["data"];
    assert_eq!(result["status"], "completed");
    assert_eq!(result["result"]["callId"], action["callId"]);
    assert_eq!(result["result"]["toolName"], "get_weather");
    assert_eq!(result["result"]["output"]["city"], "Paris");
    let steps = of_type(&turn, "step.completed");
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["data"]["finishReason"], "tool-calls");
    assert_eq!(steps[1]["data"]["finishReason"], "stop");

    // Step 1: the answer, streamed and then complete.
    let started = of_type(&turn, "step.started");
    assert_eq!(started[1]["data"]["stepIndex"], 1);
    let text = streamed_text(&turn);
    assert!(text.contains("**Paris**"), "{text}");
    let done = first(&turn, "message.completed");
    assert_eq!(done["data"]["message"], text.as_str());
    assert_eq!(done["data"]["finishReason"], "stop");
    assert_eq!(
        t[t.len() - 4..],
        [
            "message.completed",
            "step.completed",
            "turn.completed",
            "session.waiting"
        ]
    );
    let waiting = &turn.last().unwrap()["data"];
    assert_eq!(waiting["continuationToken"], sid.as_str());
    assert_eq!(waiting["wait"], "next-user-message");
    let step_inputs: u64 = steps
        .iter()
        .map(|s| s["data"]["usage"]["inputTokens"].as_u64().unwrap())
        .sum();
    assert!(step_inputs > 0);
    assert_eq!(waiting["usage"]["inputTokens"], step_inputs);

    // meta: minted once per event, every event of the turn carries its delivery.
    assert_unique_ids(&turn);
    let delivery = turn[0]["meta"]["deliveryIds"].clone();
    assert_eq!(delivery.as_array().map(Vec::len), Some(1));
    for e in &turn {
        assert!(e["meta"]["at"].as_str().unwrap().ends_with('Z'), "{e}");
        assert_eq!(e["meta"]["deliveryIds"], delivery, "{e}");
    }

    // The settled stream, read with follow=false: eve's headers, the same events.
    let r = h.get(&eve::stream_path(&sid, "startIndex=0&follow=false"));
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type"),
        Some("application/x-ndjson; charset=utf-8")
    );
    assert_eq!(r.header("x-eve-stream-version"), Some("26"));
    assert_eq!(r.header("x-eve-stream-format"), Some("ndjson"));
    assert_eq!(r.header("x-eve-session-id"), Some(sid.as_str()));
    assert_eq!(r.header("cache-control"), Some("no-store, no-transform"));
    let tail = (turn.len() - 1).to_string();
    assert_eq!(r.header("x-eve-stream-tail-index"), Some(tail.as_str()));
    assert!(r.text().starts_with('\n'));
    assert_eq!(eve::parse_ndjson(&r.text()), turn);
}

#[test]
fn every_cursor_of_a_settled_stream_returns_exactly_its_suffix() {
    let h = any_host();
    let sid = start(&h, "weather in Oslo and Lima");
    let full = read_until_settled(&h, &sid, 0);
    assert_eq!(
        of_type(&full, "action.result").len(),
        2,
        "one call per city"
    );
    assert_eq!(snapshot(&h, &sid, 0), full);
    let n = full.len() as i64;
    for k in 0..=n + 2 {
        let want: Vec<Value> = full.iter().skip(k as usize).cloned().collect();
        assert_eq!(snapshot(&h, &sid, k), want, "startIndex={k}");
    }
    // Negative cursors count back from the tail (clamped at its start).
    for k in 1..=n + 2 {
        let want: Vec<Value> = full[(n - k.min(n)) as usize..].to_vec();
        assert_eq!(snapshot(&h, &sid, -k), want, "startIndex=-{k}");
    }
    // A following stream from the tail names it with includeTailIndex=1.
    let mut s = Stream::open_path(
        &h,
        &eve::stream_path(&sid, "startIndex=-2&includeTailIndex=1"),
        &[],
        (n - 2) as u64,
    );
    let tail = (n - 1).to_string();
    assert_eq!(s.header("x-eve-stream-tail-index"), Some(tail.as_str()));
    assert_eq!(s.take(2), full[full.len() - 2..]);
    let bad = h.get(&eve::stream_path(&sid, "startIndex=x"));
    assert_eq!(bad.status, 400);
    assert_eq!(error_of(&bad).1, "Expected startIndex to be an integer.");
}

#[test]
fn a_reader_that_disconnects_mid_turn_and_reconnects_gets_the_rest_exactly_once() {
    let Some(h) = host_with(&[("demo_pacing_ms", "3")]) else {
        return;
    };
    let sid = start(&h, "count to 300");
    let mut first_reader = Stream::open(&h, &sid, 0);
    let mut seen = first_reader.take(20);
    drop(first_reader); // the reader goes away mid-turn; the turn keeps running
    std::thread::sleep(Duration::from_millis(300));
    seen.extend(read_until_settled(&h, &sid, 20));
    assert_eq!(seen.last().unwrap()["type"], "session.waiting");
    assert_eq!(seen, snapshot(&h, &sid, 0), "exactly the log, in order");
    assert_unique_ids(&seen);
    assert_eq!(streamed_text(&seen), counted(300));
    assert_eq!(completed_text(&seen), counted(300));
}

#[test]
fn two_readers_of_a_running_turn_both_follow_it_to_the_end() {
    let Some(h) = host_with(&[("demo_pacing_ms", "2")]) else {
        return;
    };
    let sid = start(&h, "count to 150");
    let h = std::sync::Arc::new(h);
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (h, sid) = (h.clone(), sid.clone());
            std::thread::spawn(move || read_until_settled(&h, &sid, 0))
        })
        .collect();
    let logs: Vec<Vec<Value>> = readers.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(logs[0], logs[1]);
    assert_unique_ids(&logs[0]);
    assert_eq!(logs[0].last().unwrap()["type"], "session.waiting");
    assert_eq!(completed_text(&logs[0]), counted(150));
}

#[test]
fn sse_frames_carry_the_index_as_id_and_last_event_id_resumes_after_it() {
    let h = any_host();
    let sid = start(&h, "hello there");
    let ndjson = read_until_settled(&h, &sid, 0);
    let path = eve::stream_path(&sid, "startIndex=0&follow=false");
    let sse = [("accept", "text/event-stream")];
    let r = h.send("GET", &path, &sse, None);
    assert_eq!(r.status, 200);
    assert!(r
        .header("content-type")
        .unwrap()
        .starts_with("text/event-stream"));
    assert_eq!(r.header("x-eve-stream-format"), Some("sse"));
    assert!(r.text().starts_with("retry: 1000\n\n"));
    let frames = eve::parse_sse(&r.text());
    assert_eq!(frames.len(), ndjson.len());
    for (i, ((id, data), e)) in frames.iter().zip(&ndjson).enumerate() {
        assert_eq!(*id, i as u64);
        assert_eq!(data, e);
    }
    // EventSource reconnects with its original URL and the last id it saw.
    let r = h.send(
        "GET",
        &path,
        &[("accept", "text/event-stream"), ("last-event-id", "5")],
        None,
    );
    let resumed = eve::parse_sse(&r.text());
    assert_eq!(resumed.first().unwrap().0, 6);
    assert_eq!(resumed.len(), ndjson.len() - 6);
    assert_eq!(resumed[0].1, ndjson[6]);
    let bad = h.send("GET", &path, &[("last-event-id", "x")], None);
    assert_eq!(bad.status, 400);
    assert_eq!(
        error_of(&bad).1,
        "Expected Last-Event-ID to be an event index."
    );
}

#[test]
fn a_following_stream_stays_open_while_the_session_waits_and_ends_with_the_session() {
    let Some(h) = host_with(&[]) else { return };
    let sid = start(&h, "hello");
    let turn = read_until_settled(&h, &sid, 0);
    assert_eq!(turn.last().unwrap()["type"], "session.waiting");
    // After session.waiting a following stream delivers the log and stays open.
    let mut open = Stream::open_path_for(
        &h,
        &eve::stream_path(&sid, "startIndex=0"),
        &[],
        0,
        Duration::from_millis(2500),
    );
    assert_eq!(open.take(turn.len()), turn);
    assert_eq!(open.next_event(), None);
    assert!(
        open.timed_out,
        "the stream stays open while the session waits"
    );

    // A reset ends the session: the following stream gets session.completed and closes.
    let h = std::sync::Arc::new(h);
    let follower = {
        let (h, sid) = (h.clone(), sid.clone());
        let n = turn.len() as u64;
        std::thread::spawn(move || {
            let mut s = Stream::open(&h, &sid, n);
            let rest = s.rest();
            (rest, s.timed_out)
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    let r = control(&h, &sid, "reset");
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.json(),
        json!({"ok": true, "previousSessionId": sid, "status": "reset"})
    );
    let (rest, timed_out) = follower.join().unwrap();
    assert!(!timed_out, "the stream ended by itself");
    assert_eq!(types(&rest), ["session.completed"]);
    assert_eq!(snapshot(&h, &sid, -1), rest);
    // A reset session takes nothing more.
    let r = send(&h, &sid, &json!({"message": "hello again"}));
    assert_eq!(r.status, 409);
    assert_eq!(error_of(&r).0.as_deref(), Some("session_not_active"));
    assert_eq!(
        control(&h, &sid, "cancel").json(),
        json!({"ok": true, "status": "no_active_turn"})
    );
    assert_eq!(
        control(&h, &sid, "reset").json(),
        json!({"ok": true, "status": "no_active_session"})
    );
}

#[test]
fn clear_and_compact_are_accepted_and_recorded_in_the_stream() {
    let Some(h) = host_with(&[]) else { return };
    let sid = start(&h, "hello");
    let turn = read_until_settled(&h, &sid, 0);
    let n = turn.len() as u64;
    assert_control_accepted(&control(&h, &sid, "clear"), &sid);
    let cleared = read_until_settled(&h, &sid, n);
    assert_eq!(types(&cleared), ["context.cleared", "session.waiting"]);
    assert_eq!(cleared[0]["data"]["sessionId"], sid.as_str());
    assert_eq!(cleared[0]["data"]["turnId"], "turn_1");
    let n = n + cleared.len() as u64;
    assert_control_accepted(&control(&h, &sid, "compact"), &sid);
    let compacted = read_until_settled(&h, &sid, n);
    assert_eq!(
        types(&compacted),
        [
            "compaction.requested",
            "compaction.completed",
            "session.waiting"
        ]
    );
    // The session goes on: the next message is turn 1.
    let n = n + compacted.len() as u64;
    send_message(&h, &sid, "hello again");
    let next = read_until_settled(&h, &sid, n);
    assert_eq!(next[0]["data"]["turnId"], "turn_1");
    assert_eq!(next.last().unwrap()["type"], "session.waiting");
    // Unknown sessions: eve's no_active_session.
    let unknown = "wrun_01M8R3RVBZ76Z0CSYSXBR00000";
    for c in ["clear", "compact", "reset"] {
        let r = control(&h, unknown, c);
        assert_eq!(
            (r.status, r.json()),
            (200, json!({"ok": true, "status": "no_active_session"})),
            "{c}"
        );
    }
}

// ---------------------------------------------------------------------------------- cancel

#[test]
fn cancel_during_a_tool_call_ends_the_turn_and_the_next_turn_is_consistent() {
    let Some(h) = host_with(&[]) else { return };
    let sid = start(&h, "wait 30");
    let mut reader = Stream::open(&h, &sid, 0);
    let before = reader.until_type("actions.requested");
    let action = before.last().unwrap()["data"]["actions"][0].clone();
    assert_eq!(action["toolName"], "wait");
    std::thread::sleep(Duration::from_millis(300)); // the tool is running now
    let stopped_at = Instant::now();
    assert_control_accepted(&control(&h, &sid, "cancel"), &sid);
    let after = reader.until(eve::is_settling);
    drop(reader);
    assert!(
        stopped_at.elapsed() < Duration::from_secs(5),
        "the stop is prompt"
    );
    // As eve: the stopped call is answered as cancelled in the model's history, not on the
    // stream (the next turn's consistency below shows the history is whole).
    assert_eq!(types(&after), ["turn.cancelled", "session.waiting"]);
    assert_eq!(after[0]["data"]["turnId"], "turn_0");
    assert!(action["callId"].is_string());

    // Nothing runs now: another cancel is accepted and changes nothing.
    let n = eve::len(&h, &sid);
    assert_control_accepted(&control(&h, &sid, "cancel"), &sid);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(eve::len(&h, &sid), n);

    // The next message starts a consistent turn right after the cancelled one.
    let delivery = send_message(&h, &sid, "weather in Rome");
    let turn = read_until_settled(&h, &sid, n);
    assert_eq!(types(&turn)[..2], ["turn.started", "message.received"]);
    assert_eq!(turn[0]["data"]["turnId"], "turn_1");
    assert!(completed_text(&turn).contains("**Rome**"));
    assert_eq!(turn.last().unwrap()["type"], "session.waiting");
    assert_eq!(delivered(&turn, &delivery).len(), turn.len());
    let all = snapshot(&h, &sid, 0);
    assert_unique_ids(&all);
    assert_eq!(all, [before, after, turn].concat());
}

#[test]
fn cancel_while_text_streams_stops_the_turn_at_the_next_event() {
    let Some(h) = host_with(&[("demo_pacing_ms", "5")]) else {
        return;
    };
    let sid = start(&h, "count to 5000");
    let mut reader = Stream::open(&h, &sid, 0);
    reader.until_type("message.appended");
    assert_control_accepted(&control(&h, &sid, "cancel"), &sid);
    let rest = reader.until(eve::is_settling);
    let t = types(&rest);
    assert_eq!(t[t.len() - 2..], ["turn.cancelled", "session.waiting"]);
    let all = snapshot(&h, &sid, 0);
    assert!(
        all.len() < 1000,
        "the turn stopped early ({} events)",
        all.len()
    );
    assert!(!types(&all).contains(&"message.completed"));
    assert!(!types(&all).contains(&"step.completed"));
    assert_unique_ids(&all);
}

#[test]
fn a_message_sent_while_a_turn_runs_waits_and_starts_the_next_turn() {
    let Some(h) = host_with(&[("demo_pacing_ms", "5")]) else {
        return;
    };
    let sid = start(&h, "count to 300");
    let mut reader = Stream::open(&h, &sid, 0);
    let mut seen = reader.until_type("message.appended");
    // Not refused: eve queues it (202 with its deliveryId).
    let delivery = send_message(&h, &sid, "hello while you count");
    seen.extend(
        reader.until(|e| e["type"] == "session.waiting" && eve::has_delivery(e, &delivery)),
    );
    // The running turn finished undisturbed; then the queued message started turn 1.
    let end0 = position(&seen, "session.waiting");
    let turn0 = &seen[..=end0];
    assert_eq!(completed_text(turn0), counted(300));
    assert_eq!(of_type(turn0, "turn.completed").len(), 1);
    let turn1 = &seen[end0 + 1..];
    assert_eq!(types(turn1)[..2], ["turn.started", "message.received"]);
    assert_eq!(turn1[0]["data"]["turnId"], "turn_1");
    assert_eq!(turn1[1]["data"]["message"], "hello while you count");
    assert!(completed_text(turn1).contains("hello while you count"));
    assert_eq!(delivered(turn1, &delivery).len(), turn1.len());
    assert!(delivered(turn0, &delivery).is_empty());
    assert_unique_ids(&seen);
}

// --------------------------------------------------------------------------------- memory

#[test]
fn memory_keeps_facts_across_sessions_and_refuses_secrets() {
    let Some(h) = host_with(&[]) else { return };
    let sid = start(&h, "remember that my password is hunter22");
    let events = read_until_settled(&h, &sid, 0);
    let result = &first(&events, "action.result")["data"];
    assert_eq!(result["result"]["toolName"], "remember");
    assert_eq!(result["status"], "failed");
    assert_eq!(result["result"]["isError"], true);
    assert!(result["result"]["output"]["error"]
        .as_str()
        .unwrap()
        .contains("refused"));
    let sid = start(&h, "remember that I prefer green tea");
    let events = read_until_settled(&h, &sid, 0);
    assert_eq!(
        first(&events, "action.result")["data"]["status"],
        "completed"
    );
    let sid = start(&h, "what do you remember about me?");
    let events = read_until_settled(&h, &sid, 0);
    let result = &first(&events, "action.result")["data"]["result"];
    assert_eq!(result["toolName"], "recall");
    assert_eq!(result["output"]["facts"], json!(["I prefer green tea"]));
    assert!(completed_text(&events).contains("I prefer green tea"));
}

// ------------------------------------------------------------------------------ bad input

#[test]
fn bad_input_is_refused_with_eves_errors() {
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
    let refused = |r: eve_chat_tests::Response, status: u16, error: &str| {
        assert_eq!(r.status, status, "{}", r.text());
        assert_eq!(error_of(&r).1, error);
    };
    let json_ct = "application/json";
    refused(
        post("/eve/v1/session", json_ct, b"{"),
        400,
        "Invalid JSON body.",
    );
    refused(
        post("/eve/v1/session", json_ct, b"[1,2]"),
        400,
        "Expected a JSON object.",
    );
    refused(
        post("/eve/v1/session", json_ct, br#"{"message":"  "}"#),
        400,
        "Expected 'message' to be non-empty when provided.",
    );
    refused(
        post(
            "/eve/v1/session",
            json_ct,
            br#"{"inputResponses":[{"requestId":"r","text":"x"}]}"#,
        ),
        400,
        "'inputResponses' is only accepted for an existing session.",
    );
    let long = json!({ "message": "x".repeat(8001) }).to_string();
    refused(
        post("/eve/v1/session", json_ct, long.as_bytes()),
        400,
        "Expected 'message' to be at most 8000 characters.",
    );
    // eve reads a body as JSON whatever its label (text/plain too, as the reference); a form
    // is refused.
    assert_accepted(
        &post("/eve/v1/session", "text/plain", br#"{"message":"hi"}"#),
        None,
    );
    let r = post(
        "/eve/v1/session",
        "application/x-www-form-urlencoded",
        br#"{"message":"hi"}"#,
    );
    assert_eq!(r.status, 415);
    assert_eq!(r.error_code().as_deref(), Some("unsupported_media_type"));
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
    // Unknown sessions: 404 on the stream, 409 on a send (eve's answers).
    for id in ["wrun_01M8R3RVBZ76Z0CSYSXBR00000", "not-a-session"] {
        refused(
            h.get(&format!("/eve/v1/session/{id}/stream")),
            404,
            "Session not found.",
        );
        let r = post(
            &format!("/eve/v1/session/{id}"),
            json_ct,
            br#"{"message":"hi"}"#,
        );
        assert_eq!(r.status, 409);
        assert_eq!(
            error_of(&r),
            (
                Some("session_not_active".into()),
                "The session is no longer active.".into()
            )
        );
        assert_eq!(
            control(&h, id, "cancel").json(),
            json!({"ok": true, "status": "no_active_turn"})
        );
    }
    // No route, or the wrong method: 404 (eve's router has no 405).
    refused(
        h.get("/eve/v1/session"),
        404,
        "Cannot find any route matching [GET] /eve/v1/session",
    );
    assert_eq!(h.get("/eve/v1/elsewhere").status, 404);
    let sid = start(&h, "hi");
    assert_eq!(h.get(&format!("/eve/v1/session/{sid}")).status, 404);
    assert_eq!(
        post(&format!("/eve/v1/session/{sid}/stream"), json_ct, b"{}").status,
        404
    );
    read_until_settled(&h, &sid, 0);
    let send_path = format!("/eve/v1/session/{sid}");
    refused(post(&send_path, json_ct, b""), 400, "Invalid JSON body.");
    refused(
        post(&send_path, json_ct, b"{}"),
        400,
        "Expected a non-empty 'message' or a non-empty 'inputResponses' array.",
    );
    refused(
        post(
            &send_path,
            json_ct,
            br#"{"message":"hi","inputResponses":[{"requestId":"r","optionId":"o"}]}"#,
        ),
        400,
        "'message' and 'inputResponses' are mutually exclusive.",
    );
    refused(
        post(
            &send_path,
            json_ct,
            br#"{"message":"hi","turnPolicy":"bogus"}"#,
        ),
        400,
        "Expected 'turnPolicy' to be either 'queue' or 'steer'.",
    );
    refused(
        post(
            &format!("/eve/v1/session/{sid}/cancel"),
            json_ct,
            br#"{"turnId":""}"#,
        ),
        400,
        "Expected 'turnId' to be a non-empty string.",
    );
    // The longest message (in characters, not bytes) is accepted.
    let ok = json!({ "message": "é".repeat(8000) }).to_string();
    assert_accepted(&post(&send_path, json_ct, ok.as_bytes()), Some(&sid));
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
        ("oidc_allowed_domains", "example.com".into()),
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

fn principal(subject: &str) -> eve_api::auth::Principal {
    eve_api::auth::Principal {
        id: format!("oidc:test:{subject}"),
        mode: eve_api::auth::AuthMode::Oidc,
        name: None,
        email: Some(format!("{subject}@example.com")),
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn cookie_for(subject: &str) -> String {
    let vars = oidc_vars();
    let codec = eve_auth::AuthConfig::from_lookup(move |n| {
        vars.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone())
    })
    .session_codec()
    .expect("a ready OIDC configuration");
    let (value, _) = codec.issue(&principal(subject), now_secs());
    format!("{}={value}", eve_auth::cookie::SESSION_COOKIE_NAME)
}

/// The token the proxy of the OIDC host mints for `subject` (its key: the one the harness
/// derives from the session secret, as scripts/run does).
fn upstream_token_for(subject: &str) -> String {
    eve_agent::jwt::UpstreamJwt::new(
        &eve_agent::jwt::key_derived_from(SECRET),
        eve_agent::jwt::DEFAULT_ISSUER,
        eve_agent::jwt::DEFAULT_AUDIENCE,
    )
    .mint(&principal(subject), now_secs())
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
fn another_principals_session_is_unknown_on_every_route() {
    // Alice's turn parks on the sign-in of a real MCP server that wants OAuth.
    let notes = mcp_servers::protected(3600);
    let connections = json!([mcp_servers::connection("notes", notes.port)]).to_string();
    let Some(h) = oidc_host(&[("mcp_connections", &connections)]) else {
        return;
    };
    let (alice, bob) = (cookie_for("alice"), cookie_for("bob"));
    let r = as_user(
        &h,
        "",
        "POST",
        "/eve/v1/session",
        Some(json!({"message":"hi"})),
    );
    assert_eq!(r.status, 401);
    let r = as_user(
        &h,
        &alice,
        "POST",
        "/eve/v1/session",
        Some(json!({"message": "call tool notes__read_notes {\"topic\":\"plans\"}"})),
    );
    let sid = assert_accepted(&r, None)["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let stream = eve::stream_path(&sid, "follow=false");
    // Alice's turn parks on the sign-in.
    let as_alice = [("cookie", alice.as_str())];
    let events = eve::settled_as(&h, &sid, &as_alice, Duration::from_secs(30));
    assert_eq!(events.last().unwrap()["type"], "turn.waiting");
    let required = first(&events, "authorization.required").clone();
    let unknown_stream = json!({"ok": false, "error": "Session not found."});
    let not_active = json!({"ok": false, "code": "session_not_active", "error": "The session is no longer active."});
    let no_turn = json!({"ok": true, "status": "no_active_turn"});
    let no_session = json!({"ok": true, "status": "no_active_session"});
    for (method, path, body, status, answer) in [
        (
            "GET",
            stream.clone(),
            None,
            404,
            Some(unknown_stream.clone()),
        ),
        (
            "POST",
            format!("/eve/v1/session/{sid}"),
            Some(json!({"message":"mine now"})),
            409,
            Some(not_active),
        ),
        (
            "POST",
            format!("/eve/v1/session/{sid}/cancel"),
            Some(json!({})),
            200,
            Some(no_turn),
        ),
        (
            "POST",
            format!("/eve/v1/session/{sid}/clear"),
            Some(json!({})),
            200,
            Some(no_session.clone()),
        ),
        (
            "POST",
            format!("/eve/v1/session/{sid}/reset"),
            Some(json!({})),
            200,
            Some(no_session),
        ),
        (
            "GET",
            required["data"]["authorization"]["url"]
                .as_str()
                .unwrap()
                .to_string(),
            None,
            404,
            None,
        ),
    ] {
        let r = as_user(&h, &bob, method, &path, body);
        assert_eq!(r.status, status, "{method} {path}: {}", r.text());
        if let Some(answer) = answer {
            assert_eq!(r.json(), answer, "{method} {path}");
        }
    }
    // A client cannot speak for someone else by sending the agent's bearer token itself: the
    // proxy never forwards it, even one correctly signed for Alice.
    let forged = format!("Bearer {}", upstream_token_for("alice"));
    let r = h.send(
        "GET",
        &stream,
        &[("cookie", &bob), ("authorization", &forged)],
        None,
    );
    assert_eq!(r.status, 404, "{}", r.text());
    // Alice's session is untouched.
    let again = eve::history_as(&h, &sid, &as_alice);
    assert_eq!(eve::parse_ndjson(&again.text()), events);
}

/// Issue 23 (docs/approvals.md): only the person whose turn asked answers a tool approval, as
/// eve's default; another principal's answer is refused like any send to a session that is
/// not theirs, and writes nothing.
#[test]
fn another_principal_cannot_answer_an_approval() {
    let Some(h) = oidc_host(&[("tool_approvals", r#"{"get_weather":"always"}"#)]) else {
        return;
    };
    let (alice, bob) = (cookie_for("alice"), cookie_for("bob"));
    let r = as_user(
        &h,
        &alice,
        "POST",
        "/eve/v1/session",
        Some(json!({"message": "weather in Paris"})),
    );
    let sid = assert_accepted(&r, None)["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let as_alice = [("cookie", alice.as_str())];
    let events = eve::settled_as(&h, &sid, &as_alice, Duration::from_secs(30));
    let request = &events[events.len() - 2]["data"]["requests"][0];
    assert_eq!(request["kind"], "tool-approval");
    let answer =
        json!({"inputResponses": [{"requestId": request["requestId"], "optionId": "approve"}]});
    let r = as_user(
        &h,
        &bob,
        "POST",
        &format!("/eve/v1/session/{sid}"),
        Some(answer.clone()),
    );
    assert_eq!(r.status, 409, "{}", r.text());
    let after = eve::settled_as(&h, &sid, &as_alice, Duration::from_secs(30));
    assert_eq!(after.len(), events.len(), "Bob's answer wrote nothing");
    let r = as_user(
        &h,
        &alice,
        "POST",
        &format!("/eve/v1/session/{sid}"),
        Some(answer),
    );
    assert_accepted(&r, Some(&sid));
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
        assert_accepted(&r, None);
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
    assert_eq!(r.json()["ok"], false);
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
    assert_accepted(&r, None);
}

// ------------------------------------------------------------------------------ durability

#[test]
fn a_demo_turn_whose_host_was_killed_is_resumed_after_restart_to_the_same_reply() {
    let Some(mut h) = host_with(&[("demo_pacing_ms", "5")]) else {
        return;
    };
    let sid = start(&h, "count to 1000");
    let seen = Stream::open(&h, &sid, 0).take(30);
    h.kill_and_restart();
    let started = Instant::now();
    // The dead runner's lease expires (2 s), this reader takes the turn over and continues
    // it: the interrupted step runs again under the same stepIndex.
    let rest = read_until_settled(&h, &sid, 30);
    assert!(started.elapsed() < Duration::from_secs(30));
    let all = [seen.clone(), rest].concat();
    assert_eq!(
        snapshot(&h, &sid, 0),
        all,
        "the log is what the readers got"
    );
    assert_unique_ids(&all);
    let step0: Vec<&Value> = of_type(&all, "step.started");
    assert_eq!(step0.len(), 2, "the interrupted step ran again");
    assert_eq!(step0[0]["data"]["stepIndex"], 0);
    assert_eq!(step0[1]["data"]["stepIndex"], 0);
    assert_ne!(step0[0]["meta"]["id"], step0[1]["meta"]["id"]);
    // What was streamed before the kill stays; message.completed is the whole reply.
    assert_eq!(completed_text(&all), counted(1000));
    assert!(streamed_text(&all).ends_with(&counted(1000)));
    assert_eq!(
        completed_text(&eve::without_retried_steps(&all)),
        streamed_text(&eve::without_retried_steps(&all))
    );
    let t = types(&all);
    assert_eq!(t[t.len() - 2..], ["turn.completed", "session.waiting"]);
    // The session goes on.
    let n = all.len() as u64;
    send_message(&h, &sid, "hello");
    let turn = read_until_settled(&h, &sid, n);
    assert_eq!(turn[0]["data"]["turnId"], "turn_1");
    assert_eq!(of_type(&turn, "turn.completed").len(), 1);
}

#[test]
fn a_hosted_model_turn_whose_host_was_killed_is_resumed_and_completed_after_restart() {
    // The model answers after 3.5 s: the host is killed while the turn waits for it. The
    // resumed step asks the model again (the second script).
    let slow = Script {
        delay: Duration::from_millis(3500),
        ..openai_text_script(&["Never ", "seen."])
    };
    let server = LlmServer::start(vec![
        slow,
        openai_text_script(&["Hello ", "again."]),
        openai_text_script(&["Next ", "turn."]),
    ]);
    let Some(mut h) = provider_host("openai", &server, &[]) else {
        return;
    };
    let sid = start(&h, "hello");
    let seen = read_until(&h, &sid, 0, |e| e["type"] == "step.started");
    // Wait for the request to reach the model, then kill the host.
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.bodies().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    h.kill_and_restart();
    let started = Instant::now();
    let rest = read_until_settled(&h, &sid, seen.len() as u64);
    assert!(started.elapsed() < Duration::from_secs(30));
    let all = [seen, rest].concat();
    assert_eq!(snapshot(&h, &sid, 0), all);
    assert_unique_ids(&all);
    let t = types(&all);
    assert_eq!(
        t,
        [
            "session.started",
            "turn.started",
            "message.received",
            "step.started",
            "step.started",
            "message.appended",
            "message.appended",
            "message.completed",
            "step.completed",
            "turn.completed",
            "session.waiting"
        ]
    );
    assert_eq!(all[4]["data"]["stepIndex"], 0, "the same step, again");
    assert_eq!(completed_text(&all), "Hello again.");
    // The model was asked the same question twice.
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["messages"], bodies[1]["messages"]);
    // The session goes on.
    let n = all.len() as u64;
    send_message(&h, &sid, "and now?");
    let turn = read_until_settled(&h, &sid, n);
    assert_eq!(completed_text(&turn), "Next turn.");
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
    eve::provider_host(provider, &server.base, extra)
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
    let sid = start(&h, "weather in Paris?");
    let events = read_until_settled(&h, &sid, 0);
    assert_unique_ids(&events);
    let action = &first(&events, "actions.requested")["data"]["actions"][0];
    assert_eq!(action["callId"], "call_abc");
    assert_eq!(action["toolName"], "get_weather");
    assert_eq!(action["input"], json!({"city": "Paris"}));
    let deltas: String = of_type(&events, "action.input.appended")
        .iter()
        .map(|e| {
            assert_eq!(e["data"]["callId"], "call_abc");
            e["data"]["inputTextDelta"].as_str().unwrap()
        })
        .collect();
    assert_eq!(deltas, "{\"city\": \"Paris\"}");
    let result = &first(&events, "action.result")["data"];
    assert_eq!(result["result"]["callId"], "call_abc");
    assert_eq!(result["result"]["output"]["city"], "Paris");
    let step0 = first(&events, "step.completed");
    assert_eq!(step0["data"]["usage"]["inputTokens"], 50);
    assert_eq!(step0["data"]["usage"]["outputTokens"], 12);
    assert_eq!(streamed_text(&events), "It is mild in Paris.");
    assert_eq!(completed_text(&events), "It is mild in Paris.");
    assert_eq!(
        first(&events, "step.started")["data"]["modelId"],
        "openai/test-model"
    );
    assert_eq!(events.last().unwrap()["type"], "session.waiting");

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
fn an_openai_compatible_stream_cut_in_the_middle_fails_the_turn_and_never_runs_the_fragment() {
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
    let server = LlmServer::start(vec![cut]);
    let Some(h) = provider_host("openai", &server, &[]) else {
        return;
    };
    let sid = start(&h, "weather?");
    let events = read_until_settled(&h, &sid, 0);
    let t = types(&events);
    assert!(!t.contains(&"actions.requested") && !t.contains(&"action.result"));
    assert_eq!(streamed_text(&events), "Let me check");
    assert_eq!(
        t[t.len() - 3..],
        ["step.failed", "turn.failed", "session.failed"]
    );
    let failed = &events[events.len() - 2]["data"];
    assert_eq!(failed["terminal"], true);
    assert_eq!(failed["code"], "MODEL_CALL_FAILED");
    // The session has ended.
    let r = send(&h, &sid, &json!({"message":"hello"}));
    assert_eq!(r.status, 409);
    assert_eq!(error_of(&r).0.as_deref(), Some("session_not_active"));
    assert_eq!(
        server.bodies().len(),
        1,
        "the fragment never reached a model again"
    );
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
    let sid = start(&h, "weather in Lima?");
    let events = read_until_settled(&h, &sid, 0);
    assert_unique_ids(&events);
    assert!(events
        .iter()
        .any(|e| e["type"] == "reasoning.appended"
            && e["data"]["reasoningDelta"] == "Need the weather."));
    assert_eq!(
        first(&events, "reasoning.completed")["data"]["reasoning"],
        "Need the weather."
    );
    let action = &first(&events, "actions.requested")["data"]["actions"][0];
    assert_eq!(
        (action["callId"].clone(), action["input"].clone()),
        (json!("toolu_01"), json!({"city": "Lima"}))
    );
    let result = &first(&events, "action.result")["data"]["result"];
    assert_eq!(result["output"]["city"], "Lima");
    let usage = &first(&events, "step.completed")["data"]["usage"];
    assert_eq!(
        (usage["inputTokens"].clone(), usage["outputTokens"].clone()),
        (json!(40), json!(25))
    );
    assert_eq!(completed_text(&events), "Lima is pleasant.");
    assert_eq!(events.last().unwrap()["type"], "session.waiting");

    let requests = server.requests.lock().unwrap().clone();
    let (head, first_body) = &requests[0];
    assert!(head.starts_with("POST /v1/messages "), "{head}");
    let lower = head.to_ascii_lowercase();
    assert!(
        lower.contains("x-api-key: test-key") && lower.contains("anthropic-version: 2023-06-01")
    );
    assert_eq!(first_body["stream"], true);
    assert!(first_body["system"].as_str().unwrap().contains("eve"));
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
    let sid = start(&h, "hello");
    let events = read_until_settled(&h, &sid, 0);
    assert_eq!(streamed_text(&events), "Partial");
    let last = events.last().unwrap();
    assert_eq!(last["type"], "session.failed");
    // The provider's words are in the log only (issue 12); the reader is told the answer broke
    // off and was not tried again (docs/eve-protocol.md "Retries").
    let message = last["data"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("failed partway"), "{last}");
    assert_eq!(server.bodies().len(), 1, "not tried again after text");
    let log = h.wait_for_log(Duration::from_secs(10), |l| l.contains("Anthropic"));
    assert!(log.contains("model call failed"), "{log}");
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
    let sid = start(&h, "hello");
    let mut s = Stream::open(&h, &sid, 0);
    let mut lines = Vec::new();
    while let Some(line) = s.next_line() {
        let settled = line.contains("\"session.waiting\"");
        lines.push(line);
        if settled {
            break;
        }
    }
    drop(s);
    assert_eq!(lines[0], "", "the stream opens with an empty line");
    // Keep-alives are bare newlines (eve's): a reader that skips blank lines sees only events.
    let blanks = lines[1..].iter().filter(|l| l.is_empty()).count();
    assert!(blanks >= 2, "{lines:?}");
    let events = eve::parse_ndjson(&lines.join("\n"));
    assert_eq!(events.len(), lines.len() - 1 - blanks);
    assert_eq!(events, snapshot(&h, &sid, 0));
    assert_eq!(completed_text(&events), "Finally.");
    let sse = h.send(
        "GET",
        &eve::stream_path(&sid, "startIndex=0&follow=false"),
        &[("accept", "text/event-stream")],
        None,
    );
    assert!(
        !sse.text().contains("keepalive"),
        "a settled stream needs none"
    );
}

#[test]
fn a_model_failure_fails_the_turn_and_ends_the_session() {
    // The demo's "fail", an unreachable server, a server error: eve's failure cascade.
    let server = LlmServer::start(vec![]); // answers every request with HTTP 500
    let cases: Vec<(Option<Host>, &str)> = vec![
        (host_with(&[]), "demo provider: simulated failure"),
        (
            host_with(&[
                ("llm_provider", "openai"),
                ("llm_base_url", "http://127.0.0.1:9/v1"),
            ]),
            "unreachable",
        ),
        (provider_host("openai", &server, &[]), "no more scripts"),
    ];
    for (h, why) in cases {
        let Some(h) = h else { return };
        let sid = start(&h, "please fail");
        let mut s = Stream::open(&h, &sid, 0);
        let events = s.rest();
        assert!(!s.timed_out, "a following stream ends after session.failed");
        let t = types(&events);
        assert_eq!(
            t[t.len() - 3..],
            ["step.failed", "turn.failed", "session.failed"],
            "{why}"
        );
        let [step, turn, session] = &events[events.len() - 3..] else {
            unreachable!()
        };
        // What the provider said is the operator's (the host's log); a reader of the stream
        // is told only that the call failed (issue 12).
        let generic = if why == "unreachable" {
            "The model provider could not be reached."
        } else {
            "The model provider returned an error."
        };
        for e in [step, turn, session] {
            assert_eq!(e["data"]["code"], "MODEL_CALL_FAILED");
            assert_eq!(e["data"]["message"], generic, "{why}: {e}");
            assert!(!e.to_string().contains(why), "{why}: {e}");
        }
        let log = h.wait_for_log(Duration::from_secs(10), |l| l.contains(why));
        assert!(log.contains("model call failed"), "{why}: {log}");
        assert!(log.contains(why), "{why}: {log}");
        assert_eq!(turn["data"]["terminal"], true);
        assert_eq!(session["data"]["sessionId"], sid.as_str());
        assert_unique_ids(&events);
        // An ended session takes nothing more.
        let r = send(&h, &sid, &json!({"message": "again"}));
        assert_eq!(r.status, 409, "{why}");
        assert_eq!(error_of(&r).0.as_deref(), Some("session_not_active"));
        assert_eq!(
            control(&h, &sid, "cancel").json(),
            json!({"ok": true, "status": "no_active_turn"})
        );
        assert_eq!(snapshot(&h, &sid, 0), events);
    }
}

// ------------------------------------------------------------------------ the private agent

const AGENT_JWT_SECRET: &str = "eve-stream-tests-agent-jwt-secret-0123456789";

/// A manifest that exposes `agent.wasm` publicly (as on a platform without service chaining,
/// where the agent must be reachable by URL), in password mode, verifying `eve_jwt_secret`.
fn public_agent_manifest(dir: &std::path::Path) -> std::path::PathBuf {
    let wasm = eve_chat_tests::repo_root().join("target/wasm32-wasip2/release/agent.wasm");
    let manifest = format!(
        r#"spin_manifest_version = 2
[application]
name = "public-agent"
[variables]
auth_mode = {{ default = "password" }}
chat_password = {{ default = "a-long-enough-shared-password", secret = true }}
eve_jwt_secret = {{ default = "{AGENT_JWT_SECRET}", secret = true }}
[[trigger.http]]
route = "/eve/v1/..."
component = "agent"
[component.agent]
source = "{}"
sqlite_databases = ["default"]
[component.agent.variables]
auth_mode = "{{{{ auth_mode }}}}"
chat_password = "{{{{ chat_password }}}}"
eve_jwt_secret = "{{{{ eve_jwt_secret }}}}"
"#,
        wasm.display()
    );
    let path = dir.join("spin.toml");
    std::fs::write(&path, manifest).unwrap();
    path
}

#[test]
fn the_agent_is_reached_only_through_the_proxy_and_trusts_only_its_signed_token() {
    let Some(h) = host_with(&[]) else { return };
    let sid = start(&h, "hello");
    read_until_settled(&h, &sid, 0);
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

    // Where the agent must be public, it refuses anything without a valid HS256 token.
    let dir = tempfile::tempdir().unwrap();
    let opts = HostOptions {
        manifest: public_agent_manifest(dir.path()),
        ..HostOptions::default()
    };
    let Some(agent) = Host::start(opts.var("auth_mode", "password")) else {
        return;
    };
    let body = json!({ "message": "hi" }).to_string();
    let post = |token: Option<&str>| {
        let bearer = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![("content-type", "application/json")];
        if let Some(b) = &bearer {
            headers.push(("authorization", b.as_str()));
        }
        agent.send("POST", "/eve/v1/session", &headers, Some(body.as_bytes()))
    };
    let refused = |r: eve_chat_tests::Response, why: &str| {
        assert_eq!(r.status, 401, "{why}: {}", r.text());
        assert_eq!(r.header("www-authenticate"), Some("Bearer"), "{why}");
        assert_eq!(error_of(&r).0.as_deref(), Some("unauthorized"), "{why}");
    };
    use eve_agent::jwt::{UpstreamJwt, DEFAULT_AUDIENCE, DEFAULT_ISSUER};
    let alice = eve_api::auth::Principal {
        id: "eve-chat-user".into(),
        mode: eve_api::auth::AuthMode::Password,
        name: None,
        email: None,
    };
    let now = now_secs();
    let good = UpstreamJwt::new(AGENT_JWT_SECRET, DEFAULT_ISSUER, DEFAULT_AUDIENCE);
    refused(post(None), "no token");
    refused(post(Some("not.a.jwt")), "garbage");
    let other_key = UpstreamJwt::new(
        "some-other-secret-of-enough-length-000",
        DEFAULT_ISSUER,
        DEFAULT_AUDIENCE,
    );
    refused(post(Some(&other_key.mint(&alice, now))), "another key");
    let other_audience = UpstreamJwt::new(AGENT_JWT_SECRET, DEFAULT_ISSUER, "someone-else");
    refused(
        post(Some(&other_audience.mint(&alice, now))),
        "another audience",
    );
    refused(post(Some(&good.mint(&alice, now - 400))), "expired");
    assert_accepted(&post(Some(&good.mint(&alice, now))), None);
}

// ------------------------------------------------------------------------ input requests

#[test]
fn a_question_from_the_agent_is_answered_with_input_responses_and_the_turn_continues() {
    let Some(h) = host_with(&[]) else { return };
    let sid = start(&h, "ask me to choose a city");
    let events = read_until_settled(&h, &sid, 0);
    let t = types(&events);
    assert_eq!(t[t.len() - 2..], ["input.requested", "turn.waiting"]);
    assert_eq!(events.last().unwrap()["data"]["on"], "input");
    let question = &events[events.len() - 2]["data"]["requests"][0];
    assert_eq!(question["kind"], "question");
    assert_eq!(
        question["prompt"],
        "Which city should I check the weather for?"
    );
    let labels: Vec<&Value> = question["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| &o["label"])
        .collect();
    assert_eq!(labels, [&json!("Paris"), &json!("Tokyo"), &json!("Lima")]);
    let request_id = question["requestId"].as_str().unwrap();
    let wrong = send(
        &h,
        &sid,
        &json!({ "inputResponses": [{ "requestId": "input_other", "text": "x" }] }),
    );
    assert_eq!(wrong.status, 409);
    assert_eq!(error_of(&wrong).0.as_deref(), Some("input_not_pending"));
    let r = send(
        &h,
        &sid,
        &json!({ "inputResponses": [{ "requestId": request_id, "text": "Tokyo" }] }),
    );
    assert_accepted(&r, Some(&sid));
    assert!(r.json()["deliveryId"].is_string());
    let rest = read_until_settled(&h, &sid, events.len() as u64);
    assert_eq!(types(&rest)[..2], ["input.resolved", "action.result"]);
    let resolution = &rest[0]["data"]["resolutions"][0];
    assert_eq!(
        (
            resolution["requestId"].as_str(),
            resolution["outcome"].as_str()
        ),
        (Some(request_id), Some("answered"))
    );
    assert_eq!(rest[1]["data"]["result"]["output"]["answer"], "Tokyo");
    assert_eq!(rest[1]["data"]["result"]["toolName"], "ask_user");
    assert!(completed_text(&rest).contains("Tokyo"));
    assert_eq!(rest.last().unwrap()["type"], "session.waiting");
    // Answered, the question is no longer pending.
    let again = send(
        &h,
        &sid,
        &json!({ "inputResponses": [{ "requestId": request_id, "text": "Lima" }] }),
    );
    assert_eq!(again.status, 409);

    // An option, by its id.
    let sid = start(&h, "quiz me");
    let events = read_until_settled(&h, &sid, 0);
    let question = &events[events.len() - 2]["data"]["requests"][0];
    let lima = question["options"][2]["id"].as_str().unwrap();
    let r = send(
        &h,
        &sid,
        &json!({ "inputResponses": [{ "requestId": question["requestId"], "optionId": lima }] }),
    );
    assert_accepted(&r, Some(&sid));
    let rest = read_until_settled(&h, &sid, events.len() as u64);
    assert_eq!(rest[1]["data"]["result"]["output"]["answer"], "Lima");

    // Unanswered, a plain message answers it with its text (free-form) and the turn goes on.
    let sid = start(&h, "ask me something");
    let events = read_until_settled(&h, &sid, 0);
    assert_eq!(events.last().unwrap()["type"], "turn.waiting");
    send_message(&h, &sid, "Oslo instead");
    let rest = read_until_settled(&h, &sid, events.len() as u64);
    assert_eq!(
        types(&rest)[..3],
        ["message.received", "input.resolved", "action.result"]
    );
    assert_eq!(rest[0]["data"]["turnId"], "turn_0");
    assert_eq!(
        rest[2]["data"]["result"]["output"]["answer"],
        "Oslo instead"
    );
    let t = types(&rest);
    assert_eq!(t[t.len() - 2..], ["turn.completed", "session.waiting"]);
}

#[test]
fn a_model_slow_to_answer_keeps_its_turn_alive_and_can_still_be_cancelled() {
    // Longer than the 2 s lease: the runner renews it while it waits for the response head,
    // so a reader meanwhile never takes the turn over (the model is asked once).
    let slow = Script {
        head_delay: Duration::from_secs(5),
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
    let sid = start(&h, "hello");
    let events = read_until_settled(&h, &sid, 0);
    assert_eq!(completed_text(&events), "Worth the wait.");
    assert_eq!(events.last().unwrap()["type"], "session.waiting");
    assert_eq!(server.bodies().len(), 1, "no second runner asked the model");

    let n = events.len() as u64;
    send_message(&h, &sid, "again");
    std::thread::sleep(Duration::from_millis(500));
    let stopped = Instant::now();
    assert_control_accepted(&control(&h, &sid, "cancel"), &sid);
    let rest = read_until_settled(&h, &sid, n);
    assert!(stopped.elapsed() < Duration::from_secs(3));
    let t = types(&rest);
    assert_eq!(t[t.len() - 2..], ["turn.cancelled", "session.waiting"]);
}

#[test]
fn an_unreachable_agent_is_a_clear_502_json_error() {
    let Some(h) = host_with(&[("eve_upstream_url", "http://127.0.0.1:9")]) else {
        return;
    };
    let r = h.json("POST", "/eve/v1/session", &json!({ "message": "hello" }));
    assert_eq!(r.status, 502, "{}", r.text());
    assert_eq!(error_of(&r).0.as_deref(), Some("upstream"));
    let r = h.get("/eve/v1/session/wrun_01M8R3RVBZ76Z0CSYSXBR00000/stream");
    assert_eq!(r.status, 502);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(error_of(&r).0.as_deref(), Some("upstream"));
}
