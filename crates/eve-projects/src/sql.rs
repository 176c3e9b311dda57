//! Every statement on projects and their files (migration 0012). Each write is one statement
//! whose ownership check is inside it (`principal = ?`), so another principal's row is never
//! touched and `RETURNING` says whether anything was (→ 404).

/// `?1` id, `?2` principal, `?3` name, `?4` instructions, `?5` now.
pub const INSERT_PROJECT: &str = "\
INSERT INTO project (id, principal, name, instructions, created_at, updated_at) \
VALUES (?1, ?2, ?3, ?4, ?5, ?5) RETURNING id, name, instructions, created_at, updated_at";

pub const SELECT_PROJECT: &str = "\
SELECT id, name, instructions, created_at, updated_at FROM project WHERE id = ?1 AND principal = ?2";

pub const LIST_PROJECTS: &str = "\
SELECT id, name, instructions, created_at, updated_at FROM project WHERE principal = ?1 \
ORDER BY updated_at DESC, id DESC LIMIT ?2";

pub const COUNT_PROJECTS: &str = "SELECT count(*) FROM project WHERE principal = ?1";

/// `?3` name or NULL (kept), `?4` instructions or NULL (kept), `?5` now.
pub const UPDATE_PROJECT: &str = "\
UPDATE project SET name = coalesce(?3, name), instructions = coalesce(?4, instructions), \
updated_at = ?5 WHERE id = ?1 AND principal = ?2 \
RETURNING id, name, instructions, created_at, updated_at";

/// One statement: 0012's `project_deleted` trigger deletes its chats (and through 0005 their
/// sessions) and its files.
pub const DELETE_PROJECT: &str =
    "DELETE FROM project WHERE id = ?1 AND principal = ?2 RETURNING id";

/// Puts chat `?1` of `?2` into project `?3` (both the principal's), or takes it out when `?3`
/// is NULL. Returns the chat id when the chat is the principal's and the project too.
pub const SET_CHAT_PROJECT: &str = "\
INSERT INTO chat_project (chat_id, project_id) \
SELECT ?1, ?3 WHERE EXISTS (SELECT 1 FROM chat WHERE id = ?1 AND owner = ?2) \
AND EXISTS (SELECT 1 FROM project WHERE id = ?3 AND principal = ?2) \
ON CONFLICT (chat_id) DO UPDATE SET project_id = excluded.project_id RETURNING chat_id";

pub const CLEAR_CHAT_PROJECT: &str = "\
DELETE FROM chat_project WHERE chat_id = ?1 \
AND EXISTS (SELECT 1 FROM chat WHERE id = ?1 AND owner = ?2)";

pub const SELECT_CHAT_PROJECT: &str = "\
SELECT cp.project_id FROM chat_project AS cp JOIN chat AS c ON c.id = cp.chat_id \
WHERE cp.chat_id = ?1 AND c.owner = ?2";

/// A project's chats, newest first (the chat list's order and cursor): `?3` limit + 1,
/// `?4`/`?5` the cursor's `updated_at`/id or NULL for the first page.
pub const LIST_PROJECT_CHATS: &str = "\
SELECT c.id, c.title, c.created_at, c.updated_at FROM chat AS c \
JOIN chat_project AS cp ON cp.chat_id = c.id \
WHERE c.owner = ?1 AND cp.project_id = ?2 \
AND (?4 IS NULL OR (c.updated_at, c.id) < (?4, ?5)) \
ORDER BY c.updated_at DESC, c.id DESC LIMIT ?3";

/// The projects of the chats `?2` (a JSON array of ids) of principal `?1` (chats in none
/// have no row).
pub const CHATS_PROJECTS: &str = "\
SELECT cp.chat_id, cp.project_id FROM chat_project AS cp \
JOIN chat AS c ON c.id = cp.chat_id AND c.owner = ?1 \
WHERE cp.chat_id IN (SELECT value FROM json_each(?2))";

/// The project of the chat that holds session `?1` of principal `?2`, with its instructions.
pub const SESSION_PROJECT: &str = "\
SELECT p.id, p.instructions FROM chat_agent_session AS cas \
JOIN chat AS c ON c.id = cas.chat_id AND c.owner = ?2 \
JOIN chat_project AS cp ON cp.chat_id = c.id \
JOIN project AS p ON p.id = cp.project_id AND p.principal = ?2 \
WHERE cas.session_id = ?1 LIMIT 1";

/// Records that session `?2` belongs to chat `?1` of `?3` (the agent, when a session is
/// created for a chat: its first turn already knows the chat's project).
pub const RECORD_CHAT_SESSION: &str = "\
INSERT OR IGNORE INTO chat_agent_session (chat_id, session_id) \
SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM chat WHERE id = ?1 AND owner = ?3)";

/// The columns of a file as lists show it (no bytes beyond the preview's head).
macro_rules! file_columns {
    () => {
        "id, name, media_type, length(data), source, preview, created_at, updated_at"
    };
}

/// The byte cap a principal's storage has: an account's override (issue 20) or `?max`.
macro_rules! room_for {
    ($principal:literal, $size:literal, $max:literal) => {
        concat!(
            "coalesce((SELECT bytes FROM storage_usage WHERE scope = 'principal:' || ",
            $principal,
            "), 0) + ",
            $size,
            " <= coalesce((SELECT storage_bytes FROM principal_quota WHERE principal = ",
            $principal,
            "), ",
            $max,
            ")"
        )
    };
}

/// A user's upload: `?1` id, `?2` principal, `?3` scope, `?4` name, `?5` media type, `?6`
/// bytes, `?7` now, `?8` the default storage cap, `?9` the preview (JSON). Inserts only when the name is free and the
/// bytes fit the principal's storage; nothing returned otherwise (the caller reads why).
pub const INSERT_UPLOAD: &str = concat!(
    "INSERT INTO project_file (id, principal, scope, name, media_type, source, data, preview, created_at, updated_at) ",
    "SELECT ?1, ?2, ?3, ?4, ?5, 'user_upload', ?6, ?9, ?7, ?7 WHERE ",
    room_for!("?2", "length(?6)", "?8"),
    " AND NOT EXISTS (SELECT 1 FROM project_file WHERE scope = ?3 AND name = ?4) ",
    // A project deleted while its upload was on its way takes nothing in after it.
    "AND (?3 NOT LIKE 'project:%' OR EXISTS (SELECT 1 FROM project WHERE principal = ?2 AND 'project:' || id = ?3)) ",
    "RETURNING ",
    file_columns!()
);

/// The agent's write, one statement (never torn): creates the temp file `?4` or replaces the
/// bytes of the temp file of that name; a `user_upload` or `final_output` of that name is left
/// as it is (nothing returned). `?6` bytes, `?7` now, `?8` the default storage cap. Returns
/// whether the file existed (its `created_at` is older than now). `?9` the preview.
pub const UPSERT_TEMP: &str = concat!(
    "INSERT INTO project_file (id, principal, scope, name, media_type, source, data, preview, created_at, updated_at) ",
    "SELECT ?1, ?2, ?3, ?4, ?5, 'temp', ?6, ?9, ?7, ?7 WHERE ",
    room_for!("?2", "length(?6)", "?8"),
    " ON CONFLICT (scope, name) DO UPDATE SET data = excluded.data, media_type = excluded.media_type, preview = excluded.preview, ",
    "updated_at = excluded.updated_at WHERE project_file.source = 'temp' AND project_file.principal = excluded.principal ",
    "RETURNING id, created_at"
);

/// `?1` scope, `?2` principal.
pub const LIST_FILES: &str = concat!(
    "SELECT ",
    file_columns!(),
    " FROM project_file WHERE scope = ?1 AND principal = ?2 ORDER BY name"
);

pub const SELECT_FILE: &str = concat!(
    "SELECT ",
    file_columns!(),
    " FROM project_file WHERE id = ?1 AND scope = ?2 AND principal = ?3"
);

/// `?1` scope, `?2` principal, `?3` name: the source and the bytes.
pub const READ_FILE_BY_NAME: &str = "\
SELECT source, media_type, data FROM project_file WHERE scope = ?1 AND principal = ?2 AND name = ?3";

pub const FILE_NAMES: &str = "\
SELECT name, length(data), source FROM project_file WHERE scope = ?1 AND principal = ?2 ORDER BY name";

/// The first `?4` bytes of file `?3` (for `grep`, which reads one file at a time so that a
/// call holds at most one file's head in memory).
pub const FILE_HEAD: &str = "\
SELECT substr(data, 1, ?4) FROM project_file WHERE scope = ?1 AND principal = ?2 AND name = ?3";

pub const DOWNLOAD_FILE: &str = "\
SELECT name, media_type, data FROM project_file WHERE id = ?1 AND scope = ?2 AND principal = ?3";

/// A file's bytes by its id alone, the principal's only (the agent, for a file a message
/// named: the reference was checked against the chat's project when the message came).
pub const READ_FILE_BY_ID: &str = "\
SELECT data FROM project_file WHERE id = ?1 AND principal = ?2";

/// Marks a temp file final (a final one stays final: a retry answers the same).
pub const MARK_FINAL: &str = concat!(
    "UPDATE project_file SET source = 'final_output', updated_at = ?4 ",
    "WHERE id = ?1 AND scope = ?2 AND principal = ?3 AND source IN ('temp', 'final_output') RETURNING ",
    file_columns!()
);

/// Deletes a file unless a turn runs in a session of its scope (a session of one of the
/// project's chats, or the file's own session, whose lease is live at `?4`).
pub const DELETE_FILE: &str = "\
DELETE FROM project_file WHERE id = ?1 AND scope = ?2 AND principal = ?3 \
AND NOT EXISTS (SELECT 1 FROM eve_session AS s WHERE s.lease_owner IS NOT NULL AND s.lease_expires > ?4 \
  AND (('session:' || s.id) = ?2 OR s.id IN (SELECT cas.session_id FROM chat_agent_session AS cas \
       JOIN chat_project AS cp ON cp.chat_id = cas.chat_id WHERE 'project:' || cp.project_id = ?2))) \
RETURNING id";

pub const FILE_EXISTS: &str =
    "SELECT source FROM project_file WHERE id = ?1 AND scope = ?2 AND principal = ?3";

pub const STORAGE_USED: &str = "\
SELECT coalesce((SELECT bytes FROM storage_usage WHERE scope = 'principal:' || ?1), 0), \
coalesce((SELECT storage_bytes FROM principal_quota WHERE principal = ?1), ?2)";
