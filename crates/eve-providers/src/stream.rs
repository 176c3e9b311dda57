//! The streaming core every provider shares: events handed to the turn, where a stop ends the
//! call at once ([`emit`]); a tool call assembled from its streamed pieces ([`PendingCall`]);
//! the end of an answer ([`finished`]); and the reading of a stream's JSON data ([`json`],
//! [`text`]). The HTTP providers (`openai`, `anthropic`, through `http`) and the demo report
//! through it, so a stop, a tool call and a finish mean the same thing whichever model answers.
//! (They are named in prose: a link back to them would make the core import its users.)

use serde_json::Value;

use crate::model::{Flow, ModelError, ModelEvent, ToolCall};
use crate::retry;

/// Hands `ev` to the turn; a stop is [`ModelError::Interrupted`].
pub fn emit(on: &mut dyn FnMut(ModelEvent) -> Flow, ev: ModelEvent) -> Result<(), ModelError> {
    match on(ev) {
        Flow::Continue => Ok(()),
        Flow::Stop => Err(ModelError::Interrupted),
    }
}

/// Hands every event to the turn in order, up to the first stop.
pub fn emit_all(
    on: &mut dyn FnMut(ModelEvent) -> Flow,
    events: impl IntoIterator<Item = ModelEvent>,
) -> Result<(), ModelError> {
    events.into_iter().try_for_each(|ev| emit(on, ev))
}

/// The end of an answer: what it used, then why it stopped.
pub fn finished(input_tokens: u64, output_tokens: u64, reason: String) -> [ModelEvent; 2] {
    [
        ModelEvent::Usage {
            input_tokens,
            output_tokens,
        },
        ModelEvent::Finished { reason },
    ]
}

/// A tool call whose input is still streaming: announced once, its input in pieces, ready
/// when the model closes it (a call never closed never becomes ready, so it never runs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingCall {
    pub id: String,
    pub name: String,
    /// The input text so far.
    pub input: String,
}

impl PendingCall {
    pub fn new(id: String, name: String) -> Self {
        PendingCall {
            id,
            name,
            input: String::new(),
        }
    }

    /// The event that announces the call.
    pub fn started(&self) -> ModelEvent {
        ModelEvent::ToolCallStarted {
            id: self.id.clone(),
            name: self.name.clone(),
        }
    }

    /// Adds a piece of the input; the event that reports it, unless it is empty.
    pub fn push(&mut self, piece: &str) -> Option<ModelEvent> {
        if piece.is_empty() {
            return None;
        }
        self.input.push_str(piece);
        Some(ModelEvent::ToolInputDelta {
            id: self.id.clone(),
            delta: piece.to_string(),
        })
    }

    /// The call is complete: its input parsed ([`parse_arguments`]).
    pub fn ready(self) -> ModelEvent {
        ModelEvent::ToolCallReady(ToolCall {
            input: parse_arguments(&self.input),
            id: self.id,
            name: self.name,
        })
    }
}

/// Parses a tool call's accumulated argument text: `{}` when empty; a non-object or invalid
/// JSON is kept as `{"_invalidInput": <text>}` so the tool answers a clear error.
pub fn parse_arguments(text: &str) -> Value {
    if text.trim().is_empty() {
        return serde_json::json!({});
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => v,
        _ => serde_json::json!({ "_invalidInput": text }),
    }
}

/// A stream message's JSON, `None` when it carries none; invalid JSON fails the call
/// (`bad_stream`), naming the `provider`.
pub fn json(provider: &str, data: &str) -> Result<Option<Value>, ModelError> {
    if data.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str(data).map(Some).map_err(|e| {
        ModelError::provider(
            "bad_stream",
            format!("{provider} stream sent invalid JSON: {e}"),
        )
    })
}

/// The failure an error event of a provider's stream reports, with the error's `kind` (its
/// `type`): a busy provider (`overloaded_error`, Anthropic's 529 said mid-stream) is worth
/// another try ([`retry::transient_type`]), anything else is not.
pub fn error_event(message: String, kind: Option<&str>) -> ModelError {
    if kind.is_some_and(retry::transient_type) {
        ModelError::transient("provider_error", message)
    } else {
        ModelError::provider("provider_error", message)
    }
}

/// The string `v[key]` when it is a non-empty one (providers send empty deltas freely).
pub fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pending_call_reports_each_non_empty_piece_and_is_ready_with_the_whole_input() {
        let mut call = PendingCall::new("c1".into(), "get_weather".into());
        assert_eq!(
            call.started(),
            ModelEvent::ToolCallStarted {
                id: "c1".into(),
                name: "get_weather".into()
            }
        );
        assert_eq!(call.push(""), None);
        assert_eq!(
            call.push("{\"city\":"),
            Some(ModelEvent::ToolInputDelta {
                id: "c1".into(),
                delta: "{\"city\":".into()
            })
        );
        call.push("\"Lima\"}");
        assert_eq!(
            call.ready(),
            ModelEvent::ToolCallReady(ToolCall {
                id: "c1".into(),
                name: "get_weather".into(),
                input: serde_json::json!({"city": "Lima"}),
            })
        );
    }

    #[test]
    fn arguments_that_are_not_an_object_are_kept_for_the_tool_to_refuse() {
        assert_eq!(parse_arguments("  "), serde_json::json!({}));
        assert_eq!(
            parse_arguments("[1]"),
            serde_json::json!({"_invalidInput": "[1]"})
        );
        assert_eq!(
            parse_arguments("{\"a\""),
            serde_json::json!({"_invalidInput": "{\"a\""})
        );
    }

    #[test]
    fn emitting_stops_at_the_first_stop() {
        let mut seen = Vec::new();
        let r = emit_all(
            &mut |e| {
                seen.push(e);
                if seen.len() == 2 {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            },
            finished(1, 2, "stop".into())
                .into_iter()
                .chain([ModelEvent::Waiting]),
        );
        assert_eq!(r, Err(ModelError::Interrupted));
        assert_eq!(seen.len(), 2);
    }

    #[test]
    fn empty_data_is_no_message_and_invalid_json_fails_the_call_naming_the_provider() {
        assert_eq!(json("P", " \n"), Ok(None));
        assert_eq!(
            json("P", "{\"a\":1}"),
            Ok(Some(serde_json::json!({"a": 1})))
        );
        assert!(matches!(
            json("P", "{"),
            Err(ModelError::Provider { code, message, .. }) if code == "bad_stream" && message.starts_with("P stream")
        ));
    }
}
