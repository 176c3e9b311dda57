//! A readable transcript of an event log: what search indexes and what the Markdown export
//! shows. The JSON export is the lossless one; this view keeps who said what.
//!
//! Events are read as the agent's [`eve_api::eve::Event`] (the one definition of the event
//! types): `user.message` starts a user turn, `assistant.text.delta`s join into the assistant's
//! turn, a `tool.call.started` names the tool, authorization and failure events become notes.
//! Reasoning, tool input and output, usage and events of unknown types are left out.

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
    for value in events {
        let Ok(event) = Event::deserialize(value) else {
            continue;
        };
        let (role, text) = match event {
            Event::UserMessage { text } => (Role::User, text),
            Event::TextDelta { delta } => {
                match turns.last_mut() {
                    Some(last) if last.role == Role::Assistant => last.text.push_str(&delta),
                    _ => turns.push(Turn {
                        role: Role::Assistant,
                        text: delta,
                    }),
                }
                continue;
            }
            Event::ToolCallStarted { tool_name, .. } => (Role::Tool, tool_name),
            Event::AuthorizationRequired { display_name, .. } => {
                (Role::Note, format!("Connection needed: {display_name}"))
            }
            Event::AuthorizationCompleted {
                connection,
                outcome,
                ..
            } => {
                let outcome = match outcome {
                    AuthorizationOutcome::Granted => "connected",
                    AuthorizationOutcome::Declined => "skipped",
                };
                (Role::Note, format!("{connection}: {outcome}"))
            }
            Event::SessionFailed { message, .. } => {
                (Role::Note, format!("The turn failed: {message}"))
            }
            _ => continue,
        };
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
        vec![
            json!({ "type": "user.message", "index": 0, "text": "What is Spin?" }),
            json!({ "type": "assistant.reasoning.delta", "index": 1, "delta": "thinking hard" }),
            json!({ "type": "assistant.text.delta", "index": 2, "delta": "Spin is " }),
            json!({ "type": "assistant.text.delta", "index": 3, "delta": "a framework." }),
            json!({ "type": "tool.call.started", "index": 4, "toolCallId": "c1", "toolName": "get_weather" }),
            json!({ "type": "tool.call.result", "index": 5, "toolCallId": "c1", "toolName": "get_weather", "output": "sunny", "isError": false }),
            json!({ "type": "usage", "index": 6, "inputTokens": 3, "outputTokens": 4 }),
            json!({ "type": "session.completed", "index": 7 }),
            json!({ "type": "something.new", "index": 8, "text": "ignored" }),
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
            json!({ "type": "authorization.required", "authorizationId": "a", "connection": "notion",
                    "displayName": "Notion", "description": "d", "connectUrl": "u", "toolCallId": "c" }),
            json!({ "type": "authorization.completed", "authorizationId": "a", "connection": "notion", "outcome": "declined" }),
            json!({ "type": "session.failed", "message": "provider down" }),
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
        let events =
            vec![json!({ "type": "user.message", "message": "字".repeat(MAX_SEARCH_TEXT_BYTES) })];
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
