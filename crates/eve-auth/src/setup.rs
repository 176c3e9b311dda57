//! `GET /api/setup`: the seed's SetupStatus, computed from the sign-in configuration and what
//! the component found when it probed its stores.

use eve_api::auth::{SetupStatus, StorageMode};

use crate::config::AuthConfig;
use crate::origin::Origin;

/// What probing the stores found (the glue opens them; this stays pure).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreProbe {
    /// The SQLite database `default` could be opened.
    pub database_configured: bool,
    /// It answered a query.
    pub database_ready: bool,
    /// The chat tables exist.
    pub database_schema_ready: bool,
    /// The key-value store `default` could be opened.
    pub rate_limit_ready: bool,
    /// Accounts mode: an admin account exists (the setup token has been used). Ignored in
    /// the other modes.
    pub admin_exists: bool,
}

/// Missing-item texts for the stores.
pub mod missing {
    pub const DATABASE_UNAVAILABLE: &str =
        "database: the SQLite database \"default\" could not be opened (check the runtime config)";
    pub const DATABASE_NOT_ANSWERING: &str = "database: the SQLite database did not answer a query";
    pub const DATABASE_MIGRATIONS: &str = "database migrations";
    pub const RATE_LIMIT_STORE: &str =
        "rate limit store: the key-value store \"default\" could not be opened (check the runtime config)";
}

/// The setup status: auth items first (see [`AuthConfig::resolve`]), then store items.
pub fn setup_status(config: &AuthConfig, probe: &StoreProbe) -> SetupStatus {
    let auth = config.resolve();
    let mut items = auth.missing;
    if !probe.database_configured {
        items.push(missing::DATABASE_UNAVAILABLE.into());
    } else if !probe.database_ready {
        items.push(missing::DATABASE_NOT_ANSWERING.into());
    } else if !probe.database_schema_ready {
        items.push(missing::DATABASE_MIGRATIONS.into());
    }
    if !probe.rate_limit_ready {
        items.push(missing::RATE_LIMIT_STORE.into());
    }
    let accounts_need_admin = auth.mode == eve_api::auth::AuthMode::Accounts
        && database_schema_ready_of(probe)
        && !probe.admin_exists;
    // Without the token (or an OIDC admin list) nobody could ever become the first admin.
    let admin_unreachable = accounts_need_admin
        && config.admin_setup_token.is_none()
        && !(config.accounts_oidc() && config.oidc_admin_emails.is_some());
    if admin_unreachable {
        items.push(crate::config::missing::ADMIN_SETUP_TOKEN_UNSET.into());
    }
    let database_ready = probe.database_configured && probe.database_ready;
    let database_schema_ready = database_ready && probe.database_schema_ready;
    let auth_ready = auth.ready && !admin_unreachable;
    SetupStatus {
        app_ready: auth_ready && database_schema_ready && probe.rate_limit_ready,
        auth_mode: auth.mode,
        auth_ready,
        database_configured: probe.database_configured,
        database_ready,
        database_schema_ready,
        rate_limit_ready: probe.rate_limit_ready,
        storage_mode: StorageMode::Database,
        missing: items,
        accounts_need_admin,
        tool_display: Default::default(),
    }
}

fn database_schema_ready_of(probe: &StoreProbe) -> bool {
    probe.database_configured && probe.database_ready && probe.database_schema_ready
}

/// [`setup_status`] for a request that reached the app at `requested`: sign-in over plain http
/// at a non-loopback name cannot work (see [`AuthConfig::insecure_origin`]), and setup says so.
pub fn setup_status_for(
    config: &AuthConfig,
    probe: &StoreProbe,
    requested: Option<&Origin>,
) -> SetupStatus {
    let mut status = setup_status(config, probe);
    if config.insecure_origin(requested) {
        status
            .missing
            .insert(0, crate::config::missing::PLAIN_HTTP_REQUEST.into());
        status.auth_ready = false;
        status.app_ready = false;
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::missing as auth_missing;
    use eve_api::auth::AuthMode;

    const ALL_UP: StoreProbe = StoreProbe {
        database_configured: true,
        database_ready: true,
        database_schema_ready: true,
        rate_limit_ready: true,
        admin_exists: false,
    };

    fn config(vars: &[(&str, &str)]) -> AuthConfig {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        AuthConfig::from_lookup(|n| vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone()))
    }

    #[test]
    fn local_dev_with_all_stores_up_is_app_ready_with_nothing_missing() {
        let s = setup_status(&config(&[("auth_mode", "local-dev")]), &ALL_UP);
        assert!(s.app_ready && s.auth_ready);
        assert_eq!(s.auth_mode, AuthMode::LocalDev);
        assert_eq!(s.storage_mode, StorageMode::Database);
        assert!(s.missing.is_empty());
    }

    #[test]
    fn pending_migrations_are_reported_and_block_app_ready() {
        let probe = StoreProbe {
            database_schema_ready: false,
            ..ALL_UP
        };
        let s = setup_status(&config(&[("auth_mode", "local-dev")]), &probe);
        assert!(!s.app_ready);
        assert!(s.database_ready && !s.database_schema_ready);
        assert_eq!(s.missing, vec![missing::DATABASE_MIGRATIONS]);
    }

    #[test]
    fn an_unopenable_database_is_neither_ready_nor_schema_ready() {
        let probe = StoreProbe {
            database_configured: false,
            database_ready: true,
            ..ALL_UP
        };
        let s = setup_status(&config(&[("auth_mode", "local-dev")]), &probe);
        assert!(!s.database_ready && !s.database_schema_ready && !s.app_ready);
        assert_eq!(s.missing, vec![missing::DATABASE_UNAVAILABLE]);
    }

    #[test]
    fn a_missing_key_value_store_blocks_app_ready() {
        let probe = StoreProbe {
            rate_limit_ready: false,
            ..ALL_UP
        };
        let s = setup_status(&config(&[("auth_mode", "local-dev")]), &probe);
        assert!(!s.app_ready && !s.rate_limit_ready);
        assert_eq!(s.missing, vec![missing::RATE_LIMIT_STORE]);
    }

    #[test]
    fn an_unconfigured_deployment_lists_the_auth_items_first() {
        let s = setup_status(
            &config(&[]),
            &StoreProbe {
                database_schema_ready: false,
                ..ALL_UP
            },
        );
        assert_eq!(s.auth_mode, AuthMode::Unconfigured);
        assert!(!s.auth_ready && !s.app_ready);
        assert_eq!(
            s.missing,
            vec![
                auth_missing::NO_MODE,
                auth_missing::SESSION_SECRET_UNSET,
                missing::DATABASE_MIGRATIONS
            ]
        );
    }

    #[test]
    fn accounts_mode_without_an_admin_needs_the_setup_token() {
        const SECRET: &str = "0123456789abcdef0123456789abcdef";
        let bare = config(&[("auth_mode", "accounts"), ("session_secret", SECRET)]);
        let s = setup_status(&bare, &ALL_UP);
        assert!(s.accounts_need_admin && !s.auth_ready && !s.app_ready);
        assert_eq!(s.missing, vec![auth_missing::ADMIN_SETUP_TOKEN_UNSET]);
        let with_token = config(&[
            ("auth_mode", "accounts"),
            ("session_secret", SECRET),
            ("admin_setup_token", "a-long-enough-setup-token"),
        ]);
        let s = setup_status(&with_token, &ALL_UP);
        assert!(s.accounts_need_admin && s.app_ready && s.missing.is_empty());
        let admin = StoreProbe {
            admin_exists: true,
            ..ALL_UP
        };
        let s = setup_status(&bare, &admin);
        assert!(!s.accounts_need_admin && s.app_ready && s.missing.is_empty());
        let s = setup_status(&config(&[("auth_mode", "local-dev")]), &ALL_UP);
        assert!(!s.accounts_need_admin);
    }

    #[test]
    fn sign_in_over_plain_http_is_ready_only_on_loopback_names() {
        let c = config(&[
            ("chat_password", "correct horse battery"),
            ("session_secret", "0123456789abcdef0123456789abcdef"),
        ]);
        for (url, ready) in [
            ("http://127.0.0.1:3000", true),
            ("http://localhost:3000", true),
            ("https://chat.example.com", true),
            ("http://chat.example.com", false),
        ] {
            let s = setup_status_for(&c, &ALL_UP, Origin::parse(url).as_ref());
            assert_eq!(s.auth_ready, ready, "{url}");
            assert_eq!(s.app_ready, ready, "{url}");
            assert_eq!(
                s.missing.first().map(String::as_str) == Some(auth_missing::PLAIN_HTTP_REQUEST),
                !ready
            );
        }
        let local = config(&[("auth_mode", "local-dev")]);
        let s = setup_status_for(&local, &ALL_UP, Origin::parse("http://x.example").as_ref());
        assert!(s.auth_ready);
    }
}
