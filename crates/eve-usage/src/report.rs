//! What the admin's usage routes answer (`GET /api/admin/usage`, `GET /api/admin/users/:id/usage`)
//! and the quota change (`PUT /api/admin/users/:id/quota`). Admins see how much each person
//! stores and uses, never what: no chat title, event or attachment appears here.

use eve_api::usage::{DayTokens, ModelDay, Quota, UsageOverview, UserUsage, UserUsageDays};
use eve_api::ApiError;
use eve_store::sql::{Sql, SqlRow, SqlValue};
use eve_store::time::format_iso_ms;

use crate::persistence::{
    DELETE_PRINCIPAL_QUOTA, DELETE_PRINCIPAL_USAGE, SELECT_ACCOUNT_EXISTS, SELECT_DAY_TOTALS,
    SELECT_PRINCIPAL_DAYS, SELECT_USER_USAGE, UPSERT_QUOTA,
};
use crate::standing::ACCOUNT_PREFIX;

/// The window when `?days=` is absent, and the longest one.
pub const DEFAULT_DAYS: u32 = 30;
pub const MAX_DAYS: u32 = 366;

/// The window of `?days=` (absent: [`DEFAULT_DAYS`]); 400 unless 1 to [`MAX_DAYS`].
pub fn parse_days(value: Option<&str>) -> Result<u32, ApiError> {
    let Some(v) = value else {
        return Ok(DEFAULT_DAYS);
    };
    v.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| (1..=MAX_DAYS).contains(n))
        .ok_or_else(|| ApiError::bad_request(format!("days: expected 1 to {MAX_DAYS}")))
}

/// The `date('now', ?)` modifier of a window's first day.
fn first_day(days: u32) -> String {
    format!("-{} days", days.saturating_sub(1))
}

fn db_error(e: String) -> ApiError {
    eprintln!("usage: database error: {e}");
    ApiError::internal("database error")
}

fn count(row: &SqlRow, i: usize) -> u64 {
    row.get(i).and_then(SqlValue::as_i64).unwrap_or(0).max(0) as u64
}

fn opt_count(row: &SqlRow, i: usize) -> Option<u64> {
    row.get(i)
        .and_then(SqlValue::as_i64)
        .map(|n| n.max(0) as u64)
}

fn text(row: &SqlRow, i: usize) -> Option<String> {
    row.get(i).and_then(SqlValue::as_str).map(str::to_string)
}

fn user_usage(row: &SqlRow) -> UserUsage {
    let seen = row.get(7).and_then(SqlValue::as_i64).filter(|ms| *ms > 0);
    UserUsage {
        principal: text(row, 0).unwrap_or_default(),
        email: text(row, 1),
        chats: count(row, 2),
        storage_bytes: count(row, 3),
        attachment_bytes: count(row, 4),
        tokens_in: count(row, 5),
        tokens_out: count(row, 6),
        last_active_at: seen.map(format_iso_ms),
        quota: Quota {
            tokens_per_day: opt_count(row, 8),
            storage_bytes: opt_count(row, 9),
        },
    }
}

/// `GET /api/admin/usage?days=`: every account (and every other principal that used a model
/// in the window) with its totals over the last `days` days, and all tokens per day.
/// `defaults` are the deployment's (`quota_tokens_per_day`, `principal_max_bytes`).
pub fn overview(db: &dyn Sql, days: u32, defaults: Quota) -> Result<UsageOverview, ApiError> {
    let users = db
        .execute(SELECT_USER_USAGE, vec![first_day(days).into()])
        .map_err(db_error)?;
    let totals = db
        .execute(SELECT_DAY_TOTALS, vec![i64::from(days).into()])
        .map_err(db_error)?;
    Ok(UsageOverview {
        users: users.iter().map(user_usage).collect(),
        days: totals
            .iter()
            .map(|r| DayTokens {
                day: text(r, 0).unwrap_or_default(),
                tokens_in: count(r, 1),
                tokens_out: count(r, 2),
            })
            .collect(),
        defaults,
    })
}

/// 404 for an account id that names no account (as every admin route answers it).
fn account_exists(db: &dyn Sql, id: &str) -> Result<(), ApiError> {
    let rows = db
        .execute(SELECT_ACCOUNT_EXISTS, vec![id.into()])
        .map_err(db_error)?;
    if rows.is_empty() {
        return Err(ApiError::not_found("user not found"));
    }
    Ok(())
}

/// `GET /api/admin/users/:id/usage?days=`: account `id`'s tokens per day and model.
pub fn user_days(db: &dyn Sql, id: &str, days: u32) -> Result<UserUsageDays, ApiError> {
    account_exists(db, id)?;
    let principal = format!("{ACCOUNT_PREFIX}{id}");
    let rows = db
        .execute(
            SELECT_PRINCIPAL_DAYS,
            vec![principal.into(), first_day(days).into()],
        )
        .map_err(db_error)?;
    Ok(UserUsageDays {
        days: rows
            .iter()
            .map(|r| ModelDay {
                day: text(r, 0).unwrap_or_default(),
                model: text(r, 1).unwrap_or_default(),
                tokens_in: count(r, 2),
                tokens_out: count(r, 3),
                calls: count(r, 4),
            })
            .collect(),
    })
}

/// Each limit of a quota is a positive integer SQLite can hold, or null for the default.
pub fn validate_quota(quota: &Quota) -> Result<(), ApiError> {
    let fits = |v: Option<u64>| v.is_none_or(|n| n > 0 && n <= i64::MAX as u64);
    if !fits(quota.tokens_per_day) {
        return Err(ApiError::bad_request(
            "tokensPerDay: expected a positive integer, or null for the default",
        ));
    }
    if !fits(quota.storage_bytes) {
        return Err(ApiError::bad_request(
            "storageBytes: expected a positive integer, or null for the default",
        ));
    }
    Ok(())
}

/// `PUT /api/admin/users/:id/quota`: account `id`'s overrides, as stored. 400 for a bad
/// limit and 404 for an unknown account, with nothing written.
pub fn set_quota(db: &dyn Sql, id: &str, quota: &Quota) -> Result<Quota, ApiError> {
    validate_quota(quota)?;
    let rows = db
        .execute(
            UPSERT_QUOTA,
            vec![
                id.into(),
                quota.tokens_per_day.map_or(SqlValue::Null, SqlValue::from),
                quota.storage_bytes.map_or(SqlValue::Null, SqlValue::from),
            ],
        )
        .map_err(db_error)?;
    let row = rows
        .first()
        .ok_or_else(|| ApiError::not_found("user not found"))?;
    Ok(Quota {
        tokens_per_day: opt_count(row, 0),
        storage_bytes: opt_count(row, 1),
    })
}

/// Removes `principal`'s usage rows and quota (a deleted account's), each statement
/// idempotent: a retry after a failure completes it.
pub fn forget(db: &dyn Sql, principal: &str) -> Result<(), ApiError> {
    for statement in [DELETE_PRINCIPAL_USAGE, DELETE_PRINCIPAL_QUOTA] {
        db.execute(statement, vec![principal.into()])
            .map_err(db_error)?;
    }
    Ok(())
}
