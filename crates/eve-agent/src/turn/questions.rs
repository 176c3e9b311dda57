//! Questions the model asks the user (`ask_user`): the `input.requested` that parks the turn,
//! the question it waits for, the answer that continues it, and a message that steers a
//! parked turn. Tool approvals ([`crate::turn::approvals`]) are requests of this flow too:
//! their answers and steering are decided in [`crate::turn::approval_answers`].

use eve_api::eve::*;
use serde_json::{json, Value};

use crate::session::transcript::{self, Waiting};
use crate::tools::spec::ToolCall;
use crate::turn::approval_answers;
use crate::turn::approvals::TOOL_APPROVAL;
use crate::turn::authorizations::declined_events;
use crate::turn::events::{action_result, received};

/// The tool that asks the user a question.
pub const ASK_USER_TOOL: &str = "ask_user";

/// The `input.requested` of an `ask_user` call.
pub(crate) fn ask(call: &ToolCall, at: &StepRef) -> Result<Event, &'static str> {
    let prompt = call
        .input
        .get("prompt")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_string();
    if prompt.is_empty() {
        return Err("ask_user needs a prompt");
    }
    let options: Vec<InputOption> = call
        .input
        .get("options")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .take(10)
                .enumerate()
                .map(|(i, label)| InputOption {
                    id: format!("option_{i}"),
                    label: label.to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Event::InputRequested(InputRequested {
        call_id: Some(call.id.clone()),
        requests: vec![InputRequest {
            action: ActionRequest {
                call_id: call.id.clone(),
                input: call.input.clone(),
                kind: "tool-call".into(),
                tool_name: call.name.clone(),
                name: None,
            },
            allow_freeform: Some(true),
            display: Some(if options.is_empty() { "text" } else { "select" }.into()),
            kind: "question".into(),
            options,
            prompt,
            request_id: format!("req_{}", call.id),
        }],
        at: at.clone(),
    }))
}

/// The question the parked turn waits for.
pub fn pending_question(log: &[Event]) -> Option<InputRequest> {
    match transcript::open_turn(log)?.waiting? {
        Waiting::Input { request, .. } => Some(*request),
        Waiting::Authorization { .. } => None,
    }
}

/// The events that answer the parked question with `response` from `principal` (the turn
/// then continues): `input.resolved` and the `ask_user` call's result, or an approval's
/// settlement. `None` when `response` is not for it.
pub fn answer_events(
    log: &[Event],
    response: &InputResponse,
    principal: &str,
) -> Option<Vec<Event>> {
    let open = transcript::open_turn(log)?;
    let Some(Waiting::Input {
        request,
        open: pending,
        batch,
        at,
    }) = &open.waiting
    else {
        return None;
    };
    if request.kind == TOOL_APPROVAL {
        let w = approval_answers::Waiting {
            open: pending,
            batch,
            at,
            turn: &open.turn,
            log,
        };
        return approval_answers::answer_events(&w, response, principal);
    }
    if request.request_id != response.request_id {
        return None;
    }
    let value = response
        .text
        .clone()
        .or_else(|| {
            let id = response.option_id.as_deref()?;
            request
                .options
                .iter()
                .find(|o| o.id == id)
                .map(|o| o.label.clone())
        })
        .or_else(|| response.option_id.clone())?;
    let call = transcript::tool_call(&request.action);
    Some(vec![
        Event::InputResolved(InputResolved {
            resolutions: vec![InputResolution {
                kind: request.kind.clone(),
                outcome: "answered".into(),
                request_id: request.request_id.clone(),
                response: Some(response.clone()),
            }],
            at: at.clone(),
        }),
        action_result(
            at,
            &call,
            json!({ "answer": value }),
            false,
            "completed",
            None,
        ),
    ])
}

/// A message that arrives while the turn is parked steers it (eve's rule for the person the
/// turn serves): a question that takes free text is answered with it; an approval is answered
/// by a message naming an option and otherwise goes unanswered; a sign-in is declined.
/// Returns the events to write before the turn continues (`message.received` included,
/// unless the message was taken as an approval's answer).
pub fn steer_events(
    log: &[Event],
    text: &str,
    parts: &[MessagePart],
    principal: &str,
) -> Option<Vec<Event>> {
    let open = transcript::open_turn(log)?;
    let mut v = vec![received(&open.turn, text, parts)];
    match open.waiting.as_ref()? {
        // The approval is settled before the message, so the model reads the refused call's
        // result right after the call, and the message after it.
        Waiting::Input {
            request,
            open: pending,
            batch,
            at,
        } if request.kind == TOOL_APPROVAL => {
            let w = approval_answers::Waiting {
                open: pending,
                batch,
                at,
                turn: &open.turn,
                log,
            };
            let (mut settled, answered) = approval_answers::steer_events(&w, text, principal);
            if !answered {
                settled.append(&mut v);
            }
            v = settled;
        }
        Waiting::Input { request, .. } => {
            let response = InputResponse {
                request_id: request.request_id.clone(),
                option_id: None,
                text: Some(text.to_string()),
            };
            v.extend(answer_events(log, &response, principal)?);
        }
        Waiting::Authorization { .. } => v.extend(declined_events(log)?),
    }
    Some(v)
}
