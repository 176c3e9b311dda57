//! Model usage, quotas and model access (issue 20, `docs/accounts.md`): what the admin's usage,
//! quota and model routes answer and take. Days are UTC dates `YYYY-MM-DD`; timestamps are
//! ISO-8601 with milliseconds, UTC.

use serde::{Deserialize, Serialize};

/// A principal's own limits, over the deployment defaults (`quota_tokens_per_day`,
/// `principal_max_bytes`); `None`: the default. Also the body of
/// `PUT /api/admin/users/:id/quota` (`{tokensPerDay: n|null, storageBytes: n|null}`) and its
/// answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Quota {
    #[serde(default)]
    pub tokens_per_day: Option<u64>,
    #[serde(default)]
    pub storage_bytes: Option<u64>,
}

/// One principal's usage over the asked days (`GET /api/admin/usage`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserUsage {
    /// `user:<id>` for an account; another principal (local-dev, password, OIDC) that used a
    /// model in the window is listed too, without an email.
    pub principal: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    pub chats: u64,
    /// Everything the principal stores (chat logs, agent events, tool outputs, attachments).
    pub storage_bytes: u64,
    /// The attachments' part of `storage_bytes`.
    pub attachment_bytes: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_active_at: Option<String>,
    /// The principal's overrides (`None` fields: the defaults of [`UsageOverview::defaults`]).
    pub quota: Quota,
}

/// All principals' tokens on one day (days without use are listed with zeros).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DayTokens {
    pub day: String,
    pub tokens_in: u64,
    pub tokens_out: u64,
}

/// `GET /api/admin/usage?days=30`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageOverview {
    pub users: Vec<UserUsage>,
    /// One entry per day of the window, oldest first, today last.
    pub days: Vec<DayTokens>,
    /// The deployment defaults the `quota` of each user overrides (`None`: no limit).
    pub defaults: Quota,
}

/// One principal's use of one model on one day.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelDay {
    pub day: String,
    pub model: String,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// Settled model calls (steps).
    pub calls: u64,
}

/// `GET /api/admin/users/:id/usage?days=30`: days with use only, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserUsageDays {
    pub days: Vec<ModelDay>,
}

/// A configured model an admin may offer members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelOption {
    pub id: String,
    pub label: String,
}

/// `PUT /api/admin/models`: which models members may use (`null`: all).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemberModelsRequest {
    pub member_models: Option<Vec<String>>,
}

/// `GET` and `PUT /api/admin/models`: the setting and the configured models to choose from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberModels {
    pub member_models: Option<Vec<String>>,
    pub models: Vec<ModelOption>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quota_reads_nulls_and_missing_fields_as_the_default() {
        let q: Quota =
            serde_json::from_str(r#"{"tokensPerDay":5000,"storageBytes":null}"#).unwrap();
        assert_eq!(q.tokens_per_day, Some(5000));
        assert_eq!(q.storage_bytes, None);
        assert_eq!(
            serde_json::to_string(&Quota::default()).unwrap(),
            r#"{"tokensPerDay":null,"storageBytes":null}"#
        );
    }

    #[test]
    fn member_models_null_means_every_model() {
        let r: MemberModelsRequest = serde_json::from_str(r#"{"memberModels":null}"#).unwrap();
        assert_eq!(r.member_models, None);
        assert!(serde_json::from_str::<MemberModelsRequest>(r#"{"models":[]}"#).is_err());
    }
}
