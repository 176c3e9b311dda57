//! The statements on `account_reset` (migration 0009): one-time password reset links.

/// A link for account `?2` made by `?3` (account id) at `?4`, expiring `?5`; no row when the
/// account does not exist. `?1` token hash.
pub const INSERT_RESET: &str = "INSERT INTO account_reset \
    (token_hash, account_id, created_by, created_at, expires_at) \
    SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM account WHERE id = ?2) \
    RETURNING account_id";

/// Spends link `?1` at `?2`: one conditional UPDATE (a link works once even when two uses
/// race), only for an enabled account. Answers the account id.
pub const SPEND_RESET: &str = "UPDATE account_reset SET used_at = ?2 \
    WHERE token_hash = ?1 AND used_at IS NULL AND expires_at > ?2 \
    AND account_id IN (SELECT id FROM account WHERE disabled = 0) \
    RETURNING account_id";

/// Once a link is spent the account's other unused links go too.
pub const DROP_UNUSED_RESETS: &str =
    "DELETE FROM account_reset WHERE account_id = ?1 AND used_at IS NULL";
