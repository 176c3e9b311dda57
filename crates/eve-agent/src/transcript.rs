//! The event log read back: the model's transcript (complete tool calls only; half-streamed
//! fragments are dropped), which tool calls still lack a result, and the events that close
//! them consistently when a turn stops (seed 003: synthetic tool results).

use eve_api::eve::Event;
use serde_json::{json, Value};

use crate::model::{ModelMessage, ToolCall};

/// The output of a synthetic result for a call the user interrupted.
pub const INTERRUPTED_BY_USER: &str = "interrupted by the user";

/// A tool call seen in the log.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenCall {
    pub id: String,
    pub name: String,
    /// `Some` once `tool.call.ready` arrived (the call is complete).
    pub input: Option<Value>,
}

/// Tool calls that were started and have no `tool.call.result`, in order.
pub fn open_calls(events: &[Event]) -> Vec<OpenCall> {
    let mut calls: Vec<OpenCall> = Vec::new();
    for e in events {
        match e {
            Event::ToolCallStarted {
                tool_call_id,
                tool_name,
            } if !calls.iter().any(|c| &c.id == tool_call_id) => {
                calls.push(OpenCall {
                    id: tool_call_id.clone(),
                    name: tool_name.clone(),
                    input: None,
                });
            }
            Event::ToolCallReady {
                tool_call_id,
                tool_name,
                input,
            } => match calls.iter_mut().find(|c| &c.id == tool_call_id) {
                Some(c) => c.input = Some(input.clone()),
                None => calls.push(OpenCall {
                    id: tool_call_id.clone(),
                    name: tool_name.clone(),
                    input: Some(input.clone()),
                }),
            },
            Event::ToolResult { tool_call_id, .. } => calls.retain(|c| &c.id != tool_call_id),
            _ => {}
        }
    }
    calls
}

/// Complete calls without a result (they may still run).
pub fn unanswered_ready_calls(events: &[Event]) -> Vec<ToolCall> {
    open_calls(events)
        .into_iter()
        .filter_map(|c| {
            c.input.map(|input| ToolCall {
                id: c.id,
                name: c.name,
                input,
            })
        })
        .collect()
}

/// The synthetic results that close every open call: complete calls get an error result
/// with `message`; half-streamed fragments get one marked `discarded` (never sent to the
/// model). Afterwards every tool call in the log has exactly one result.
pub fn closing_results(events: &[Event], message: &str) -> Vec<Event> {
    open_calls(events)
        .into_iter()
        .map(|c| Event::ToolResult {
            tool_call_id: c.id,
            tool_name: c.name,
            output: json!({ "error": message }),
            is_error: true,
            synthetic: true,
            discarded: c.input.is_none(),
            truncated: false,
        })
        .collect()
}

/// Whether the log ends in a settled turn (or is empty).
pub fn is_settled(events: &[Event]) -> bool {
    events.last().is_none_or(Event::is_settling)
}

/// The transcript for the model: user messages, assistant text with its complete tool
/// calls, tool results. Reasoning is not sent back; discarded fragments are dropped; a call
/// without a result (never the case after [`closing_results`]) is dropped too, so the
/// transcript is always consistent.
pub fn messages(events: &[Event]) -> Vec<ModelMessage> {
    let answered: std::collections::HashSet<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult {
                tool_call_id,
                discarded: false,
                ..
            } => Some(tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    let mut out: Vec<ModelMessage> = Vec::new();
    // Whether the last message is an assistant message that may still grow.
    let mut open_assistant = false;
    for e in events {
        match e {
            Event::UserMessage { text } => {
                out.push(ModelMessage::User(text.clone()));
                open_assistant = false;
            }
            Event::TextDelta { delta } => {
                if !open_assistant {
                    out.push(ModelMessage::Assistant {
                        text: String::new(),
                        tool_calls: Vec::new(),
                    });
                    open_assistant = true;
                }
                if let Some(ModelMessage::Assistant { text, .. }) = out.last_mut() {
                    text.push_str(delta);
                }
            }
            Event::ToolCallReady {
                tool_call_id,
                tool_name,
                input,
            } if answered.contains(tool_call_id.as_str()) => {
                if !open_assistant {
                    out.push(ModelMessage::Assistant {
                        text: String::new(),
                        tool_calls: Vec::new(),
                    });
                    open_assistant = true;
                }
                if let Some(ModelMessage::Assistant { tool_calls, .. }) = out.last_mut() {
                    tool_calls.push(ToolCall {
                        id: tool_call_id.clone(),
                        name: tool_name.clone(),
                        input: input.clone(),
                    });
                }
            }
            Event::ToolResult {
                tool_call_id,
                tool_name,
                output,
                is_error,
                discarded: false,
                ..
            } => {
                out.push(ModelMessage::ToolResult {
                    tool_call_id: tool_call_id.clone(),
                    tool_name: tool_name.clone(),
                    content: output_text(output),
                    is_error: *is_error,
                });
                open_assistant = false;
            }
            Event::SessionWaiting { .. }
            | Event::SessionCompleted { .. }
            | Event::SessionFailed { .. } => open_assistant = false,
            _ => {}
        }
    }
    // Tool results must directly follow the assistant message that made the calls: a result
    // whose call is not in the transcript (impossible by construction) is dropped.
    let mut known: std::collections::HashSet<String> = Default::default();
    out.retain(|m| match m {
        ModelMessage::Assistant {
            text, tool_calls, ..
        } => {
            known.extend(tool_calls.iter().map(|c| c.id.clone()));
            !text.is_empty() || !tool_calls.is_empty()
        }
        ModelMessage::ToolResult { tool_call_id, .. } => known.contains(tool_call_id),
        ModelMessage::User(_) => true,
    });
    out
}

/// A tool output as the text a model reads: strings as they are, anything else as JSON.
pub fn output_text(output: &Value) -> String {
    match output {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started(id: &str) -> Event {
        Event::ToolCallStarted {
            tool_call_id: id.into(),
            tool_name: "get_weather".into(),
        }
    }
    fn ready(id: &str) -> Event {
        Event::ToolCallReady {
            tool_call_id: id.into(),
            tool_name: "get_weather".into(),
            input: json!({"city": "Paris"}),
        }
    }
    fn result(id: &str) -> Event {
        Event::ToolResult {
            tool_call_id: id.into(),
            tool_name: "get_weather".into(),
            output: json!({"temperatureC": 18}),
            is_error: false,
            synthetic: false,
            discarded: false,
            truncated: false,
        }
    }

    #[test]
    fn every_complete_tool_call_without_a_result_gets_a_synthetic_error_result() {
        let log = vec![
            Event::UserMessage { text: "hi".into() },
            started("a"),
            ready("a"),
            started("b"),
            ready("b"),
            result("b"),
        ];
        let closing = closing_results(&log, INTERRUPTED_BY_USER);
        assert_eq!(closing.len(), 1);
        match &closing[0] {
            Event::ToolResult {
                tool_call_id,
                is_error,
                synthetic,
                discarded,
                output,
                ..
            } => {
                assert_eq!(tool_call_id, "a");
                assert!(*is_error && *synthetic && !*discarded);
                assert_eq!(output["error"], INTERRUPTED_BY_USER);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn half_streamed_tool_call_fragments_are_closed_as_discarded_and_dropped_from_the_transcript() {
        let mut log = vec![
            Event::UserMessage {
                text: "weather".into(),
            },
            Event::TextDelta {
                delta: "Checking".into(),
            },
            started("a"),
            Event::ToolInputDelta {
                tool_call_id: "a".into(),
                delta: "{\"ci".into(),
            },
        ];
        log.extend(closing_results(&log, INTERRUPTED_BY_USER));
        assert!(open_calls(&log).is_empty());
        let msgs = messages(&log);
        assert_eq!(
            msgs,
            vec![
                ModelMessage::User("weather".into()),
                ModelMessage::Assistant {
                    text: "Checking".into(),
                    tool_calls: vec![]
                }
            ]
        );
    }

    #[test]
    fn the_transcript_pairs_each_tool_call_with_its_result_and_starts_a_new_assistant_message_after_results(
    ) {
        let log = vec![
            Event::UserMessage {
                text: "weather in Paris".into(),
            },
            Event::ReasoningDelta {
                delta: "hmm".into(),
            },
            started("a"),
            ready("a"),
            result("a"),
            Event::TextDelta {
                delta: "It is ".into(),
            },
            Event::TextDelta {
                delta: "18°C.".into(),
            },
            Event::SessionCompleted {
                finish_reason: None,
            },
            Event::UserMessage {
                text: "thanks".into(),
            },
        ];
        let msgs = messages(&log);
        assert_eq!(msgs.len(), 5);
        assert!(
            matches!(&msgs[1], ModelMessage::Assistant { text, tool_calls } if text.is_empty() && tool_calls.len() == 1)
        );
        assert!(
            matches!(&msgs[2], ModelMessage::ToolResult { tool_call_id, .. } if tool_call_id == "a")
        );
        assert!(matches!(&msgs[3], ModelMessage::Assistant { text, .. } if text == "It is 18°C."));
        assert_eq!(msgs[4], ModelMessage::User("thanks".into()));
    }

    #[test]
    fn a_log_is_settled_when_it_is_empty_or_ends_in_a_settling_event() {
        assert!(is_settled(&[]));
        assert!(!is_settled(&[Event::UserMessage { text: "x".into() }]));
        assert!(is_settled(&[Event::SessionWaiting { reason: None }]));
    }

    #[test]
    fn unanswered_ready_calls_lists_only_complete_calls_without_results() {
        let log = vec![started("a"), ready("a"), started("b")];
        let calls = unanswered_ready_calls(&log);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].id, "a");
    }
}
