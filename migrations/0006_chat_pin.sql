-- 0006: chats pinned to the top of the sidebar.
--
-- A table of its own rather than a column on `chat`: every statement here is idempotent
-- (`spin up --sqlite @file` runs the files on every start, and SQLite has no
-- `ADD COLUMN IF NOT EXISTS`), and the chat queries and their summaries stay as they are.
CREATE TABLE IF NOT EXISTS chat_pin (
    chat_id   TEXT PRIMARY KEY NOT NULL,
    pinned_at INTEGER NOT NULL
) WITHOUT ROWID;

-- A deleted chat is unpinned in the statement that deletes it (as 0005 does for the rest).
CREATE TRIGGER IF NOT EXISTS chat_unpinned_on_delete AFTER DELETE ON chat
BEGIN
    DELETE FROM chat_pin WHERE chat_id = OLD.id;
END;
