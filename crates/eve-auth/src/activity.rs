//! When an account was last active (`account.last_active_at`, shown on the admin's user and
//! usage pages): recorded by the post-check every signed-in request passes
//! (`eve_spin::auth::admit`) at most once per [`EVERY_SECS`] per principal, so a busy client
//! does not write on every request. The caller keeps the time of its last record under
//! [`key`] in the key-value store: one key-value read per request, a database write (and a
//! key-value write) at most once an hour.

use eve_store::sql::{Sql, SqlValue};

/// How stale `last_active_at` may be.
pub const EVERY_SECS: u64 = 60 * 60;

/// Records activity of account `?1` at `?2` (Unix ms). It never moves back, so a node whose
/// clock runs behind does not undo another's record.
pub const TOUCH_ACCOUNT: &str = "UPDATE account SET last_active_at = ?2 \
    WHERE id = ?1 AND coalesce(last_active_at, 0) < ?2";

/// The key-value key of the time (Unix seconds) activity of `principal_id` was last recorded.
pub fn key(principal_id: &str) -> String {
    format!("account:active:{principal_id}")
}

/// Whether to record activity at `now` (Unix seconds), given the value under [`key`]: yes
/// when there is none, it does not read as a time, or it is [`EVERY_SECS`] old; a time ahead
/// of `now` (another node's clock) counts as recent.
pub fn due(recorded: Option<&[u8]>, now: u64) -> bool {
    let at = recorded
        .and_then(|v| std::str::from_utf8(v).ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    at.is_none_or(|at| now.saturating_sub(at) >= EVERY_SECS)
}

/// Writes account `account_id`'s `last_active_at` (`now_ms`).
pub fn record(db: &dyn Sql, account_id: &str, now_ms: i64) -> Result<(), String> {
    db.execute(
        TOUCH_ACCOUNT,
        vec![SqlValue::text(account_id), SqlValue::Integer(now_ms)],
    )
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use eve_sql_testing::Db;

    #[test]
    fn activity_is_due_once_an_hour() {
        let now = 1_800_000_000;
        assert!(due(None, now));
        assert!(due(Some(b"garbage"), now));
        assert!(due(Some(b"1799996400"), now), "an hour ago");
        assert!(!due(Some(b"1799996401"), now));
        assert!(!due(Some(now.to_string().as_bytes()), now));
        assert!(!due(Some(b"1800000500"), now), "ahead: recent");
    }

    #[test]
    fn a_record_moves_last_active_at_forward_only() {
        let db = Db::memory();
        eve_store::migrations::migrate(&db, 0).unwrap();
        db.execute(
            "INSERT INTO account (id, email, role, created_at) VALUES ('a', 'a@x.example', 'member', 1)",
            vec![],
        )
        .unwrap();
        let seen = |db: &Db| {
            db.execute("SELECT last_active_at FROM account WHERE id = 'a'", vec![])
                .unwrap()[0][0]
                .as_i64()
        };
        assert_eq!(seen(&db), None);
        record(&db, "a", 5_000).unwrap();
        assert_eq!(seen(&db), Some(5_000));
        record(&db, "a", 4_000).unwrap();
        assert_eq!(seen(&db), Some(5_000), "never back");
        record(&db, "gone", 6_000).unwrap();
    }
}
