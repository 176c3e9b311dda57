//! The system settings admins manage (`/api/admin/settings`, docs/runtime.md "Settings"):
//! one optional field per key; `None` (JSON `null`) is "not set here".

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How the chat shows a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolDisplay {
    /// A one-line summary the user expands.
    #[default]
    Collapsed,
    /// The call's input and output shown in full.
    Full,
}

/// Whether a tool call waits for the user's approval first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolApproval {
    /// Runs without asking.
    Never,
    /// Asks the first time in a chat.
    Once,
    /// Asks every time.
    Always,
}

/// Every setting, each `None` where unset. In `GET /api/admin/settings` `settings` holds the
/// stored values (`null`: the bootstrap applies) and `bootstrap` what applies without a row.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// The agent's base instructions (eve's `instructions.md`).
    #[serde(default)]
    pub instructions: Option<String>,
    /// The model a chat starts on.
    #[serde(default)]
    pub default_model: Option<String>,
    #[serde(default)]
    pub tool_display: Option<ToolDisplay>,
    /// The agent logs one line per model request (never a key).
    #[serde(default)]
    pub log_model_requests: Option<bool>,
    /// Email domains that may sign up uninvited (accounts mode).
    #[serde(default)]
    pub signup_domains: Option<Vec<String>>,
    /// Daily model tokens of a principal without an override; `0`: no limit.
    #[serde(default)]
    pub default_tokens_per_day: Option<u64>,
    #[serde(default)]
    pub tool_approvals: Option<BTreeMap<String, ToolApproval>>,
    /// `host` or `host:port` entries the outbound guard lets through.
    #[serde(default)]
    pub outbound_allowed_hosts: Option<Vec<String>>,
}

/// `GET /api/admin/settings` and the answer of `PATCH`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    pub settings: Settings,
    pub bootstrap: Settings,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_camel_case_with_nulls() {
        let v = serde_json::to_value(Settings {
            tool_display: Some(ToolDisplay::Full),
            ..Settings::default()
        })
        .unwrap();
        assert_eq!(v["toolDisplay"], "full");
        assert!(v["defaultTokensPerDay"].is_null());
        assert!(v.as_object().unwrap().contains_key("outboundAllowedHosts"));
    }
}
