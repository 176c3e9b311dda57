//! The statements on `account_invite` (migration 0009). Only a token's SHA-256 is stored.

/// `?1` token hash, `?2` id, `?3` role, `?4` email or NULL, `?5` creator (account id), `?6`
/// now, `?7` expiry (ms).
pub const INSERT_INVITE: &str = "INSERT INTO account_invite \
    (token_hash, id, role, email, created_by, created_at, expires_at) \
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";

/// What a usable invitation offers: `?1` token hash, `?2` now.
pub const USABLE_INVITE: &str = "SELECT role, email, expires_at FROM account_invite \
    WHERE token_hash = ?1 AND used_at IS NULL AND expires_at > ?2";

/// Spends invitation `?1` for the new account `?3` with email `?4` at `?2`: one conditional
/// UPDATE, so of two sign-ups with one invitation exactly one gets its row back. Refuses an
/// invitation bound to another address, and an address that already has an account (so a
/// sign-up that would fail does not spend the invitation).
pub const CLAIM_INVITE: &str = "UPDATE account_invite SET used_at = ?2, used_by = ?3 \
    WHERE token_hash = ?1 AND used_at IS NULL AND expires_at > ?2 \
    AND (email IS NULL OR email = ?4) \
    AND NOT EXISTS (SELECT 1 FROM account WHERE email = ?4) \
    RETURNING role";

/// Gives back a claim whose account could not be created (its email was taken in between):
/// `?1` token hash, `?2` the account id that claimed it.
pub const RELEASE_INVITE: &str = "UPDATE account_invite SET used_at = NULL, used_by = NULL \
    WHERE token_hash = ?1 AND used_by = ?2";

/// Newest first, at most `?1`.
pub const LIST_INVITES: &str = "SELECT id, role, email, created_at, expires_at, used_at \
    FROM account_invite ORDER BY created_at DESC, id LIMIT ?1";

/// Revokes (deletes) invitation `?1`; idempotent.
pub const DELETE_INVITE: &str = "DELETE FROM account_invite WHERE id = ?1 RETURNING id";
