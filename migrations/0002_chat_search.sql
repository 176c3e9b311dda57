-- 0002: search over message text. Each chat's transcript as plain text (user and assistant
-- turns, rewritten with every snapshot), searched with LIKE next to the title.
--
-- A table of its own rather than a new column: SQLite has no ADD COLUMN IF NOT EXISTS, and
-- every statement here must stay safe to run twice (two instances migrating at once, or
-- `spin up --sqlite @migrations/0002_chat_search.sql` on every start).

CREATE TABLE IF NOT EXISTS chat_search (
    chat_id TEXT PRIMARY KEY NOT NULL REFERENCES chat (id) ON DELETE CASCADE,
    body    TEXT NOT NULL
);
