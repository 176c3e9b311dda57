//! Tool approvals, as eve 0.80.1 has them (docs/approvals.md): a tool's policy (`never`,
//! `once` per session, `always`) decides whether a call waits for a person. A call that does
//! parks the turn on an `input.requested` of kind `tool-approval` — the question flow's
//! machinery ([`crate::turn::questions`]), with eve's two options `approve` / `cancel` — and
//! its answer settles it: `approval.settled` and `input.resolved`, then the call runs, or is
//! answered `rejected` with eve's denial text (the person's note quoted), which the model reads.

use std::collections::BTreeMap;

use eve_api::eve::*;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::tools::spec::ToolCall;
use crate::turn::events::action_result;

/// The request kind of an approval.
pub const TOOL_APPROVAL: &str = "tool-approval";

/// eve's words for a refused call (`TOOL_EXECUTION_DENIED_MESSAGE`).
pub const DENIED: &str = "Tool execution was denied.";

/// eve's words for an approval a message went past.
pub const IGNORED: &str = "Ignored because the user continued without responding.";

/// When a tool's calls wait for a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// Never: the call runs.
    Never,
    /// The first call of the tool in a session waits; once approved, later calls run.
    Once,
    /// Every call waits.
    Always,
}

/// The owner's policies by tool name (the model's name: `server__tool` for an MCP tool).
pub type Policies = BTreeMap<String, Policy>;

/// Parses `{"<tool name>": "never"|"once"|"always"}`; empty text is no policy at all.
pub fn parse_policies(text: &str) -> Result<Policies, String> {
    if text.trim().is_empty() {
        return Ok(Policies::new());
    }
    serde_json::from_str(text).map_err(|e| {
        format!("tool approvals: expected {{\"<tool>\": \"never\"|\"once\"|\"always\"}}: {e}")
    })
}

/// `call`'s policy: the owner's for its tool, else the default — `always` for an MCP tool its
/// server does not mark read-only, `never` for the rest.
pub(crate) fn policy_for(
    policies: &Policies,
    call: &ToolCall,
    mcp_read_only: Option<bool>,
) -> Policy {
    policies
        .get(&call.name)
        .copied()
        .unwrap_or(match mcp_read_only {
            Some(false) => Policy::Always,
            _ => Policy::Never,
        })
}

/// The id of the approval `call` asks for.
pub(crate) fn request_id(call: &ToolCall) -> String {
    format!("approval_{}", call.id)
}

/// Whether `call` may run now under `policy`, given the session's `log`: its own approval was
/// granted, or (`once`) a call of the same tool was approved earlier in the session.
pub(crate) fn may_run(log: &[Event], call: &ToolCall, policy: Policy) -> bool {
    match policy {
        Policy::Never => true,
        Policy::Always => approved(log).any(|(id, _)| id == request_id(call)),
        Policy::Once => approved(log).any(|(_, tool)| tool == call.name),
    }
}

/// The approvals granted in `log`: `(requestId, tool name)`.
fn approved(log: &[Event]) -> impl Iterator<Item = (&str, &str)> {
    let granted: Vec<&str> = log
        .iter()
        .filter_map(|e| match e {
            Event::ApprovalSettled(s) if s.outcome == "approved" => Some(s.request_id.as_str()),
            _ => None,
        })
        .collect();
    log.iter()
        .filter_map(|e| match e {
            Event::InputRequested(r) => Some(r.requests.iter()),
            _ => None,
        })
        .flatten()
        .filter(move |q| q.kind == TOOL_APPROVAL && granted.contains(&q.request_id.as_str()))
        .map(|q| (q.request_id.as_str(), q.action.tool_name.as_str()))
}

/// The `input.requested` that asks whether `call` may run (eve's prompt and options).
pub(crate) fn ask(call: &ToolCall, at: &StepRef) -> Event {
    Event::InputRequested(InputRequested {
        call_id: None,
        requests: vec![InputRequest {
            action: ActionRequest {
                call_id: call.id.clone(),
                input: call.input.clone(),
                kind: "tool-call".into(),
                tool_name: call.name.clone(),
                name: None,
            },
            allow_freeform: Some(false),
            display: Some("confirmation".into()),
            kind: TOOL_APPROVAL.into(),
            options: vec![option("approve", "Approve"), option("cancel", "Cancel")],
            prompt: format!("Approve {}?", display_title(&call.name)),
            request_id: request_id(call),
        }],
        at: at.clone(),
    })
}

fn option(id: &str, label: &str) -> InputOption {
    InputOption {
        id: id.into(),
        label: label.into(),
    }
}

/// eve's `displayTitle`: the last `__` segment, words split at `_`, `-`, spaces and camel
/// case, lower-cased (acronyms kept), the first letter capitalised.
pub fn display_title(name: &str) -> String {
    let last = name.rsplit("__").find(|s| !s.is_empty()).unwrap_or(name);
    let mut words: Vec<String> = Vec::new();
    for chunk in last.split(|c: char| c == '_' || c == '-' || c.is_whitespace()) {
        let mut word = String::new();
        let mut prev_lower = false;
        for c in chunk.chars() {
            if c.is_uppercase() && prev_lower && !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            word.push(c);
        }
        if !word.is_empty() {
            words.push(word);
        }
    }
    let words: Vec<String> = words
        .into_iter()
        .map(|w| {
            if w.chars().count() > 1 && w == w.to_uppercase() {
                w
            } else {
                w.to_lowercase()
            }
        })
        .collect();
    let joined = if words.is_empty() {
        name.to_string()
    } else {
        words.join(" ")
    };
    let mut c = joined.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The events that settle approval `request` (asked at `at`) with `response` from
/// `principal`: approved → `approval.settled`, `input.resolved` (the turn then runs the
/// call); cancelled → the same, then the call's `rejected` result with eve's denial text.
/// `None`: the response chooses neither option.
pub(crate) fn answer_events(
    request: &InputRequest,
    at: &StepRef,
    response: &InputResponse,
    principal: &str,
) -> Option<Vec<Event>> {
    let (settled, resolved) = match response.option_id.as_deref()? {
        "approve" => ("approved", "approved"),
        "cancel" | "deny" => ("cancelled", "denied"),
        _ => return None,
    };
    let mut v = vec![
        Event::ApprovalSettled(ApprovalSettled {
            outcome: settled.into(),
            request_id: request.request_id.clone(),
            responder_principal_id: principal.into(),
            at: at.clone(),
        }),
        resolution(request, at, resolved, Some(response.clone())),
    ];
    if settled == "cancelled" {
        let reason = match response.text.as_deref().map(str::trim) {
            Some(note) if !note.is_empty() => {
                format!("{DENIED} The person who denied it wrote: {}", json!(note))
            }
            _ => DENIED.to_string(),
        };
        v.push(rejected(request, at, resolved, &reason));
    }
    Some(v)
}

/// What a message does to a waiting approval: one that names an option (its id, its label,
/// or its number) answers it, and is taken as that answer (`true`: no `message.received`, as
/// in eve); any other goes past it — `input.resolved` `ignored` and the call answered
/// `rejected` — and the model reads the message next.
pub(crate) fn steer_events(
    request: &InputRequest,
    at: &StepRef,
    text: &str,
    principal: &str,
) -> (Vec<Event>, bool) {
    let said = text.trim().to_lowercase();
    let chosen = request.options.iter().enumerate().find(|(i, o)| {
        said == o.id.to_lowercase() || said == o.label.to_lowercase() || said == (i + 1).to_string()
    });
    if let Some((_, o)) = chosen {
        let response = InputResponse {
            request_id: request.request_id.clone(),
            option_id: Some(o.id.clone()),
            text: None,
        };
        if let Some(v) = answer_events(request, at, &response, principal) {
            return (v, true);
        }
    }
    let v = vec![
        resolution(request, at, "ignored", None),
        rejected(request, at, "ignored", IGNORED),
    ];
    (v, false)
}

fn resolution(
    request: &InputRequest,
    at: &StepRef,
    outcome: &str,
    response: Option<InputResponse>,
) -> Event {
    Event::InputResolved(InputResolved {
        resolutions: vec![InputResolution {
            kind: request.kind.clone(),
            outcome: outcome.into(),
            request_id: request.request_id.clone(),
            response,
        }],
        at: at.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_read_as_eves() {
        assert_eq!(display_title("get_time"), "Get time");
        assert_eq!(display_title("everything__getTinyImage"), "Get tiny image");
        assert_eq!(display_title("fetch_URL"), "Fetch URL");
        assert_eq!(display_title("x"), "X");
    }

    #[test]
    fn policies_parse_and_a_bad_one_is_an_error() {
        let p = parse_policies(r#"{"get_time":"once","a__b":"always"}"#).unwrap();
        assert_eq!(p.get("get_time"), Some(&Policy::Once));
        assert!(parse_policies("").unwrap().is_empty());
        assert!(parse_policies(r#"{"get_time":"sometimes"}"#).is_err());
    }

    #[test]
    fn defaults_are_never_for_built_ins_and_always_for_mcp_tools_not_read_only() {
        let call = |name: &str| ToolCall {
            id: "c".into(),
            name: name.into(),
            input: json!({}),
        };
        let none = Policies::new();
        assert_eq!(policy_for(&none, &call("get_time"), None), Policy::Never);
        assert_eq!(
            policy_for(&none, &call("s__t"), Some(false)),
            Policy::Always
        );
        assert_eq!(policy_for(&none, &call("s__t"), Some(true)), Policy::Never);
        let set = parse_policies(r#"{"s__t":"never","get_time":"always"}"#).unwrap();
        assert_eq!(policy_for(&set, &call("s__t"), Some(false)), Policy::Never);
        assert_eq!(policy_for(&set, &call("get_time"), None), Policy::Always);
    }
}
