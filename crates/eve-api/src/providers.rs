//! Model providers as data (issue 22, docs/runtime.md): `/api/admin/providers*` and
//! `/api/admin/secrets/rotate`. A provider's API key goes in (`apiKey`) and never comes out:
//! a listing says `hasKey`, and `keyUnreadable` when the stored key opens under no
//! configured `secrets_key`.

use serde::{Deserialize, Serialize};

use crate::accounts::present;
use crate::usage::ModelOption;

/// The wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI's chat completions, and every server compatible with it.
    Openai,
    Anthropic,
}

impl ProviderKind {
    /// The stored name (`provider.kind`).
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Openai => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }

    pub fn parse(text: &str) -> Option<ProviderKind> {
        match text {
            "openai" => Some(ProviderKind::Openai),
            "anthropic" => Some(ProviderKind::Anthropic),
            _ => None,
        }
    }
}

fn yes() -> bool {
    true
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// One of a provider's models; its id in the agent is `<provider name>/<model>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderModel {
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Offered at all (who may use it is `/api/admin/models`).
    #[serde(default = "yes")]
    pub enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u64>,
    /// In a listing: a bootstrap model (the variables) has the same id, so this one is not
    /// offered. Ignored in a request.
    #[serde(default, skip_serializing_if = "is_false")]
    pub shadowed: bool,
}

/// A provider as the admin sees it (never its key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Provider {
    pub id: String,
    pub name: String,
    pub kind: ProviderKind,
    pub base_url: String,
    pub has_key: bool,
    /// A key is stored but opens under neither `secrets_key` nor `secrets_key_previous`: it
    /// must be entered again.
    pub key_unreadable: bool,
    pub max_tokens: Option<u64>,
    pub models: Vec<ProviderModel>,
    pub created_at: String,
    pub updated_at: String,
}

/// `GET /api/admin/providers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderList {
    /// The models of the Spin variables, read-only here.
    pub bootstrap: Vec<ModelOption>,
    pub providers: Vec<Provider>,
    /// Whether `secrets_key` is set (without it no key can be stored).
    pub secrets_key_set: bool,
}

/// `POST /api/admin/providers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderCreate {
    pub name: String,
    pub kind: ProviderKind,
    /// Omitted: the kind's public API.
    #[serde(default)]
    pub base_url: Option<String>,
    #[serde(default)]
    pub api_key: Option<String>,
    #[serde(default)]
    pub max_tokens: Option<u64>,
    #[serde(default)]
    pub models: Vec<ProviderModel>,
}

/// `PATCH /api/admin/providers/:id`: absent keeps a field; `apiKey: null` removes the key,
/// `maxTokens: null` returns to the provider's default; `models` replaces the whole list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProviderPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub api_key: Option<Option<String>>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_tokens: Option<Option<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<ProviderModel>>,
}

/// `POST /api/admin/providers/:id/test`: one real call to the provider's models endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderTest {
    pub ok: bool,
    /// The provider's HTTP status, when it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// What the provider said (its error text), or why it could not be reached.
    pub message: String,
    /// The model ids the endpoint lists, for the admin to pick from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models: Option<Vec<String>>,
}

/// `POST /api/admin/secrets/rotate`: how many secrets were re-sealed under the current key,
/// and how many are still under another (0: `secrets_key_previous` may be removed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct Rotation {
    pub resealed: u64,
    pub remaining: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_tells_a_null_key_from_an_absent_one() {
        let p: ProviderPatch = serde_json::from_str(r#"{"apiKey": null}"#).unwrap();
        assert_eq!(p.api_key, Some(None));
        let p: ProviderPatch = serde_json::from_str(r#"{"baseUrl": "https://x.example"}"#).unwrap();
        assert_eq!(p.api_key, None);
        assert!(serde_json::from_str::<ProviderPatch>(r#"{"name": "x"}"#).is_err());
    }

    #[test]
    fn a_model_is_enabled_unless_said_otherwise_and_kinds_are_lowercase() {
        let m: ProviderModel = serde_json::from_str(r#"{"model": "gpt-4o"}"#).unwrap();
        assert!(m.enabled && !m.shadowed);
        let c: ProviderCreate =
            serde_json::from_str(r#"{"name": "x", "kind": "anthropic"}"#).unwrap();
        assert_eq!(c.kind, ProviderKind::Anthropic);
        assert!(serde_json::from_str::<ProviderCreate>(r#"{"name": "x", "kind": "gpt"}"#).is_err());
    }
}
