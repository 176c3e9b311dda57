//! Questions as Slack buttons, in eve's wire format (`renderInputRequestBlocks`,
//! `decodeHitlActionId`, `updateAnsweredHitlCard`): one `card` block per request, its prompt in
//! bold, one button per option whose `action_id` is `eve_input:[tool-approval:]<requestId>:
//! button:<n>` and whose `value` is the option id; tool approvals offer Cancel then Approve
//! (primary) and say the agent is paused. A click answers the request and the card loses its
//! buttons and shows the answer and who gave it.

use eve_api::eve::InputRequest;

use crate::words::Words;
use serde_json::{json, Value};

/// What starts every action id of ours (eve's `HITL_ACTION_PREFIX`), and of a free-form
/// question's button (`HITL_FREEFORM_ACTION_PREFIX`).
pub const ACTION_PREFIX: &str = "eve_input:";
pub const FREEFORM_PREFIX: &str = "eve_input_freeform:";
/// The free-form modal's callback id, its input block and action (eve's names).
pub const MODAL_CALLBACK_ID: &str = "eve_input_freeform_submit";
pub const MODAL_BLOCK_ID: &str = "eve_freeform_block";
pub const MODAL_ACTION_ID: &str = "eve_freeform_text";
const APPROVAL: &str = "tool-approval";

/// Slack's limits eve truncates to.
const PLAIN_TEXT_MAX: usize = 75;
const CARD_TEXT_MAX: usize = 200;
const SECTION_TEXT_MAX: usize = 3000;
const MESSAGE_TEXT_MAX: usize = 40_000;
const MODAL_TITLE_MAX: usize = 24;

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(3)).collect();
    format!("{}...", cut.trim_end())
}

/// The most blocks in one Slack message.
const MAX_BLOCKS: usize = 50;

/// One message asking for input: its blocks and notification text; whether it only shows
/// approvals' tool inputs (`details`, posted before the cards); the approval requests it
/// shows (their cards are retired when settled, and their details deleted then).
#[derive(Debug, Clone, PartialEq)]
pub struct Post {
    pub blocks: Vec<Value>,
    pub text: String,
    pub details: bool,
    pub approvals: Vec<String>,
}

/// The messages that ask `requests`, as eve posts them (`buildInputRequestPosts`): first the
/// approvals' tool inputs, then the questions and cards, each kind grouped into as few
/// messages as Slack's 50-block limit allows; `(blocks, notification text)` each.
pub fn request_messages(requests: &[InputRequest], words: &Words) -> Vec<(Vec<Value>, String)> {
    request_posts(requests, words)
        .into_iter()
        .map(|p| (p.blocks, p.text))
        .collect()
}

/// [`request_messages`] with what each message is for.
pub fn request_posts(requests: &[InputRequest], words: &Words) -> Vec<Post> {
    let (mut details, mut controls) = (Vec::new(), Vec::new());
    for r in requests {
        let blocks = request_blocks(r, words);
        let approval = (r.kind == APPROVAL).then(|| r.request_id.clone());
        let split = approval.is_some() && blocks.len() > 1 && blocks[0]["type"] == "card";
        if split {
            details.push((blocks[1..].to_vec(), fallback_text(r), approval.clone()));
            controls.push((vec![blocks[0].clone()], r.prompt.clone(), approval));
        } else {
            controls.push((blocks, fallback_text(r), approval));
        }
    }
    let mut posts = group(details, true);
    posts.extend(group(controls, false));
    posts
}

type Part = (Vec<Value>, String, Option<String>);

fn group(parts: Vec<Part>, details: bool) -> Vec<Post> {
    let mut out: Vec<(Vec<Value>, Vec<String>, Vec<String>)> = Vec::new();
    for (blocks, text, approval) in parts {
        match out.last_mut() {
            Some((b, t, a)) if b.len() + blocks.len() <= MAX_BLOCKS => {
                b.extend(blocks);
                t.push(text);
                a.extend(approval);
            }
            _ => out.push((blocks, vec![text], approval.into_iter().collect())),
        }
    }
    out.into_iter()
        .map(|(blocks, t, approvals)| Post {
            blocks,
            text: truncate(&t.join("\n"), MESSAGE_TEXT_MAX),
            details,
            approvals,
        })
        .collect()
}

/// eve's `formatInputRequestFallbackText`: the prompt, and an approval's tool input.
fn fallback_text(request: &InputRequest) -> String {
    match tool_input_json(request, SECTION_TEXT_MAX - 21) {
        Some(json) => format!("{}\n*Tool input*\n```\n{json}\n```", request.prompt),
        None => request.prompt.clone(),
    }
}

/// An approval's tool input as eve shows it (`JSON.stringify(input, null, 2)`), cut to
/// `max`; `None` for a question or an empty input.
fn tool_input_json(request: &InputRequest, max: usize) -> Option<String> {
    if request.kind != APPROVAL {
        return None;
    }
    let json = serde_json::to_string_pretty(&request.action.input).ok()?;
    (json != "{}").then(|| truncate(&json, max))
}

/// eve's `renderInputRequestBlocks`: a card of buttons (and an approval's collapsed tool
/// input), or for a question without options the prompt and a "Type your answer" button.
pub fn request_blocks(request: &InputRequest, words: &Words) -> Vec<Value> {
    if request.options.is_empty() {
        return freeform_blocks(request, words);
    }
    let mut blocks = vec![card(request, words)];
    if let Some(json) = tool_input_json(request, SECTION_TEXT_MAX - 8) {
        blocks.push(json!({
            "type": "container",
            "title": {"type": "plain_text", "text": words.tool_input},
            "is_collapsible": true,
            "default_collapsed": true,
            "child_blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": format!("```\n{json}\n```")}}],
        }));
    }
    blocks
}

/// A request's card: its prompt and one button per option.
fn card(request: &InputRequest, words: &Words) -> Value {
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
    card
}

/// Whether one of our buttons' `action_id` is a tool approval's.
pub fn is_approval_button(action_id: &str) -> bool {
    action_id
        .strip_prefix(ACTION_PREFIX)
        .is_some_and(|rest| rest.starts_with("tool-approval:"))
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
/// gave it (`user`, left out when empty, as eve does), as its subtext (eve's
/// `answeredBlocksFromActionBlock`); other blocks unchanged.
pub fn answered_blocks(
    blocks: &[Value],
    request_id: &str,
    label: &str,
    user: &str,
    words: &Words,
) -> Vec<Value> {
    let by = if user.is_empty() {
        String::new()
    } else {
        format!("{}{user}{}", words.answered_by.0, words.answered_by.1)
    };
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

/// A question without options, as eve renders it: the prompt, and a button that opens the
/// answer modal (`eve_input_freeform:<requestId>`).
fn freeform_blocks(request: &InputRequest, words: &Words) -> Vec<Value> {
    vec![
        json!({"text": {"text": truncate(&request.prompt, SECTION_TEXT_MAX), "type": "mrkdwn"}, "type": "section"}),
        json!({"type": "actions", "elements": [{
            "type": "button",
            "action_id": format!("{FREEFORM_PREFIX}{}", request.request_id),
            "text": {"type": "plain_text", "text": words.type_answer},
            "style": "primary",
            "value": request.request_id,
        }]}),
    ]
}

/// The request id of a free-form question's button.
pub fn decode_freeform(action_id: &str) -> Option<String> {
    let id = action_id.strip_prefix(FREEFORM_PREFIX)?;
    (!id.is_empty() && !id.starts_with("route:")).then(|| id.to_string())
}

/// The prompt of a question's message: its first section's text (eve's
/// `readPromptTextFromBlocks`).
pub fn prompt_of(blocks: &[Value]) -> Option<String> {
    blocks
        .iter()
        .take_while(|b| b["type"] != "actions")
        .find(|b| {
            matches!(
                b["type"].as_str(),
                Some("section" | "context" | "divider" | "image")
            )
        })
        .and_then(|b| b["text"]["text"].as_str())
        .filter(|t| !t.is_empty())
        .map(str::to_string)
}

/// eve's answer modal (`buildFreeformModalView`); `metadata` comes back with the submission.
pub fn freeform_modal(prompt: Option<&str>, metadata: &Value, words: &Words) -> Value {
    let title = prompt.map_or(words.your_answer.to_string(), |p| {
        truncate(p, MODAL_TITLE_MAX)
    });
    let mut blocks: Vec<Value> = prompt
        .map(|p| json!({"type": "section", "text": {"type": "mrkdwn", "text": truncate(p, SECTION_TEXT_MAX)}}))
        .into_iter()
        .collect();
    blocks.push(json!({
        "type": "input",
        "block_id": MODAL_BLOCK_ID,
        "element": {"type": "plain_text_input", "action_id": MODAL_ACTION_ID, "multiline": true,
            "placeholder": {"type": "plain_text", "text": words.answer_placeholder}},
        "label": {"type": "plain_text", "text": words.answer_label},
    }));
    json!({
        "type": "modal",
        "callback_id": MODAL_CALLBACK_ID,
        "private_metadata": metadata.to_string(),
        "title": {"type": "plain_text", "text": title},
        "submit": {"type": "plain_text", "text": words.submit},
        "close": {"type": "plain_text", "text": words.cancel},
        "blocks": blocks,
    })
}

/// A free-form question's message once answered (eve's `buildAnsweredBlocks`).
pub fn answered_freeform_blocks(answer: &str, user: &str, words: &Words) -> Vec<Value> {
    let label = truncate(answer, SECTION_TEXT_MAX - 21);
    vec![
        json!({"type": "section", "text": {"type": "mrkdwn", "text": format!(":white_check_mark: *{label}*")}}),
        json!({"type": "context", "elements": [{"type": "mrkdwn", "text": format!("{}<@{user}>", words.answered_by_context)}]}),
    ]
}
