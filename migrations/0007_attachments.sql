-- 0007: files attached to messages (eve's file parts), kept in SQLite rather than on any
-- component's filesystem. The inbox and the event log carry only the attachment's id, so a
-- replay never repeats megabytes.
--
-- The bytes count towards the principal's total of 0005 ('principal:<id>', so
-- `principal_max_bytes` covers them) and towards an own total 'attachments:<id>' (the
-- `attachment_quota_bytes` cap), moved by triggers in the statement that writes the row.
-- Deleting a session deletes its attachments, so the chat delete of 0005 (which deletes the
-- chat's sessions) removes them in the same statement.
CREATE TABLE IF NOT EXISTS eve_attachment (
    id         TEXT PRIMARY KEY NOT NULL,
    principal  TEXT NOT NULL,
    session_id TEXT NOT NULL,
    media_type TEXT NOT NULL,
    filename   TEXT,
    data       BLOB NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS eve_attachment_by_session ON eve_attachment (session_id);

CREATE TRIGGER IF NOT EXISTS eve_attachment_counted_insert AFTER INSERT ON eve_attachment
BEGIN
    INSERT INTO storage_usage (scope, bytes) VALUES ('principal:' || NEW.principal, length(NEW.data))
    ON CONFLICT (scope) DO UPDATE SET bytes = bytes + excluded.bytes;
    INSERT INTO storage_usage (scope, bytes) VALUES ('attachments:' || NEW.principal, length(NEW.data))
    ON CONFLICT (scope) DO UPDATE SET bytes = bytes + excluded.bytes;
END;

CREATE TRIGGER IF NOT EXISTS eve_attachment_counted_delete AFTER DELETE ON eve_attachment
BEGIN
    UPDATE storage_usage SET bytes = bytes - length(OLD.data)
    WHERE scope = 'principal:' || OLD.principal OR scope = 'attachments:' || OLD.principal;
END;

CREATE TRIGGER IF NOT EXISTS eve_session_attachments_deleted AFTER DELETE ON eve_session
BEGIN
    DELETE FROM eve_attachment WHERE session_id = OLD.id;
END;
