//! Accounts mode's shapes (issue 20, `docs/accounts.md`): sign-up, account login, invitations,
//! reset links, own settings, and the admin's `/api/admin/*` answers (camelCase on the wire).
//! Times are ISO 8601 UTC with milliseconds, as in the chat shapes.

use serde::{Deserialize, Deserializer, Serialize};

/// What an account may do. The role is read from SQL on every admin request, never trusted
/// from a cookie.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Admin,
    Member,
}

impl Role {
    /// The wire and SQL name (`admin`, `member`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Member => "member",
        }
    }

    /// The role a stored name stands for.
    pub fn parse(text: &str) -> Option<Role> {
        match text {
            "admin" => Some(Role::Admin),
            "member" => Some(Role::Member),
            _ => None,
        }
    }
}

/// `null` and absent differ in a patch: absent keeps the value, `null` clears it.
pub(crate) fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// `POST /api/auth/signup`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SignupRequest {
    pub email: String,
    pub password: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invite_token: Option<String>,
}

/// `POST /api/auth/login` in accounts mode (password mode keeps `{password}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountLoginRequest {
    pub email: String,
    pub password: String,
}

/// `GET /api/auth/invite?token=…`: what an invitation offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InviteInfo {
    pub role: Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    pub expires_at: String,
}

/// `POST /api/auth/password`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PasswordChangeRequest {
    pub current_password: String,
    pub new_password: String,
}

/// `POST /api/auth/invite`: what an invitation offers. The token is in the body, never the
/// URL, whose query ends up in access logs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InviteLookup {
    pub token: String,
}

/// `POST /api/auth/reset`: spends a one-time reset link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResetRequest {
    pub token: String,
    pub new_password: String,
}

/// The languages the app speaks.
pub const LANGUAGES: [&str; 2] = ["en", "zh-CN"];

/// `GET|PATCH /api/auth/account`: the signed-in account's own settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountSettings {
    pub id: String,
    pub email: String,
    pub display_name: Option<String>,
    pub role: Role,
    /// `en`, `zh-CN`, or `null` (the browser's).
    pub language: Option<String>,
    pub default_model: Option<String>,
}

/// `PATCH /api/auth/account`: an absent field stays, `null` clears it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AccountPatch {
    #[serde(default, deserialize_with = "present")]
    pub display_name: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    pub language: Option<Option<String>>,
    #[serde(default, deserialize_with = "present")]
    pub default_model: Option<Option<String>>,
}

/// One account as an admin sees it (never its chats).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdminUser {
    pub id: String,
    pub email: String,
    pub display_name: Option<String>,
    pub role: Role,
    pub disabled: bool,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_active_at: Option<String>,
}

/// `GET /api/admin/users?q=&cursor=`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserList {
    pub users: Vec<AdminUser>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `PATCH /api/admin/users/:id`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UserPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<Role>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
}

/// `POST /api/admin/users/:id/reset`: a one-time reset link (shown once).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResetLink {
    pub token: String,
    pub url: String,
    pub expires_at: String,
}

/// `POST /api/admin/invites`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InviteCreate {
    pub role: Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

/// The answer of `POST /api/admin/invites`: the token is shown this once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InviteCreated {
    pub id: String,
    pub token: String,
    pub url: String,
    pub role: Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    pub expires_at: String,
}

/// One invitation in `GET /api/admin/invites` (without its token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InviteSummary {
    pub id: String,
    pub role: Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    pub created_at: String,
    pub expires_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_at: Option<String>,
}

/// `GET /api/admin/invites`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InviteList {
    pub invites: Vec<InviteSummary>,
}

/// One audit-log entry. `actor` and `target` are principal ids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntryView {
    pub id: i64,
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    pub action: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<serde_json::Value>,
}

/// `GET /api/admin/audit?cursor=`: newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditList {
    pub entries: Vec<AuditEntryView>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_patch_tells_absent_from_null() {
        let p: AccountPatch = serde_json::from_str(r#"{"displayName":null}"#).unwrap();
        assert_eq!(p.display_name, Some(None));
        assert_eq!(p.language, None);
        let p: AccountPatch = serde_json::from_str(r#"{"language":"zh-CN"}"#).unwrap();
        assert_eq!(p.language, Some(Some("zh-CN".into())));
        assert!(serde_json::from_str::<AccountPatch>(r#"{"role":"admin"}"#).is_err());
    }

    #[test]
    fn shapes_are_camel_case_and_roles_lowercase() {
        let u = AdminUser {
            id: "a".into(),
            email: "a@example.com".into(),
            display_name: None,
            role: Role::Admin,
            disabled: false,
            created_at: "2026-01-01T00:00:00.000Z".into(),
            last_active_at: None,
        };
        let v = serde_json::to_value(&u).unwrap();
        assert_eq!(v["role"], "admin");
        assert!(v.get("displayName").is_some() && v.get("createdAt").is_some());
        assert!(v.get("lastActiveAt").is_none());
        let s: SignupRequest = serde_json::from_str(
            r#"{"email":"a@b.c","password":"p","setupToken":"t","inviteToken":"i"}"#,
        )
        .unwrap();
        assert_eq!(s.setup_token.as_deref(), Some("t"));
        assert_eq!(s.invite_token.as_deref(), Some("i"));
    }
}
