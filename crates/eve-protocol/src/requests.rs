//! eve v1's request bodies and the stream query, validated as the reference agent validates
//! them: the same statuses and error texts. `eve-proxy` runs the same checks before it
//! forwards anything.

use eve_api::eve::{InputResponse, MessagePart, TurnPolicy};
use serde_json::Value;

use crate::ids::is_token;
use crate::limits::*;
use crate::refusal::Refusal;

/// A validated `POST /session` or `POST /session/:id` body.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionRequest {
    /// Create without a message: a parked session that waits for its first one.
    Empty,
    Message(Message),
    InputResponses(Vec<InputResponse>),
}

/// A message with what comes along with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// The flattened text (text parts joined by newlines).
    pub text: String,
    pub parts: Vec<MessagePart>,
    pub client_context: Option<String>,
    pub turn_policy: TurnPolicy,
    /// eve-chat's extension: the model this message's turn runs on (an id `/eve/v1/info` lists
    /// under `agent.model.providerOptions.models`); unset, the session's earlier one.
    pub model: Option<String>,
}

fn invalid_json() -> Refusal {
    Refusal::bad_request("Invalid JSON body.")
}

/// Parses a JSON object body as eve does: an empty body is `{}` on create and invalid on a
/// send; anything but an object is refused.
fn object(body: &[u8], empty_ok: bool) -> Result<Body, Refusal> {
    if body.len() > MAX_MESSAGE_BODY_BYTES {
        return Err(Refusal::too_large());
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return if empty_ok {
            Ok(Default::default())
        } else {
            Err(invalid_json())
        };
    }
    let v: Value = serde_json::from_slice(body).map_err(|_| invalid_json())?;
    match v {
        Value::Object(m) => Ok(m),
        _ => Err(Refusal::bad_request("Expected a JSON object.")),
    }
}

/// Validates a session request (`new_session`: `POST /session`).
pub fn session_request(body: &[u8], new_session: bool) -> Result<SessionRequest, Refusal> {
    let m = object(body, new_session)?;
    let message = m.get("message").filter(|v| !v.is_null());
    let responses = m.get("inputResponses").filter(|v| !v.is_null());
    if message.is_some() && responses.is_some() {
        return Err(Refusal::bad_request(
            "'message' and 'inputResponses' are mutually exclusive.",
        ));
    }
    if !new_session && m.contains_key("continuationToken") {
        return Err(Refusal::bad_request(
            "Session-ID routes do not accept 'continuationToken'.",
        ));
    }
    if let Some(r) = responses {
        if new_session {
            return Err(Refusal::bad_request(
                "'inputResponses' is only accepted for an existing session.",
            ));
        }
        return input_responses(r).map(SessionRequest::InputResponses);
    }
    let turn_policy = turn_policy(&m)?;
    let client_context = client_context(&m)?;
    let model = model_id(&m)?;
    let Some(message) = message else {
        if new_session {
            return Ok(SessionRequest::Empty);
        }
        return Err(Refusal::bad_request(
            "Expected a non-empty 'message' or a non-empty 'inputResponses' array.",
        ));
    };
    let parts = message_parts(message)?;
    let text = message_text(&parts, new_session)?;
    Ok(SessionRequest::Message(Message {
        text,
        parts,
        client_context,
        turn_policy,
        model,
    }))
}

type Body = serde_json::Map<String, Value>;

/// eve-chat's extension of `POST /session`: `chatId`, the caller's chat the new session
/// belongs to (docs/projects.md), so that its first turn already knows the chat's project.
/// Anything but a chat id's shape is ignored, as is a chat that is not the caller's.
pub fn chat_id(body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let id = v.get("chatId")?.as_str()?;
    eve_store::ids::is_valid_chat_id(id).then(|| id.to_string())
}

/// `turnPolicy`: `steer` (the default) or `queue`.
fn turn_policy(m: &Body) -> Result<TurnPolicy, Refusal> {
    match m.get("turnPolicy").filter(|v| !v.is_null()) {
        None => Ok(TurnPolicy::Steer),
        Some(Value::String(s)) if s == "steer" => Ok(TurnPolicy::Steer),
        Some(Value::String(s)) if s == "queue" => Ok(TurnPolicy::Queue),
        Some(_) => Err(Refusal::bad_request(
            "Expected 'turnPolicy' to be either 'queue' or 'steer'.",
        )),
    }
}

/// `clientContext`: text (trimmed; empty is none) or any JSON value as its text, at most
/// [`MAX_CLIENT_CONTEXT_CHARS`].
fn client_context(m: &Body) -> Result<Option<String>, Refusal> {
    let client_context = match m.get("clientContext").filter(|v| !v.is_null()) {
        None => None,
        Some(Value::String(s)) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
        // eve's clientContext is any JSON value: it reaches the model as text.
        Some(other) => Some(other.to_string()),
    };
    if client_context
        .as_ref()
        .is_some_and(|c| c.chars().count() > MAX_CLIENT_CONTEXT_CHARS)
    {
        return Err(Refusal::bad_request(format!(
            "Expected 'clientContext' to be at most {MAX_CLIENT_CONTEXT_CHARS} characters."
        )));
    }
    Ok(client_context)
}

/// eve-chat's `model`: a non-empty id of at most [`MAX_MODEL_ID_CHARS`] (trimmed).
fn model_id(m: &Body) -> Result<Option<String>, Refusal> {
    match m.get("model").filter(|v| !v.is_null()) {
        None => Ok(None),
        Some(Value::String(s))
            if !s.trim().is_empty() && s.chars().count() <= MAX_MODEL_ID_CHARS =>
        {
            Ok(Some(s.trim().to_string()))
        }
        Some(_) => Err(Refusal::bad_request(format!(
            "Expected 'model' to be a model id of at most {MAX_MODEL_ID_CHARS} characters."
        ))),
    }
}

/// `message`: a string, or an array of at most [`MAX_PARTS`] text / file parts.
fn message_parts(message: &Value) -> Result<Vec<MessagePart>, Refusal> {
    match message {
        Value::String(s) => Ok(vec![MessagePart::Text { text: s.clone() }]),
        Value::Array(items) => {
            let mut parts = Vec::new();
            for item in items {
                let t = item.get("type").and_then(Value::as_str).unwrap_or("");
                if t != "text" && t != "file" {
                    return Err(Refusal::bad_request(format!(
                        "Unsupported message part type \"{t}\". Use 'text' or 'file'."
                    )));
                }
                let part: MessagePart = serde_json::from_value(item.clone())
                    .map_err(|_| Refusal::bad_request(format!("Invalid '{t}' message part.")))?;
                parts.push(part);
            }
            if parts.len() > MAX_PARTS {
                return Err(Refusal::bad_request(format!(
                    "Expected at most {MAX_PARTS} message parts."
                )));
            }
            Ok(parts)
        }
        _ => Err(Refusal::bad_request(
            "Expected 'message' to be a string or an array of text/file parts.",
        )),
    }
}

/// The message's text (its text parts joined by newlines): non-empty unless a file comes
/// along, at most [`MAX_MESSAGE_CHARS`].
fn message_text(parts: &[MessagePart], new_session: bool) -> Result<String, Refusal> {
    let text = parts
        .iter()
        .filter_map(|p| match p {
            MessagePart::Text { text } => Some(text.as_str()),
            MessagePart::File { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let has_file = parts.iter().any(|p| matches!(p, MessagePart::File { .. }));
    if text.trim().is_empty() && !has_file {
        return Err(Refusal::bad_request(if new_session {
            "Expected 'message' to be non-empty when provided."
        } else {
            "Expected a non-empty 'message' or a non-empty 'inputResponses' array."
        }));
    }
    if text.chars().count() > MAX_MESSAGE_CHARS {
        return Err(Refusal::bad_request(format!(
            "Expected 'message' to be at most {MAX_MESSAGE_CHARS} characters."
        )));
    }
    Ok(text)
}

fn input_responses(v: &Value) -> Result<Vec<InputResponse>, Refusal> {
    let bad = || Refusal::bad_request("Expected 'inputResponses' to be a non-empty array.");
    let items = v.as_array().filter(|a| !a.is_empty()).ok_or_else(bad)?;
    if items.len() > MAX_INPUT_RESPONSES {
        return Err(Refusal::bad_request(format!(
            "Expected at most {MAX_INPUT_RESPONSES} 'inputResponses'."
        )));
    }
    items
        .iter()
        .map(|item| {
            let r: InputResponse = serde_json::from_value(item.clone()).map_err(|_| {
                Refusal::bad_request(
                    "Expected each input response to have a 'requestId' and an 'optionId' or 'text'.",
                )
            })?;
            let text_ok = r.text.as_ref().is_none_or(|t| t.chars().count() <= MAX_MESSAGE_CHARS);
            if !is_token(&r.request_id, 128)
                || (r.option_id.is_none() && r.text.is_none())
                || !text_ok
            {
                return Err(Refusal::bad_request(
                    "Expected each input response to have a 'requestId' and an 'optionId' or 'text'.",
                ));
            }
            Ok(r)
        })
        .collect()
}

/// The optional `turnId` of a cancel.
pub fn cancel_request(body: &[u8]) -> Result<Option<String>, Refusal> {
    let m = object(body, true)?;
    match m.get("turnId") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        Some(_) => Err(Refusal::bad_request(
            "Expected 'turnId' to be a non-empty string.",
        )),
    }
}

/// The optional `reason` of a reset.
pub fn reset_request(body: &[u8]) -> Result<Option<String>, Refusal> {
    let m = object(body, true)?;
    match m.get("reason") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
        Some(_) => Err(Refusal::bad_request(
            "Expected 'reason' to be a non-empty string.",
        )),
    }
}

/// A body-less control (clear, compact): any JSON object or nothing.
pub fn control_request(body: &[u8]) -> Result<(), Refusal> {
    object(body, true).map(|_| ())
}

/// The query of `GET …/stream`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamQuery {
    /// Absolute (`>= 0`) or from the tail (`< 0`).
    pub start_index: i64,
    pub follow: bool,
    pub include_tail_index: bool,
    /// `streamControlVersion=1`: bare-newline keep-alives and a lease-ended control line.
    pub stream_control: bool,
}

/// Parses the stream query (`Last-Event-ID`, SSE's resume header, wins over `startIndex`).
pub fn stream_query(query: &str, last_event_id: Option<&str>) -> Result<StreamQuery, Refusal> {
    let param = |name: &str| crate::framing::query_param(query, name);
    let start_index = match (
        last_event_id.map(str::trim).filter(|s| !s.is_empty()),
        param("startIndex"),
    ) {
        (Some(id), _) => id
            .parse::<u64>()
            .map(|i| i as i64 + 1)
            .map_err(|_| Refusal::bad_request("Expected Last-Event-ID to be an event index."))?,
        (None, None) => 0,
        (None, Some(s)) => s
            .parse::<i64>()
            .map_err(|_| Refusal::bad_request("Expected startIndex to be an integer."))?,
    };
    let flag = |name: &str| matches!(param(name), Some("1" | "true"));
    let follow = !matches!(param("follow"), Some("0" | "false"));
    Ok(StreamQuery {
        start_index,
        follow,
        include_tail_index: flag("includeTailIndex") || !follow,
        stream_control: param("streamControlVersion") == Some("1"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_bodies_are_refused_with_eves_texts() {
        let msg = |b: &str, new| session_request(b.as_bytes(), new).unwrap_err().message;
        assert_eq!(msg("{bad json", true), "Invalid JSON body.");
        assert_eq!(msg("", false), "Invalid JSON body.");
        assert_eq!(msg("[1,2]", false), "Expected a JSON object.");
        assert_eq!(
            msg(r#"{"message":""}"#, false),
            "Expected a non-empty 'message' or a non-empty 'inputResponses' array."
        );
        assert_eq!(
            msg("{}", false),
            "Expected a non-empty 'message' or a non-empty 'inputResponses' array."
        );
        assert_eq!(
            msg(r#"{"message":42}"#, false),
            "Expected 'message' to be a string or an array of text/file parts."
        );
        assert_eq!(
            msg(
                r#"{"message":"hi","inputResponses":[{"requestId":"a","optionId":"b"}]}"#,
                false
            ),
            "'message' and 'inputResponses' are mutually exclusive."
        );
        assert_eq!(
            msg(
                r#"{"inputResponses":[{"requestId":"a","optionId":"b"}]}"#,
                true
            ),
            "'inputResponses' is only accepted for an existing session."
        );
        assert_eq!(
            msg(r#"{"inputResponses":[]}"#, false),
            "Expected 'inputResponses' to be a non-empty array."
        );
        assert_eq!(
            msg(r#"{"message":"hi","turnPolicy":"bogus"}"#, false),
            "Expected 'turnPolicy' to be either 'queue' or 'steer'."
        );
        assert_eq!(
            msg(r#"{"message":[{"type":"image"}]}"#, true),
            "Unsupported message part type \"image\". Use 'text' or 'file'."
        );
    }

    #[test]
    fn a_create_may_have_no_message_and_messages_may_be_parts() {
        assert_eq!(session_request(b"", true), Ok(SessionRequest::Empty));
        assert_eq!(session_request(b"{}", true), Ok(SessionRequest::Empty));
        let Ok(SessionRequest::Message(m)) = session_request(
            br#"{"message":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"turnPolicy":"queue","clientContext":{"page":"x"}}"#,
            false,
        ) else {
            panic!()
        };
        assert_eq!(m.text, "a\nb");
        assert_eq!(m.turn_policy, TurnPolicy::Queue);
        assert_eq!(m.client_context.as_deref(), Some(r#"{"page":"x"}"#));
    }

    #[test]
    fn input_responses_need_a_request_id_and_an_option_or_text() {
        let Ok(SessionRequest::InputResponses(r)) = session_request(
            br#"{"inputResponses":[{"requestId":"req_1","text":"blue"}]}"#,
            false,
        ) else {
            panic!()
        };
        assert_eq!(r[0].text.as_deref(), Some("blue"));
        assert!(session_request(br#"{"inputResponses":[{"requestId":"req_1"}]}"#, false).is_err());
        assert!(session_request(
            br#"{"inputResponses":[{"requestId":"r","text":"x","extra":1}]}"#,
            false
        )
        .is_err());
    }

    #[test]
    fn controls_take_eves_optional_fields() {
        assert_eq!(cancel_request(b""), Ok(None));
        assert_eq!(
            cancel_request(br#"{"turnId":"turn_3"}"#),
            Ok(Some("turn_3".into()))
        );
        assert_eq!(
            cancel_request(br#"{"turnId":""}"#).unwrap_err().message,
            "Expected 'turnId' to be a non-empty string."
        );
        assert_eq!(
            reset_request(br#"{"reason":""}"#).unwrap_err().message,
            "Expected 'reason' to be a non-empty string."
        );
        assert_eq!(
            control_request(b"{bad").unwrap_err().message,
            "Invalid JSON body."
        );
    }

    #[test]
    fn stream_queries_take_negative_cursors_and_follow_false_implies_the_tail_index() {
        let q = stream_query("startIndex=-2&follow=false", None).unwrap();
        assert_eq!(
            (q.start_index, q.follow, q.include_tail_index),
            (-2, false, true)
        );
        let q = stream_query("startIndex=3&streamControlVersion=1", None).unwrap();
        assert_eq!(
            (
                q.start_index,
                q.follow,
                q.include_tail_index,
                q.stream_control
            ),
            (3, true, false, true)
        );
        assert_eq!(
            stream_query("startIndex=x", None).unwrap_err().message,
            "Expected startIndex to be an integer."
        );
        assert_eq!(
            stream_query("startIndex=1", Some("9")).unwrap().start_index,
            10
        );
    }
}
