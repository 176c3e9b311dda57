//! Who may use `/api/admin/*`: a signed-in principal (else 401) whose account is an enabled
//! admin now (else 403 `forbidden`): the role is read from SQL on every request, never from
//! the cookie, so a demotion or a disable takes effect on the next request. In `local-dev` the
//! one local developer is an admin (that mode serves only the developer's own machine); the
//! shared password of `password` mode is not. State-changing requests must come from the
//! app's own pages, and need a browser session (an API token only reads).

use eve_accounts::audit::{self, AuditEntry};
use eve_api::auth::AuthMode;
use eve_api::{ApiError, ErrorCode};
use eve_spin::auth::{self as glue, Credential};
use eve_spin::db::{self, now_ms, Db};
use spin_sdk::http::{Method, Request};

/// An admitted admin: the database, the admin's account id (`None`: the local developer,
/// who has no account) and principal.
pub struct Admin {
    pub db: Db,
    pub account_id: Option<String>,
    pub principal: String,
}

/// 401 / 403 before anything else is looked at.
pub fn admit(req: &Request) -> Result<Admin, ApiError> {
    glue::require_same_origin(req)?;
    let session = glue::authenticate_session(req)?;
    token_may(req.method(), &session.credential)?;
    let principal = session.principal;
    let db = db::open()?;
    let account_id = match principal.mode {
        AuthMode::LocalDev => None,
        _ => Some(eve_accounts::admin::require_admin(&db, &principal.id)?),
    };
    Ok(Admin {
        db,
        account_id,
        principal: principal.id,
    })
}

/// An API token reads the admin routes; it changes nothing there (403 `forbidden`). A leaked
/// token must not outlive its revocation: an invitation, a reset link, a role, a provider key
/// it made would. Every admin change needs a browser session.
fn token_may(method: &Method, credential: &Credential) -> Result<(), ApiError> {
    match (method, credential) {
        (Method::Get | Method::Head, _) => Ok(()),
        (_, Credential::Token { .. }) => Err(ApiError::forbidden(
            "an API token cannot change anything at /api/admin: sign in with a browser",
        )),
        _ => Ok(()),
    }
}

impl Admin {
    /// The admin's account, for what only accounts mode has (invitations, reset links): the
    /// local developer has none, and is told so (409 `conflict`).
    pub fn account(&self) -> Result<&str, ApiError> {
        self.account_id.as_deref().ok_or_else(|| {
            ApiError::new(
                ErrorCode::Conflict,
                "local-dev has no accounts: invitations and reset links need auth_mode = accounts",
            )
        })
    }

    /// Records an admin action; a failed write fails the request (an admin action is not
    /// done unless it is on the record — the action itself is idempotent to retry).
    pub fn record(
        &self,
        action: &str,
        target: Option<&str>,
        detail: Option<serde_json::Value>,
    ) -> Result<(), ApiError> {
        audit::record(
            &self.db,
            &AuditEntry {
                at_ms: now_ms(),
                actor: Some(&self.principal),
                action,
                target,
                detail,
            },
        )
        .map_err(eve_accounts::common::db_error)
    }
}

/// The app's public base URL for links (`app_base_url`, else this request's origin).
pub fn base_url(req: &Request) -> Result<String, ApiError> {
    glue::base_origin(&glue::config(), req)
        .map(|o| o.serialize())
        .ok_or_else(|| ApiError::bad_request("cannot tell this app's URL; set app_base_url"))
}

/// A query parameter's value.
pub fn query_param(req: &Request, name: &str) -> Option<String> {
    form_urlencoded::parse(req.query().as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}
