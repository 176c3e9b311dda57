//! Every SQL statement of the chat store, as named constants (the schema is in `migrations/`).
//!
//! Each write is ONE self-contained statement, because Spin's SQLite interface runs one
//! statement per call and offers no transaction (and BEGIN/COMMIT across calls is unreliable on
//! remote libSQL). Writes that act for a principal carry the ownership check inside the same
//! statement (`WHERE EXISTS (SELECT 1 FROM chat WHERE id = ?1 AND owner = ?2)`), so a chat that
//! is deleted or foreign at that instant is never written to. Many events go in one statement as
//! one JSON parameter expanded by `json_each`, which also sidesteps SQLite's bound-parameter
//! limit. `RETURNING` tells the caller whether a row was touched (Spin reports no change count).

/// Creates a chat; an id that exists already, or belonged to a deleted chat (migration 0005's
/// `chat_tombstone`), is left alone (no row returned).
pub const INSERT_CHAT: &str = "\
INSERT INTO chat (id, owner, title, pending_user_message, pending_user_message_at, created_at, updated_at)
SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?6
WHERE NOT EXISTS (SELECT 1 FROM chat_tombstone WHERE id = ?1)
ON CONFLICT (id) DO NOTHING
RETURNING id, title, created_at, updated_at";

/// Whether `?1` is the id of a deleted chat.
pub const SELECT_TOMBSTONE: &str = "SELECT 1 FROM chat_tombstone WHERE id = ?1";

/// The length of the chat's log: its highest slot + 1 (the base a write extends).
pub const SELECT_EVENT_COUNT: &str = "\
SELECT coalesce(max(event_index) + 1, 0) FROM chat_event WHERE chat_id = ?1";

/// The running byte totals of a chat and of its owner (migration 0005's triggers keep them).
pub const SELECT_USAGE: &str = "\
SELECT coalesce((SELECT bytes FROM storage_usage WHERE scope = 'chat:' || ?1), 0),
       coalesce((SELECT bytes FROM storage_usage WHERE scope = 'principal:' || ?2), 0)";

/// The running byte total of one principal (`?1`): its chat logs, agent events and tool outputs.
pub const SELECT_PRINCIPAL_USAGE: &str = "\
SELECT coalesce((SELECT bytes FROM storage_usage WHERE scope = 'principal:' || ?1), 0)";

/// One chat of the principal, as a sidebar entry.
pub const SELECT_CHAT_SUMMARY: &str = "\
SELECT id, title, created_at, updated_at FROM chat WHERE id = ?1 AND owner = ?2";

/// One chat of the principal with its session and pending message.
pub const SELECT_CHAT: &str = "\
SELECT id, title, created_at, updated_at, eve_session, pending_user_message, pending_user_message_at
FROM chat WHERE id = ?1 AND owner = ?2";

/// First sidebar page: `?1` owner, `?2` rows to fetch (page size + 1).
pub const LIST_CHATS_FIRST: &str = "\
SELECT id, title, created_at, updated_at FROM chat
WHERE owner = ?1
ORDER BY updated_at DESC, id DESC LIMIT ?2";

/// Next sidebar page: the compound keyset comparison `(updated_at, id) < (?3, ?4)`, which is
/// `updated_at < ?3 OR (updated_at = ?3 AND id < ?4)` and walks `idx_chat_owner_updated`.
pub const LIST_CHATS_AFTER: &str = "\
SELECT id, title, created_at, updated_at FROM chat
WHERE owner = ?1 AND (updated_at, id) < (?3, ?4)
ORDER BY updated_at DESC, id DESC LIMIT ?2";

/// Search, first page: `?5` is a LIKE pattern (see [`like_pattern`]) over title and text.
pub const SEARCH_CHATS_FIRST: &str = "\
SELECT c.id, c.title, c.created_at, c.updated_at FROM chat AS c
LEFT JOIN chat_search AS s ON s.chat_id = c.id
WHERE c.owner = ?1 AND (c.title LIKE ?5 ESCAPE '\\' OR s.body LIKE ?5 ESCAPE '\\')
ORDER BY c.updated_at DESC, c.id DESC LIMIT ?2";

/// Search, next page.
pub const SEARCH_CHATS_AFTER: &str = "\
SELECT c.id, c.title, c.created_at, c.updated_at FROM chat AS c
LEFT JOIN chat_search AS s ON s.chat_id = c.id
WHERE c.owner = ?1 AND (c.updated_at, c.id) < (?3, ?4)
  AND (c.title LIKE ?5 ESCAPE '\\' OR s.body LIKE ?5 ESCAPE '\\')
ORDER BY c.updated_at DESC, c.id DESC LIMIT ?2";

/// The principal's pinned chats, most recently pinned first: `?1` owner, `?2` at most.
pub const LIST_PINNED_CHATS: &str = "\
SELECT c.id, c.title, c.created_at, c.updated_at FROM chat_pin AS p
JOIN chat AS c ON c.id = p.chat_id
WHERE c.owner = ?1
ORDER BY p.pinned_at DESC, c.id DESC LIMIT ?2";

/// Pins a chat of the principal (`?3` now, `?4` the most pins a principal may have); pinning
/// it again keeps its place. No row: not the principal's chat, or too many pins.
pub const PIN_CHAT: &str = "\
INSERT INTO chat_pin (chat_id, pinned_at)
SELECT ?1, ?3
WHERE EXISTS (SELECT 1 FROM chat WHERE id = ?1 AND owner = ?2)
  AND (EXISTS (SELECT 1 FROM chat_pin WHERE chat_id = ?1)
       OR (SELECT count(*) FROM chat_pin AS p JOIN chat AS c ON c.id = p.chat_id WHERE c.owner = ?2) < ?4)
ON CONFLICT (chat_id) DO UPDATE SET pinned_at = pinned_at
RETURNING chat_id";

/// Unpins a chat of the principal (a chat that was not pinned is fine).
pub const UNPIN_CHAT: &str = "\
DELETE FROM chat_pin WHERE chat_id = ?1 AND EXISTS (SELECT 1 FROM chat WHERE id = ?1 AND owner = ?2)";

/// The event log in index order (the export: the one reader of the whole log).
pub const SELECT_EVENTS: &str = "\
SELECT event FROM chat_event WHERE chat_id = ?1 ORDER BY event_index";

/// One window of the log (`crate::window`): the events before slot `?2`, newest first, `?3`
/// rows at most (a page + 1, to know whether earlier ones exist). Walks
/// `idx_chat_event_chat_index` backwards from `?2`: the same cost at any depth of any log.
pub const SELECT_EVENTS_BEFORE: &str = "\
SELECT event_index, event FROM chat_event
WHERE chat_id = ?1 AND event_index < ?2
ORDER BY event_index DESC LIMIT ?3";

/// The events from slot `?2` on, before `?3`, in index order, `?4` at most (a tail snapshot
/// reads the start of the log page by page for the chat's search text).
pub const SELECT_EVENTS_RANGE: &str = "\
SELECT event_index, event FROM chat_event
WHERE chat_id = ?1 AND event_index >= ?2 AND event_index < ?3
ORDER BY event_index LIMIT ?4";

/// The newest branch marker before slot `?2` (the type is
/// [`crate::window::BRANCH_EVENT_TYPE`]; a test keeps them equal), via migration 0018's index.
pub const SELECT_BRANCH_BEFORE: &str = "\
SELECT event_index, event FROM chat_event
WHERE chat_id = ?1 AND event_type = 'eve-chat.branch' AND event_index < ?2
ORDER BY event_index DESC LIMIT 1";

/// When the newest settling event got its slot (the IN list is
/// [`crate::pending::SETTLING_EVENT_TYPES`]; a test keeps them equal): a covering scan of the
/// chat's settling rows in migration 0018's index.
pub const LATEST_SETTLING_EVENT_AT: &str = "\
SELECT max(created_at) FROM chat_event
WHERE chat_id = ?1
  AND event_type IN ('session.completed', 'session.failed', 'session.waiting', 'turn.waiting', 'authorization.required')";

/// The shared head and tail of [`UPSERT_EVENTS`] and [`UPSERT_SNAPSHOT_EVENTS`]: `?4` is a
/// JSON array of `[eventIndex, type, event]`. A slot written again gets the new event
/// (invariant 1); its `created_at` moves only when the event changed, so an identical retry
/// does not make an old settling event look new. Returns one row per slot written, none when
/// the chat is not the principal's, the base does not match, or the write would grow the chat
/// past `?7` bytes or its owner past `?8` (`?6` = the bytes of the new events). A write that does
/// not grow the log is never refused for size. All checks are in the statement, so they hold
/// under concurrent writers (SQLite runs one write statement at a time).
macro_rules! upsert_events {
    ($base:literal) => {
        concat!(
            "INSERT INTO chat_event (chat_id, event_index, event_type, event, created_at)
SELECT ?1, json_extract(e.value, '$[0]'), json_extract(e.value, '$[1]'), json_extract(e.value, '$[2]'), ?3
FROM json_each(?4) AS e
WHERE EXISTS (SELECT 1 FROM chat WHERE id = ?1 AND owner = ?2)
  AND (",
            $base,
            ")
  AND (?6 - coalesce((SELECT sum(length(CAST(o.event AS BLOB))) FROM chat_event AS o
                      WHERE o.chat_id = ?1
                        AND o.event_index IN (SELECT json_extract(value, '$[0]') FROM json_each(?4))), 0) <= 0
       OR (coalesce((SELECT bytes FROM storage_usage WHERE scope = 'chat:' || ?1), 0) + ?6
             - coalesce((SELECT sum(length(CAST(o.event AS BLOB))) FROM chat_event AS o
                         WHERE o.chat_id = ?1
                           AND o.event_index IN (SELECT json_extract(value, '$[0]') FROM json_each(?4))), 0) <= ?7
           AND coalesce((SELECT bytes FROM storage_usage WHERE scope = 'principal:' || ?2), 0) + ?6
             - coalesce((SELECT sum(length(CAST(o.event AS BLOB))) FROM chat_event AS o
                         WHERE o.chat_id = ?1
                           AND o.event_index IN (SELECT json_extract(value, '$[0]') FROM json_each(?4))), 0) <= ?8))
ON CONFLICT (chat_id, event_index) DO UPDATE SET
    event_type = excluded.event_type,
    created_at = CASE WHEN chat_event.event = excluded.event THEN chat_event.created_at
                      ELSE excluded.created_at END,
    event = excluded.event
RETURNING event_index"
        )
    };
}

/// Appends (single slot or batch). `?5` is the log length the writer extends, or NULL (no
/// check, the seed's upsert). With a base, the write is refused when another writer has put
/// a different event into any of its slots: the log must have at least `?5` events, no more
/// than the batch reaches, and every slot of the batch that exists must hold the same event
/// (an identical retry of a batch that landed passes; a second tab's different turn does not).
/// `CROSS JOIN` keeps the batch as the outer loop (SQLite never reorders it), so each slot is one
/// index lookup: left to the planner, the chat's rows were the outer loop and every append
/// visited the whole chat.
pub const UPSERT_EVENTS: &str = upsert_events!(
    "?5 IS NULL OR (
       (SELECT coalesce(max(event_index) + 1, 0) FROM chat_event WHERE chat_id = ?1) >= ?5
       AND (SELECT coalesce(max(event_index) + 1, 0) FROM chat_event WHERE chat_id = ?1)
           <= (SELECT max(json_extract(value, '$[0]')) + 1 FROM json_each(?4))
       AND NOT EXISTS (SELECT 1 FROM json_each(?4) AS d CROSS JOIN chat_event AS o
                       ON o.chat_id = ?1 AND o.event_index = json_extract(d.value, '$[0]')
                       WHERE o.event <> json_extract(d.value, '$[2]')))"
);

/// A snapshot's slots. `?5` is the log length the snapshot was built on, or NULL: with a base,
/// a log of any other length (someone else wrote since) refuses the whole snapshot.
pub const UPSERT_SNAPSHOT_EVENTS: &str = upsert_events!(
    "?5 IS NULL OR (SELECT coalesce(max(event_index) + 1, 0) FROM chat_event WHERE chat_id = ?1) = ?5"
);

/// Deletes the slots at or past `?3` (a snapshot's length; invariant 2). `?4`, when not NULL,
/// is the length the log must have right now: a writer that appended between the snapshot's
/// upsert and this delete keeps its events.
pub const DELETE_EVENTS_FROM: &str = "\
DELETE FROM chat_event
WHERE chat_id = ?1 AND event_index >= ?3
  AND EXISTS (SELECT 1 FROM chat WHERE id = ?1 AND owner = ?2)
  AND (?4 IS NULL OR (SELECT coalesce(max(event_index) + 1, 0) FROM chat_event WHERE chat_id = ?1) = ?4)";

/// Stores the chat's searchable text.
pub const UPSERT_SEARCH_TEXT: &str = "\
INSERT INTO chat_search (chat_id, body)
SELECT ?1, ?3 WHERE EXISTS (SELECT 1 FROM chat WHERE id = ?1 AND owner = ?2)
ON CONFLICT (chat_id) DO UPDATE SET body = excluded.body";

/// Ends a turn (snapshot, authorization skip): session (`?3` = 1 to set it to `?4`), pending
/// message cleared (invariant 3), `updated_at` touched.
pub const SETTLE_CHAT: &str = "\
UPDATE chat SET
    eve_session = CASE WHEN ?3 THEN ?4 ELSE eve_session END,
    pending_user_message = NULL,
    pending_user_message_at = NULL,
    updated_at = ?5
WHERE id = ?1 AND owner = ?2
RETURNING id, title, created_at, updated_at";

/// Marks the pending user message (seed `markChatPendingMessage`); a chat still called
/// "New chat" takes its title from the message (`?5`).
pub const MARK_PENDING: &str = "\
UPDATE chat SET
    pending_user_message = ?3,
    pending_user_message_at = ?4,
    updated_at = ?4,
    title = CASE WHEN title = 'New chat' THEN ?5 ELSE title END
WHERE id = ?1 AND owner = ?2
RETURNING id, title, created_at, updated_at";

/// Clears the pending message when it is still `?3` (or any, when `?3` is NULL); returns the
/// chat's id whenever the chat is the principal's.
pub const CLEAR_PENDING: &str = "\
UPDATE chat SET
    pending_user_message = CASE WHEN ?3 IS NULL OR pending_user_message = ?3 THEN NULL ELSE pending_user_message END,
    pending_user_message_at = CASE WHEN ?3 IS NULL OR pending_user_message = ?3 THEN NULL ELSE pending_user_message_at END
WHERE id = ?1 AND owner = ?2
RETURNING id";

/// Stores the eve session alone (seed `onSessionChange`; does not reorder the sidebar).
pub const SET_SESSION: &str = "\
UPDATE chat SET eve_session = ?3 WHERE id = ?1 AND owner = ?2 RETURNING eve_session";

/// Renames (does not reorder the sidebar).
pub const RENAME_CHAT: &str = "\
UPDATE chat SET title = ?3 WHERE id = ?1 AND owner = ?2
RETURNING id, title, created_at, updated_at";

/// Deletes the chat row. Migration 0005's `chat_deleted` trigger removes, in this same
/// statement, its events, search text, counters and agent sessions, and tombstones the id; the
/// sweeps below stay for a database written before that migration ran.
pub const DELETE_CHAT: &str = "\
DELETE FROM chat WHERE id = ?1 AND owner = ?2 RETURNING id";

/// Removes the events of a chat that no longer exists. Run after [`DELETE_CHAT`] and again on
/// a retried delete, so a delete cut off half way is finished by its retry. Appends cannot
/// recreate orphans: they check the chat inside their own statement.
pub const SWEEP_ORPHAN_EVENTS: &str = "\
DELETE FROM chat_event WHERE chat_id = ?1 AND NOT EXISTS (SELECT 1 FROM chat WHERE id = ?1)";

/// Removes the search text of a chat that no longer exists.
pub const SWEEP_ORPHAN_SEARCH_TEXT: &str = "\
DELETE FROM chat_search WHERE chat_id = ?1 AND NOT EXISTS (SELECT 1 FROM chat WHERE id = ?1)";

/// A LIKE pattern matching `text` anywhere, with `\`, `%` and `_` escaped (`ESCAPE '\'`).
/// LIKE is case-insensitive for ASCII letters and exact for everything else.
pub fn like_pattern(text: &str) -> String {
    let mut p = String::with_capacity(text.len() + 2);
    p.push('%');
    for c in text.chars() {
        if matches!(c, '\\' | '%' | '_') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pending::SETTLING_EVENT_TYPES;

    #[test]
    fn settling_types_in_sql_match_the_rule() {
        let list = SETTLING_EVENT_TYPES.map(|t| format!("'{t}'")).join(", ");
        assert!(LATEST_SETTLING_EVENT_AT.contains(&format!("IN ({list})")));
    }

    #[test]
    fn branch_type_in_sql_matches_the_window_rule() {
        let t = crate::window::BRANCH_EVENT_TYPE;
        assert!(SELECT_BRANCH_BEFORE.contains(&format!("event_type = '{t}'")));
    }

    #[test]
    fn default_title_in_sql_matches_the_api_constant() {
        assert!(MARK_PENDING.contains(&format!("'{}'", eve_api::chat::DEFAULT_CHAT_TITLE)));
    }

    #[test]
    fn like_pattern_escapes_wildcards() {
        assert_eq!(like_pattern("50%_off\\"), "%50\\%\\_off\\\\%");
        assert_eq!(like_pattern("数据"), "%数据%");
    }

    #[test]
    fn every_statement_is_a_single_statement() {
        for sql in [
            INSERT_CHAT,
            SELECT_CHAT_SUMMARY,
            SELECT_CHAT,
            LIST_CHATS_FIRST,
            LIST_CHATS_AFTER,
            SEARCH_CHATS_FIRST,
            SEARCH_CHATS_AFTER,
            SELECT_EVENTS,
            SELECT_EVENTS_BEFORE,
            SELECT_EVENTS_RANGE,
            SELECT_BRANCH_BEFORE,
            LATEST_SETTLING_EVENT_AT,
            UPSERT_EVENTS,
            UPSERT_SNAPSHOT_EVENTS,
            SELECT_TOMBSTONE,
            SELECT_EVENT_COUNT,
            SELECT_USAGE,
            DELETE_EVENTS_FROM,
            UPSERT_SEARCH_TEXT,
            SETTLE_CHAT,
            MARK_PENDING,
            CLEAR_PENDING,
            SET_SESSION,
            RENAME_CHAT,
            DELETE_CHAT,
            LIST_PINNED_CHATS,
            PIN_CHAT,
            UNPIN_CHAT,
            SWEEP_ORPHAN_EVENTS,
            SWEEP_ORPHAN_SEARCH_TEXT,
        ] {
            assert_eq!(crate::migrations::split_statements(sql).len(), 1, "{sql}");
        }
    }
}
