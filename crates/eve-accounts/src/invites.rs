//! Invitations: an admin makes one (single use, 7 days, its role, optionally bound to one
//! email); a sign-up spends it. SQL in [`crate::invites_sql`].

use eve_api::accounts::{InviteCreate, InviteCreated, InviteInfo, InviteSummary, Role};
use eve_api::{ApiError, ErrorCode};
use eve_store::sql::{Sql, SqlValue};

use crate::common::{
    db_error, int, iso, new_id, new_token, normalize_email, opt_int, text, token_hash,
};
use crate::invites_sql as q;

/// How long an invitation can be used.
pub const INVITE_LIFETIME_MS: i64 = 7 * 24 * 3600 * 1000;

/// How many invitations the list shows.
pub const MAX_LISTED: i64 = 500;

/// The one 404 of an invitation that cannot be used: unknown, used, expired or revoked.
pub fn invite_invalid() -> ApiError {
    ApiError::new(
        ErrorCode::InviteInvalid,
        "this invitation is not valid (unknown, used or expired); ask for a new one",
    )
}

/// The page a browser opens for an invitation: `<base>/invite#token=<token>` (a fragment, so
/// the token stays out of server logs and `Referer`).
pub fn invite_url(base: &str, token: &str) -> String {
    format!("{}/invite#token={token}", base.trim_end_matches('/'))
}

/// Creates an invitation by admin `creator` (an account id).
pub fn create(
    db: &dyn Sql,
    req: &InviteCreate,
    creator: &str,
    base_url: &str,
    now_ms: i64,
) -> Result<InviteCreated, ApiError> {
    let email = req.email.as_deref().map(normalize_email).transpose()?;
    let (token, hashed) = new_token();
    let id = new_id();
    let expires_at = now_ms + INVITE_LIFETIME_MS;
    db.execute(
        q::INSERT_INVITE,
        vec![
            hashed.into(),
            id.as_str().into(),
            req.role.as_str().into(),
            SqlValue::opt_text(email.as_deref()),
            creator.into(),
            now_ms.into(),
            expires_at.into(),
        ],
    )
    .map_err(db_error)?;
    Ok(InviteCreated {
        id,
        url: invite_url(base_url, &token),
        token,
        role: req.role,
        email,
        expires_at: iso(expires_at),
    })
}

/// `GET /api/auth/invite?token=`: what a usable invitation offers, or 404 `invite_invalid`.
pub fn info(db: &dyn Sql, token: &str, now_ms: i64) -> Result<InviteInfo, ApiError> {
    let rows = db
        .execute(
            q::USABLE_INVITE,
            vec![token_hash(token).into(), now_ms.into()],
        )
        .map_err(db_error)?;
    let row = rows.first().ok_or_else(invite_invalid)?;
    Ok(InviteInfo {
        role: text(row, 0)
            .as_deref()
            .and_then(Role::parse)
            .ok_or_else(invite_invalid)?,
        email: text(row, 1),
        expires_at: iso(int(row, 2)),
    })
}

/// Spends invitation `token` for account `account_id` with `email` (normalized): its role.
/// 404 `invite_invalid` when it cannot be used, 403 when bound to another address, 409 when
/// the address has an account; in each case nothing is written.
pub fn claim(
    db: &dyn Sql,
    token: &str,
    account_id: &str,
    email: &str,
    now_ms: i64,
) -> Result<Role, ApiError> {
    let hashed = token_hash(token);
    let rows = db
        .execute(
            q::CLAIM_INVITE,
            vec![
                hashed.as_str().into(),
                now_ms.into(),
                account_id.into(),
                email.into(),
            ],
        )
        .map_err(db_error)?;
    if let Some(role) = rows.first().and_then(|r| text(r, 0)) {
        return Role::parse(&role).ok_or_else(invite_invalid);
    }
    // Why not: only to say so; the refusal above already decided.
    let usable = info(db, token, now_ms)?;
    match usable.email {
        Some(bound) if !bound.eq_ignore_ascii_case(email) => Err(ApiError::forbidden(
            "this invitation is for another email address",
        )),
        _ => Err(ApiError::new(
            ErrorCode::Conflict,
            "an account with this email address exists; sign in instead",
        )),
    }
}

/// Gives a claimed invitation back (the account could not be created).
pub fn release(db: &dyn Sql, token: &str, account_id: &str) -> Result<(), ApiError> {
    db.execute(
        q::RELEASE_INVITE,
        vec![token_hash(token).into(), account_id.into()],
    )
    .map(|_| ())
    .map_err(db_error)
}

/// Every invitation, newest first (without tokens).
pub fn list(db: &dyn Sql) -> Result<Vec<InviteSummary>, ApiError> {
    let rows = db
        .execute(q::LIST_INVITES, vec![MAX_LISTED.into()])
        .map_err(db_error)?;
    Ok(rows
        .iter()
        .filter_map(|r| {
            Some(InviteSummary {
                id: text(r, 0)?,
                role: Role::parse(&text(r, 1)?)?,
                email: text(r, 2),
                created_at: iso(int(r, 3)),
                expires_at: iso(int(r, 4)),
                used_at: opt_int(r, 5).map(iso),
            })
        })
        .collect())
}

/// Revokes invitation `id`: whether it existed (revoking twice is fine).
pub fn revoke(db: &dyn Sql, id: &str) -> Result<bool, ApiError> {
    let rows = db
        .execute(q::DELETE_INVITE, vec![id.into()])
        .map_err(db_error)?;
    Ok(!rows.is_empty())
}
