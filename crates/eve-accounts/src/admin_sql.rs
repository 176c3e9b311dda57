//! The statements of the admin's account management (`/api/admin/users*`), over `account`
//! and, for deleting, every table that holds something of a principal (migrations
//! 0001–0013).

/// Whether `?1` (an account id) is an enabled admin: read on every admin request, so a
/// demotion or a disable takes effect on the next one.
pub const IS_ENABLED_ADMIN: &str = "SELECT EXISTS (SELECT 1 FROM account \
    WHERE id = ?1 AND role = 'admin' AND disabled = 0)";

/// A page of accounts in `(created_at, id)` order after the cursor `(?2, ?3)`, whose email or
/// display name is LIKE `?1` (NULL: all), at most `?4`.
pub const LIST_USERS: &str = "SELECT id, email, display_name, password_hash, role, disabled, \
    language, default_model, created_at, last_active_at FROM account \
    WHERE (?1 IS NULL OR email LIKE ?1 ESCAPE '\\' OR display_name LIKE ?1 ESCAPE '\\') \
    AND (created_at > ?2 OR (created_at = ?2 AND id > ?3)) \
    ORDER BY created_at, id LIMIT ?4";

/// Sets role `?2` (NULL: unchanged) and disabled `?3` (NULL: unchanged) of account `?1`,
/// unless that would leave no enabled admin: the guard is part of this one statement, so two
/// admins demoting each other at once cannot both succeed (SQLite runs writes one at a time).
pub const PATCH_USER: &str = "UPDATE account SET \
    role = coalesce(?2, role), disabled = coalesce(?3, disabled) \
    WHERE id = ?1 AND ( \
        (coalesce(?2, role) = 'admin' AND coalesce(?3, disabled) = 0) \
        OR NOT (role = 'admin' AND disabled = 0) \
        OR EXISTS (SELECT 1 FROM account AS other \
                   WHERE other.role = 'admin' AND other.disabled = 0 AND other.id <> ?1)) \
    RETURNING id, email, display_name, password_hash, role, disabled, \
    language, default_model, created_at, last_active_at";

/// Asks every running turn of principal `?1` to stop at `?2` (ms): the agent's cancel request
/// (`eve_session.cancel_at`, the log's length when the cancel arrived; see
/// `crates/eve-agent/src/session/resume.rs`), which its runner reads each time it renews its
/// lease. A turn that starts later opens past this index and is not affected.
pub const CANCEL_RUNNING_TURNS: &str = "UPDATE eve_session SET \
    cancel_at = (SELECT coalesce(max(idx) + 1, 0) FROM eve_event WHERE session_id = eve_session.id), \
    updated_at = ?2 WHERE principal = ?1 AND status = 'active'";

/// Drops what principal `?1` queued and no runner has taken yet (messages, clears,
/// compacts): a disabled account's work does not start later, not even when it is enabled
/// again. (The agent also takes no queued row of a disabled account: a message racing the
/// disable is not run either; `eve_agent::session::store::SELECT_INBOX_HEAD`.)
pub const DROP_QUEUED_WORK: &str =
    "DELETE FROM eve_inbox WHERE session_id IN (SELECT id FROM eve_session WHERE principal = ?1)";

/// Deleting an account: each statement is idempotent and the account row goes last, so a
/// retry of a half-done delete completes it. `?1` is the principal (`user:<id>`); the account
/// id is what follows its `user:` prefix. Deleting a chat row deletes its log, search text, pin, counters and its
/// sessions (triggers of 0005–0007); the statements after it take what no chat holds.
pub const DELETE_ACCOUNT_DATA: [&str; 19] = [
    "DELETE FROM chat WHERE owner = ?1",
    // A project's row takes its chats' links and its files with it (trigger of 0012); the
    // files of sessions outside a project go by their principal.
    "DELETE FROM project WHERE principal = ?1",
    "DELETE FROM project_file WHERE principal = ?1",
    "DELETE FROM eve_event WHERE session_id IN (SELECT id FROM eve_session WHERE principal = ?1)",
    "DELETE FROM eve_inbox WHERE session_id IN (SELECT id FROM eve_session WHERE principal = ?1)",
    "DELETE FROM agent_tool_output WHERE session_id IN (SELECT id FROM eve_session WHERE principal = ?1)",
    "DELETE FROM eve_attachment WHERE principal = ?1",
    "DELETE FROM eve_session WHERE principal = ?1",
    "DELETE FROM agent_memory WHERE principal = ?1",
    "DELETE FROM agent_connection_grant WHERE principal = ?1",
    "DELETE FROM agent_connection_token WHERE principal = ?1",
    "DELETE FROM api_token WHERE principal = ?1",
    "DELETE FROM usage_daily WHERE principal = ?1",
    "DELETE FROM principal_quota WHERE principal = ?1",
    "DELETE FROM storage_usage WHERE scope IN ('principal:' || ?1, 'attachments:' || ?1)",
    "DELETE FROM skill WHERE owner = ?1",
    "DELETE FROM skill_disabled WHERE principal = ?1",
    "DELETE FROM account_reset WHERE account_id = substr(?1, 6)",
    "DELETE FROM account WHERE id = substr(?1, 6)",
];
