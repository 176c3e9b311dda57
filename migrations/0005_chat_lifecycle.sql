-- 0005: what a chat owns, how much it stores, and ids that stay dead.
--
-- Triggers, because Spin's SQLite has no transaction API: a trigger runs inside the statement
-- that fired it, so deleting a chat row removes everything of the chat in that one statement
-- (a crash cannot leave half of it behind), and the byte counters move in the same statement
-- as the rows they count (exact under concurrency, no SUM over all rows per write).
-- Every statement is idempotent (IF NOT EXISTS / OR IGNORE) like the earlier files.

-- Every eve session a chat has stored (a chat can move to a new session when its old one is
-- gone), so that deleting the chat deletes all of them, not only the current one.
CREATE TABLE IF NOT EXISTS chat_agent_session (
    chat_id    TEXT NOT NULL,
    session_id TEXT NOT NULL,
    PRIMARY KEY (chat_id, session_id)
) WITHOUT ROWID;

-- Ids of deleted chats: never created again, so a new chat cannot inherit anything that was
-- still on its way to the old one.
CREATE TABLE IF NOT EXISTS chat_tombstone (
    id TEXT PRIMARY KEY NOT NULL
) WITHOUT ROWID;

-- Running byte totals: scope 'chat:<id>' (its event log) and 'principal:<id>' (every chat's
-- log plus the agent's session events and tool outputs).
CREATE TABLE IF NOT EXISTS storage_usage (
    scope TEXT PRIMARY KEY NOT NULL,
    bytes INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

INSERT OR IGNORE INTO chat_agent_session (chat_id, session_id)
SELECT id, json_extract(eve_session, '$.sessionId') FROM chat
WHERE json_valid(eve_session) AND json_extract(eve_session, '$.sessionId') IS NOT NULL;

CREATE TRIGGER IF NOT EXISTS chat_session_recorded AFTER UPDATE OF eve_session ON chat
WHEN json_valid(NEW.eve_session) AND json_extract(NEW.eve_session, '$.sessionId') IS NOT NULL
BEGIN
    INSERT OR IGNORE INTO chat_agent_session (chat_id, session_id)
    VALUES (NEW.id, json_extract(NEW.eve_session, '$.sessionId'));
END;

-- Totals for the rows that exist before this migration (run once: the version row follows).
INSERT OR IGNORE INTO storage_usage (scope, bytes)
SELECT 'chat:' || chat_id, sum(length(CAST(event AS BLOB))) FROM chat_event GROUP BY chat_id;

INSERT OR IGNORE INTO storage_usage (scope, bytes)
SELECT 'principal:' || owner, sum(b) FROM (
    SELECT c.owner AS owner, length(CAST(e.event AS BLOB)) AS b
    FROM chat_event AS e JOIN chat AS c ON c.id = e.chat_id
    UNION ALL
    SELECT s.principal, length(CAST(v.body AS BLOB)) FROM eve_event AS v JOIN eve_session AS s ON s.id = v.session_id
    UNION ALL
    SELECT s.principal, length(CAST(t.output AS BLOB)) FROM agent_tool_output AS t JOIN eve_session AS s ON s.id = t.session_id
) GROUP BY owner;

CREATE TRIGGER IF NOT EXISTS chat_event_counted_insert AFTER INSERT ON chat_event
BEGIN
    INSERT INTO storage_usage (scope, bytes) VALUES ('chat:' || NEW.chat_id, length(CAST(NEW.event AS BLOB)))
    ON CONFLICT (scope) DO UPDATE SET bytes = bytes + excluded.bytes;
    INSERT INTO storage_usage (scope, bytes)
    SELECT 'principal:' || owner, length(CAST(NEW.event AS BLOB)) FROM chat WHERE id = NEW.chat_id
    ON CONFLICT (scope) DO UPDATE SET bytes = bytes + excluded.bytes;
END;

CREATE TRIGGER IF NOT EXISTS chat_event_counted_update AFTER UPDATE OF event ON chat_event
BEGIN
    UPDATE storage_usage SET bytes = bytes + length(CAST(NEW.event AS BLOB)) - length(CAST(OLD.event AS BLOB))
    WHERE scope = 'chat:' || NEW.chat_id
       OR scope = (SELECT 'principal:' || owner FROM chat WHERE id = NEW.chat_id);
END;

-- When the chat row is gone already (its delete triggers below) only the chat's own counter
-- moves, and that one is gone too; the principal's was settled by `chat_deleting` in one step.
CREATE TRIGGER IF NOT EXISTS chat_event_counted_delete AFTER DELETE ON chat_event
BEGIN
    UPDATE storage_usage SET bytes = bytes - length(CAST(OLD.event AS BLOB))
    WHERE scope = 'chat:' || OLD.chat_id
       OR scope = (SELECT 'principal:' || owner FROM chat WHERE id = OLD.chat_id);
END;

CREATE TRIGGER IF NOT EXISTS eve_event_counted_insert AFTER INSERT ON eve_event
BEGIN
    INSERT INTO storage_usage (scope, bytes)
    SELECT 'principal:' || principal, length(CAST(NEW.body AS BLOB)) FROM eve_session WHERE id = NEW.session_id
    ON CONFLICT (scope) DO UPDATE SET bytes = bytes + excluded.bytes;
END;

CREATE TRIGGER IF NOT EXISTS eve_event_counted_delete AFTER DELETE ON eve_event
BEGIN
    UPDATE storage_usage SET bytes = bytes - length(CAST(OLD.body AS BLOB))
    WHERE scope = (SELECT 'principal:' || principal FROM eve_session WHERE id = OLD.session_id);
END;

CREATE TRIGGER IF NOT EXISTS agent_tool_output_counted_insert AFTER INSERT ON agent_tool_output
BEGIN
    INSERT INTO storage_usage (scope, bytes)
    SELECT 'principal:' || principal, length(CAST(NEW.output AS BLOB)) FROM eve_session WHERE id = NEW.session_id
    ON CONFLICT (scope) DO UPDATE SET bytes = bytes + excluded.bytes;
END;

CREATE TRIGGER IF NOT EXISTS agent_tool_output_counted_delete AFTER DELETE ON agent_tool_output
BEGIN
    UPDATE storage_usage SET bytes = bytes - length(CAST(OLD.output AS BLOB))
    WHERE scope = (SELECT 'principal:' || principal FROM eve_session WHERE id = OLD.session_id);
END;

-- Deleting a chat row deletes everything of the chat, in the same statement: its log, search
-- text and counters, and every eve session it stored that belongs to its owner (a session id
-- of someone else's written onto one's own chat deletes nothing of theirs) with their events,
-- inbox and tool outputs. Connection grants and tokens are the principal's, shared by all of
-- its chats, and stay. The id is tombstoned.
-- The log's bytes leave the principal's total before the row goes: where foreign keys are
-- enforced, the cascade deletes the events before any AFTER trigger runs.
CREATE TRIGGER IF NOT EXISTS chat_deleting BEFORE DELETE ON chat
BEGIN
    UPDATE storage_usage
    SET bytes = bytes - coalesce((SELECT bytes FROM storage_usage WHERE scope = 'chat:' || OLD.id), 0)
    WHERE scope = 'principal:' || OLD.owner;
    DELETE FROM storage_usage WHERE scope = 'chat:' || OLD.id;
END;

CREATE TRIGGER IF NOT EXISTS chat_deleted AFTER DELETE ON chat
BEGIN
    INSERT OR IGNORE INTO chat_tombstone (id) VALUES (OLD.id);
    DELETE FROM chat_event WHERE chat_id = OLD.id;
    DELETE FROM chat_search WHERE chat_id = OLD.id;
    DELETE FROM eve_event WHERE session_id IN (
        SELECT id FROM eve_session WHERE principal = OLD.owner AND (
            id IN (SELECT session_id FROM chat_agent_session WHERE chat_id = OLD.id)
            OR id = json_extract(CASE WHEN json_valid(OLD.eve_session) THEN OLD.eve_session END, '$.sessionId')));
    DELETE FROM eve_inbox WHERE session_id IN (
        SELECT id FROM eve_session WHERE principal = OLD.owner AND (
            id IN (SELECT session_id FROM chat_agent_session WHERE chat_id = OLD.id)
            OR id = json_extract(CASE WHEN json_valid(OLD.eve_session) THEN OLD.eve_session END, '$.sessionId')));
    DELETE FROM agent_tool_output WHERE session_id IN (
        SELECT id FROM eve_session WHERE principal = OLD.owner AND (
            id IN (SELECT session_id FROM chat_agent_session WHERE chat_id = OLD.id)
            OR id = json_extract(CASE WHEN json_valid(OLD.eve_session) THEN OLD.eve_session END, '$.sessionId')));
    DELETE FROM eve_session WHERE principal = OLD.owner AND (
        id IN (SELECT session_id FROM chat_agent_session WHERE chat_id = OLD.id)
        OR id = json_extract(CASE WHEN json_valid(OLD.eve_session) THEN OLD.eve_session END, '$.sessionId'));
    DELETE FROM chat_agent_session WHERE chat_id = OLD.id;
END;
