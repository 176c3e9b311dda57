//! The SQL of API tokens (`api_token`, migration 0010), one statement per constant, positional
//! parameters as documented. Only `api_token` runs them.

/// Inserts a token unless its principal already has `?10` live (unrevoked, unexpired at `?8`)
/// tokens: one statement, so two concurrent creates cannot both pass a count.
/// `?1` id, `?2` principal, `?3` mode, `?4` name, `?5` display name, `?6` email, `?7` hash,
/// `?8` created at, `?9` expires at; `?10` the cap. Yields the id when it inserted.
pub const INSERT_UNDER_CAP: &str = "INSERT INTO api_token \
(id, principal, mode, name, display_name, email, token_hash, created_at, expires_at) \
SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 \
WHERE (SELECT count(*) FROM api_token \
       WHERE principal = ?2 AND revoked_at IS NULL AND expires_at > ?8) < ?10 \
RETURNING id";

/// Keeps at most `?3` dead (revoked or expired at `?2`) tokens of principal `?1`, the newest:
/// the list stays short and the table bounded however often a client creates and revokes.
pub const PRUNE_DEAD: &str = "DELETE FROM api_token \
WHERE principal = ?1 AND (revoked_at IS NOT NULL OR expires_at <= ?2) \
AND id NOT IN (SELECT id FROM api_token \
               WHERE principal = ?1 AND (revoked_at IS NOT NULL OR expires_at <= ?2) \
               ORDER BY created_at DESC, id DESC LIMIT ?3)";

/// One token by id (`?1`).
pub const SELECT_BY_ID: &str = "SELECT id, principal, mode, name, display_name, email, \
token_hash, created_at, expires_at, last_used_at, revoked_at FROM api_token WHERE id = ?1";

/// The tokens of principal `?1`, newest first.
pub const SELECT_BY_PRINCIPAL: &str = "SELECT id, principal, mode, name, display_name, email, \
token_hash, created_at, expires_at, last_used_at, revoked_at FROM api_token \
WHERE principal = ?1 ORDER BY created_at DESC, id DESC";

/// Records a use at `?2` of token `?1` unless one was recorded after `?3` (a minute earlier):
/// the condition repeats the caller's check, so two racing requests write once.
pub const TOUCH: &str = "UPDATE api_token SET last_used_at = ?2 \
WHERE id = ?1 AND (last_used_at IS NULL OR last_used_at <= ?3)";

/// Revokes token `?1` of principal `?2` at `?3`; yields the id when it was live until now.
pub const REVOKE: &str = "UPDATE api_token SET revoked_at = ?3 \
WHERE id = ?1 AND principal = ?2 AND revoked_at IS NULL RETURNING id";

/// Revokes every live token of principal `?1` at `?2` (a password change or reset: whoever
/// held the old password may have made them); yields the ids it revoked.
pub const REVOKE_ALL: &str = "UPDATE api_token SET revoked_at = ?2 \
WHERE principal = ?1 AND revoked_at IS NULL RETURNING id";

/// Whether token `?1` belongs to principal `?2` (a revoke that changed nothing: already
/// revoked, or not the caller's).
pub const OWNED: &str = "SELECT 1 FROM api_token WHERE id = ?1 AND principal = ?2";
