//! Setup status, session, password login and logout.

use eve_api::auth::{AuthMode, LoginRequest, Principal, SessionResponse, PASSWORD_PRINCIPAL_ID};
use eve_api::{ApiError, ErrorCode};
use eve_auth::cookie::{cookie_values, SESSION_COOKIE_NAME};
use eve_auth::password::{password_matches, MAX_PASSWORD_BYTES};
use eve_auth::setup::setup_status_for;
use eve_spin::auth as glue;
use spin_sdk::http::Request;

use crate::probe;
use crate::reply::Reply;

/// `GET /api/setup` (for the URL this request arrived at: plain http at a name that is not
/// loopback cannot sign in, and setup says so).
pub fn setup(req: &Request) -> Result<Reply, ApiError> {
    let mut status = setup_status_for(
        &glue::config(),
        &probe::stores(),
        glue::request_origin(req).as_ref(),
    );
    // A hosted provider without its API key cannot answer a single message.
    let models = match eve_agent::config::models(|n| spin_sdk::variables::get(n).ok()) {
        Ok(choices) => eve_agent::config::missing_keys(&choices),
        Err(e) => vec![e],
    };
    if !models.is_empty() {
        status.missing.extend(models);
        status.app_ready = false;
    }
    // Without it eve-proxy cannot sign a single call to the agent (issue 32: no longer derived
    // from session_secret, which the agent does not get).
    let mode = glue::config().mode();
    if let Some(item) =
        eve_agent::connections::jwt::missing(mode, |n| spin_sdk::variables::get(n).ok())
    {
        status.missing.push(item.into());
        status.app_ready = false;
    }
    if status.database_schema_ready {
        // The app reads setup once at load: the chat shows tool calls as the admins chose.
        if let Ok(db) = eve_spin::db::open() {
            status.tool_display = eve_runtime::settings::tool_display(&db).unwrap_or_default();
        }
    }
    Ok(Reply::json(200, &status))
}

/// `GET /api/auth/session`: the viewer or `null`. Reissues a day-old or previous-secret cookie
/// (the UI asks on every load, so an active session stays alive) and clears one that no longer
/// verifies.
pub fn session(req: &Request) -> Result<Reply, ApiError> {
    let config = glue::config();
    let mode = config.mode();
    let session = glue::authenticate_with(&config, req, glue::now_secs())?;
    let had_cookie = req
        .header("cookie")
        .and_then(|v| v.as_str())
        .is_some_and(|c| cookie_values(c, SESSION_COOKIE_NAME).next().is_some());
    let (viewer, cookie) = match session {
        Some(s) => (Some(s.principal), s.refreshed_cookie),
        None if had_cookie => (None, Some(glue::clear_session_cookie())),
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

/// `POST /api/auth/login` `{ "password": "..." }` (accounts mode: `{email, password}`, see
/// [`crate::accounts::login`]): same-origin only; failures are throttled
/// per client address with a growing delay (`eve_spin::ratelimit::login_begin`; successes
/// never count); the comparison takes the same time whatever was supplied.
pub fn login(req: &Request) -> Result<Reply, ApiError> {
    glue::require_same_origin(req)?;
    let config = glue::config();
    let resolution = config.resolve();
    match resolution.mode {
        AuthMode::Password if resolution.ready => {}
        AuthMode::Accounts if resolution.ready => return crate::accounts::login(&config, req),
        AuthMode::Accounts => {
            return Err(ApiError::new(
                ErrorCode::NotConfigured,
                "accounts sign-in is not configured; GET /api/setup lists what is missing",
            ))
        }
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
    glue::require_secure_origin(&config, req)?;
    let body: LoginRequest = eve_spin::json_body(req)?;
    let now = glue::now_secs();
    let attempt = eve_spin::ratelimit::login_begin(
        &glue::client_ip_with(&config, req),
        PASSWORD_PRINCIPAL_ID,
        now,
    )?;
    let supplied = if body.password.len() > MAX_PASSWORD_BYTES {
        ""
    } else {
        body.password.as_str()
    };
    let configured = config.chat_password.as_ref().map(|p| p.expose());
    if !password_matches(configured, supplied) || supplied.is_empty() {
        attempt.failed(now);
        return Err(ApiError::new(ErrorCode::Unauthorized, "wrong password"));
    }
    attempt.succeeded();
    let codec = config
        .session_codec()
        .ok_or_else(|| ApiError::internal("sign-in is not ready"))?;
    let principal = password_principal();
    let signed_in_at = glue::sign_in_time(&principal.id, now)?;
    let (value, claims) = codec.issue_signed_in_at(&principal, now, signed_in_at);
    let cookie = glue::session_set_cookie(&value, claims.max_age(now));
    let body = SessionResponse {
        viewer: Some(principal),
        auth_mode: AuthMode::Password,
    };
    Ok(Reply::json(200, &body).with_cookie(Some(cookie)))
}

/// `POST /api/auth/logout`: voids every session of the signed-in principal (a copied cookie
/// dies too) and clears the cookie. In local-dev the viewer stays the local developer (there
/// is nothing to sign out of).
pub fn logout(req: &Request) -> Result<Reply, ApiError> {
    glue::require_same_origin(req)?;
    let config = glue::config();
    let mode = config.mode();
    let viewer = (mode == AuthMode::LocalDev).then(glue::local_dev_principal);
    if mode != AuthMode::LocalDev {
        // Only a browser's logout ends the principal's browser sessions: a script holding a
        // token cannot sign its owner out everywhere.
        if let Some(session) = glue::authenticate_with(&config, req, glue::now_secs())? {
            if matches!(session.credential, glue::Credential::Cookie { .. }) {
                glue::revoke_sessions(&session.principal.id, glue::now_secs())?;
            }
        }
    }
    let cookie = glue::clear_session_cookie();
    Ok(Reply::json(
        200,
        &SessionResponse {
            viewer,
            auth_mode: mode,
        },
    )
    .with_cookie(Some(cookie)))
}
