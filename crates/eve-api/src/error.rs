//! The JSON error envelope every route answers with on failure.

use serde::{Deserialize, Serialize};

/// Machine-readable error codes. The HTTP status is derived from the code, so a code always
/// means the same status everywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    BadRequest,
    InvalidJson,
    Unauthorized,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    Conflict,
    PayloadTooLarge,
    UnsupportedMediaType,
    RateLimited,
    /// A principal at or past its daily model tokens (`quota_tokens_per_day` or its override).
    QuotaExceeded,
    /// A member asked for a model outside the deployment's `member_models`.
    ModelNotAllowed,
    NotConfigured,
    Upstream,
    Internal,
    /// Accounts mode: one answer for an unknown email, a wrong password and a disabled account.
    InvalidCredentials,
    /// Accounts mode: sign-up without an invite, setup token or allowed email domain.
    SignupClosed,
    /// Accounts mode: an invitation (or reset link) that is unknown, used or expired.
    InviteInvalid,
    /// Accounts mode: the change would leave no enabled admin.
    LastAdmin,
}

impl ErrorCode {
    pub fn status(self) -> u16 {
        match self {
            ErrorCode::BadRequest | ErrorCode::InvalidJson => 400,
            ErrorCode::Unauthorized => 401,
            ErrorCode::Forbidden | ErrorCode::ModelNotAllowed => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::MethodNotAllowed => 405,
            ErrorCode::Conflict => 409,
            ErrorCode::PayloadTooLarge => 413,
            ErrorCode::UnsupportedMediaType => 415,
            ErrorCode::RateLimited | ErrorCode::QuotaExceeded => 429,
            ErrorCode::NotConfigured => 503,
            ErrorCode::Upstream => 502,
            ErrorCode::Internal => 500,
            ErrorCode::InvalidCredentials => 401,
            ErrorCode::SignupClosed => 403,
            ErrorCode::InviteInvalid => 404,
            ErrorCode::LastAdmin => 409,
        }
    }
}

/// `{ "error": { "code": "...", "message": "..." } }`, plus `Retry-After` seconds for 429.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
    pub retry_after_secs: Option<u64>,
}

#[derive(Serialize, Deserialize)]
struct Envelope {
    error: Body,
}

#[derive(Serialize, Deserialize)]
struct Body {
    code: ErrorCode,
    message: String,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            retry_after_secs: None,
        }
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::BadRequest, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }
    pub fn method_not_allowed() -> Self {
        Self::new(
            ErrorCode::MethodNotAllowed,
            "method not allowed on this route",
        )
    }
    pub fn unauthorized() -> Self {
        Self::new(ErrorCode::Unauthorized, "sign in first")
    }
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Forbidden, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        Self {
            code: ErrorCode::RateLimited,
            message: "too many requests; try again later".into(),
            retry_after_secs: Some(retry_after_secs.max(1)),
        }
    }

    pub fn status(&self) -> u16 {
        self.code.status()
    }

    /// The JSON body of the error response.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&Envelope {
            error: Body {
                code: self.code,
                message: self.message.clone(),
            },
        })
        .expect("an error envelope always serializes")
    }

    /// Parses an error envelope (for clients and tests).
    pub fn from_json(body: &str) -> Option<(ErrorCode, String)> {
        let env: Envelope = serde_json::from_str(body).ok()?;
        Some((env.error.code, env.error.message))
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}: {}", self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_envelope_round_trips_with_snake_case_code() {
        let e = ApiError::not_found("chat not found");
        assert_eq!(
            e.to_json(),
            r#"{"error":{"code":"not_found","message":"chat not found"}}"#
        );
        assert_eq!(
            ApiError::from_json(&e.to_json()),
            Some((ErrorCode::NotFound, "chat not found".into()))
        );
    }

    #[test]
    fn rate_limited_always_carries_a_positive_retry_after() {
        let e = ApiError::rate_limited(0);
        assert_eq!(e.status(), 429);
        assert_eq!(e.retry_after_secs, Some(1));
    }
}
