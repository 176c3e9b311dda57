//! A readable transcript of an event log: what search indexes and what the Markdown export
//! shows. The JSON export is the lossless one; this view keeps who said what.
//!
//! Events are read as eve's events ([`eve_api::eve::Event`], the one definition of them):
//! `message.received` is a user turn, `message.completed` the assistant's authoritative text
//! (the deltas of a block that never completed are joined instead), `actions.requested` names
//! the tools, sign-ins and failures become notes. Chats written in the earlier dialect were
//! rewritten into eve events by migration 0004. Reasoning, tool input and output, usage and events of unknown
//! types are left out.

use crate::limits::MAX_SEARCH_TEXT_BYTES;
use eve_api::chat::ChatSummary;
use eve_api::eve::{AuthorizationOutcome, Event};
use serde::Deserialize;
use serde_json::Value;

/// Who a transcript turn belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    /// A tool the assistant called (the text is its name).
    Tool,
    /// What happened around the conversation (authorizations, a failed turn).
    Note,
}

/// One turn of the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    pub role: Role,
    pub text: String,
}

/// The turns of an event log, in order.
pub fn transcript<'a>(events: impl IntoIterator<Item = &'a Value>) -> Vec<Turn> {
    let mut turns: Vec<Turn> = Vec::new();
    // The assistant text of the current block: `(turn sequence, step)` and whether its
    // `message.completed` replaced the deltas.
    let mut block: Option<((u64, u64), bool)> = None;
    for value in events {
        let Ok(event) = Event::deserialize(value) else {
            continue;
        };
        let (role, text) = match event {
            Event::MessageReceived(m) => (Role::User, m.message),
            Event::MessageAppended(m) => {
                let key = (m.at.sequence, m.at.step_index);
                match (turns.last_mut(), block) {
                    (Some(last), Some((k, false))) if last.role == Role::Assistant && k == key => {
                        last.text.push_str(&m.message_delta)
                    }
                    _ => {
                        turns.push(Turn {
                            role: Role::Assistant,
                            text: m.message_delta,
                        });
                        block = Some((key, false));
                    }
                }
                continue;
            }
            Event::MessageCompleted(m) => {
                let key = (m.at.sequence, m.at.step_index);
                match (turns.last_mut(), block) {
                    (Some(last), Some((k, _))) if last.role == Role::Assistant && k == key => {
                        last.text = m.message
                    }
                    _ => turns.push(Turn {
                        role: Role::Assistant,
                        text: m.message,
                    }),
                }
                block = Some((key, true));
                continue;
            }
            Event::ActionsRequested(a) => {
                for action in a.actions {
                    turns.push(Turn {
                        role: Role::Tool,
                        text: action.tool_name,
                    });
                }
                block = None;
                continue;
            }
            Event::AuthorizationRequired(a) => (
                Role::Note,
                format!(
                    "Connection needed: {}",
                    a.authorization.display_name.unwrap_or(a.name)
                ),
            ),
            Event::AuthorizationCompleted(a) => {
                let outcome = match a.outcome {
                    AuthorizationOutcome::Authorized => "connected",
                    AuthorizationOutcome::Declined => "skipped",
                    AuthorizationOutcome::Failed => "failed",
                    AuthorizationOutcome::TimedOut => "timed out",
                };
                (Role::Note, format!("{}: {outcome}", a.name))
            }
            Event::TurnCancelled(_) => (Role::Note, "Stopped.".to_string()),
            Event::SessionFailed(f) => (Role::Note, format!("The turn failed: {}", f.message)),
            _ => continue,
        };
        block = None;
        if !text.is_empty() {
            turns.push(Turn { role, text });
        }
    }
    turns
}

/// The searchable text of a chat: its user and assistant turns, one per line, cut to
/// [`MAX_SEARCH_TEXT_BYTES`] on a character boundary.
pub fn search_text<'a>(events: impl IntoIterator<Item = &'a Value>) -> String {
    let mut out = String::new();
    for turn in transcript(events) {
        if !matches!(turn.role, Role::User | Role::Assistant) {
            continue;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&turn.text);
        if out.len() >= MAX_SEARCH_TEXT_BYTES {
            break;
        }
    }
    truncate_on_char_boundary(&mut out, MAX_SEARCH_TEXT_BYTES);
    out
}

fn truncate_on_char_boundary(s: &mut String, max: usize) {
    if s.len() > max {
        let mut at = max;
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        s.truncate(at);
    }
}

/// The Markdown export: a title, the chat's dates, then each turn under a heading.
pub fn markdown<'a>(chat: &ChatSummary, events: impl IntoIterator<Item = &'a Value>) -> String {
    let mut md = format!(
        "# {}\n\n_Created {} · updated {} · chat `{}`_\n",
        chat.title.replace('\n', " "),
        chat.created_at,
        chat.updated_at,
        chat.id
    );
    for turn in transcript(events) {
        match turn.role {
            Role::User => md.push_str(&format!("\n## You\n\n{}\n", turn.text.trim_end())),
            Role::Assistant => {
                md.push_str(&format!("\n## Assistant\n\n{}\n", turn.text.trim_end()))
            }
            Role::Tool => md.push_str(&format!(
                "\n> Used tool `{}`\n",
                turn.text.replace('`', "'")
            )),
            Role::Note => md.push_str(&format!("\n> _{}_\n", turn.text.replace('\n', " "))),
        }
    }
    md
}

/// A file name for the export: the title's letters and digits, dashes between, at most 60.
pub fn export_file_name(title: &str, extension: &str) -> String {
    let mut stem = String::new();
    for c in title.chars() {
        if c.is_alphanumeric() {
            stem.extend(c.to_lowercase());
        } else if !stem.ends_with('-') && !stem.is_empty() {
            stem.push('-');
        }
        if stem.chars().count() >= 60 {
            break;
        }
    }
    let stem = stem.trim_end_matches('-');
    let stem = if stem.is_empty() { "chat" } else { stem };
    format!("{stem}.{extension}")
}

/// A `Content-Disposition` value that downloads as `file_name`: an ASCII fallback plus the
/// RFC 5987 `filename*` form for non-ASCII names.
pub fn content_disposition(file_name: &str) -> String {
    let (stem, extension) = file_name.rsplit_once('.').unwrap_or((file_name, "txt"));
    let ascii_stem: String = stem
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let ascii_stem = ascii_stem.trim_matches('-');
    let ascii_stem = if ascii_stem.is_empty() {
        "chat"
    } else {
        ascii_stem
    };
    let ascii_extension: String = extension
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let ascii = format!("{ascii_stem}.{ascii_extension}");
    let mut encoded = String::new();
    for b in file_name.bytes() {
        if b.is_ascii_alphanumeric() || b"-._".contains(&b) {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Vec<Value> {
        let at = |step: u64| json!({ "sequence": 0, "stepIndex": step, "turnId": "turn_0" });
        let with = |mut v: Value, extra: Value| {
            for (k, x) in extra.as_object().unwrap() {
                v[k] = x.clone();
            }
            v
        };
        vec![
            json!({ "type": "turn.started", "data": { "sequence": 0, "turnId": "turn_0" }, "meta": { "at": "t", "id": "e0" } }),
            json!({ "type": "message.received", "data": { "message": "What is Spin?", "sequence": 0, "turnId": "turn_0" }, "meta": { "at": "t", "id": "e1" } }),
            json!({ "type": "reasoning.appended", "data": with(at(0), json!({ "reasoningDelta": "thinking hard" })), "meta": { "at": "t", "id": "e2" } }),
            json!({ "type": "message.appended", "data": with(at(0), json!({ "messageDelta": "Spin is " })), "meta": { "at": "t", "id": "e3" } }),
            json!({ "type": "message.appended", "data": with(at(0), json!({ "messageDelta": "a frame" })), "meta": { "at": "t", "id": "e4" } }),
            json!({ "type": "message.completed", "data": with(at(0), json!({ "message": "Spin is a framework.", "finishReason": "tool-calls" })), "meta": { "at": "t", "id": "e5" } }),
            json!({ "type": "actions.requested", "data": with(at(0), json!({ "actions": [{ "callId": "c1", "input": {}, "kind": "tool-call", "toolName": "get_weather" }] })), "meta": { "at": "t", "id": "e6" } }),
            json!({ "type": "session.waiting", "data": { "continuationToken": "s", "wait": "next-user-message" }, "meta": { "at": "t", "id": "e7" } }),
            json!({ "type": "something.new", "data": { "text": "ignored" }, "meta": { "at": "t", "id": "e8" } }),
        ]
    }

    #[test]
    fn transcript_keeps_user_text_assistant_text_and_tool_names() {
        let turns = transcript(&sample());
        assert_eq!(
            turns,
            vec![
                Turn {
                    role: Role::User,
                    text: "What is Spin?".into()
                },
                Turn {
                    role: Role::Assistant,
                    text: "Spin is a framework.".into()
                },
                Turn {
                    role: Role::Tool,
                    text: "get_weather".into()
                },
            ]
        );
    }

    #[test]
    fn authorization_and_failure_become_notes_in_the_export_but_not_in_search() {
        let events = vec![
            json!({ "type": "authorization.required", "data": { "attemptId": "a", "name": "notion",
                    "authorization": { "url": "u", "displayName": "Notion" }, "description": "d",
                    "sequence": 0, "stepIndex": 0, "turnId": "turn_0" }, "meta": { "at": "t", "id": "e1" } }),
            json!({ "type": "authorization.completed", "data": { "attemptId": "a", "name": "notion", "outcome": "declined",
                    "sequence": 0, "stepIndex": 0, "turnId": "turn_0" }, "meta": { "at": "t", "id": "e2" } }),
            json!({ "type": "session.failed", "data": { "code": "X", "message": "provider down", "sessionId": "s" }, "meta": { "at": "t", "id": "e3" } }),
        ];
        let notes: Vec<String> = transcript(&events).into_iter().map(|t| t.text).collect();
        assert_eq!(
            notes,
            [
                "Connection needed: Notion",
                "notion: skipped",
                "The turn failed: provider down"
            ]
        );
        assert_eq!(search_text(&events), "");
    }

    #[test]
    fn search_text_leaves_out_reasoning_and_tools() {
        let text = search_text(&sample());
        assert_eq!(text, "What is Spin?\nSpin is a framework.");
    }

    #[test]
    fn search_text_is_bounded_on_a_char_boundary() {
        let events = vec![
            json!({ "type": "message.received", "data": { "message": "字".repeat(MAX_SEARCH_TEXT_BYTES), "sequence": 0, "turnId": "turn_0" }, "meta": { "at": "t", "id": "e" } }),
        ];
        let text = search_text(&events);
        assert!(text.len() <= MAX_SEARCH_TEXT_BYTES);
        assert!(text.chars().all(|c| c == '字'));
    }

    #[test]
    fn markdown_export_has_title_and_headed_turns() {
        let chat = ChatSummary {
            id: "abc".into(),
            title: "Spin question".into(),
            created_at: "2024-01-01T00:00:00.000Z".into(),
            updated_at: "2024-01-01T00:00:01.000Z".into(),
            project_id: None,
        };
        let md = markdown(&chat, &sample());
        assert!(md.starts_with("# Spin question\n"));
        assert!(md.contains("\n## You\n\nWhat is Spin?\n"));
        assert!(md.contains("\n## Assistant\n\nSpin is a framework.\n"));
        assert!(md.contains("`get_weather`"));
        assert!(!md.contains("thinking hard"));
    }

    #[test]
    fn export_file_names_are_safe() {
        assert_eq!(export_file_name("Spin question?", "md"), "spin-question.md");
        assert_eq!(
            export_file_name("../../etc/passwd", "json"),
            "etc-passwd.json"
        );
        assert_eq!(export_file_name("", "md"), "chat.md");
        assert_eq!(export_file_name("数据库 迁移", "md"), "数据库-迁移.md");
    }

    #[test]
    fn content_disposition_has_an_ascii_fallback_and_a_utf8_name() {
        assert_eq!(
            content_disposition("spin-question.md"),
            "attachment; filename=\"spin-question.md\"; filename*=UTF-8''spin-question.md"
        );
        let v = content_disposition("数据库-迁移.md");
        assert!(v.is_ascii());
        assert!(
            v.starts_with("attachment; filename=\"chat.md\"; filename*=UTF-8''%E6%95%B0"),
            "{v}"
        );
    }
}
