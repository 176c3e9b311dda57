-- 0001: the app chat and its event log (seed 000, "persistence model").
--
-- Timestamps are INTEGER milliseconds since the Unix epoch, UTC: exact to compare (the sidebar
-- cursor), compact to index; the API shows them as ISO-8601 with milliseconds.
-- Every statement is idempotent (IF NOT EXISTS) so two instances migrating at once are safe.

CREATE TABLE IF NOT EXISTS chat (
    id                      TEXT PRIMARY KEY NOT NULL,
    owner                   TEXT NOT NULL,            -- the principal id; every query filters on it
    title                   TEXT NOT NULL DEFAULT 'New chat',
    eve_session             TEXT,                     -- ClientSessionState JSON, or NULL
    pending_user_message    TEXT,
    pending_user_message_at INTEGER,                  -- ms; set and cleared with the message
    created_at              INTEGER NOT NULL,
    updated_at              INTEGER NOT NULL
);

-- The sidebar: WHERE owner = ? AND (updated_at, id) < (?, ?) ORDER BY updated_at DESC, id DESC.
CREATE INDEX IF NOT EXISTS idx_chat_owner_updated ON chat (owner, updated_at DESC, id DESC);

CREATE TABLE IF NOT EXISTS chat_event (
    id          INTEGER PRIMARY KEY,
    chat_id     TEXT NOT NULL REFERENCES chat (id) ON DELETE CASCADE,
    event_index INTEGER NOT NULL CHECK (event_index >= 0),
    event_type  TEXT NOT NULL,                        -- the event's "type", for settling checks
    event       TEXT NOT NULL,                        -- the event, JSON
    created_at  INTEGER NOT NULL                      -- ms; when the slot got its current event
);

-- Invariant 1: one row per (chat, index); also serves every per-chat read in index order.
CREATE UNIQUE INDEX IF NOT EXISTS idx_chat_event_chat_index ON chat_event (chat_id, event_index);
