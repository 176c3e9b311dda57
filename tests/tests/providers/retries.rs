//! A failed model call tried again as eve tries it (issue 33, docs/eve-protocol.md
//! "Retries"): the local model server fails on purpose — 429 with `Retry-After`, Anthropic's
//! 529 overloaded and its `overloaded_error` event, a 500, a stream cut before any text — and
//! the turn completes on a later attempt, with nothing of the failed ones in the stream; when
//! every attempt fails the turn fails with eve's cascade; a stream cut after text was streamed
//! is not tried again (the text would be in the log twice) and says so.

use std::time::{Duration, Instant};

use eve_chat_tests::eve::{
    completed_text, of_type, provider_host, read_until_settled, start, streamed_text, types,
};
use serde_json::{json, Value};

use super::llm_server::{LlmServer, Script};

fn openai_chunk(delta: Value, finish: Option<&str>) -> String {
    format!(
        "data: {}\n\n",
        json!({"id":"c","object":"chat.completion.chunk","created":1,"model":"m",
            "choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
    )
}

fn anthropic_event(name: &str, data: Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// A turn on `provider` at `server`: its events, settled.
fn turn(provider: &str, server: &LlmServer) -> Option<Vec<Value>> {
    let h = provider_host(provider, &server.base, &[])?;
    let sid = start(&h, "hello");
    Some(read_until_settled(&h, &sid, 0))
}

/// The turn completed once, in one step, with `answer` streamed once and no failure shown.
fn assert_completed_once(events: &[Value], answer: &str) {
    let t = types(events);
    assert_eq!(streamed_text(events), answer, "{t:?}");
    assert_eq!(completed_text(events), answer);
    assert_eq!(of_type(events, "step.started").len(), 1, "{t:?}");
    assert!(!t.iter().any(|t| t.ends_with(".failed")), "{t:?}");
    assert_eq!(t[t.len() - 2..], ["turn.completed", "session.waiting"]);
}

#[test]
fn a_429_is_tried_again_after_its_retry_after_and_the_turn_completes() {
    let limited = Script::error(
        429,
        &[("retry-after", "1")],
        json!({"error": {"message": "Rate limit reached for requests", "type": "requests",
            "code": "rate_limit_exceeded"}}),
    );
    let server = LlmServer::start(vec![limited, Script::openai_text("After the wait")]);
    let began = Instant::now();
    let Some(events) = turn("openai", &server) else {
        return;
    };
    assert_completed_once(&events, "After the wait");
    assert_eq!(server.bodies().len(), 2);
    assert!(
        began.elapsed() >= Duration::from_millis(1000),
        "Retry-After: 1 was waited out ({:?})",
        began.elapsed()
    );
}

#[test]
fn anthropic_overloaded_as_a_529_and_as_an_error_event_is_tried_again() {
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let answered_529 = Script::error(529, &[], overloaded.clone());
    let event_then_nothing = Script::new(vec![
        anthropic_event(
            "message_start",
            json!({"type":"message_start","message":{"id":"m","usage":{"input_tokens":5,"output_tokens":1}}}),
        ),
        anthropic_event("error", overloaded),
    ]);
    let server = LlmServer::start(vec![
        answered_529,
        event_then_nothing,
        Script::anthropic_text("Third time lucky"),
    ]);
    let Some(events) = turn("anthropic", &server) else {
        return;
    };
    assert_completed_once(&events, "Third time lucky");
    assert_eq!(server.bodies().len(), 3, "eve's three attempts");
}

#[test]
fn a_stream_cut_before_any_text_is_tried_again_and_nothing_is_streamed_twice() {
    let cut = Script {
        cut: true,
        ..Script::new(vec![openai_chunk(json!({"role": "assistant"}), None)])
    };
    let server = LlmServer::start(vec![cut, Script::openai_text("Whole answer")]);
    let Some(events) = turn("openai", &server) else {
        return;
    };
    assert_completed_once(&events, "Whole answer");
    assert_eq!(server.bodies().len(), 2);
    assert_eq!(
        server.bodies()[0],
        server.bodies()[1],
        "the same request again"
    );
}

#[test]
fn when_every_attempt_fails_the_turn_fails_with_eves_cascade_after_three() {
    // Answers every request with HTTP 500.
    let server = LlmServer::start(vec![]);
    let Some(events) = turn("openai", &server) else {
        return;
    };
    let t = types(&events);
    assert_eq!(
        t[t.len() - 3..],
        ["step.failed", "turn.failed", "session.failed"]
    );
    assert_eq!(of_type(&events, "step.started").len(), 1, "{t:?}");
    let failed = &events[events.len() - 2]["data"];
    assert_eq!(failed["code"], "MODEL_CALL_FAILED");
    assert_eq!(failed["message"], "The model provider returned an error.");
    assert_eq!(server.bodies().len(), 3, "eve's limit: three attempts");
}

#[test]
fn a_stream_cut_after_text_is_not_tried_again_and_says_why() {
    let cut = Script {
        cut: true,
        ..Script::new(vec![openai_chunk(json!({"content": "Partial"}), None)])
    };
    let server = LlmServer::start(vec![cut, Script::openai_text("never asked for")]);
    let Some(events) = turn("openai", &server) else {
        return;
    };
    assert_eq!(streamed_text(&events), "Partial", "streamed once");
    assert_eq!(server.bodies().len(), 1, "not tried again");
    let t = types(&events);
    assert_eq!(
        t[t.len() - 3..],
        ["step.failed", "turn.failed", "session.failed"]
    );
    let message = events[events.len() - 2]["data"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.contains("nothing is shown twice") && message.contains("为避免内容重复显示"),
        "{message}"
    );
}
