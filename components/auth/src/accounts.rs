//! Accounts mode's sign-in routes (`docs/accounts.md`): sign-up, account login, invitation
//! lookup, password change, reset links, own settings. The decisions are `eve_accounts`';
//! this module parses, throttles, records the audit entry and sets the cookie.

use eve_accounts::accounts::{self, Account};
use eve_accounts::audit::{self, AuditEntry};
use eve_accounts::{invites, resets, signup};
use eve_api::accounts::{
    AccountLoginRequest, AccountPatch, InviteLookup, PasswordChangeRequest, ResetRequest,
    SignupRequest,
};
use eve_api::auth::{AuthMode, Principal, SessionResponse};
use eve_api::{ApiError, ErrorCode};
use eve_auth::AuthConfig;
use eve_spin::auth as glue;
use eve_spin::db::{self, now_ms, Db};
use spin_sdk::http::Request;

use crate::reply::Reply;

/// The throttle's account key of sign-ups (setup token and invitation guesses count as
/// failures of the address, as wrong passwords do).
const SIGNUP_THROTTLE_ACCOUNT: &str = "accounts:signup";

/// The principal of an account's session.
pub fn principal(account: &Account) -> Principal {
    Principal {
        id: account.principal_id(),
        mode: AuthMode::Accounts,
        name: account.display_name.clone(),
        email: Some(account.email.clone()),
    }
}

/// The configuration when accounts mode is the ready mode; else why not.
fn accounts_config() -> Result<AuthConfig, ApiError> {
    let config = glue::config();
    let resolution = config.resolve();
    match resolution.mode {
        AuthMode::Accounts if resolution.ready => Ok(config),
        AuthMode::Accounts => Err(ApiError::new(
            ErrorCode::NotConfigured,
            "accounts sign-in is not configured; GET /api/setup lists what is missing",
        )),
        mode => Err(ApiError::bad_request(format!(
            "accounts are not enabled (auth mode {})",
            mode.as_str()
        ))),
    }
}

/// The `Set-Cookie` that signs `account` in (dated past any revocation in this second).
fn session_cookie(config: &AuthConfig, account: &Account) -> Result<String, ApiError> {
    let codec = config
        .session_codec()
        .ok_or_else(|| ApiError::internal("sign-in is not ready"))?;
    let principal = principal(account);
    let now = glue::now_secs();
    let signed_in_at = glue::sign_in_time(&principal.id, now)?;
    let (value, claims) = codec.issue_signed_in_at(&principal, now, signed_in_at);
    Ok(glue::session_set_cookie(&value, claims.max_age(now)))
}

/// `SessionResponse` for `account` with its session cookie.
fn session_reply(config: &AuthConfig, account: &Account, status: u16) -> Result<Reply, ApiError> {
    let cookie = session_cookie(config, account)?;
    let body = SessionResponse {
        viewer: Some(principal(account)),
        auth_mode: AuthMode::Accounts,
    };
    Ok(Reply::json(status, &body).with_cookie(Some(cookie)))
}

fn record(
    db: &Db,
    actor: Option<&str>,
    action: &str,
    target: Option<&str>,
    detail: Option<serde_json::Value>,
) {
    audit::record_best_effort(
        db,
        &AuditEntry {
            at_ms: now_ms(),
            actor,
            action,
            target,
            detail,
        },
    );
}

/// Runs `act` as a sign-in attempt on `account_key` from the caller's address: a throttled
/// attempt is answered 429 before `act` runs (so before any hashing); a refusal that
/// `counts` is a failure of the address and the key, anything else clears the address.
fn throttled<T>(
    config: &AuthConfig,
    req: &Request,
    account_key: &str,
    counts: impl Fn(&ApiError) -> bool,
    act: impl FnOnce() -> Result<T, ApiError>,
) -> Result<T, ApiError> {
    let now = glue::now_secs();
    let ip = glue::client_ip_with(config, req);
    let attempt = eve_spin::ratelimit::login_begin(&ip, account_key, now)?;
    let result = act();
    match &result {
        Err(e) if counts(e) => attempt.failed(now),
        _ => attempt.succeeded(),
    }
    result
}

/// Every refusal of a sign-up, sign-in or reset counts as a failed attempt.
fn counts_all(_: &ApiError) -> bool {
    true
}

/// `POST /api/auth/signup`: 201 with the session cookie. Refusals count against the
/// address like failed sign-ins (a setup token or invitation cannot be guessed at speed).
pub fn signup(req: &Request) -> Result<Reply, ApiError> {
    glue::require_same_origin(req)?;
    let mut config = accounts_config()?;
    glue::require_secure_origin(&config, req)?;
    let body: SignupRequest = eve_spin::json_body(req)?;
    let db = db::open()?;
    // The `signupDomains` setting, else `signup_allowed_domains`: read per sign-up.
    let open_domains =
        eve_runtime::settings::signup_domains(&db, config.signup_allowed_domains.as_deref())?;
    config.signup_allowed_domains = Some(open_domains.join(","));
    let (account, way) = throttled(&config, req, SIGNUP_THROTTLE_ACCOUNT, counts_all, || {
        signup::sign_up(&db, &config, &body, now_ms())
    })?;
    let p = account.principal_id();
    let detail = serde_json::json!({"way": way.as_str(), "role": account.role.as_str()});
    record(&db, Some(&p), "signup", Some(&p), Some(detail));
    session_reply(&config, &account, 201)
}

/// `POST /api/auth/login` `{email, password}` in accounts mode: one 401 text for an unknown
/// email, a wrong password and a disabled account, and one argon2 verify for each; a refused
/// (throttled) attempt is answered before any hashing.
pub fn login(config: &AuthConfig, req: &Request) -> Result<Reply, ApiError> {
    glue::require_secure_origin(config, req)?;
    let body: AccountLoginRequest = eve_spin::json_body(req)?;
    let email = body.email.trim().to_lowercase();
    let db = db::open()?;
    let account = throttled(config, req, &email, counts_all, || {
        accounts::login(&db, &email, &body.password, now_ms()).inspect_err(|_| {
            let email: String = email.chars().take(254).collect();
            let detail = serde_json::json!({"email": email});
            record(&db, None, "signin_failed", None, Some(detail));
        })
    })?;
    let p = account.principal_id();
    record(&db, Some(&p), "signin", Some(&p), None);
    session_reply(config, &account, 200)
}

/// `POST /api/auth/invite` `{token}`: what the invitation offers, or 404 `invite_invalid`.
/// The token comes in the body (the link carries it in the fragment, which no server sees),
/// so it is in no URL and no access log. Throttled per address like `chat:create` (a lookup
/// costs one indexed read).
pub fn invite(req: &Request) -> Result<Reply, ApiError> {
    glue::require_same_origin(req)?;
    let config = accounts_config()?;
    eve_spin::ratelimit::check(
        "accounts:invite-lookup",
        &glue::client_ip_with(&config, req),
        60,
        15 * 60,
    )?;
    let body: InviteLookup = eve_spin::json_body(req)?;
    let db = db::open()?;
    Ok(Reply::json(
        200,
        &invites::info(&db, &body.token, now_ms())?,
    ))
}

/// The signed-in account, or 401 (also for a signed-in principal that is no account).
fn signed_in_account(req: &Request, db: &Db) -> Result<Account, ApiError> {
    let principal = glue::authenticate(req)?;
    accounts::by_principal(db, &principal.id)?
        .filter(|a| !a.disabled)
        .ok_or_else(ApiError::unauthorized)
}

/// A new password ends what the old one let anyone start: every session signed in up to now,
/// and every API token (a `token_revoked` entry each).
fn end_sessions_and_tokens(db: &Db, principal_id: &str) -> Result<(), ApiError> {
    glue::revoke_sessions(principal_id, glue::now_secs())?;
    let revoked =
        eve_auth::api_token::revoke_all(db, principal_id, now_ms()).map_err(|e| e.api_error())?;
    for id in revoked {
        let detail = serde_json::json!({"via": "password_changed"});
        record(
            db,
            Some(principal_id),
            "token_revoked",
            Some(&id),
            Some(detail),
        );
    }
    Ok(())
}

/// `POST /api/auth/password`: 204 and a fresh cookie for this browser; every other session of
/// the account ends (its sessions signed in up to now are revoked), and every API token.
pub fn change_password(req: &Request) -> Result<Reply, ApiError> {
    glue::require_same_origin(req)?;
    let config = accounts_config()?;
    let body: PasswordChangeRequest = eve_spin::json_body(req)?;
    let db = db::open()?;
    let account = signed_in_account(req, &db)?;
    // Only a wrong current password is a guess; a weak new one is not.
    let wrong_password = |e: &ApiError| e.code == ErrorCode::InvalidCredentials;
    throttled(&config, req, &account.email, wrong_password, || {
        accounts::change_password(&db, &account, &body.current_password, &body.new_password)
    })?;
    let p = account.principal_id();
    end_sessions_and_tokens(&db, &p)?;
    record(&db, Some(&p), "password_changed", Some(&p), None);
    let cookie = session_cookie(&config, &account)?;
    Ok(Reply::empty(204).with_cookie(Some(cookie)))
}

/// `POST /api/auth/reset` `{token, newPassword}`: spends the link, sets the password, ends
/// every other session and API token, and signs this browser in.
pub fn reset(req: &Request) -> Result<Reply, ApiError> {
    glue::require_same_origin(req)?;
    let config = accounts_config()?;
    glue::require_secure_origin(&config, req)?;
    let body: ResetRequest = eve_spin::json_body(req)?;
    let db = db::open()?;
    let account = throttled(&config, req, SIGNUP_THROTTLE_ACCOUNT, counts_all, || {
        resets::spend(&db, &body.token, &body.new_password, now_ms())
    })?;
    let p = account.principal_id();
    end_sessions_and_tokens(&db, &p)?;
    record(
        &db,
        Some(&p),
        "password_changed",
        Some(&p),
        Some(serde_json::json!({"via": "reset"})),
    );
    session_reply(&config, &account, 200)
}

/// `GET /api/auth/account`.
pub fn account(req: &Request) -> Result<Reply, ApiError> {
    accounts_config()?;
    let db = db::open()?;
    Ok(Reply::json(200, &signed_in_account(req, &db)?.settings()))
}

/// `PATCH /api/auth/account` `{displayName?, language?, defaultModel?}`.
pub fn patch_account(req: &Request) -> Result<Reply, ApiError> {
    glue::require_same_origin(req)?;
    accounts_config()?;
    let patch: AccountPatch = eve_spin::json_body(req)?;
    let db = db::open()?;
    let account = signed_in_account(req, &db)?;
    // The models the agent offers now: the variables' and the admins' providers'.
    let models: Vec<String> =
        eve_agent::offered::choices(|n| spin_sdk::variables::get(n).ok(), &db)
            .map(|choices| choices.into_iter().map(|c| c.id).collect())
            .unwrap_or_default();
    may_default_to(&db, &account, &patch, &models)?;
    let settings = accounts::patch_settings(&db, &account.id, &patch, &models)?;
    Ok(Reply::json(200, &settings))
}

/// A member's default model must be one it may use (403 `model_not_allowed`, as the agent
/// answers a message naming it); an id the deployment does not offer is `patch_settings`' 400.
fn may_default_to(
    db: &Db,
    account: &Account,
    patch: &AccountPatch,
    models: &[String],
) -> Result<(), ApiError> {
    let Some(Some(model)) = &patch.default_model else {
        return Ok(());
    };
    if !models.contains(model) {
        return Ok(());
    }
    let standing = eve_usage::standing::read(db, &account.principal_id())
        .map_err(eve_accounts::common::db_error)?;
    eve_usage::access::check_model(&standing, model)
}
