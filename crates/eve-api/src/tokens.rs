//! `/api/tokens`: API tokens for programmatic clients (eve's CLI, scripts). A token is shown
//! once, when it is created; afterwards only its [`ApiTokenInfo`] is. `docs/accounts.md`
//! ("Tokens") is the contract.

use serde::{Deserialize, Serialize};

/// One token as its owner sees it (never the secret). Times are ISO-8601 UTC.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiTokenInfo {
    pub id: String,
    pub name: String,
    pub created_at: String,
    pub expires_at: String,
    /// Recorded at most once a minute per token, so it may lag by that much.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<String>,
}

/// `POST /api/tokens` body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTokenRequest {
    pub name: String,
    /// 1–365; 90 when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in_days: Option<u32>,
}

/// `POST /api/tokens` answer (201): `token` (`evc_<id>_<secret>`) is shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTokenResponse {
    pub token: String,
    pub info: ApiTokenInfo,
}

/// `GET /api/tokens` answer: the caller's tokens, newest first (revoked and expired ones too,
/// until they are pruned).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenList {
    pub tokens: Vec<ApiTokenInfo>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_info_is_camel_case_without_absent_times() {
        let info = ApiTokenInfo {
            id: "ab".into(),
            name: "ci".into(),
            created_at: "2026-01-01T00:00:00.000Z".into(),
            expires_at: "2026-04-01T00:00:00.000Z".into(),
            last_used_at: None,
            revoked_at: None,
        };
        assert_eq!(
            serde_json::to_string(&info).unwrap(),
            r#"{"id":"ab","name":"ci","createdAt":"2026-01-01T00:00:00.000Z","expiresAt":"2026-04-01T00:00:00.000Z"}"#
        );
        let req: CreateTokenRequest =
            serde_json::from_str(r#"{"name":"ci","expiresInDays":7}"#).unwrap();
        assert_eq!(req.expires_in_days, Some(7));
    }
}
