//! `/api/tokens`: the caller's API tokens (list, create, revoke). The rules are
//! `eve_auth::api_token`; this module parses, checks who is calling, audits and replies.

use eve_accounts::audit::{self, AuditEntry};
use eve_api::auth::AuthMode;
use eve_api::tokens::{CreateTokenRequest, CreateTokenResponse, TokenList};
use eve_api::ApiError;
use eve_auth::api_token::{self, Revoked, TokenError};
use eve_spin::auth::{self as glue, Credential, Session};
use eve_spin::db;
use spin_sdk::http::Request;

use crate::reply::Reply;

/// The route prefix of one token (`/api/tokens/:id`).
pub const TOKEN_PATH_PREFIX: &str = "/api/tokens/";

/// The signed-in caller, or 401.
fn signed_in(req: &Request) -> Result<Session, ApiError> {
    glue::authenticate_session(req)
}

fn failed(e: TokenError) -> ApiError {
    if let TokenError::Db(message) = &e {
        eprintln!("tokens: database error: {message}");
    }
    e.api_error()
}

/// `GET /api/tokens`: the caller's tokens, newest first. Local-dev has no sign-in and so no
/// tokens: an empty list.
pub fn list(req: &Request) -> Result<Reply, ApiError> {
    let session = signed_in(req)?;
    if session.credential == Credential::LocalDev {
        return Ok(Reply::json(200, &TokenList { tokens: Vec::new() }));
    }
    let db = db::open()?;
    let tokens = api_token::list(&db, &session.principal.id).map_err(failed)?;
    Ok(Reply::json(200, &TokenList { tokens }))
}

/// `POST /api/tokens` `{name, expiresInDays?}`: 201 with the token, shown this once. A caller
/// that authenticated with a token is refused (403): a leaked token cannot mint a
/// longer-lived one. Audited as `token_created`; if the entry cannot be written the token is
/// revoked at once and the request fails (no token exists that the audit log does not show).
pub fn create(req: &Request) -> Result<Reply, ApiError> {
    glue::require_same_origin(req)?;
    let session = signed_in(req)?;
    match session.credential {
        Credential::Token { .. } => {
            return Err(ApiError::forbidden(
                "an API token cannot create API tokens: sign in to create one",
            ))
        }
        Credential::LocalDev => {
            return Err(ApiError::bad_request(format!(
            "API tokens need a sign-in mode (password, OIDC or accounts); auth mode {} has none",
            AuthMode::LocalDev.as_str()
        )))
        }
        Credential::Cookie { .. } => {}
    }
    let body: CreateTokenRequest = eve_spin::json_body(req)?;
    let db = db::open()?;
    let now = db::now_ms();
    let principal = &session.principal;
    let new =
        api_token::create(&db, principal, &body.name, body.expires_in_days, now).map_err(failed)?;
    let entry = AuditEntry {
        at_ms: now,
        actor: Some(&principal.id),
        action: "token_created",
        target: Some(&new.info.id),
        detail: Some(
            serde_json::json!({ "name": new.info.name, "expiresAt": new.info.expires_at }),
        ),
    };
    if let Err(e) = audit::record(&db, &entry) {
        eprintln!("tokens: audit entry not written ({e}); revoking the new token");
        let _ = api_token::revoke(&db, &principal.id, &new.info.id, now);
        return Err(db::unavailable());
    }
    let answer = CreateTokenResponse {
        token: new.token,
        info: new.info,
    };
    Ok(Reply::json(201, &answer))
}

/// `DELETE /api/tokens/:id`: 204, also when it was revoked already; another principal's token
/// is 404 like an unknown one. A token may revoke itself (or a sibling). Audited as
/// `token_revoked` the first time; a failed entry is logged, the revocation stands.
pub fn revoke(req: &Request, id: &str) -> Result<Reply, ApiError> {
    glue::require_same_origin(req)?;
    let session = signed_in(req)?;
    if session.credential == Credential::LocalDev {
        return Err(TokenError::NotFound.api_error());
    }
    let db = db::open()?;
    let now = db::now_ms();
    let actor = &session.principal.id;
    if api_token::revoke(&db, actor, id, now).map_err(failed)? == Revoked::Now {
        let entry = AuditEntry {
            at_ms: now,
            actor: Some(actor),
            action: "token_revoked",
            target: Some(id),
            detail: None,
        };
        if let Err(e) = audit::record(&db, &entry) {
            eprintln!("tokens: audit entry for revoking {id} not written: {e}");
        }
    }
    Ok(Reply::empty(204))
}
