//! Questions as Slack buttons, in eve's wire format (`renderInputRequestBlocks`,
//! `decodeHitlActionId`, `updateAnsweredHitlCard`): one `card` block per request, its prompt in
//! bold, one button per option whose `action_id` is `eve_input:[tool-approval:]<requestId>:
//! button:<n>` and whose `value` is the option id; tool approvals offer Cancel then Approve
//! (primary) and say the agent is paused. A click answers the request and the card loses its
//! buttons and shows the answer and who gave it.

use eve_api::eve::InputRequest;

use crate::words::Words;
use serde_json::{json, Value};

/// What starts every action id of ours (eve's `HITL_ACTION_PREFIX`).
pub const ACTION_PREFIX: &str = "eve_input:";
const APPROVAL: &str = "tool-approval";

/// Slack's limits eve truncates to.
const PLAIN_TEXT_MAX: usize = 75;
const CARD_TEXT_MAX: usize = 200;

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(3)).collect();
    format!("{}...", cut.trim_end())
}

/// The blocks and notification text of one request; `None` for one without options (eve
/// opens a modal for a free-form answer, which this channel does not offer: the user answers
/// in the thread instead).
pub fn request_message(request: &InputRequest, words: &Words) -> Option<(Vec<Value>, String)> {
    if request.options.is_empty() {
        return None;
    }
    let approval = request.kind == APPROVAL;
    let kind = if approval { "tool-approval:" } else { "" };
    let base = format!("{ACTION_PREFIX}{kind}{}", request.request_id);
    let mut options: Vec<(String, String, Option<&str>)> = request
        .options
        .iter()
        .map(|o| (o.id.clone(), o.label.clone(), None))
        .collect();
    let find = |id: &str| request.options.iter().find(|o| o.id == id);
    if approval {
        if let (Some(a), Some(c)) = (find("approve"), find("cancel")) {
            options = vec![
                (c.id.clone(), words.cancel.into(), None),
                (a.id.clone(), words.approve.into(), Some("primary")),
            ];
        }
    }
    let buttons: Vec<Value> = options
        .iter()
        .enumerate()
        .map(|(n, (id, label, style))| {
            let mut b = json!({
                "type": "button",
                "text": {"type": "plain_text", "text": truncate(label, PLAIN_TEXT_MAX), "emoji": false},
                "action_id": format!("{base}:button:{n}"),
                "value": id,
            });
            if let Some(s) = style {
                b["style"] = json!(s);
            }
            b
        })
        .collect();
    let mut card = json!({
        "type": "card",
        "body": {"type": "mrkdwn", "text": truncate(&format!("*{}*", request.prompt), CARD_TEXT_MAX), "verbatim": false},
        "actions": buttons,
    });
    if approval {
        card["subtext"] = json!({"type": "mrkdwn", "text": words.paused});
    }
    Some((vec![card], request.prompt.clone()))
}

/// The request id of one of our buttons' `action_id`.
pub fn decode_button(action_id: &str) -> Option<String> {
    let rest = action_id.strip_prefix(ACTION_PREFIX)?;
    // eve's routed form (`route:<channel>:<thread>:…`) is only used for direct-message
    // approvals, which this channel does not send.
    if rest.starts_with("route:") {
        return None;
    }
    let rest = rest.strip_prefix("tool-approval:").unwrap_or(rest);
    let (id, n) = rest.rsplit_once(":button:")?;
    (!id.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .then(|| id.to_string())
}

/// The card's blocks once answered: the card without its buttons and with the answer, who
/// gave it, as its subtext (eve's `answeredBlocksFromActionBlock`); other blocks unchanged.
pub fn answered_blocks(
    blocks: &[Value],
    request_id: &str,
    label: &str,
    user: &str,
    words: &Words,
) -> Vec<Value> {
    let by = format!("{}{user}{}", words.answered_by.0, words.answered_by.1);
    let room = CARD_TEXT_MAX.saturating_sub(21 + by.chars().count());
    let subtext = truncate(
        &format!(":white_check_mark: *{}*{by}", truncate(label, room)),
        CARD_TEXT_MAX,
    );
    blocks
        .iter()
        .map(|b| {
            let ours = b["actions"].as_array().is_some_and(|a| {
                a.iter().any(|e| {
                    e["action_id"].as_str().and_then(decode_button).as_deref() == Some(request_id)
                })
            });
            if !ours || b["type"] != "card" {
                return b.clone();
            }
            let mut card = b.clone();
            if let Some(o) = card.as_object_mut() {
                o.remove("actions");
                o.insert(
                    "subtext".into(),
                    json!({"type": "mrkdwn", "text": subtext, "verbatim": false}),
                );
            }
            card
        })
        .collect()
}
