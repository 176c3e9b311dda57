//! Who is calling: the principal every chat, event, session and memory is scoped to, and the
//! `/api/auth/*` + `/api/setup` shapes (camelCase on the wire, as in the seed).

use serde::{Deserialize, Serialize};

/// How the deployment authenticates users (Spin variable `auth_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuthMode {
    /// Zero-config single principal; only when `auth_mode = "local-dev"` is set explicitly.
    LocalDev,
    /// One shared deployment password (`chat_password`); everyone shares one principal.
    Password,
    /// OpenID Connect authorization-code flow with PKCE; one principal per provider `sub`.
    Oidc,
    /// Local accounts with roles (issue 20): one principal `user:<id>` per account; only when
    /// `auth_mode = "accounts"` is set explicitly.
    Accounts,
    /// Nothing usable is configured: `/api/setup` says what is missing.
    Unconfigured,
}

impl AuthMode {
    /// The wire name (`local-dev`, `password`, `oidc`, `accounts`, `unconfigured`).
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMode::LocalDev => "local-dev",
            AuthMode::Password => "password",
            AuthMode::Oidc => "oidc",
            AuthMode::Accounts => "accounts",
            AuthMode::Unconfigured => "unconfigured",
        }
    }
}

/// The authenticated caller. `id` is the isolation key for all stored data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Principal {
    pub id: String,
    pub mode: AuthMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

/// The principal of an account in accounts mode: `user:<id>`.
pub fn account_principal_id(account_id: &str) -> String {
    format!("{ACCOUNT_PRINCIPAL_PREFIX}{account_id}")
}

/// What every account principal starts with.
pub const ACCOUNT_PRINCIPAL_PREFIX: &str = "user:";

/// The single principal of local-dev mode.
pub const LOCAL_DEV_PRINCIPAL_ID: &str = "local-dev";

/// The one principal every password-mode user shares (the seed's `principalId: "eve-chat-user"`).
pub const PASSWORD_PRINCIPAL_ID: &str = "eve-chat-user";

/// `POST /api/auth/login` body (password mode).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoginRequest {
    pub password: String,
}

/// `GET /api/auth/session`, and the answer of a successful `POST /api/auth/login` /
/// `POST /api/auth/logout`: the signed-in viewer, or `null`, and the deployment's auth mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionResponse {
    pub viewer: Option<Principal>,
    pub auth_mode: AuthMode,
}

/// Where durable chat state lives. Always the SQL event log on Spin (the seed's browser storage
/// mode does not exist here); kept as a field so the seed's UI contract holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StorageMode {
    Database,
}

/// `GET /api/setup`: whether the deployment can serve chats, and if not, exactly what is missing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetupStatus {
    /// Everything below is ready: sign-in works and the stores answer.
    pub app_ready: bool,
    pub auth_mode: AuthMode,
    /// The selected mode has every variable it needs (and they are strong enough).
    pub auth_ready: bool,
    /// The SQLite database `default` could be opened.
    pub database_configured: bool,
    /// The database answered a query.
    pub database_ready: bool,
    /// The chat tables exist (migrations have run).
    pub database_schema_ready: bool,
    /// The key-value store `default` (rate limits, login throttling) could be opened.
    pub rate_limit_ready: bool,
    pub storage_mode: StorageMode,
    /// Human-readable items an operator must fix, naming Spin variables where one is at fault.
    /// Never contains a secret's value.
    pub missing: Vec<String>,
    /// Accounts mode only: no admin exists yet, so the first sign-up must present the setup
    /// token (`admin_setup_token`). Always `false` in the other modes.
    #[serde(default)]
    pub accounts_need_admin: bool,
    /// How the chat shows tool calls (the `toolDisplay` setting, docs/runtime.md).
    #[serde(default)]
    pub tool_display: crate::settings::ToolDisplay,
}

/// The query parameter of the app URL a failed OIDC callback redirects to
/// (`/?authError=<code>`), so the UI can show why sign-in failed.
pub const AUTH_ERROR_QUERY_PARAM: &str = "authError";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_status_serializes_with_the_seed_field_names() {
        let s = SetupStatus {
            app_ready: false,
            auth_mode: AuthMode::LocalDev,
            auth_ready: true,
            database_configured: true,
            database_ready: true,
            database_schema_ready: false,
            rate_limit_ready: true,
            storage_mode: StorageMode::Database,
            missing: vec!["database migrations".into()],
            accounts_need_admin: false,
            tool_display: Default::default(),
        };
        let v = serde_json::to_value(&s).unwrap();
        for key in [
            "appReady",
            "authMode",
            "authReady",
            "databaseConfigured",
            "databaseReady",
            "databaseSchemaReady",
            "rateLimitReady",
            "storageMode",
            "missing",
            "accountsNeedAdmin",
        ] {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        assert_eq!(v["authMode"], "local-dev");
        assert_eq!(v["storageMode"], "database");
    }

    #[test]
    fn session_response_serializes_a_signed_out_viewer_as_null() {
        let r = SessionResponse {
            viewer: None,
            auth_mode: AuthMode::Password,
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"viewer":null,"authMode":"password"}"#
        );
    }
}
