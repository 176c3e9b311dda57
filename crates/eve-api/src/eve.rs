//! The eve session protocol (`/eve/v1/*`): request bodies, `ClientSessionState`, and the
//! stream events. Documented with examples in `docs/eve-protocol.md`.
//!
//! Every stream event is a JSON object with a string `type` and its integer stream position
//! `index` ([`StreamEvent`]). The agent stores [`Event`]s without their index (the row's
//! position is the index) and adds it when it writes an event to a reader.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Response header naming the session (`POST /eve/v1/session`, and every stream).
pub const SESSION_ID_HEADER: &str = "x-eve-session-id";

/// Request header by which `eve-proxy` tells the private `agent` who is calling: a value
/// signed with a key derived from `session_secret` (see `eve_agent::assertion`). The agent
/// refuses any request without a valid one, so it stays safe when reached by URL.
pub const PRINCIPAL_ASSERTION_HEADER: &str = "x-eve-principal-assertion";

/// Request header by which `eve-proxy` tells the agent the app's public origin (for OAuth
/// redirect URIs of connections).
pub const APP_ORIGIN_HEADER: &str = "x-eve-app-origin";

/// Response header on a stream: the session's state when the stream opened
/// (`idle`, `running`, `awaiting_authorization`).
pub const SESSION_STATE_HEADER: &str = "x-eve-session-state";

/// NDJSON content type of streams (the default).
pub const NDJSON_CONTENT_TYPE: &str = "application/x-ndjson";
/// SSE content type (when the reader sends `Accept: text/event-stream`).
pub const SSE_CONTENT_TYPE: &str = "text/event-stream";

/// The keep-alive line's `type` (NDJSON `{"type":"keepalive"}`, never indexed; SSE uses a
/// `: keepalive` comment). Readers ignore it.
pub const KEEPALIVE_TYPE: &str = "keepalive";

/// The eve `ClientSessionState`: which session, and where to resume reading its stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientSessionState {
    pub session_id: String,
    pub stream_index: u64,
}

/// `POST /eve/v1/session` and `POST /eve/v1/session/:id`: a message, or (for an existing
/// session) structured responses to input / authorization requests. Exactly one of `message`
/// and `inputResponses` is given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Natural-language context for this turn (e.g. which connections the user enabled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_context: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<Vec<InputResponse>>,
}

/// An answer to an `input.requested` (`value`) or `authorization.required` (`outcome`) event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputResponse {
    /// The `requestId` of an `input.requested`, or the `authorizationId` of an
    /// `authorization.required`.
    pub request_id: String,
    /// For authorizations: only `declined` is accepted here (granting goes through the
    /// event's `connectUrl`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<AuthorizationOutcome>,
    /// For input requests: the chosen or typed answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// `POST /eve/v1/session/:id/interrupt` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InterruptResponse {
    /// A running turn was asked to stop (false: nothing was running).
    pub interrupted: bool,
}

/// How an authorization ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthorizationOutcome {
    Granted,
    Declined,
}

/// One event of a session's stream (without its index; see [`StreamEvent`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Event {
    /// The user's message that starts a turn.
    #[serde(rename = "user.message")]
    UserMessage { text: String },
    /// A piece of the assistant's reply text.
    #[serde(rename = "assistant.text.delta")]
    TextDelta { delta: String },
    /// A piece of the assistant's visible reasoning.
    #[serde(rename = "assistant.reasoning.delta")]
    ReasoningDelta { delta: String },
    /// The model started a tool call.
    #[serde(rename = "tool.call.started", rename_all = "camelCase")]
    ToolCallStarted {
        tool_call_id: String,
        tool_name: String,
    },
    /// A fragment of the tool call's JSON input, as the model streams it.
    #[serde(rename = "tool.call.input.delta", rename_all = "camelCase")]
    ToolInputDelta { tool_call_id: String, delta: String },
    /// The tool call is complete: its full, parsed input. Only ready calls are executed and
    /// sent back to the model; a call that never became ready was a half-streamed fragment.
    #[serde(rename = "tool.call.ready", rename_all = "camelCase")]
    ToolCallReady {
        tool_call_id: String,
        tool_name: String,
        input: Value,
    },
    /// The tool's structured output (or error).
    #[serde(rename = "tool.call.result", rename_all = "camelCase")]
    ToolResult {
        tool_call_id: String,
        tool_name: String,
        output: Value,
        is_error: bool,
        /// Made up by the agent (interrupt, failure, declined authorization), not the tool's.
        #[serde(default, skip_serializing_if = "is_false")]
        synthetic: bool,
        /// The call was a half-streamed fragment, dropped from the model's transcript.
        #[serde(default, skip_serializing_if = "is_false")]
        discarded: bool,
        /// The output was over the size limit: `output` is a preview, the whole is stored.
        #[serde(default, skip_serializing_if = "is_false")]
        truncated: bool,
    },
    /// A connection the turn needs is not authorized: the turn settles until the user
    /// connects (through `connectUrl`) or declines.
    #[serde(rename = "authorization.required", rename_all = "camelCase")]
    AuthorizationRequired {
        authorization_id: String,
        connection: String,
        display_name: String,
        description: String,
        connect_url: String,
        tool_call_id: String,
    },
    /// The authorization ended: `granted` (the turn continues) or `declined`.
    #[serde(rename = "authorization.completed", rename_all = "camelCase")]
    AuthorizationCompleted {
        authorization_id: String,
        connection: String,
        outcome: AuthorizationOutcome,
    },
    /// The agent asks the user to choose (answered with `inputResponses`).
    #[serde(rename = "input.requested", rename_all = "camelCase")]
    InputRequested {
        request_id: String,
        prompt: String,
        #[serde(default)]
        options: Vec<String>,
    },
    /// Token counts of one model call.
    #[serde(rename = "usage", rename_all = "camelCase")]
    Usage {
        input_tokens: u64,
        output_tokens: u64,
    },
    /// The turn stopped and the session waits for the next message (`reason`: `interrupted`,
    /// `declined`, `input`).
    #[serde(rename = "session.waiting")]
    SessionWaiting {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// The turn finished normally.
    #[serde(rename = "session.completed", rename_all = "camelCase")]
    SessionCompleted {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        finish_reason: Option<String>,
    },
    /// The turn failed (provider error, agent restart).
    #[serde(rename = "session.failed")]
    SessionFailed {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
}

fn is_false(b: &bool) -> bool {
    !*b
}

impl Event {
    /// The wire `type` string.
    pub fn type_name(&self) -> &'static str {
        match self {
            Event::UserMessage { .. } => "user.message",
            Event::TextDelta { .. } => "assistant.text.delta",
            Event::ReasoningDelta { .. } => "assistant.reasoning.delta",
            Event::ToolCallStarted { .. } => "tool.call.started",
            Event::ToolInputDelta { .. } => "tool.call.input.delta",
            Event::ToolCallReady { .. } => "tool.call.ready",
            Event::ToolResult { .. } => "tool.call.result",
            Event::AuthorizationRequired { .. } => "authorization.required",
            Event::AuthorizationCompleted { .. } => "authorization.completed",
            Event::InputRequested { .. } => "input.requested",
            Event::Usage { .. } => "usage",
            Event::SessionWaiting { .. } => "session.waiting",
            Event::SessionCompleted { .. } => "session.completed",
            Event::SessionFailed { .. } => "session.failed",
        }
    }

    /// Seed `isChatTurnSettledEvent`: after this event the turn needs nothing more from the
    /// agent (it may wait for the user).
    pub fn is_settling(&self) -> bool {
        is_settling_type(self.type_name())
    }

    /// The event as a JSON object (`{"type": ..., ...}`), without index.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("events always serialize")
    }
}

/// Whether an event `type` settles a turn.
pub fn is_settling_type(t: &str) -> bool {
    matches!(
        t,
        "authorization.required" | "session.completed" | "session.failed" | "session.waiting"
    )
}

/// An event with its stream position, as readers receive it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamEvent {
    pub index: u64,
    #[serde(flatten)]
    pub event: Event,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialize_with_their_dotted_type_and_camel_case_fields() {
        let e = Event::ToolResult {
            tool_call_id: "c1".into(),
            tool_name: "get_weather".into(),
            output: serde_json::json!({"ok": true}),
            is_error: false,
            synthetic: false,
            discarded: false,
            truncated: false,
        };
        assert_eq!(
            e.to_json(),
            r#"{"type":"tool.call.result","toolCallId":"c1","toolName":"get_weather","output":{"ok":true},"isError":false}"#
        );
        assert_eq!(e.type_name(), "tool.call.result");
    }

    #[test]
    fn stream_events_carry_their_index_next_to_the_type() {
        let s = StreamEvent {
            index: 7,
            event: Event::TextDelta { delta: "hi".into() },
        };
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(v["index"], 7);
        assert_eq!(v["type"], "assistant.text.delta");
        let back: StreamEvent = serde_json::from_value(v).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn the_four_settling_events_are_exactly_the_seeds() {
        assert!(Event::SessionWaiting { reason: None }.is_settling());
        assert!(Event::SessionCompleted {
            finish_reason: None
        }
        .is_settling());
        assert!(Event::SessionFailed {
            message: "x".into(),
            code: None
        }
        .is_settling());
        assert!(is_settling_type("authorization.required"));
        assert!(!Event::TextDelta { delta: "x".into() }.is_settling());
        assert!(!is_settling_type("authorization.completed"));
    }

    #[test]
    fn every_type_name_matches_its_serialized_type() {
        let all = vec![
            Event::UserMessage { text: "a".into() },
            Event::ReasoningDelta { delta: "a".into() },
            Event::ToolCallStarted {
                tool_call_id: "a".into(),
                tool_name: "b".into(),
            },
            Event::ToolInputDelta {
                tool_call_id: "a".into(),
                delta: "{".into(),
            },
            Event::ToolCallReady {
                tool_call_id: "a".into(),
                tool_name: "b".into(),
                input: Value::Null,
            },
            Event::AuthorizationRequired {
                authorization_id: "a".into(),
                connection: "notion".into(),
                display_name: "Notion".into(),
                description: "d".into(),
                connect_url: "/u".into(),
                tool_call_id: "c".into(),
            },
            Event::AuthorizationCompleted {
                authorization_id: "a".into(),
                connection: "notion".into(),
                outcome: AuthorizationOutcome::Declined,
            },
            Event::InputRequested {
                request_id: "r".into(),
                prompt: "p".into(),
                options: vec![],
            },
            Event::Usage {
                input_tokens: 1,
                output_tokens: 2,
            },
        ];
        for e in all {
            let v: Value = serde_json::from_str(&e.to_json()).unwrap();
            assert_eq!(v["type"], e.type_name());
            let back: Event = serde_json::from_value(v).unwrap();
            assert_eq!(back, e);
        }
    }

    #[test]
    fn a_session_request_takes_a_message_or_input_responses() {
        let r: SessionRequest =
            serde_json::from_str(r#"{"message":"hi","clientContext":"ctx"}"#).unwrap();
        assert_eq!(r.message.as_deref(), Some("hi"));
        let r: SessionRequest =
            serde_json::from_str(r#"{"inputResponses":[{"requestId":"a1","outcome":"declined"}]}"#)
                .unwrap();
        assert_eq!(
            r.input_responses.unwrap()[0].outcome,
            Some(AuthorizationOutcome::Declined)
        );
    }
}
