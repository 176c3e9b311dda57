//! A refused request: its status and eve's error body `{"ok":false,"code"?,"error"}` (or
//! eve's `UploadRefusal` with its violations), with the refusals eve itself answers.

use eve_api::eve::{EveError, UploadRefusal, UploadViolation};

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
    /// 503 with `Retry-After`: the database is out of reach; the client tries again.
    pub fn unavailable() -> Self {
        Refusal {
            retry_after_secs: Some(eve_store::sql::UNAVAILABLE_RETRY_AFTER_SECS),
            ..Refusal::new(
                503,
                Some("not_configured"),
                "The database is not available.",
            )
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
