//! The events a turn writes, built as plain values: how a turn opens, how a call's result,
//! a cancel, a failure and the settling `session.waiting` look in eve's vocabulary.

use eve_api::eve::*;
use serde_json::{json, Value};

use crate::session::transcript::{self, OpenTurn, Waiting};
use crate::tools::spec::ToolCall;

/// `step.failed` / `turn.failed` / `session.failed` code of a failed model call (eve's).
pub const MODEL_CALL_FAILED: &str = "MODEL_CALL_FAILED";

/// The events that open turn `sequence` for a message: `session.started` first when it is the
/// session's first turn, `turn.started`, `message.received`.
pub fn start_events(sequence: u64, first: bool, text: &str, parts: &[MessagePart]) -> Vec<Event> {
    let at = TurnRef::new(sequence);
    let mut v = Vec::new();
    if first {
        v.push(Event::SessionStarted(SessionStarted {
            runtime: Some(RuntimeIdentity {
                agent_id: "eve-chat".into(),
                agent_name: "eve-chat".into(),
                eve_version: "0.80.1".into(),
            }),
        }));
    }
    v.push(Event::TurnStarted(at.clone()));
    v.push(received(&at, text, parts));
    v
}

/// `message.received` for a message of turn `at`.
pub fn received(at: &TurnRef, text: &str, parts: &[MessagePart]) -> Event {
    let parts = parts
        .iter()
        .map(|p| match p {
            MessagePart::Text { text } => ReceivedPart::Text { text: text.clone() },
            MessagePart::File {
                media_type,
                filename,
                attachment_id,
                size,
                url,
                project_file_id,
                ..
            } => ReceivedPart::File {
                filename: filename.clone(),
                media_type: media_type.clone(),
                attachment_id: attachment_id.clone(),
                size: *size,
                // A project file's download URL was set by the agent when it resolved the
                // reference; a client's linked `url` is not repeated.
                url: match (attachment_id, project_file_id) {
                    (Some(id), _) => Some(crate::protocol::routes::attachment_url(id)),
                    (None, Some(_)) => url.clone(),
                    (None, None) => None,
                },
                project_file_id: project_file_id.clone(),
            },
        })
        .collect();
    Event::MessageReceived(MessageReceived {
        message: text.into(),
        parts,
        at: at.clone(),
    })
}

/// `session.waiting` with the session's token totals so far.
pub fn session_waiting(session_id: &str, log: &[Event]) -> Event {
    Event::SessionWaiting(SessionWaiting {
        continuation_token: session_id.into(),
        usage: Some(transcript::usage(log)),
        wait: "next-user-message".into(),
    })
}

/// What settles a log whose turn ended but whose runner died before the session event that
/// follows: `session.waiting` after `turn.completed` / `turn.cancelled` (or a non-terminal
/// `turn.failed`), `session.failed` after a terminal `turn.failed`. `None` for any other log.
pub fn unsettled_end(session_id: &str, log: &[Event]) -> Option<Event> {
    match log.last()? {
        Event::TurnFailed(f) if f.terminal == Some(true) => {
            Some(Event::SessionFailed(SessionFailed {
                code: f.code.clone(),
                details: f.details.clone(),
                message: f.message.clone(),
                session_id: session_id.into(),
                usage: Some(transcript::usage(log)),
            }))
        }
        Event::TurnCompleted(_) | Event::TurnCancelled(_) | Event::TurnFailed(_) => {
            Some(session_waiting(session_id, log))
        }
        _ => None,
    }
}

pub(crate) fn action_result(
    at: &StepRef,
    call: &ToolCall,
    output: Value,
    is_error: bool,
    status: &str,
    error: Option<ActionError>,
) -> Event {
    Event::ActionResult(ActionResult {
        error,
        presentation: None,
        result: ActionOutput {
            call_id: call.id.clone(),
            is_error: is_error.then_some(true),
            kind: "tool-result".into(),
            output,
            tool_name: call.name.clone(),
            name: None,
        },
        status: status.into(),
        at: at.clone(),
    })
}

/// The `action.result` of a call that failed with `code` (the model reads `{"error": message}`).
pub(crate) fn failed_result(at: &StepRef, call: &ToolCall, code: &str, message: String) -> Event {
    action_result(
        at,
        call,
        json!({ "error": message }),
        true,
        "failed",
        Some(ActionError {
            code: code.into(),
            message,
        }),
    )
}

/// The `action.result` of a finished tool whose (bounded) output is `shown`: failed with the
/// output's `error` text when `is_error`, completed otherwise.
pub(crate) fn tool_result(at: &StepRef, call: &ToolCall, shown: Value, is_error: bool) -> Event {
    let (status, error) = if is_error {
        let message = shown
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("the tool failed")
            .to_string();
        (
            "failed",
            Some(ActionError {
                code: "tool_error".into(),
                message,
            }),
        )
    } else {
        ("completed", None)
    };
    action_result(at, call, shown, is_error, status, error)
}

/// The `actions.requested` entries of a step's tool calls (a skill load as eve's
/// `load-skill` action).
pub(crate) fn action_requests(calls: &[ToolCall]) -> Vec<ActionRequest> {
    calls
        .iter()
        .map(|c| {
            if c.name == SKILL_TOOL {
                return crate::tools::skills::action_request(c);
            }
            ActionRequest {
                call_id: c.id.clone(),
                input: c.input.clone(),
                kind: "tool-call".into(),
                tool_name: c.name.clone(),
                name: None,
            }
        })
        .collect()
}

/// eve's `finishReason` of a step: `tool-calls` when it called tools, else the provider's
/// reason in eve's words.
pub(crate) fn finish_reason(has_calls: bool, provider: Option<&str>) -> String {
    if has_calls {
        return "tool-calls".into();
    }
    match provider {
        Some("length" | "max_tokens") => "length".into(),
        Some("content_filter") => "content-filter".into(),
        _ => "stop".into(),
    }
}

/// The events that end the open turn of `log` cancelled: what it waits for is withdrawn, then
/// `turn.cancelled` and `session.waiting`.
pub fn cancel_events(session_id: &str, log: &[Event]) -> Vec<Event> {
    let Some(open) = transcript::open_turn(log) else {
        return Vec::new();
    };
    // The calls it stopped are answered as cancelled in the model's history
    // (`transcript::messages`), not on the stream, as eve does.
    let mut v = withdraw(&open, "cancelled", AuthorizationOutcome::Declined);
    v.push(Event::TurnCancelled(open.turn.clone()));
    let mut all = log.to_vec();
    all.extend(v.iter().cloned());
    v.push(session_waiting(session_id, &all));
    v
}

/// What withdraws the open turn's pending question or sign-in.
pub(crate) fn withdraw(
    open: &OpenTurn,
    input_outcome: &str,
    auth_outcome: AuthorizationOutcome,
) -> Vec<Event> {
    match &open.waiting {
        Some(Waiting::Input { open, at, .. }) => vec![Event::InputResolved(InputResolved {
            resolutions: open
                .iter()
                .map(|q| InputResolution {
                    kind: q.kind.clone(),
                    outcome: input_outcome.into(),
                    request_id: q.request_id.clone(),
                    response: None,
                })
                .collect(),
            at: at.clone(),
        })],
        Some(Waiting::Authorization {
            attempt_id,
            name,
            at,
            ..
        }) => vec![Event::AuthorizationCompleted(AuthorizationCompleted {
            attempt_id: attempt_id.clone(),
            name: name.clone(),
            outcome: auth_outcome,
            reason: None,
            at: at.clone(),
        })],
        None => Vec::new(),
    }
}

/// The events that fail turn `at` for good (eve's cascade: `step.failed`, `turn.failed` with
/// `terminal: true`, `session.failed`).
pub fn failed_events(
    session_id: &str,
    log: &[Event],
    at: &StepRef,
    code: &str,
    message: &str,
) -> Vec<Event> {
    let details = json!({ "message": message });
    vec![
        Event::StepFailed(StepFailed {
            code: code.into(),
            details: Some(details.clone()),
            message: message.into(),
            at: at.clone(),
        }),
        Event::TurnFailed(TurnFailed {
            code: code.into(),
            details: Some(details.clone()),
            message: message.into(),
            at: at.turn(),
            terminal: Some(true),
        }),
        Event::SessionFailed(SessionFailed {
            code: code.into(),
            details: Some(details),
            message: message.into(),
            session_id: session_id.into(),
            usage: Some(transcript::usage(log)),
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call() -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: "wait".into(),
            input: json!({}),
        }
    }

    #[test]
    fn a_tools_error_output_is_a_failed_result_with_its_text() {
        let at = TurnRef::new(0).step(0);
        let Event::ActionResult(r) = tool_result(&at, &call(), json!({ "error": "no" }), true)
        else {
            panic!()
        };
        assert_eq!(r.status, "failed");
        assert_eq!(r.error.map(|e| e.message), Some("no".into()));
        let Event::ActionResult(ok) = tool_result(&at, &call(), json!({ "ok": 1 }), false) else {
            panic!()
        };
        assert_eq!((ok.status.as_str(), ok.error), ("completed", None));
    }

    #[test]
    fn a_step_that_called_tools_finishes_with_tool_calls_else_in_eves_words() {
        assert_eq!(finish_reason(true, Some("stop")), "tool-calls");
        assert_eq!(finish_reason(false, Some("max_tokens")), "length");
        assert_eq!(
            finish_reason(false, Some("content_filter")),
            "content-filter"
        );
        assert_eq!(finish_reason(false, None), "stop");
    }
}
