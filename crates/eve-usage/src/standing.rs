//! What a principal's requests are decided from, read in one round trip ([`read`]), and the
//! one write of a model call outside a session's log ([`record`]).

use eve_api::usage::Quota;
use eve_store::sql::{Sql, SqlValue};

use crate::persistence::{SELECT_STANDING, UPSERT_USAGE};

/// The principal prefix of an account (`user:<id>`).
pub const ACCOUNT_PREFIX: &str = "user:";

/// One principal as quotas and model access see it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Standing {
    /// Whether the principal is an account (`user:<id>`); local-dev, password and OIDC
    /// principals are not.
    pub is_account: bool,
    /// The account's role as stored now (`None`: not an account, or its row is gone).
    pub role: Option<String>,
    /// The deployment's `member_models` setting as stored (`None`: every model).
    pub member_models: Option<String>,
    /// The principal's overrides of the deployment defaults.
    pub overrides: Quota,
    /// Model tokens (in + out) used today (UTC, the database's clock).
    pub tokens_today: u64,
}

/// The account id of an account's principal.
pub fn account_id(principal: &str) -> Option<&str> {
    principal
        .strip_prefix(ACCOUNT_PREFIX)
        .filter(|id| !id.is_empty())
}

fn count(v: Option<&SqlValue>) -> Option<u64> {
    v.and_then(SqlValue::as_i64).map(|n| n.max(0) as u64)
}

/// Reads `principal`'s standing.
pub fn read(db: &dyn Sql, principal: &str) -> Result<Standing, String> {
    let id = account_id(principal);
    let rows = db.execute(
        SELECT_STANDING,
        vec![SqlValue::text(principal), SqlValue::opt_text(id)],
    )?;
    let row = rows.into_iter().next().unwrap_or_default();
    let text = |i: usize| row.get(i).and_then(SqlValue::as_str).map(str::to_string);
    Ok(Standing {
        is_account: id.is_some(),
        role: text(0),
        member_models: text(1),
        overrides: Quota {
            tokens_per_day: count(row.get(2)),
            storage_bytes: count(row.get(3)),
        },
        tokens_today: count(row.get(4)).unwrap_or(0),
    })
}

/// Adds one model call (`tokens_in`, `tokens_out`) of `model` to `principal`'s today. The
/// agent's turns need not call this: their `step.completed` is counted by the trigger
/// `eve_step_usage_recorded` in the statement that appends it.
pub fn record(
    db: &dyn Sql,
    principal: &str,
    model: &str,
    tokens_in: u64,
    tokens_out: u64,
) -> Result<(), String> {
    db.execute(
        UPSERT_USAGE,
        vec![
            principal.into(),
            model.into(),
            tokens_in.into(),
            tokens_out.into(),
        ],
    )
    .map(|_| ())
}
