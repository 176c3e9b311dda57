//! Tool approvals, as eve 0.80.1 has them (docs/approvals.md): a tool's policy (`never`,
//! `once` per session, `always`) decides whether a call waits for a person. The calls of a
//! step that do park the turn on one `input.requested` of kind `tool-approval` — the question
//! flow's machinery (`turn::questions`), with eve's two options `approve` / `cancel`;
//! the answers (`turn::approval_answers`) settle them.

use std::collections::BTreeMap;

use eve_api::eve::*;

use crate::tools::spec::ToolCall;

/// The request kind of an approval.
pub const TOOL_APPROVAL: &str = "tool-approval";

/// eve's words for a refused call (`TOOL_EXECUTION_DENIED_MESSAGE`).
pub const DENIED: &str = "Tool execution was denied.";

/// eve's words for an approval a message went past.
pub const IGNORED: &str = "Ignored because the user continued without responding.";

/// When a tool's calls wait for a person: never, once per session (once approved, later
/// calls run), always. The wire type of the `toolApprovals` setting.
pub use eve_api::settings::ToolApproval as Policy;

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

/// The `input.requested` that asks whether `calls` (of one step) may run: one request each,
/// in eve's words.
pub(crate) fn ask(calls: &[ToolCall], at: &StepRef) -> Event {
    Event::InputRequested(InputRequested {
        call_id: None,
        requests: calls.iter().map(request).collect(),
        at: at.clone(),
    })
}

fn request(call: &ToolCall) -> InputRequest {
    InputRequest {
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
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
