//! The Spin variables that configure sign-in (names fixed in DESIGN.md §3), the auth mode they
//! select, and the human-readable list of what is missing for that mode to work.

use eve_api::auth::AuthMode;

use crate::cookie::SessionCodec;
use crate::crypto::{hex, sha256};
use crate::oidc::Allowlist;
use crate::origin::{is_loopback_host, Origin};
use crate::throttle::TrustedProxies;

/// A shared password shorter than this is reported as weak and does not enable password mode.
pub const MIN_PASSWORD_CHARS: usize = 16;
/// A session secret shorter than this is reported as too short and is not used.
pub const MIN_SESSION_SECRET_CHARS: usize = 32;

/// The Spin variables sign-in reads. Every component that authenticates maps these into its
/// `[component.<name>.variables]` (only `auth` needs `app_base_url`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VariableName {
    AuthMode,
    SessionSecret,
    SessionSecretPrevious,
    ChatPassword,
    OidcIssuer,
    OidcClientId,
    OidcClientSecret,
    AppBaseUrl,
    OidcAllowedEmails,
    OidcAllowedDomains,
    TrustedProxies,
    AdminSetupToken,
    SignupAllowedDomains,
    OidcAdminEmails,
}

impl VariableName {
    pub const ALL: [VariableName; 14] = [
        VariableName::AuthMode,
        VariableName::SessionSecret,
        VariableName::SessionSecretPrevious,
        VariableName::ChatPassword,
        VariableName::OidcIssuer,
        VariableName::OidcClientId,
        VariableName::OidcClientSecret,
        VariableName::AppBaseUrl,
        VariableName::OidcAllowedEmails,
        VariableName::OidcAllowedDomains,
        VariableName::TrustedProxies,
        VariableName::AdminSetupToken,
        VariableName::SignupAllowedDomains,
        VariableName::OidcAdminEmails,
    ];

    /// The variable's name in `spin.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            VariableName::AuthMode => "auth_mode",
            VariableName::SessionSecret => "session_secret",
            VariableName::SessionSecretPrevious => "session_secret_previous",
            VariableName::ChatPassword => "chat_password",
            VariableName::OidcIssuer => "oidc_issuer",
            VariableName::OidcClientId => "oidc_client_id",
            VariableName::OidcClientSecret => "oidc_client_secret",
            VariableName::AppBaseUrl => "app_base_url",
            VariableName::OidcAllowedEmails => "oidc_allowed_emails",
            VariableName::OidcAllowedDomains => "oidc_allowed_domains",
            VariableName::TrustedProxies => "trusted_proxies",
            VariableName::AdminSetupToken => "admin_setup_token",
            VariableName::SignupAllowedDomains => "signup_allowed_domains",
            VariableName::OidcAdminEmails => "oidc_admin_emails",
        }
    }
}

/// A secret value: never printed by `Debug`, so a config can be logged without leaking it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }
    /// The secret itself; call sites are the only places a secret is read.
    pub fn expose(&self) -> &str {
        &self.0
    }
    fn chars(&self) -> usize {
        self.0.chars().count()
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// Sign-in configuration as read from the variables; empty values count as unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthConfig {
    pub auth_mode: Option<String>,
    pub session_secret: Option<Secret>,
    pub session_secret_previous: Option<Secret>,
    pub chat_password: Option<Secret>,
    pub oidc_issuer: Option<String>,
    pub oidc_client_id: Option<String>,
    pub oidc_client_secret: Option<Secret>,
    pub app_base_url: Option<String>,
    /// Comma-separated emails that may sign in with OIDC (case-insensitive).
    pub oidc_allowed_emails: Option<String>,
    /// Comma-separated email domains whose addresses may sign in with OIDC.
    pub oidc_allowed_domains: Option<String>,
    /// Comma-separated IPs / CIDRs of reverse proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: Option<String>,
    /// Accounts mode: the secret the first sign-up presents to become admin (once).
    pub admin_setup_token: Option<Secret>,
    /// Accounts mode: comma-separated email domains that may sign up as members uninvited.
    pub signup_allowed_domains: Option<String>,
    /// Accounts mode: comma-separated emails of OIDC users who become admins at first sign-in.
    pub oidc_admin_emails: Option<String>,
}

/// The mode the configuration selects, whether it is usable, and what an operator must fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    pub mode: AuthMode,
    pub ready: bool,
    pub missing: Vec<String>,
}

/// Missing-item texts (stable so the UI and tests can rely on their start: the variable name).
pub mod missing {
    pub const SESSION_SECRET_UNSET: &str =
        "session_secret: not set (a random secret of at least 32 characters signs the session cookie)";
    pub const SESSION_SECRET_SHORT: &str = "session_secret: too short (at least 32 characters)";
    pub const CHAT_PASSWORD_UNSET: &str =
        "chat_password: not set (the shared deployment password, at least 16 characters)";
    pub const CHAT_PASSWORD_WEAK: &str =
        "chat_password: too weak (at least 16 characters); password sign-in stays disabled";
    pub const OIDC_ISSUER_UNSET: &str = "oidc_issuer: not set (the OpenID provider's issuer URL)";
    pub const OIDC_ISSUER_INVALID: &str =
        "oidc_issuer: must be an https URL (plain http only for localhost)";
    pub const OIDC_CLIENT_ID_UNSET: &str = "oidc_client_id: not set";
    pub const OIDC_CLIENT_SECRET_UNSET: &str = "oidc_client_secret: not set";
    pub const AUTH_MODE_UNKNOWN: &str =
        "auth_mode: unknown value (expected local-dev, password, oidc or accounts, or leave it empty)";
    pub const ADMIN_SETUP_TOKEN_UNSET: &str = "admin_setup_token: not set (no admin exists yet; \
        the first sign-up presents this secret to become the admin, once)";
    pub const NO_MODE: &str = "sign-in: set chat_password (password mode) or oidc_issuer, \
        oidc_client_id and oidc_client_secret (OIDC); auth_mode = local-dev is for local development only";
    pub const APP_BASE_URL_INVALID: &str =
        "app_base_url: must be an absolute http(s) URL such as https://chat.example.com";
    pub const APP_BASE_URL_NOT_HTTPS: &str =
        "app_base_url: must be https outside local-dev (plain http only for localhost / 127.0.0.1), \
        because the session cookie is Secure";
    pub const PLAIN_HTTP_REQUEST: &str =
        "app_base_url: not set, and this page was reached over plain http at a name that is not \
        localhost; sign-in needs https: set app_base_url to the app's https URL";
    pub const OIDC_ALLOWLIST_UNSET: &str = "oidc_allowed_emails / oidc_allowed_domains: neither \
        is set (comma-separated emails or domains that may sign in; without them every account \
        at the provider could)";
    pub const TRUSTED_PROXIES_INVALID: &str =
        "trusted_proxies: not a comma-separated list of IP addresses or CIDR ranges";
}

/// Whether the comma-separated `list` names `item` (case-insensitive, blanks ignored).
fn list_contains(list: Option<&str>, item: &str) -> bool {
    let item = item.trim();
    !item.is_empty()
        && list
            .unwrap_or_default()
            .split(',')
            .any(|entry| entry.trim().eq_ignore_ascii_case(item))
}

fn non_empty(value: Option<String>, trim: bool) -> Option<String> {
    let value = value?;
    let value = if trim {
        value.trim().to_string()
    } else {
        value
    };
    (!value.is_empty()).then_some(value)
}

impl AuthConfig {
    /// Reads every sign-in variable through `lookup` (unset, undefined or empty → `None`).
    /// Non-secret values are trimmed; secrets are taken verbatim.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let text = |v: VariableName| non_empty(lookup(v.as_str()), true);
        let secret = |v: VariableName| non_empty(lookup(v.as_str()), false).map(Secret);
        AuthConfig {
            auth_mode: text(VariableName::AuthMode),
            session_secret: secret(VariableName::SessionSecret),
            session_secret_previous: secret(VariableName::SessionSecretPrevious),
            chat_password: secret(VariableName::ChatPassword),
            oidc_issuer: text(VariableName::OidcIssuer)
                .map(|s| s.trim_end_matches('/').to_string()),
            oidc_client_id: text(VariableName::OidcClientId),
            oidc_client_secret: secret(VariableName::OidcClientSecret),
            app_base_url: text(VariableName::AppBaseUrl),
            oidc_allowed_emails: text(VariableName::OidcAllowedEmails),
            oidc_allowed_domains: text(VariableName::OidcAllowedDomains),
            trusted_proxies: text(VariableName::TrustedProxies),
            admin_setup_token: secret(VariableName::AdminSetupToken),
            signup_allowed_domains: text(VariableName::SignupAllowedDomains),
            oidc_admin_emails: text(VariableName::OidcAdminEmails),
        }
    }

    /// The mode: `auth_mode` when set; otherwise derived from what is configured — `oidc` when
    /// issuer, client id and client secret are all set, `password` when a strong enough
    /// `chat_password` is set, else `unconfigured`. Never `local-dev` unless asked for.
    pub fn mode(&self) -> AuthMode {
        match self
            .auth_mode
            .as_deref()
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("local-dev") => AuthMode::LocalDev,
            Some("password") => AuthMode::Password,
            Some("oidc") => AuthMode::Oidc,
            Some("accounts") => AuthMode::Accounts,
            Some(_) => AuthMode::Unconfigured,
            None if self.oidc_issuer.is_some()
                && self.oidc_client_id.is_some()
                && self.oidc_client_secret.is_some() =>
            {
                AuthMode::Oidc
            }
            None if self.password_is_strong() => AuthMode::Password,
            None => AuthMode::Unconfigured,
        }
    }

    fn password_is_strong(&self) -> bool {
        self.chat_password
            .as_ref()
            .is_some_and(|p| p.chars() >= MIN_PASSWORD_CHARS)
    }

    /// The current session secret, when set and long enough.
    pub fn usable_session_secret(&self) -> Option<&Secret> {
        self.session_secret
            .as_ref()
            .filter(|s| s.chars() >= MIN_SESSION_SECRET_CHARS)
    }

    /// The previous session secret (rotation), when set and long enough; a short one is ignored.
    pub fn usable_previous_secret(&self) -> Option<&Secret> {
        self.session_secret_previous
            .as_ref()
            .filter(|s| s.chars() >= MIN_SESSION_SECRET_CHARS)
    }

    /// The configured issuer when it is a URL we may talk to: https, or http on a loopback host.
    pub fn usable_issuer(&self) -> Option<&str> {
        let issuer = self.oidc_issuer.as_deref()?;
        let origin = Origin::parse(issuer)?;
        (origin.scheme == "https" || is_loopback_host(&origin.host)).then_some(issuer)
    }

    /// Whether sign-in must be refused for a request that reached the app at `requested`
    /// (`app_base_url` unset, so the request's own URL is the app's): the session cookie is
    /// `Secure`, which browsers keep only on https and on loopback http.
    pub fn insecure_origin(&self, requested: Option<&Origin>) -> bool {
        matches!(
            self.mode(),
            AuthMode::Password | AuthMode::Oidc | AuthMode::Accounts
        ) && self.app_base_url.is_none()
            && !requested.is_some_and(Origin::is_secure_context)
    }

    /// `app_base_url` as an origin, when set and valid.
    pub fn app_base_origin(&self) -> Option<Origin> {
        Origin::parse(self.app_base_url.as_deref()?)
    }

    fn session_secret_items(&self, missing: &mut Vec<String>) {
        match &self.session_secret {
            None => missing.push(missing::SESSION_SECRET_UNSET.into()),
            Some(s) if s.chars() < MIN_SESSION_SECRET_CHARS => {
                missing.push(missing::SESSION_SECRET_SHORT.into())
            }
            Some(_) => {}
        }
    }

    fn password_items(&self, missing: &mut Vec<String>) {
        match &self.chat_password {
            None => missing.push(missing::CHAT_PASSWORD_UNSET.into()),
            Some(p) if p.chars() < MIN_PASSWORD_CHARS => {
                missing.push(missing::CHAT_PASSWORD_WEAK.into())
            }
            Some(_) => {}
        }
    }

    fn oidc_items(&self, missing: &mut Vec<String>) {
        match &self.oidc_issuer {
            None => missing.push(missing::OIDC_ISSUER_UNSET.into()),
            Some(_) if self.usable_issuer().is_none() => {
                missing.push(missing::OIDC_ISSUER_INVALID.into())
            }
            Some(_) => {}
        }
        if self.oidc_client_id.is_none() {
            missing.push(missing::OIDC_CLIENT_ID_UNSET.into());
        }
        if self.oidc_client_secret.is_none() {
            missing.push(missing::OIDC_CLIENT_SECRET_UNSET.into());
        }
        if self.allowlist().is_empty() {
            missing.push(missing::OIDC_ALLOWLIST_UNSET.into());
        }
    }

    /// Who may sign in with OIDC (`oidc_allowed_emails`, `oidc_allowed_domains`).
    pub fn allowlist(&self) -> Allowlist {
        Allowlist::parse(
            self.oidc_allowed_emails.as_deref(),
            self.oidc_allowed_domains.as_deref(),
        )
    }

    /// Accounts mode: whether OIDC sign-in is configured alongside the local accounts.
    pub fn accounts_oidc(&self) -> bool {
        self.mode() == AuthMode::Accounts
            && self.usable_issuer().is_some()
            && self.oidc_client_id.is_some()
            && self.oidc_client_secret.is_some()
            && !self.allowlist().is_empty()
    }

    /// Accounts mode: whether `email` may sign up uninvited (its domain is in
    /// `signup_allowed_domains`).
    pub fn signup_domain_allowed(&self, email: &str) -> bool {
        let Some((_, domain)) = email.rsplit_once('@') else {
            return false;
        };
        list_contains(self.signup_allowed_domains.as_deref(), domain)
    }

    /// Accounts mode: whether an OIDC user with `email` becomes admin at first sign-in.
    pub fn oidc_admin(&self, email: &str) -> bool {
        list_contains(self.oidc_admin_emails.as_deref(), email)
    }

    /// The reverse proxies whose `X-Forwarded-For` is believed (invalid entries: none at all,
    /// and setup says so).
    pub fn trusted_proxies(&self) -> TrustedProxies {
        self.trusted_proxies
            .as_deref()
            .and_then(TrustedProxies::parse)
            .unwrap_or_default()
    }

    fn oidc_partly_set(&self) -> bool {
        self.oidc_issuer.is_some()
            || self.oidc_client_id.is_some()
            || self.oidc_client_secret.is_some()
    }

    /// The mode, whether it can sign anyone in, and what is missing (never a secret's value).
    pub fn resolve(&self) -> Resolution {
        let mode = self.mode();
        let mut missing = Vec::new();
        match mode {
            AuthMode::LocalDev => {}
            AuthMode::Password => {
                self.password_items(&mut missing);
                self.session_secret_items(&mut missing);
            }
            AuthMode::Oidc => {
                self.oidc_items(&mut missing);
                self.session_secret_items(&mut missing);
            }
            AuthMode::Accounts => {
                // OIDC is optional here; half of it configured is still a mistake to report.
                if self.oidc_partly_set() {
                    self.oidc_items(&mut missing);
                }
                self.session_secret_items(&mut missing);
            }
            AuthMode::Unconfigured => {
                if self.auth_mode.is_some() {
                    missing.push(missing::AUTH_MODE_UNKNOWN.into());
                } else if self.oidc_partly_set() {
                    self.oidc_items(&mut missing);
                } else if self.chat_password.is_some() {
                    self.password_items(&mut missing);
                } else {
                    missing.push(missing::NO_MODE.into());
                }
                self.session_secret_items(&mut missing);
            }
        }
        if self.app_base_url.is_some() {
            match self.app_base_origin() {
                None => missing.push(missing::APP_BASE_URL_INVALID.into()),
                Some(base) if mode != AuthMode::LocalDev && !base.is_secure_context() => {
                    missing.push(missing::APP_BASE_URL_NOT_HTTPS.into())
                }
                Some(_) => {}
            }
        }
        if self
            .trusted_proxies
            .as_deref()
            .is_some_and(|t| TrustedProxies::parse(t).is_none())
        {
            missing.push(missing::TRUSTED_PROXIES_INVALID.into());
        }
        let ready = mode != AuthMode::Unconfigured && missing.is_empty();
        Resolution {
            mode,
            ready,
            missing,
        }
    }

    /// The session-cookie codec of the selected mode, when that mode is ready and uses cookies
    /// (password and OIDC). The key is bound to the mode's identity — the password in password
    /// mode, the issuer and client in OIDC — so changing either signs everyone out.
    pub fn session_codec(&self) -> Option<SessionCodec> {
        let resolution = self.resolve();
        if !resolution.ready {
            return None;
        }
        let binding = match resolution.mode {
            AuthMode::Password => {
                format!(
                    "password:{}",
                    hex(&sha256(self.chat_password.as_ref()?.expose().as_bytes()))
                )
            }
            AuthMode::Oidc => format!(
                "oidc:{}\n{}",
                self.oidc_issuer.as_deref()?,
                self.oidc_client_id.as_deref()?
            ),
            // Accounts have their own passwords; switching the mode signs everyone out.
            AuthMode::Accounts => "accounts".to_string(),
            AuthMode::LocalDev | AuthMode::Unconfigured => return None,
        };
        Some(SessionCodec::new(
            resolution.mode,
            self.usable_session_secret()?.expose(),
            self.usable_previous_secret().map(Secret::expose),
            &binding,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const SECRET: &str = "0123456789abcdef0123456789abcdef";
    const PASSWORD: &str = "correct horse battery";

    fn config(vars: &[(&str, &str)]) -> AuthConfig {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        AuthConfig::from_lookup(|name| map.get(name).cloned())
    }

    #[test]
    fn nothing_configured_is_unconfigured_and_never_local_dev() {
        let r = config(&[]).resolve();
        assert_eq!(r.mode, AuthMode::Unconfigured);
        assert!(!r.ready);
        assert_eq!(
            r.missing,
            vec![missing::NO_MODE, missing::SESSION_SECRET_UNSET]
        );
    }

    #[test]
    fn explicit_local_dev_is_ready_without_any_secret() {
        let r = config(&[("auth_mode", "local-dev")]).resolve();
        assert_eq!(
            r,
            Resolution {
                mode: AuthMode::LocalDev,
                ready: true,
                missing: vec![]
            }
        );
    }

    #[test]
    fn a_strong_password_and_secret_derive_a_ready_password_mode() {
        let r = config(&[("chat_password", PASSWORD), ("session_secret", SECRET)]).resolve();
        assert_eq!(
            r,
            Resolution {
                mode: AuthMode::Password,
                ready: true,
                missing: vec![]
            }
        );
    }

    #[test]
    fn a_short_password_does_not_enable_password_mode_and_is_reported_weak() {
        let r = config(&[("chat_password", "short"), ("session_secret", SECRET)]).resolve();
        assert_eq!(r.mode, AuthMode::Unconfigured);
        assert!(!r.ready);
        assert_eq!(r.missing, vec![missing::CHAT_PASSWORD_WEAK]);
    }

    #[test]
    fn explicit_password_mode_with_a_short_password_is_not_ready() {
        let r = config(&[
            ("auth_mode", "password"),
            ("chat_password", "short"),
            ("session_secret", SECRET),
        ])
        .resolve();
        assert_eq!(r.mode, AuthMode::Password);
        assert!(!r.ready);
        assert_eq!(r.missing, vec![missing::CHAT_PASSWORD_WEAK]);
    }

    #[test]
    fn password_mode_without_a_session_secret_lists_the_secret() {
        let r = config(&[("chat_password", PASSWORD)]).resolve();
        assert_eq!(r.mode, AuthMode::Password);
        assert!(!r.ready);
        assert_eq!(r.missing, vec![missing::SESSION_SECRET_UNSET]);
    }

    #[test]
    fn a_short_session_secret_is_reported_too_short() {
        let r = config(&[("chat_password", PASSWORD), ("session_secret", "tiny")]).resolve();
        assert_eq!(r.missing, vec![missing::SESSION_SECRET_SHORT]);
        assert!(
            config(&[("chat_password", PASSWORD), ("session_secret", "tiny")])
                .session_codec()
                .is_none()
        );
    }

    #[test]
    fn full_oidc_configuration_derives_oidc_mode_over_a_password() {
        let r = config(&[
            ("oidc_issuer", "https://id.example.com/"),
            ("oidc_client_id", "eve"),
            ("oidc_client_secret", "s3cret"),
            ("oidc_allowed_domains", "example.com"),
            ("chat_password", PASSWORD),
            ("session_secret", SECRET),
        ])
        .resolve();
        assert_eq!(
            r,
            Resolution {
                mode: AuthMode::Oidc,
                ready: true,
                missing: vec![]
            }
        );
    }

    #[test]
    fn half_configured_oidc_is_unconfigured_and_names_what_is_missing() {
        let c = config(&[
            ("oidc_issuer", "https://id.example.com"),
            ("session_secret", SECRET),
        ]);
        let r = c.resolve();
        assert_eq!(r.mode, AuthMode::Unconfigured);
        assert_eq!(
            r.missing,
            vec![
                missing::OIDC_CLIENT_ID_UNSET,
                missing::OIDC_CLIENT_SECRET_UNSET,
                missing::OIDC_ALLOWLIST_UNSET
            ]
        );
    }

    #[test]
    fn a_plain_http_issuer_is_rejected_unless_it_is_loopback() {
        let base = [
            ("auth_mode", "oidc"),
            ("oidc_client_id", "eve"),
            ("oidc_client_secret", "x"),
            ("oidc_allowed_emails", "eve@example.com"),
            ("session_secret", SECRET),
        ];
        let mut vars = base.to_vec();
        vars.push(("oidc_issuer", "http://id.example.com"));
        assert_eq!(
            config(&vars).resolve().missing,
            vec![missing::OIDC_ISSUER_INVALID]
        );
        let mut vars = base.to_vec();
        vars.push(("oidc_issuer", "http://127.0.0.1:9999"));
        assert!(config(&vars).resolve().ready);
    }

    #[test]
    fn an_unknown_auth_mode_is_reported_without_echoing_it() {
        let r = config(&[("auth_mode", "vercel"), ("session_secret", SECRET)]).resolve();
        assert_eq!(r.mode, AuthMode::Unconfigured);
        assert_eq!(r.missing, vec![missing::AUTH_MODE_UNKNOWN]);
    }

    #[test]
    fn an_invalid_app_base_url_is_reported() {
        let r = config(&[
            ("auth_mode", "local-dev"),
            ("app_base_url", "chat.example.com"),
        ])
        .resolve();
        assert!(!r.ready);
        assert_eq!(r.missing, vec![missing::APP_BASE_URL_INVALID]);
    }

    #[test]
    fn missing_items_never_contain_secret_values() {
        let c = config(&[
            ("chat_password", "hunter2-short"),
            ("session_secret", "tiny-secret-value"),
        ]);
        let text = c.resolve().missing.join("\n");
        assert!(!text.contains("hunter2-short"));
        assert!(!text.contains("tiny-secret-value"));
        assert!(!format!("{c:?}").contains("hunter2-short"));
    }

    #[test]
    fn a_short_previous_secret_is_ignored() {
        let c = config(&[
            ("chat_password", PASSWORD),
            ("session_secret", SECRET),
            ("session_secret_previous", "old"),
        ]);
        assert!(c.usable_previous_secret().is_none());
        assert!(c.resolve().ready);
    }

    const OIDC: [(&str, &str); 5] = [
        ("oidc_issuer", "https://id.example.com"),
        ("oidc_client_id", "eve"),
        ("oidc_client_secret", "s3cret"),
        ("session_secret", SECRET),
        ("auth_mode", "oidc"),
    ];

    #[test]
    fn oidc_is_not_ready_until_an_allowlist_is_set() {
        let r = config(&OIDC).resolve();
        assert_eq!(r.mode, AuthMode::Oidc);
        assert!(!r.ready);
        assert_eq!(r.missing, vec![missing::OIDC_ALLOWLIST_UNSET]);
        assert!(config(&OIDC).session_codec().is_none());
        for var in ["oidc_allowed_emails", "oidc_allowed_domains"] {
            let mut vars = OIDC.to_vec();
            vars.push((var, "eve@example.com"));
            assert!(config(&vars).resolve().ready, "{var}");
        }
        let mut blank = OIDC.to_vec();
        blank.push(("oidc_allowed_domains", " , "));
        assert!(!config(&blank).resolve().ready);
    }

    #[test]
    fn outside_local_dev_app_base_url_must_be_https_or_loopback() {
        for (url, ok) in [
            ("https://chat.example.com", true),
            ("http://127.0.0.1:3000", true),
            ("http://localhost:3000", true),
            ("http://chat.example.com", false),
            ("http://192.0.2.2:3000", false),
        ] {
            let c = config(&[
                ("chat_password", PASSWORD),
                ("session_secret", SECRET),
                ("app_base_url", url),
            ]);
            let r = c.resolve();
            assert_eq!(r.ready, ok, "{url}: {:?}", r.missing);
            if !ok {
                assert_eq!(r.missing, vec![missing::APP_BASE_URL_NOT_HTTPS]);
            }
            let local = config(&[("auth_mode", "local-dev"), ("app_base_url", url)]);
            assert!(local.resolve().ready, "local-dev may use {url}");
        }
    }

    #[test]
    fn accounts_mode_is_explicit_only_and_needs_a_session_secret() {
        let r = config(&[("auth_mode", "accounts")]).resolve();
        assert_eq!(r.mode, AuthMode::Accounts);
        assert!(!r.ready);
        assert_eq!(r.missing, vec![missing::SESSION_SECRET_UNSET]);
        let c = config(&[("auth_mode", "ACCOUNTS"), ("session_secret", SECRET)]);
        assert!(c.resolve().ready);
        assert_eq!(c.session_codec().unwrap().mode(), AuthMode::Accounts);
        assert!(!c.accounts_oidc());
        // Nothing derives accounts mode.
        let derived = config(&[("admin_setup_token", "t"), ("session_secret", SECRET)]);
        assert_eq!(derived.mode(), AuthMode::Unconfigured);
    }

    #[test]
    fn accounts_mode_reports_half_configured_oidc() {
        let c = config(&[
            ("auth_mode", "accounts"),
            ("session_secret", SECRET),
            ("oidc_issuer", "https://id.example.com"),
        ]);
        assert_eq!(
            c.resolve().missing,
            vec![
                missing::OIDC_CLIENT_ID_UNSET,
                missing::OIDC_CLIENT_SECRET_UNSET,
                missing::OIDC_ALLOWLIST_UNSET
            ]
        );
        let mut full = OIDC.to_vec();
        full.retain(|(k, _)| *k != "auth_mode");
        full.push(("auth_mode", "accounts"));
        full.push(("oidc_allowed_domains", "example.com"));
        assert!(config(&full).accounts_oidc());
    }

    #[test]
    fn signup_domains_and_oidc_admins_match_whole_entries_case_insensitively() {
        let c = config(&[
            ("signup_allowed_domains", "Example.com, team.example.org"),
            ("oidc_admin_emails", "Boss@example.com"),
        ]);
        assert!(c.signup_domain_allowed("ann@example.COM"));
        assert!(c.signup_domain_allowed("bo@team.example.org"));
        assert!(!c.signup_domain_allowed("eve@evil-example.com"));
        assert!(!c.signup_domain_allowed("eve@example.com.evil"));
        assert!(!c.signup_domain_allowed("no-at-sign"));
        assert!(c.oidc_admin("boss@EXAMPLE.com"));
        assert!(!c.oidc_admin("ann@example.com"));
        assert!(!config(&[]).signup_domain_allowed("ann@example.com"));
    }

    #[test]
    fn trusted_proxies_must_be_ips_or_ranges() {
        let ok = config(&[
            ("auth_mode", "local-dev"),
            ("trusted_proxies", "10.0.0.0/8, ::1"),
        ]);
        assert!(ok.resolve().ready);
        assert!(!ok.trusted_proxies().is_empty());
        let bad = config(&[("auth_mode", "local-dev"), ("trusted_proxies", "proxy.lan")]);
        assert_eq!(
            bad.resolve().missing,
            vec![missing::TRUSTED_PROXIES_INVALID]
        );
        assert!(bad.trusted_proxies().is_empty());
    }
}
