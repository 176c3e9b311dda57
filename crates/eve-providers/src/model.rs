//! What every model provider speaks to the turn: a request (system prompt, transcript, tools)
//! and a stream of [`ModelEvent`]s pushed to a callback that may stop it.

use crate::files::{self, ModelFile};
pub use crate::tool::{ToolCall, ToolSpec};

/// One message of the transcript sent to the model.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelMessage {
    User(String),
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
    },
    ToolResult {
        tool_call_id: String,
        tool_name: String,
        content: String,
        is_error: bool,
    },
    /// A file of the user message before it (providers join it to that message).
    File(ModelFile),
}

/// Reads the stored bytes of every file among `messages` (through `read`) and turns them into
/// what the model gets ([`files::resolve`]).
pub fn resolve_files(messages: &mut [ModelMessage], read: &mut dyn FnMut(&str) -> Option<Vec<u8>>) {
    for m in messages {
        if let ModelMessage::File(f) = m {
            files::resolve(f, read);
        }
    }
}

/// One model call.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    pub system: String,
    pub messages: Vec<ModelMessage>,
    pub tools: Vec<ToolSpec>,
}

impl ModelRequest {
    /// The text of the last user message.
    pub fn last_user_text(&self) -> Option<&str> {
        self.messages.iter().rev().find_map(|m| match m {
            ModelMessage::User(t) => Some(t.as_str()),
            _ => None,
        })
    }

    pub fn has_tool(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name == name)
    }
}

/// What a provider reports while it streams.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    TextDelta(String),
    ReasoningDelta(String),
    ToolCallStarted {
        id: String,
        name: String,
    },
    ToolInputDelta {
        id: String,
        delta: String,
    },
    /// The call's input is complete (the call may run).
    ToolCallReady(ToolCall),
    Usage {
        input_tokens: u64,
        output_tokens: u64,
    },
    /// The model finished (`stop`, `tool_calls`, `end_turn`, ...).
    Finished {
        reason: String,
    },
    /// No bytes for a while: a chance to check for a stop and renew the lease.
    Waiting,
}

/// The callback's answer: keep streaming, or stop now (the user interrupted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// Why a model call ended early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelError {
    /// The callback said [`Flow::Stop`].
    Interrupted,
    /// The provider failed (unreachable, HTTP error, error event, stream cut).
    Provider {
        message: String,
        code: String,
        /// Whether the same call may succeed when tried again (a busy or broken provider,
        /// not a refused request): what the retry rules (`retry.rs`) decide on.
        transient: bool,
        /// When the provider said to try again (its `Retry-After`).
        retry_after: Option<RetryAfter>,
    },
}

/// A provider's `Retry-After` (or OpenAI's `retry-after-ms`), as it said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfter {
    /// After this many milliseconds.
    Delay(u64),
    /// At this time (milliseconds since the epoch, UTC): an HTTP date.
    At(i64),
}

impl ModelError {
    /// A failure that trying again would not mend (a refused request, a broken answer).
    pub fn provider(code: &str, message: impl Into<String>) -> Self {
        ModelError::Provider {
            message: message.into(),
            code: code.into(),
            transient: false,
            retry_after: None,
        }
    }

    /// A failure of a busy or broken provider, that the same call may get past later.
    pub fn transient(code: &str, message: impl Into<String>) -> Self {
        ModelError::Provider {
            message: message.into(),
            code: code.into(),
            transient: true,
            retry_after: None,
        }
    }
}

/// A model provider.
pub trait Model {
    /// Streams one model call, pushing events to `on` in order. Returns `Ok` after
    /// [`ModelEvent::Finished`], `Err(Interrupted)` as soon as `on` answers [`Flow::Stop`].
    fn stream(
        &mut self,
        request: &ModelRequest,
        on: &mut dyn FnMut(ModelEvent) -> Flow,
    ) -> Result<(), ModelError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn stored_files_are_read_before_the_call() {
        let mut m = vec![
            ModelMessage::User("look".into()),
            ModelMessage::File(ModelFile {
                filename: Some("p.png".into()),
                media_type: "image/png".into(),
                content: files::FileContent::Stored("att_a".into()),
            }),
            ModelMessage::File(ModelFile {
                filename: Some("b.txt".into()),
                media_type: "text/plain".into(),
                content: files::FileContent::Stored("att_gone".into()),
            }),
        ];
        resolve_files(&mut m, &mut |id| (id == "att_a").then(|| PNG.to_vec()));
        assert!(
            matches!(&m[1], ModelMessage::File(f) if matches!(f.content, files::FileContent::Image { .. }))
        );
        assert!(
            matches!(&m[2], ModelMessage::File(f) if f.content == files::FileContent::Note(files::NOT_FOUND.into()))
        );
    }
}
