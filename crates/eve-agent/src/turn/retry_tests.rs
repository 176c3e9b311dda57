//! A failed model call tried again as eve tries it (`eve_providers::retry`), driven natively
//! over a model that fails on purpose.

use eve_api::eve::*;

use super::testing::{Flaky, Host};
use super::*;
use crate::providers::http::user_message;
use crate::providers::model::{ModelError, RetryAfter};
use crate::providers::retry::{BROKE_OFF, MAX_ATTEMPTS};

fn ctx() -> TurnContext {
    TurnContext {
        session_id: "wrun_s".into(),
        model_id: "fake/m".into(),
        client_context: None,
        context_chars: usize::MAX,
        mcp: Vec::new(),
        tool_approvals: Default::default(),
    }
}

fn busy() -> ModelError {
    ModelError::transient("http_status", "Overloaded")
}

fn flaky(failures: Vec<ModelError>) -> Flaky {
    Flaky {
        failures,
        partial: None,
        calls: 0,
    }
}

/// Runs a fresh turn over `model` on `h`: how it ended and the events it wrote.
fn drive(h: &mut Host, model: &mut Flaky) -> (TurnOutcome, Vec<Event>) {
    let text = "hello";
    let log = start_events(0, true, text, &[MessagePart::Text { text: text.into() }]);
    let out = run(h, model, log, &ctx());
    (out, std::mem::take(&mut h.events))
}

fn types(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(Event::type_name).collect()
}

fn failed_message(events: &[Event]) -> String {
    events
        .iter()
        .find_map(|e| match e {
            Event::TurnFailed(f) => Some(f.message.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[test]
fn a_transient_failure_before_any_output_is_tried_again_and_the_turn_completes() {
    let mut h = Host::default();
    let mut model = flaky(vec![busy(), busy()]);
    let (out, log) = drive(&mut h, &mut model);
    assert_eq!(out, TurnOutcome::Completed);
    assert_eq!(model.calls, 3);
    // eve's waits: 500 ms, then 1000 ms, each with less than 250 ms of jitter.
    assert_eq!(h.paused_ms.len(), 2, "{:?}", h.paused_ms);
    assert!((500..750).contains(&h.paused_ms[0]), "{:?}", h.paused_ms);
    assert!((1000..1250).contains(&h.paused_ms[1]), "{:?}", h.paused_ms);
    // As eve shows a retry: nothing of the failed attempts, one step.started, one answer.
    assert_eq!(
        types(&log),
        [
            "step.started",
            "message.appended",
            "message.completed",
            "step.completed",
            "turn.completed",
            "session.waiting"
        ]
    );
}

#[test]
fn retries_run_out_after_eves_three_attempts_and_the_turn_fails() {
    let mut h = Host::default();
    let mut model = flaky(vec![busy(); 5]);
    let (out, log) = drive(&mut h, &mut model);
    assert_eq!(model.calls, MAX_ATTEMPTS as usize);
    assert_eq!(h.paused_ms.len(), 2);
    assert!(matches!(out, TurnOutcome::Failed(_)));
    let t = types(&log);
    assert_eq!(
        &t[t.len() - 3..],
        ["step.failed", "turn.failed", "session.failed"]
    );
    assert_eq!(failed_message(&log), user_message("http_status"));
}

#[test]
fn a_refused_request_is_not_tried_again() {
    let mut h = Host::default();
    let mut model = flaky(vec![ModelError::provider(
        "http_status",
        "Incorrect API key",
    )]);
    let (out, _) = drive(&mut h, &mut model);
    assert!(matches!(out, TurnOutcome::Failed(_)));
    assert_eq!((model.calls, h.pauses), (1, 0));
}

#[test]
fn the_providers_retry_after_is_waited_instead_of_the_backoff() {
    let mut h = Host::default();
    let asking = ModelError::Provider {
        message: "Rate limit reached".into(),
        code: "http_status".into(),
        transient: true,
        retry_after: Some(RetryAfter::Delay(4000)),
    };
    let (out, _) = drive(&mut h, &mut flaky(vec![asking]));
    assert_eq!(out, TurnOutcome::Completed);
    assert_eq!(h.paused_ms, [4000]);
}

#[test]
fn a_failure_after_streamed_text_is_not_tried_again_and_says_so_in_both_languages() {
    let mut h = Host::default();
    let mut model = Flaky {
        partial: Some("Hel".into()),
        ..flaky(vec![busy()])
    };
    let (out, log) = drive(&mut h, &mut model);
    assert_eq!((model.calls, h.pauses), (1, 0));
    assert!(matches!(out, TurnOutcome::Failed(_)));
    let appended: Vec<_> = log
        .iter()
        .filter_map(|e| match e {
            Event::MessageAppended(m) => Some(m.message_delta.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(appended, ["Hel"], "the streamed part is in the log once");
    let message = failed_message(&log);
    assert_eq!(message, user_message(BROKE_OFF));
    assert!(message.contains("send the message again") && message.contains("请重新发送消息"));
    // The provider's words stay out of the stream (issue 12).
    assert!(!serde_json::to_string(&log).unwrap().contains("Overloaded"));
}

#[test]
fn a_stop_while_the_call_waits_to_be_tried_again_cancels_the_turn() {
    let mut h = Host {
        stop_when: Some(|e| e.iter().any(|e| matches!(e, Event::StepStarted(_)))),
        ..Default::default()
    };
    let mut model = flaky(vec![busy()]);
    let (out, log) = drive(&mut h, &mut model);
    assert_eq!(out, TurnOutcome::Cancelled);
    assert_eq!(model.calls, 1, "not tried again once stopped");
    let t = types(&log);
    assert_eq!(&t[t.len() - 2..], ["turn.cancelled", "session.waiting"]);
}
