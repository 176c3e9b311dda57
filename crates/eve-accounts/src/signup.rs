//! `POST /api/auth/signup`: which way in a sign-up takes (setup token, invitation, open
//! domain), decided here; the component only parses and replies.

use eve_api::accounts::{Role, SignupRequest};
use eve_api::{ApiError, ErrorCode};
use eve_auth::crypto::{ct_eq, sha256};
use eve_auth::AuthConfig;
use eve_store::sql::Sql;

use crate::accounts::{self, Account, NewAccount};
use crate::invites;

/// How the account was let in (for the audit log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    SetupToken,
    Invite,
    OpenDomain,
}

impl Way {
    pub fn as_str(self) -> &'static str {
        match self {
            Way::SetupToken => "setup_token",
            Way::Invite => "invite",
            Way::OpenDomain => "open_domain",
        }
    }
}

/// Whether `presented` is the configured setup token (compared as hashes, in constant time).
pub fn setup_token_matches(config: &AuthConfig, presented: &str) -> bool {
    config.admin_setup_token.as_ref().is_some_and(|t| {
        ct_eq(
            &sha256(t.expose().as_bytes()),
            &sha256(presented.as_bytes()),
        )
    })
}

fn wrong_setup_token() -> ApiError {
    ApiError::forbidden("the setup token is wrong")
}

/// Creates the account a sign-up asks for, or refuses it with nothing written: a setup token
/// makes the first admin (once); an invitation gives its role; neither, a member when the
/// email's domain is in `signup_allowed_domains`, else 403 `signup_closed`. An address in
/// `oidc_admin_emails` is the identity provider's: only the setup token signs it up with a
/// password (403 `forbidden` otherwise).
pub fn sign_up(
    db: &dyn Sql,
    config: &AuthConfig,
    req: &SignupRequest,
    now_ms: i64,
) -> Result<(Account, Way), ApiError> {
    let new = NewAccount::parse(&req.email, &req.password, req.display_name.as_deref())?;
    if let Some(token) = req.setup_token.as_deref().filter(|t| !t.is_empty()) {
        if !setup_token_matches(config, token) {
            return Err(wrong_setup_token());
        }
        return Ok((
            accounts::create_first_admin(db, &new, now_ms)?,
            Way::SetupToken,
        ));
    }
    if config.oidc_admin(&new.email) {
        // The identity provider makes this address an admin at its first sign-in; a password
        // account squatting the address first would keep that sign-in out for good.
        return Err(ApiError::forbidden(
            "this email address signs in with the identity provider",
        ));
    }
    if let Some(token) = req.invite_token.as_deref().filter(|t| !t.is_empty()) {
        let role = invites::claim(db, token, &new.id, &new.email, now_ms)?;
        return match accounts::create(db, &new, role, now_ms) {
            Ok(account) => Ok((account, Way::Invite)),
            Err(e) => {
                invites::release(db, token, &new.id)?;
                Err(e)
            }
        };
    }
    if config.signup_domain_allowed(&new.email) {
        return Ok((
            accounts::create(db, &new, Role::Member, now_ms)?,
            Way::OpenDomain,
        ));
    }
    Err(ApiError::new(
        ErrorCode::SignupClosed,
        "sign-up needs an invitation for this email address",
    ))
}
