-- The agent's eve v1 sessions (crates/eve-agent/src/store.rs holds every statement on them).
-- The agent_* tables of the earlier dialect stay where they are; their sessions are not eve
-- sessions and are no longer served (a chat that names one starts a new eve session).

-- One row per eve session: its owner, whether it was reset, the cancel request, and the lease
-- of the runner executing its current turn (renewed while it runs; a runner that loses it is
-- fenced out of the log).
CREATE TABLE IF NOT EXISTS eve_session (
    id TEXT PRIMARY KEY NOT NULL,
    principal TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    status TEXT NOT NULL DEFAULT 'active',
    cancel_at INTEGER NOT NULL DEFAULT -1,
    lease_owner TEXT,
    lease_expires INTEGER NOT NULL DEFAULT 0,
    client_context TEXT
);

CREATE INDEX IF NOT EXISTS eve_session_by_principal ON eve_session (principal, updated_at);

-- The durable stream: one envelope (`{type, data, meta}`) per row, `(session_id, idx)` unique.
CREATE TABLE IF NOT EXISTS eve_event (
    session_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, idx)
) WITHOUT ROWID;

-- Accepted messages and controls not yet acted on, in arrival order (a message sent while a
-- turn runs waits here for the next turn; a clear or compact waits for the turn to settle).
CREATE TABLE IF NOT EXISTS eve_inbox (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    delivery_id TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;

-- Per-principal memory, authorized connections and their tokens, tool outputs kept aside.
CREATE TABLE IF NOT EXISTS agent_memory (
    principal TEXT PRIMARY KEY NOT NULL,
    document TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS agent_connection_grant (
    principal TEXT NOT NULL,
    connection TEXT NOT NULL,
    granted_at INTEGER NOT NULL,
    PRIMARY KEY (principal, connection)
);

CREATE TABLE IF NOT EXISTS agent_connection_token (
    principal TEXT NOT NULL,
    connection TEXT NOT NULL,
    access_token TEXT NOT NULL,
    obtained_at INTEGER NOT NULL,
    PRIMARY KEY (principal, connection)
);

CREATE TABLE IF NOT EXISTS agent_tool_output (
    session_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    output TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, tool_call_id)
);
