-- 0012 (issue 21): projects — chats, files and instructions that belong together.
--
-- A project is one principal's; a chat belongs to at most one project (`chat_project`, a
-- table of its own rather than a column on `chat`, for 0006's reason: every statement here is
-- idempotent and the chat queries stay as they are). Files live in SQLite like 0007's
-- attachments, never on a filesystem, under a scope: 'project:<id>' for a project's files,
-- 'session:<id>' for what the agent writes in a chat outside any project. A file's name is
-- unique in its scope and is all the agent addresses it by: no path anyone chooses.
--
-- The bytes count towards the principal's total of 0005 ('principal:<p>', so
-- `principal_max_bytes` and an account's override cover them), moved by triggers in the
-- statement that writes the row. Deleting a project deletes its chats (with 0005's cascade:
-- their events, agent sessions and attachments) and its files in one statement; deleting an
-- eve session deletes its session-scoped files.
CREATE TABLE IF NOT EXISTS project (
    id           TEXT PRIMARY KEY NOT NULL,
    principal    TEXT NOT NULL,
    name         TEXT NOT NULL,
    instructions TEXT NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS project_by_principal ON project (principal, updated_at);

CREATE TABLE IF NOT EXISTS chat_project (
    chat_id    TEXT PRIMARY KEY NOT NULL,
    project_id TEXT NOT NULL
) WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS chat_project_by_project ON chat_project (project_id);

CREATE TRIGGER IF NOT EXISTS chat_project_on_chat_delete AFTER DELETE ON chat
BEGIN
    DELETE FROM chat_project WHERE chat_id = OLD.id;
END;

CREATE TABLE IF NOT EXISTS project_file (
    id         TEXT PRIMARY KEY NOT NULL,
    principal  TEXT NOT NULL,
    scope      TEXT NOT NULL,                 -- 'project:<id>' | 'session:<id>'
    name       TEXT NOT NULL,
    media_type TEXT NOT NULL,
    source     TEXT NOT NULL CHECK (source IN ('user_upload', 'temp', 'final_output')),
    data       BLOB NOT NULL,
    preview    TEXT NOT NULL DEFAULT '{"kind":"other"}',  -- eve_api::projects::FilePreview, made on write
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE UNIQUE INDEX IF NOT EXISTS project_file_by_name ON project_file (scope, name);

CREATE TRIGGER IF NOT EXISTS project_file_counted_insert AFTER INSERT ON project_file
BEGIN
    INSERT INTO storage_usage (scope, bytes) VALUES ('principal:' || NEW.principal, length(NEW.data))
    ON CONFLICT (scope) DO UPDATE SET bytes = bytes + excluded.bytes;
END;

CREATE TRIGGER IF NOT EXISTS project_file_counted_update AFTER UPDATE OF data ON project_file
BEGIN
    UPDATE storage_usage SET bytes = bytes + length(NEW.data) - length(OLD.data)
    WHERE scope = 'principal:' || NEW.principal;
END;

CREATE TRIGGER IF NOT EXISTS project_file_counted_delete AFTER DELETE ON project_file
BEGIN
    UPDATE storage_usage SET bytes = bytes - length(OLD.data)
    WHERE scope = 'principal:' || OLD.principal;
END;

-- A project's chats are deleted with it (0005's triggers take their logs, sessions and
-- attachments along), then its files: one statement, so a retry of the DELETE finds either
-- everything or nothing left.
CREATE TRIGGER IF NOT EXISTS project_deleted AFTER DELETE ON project
BEGIN
    DELETE FROM chat WHERE owner = OLD.principal
        AND id IN (SELECT chat_id FROM chat_project WHERE project_id = OLD.id);
    DELETE FROM chat_project WHERE project_id = OLD.id;
    DELETE FROM project_file WHERE scope = 'project:' || OLD.id;
END;

CREATE TRIGGER IF NOT EXISTS eve_session_files_deleted AFTER DELETE ON eve_session
BEGIN
    DELETE FROM project_file WHERE scope = 'session:' || OLD.id;
END;

-- Large tool outputs were kept in `agent_tool_output` and never read again: they become the
-- session's temp files, which `read_file` reads (the agent writes no more rows there).
INSERT OR IGNORE INTO project_file
    (id, principal, scope, name, media_type, source, data, created_at, updated_at)
SELECT 'file_out_' || lower(hex(randomblob(10))), s.principal, 'session:' || t.session_id,
       'tool-output-' || t.tool_call_id || '.json', 'application/json', 'temp',
       CAST(t.output AS BLOB), t.created_at, t.created_at
FROM agent_tool_output AS t JOIN eve_session AS s ON s.id = t.session_id;

DELETE FROM agent_tool_output WHERE EXISTS (
    SELECT 1 FROM project_file AS f
    WHERE f.scope = 'session:' || agent_tool_output.session_id
      AND f.name = 'tool-output-' || agent_tool_output.tool_call_id || '.json');
