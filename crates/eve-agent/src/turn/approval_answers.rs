//! Answers to the approvals a turn waits for (docs/approvals.md), as eve 0.80.1 settles them:
//! each answer is an `approval.settled`; while others of the step's batch are open the turn
//! parks again (`turn.waiting`); the last one brings one `input.resolved` for the whole batch,
//! then each refused call's `rejected` result with eve's denial text (the person's note
//! quoted), which the model reads. An approved call runs at the start of the next step.

use eve_api::eve::*;
use serde_json::{json, Value};

use crate::session::transcript;
use crate::tools::spec::ToolCall;
use crate::turn::approvals::{DENIED, IGNORED};
use crate::turn::events::action_result;

/// What the turn waits for: the requests of the step's `input.requested` and the open ones.
pub(crate) struct Waiting<'a> {
    pub open: &'a [InputRequest],
    pub batch: &'a [InputRequest],
    pub at: &'a StepRef,
    pub turn: &'a TurnRef,
    /// The session's log so far.
    pub log: &'a [Event],
}

/// How one request ended: the outcome `input.resolved` reports, the response, and the text
/// the model reads for a call that does not run.
struct Settled {
    outcome: &'static str,
    response: Option<InputResponse>,
    refusal: Option<String>,
}

/// The events of `principal`'s `response` to the open request it names. `None`: no open
/// request has that id, or the response chooses neither option.
pub(crate) fn answer_events(
    w: &Waiting<'_>,
    response: &InputResponse,
    principal: &str,
) -> Option<Vec<Event>> {
    let request = w
        .open
        .iter()
        .find(|q| q.request_id == response.request_id)?;
    let settled = decide(response)?;
    let mut v = vec![Event::ApprovalSettled(ApprovalSettled {
        outcome: if settled.refusal.is_some() {
            "cancelled"
        } else {
            "approved"
        }
        .into(),
        request_id: request.request_id.clone(),
        responder_principal_id: principal.into(),
        at: w.at.clone(),
    })];
    if w.open.len() > 1 {
        // The refusal is written now, so the note survives until the batch resolves.
        if let Some(reason) = &settled.refusal {
            v.push(rejected(request, w.at, settled.outcome, reason));
        }
        let mut log = w.log.to_vec();
        log.extend(v.iter().cloned());
        v.push(Event::TurnWaiting(TurnWaiting {
            on: "input".into(),
            at: w.turn.clone(),
            usage: Some(transcript::usage(&log)),
        }));
        return Some(v);
    }
    v.extend(resolve(w, |q| {
        (q.request_id == request.request_id).then(|| settled_copy(&settled))
    }));
    Some(v)
}

/// What a message does to the waiting approvals: one that names an option (its id, its
/// label, or its number) answers the first open one, and is taken as that answer (`true`: no
/// `message.received`, as in eve); any other goes past them all — `ignored`, each call
/// answered `rejected` — and the model reads the message next.
pub(crate) fn steer_events(w: &Waiting<'_>, text: &str, principal: &str) -> (Vec<Event>, bool) {
    let said = text.trim().to_lowercase();
    if let Some(first) = w.open.first() {
        let chosen = first.options.iter().enumerate().find(|(i, o)| {
            said == o.id.to_lowercase()
                || said == o.label.to_lowercase()
                || said == (i + 1).to_string()
        });
        if let Some((_, o)) = chosen {
            let response = InputResponse {
                request_id: first.request_id.clone(),
                option_id: Some(o.id.clone()),
                text: None,
            };
            if let Some(v) = answer_events(w, &response, principal) {
                return (v, true);
            }
        }
    }
    let ignored = |q: &InputRequest| {
        w.open
            .iter()
            .any(|o| o.request_id == q.request_id)
            .then(|| Settled {
                outcome: "ignored",
                response: None,
                refusal: Some(IGNORED.into()),
            })
    };
    (resolve(w, ignored), false)
}

/// The end of the batch: one `input.resolved` (each request as it was settled, or as `now`
/// says for the open ones), then the `rejected` results not written yet, in request order.
fn resolve(w: &Waiting<'_>, now: impl Fn(&InputRequest) -> Option<Settled>) -> Vec<Event> {
    let ended: Vec<(&InputRequest, Settled)> = w
        .batch
        .iter()
        .filter_map(|q| now(q).or_else(|| earlier(w.log, q)).map(|s| (q, s)))
        .collect();
    let mut v = vec![Event::InputResolved(InputResolved {
        resolutions: ended
            .iter()
            .map(|(q, s)| InputResolution {
                kind: q.kind.clone(),
                outcome: s.outcome.into(),
                request_id: q.request_id.clone(),
                response: s.response.clone(),
            })
            .collect(),
        at: w.at.clone(),
    })];
    for (q, s) in &ended {
        let written = refused_in(w.log, &q.request_id).is_some();
        if let (Some(reason), false) = (&s.refusal, written) {
            v.push(rejected(q, w.at, s.outcome, reason));
        }
    }
    v
}

/// What `response` decides: approve, or cancel (deny) with eve's denial text.
fn decide(response: &InputResponse) -> Option<Settled> {
    let refusal = match response.option_id.as_deref()? {
        "approve" => None,
        "cancel" | "deny" => Some(match response.text.as_deref().map(str::trim) {
            Some(note) if !note.is_empty() => {
                format!("{DENIED} The person who denied it wrote: {}", json!(note))
            }
            _ => DENIED.to_string(),
        }),
        _ => return None,
    };
    Some(Settled {
        outcome: if refusal.is_some() {
            "denied"
        } else {
            "approved"
        },
        response: Some(response.clone()),
        refusal,
    })
}

fn settled_copy(s: &Settled) -> Settled {
    Settled {
        outcome: s.outcome,
        response: s.response.clone(),
        refusal: s.refusal.clone(),
    }
}

/// How request `q` was settled earlier in the batch (`approval.settled`), its response
/// rebuilt: the option, and a denial's note from the refusal written then.
fn earlier(log: &[Event], q: &InputRequest) -> Option<Settled> {
    let approved = log.iter().rev().find_map(|e| match e {
        Event::ApprovalSettled(s) if s.request_id == q.request_id => Some(s.outcome == "approved"),
        _ => None,
    })?;
    let refusal = refused_in(log, &q.request_id);
    let note = refusal.as_deref().and_then(|r| {
        let quoted = r
            .strip_prefix(DENIED)?
            .strip_prefix(" The person who denied it wrote: ")?;
        serde_json::from_str::<String>(quoted).ok()
    });
    Some(Settled {
        outcome: if approved { "approved" } else { "denied" },
        response: Some(InputResponse {
            request_id: q.request_id.clone(),
            option_id: Some(if approved { "approve" } else { "cancel" }.into()),
            text: note,
        }),
        refusal: (!approved).then(|| refusal.unwrap_or_else(|| DENIED.into())),
    })
}

/// The refusal text of request `request_id`'s `rejected` result, if it was written.
fn refused_in(log: &[Event], request_id: &str) -> Option<String> {
    log.iter().find_map(|e| match e {
        Event::ActionResult(r)
            if r.status == "rejected"
                && r.result
                    .output
                    .pointer("/approval/requestId")
                    .and_then(Value::as_str)
                    == Some(request_id) =>
        {
            r.error.as_ref().map(|e| e.message.clone())
        }
        _ => None,
    })
}

/// eve's `action.result` of a call refused at its approval: `rejected`, never run.
fn rejected(request: &InputRequest, at: &StepRef, status: &str, reason: &str) -> Event {
    let call = ToolCall {
        id: request.action.call_id.clone(),
        name: request.action.tool_name.clone(),
        input: request.action.input.clone(),
    };
    let output = json!({
        "approval": { "requestId": request.request_id, "status": status },
        "code": "TOOL_EXECUTION_DENIED",
        "message": reason,
        "tool": { "result": "not_run" },
    });
    let error = ActionError {
        code: "TOOL_EXECUTION_DENIED".into(),
        message: reason.into(),
    };
    action_result(at, &call, output, true, "rejected", Some(error))
}
