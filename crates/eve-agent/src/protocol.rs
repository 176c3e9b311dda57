//! eve v1's routes and request bodies, validated as the reference agent validates them (the
//! same statuses and error texts), and eve's error body `{"ok":false,"code"?,"error"}`.
//! `eve-proxy` runs the same checks before it forwards anything.

use eve_api::eve::{
    EveError, InputResponse, MessagePart, TurnPolicy, UploadRefusal, UploadViolation,
};
use serde_json::Value;

use crate::ids;

/// The route prefix.
pub const PREFIX: &str = "/eve/v1";
/// The longest message, in characters (the seed's limit; eve sets none).
pub const MAX_MESSAGE_CHARS: usize = 8000;
/// The longest `clientContext`, in characters.
pub const MAX_CLIENT_CONTEXT_CHARS: usize = 4000;
/// Most `inputResponses` in one request.
pub const MAX_INPUT_RESPONSES: usize = 16;
/// Most parts in one message.
pub const MAX_PARTS: usize = 16;
/// The largest request body; a message route's may be larger by its files
/// ([`crate::attachments::UploadPolicy::message_body_cap`]).
pub const MAX_BODY_BYTES: usize = 256 * 1024;
/// The largest body any configuration lets a message route take.
pub const MAX_MESSAGE_BODY_BYTES: usize =
    MAX_BODY_BYTES + (crate::attachments::MAX_MAX_BYTES as usize).div_ceil(3) * 4;

/// A route of eve's HTTP API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `GET|HEAD /health`
    Health,
    /// `GET /info`
    Info,
    /// `POST /session`
    Create,
    /// `POST /session/:id`
    Send(String),
    /// `GET /session/:id/stream`
    Stream(String),
    /// `POST /session/:id/cancel`
    Cancel(String),
    /// `POST /session/:id/clear`
    Clear(String),
    /// `POST /session/:id/compact`
    Compact(String),
    /// `POST /session/:id/reset`
    Reset(String),
    /// `GET /session/:id/authorizations/:attemptId` — our connect page (not eve's): it starts
    /// the sign-in at the connection's MCP server.
    Authorization(String, String),
    /// `GET /connections/callback` — where an OAuth provider sends the browser back (ours).
    ConnectionCallback,
    /// `GET /connections` — the configured MCP connections and whether the caller is signed
    /// in to each (ours, for the connection menu).
    Connections,
    /// `POST /connections/:name/revoke` — signs the caller out of a connection (ours).
    RevokeConnection(String),
    /// `GET /attachments/:id` — the bytes of one of the caller's attachments (ours).
    Attachment(String),
}

impl Route {
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Route::Send(id)
            | Route::Stream(id)
            | Route::Cancel(id)
            | Route::Clear(id)
            | Route::Compact(id)
            | Route::Reset(id)
            | Route::Authorization(id, _) => Some(id),
            _ => None,
        }
    }

    /// Whether the route carries a session request body (`message` / `inputResponses`).
    pub fn takes_session_request(&self) -> bool {
        matches!(self, Route::Create | Route::Send(_))
    }
}

/// A refused request: its status and eve's error body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub code: Option<String>,
    pub message: String,
    pub retry_after_secs: Option<u64>,
    /// An upload-policy refusal's violations: its body is then eve's `UploadRefusal`.
    pub violations: Vec<UploadViolation>,
}

impl Refusal {
    pub fn new(status: u16, code: Option<&str>, message: impl Into<String>) -> Self {
        Refusal {
            status,
            code: code.map(str::to_string),
            message: message.into(),
            retry_after_secs: None,
            violations: Vec::new(),
        }
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Refusal::new(400, None, message)
    }
    /// eve's answer to an unknown or inactive session on a send.
    pub fn session_not_active() -> Self {
        Refusal::new(
            409,
            Some("session_not_active"),
            "The session is no longer active.",
        )
    }
    /// eve's answer to a stream of an unknown session.
    pub fn session_not_found() -> Self {
        Refusal::new(404, None, "Session not found.")
    }
    pub fn no_route(method: &str, path: &str) -> Self {
        Refusal::new(
            404,
            None,
            format!("Cannot find any route matching [{method}] {path}"),
        )
    }
    pub fn unauthorized() -> Self {
        Refusal::new(401, Some("unauthorized"), "Sign in first.")
    }
    pub fn too_large() -> Self {
        Refusal::new(
            413,
            Some("payload_too_large"),
            "The request body is too large.",
        )
    }
    /// A principal at or past `principal_max_bytes` starts no new turn (a running one finishes).
    pub fn storage_full() -> Self {
        Refusal::new(
            413,
            Some("storage_full"),
            "Your storage is full: delete chats to free space.",
        )
    }
    pub fn unavailable() -> Self {
        Refusal::new(
            503,
            Some("not_configured"),
            "The database is not available.",
        )
    }
    /// From the app's error envelope (auth, rate limits): same status, its code.
    pub fn from_api(e: &eve_api::ApiError) -> Self {
        let code = serde_json::to_value(e.code)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string));
        Refusal {
            status: e.status(),
            code,
            message: e.message.clone(),
            retry_after_secs: e.retry_after_secs,
            violations: Vec::new(),
        }
    }
    pub fn to_json(&self) -> String {
        if !self.violations.is_empty() {
            return serde_json::to_string(&UploadRefusal {
                error: self.message.clone(),
                ok: false,
                violations: self.violations.clone(),
            })
            .expect("errors serialize");
        }
        serde_json::to_string(&EveError {
            ok: false,
            code: self.code.clone(),
            error: self.message.clone(),
        })
        .expect("errors serialize")
    }
}

/// Matches `method` and `path` (with or without the `/eve/v1` prefix; no query). A wrong
/// method is a 404 as in eve (its router has no 405).
pub fn route(method: &str, path: &str) -> Result<Route, Refusal> {
    let full = path;
    let path = path.strip_prefix(PREFIX).unwrap_or(path);
    let path = path
        .strip_suffix('/')
        .filter(|p| !p.is_empty())
        .unwrap_or(path);
    let no_route = || Refusal::no_route(method, full);
    let segments: Vec<&str> = path
        .strip_prefix('/')
        .ok_or_else(no_route)?
        .split('/')
        .collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(no_route());
    }
    let sid = |s: &str| s.to_string();
    let (route, allowed): (Route, &[&str]) = match segments.as_slice() {
        ["health"] => (Route::Health, &["GET", "HEAD"]),
        ["info"] => (Route::Info, &["GET"]),
        ["session"] => (Route::Create, &["POST"]),
        ["connections", "callback"] => (Route::ConnectionCallback, &["GET"]),
        ["connections"] => (Route::Connections, &["GET"]),
        ["connections", name, "revoke"] if is_token(name, 32) => {
            (Route::RevokeConnection(name.to_string()), &["POST"])
        }
        ["session", id] => (Route::Send(sid(id)), &["POST"]),
        ["session", id, "stream"] => (Route::Stream(sid(id)), &["GET"]),
        ["session", id, "cancel"] => (Route::Cancel(sid(id)), &["POST"]),
        ["session", id, "clear"] => (Route::Clear(sid(id)), &["POST"]),
        ["session", id, "compact"] => (Route::Compact(sid(id)), &["POST"]),
        ["session", id, "reset"] => (Route::Reset(sid(id)), &["POST"]),
        ["attachments", id] if crate::attachments::is_attachment_id(id) => {
            (Route::Attachment(id.to_string()), &["GET"])
        }
        ["session", id, "authorizations", aid] if is_token(aid, 128) => {
            (Route::Authorization(sid(id), aid.to_string()), &["GET"])
        }
        _ => return Err(no_route()),
    };
    if allowed.contains(&method) {
        Ok(route)
    } else {
        Err(no_route())
    }
}

/// Whether `id` can name one of our sessions (anything else is unknown without a lookup).
pub fn is_session_id(id: &str) -> bool {
    ids::is_session_id(id)
}

fn is_token(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

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

/// The longest `model` id accepted.
pub const MAX_MODEL_ID_CHARS: usize = 200;

fn invalid_json() -> Refusal {
    Refusal::bad_request("Invalid JSON body.")
}

/// Parses a JSON object body as eve does: an empty body is `{}` on create and invalid on a
/// send; anything but an object is refused.
fn object(body: &[u8], empty_ok: bool) -> Result<serde_json::Map<String, Value>, Refusal> {
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
    let turn_policy = match m.get("turnPolicy").filter(|v| !v.is_null()) {
        None => TurnPolicy::Steer,
        Some(Value::String(s)) if s == "steer" => TurnPolicy::Steer,
        Some(Value::String(s)) if s == "queue" => TurnPolicy::Queue,
        Some(_) => {
            return Err(Refusal::bad_request(
                "Expected 'turnPolicy' to be either 'queue' or 'steer'.",
            ))
        }
    };
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
    let model = match m.get("model").filter(|v| !v.is_null()) {
        None => None,
        Some(Value::String(s))
            if !s.trim().is_empty() && s.chars().count() <= MAX_MODEL_ID_CHARS =>
        {
            Some(s.trim().to_string())
        }
        Some(_) => {
            return Err(Refusal::bad_request(format!(
                "Expected 'model' to be a model id of at most {MAX_MODEL_ID_CHARS} characters."
            )))
        }
    };
    let Some(message) = message else {
        if new_session {
            return Ok(SessionRequest::Empty);
        }
        return Err(Refusal::bad_request(
            "Expected a non-empty 'message' or a non-empty 'inputResponses' array.",
        ));
    };
    let parts = match message {
        Value::String(s) => vec![MessagePart::Text { text: s.clone() }],
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
            parts
        }
        _ => {
            return Err(Refusal::bad_request(
                "Expected 'message' to be a string or an array of text/file parts.",
            ))
        }
    };
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
    Ok(SessionRequest::Message(Message {
        text,
        parts,
        client_context,
        turn_policy,
        model,
    }))
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
    fn routes_are_eves_and_a_wrong_method_is_not_found() {
        assert_eq!(route("GET", "/eve/v1/health"), Ok(Route::Health));
        assert_eq!(route("HEAD", "/eve/v1/health"), Ok(Route::Health));
        assert_eq!(route("POST", "/eve/v1/session"), Ok(Route::Create));
        assert_eq!(
            route("POST", "/eve/v1/session/x/cancel"),
            Ok(Route::Cancel("x".into()))
        );
        assert_eq!(
            route("POST", "/eve/v1/session/x/reset"),
            Ok(Route::Reset("x".into()))
        );
        assert_eq!(
            route("GET", "/eve/v1/session/x/stream"),
            Ok(Route::Stream("x".into()))
        );
        let e = route("GET", "/eve/v1/session").unwrap_err();
        assert_eq!(e.status, 404);
        assert_eq!(
            e.message,
            "Cannot find any route matching [GET] /eve/v1/session"
        );
        assert_eq!(route("POST", "/eve/v1/nope").unwrap_err().status, 404);
        assert_eq!(route("GET", "/eve/v1/connections"), Ok(Route::Connections));
        assert_eq!(
            route("POST", "/eve/v1/connections/notes/revoke"),
            Ok(Route::RevokeConnection("notes".into()))
        );
        assert_eq!(
            route("GET", "/eve/v1/connections/notes/revoke")
                .unwrap_err()
                .status,
            404
        );
        assert_eq!(route("post", "/eve/v1/session").unwrap_err().status, 404);
        assert_eq!(route("POST", "/eve/v1//session").unwrap_err().status, 404);
    }

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

    #[test]
    fn refusals_are_eves_error_body() {
        assert_eq!(
            Refusal::session_not_active().to_json(),
            r#"{"ok":false,"code":"session_not_active","error":"The session is no longer active."}"#
        );
        assert_eq!(
            Refusal::session_not_found().to_json(),
            r#"{"ok":false,"error":"Session not found."}"#
        );
        let full = Refusal::storage_full();
        assert_eq!(full.status, 413);
        assert_eq!(
            full.to_json(),
            r#"{"ok":false,"code":"storage_full","error":"Your storage is full: delete chats to free space."}"#
        );
    }
}
