//! Every SQL statement on the usage tables (`migrations/0011_usage_quotas.sql`), as documented
//! constants. Days are UTC dates from the database's clock (`date('now')`), the same clock
//! the trigger that records a settled step uses, so every node agrees on what "today" is.
//!
//! The agent's turns are recorded by the trigger `eve_step_usage_recorded` (0011) inside the
//! statement that appends `step.completed`; [`UPSERT_USAGE`] is the same addition for a call
//! made outside a session's log.

/// Adds one model call to today's row. `?1` principal, `?2` model id, `?3` tokens in,
/// `?4` tokens out.
pub const UPSERT_USAGE: &str =
    "INSERT INTO usage_daily (principal, day, model, tokens_in, tokens_out, calls) \
    VALUES (?1, date('now'), ?2, ?3, ?4, 1) \
    ON CONFLICT (principal, day, model) DO UPDATE SET \
    tokens_in = tokens_in + excluded.tokens_in, \
    tokens_out = tokens_out + excluded.tokens_out, \
    calls = calls + excluded.calls";

/// Everything a request decides a principal's quota and model access from, in one round
/// trip: `?1` principal, `?2` its account id (`NULL` for a principal that is not an
/// account). Columns: role, `member_models` (JSON), tokens-per-day override, storage
/// override, today's tokens (in + out).
pub const SELECT_STANDING: &str = "SELECT \
    (SELECT role FROM account WHERE id = ?2), \
    (SELECT value FROM deployment_setting WHERE key = 'member_models'), \
    (SELECT tokens_per_day FROM principal_quota WHERE principal = ?1), \
    (SELECT storage_bytes FROM principal_quota WHERE principal = ?1), \
    (SELECT COALESCE(SUM(tokens_in + tokens_out), 0) FROM usage_daily \
        WHERE principal = ?1 AND day = date('now'))";

/// The storage override of `?1` alone (the chat log's writes need nothing else).
pub const SELECT_STORAGE_OVERRIDE: &str =
    "SELECT storage_bytes FROM principal_quota WHERE principal = ?1";

/// Sets the overrides of account `?1` (`?2` tokens per day, `?3` storage bytes; `NULL`: the
/// default) only while the account exists; `RETURNING` says whether it does.
pub const UPSERT_QUOTA: &str =
    "INSERT INTO principal_quota (principal, tokens_per_day, storage_bytes) \
    SELECT 'user:' || id, ?2, ?3 FROM account WHERE id = ?1 \
    ON CONFLICT (principal) DO UPDATE SET \
    tokens_per_day = excluded.tokens_per_day, storage_bytes = excluded.storage_bytes \
    RETURNING tokens_per_day, storage_bytes";

pub const SELECT_ACCOUNT_EXISTS: &str = "SELECT 1 FROM account WHERE id = ?1";

/// `?1` key.
pub const SELECT_SETTING: &str = "SELECT value FROM deployment_setting WHERE key = ?1";
/// `?1` key, `?2` value, `?3` at (Unix ms), `?4` by (principal).
pub const UPSERT_SETTING: &str =
    "INSERT INTO deployment_setting (key, value, updated_at, updated_by) \
    VALUES (?1, ?2, ?3, ?4) \
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, \
    updated_at = excluded.updated_at, updated_by = excluded.updated_by";
pub const DELETE_SETTING: &str = "DELETE FROM deployment_setting WHERE key = ?1";

/// The key of the models members may use (a JSON array of model ids; absent: all).
pub const MEMBER_MODELS_KEY: &str = "member_models";

/// Every account, and every other principal that used a model in the window, with what it
/// holds and used. `?1` the window's first day as a `date('now', ?1)` modifier
/// (`'-29 days'` for 30 days). Columns: principal, email, chats, storage bytes, attachment
/// bytes, tokens in, tokens out, last active (Unix ms, 0: never), tokens-per-day override,
/// storage override.
pub const SELECT_USER_USAGE: &str = "WITH p (principal, email, seen) AS ( \
        SELECT 'user:' || id, email, last_active_at FROM account \
        UNION ALL \
        SELECT DISTINCT principal, NULL, NULL FROM usage_daily \
        WHERE day >= date('now', ?1) AND principal NOT IN (SELECT 'user:' || id FROM account)) \
    SELECT p.principal, p.email, \
        (SELECT COUNT(*) FROM chat WHERE owner = p.principal), \
        COALESCE((SELECT bytes FROM storage_usage WHERE scope = 'principal:' || p.principal), 0), \
        COALESCE((SELECT bytes FROM storage_usage WHERE scope = 'attachments:' || p.principal), 0), \
        COALESCE((SELECT SUM(tokens_in) FROM usage_daily WHERE principal = p.principal AND day >= date('now', ?1)), 0), \
        COALESCE((SELECT SUM(tokens_out) FROM usage_daily WHERE principal = p.principal AND day >= date('now', ?1)), 0), \
        MAX(COALESCE(p.seen, 0), COALESCE((SELECT MAX(updated_at) FROM eve_session WHERE principal = p.principal), 0)), \
        q.tokens_per_day, q.storage_bytes \
    FROM p LEFT JOIN principal_quota AS q ON q.principal = p.principal \
    ORDER BY p.principal";

/// Every day of the window (`?1` days, today last) with all principals' tokens, zeros
/// included, so a chart has one point per day.
pub const SELECT_DAY_TOTALS: &str = "WITH RECURSIVE d (day, n) AS ( \
        SELECT date('now'), 1 \
        UNION ALL SELECT date(day, '-1 day'), n + 1 FROM d WHERE n < ?1) \
    SELECT d.day, COALESCE(SUM(u.tokens_in), 0), COALESCE(SUM(u.tokens_out), 0) \
    FROM d LEFT JOIN usage_daily AS u ON u.day = d.day \
    GROUP BY d.day ORDER BY d.day";

/// Principal `?1`'s rows from the window's first day (`date('now', ?2)`), oldest first.
pub const SELECT_PRINCIPAL_DAYS: &str = "SELECT day, model, tokens_in, tokens_out, calls \
    FROM usage_daily WHERE principal = ?1 AND day >= date('now', ?2) ORDER BY day, model";

/// What an account's delete removes of its usage and quota (`?1` principal); idempotent, so
/// a retried delete completes.
pub const DELETE_PRINCIPAL_USAGE: &str = "DELETE FROM usage_daily WHERE principal = ?1";
pub const DELETE_PRINCIPAL_QUOTA: &str = "DELETE FROM principal_quota WHERE principal = ?1";
