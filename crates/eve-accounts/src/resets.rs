//! One-time password reset links an admin issues (24 h) and a signed-out user spends. SQL in
//! [`crate::resets_sql`].

use eve_api::accounts::ResetLink;
use eve_api::{ApiError, ErrorCode};
use eve_store::sql::Sql;

use crate::accounts;
use crate::common::{db_error, iso, new_token, text, token_hash};
use crate::resets_sql as q;

/// How long a reset link works.
pub const RESET_LIFETIME_MS: i64 = 24 * 3600 * 1000;

/// The page a browser opens for a reset link (the token in the fragment, as invitations).
pub fn reset_url(base: &str, token: &str) -> String {
    format!("{}/reset#token={token}", base.trim_end_matches('/'))
}

/// Makes a link for account `account_id`; 404 when there is no such account.
pub fn create(
    db: &dyn Sql,
    account_id: &str,
    creator: &str,
    base_url: &str,
    now_ms: i64,
) -> Result<ResetLink, ApiError> {
    let (token, hashed) = new_token();
    let expires_at = now_ms + RESET_LIFETIME_MS;
    let rows = db
        .execute(
            q::INSERT_RESET,
            vec![
                hashed.into(),
                account_id.into(),
                creator.into(),
                now_ms.into(),
                expires_at.into(),
            ],
        )
        .map_err(db_error)?;
    if rows.is_empty() {
        return Err(ApiError::not_found("no such account"));
    }
    Ok(ResetLink {
        url: reset_url(base_url, &token),
        token,
        expires_at: iso(expires_at),
    })
}

/// The one 404 of a link that cannot be used (unknown, used, expired, disabled account).
pub fn reset_invalid() -> ApiError {
    ApiError::new(
        ErrorCode::InviteInvalid,
        "this reset link is not valid (unknown, used or expired); ask an admin for a new one",
    )
}

/// Spends `token` and sets `new_password`: the account. The password's length is checked
/// before the link is spent, so a refused password leaves the link usable.
pub fn spend(
    db: &dyn Sql,
    token: &str,
    new_password: &str,
    now_ms: i64,
) -> Result<accounts::Account, ApiError> {
    crate::password::check_length(new_password)?;
    let hashed = crate::password::hash(new_password)?;
    let rows = db
        .execute(
            q::SPEND_RESET,
            vec![token_hash(token).into(), now_ms.into()],
        )
        .map_err(db_error)?;
    let id = rows
        .first()
        .and_then(|r| text(r, 0))
        .ok_or_else(reset_invalid)?;
    db.execute(
        crate::accounts_sql::SET_PASSWORD,
        vec![id.as_str().into(), hashed.into()],
    )
    .map_err(db_error)?;
    db.execute(q::DROP_UNUSED_RESETS, vec![id.as_str().into()])
        .map_err(db_error)?;
    accounts::by_id(db, &id)?.ok_or_else(reset_invalid)
}
