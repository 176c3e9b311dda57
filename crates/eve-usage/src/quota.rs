//! The limits that apply to a principal: its override, else the deployment default
//! (`quota_tokens_per_day`, `principal_max_bytes`), and the refusal past the daily tokens.

use eve_api::{ApiError, ErrorCode};
use eve_store::limits::StorageQuota;
use eve_store::sql::{Sql, SqlValue};

use crate::persistence::SELECT_STORAGE_OVERRIDE;
use crate::standing::Standing;

/// The variable of the default daily tokens.
pub const TOKENS_PER_DAY_VARIABLE: &str = "quota_tokens_per_day";

const DAY_SECS: i64 = 24 * 60 * 60;

/// The deployment's default daily tokens: a positive integer, else no limit (unset, empty,
/// `0` or not a number: an operator's typo must not lock everyone out).
pub fn default_tokens_per_day(variable: Option<&str>) -> Option<u64> {
    let text = variable.map(str::trim).filter(|t| !t.is_empty())?;
    match text.parse::<u64>() {
        Ok(n) => Some(n).filter(|n| *n > 0),
        Err(_) => {
            // Logged: a limit that does not apply must not go unnoticed.
            eprintln!("variable {TOKENS_PER_DAY_VARIABLE}: {text:?} is not a whole number; no daily limit applies");
            None
        }
    }
}

/// The daily tokens that apply to `standing` (`None`: no limit).
pub fn tokens_per_day(standing: &Standing, variable: Option<&str>) -> Option<u64> {
    standing
        .overrides
        .tokens_per_day
        .or_else(|| default_tokens_per_day(variable))
}

/// A new turn is refused once the principal is at or past its daily tokens: 429
/// `quota_exceeded`, naming the quota and its limit, with `Retry-After` until the next UTC
/// midnight (`now_ms`), when the day's count starts again.
pub fn check_tokens(
    standing: &Standing,
    variable: Option<&str>,
    now_ms: i64,
) -> Result<(), ApiError> {
    check_tokens_over(standing, default_tokens_per_day(variable), now_ms)
}

/// [`check_tokens`] over the deployment's default already read (`None`: no limit), e.g. the
/// `defaultTokensPerDay` setting (`eve_runtime::settings::default_tokens_per_day`).
pub fn check_tokens_over(
    standing: &Standing,
    default: Option<u64>,
    now_ms: i64,
) -> Result<(), ApiError> {
    let Some(limit) = standing.overrides.tokens_per_day.or(default) else {
        return Ok(());
    };
    if standing.tokens_today < limit {
        return Ok(());
    }
    let now_secs = now_ms.div_euclid(1000);
    Err(ApiError {
        code: ErrorCode::QuotaExceeded,
        message: format!(
            "Model quota reached: {limit} tokens per day ({} used today). It resets at 00:00 UTC.",
            standing.tokens_today
        ),
        retry_after_secs: Some((DAY_SECS - now_secs.rem_euclid(DAY_SECS)).max(1) as u64),
    })
}

/// `quota` with the principal's storage override, when it has one.
pub fn with_storage_override(quota: StorageQuota, storage_bytes: Option<u64>) -> StorageQuota {
    match storage_bytes.filter(|n| *n > 0) {
        Some(principal_bytes) => StorageQuota {
            principal_bytes,
            ..quota
        },
        None => quota,
    }
}

/// The storage override of `principal` (`None`: the default applies).
pub fn storage_override(db: &dyn Sql, principal: &str) -> Result<Option<u64>, String> {
    let rows = db.execute(SELECT_STORAGE_OVERRIDE, vec![SqlValue::text(principal)])?;
    Ok(rows
        .first()
        .and_then(|r| r.first())
        .and_then(SqlValue::as_i64)
        .map(|n| n.max(0) as u64))
}
