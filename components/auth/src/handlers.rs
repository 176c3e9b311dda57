//! Setup status, session, password login and logout.

use eve_api::auth::{AuthMode, LoginRequest, Principal, SessionResponse, PASSWORD_PRINCIPAL_ID};
use eve_api::{ApiError, ErrorCode};
use eve_auth::cookie::{cookie_values, SESSION_COOKIE_NAME};
use eve_auth::password::{
    password_matches, LOGIN_ATTEMPTS_PER_ACCOUNT, LOGIN_ATTEMPTS_PER_ADDRESS, LOGIN_WINDOW_SECS,
    MAX_PASSWORD_BYTES,
};
use eve_auth::setup::setup_status;
use eve_spin::auth as glue;
use spin_sdk::http::Request;

use crate::probe;
use crate::reply::Reply;

/// Rate-limit prefixes of the login throttles (`rate:<prefix>:<subject>:<window>`).
pub const LOGIN_ADDRESS_PREFIX: &str = "login:addr";
pub const LOGIN_ACCOUNT_PREFIX: &str = "login:account";

/// `GET /api/setup`.
pub fn setup(_req: &Request) -> Result<Reply, ApiError> {
    let status = setup_status(&glue::config(), &probe::stores());
    Ok(Reply::json(200, &status))
}

/// `GET /api/auth/session`: the viewer or `null`. Reissues a day-old or previous-secret cookie
/// (the UI asks on every load, so an active session stays alive) and clears one that no longer
/// verifies.
pub fn session(req: &Request) -> Result<Reply, ApiError> {
    let config = glue::config();
    let mode = config.mode();
    let session = glue::authenticate_with(&config, req, glue::now_secs());
    let had_cookie = req
        .header("cookie")
        .and_then(|v| v.as_str())
        .is_some_and(|c| cookie_values(c, SESSION_COOKIE_NAME).next().is_some());
    let (viewer, cookie) = match session {
        Some(s) => (Some(s.principal), s.refreshed_cookie),
        None if had_cookie => (None, Some(glue::clear_session_cookie(&config, req))),
        None => (None, None),
    };
    Ok(Reply::json(
        200,
        &SessionResponse {
            viewer,
            auth_mode: mode,
        },
    )
    .with_cookie(cookie))
}

/// The one principal password-mode users share.
fn password_principal() -> Principal {
    Principal {
        id: PASSWORD_PRINCIPAL_ID.into(),
        mode: AuthMode::Password,
        name: Some("eve-chat user".into()),
        email: None,
    }
}

/// `POST /api/auth/login` `{ "password": "..." }`: same-origin only; throttled per client
/// address and for the shared account (every attempt counts; a success clears the address's
/// count); the comparison takes the same time whatever was supplied.
pub fn login(req: &Request) -> Result<Reply, ApiError> {
    glue::require_same_origin(req)?;
    let config = glue::config();
    let resolution = config.resolve();
    match resolution.mode {
        AuthMode::Password if resolution.ready => {}
        AuthMode::Password | AuthMode::Unconfigured => {
            return Err(ApiError::new(
                ErrorCode::NotConfigured,
                "password sign-in is not configured; GET /api/setup lists what is missing",
            ))
        }
        AuthMode::LocalDev | AuthMode::Oidc => {
            return Err(ApiError::bad_request(format!(
                "password sign-in is not enabled (auth mode {})",
                resolution.mode.as_str()
            )))
        }
    }
    let body: LoginRequest = eve_spin::json_body(req)?;
    eve_spin::ratelimit::check(
        LOGIN_ADDRESS_PREFIX,
        &glue::client_ip(req),
        LOGIN_ATTEMPTS_PER_ADDRESS,
        LOGIN_WINDOW_SECS,
    )?;
    eve_spin::ratelimit::check(
        LOGIN_ACCOUNT_PREFIX,
        PASSWORD_PRINCIPAL_ID,
        LOGIN_ATTEMPTS_PER_ACCOUNT,
        LOGIN_WINDOW_SECS,
    )?;
    let supplied = if body.password.len() > MAX_PASSWORD_BYTES {
        ""
    } else {
        body.password.as_str()
    };
    let configured = config.chat_password.as_ref().map(|p| p.expose());
    if !password_matches(configured, supplied) || supplied.is_empty() {
        return Err(ApiError::new(ErrorCode::Unauthorized, "wrong password"));
    }
    // Signed in: this address starts afresh (the shared account's count stays, so guessing
    // from many addresses is still slowed). Best effort: a failure only keeps the count.
    let _ = eve_spin::ratelimit::reset(
        LOGIN_ADDRESS_PREFIX,
        &glue::client_ip(req),
        LOGIN_WINDOW_SECS,
    );
    let codec = config
        .session_codec()
        .ok_or_else(|| ApiError::internal("sign-in is not ready"))?;
    let principal = password_principal();
    let (value, claims) = codec.issue(&principal, glue::now_secs());
    let cookie = glue::session_set_cookie(&config, req, &value, claims.max_age(claims.iat));
    let body = SessionResponse {
        viewer: Some(principal),
        auth_mode: AuthMode::Password,
    };
    Ok(Reply::json(200, &body).with_cookie(Some(cookie)))
}

/// `POST /api/auth/logout`: clears the session cookie. In local-dev the viewer stays the
/// local developer (there is nothing to sign out of).
pub fn logout(req: &Request) -> Result<Reply, ApiError> {
    glue::require_same_origin(req)?;
    let config = glue::config();
    let mode = config.mode();
    let viewer = (mode == AuthMode::LocalDev).then(glue::local_dev_principal);
    let cookie = glue::clear_session_cookie(&config, req);
    Ok(Reply::json(
        200,
        &SessionResponse {
            viewer,
            auth_mode: mode,
        },
    )
    .with_cookie(Some(cookie)))
}
