//! The `/eve/v1` routes and request validation, shared by `eve-proxy` (which refuses bad
//! input before forwarding) and `agent` (which trusts nothing it did not check itself).

use eve_api::eve::{InputResponse, SessionRequest};
use eve_api::{ApiError, ErrorCode};
use eve_store::limits::MAX_MESSAGE_CHARS;

/// The longest `clientContext`.
pub const MAX_CLIENT_CONTEXT_CHARS: usize = 4000;
/// The most input responses in one request.
pub const MAX_INPUT_RESPONSES: usize = 16;
/// Request bodies larger than this are refused (413).
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// The route prefix.
pub const PREFIX: &str = "/eve/v1";

/// A route of the eve session API (paths relative to [`PREFIX`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `POST /session`
    Create,
    /// `POST /session/:id`
    Send(String),
    /// `GET /session/:id/stream`
    Stream(String),
    /// `POST /session/:id/interrupt`
    Interrupt(String),
    /// `GET|POST /session/:id/authorizations/:authorizationId` — the connect page.
    Authorization(String, String),
    /// `GET /connections/callback` — where an OAuth provider sends the browser back.
    ConnectionCallback,
}

impl Route {
    /// Whether this route changes state (same-origin checks apply).
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Route::Create | Route::ConnectionCallback => None,
            Route::Send(id)
            | Route::Stream(id)
            | Route::Interrupt(id)
            | Route::Authorization(id, _) => Some(id),
        }
    }

    /// Whether the route sends a message to the model (the `chat:send` rate limit).
    pub fn sends_message(&self) -> bool {
        matches!(self, Route::Create | Route::Send(_))
    }
}

/// Matches `method` and `path` (with or without the `/eve/v1` prefix; no query).
pub fn route(method: &str, path: &str) -> Result<Route, ApiError> {
    let path = path.strip_prefix(PREFIX).unwrap_or(path);
    // Methods are case-sensitive (RFC 9110): `post` is not POST, as on every other route.
    let m = method;
    let not_found = || ApiError::not_found("no such eve route");
    // One canonical spelling per route, as the chat API has: a trailing slash is tolerated
    // (as on Spin's exact routes), an empty segment (`//session`) is not.
    let path = path.strip_suffix('/').unwrap_or(path);
    let segments: Vec<&str> = path
        .strip_prefix('/')
        .ok_or_else(not_found)?
        .split('/')
        .collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(not_found());
    }
    let id = |s: &str| -> Result<String, ApiError> {
        if is_session_id(s) {
            Ok(s.to_string())
        } else {
            Err(ApiError::not_found("session not found"))
        }
    };
    let (route, allowed): (Route, &[&str]) = match segments.as_slice() {
        ["session"] => (Route::Create, &["POST"]),
        ["connections", "callback"] => (Route::ConnectionCallback, &["GET"]),
        ["session", sid] => (Route::Send(id(sid)?), &["POST"]),
        ["session", sid, "stream"] => (Route::Stream(id(sid)?), &["GET"]),
        ["session", sid, "interrupt"] => (Route::Interrupt(id(sid)?), &["POST"]),
        ["session", sid, "authorizations", aid] if is_token(aid, 128) => (
            Route::Authorization(id(sid)?, aid.to_string()),
            &["GET", "POST"],
        ),
        _ => return Err(not_found()),
    };
    if allowed.contains(&m) {
        Ok(route)
    } else {
        Err(ApiError::method_not_allowed())
    }
}

/// Session ids are `ses_` + base64url.
pub fn is_session_id(s: &str) -> bool {
    s.starts_with("ses_") && is_token(s, 80)
}

fn is_token(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A new session id from random bytes (base64url text).
pub fn new_session_id(random: &str) -> String {
    let token: String = random
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .take(32)
        .collect();
    format!("ses_{token}")
}

/// A validated session request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Validated {
    Message {
        text: String,
        client_context: Option<String>,
    },
    InputResponses(Vec<InputResponse>),
}

/// Parses and validates a session request body: a message (1–8000 characters after
/// trimming) or, for an existing session, input responses — never both.
pub fn validate(body: &[u8], new_session: bool) -> Result<Validated, ApiError> {
    if body.len() > MAX_BODY_BYTES {
        return Err(ApiError::new(
            ErrorCode::PayloadTooLarge,
            "request body too large",
        ));
    }
    // serde reads a JSON array as a struct's fields in order (`["hi"]` as a message):
    // only an object is a request.
    // (And serde_json skips the strings of unknown fields without checking their UTF-8.)
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{')
        || std::str::from_utf8(body).is_err()
    {
        return Err(ApiError::new(
            ErrorCode::InvalidJson,
            "invalid JSON body: expected a JSON object",
        ));
    }
    let req: SessionRequest = serde_json::from_slice(body)
        .map_err(|e| ApiError::new(ErrorCode::InvalidJson, format!("invalid JSON body: {e}")))?;
    match (req.message, req.input_responses) {
        (Some(_), Some(_)) => Err(ApiError::bad_request(
            "send either message or inputResponses, not both",
        )),
        (Some(message), None) => {
            let text = message.trim().to_string();
            if text.is_empty() {
                return Err(ApiError::bad_request("message must not be empty"));
            }
            if text.chars().count() > MAX_MESSAGE_CHARS {
                return Err(ApiError::bad_request(format!(
                    "message is too long (at most {MAX_MESSAGE_CHARS} characters)"
                )));
            }
            let client_context = req
                .client_context
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty());
            if client_context
                .as_ref()
                .is_some_and(|c| c.chars().count() > MAX_CLIENT_CONTEXT_CHARS)
            {
                return Err(ApiError::bad_request(format!(
                    "clientContext is too long (at most {MAX_CLIENT_CONTEXT_CHARS} characters)"
                )));
            }
            Ok(Validated::Message {
                text,
                client_context,
            })
        }
        (None, Some(responses)) => {
            if new_session {
                return Err(ApiError::bad_request("a new session starts with a message"));
            }
            if responses.is_empty() || responses.len() > MAX_INPUT_RESPONSES {
                return Err(ApiError::bad_request(format!(
                    "inputResponses must have 1 to {MAX_INPUT_RESPONSES} entries"
                )));
            }
            for r in &responses {
                if !is_token(&r.request_id, 128) {
                    return Err(ApiError::bad_request(
                        "inputResponses[].requestId is invalid",
                    ));
                }
                if r.outcome.is_none() && r.value.is_none() {
                    return Err(ApiError::bad_request(
                        "inputResponses[] needs an outcome or a value",
                    ));
                }
                if r.value
                    .as_ref()
                    .is_some_and(|v| v.chars().count() > MAX_MESSAGE_CHARS)
                {
                    return Err(ApiError::bad_request("inputResponses[].value is too long"));
                }
            }
            Ok(Validated::InputResponses(responses))
        }
        (None, None) => Err(ApiError::bad_request("send a message (or inputResponses)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SID: &str = "ses_abcDEF123_-";

    #[test]
    fn routes_match_the_fixed_paths_and_methods() {
        assert_eq!(route("POST", "/eve/v1/session"), Ok(Route::Create));
        assert_eq!(
            route("POST", &format!("/eve/v1/session/{SID}")),
            Ok(Route::Send(SID.into()))
        );
        assert_eq!(
            route("GET", &format!("/session/{SID}/stream")),
            Ok(Route::Stream(SID.into()))
        );
        assert_eq!(
            route("POST", &format!("/eve/v1/session/{SID}/interrupt")),
            Ok(Route::Interrupt(SID.into()))
        );
        assert_eq!(
            route(
                "GET",
                &format!("/eve/v1/session/{SID}/authorizations/auth_x")
            ),
            Ok(Route::Authorization(SID.into(), "auth_x".into()))
        );
        assert_eq!(
            route("GET", "/eve/v1/connections/callback"),
            Ok(Route::ConnectionCallback)
        );
        assert_eq!(route("GET", "/eve/v1/session").unwrap_err().status(), 405);
        assert_eq!(route("POST", "/eve/v1/nope").unwrap_err().status(), 404);
        assert_eq!(
            route("GET", "/eve/v1/session/../x/stream")
                .unwrap_err()
                .status(),
            404
        );
        assert_eq!(
            route("POST", "/eve/v1/session/not-a-session")
                .unwrap_err()
                .status(),
            404
        );
    }

    #[test]
    fn a_message_is_trimmed_and_limited_to_8000_characters() {
        assert_eq!(
            validate(br#"{"message":"  hi  ","clientContext":" c "}"#, true),
            Ok(Validated::Message {
                text: "hi".into(),
                client_context: Some("c".into())
            })
        );
        let long = format!(r#"{{"message":"{}"}}"#, "é".repeat(MAX_MESSAGE_CHARS + 1));
        assert_eq!(validate(long.as_bytes(), true).unwrap_err().status(), 400);
        let ok = format!(r#"{{"message":"{}"}}"#, "é".repeat(MAX_MESSAGE_CHARS));
        assert!(validate(ok.as_bytes(), true).is_ok());
        assert_eq!(
            validate(br#"{"message":"   "}"#, true)
                .unwrap_err()
                .status(),
            400
        );
    }

    #[test]
    fn bad_bodies_answer_clear_4xx_errors() {
        assert_eq!(
            validate(b"{", true).unwrap_err().code,
            ErrorCode::InvalidJson
        );
        assert_eq!(validate(b"{}", true).unwrap_err().status(), 400);
        assert_eq!(
            validate(br#"{"message":5}"#, true).unwrap_err().code,
            ErrorCode::InvalidJson
        );
        assert_eq!(
            validate(
                br#"{"inputResponses":[{"requestId":"a","outcome":"declined"}]}"#,
                true
            )
            .unwrap_err()
            .status(),
            400
        );
        assert!(validate(
            br#"{"inputResponses":[{"requestId":"a","outcome":"declined"}]}"#,
            false
        )
        .is_ok());
        assert_eq!(
            validate(br#"{"inputResponses":[]}"#, false)
                .unwrap_err()
                .status(),
            400
        );
        assert_eq!(
            validate(br#"{"message":"a","inputResponses":[]}"#, false)
                .unwrap_err()
                .status(),
            400
        );
        assert_eq!(
            validate(&vec![b' '; MAX_BODY_BYTES + 1], true)
                .unwrap_err()
                .status(),
            413
        );
    }

    #[test]
    fn a_route_has_one_spelling_empty_segments_are_not_found() {
        assert_eq!(route("POST", "/eve/v1/session/"), Ok(Route::Create));
        for path in [
            "/eve/v1//session",
            "/eve/v1/session//",
            "//eve/v1/session",
            &format!("/eve/v1/session//{SID}/stream"),
            &format!("/eve/v1/session/{SID}//stream"),
            "/eve/v1",
            "/eve/v1/",
        ] {
            assert_eq!(route("POST", path).unwrap_err().status(), 404, "{path}");
        }
    }

    #[test]
    fn methods_are_case_sensitive() {
        assert_eq!(route("post", "/eve/v1/session").unwrap_err().status(), 405);
        assert_eq!(
            route("Get", &format!("/eve/v1/session/{SID}/stream"))
                .unwrap_err()
                .status(),
            405
        );
    }

    #[test]
    fn a_body_that_is_not_utf_8_is_invalid_json() {
        assert_eq!(
            validate(b"{\"message\":\"hi\",\"x\":\"\xff\"}", true)
                .unwrap_err()
                .code,
            ErrorCode::InvalidJson
        );
    }

    #[test]
    fn a_json_array_is_not_a_session_request() {
        for body in [
            &b"[\"hi\"]"[..],
            b"[]",
            b"[\"hi\", \"ctx\"]",
            b"null",
            b"\"hi\"",
        ] {
            assert_eq!(
                validate(body, true).unwrap_err().code,
                ErrorCode::InvalidJson,
                "{body:?}"
            );
        }
    }

    #[test]
    fn new_session_ids_are_valid_session_ids() {
        let id = new_session_id("AbC-_9xyz/+=");
        assert!(is_session_id(&id), "{id}");
    }
}
