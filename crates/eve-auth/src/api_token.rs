//! API tokens for programmatic clients (eve's CLI, scripts): `evc_<id>_<secret>`, shown once,
//! stored as its SHA-256 only, expiring, revocable, its last use recorded. `docs/accounts.md`
//! ("Tokens") is the contract; the SQL is [`crate::api_token_sql`].
//!
//! The id is public (it names the token in lists and in `DELETE /api/tokens/:id`); the secret
//! is 32 random bytes. A presented token is looked up by its id and its hash compared in
//! constant time, so neither the lookup nor the comparison tells how much of a guess was right.

use eve_api::auth::{AuthMode, Principal};
use eve_api::tokens::ApiTokenInfo;
use eve_api::{ApiError, ErrorCode};
use eve_store::sql::{Sql, SqlRow, SqlValue};
use eve_store::time::{format_iso_ms, Millis};

use crate::api_token_sql as sql;
use crate::crypto::{ct_eq, hex, random_bytes, random_token, sha256};
use crate::AuthConfig;

/// What every token starts with (`evc_`: eve-chat), so scanners and people can tell one.
pub const TOKEN_PREFIX: &str = "evc_";
/// Random bytes in an id (hex: 24 characters).
const ID_BYTES: usize = 12;
/// Characters of the secret (32 random bytes, base64url).
const SECRET_CHARS: usize = 43;
/// A name's length in characters.
pub const NAME_MAX_CHARS: usize = 100;
/// The expiry a client may choose, in days, and the default.
pub const MIN_EXPIRY_DAYS: u32 = 1;
pub const MAX_EXPIRY_DAYS: u32 = 365;
pub const DEFAULT_EXPIRY_DAYS: u32 = 90;
/// Live (unrevoked, unexpired) tokens one principal may hold; the next create is 409.
pub const MAX_LIVE_TOKENS: i64 = 50;
/// Revoked and expired tokens kept per principal (newest), so the list still shows them.
pub const KEPT_DEAD_TOKENS: i64 = 50;
/// The last use is written at most this often per token (a busy client does not write on
/// every request).
pub const LAST_USED_EVERY_MS: Millis = 60_000;
const DAY_MS: Millis = 86_400_000;

/// A stored token (every column but nothing secret: the hash is of a 256-bit secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredToken {
    pub id: String,
    pub principal: String,
    pub mode: String,
    pub name: String,
    pub display_name: Option<String>,
    pub email: Option<String>,
    pub token_hash: String,
    pub created_at: Millis,
    pub expires_at: Millis,
    pub last_used_at: Option<Millis>,
    pub revoked_at: Option<Millis>,
}

/// A token just created: the secret form, shown once, and its info.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewToken {
    pub token: String,
    pub info: ApiTokenInfo,
}

/// Why a token operation was refused (each a 4xx that changed nothing), or the database's error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenError {
    InvalidName(&'static str),
    InvalidExpiry,
    TooMany,
    NotFound,
    Db(String),
}

impl TokenError {
    /// The answer for this refusal (a database error is the caller's to log; here a 503).
    pub fn api_error(&self) -> ApiError {
        match self {
            TokenError::InvalidName(why) => ApiError::bad_request(*why),
            TokenError::InvalidExpiry => ApiError::bad_request(format!(
                "expiresInDays must be a whole number from {MIN_EXPIRY_DAYS} to {MAX_EXPIRY_DAYS}"
            )),
            TokenError::TooMany => ApiError::new(
                ErrorCode::Conflict,
                format!("at most {MAX_LIVE_TOKENS} live API tokens per user: revoke one first"),
            ),
            TokenError::NotFound => ApiError::not_found("no such API token"),
            TokenError::Db(_) => ApiError::new(
                ErrorCode::NotConfigured,
                "API tokens are not available (database)",
            ),
        }
    }
}

impl From<String> for TokenError {
    fn from(e: String) -> Self {
        TokenError::Db(e)
    }
}

/// The name, trimmed: 1–100 characters, no control characters (it is shown in lists).
pub fn validate_name(name: &str) -> Result<&str, TokenError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(TokenError::InvalidName("name must not be empty"));
    }
    if name.chars().count() > NAME_MAX_CHARS {
        return Err(TokenError::InvalidName(
            "name must be at most 100 characters",
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(TokenError::InvalidName(
            "name must not contain control characters",
        ));
    }
    Ok(name)
}

/// The expiry in days: the default when absent, else 1–365.
pub fn validate_expiry(days: Option<u32>) -> Result<u32, TokenError> {
    match days.unwrap_or(DEFAULT_EXPIRY_DAYS) {
        d @ MIN_EXPIRY_DAYS..=MAX_EXPIRY_DAYS => Ok(d),
        _ => Err(TokenError::InvalidExpiry),
    }
}

/// The stored form of a presented token: lower-case hex SHA-256 of all of it.
pub fn hash(token: &str) -> String {
    hex(&sha256(token.as_bytes()))
}

/// Splits `evc_<id>_<secret>` into its id and secret; `None` unless both have exactly their
/// shape (24 lower-case hex, 43 base64url characters).
pub fn parse(token: &str) -> Option<(&str, &str)> {
    let rest = token.strip_prefix(TOKEN_PREFIX)?;
    let (id, secret) = rest.split_at_checked(ID_BYTES * 2)?;
    let secret = secret.strip_prefix('_')?;
    let id_ok = id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let secret_ok = secret.len() == SECRET_CHARS
        && secret
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    (id_ok && secret_ok).then_some((id, secret))
}

/// Creates a token for `owner` (the creator, under the current mode) named `name`, expiring
/// in `expires_in_days` (default 90), at `now`; 409 when the principal already holds
/// [`MAX_LIVE_TOKENS`] live ones. The dead ones beyond [`KEPT_DEAD_TOKENS`] are pruned.
pub fn create(
    db: &dyn Sql,
    owner: &Principal,
    name: &str,
    expires_in_days: Option<u32>,
    now: Millis,
) -> Result<NewToken, TokenError> {
    let name = validate_name(name)?;
    let days = validate_expiry(expires_in_days)?;
    let id = hex(&random_bytes::<ID_BYTES>());
    let token = format!("{TOKEN_PREFIX}{id}_{}", random_token());
    let expires_at = now + Millis::from(days) * DAY_MS;
    let p = owner;
    let inserted = db.execute(
        sql::INSERT_UNDER_CAP,
        vec![
            SqlValue::text(&id),
            SqlValue::text(&p.id),
            SqlValue::text(p.mode.as_str()),
            SqlValue::text(name),
            SqlValue::opt_text(p.name.as_deref()),
            SqlValue::opt_text(p.email.as_deref()),
            SqlValue::text(hash(&token)),
            SqlValue::Integer(now),
            SqlValue::Integer(expires_at),
            SqlValue::Integer(MAX_LIVE_TOKENS),
        ],
    )?;
    if inserted.is_empty() {
        return Err(TokenError::TooMany);
    }
    db.execute(
        sql::PRUNE_DEAD,
        vec![
            SqlValue::text(&p.id),
            SqlValue::Integer(now),
            SqlValue::Integer(KEPT_DEAD_TOKENS),
        ],
    )?;
    let info = ApiTokenInfo {
        id,
        name: name.to_string(),
        created_at: format_iso_ms(now),
        expires_at: format_iso_ms(expires_at),
        last_used_at: None,
        revoked_at: None,
    };
    Ok(NewToken { token, info })
}

fn row_to_token(row: SqlRow) -> Option<StoredToken> {
    let mut v = row.into_iter();
    let mut text = || v.next().and_then(SqlValue::into_string);
    let (id, principal, mode, name) = (text()?, text()?, text()?, text()?);
    let (display_name, email, token_hash) = (text(), text(), text()?);
    let mut int = || v.next().and_then(|x| x.as_i64());
    Some(StoredToken {
        id,
        principal,
        mode,
        name,
        display_name,
        email,
        token_hash,
        created_at: int()?,
        expires_at: int()?,
        last_used_at: int(),
        revoked_at: int(),
    })
}

impl StoredToken {
    /// What the owner sees.
    pub fn info(&self) -> ApiTokenInfo {
        ApiTokenInfo {
            id: self.id.clone(),
            name: self.name.clone(),
            created_at: format_iso_ms(self.created_at),
            expires_at: format_iso_ms(self.expires_at),
            last_used_at: self.last_used_at.map(format_iso_ms),
            revoked_at: self.revoked_at.map(format_iso_ms),
        }
    }
}

/// The tokens of `principal_id`, newest first (revoked and expired ones too).
pub fn list(db: &dyn Sql, principal_id: &str) -> Result<Vec<ApiTokenInfo>, TokenError> {
    let rows = db.execute(sql::SELECT_BY_PRINCIPAL, vec![SqlValue::text(principal_id)])?;
    Ok(rows
        .into_iter()
        .filter_map(row_to_token)
        .map(|t| t.info())
        .collect())
}

/// Whether a revoke changed anything (both are success: revoking is idempotent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revoked {
    Now,
    Already,
}

/// Revokes token `id` of `principal_id` at `now`. Another principal's token is
/// [`TokenError::NotFound`], exactly like one that does not exist.
pub fn revoke(
    db: &dyn Sql,
    principal_id: &str,
    id: &str,
    now: Millis,
) -> Result<Revoked, TokenError> {
    let params = vec![SqlValue::text(id), SqlValue::text(principal_id)];
    let mut revoke_params = params.clone();
    revoke_params.push(SqlValue::Integer(now));
    if !db.execute(sql::REVOKE, revoke_params)?.is_empty() {
        return Ok(Revoked::Now);
    }
    if db.execute(sql::OWNED, params)?.is_empty() {
        return Err(TokenError::NotFound);
    }
    Ok(Revoked::Already)
}

/// Revokes every token of `principal_id` at `now` that was live; the ids it revoked.
pub fn revoke_all(
    db: &dyn Sql,
    principal_id: &str,
    now: Millis,
) -> Result<Vec<String>, TokenError> {
    let params = vec![SqlValue::text(principal_id), SqlValue::Integer(now)];
    let rows = db.execute(sql::REVOKE_ALL, params)?;
    Ok(rows
        .into_iter()
        .filter_map(|r| r.into_iter().next()?.into_string())
        .collect())
}

/// The stored token a presented one proves, if it is well-formed, known, its hash matches,
/// and it is neither revoked nor expired at `now`. Records the use (at most once a minute;
/// a failed record does not refuse the request: the last use is informational). `Err` only
/// when the database did not answer the lookup.
pub fn verify(db: &dyn Sql, presented: &str, now: Millis) -> Result<Option<StoredToken>, String> {
    let Some((id, _)) = parse(presented) else {
        return Ok(None);
    };
    let rows = db.execute(sql::SELECT_BY_ID, vec![SqlValue::text(id)])?;
    let Some(token) = rows.into_iter().next().and_then(row_to_token) else {
        return Ok(None);
    };
    let matches = ct_eq(hash(presented).as_bytes(), token.token_hash.as_bytes());
    if !matches || token.revoked_at.is_some() || token.expires_at <= now {
        return Ok(None);
    }
    let quiet_since = now - LAST_USED_EVERY_MS;
    if token.last_used_at.is_none_or(|at| at <= quiet_since) {
        let _ = db.execute(
            sql::TOUCH,
            vec![
                SqlValue::text(id),
                SqlValue::Integer(now),
                SqlValue::Integer(quiet_since),
            ],
        );
    }
    Ok(Some(token))
}

/// The principal a verified token stands for under `config`, or `None` when the token does
/// not apply: sign-in is not ready, the deployment's mode is not the one the token was
/// created under (a mode switch voids every token), or, in OIDC, its email is no longer
/// allowed (checked on every request, as for cookies).
pub fn principal_for(token: &StoredToken, config: &AuthConfig) -> Option<Principal> {
    let resolution = config.resolve();
    let mode = resolution.mode;
    let signs_in = resolution.ready && !matches!(mode, AuthMode::LocalDev | AuthMode::Unconfigured);
    if !signs_in || token.mode != mode.as_str() {
        return None;
    }
    if mode == AuthMode::Oidc
        && !token
            .email
            .as_deref()
            .is_some_and(|e| config.allowlist().allows(e))
    {
        return None;
    }
    Some(Principal {
        id: token.principal.clone(),
        mode,
        name: token.display_name.clone(),
        email: token.email.clone(),
    })
}

#[cfg(test)]
mod tests;
