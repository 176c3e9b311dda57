//! The agent's tables (`migrations/0003_eve_agent.sql`) and every SQL statement on them, over
//! the one-statement-per-call [`Sql`] seam (Spin's SQLite in the component, rusqlite in
//! tests). No statement relies on a transaction: each write is one self-contained statement.
//!
//! - `eve_session`: owner principal, status (`active`, `reset`), the cancel request, and the
//!   **lease** of the runner executing the current turn (`lease_owner`, `lease_expires`).
//! - `eve_event`: the durable stream, one envelope per row, `(session_id, idx)` unique. An event
//!   is appended by one statement that computes the next index and only succeeds while the
//!   writer holds the lease (fencing: a runner that lost its lease cannot write).
//! - `eve_inbox`: accepted messages and controls waiting for the runner, in order.
//! - `agent_memory`, `agent_connection_grant`, `agent_connection_token`. (`agent_tool_output` is
//!   no longer written: a large tool output is a project file since migration 0012.)

use eve_api::eve::{Envelope, Event};
use eve_store::limits::{principal_has_room, StorageQuota};
use eve_store::persistence::SELECT_PRINCIPAL_USAGE;
use eve_store::{Sql, SqlValue};

/// The database's clock, in milliseconds since the Unix epoch, read inside the statement that
/// decides a lease: every node then agrees on when a lease ends, whatever its own clock says
/// (two nodes with skewed clocks cannot both hold one). `unixepoch('subsec')` needs SQLite
/// 3.42; checked on the SQLite the host embeds (rusqlite's bundled 3.49) and on sqld 0.24.32
/// (libSQL 3.45.1). In the statements below it is `COALESCE(?n, db_now_ms!())`: production
/// passes NULL ([`Clock::Database`]); a native test passes a time to step through a
/// lease's life without waiting.
macro_rules! db_now_ms {
    () => {
        "CAST(unixepoch('subsec') * 1000 AS INTEGER)"
    };
}

/// Whose clock decides a lease or a lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// The database's, in the statement itself: what production uses.
    Database,
    /// A given time (ms): native tests that step through a lease's life.
    At(i64),
}

impl Clock {
    fn param(self) -> SqlValue {
        match self {
            Clock::Database => SqlValue::Null,
            Clock::At(t) => t.into(),
        }
    }
}

pub const INSERT_SESSION: &str = "INSERT INTO eve_session \
    (id, principal, created_at, updated_at, status, cancel_at, lease_owner, lease_expires, client_context) \
    VALUES (?1, ?2, ?3, ?3, 'active', -1, NULL, 0, NULL)";

/// A new session, only while the principal holds fewer than ?4 (one statement: racing creates
/// cannot both take the last place), created at the clock `?3` (NULL: the database's, which
/// [`DELETE_UNUSED_SESSIONS`] compares with). Returns the id when it was created.
pub const INSERT_SESSION_CAPPED: &str = concat!(
    "INSERT INTO eve_session \
    (id, principal, created_at, updated_at, status, cancel_at, lease_owner, lease_expires, client_context) \
    SELECT ?1, ?2, t.now, t.now, 'active', -1, NULL, 0, NULL FROM (SELECT COALESCE(?3, ",
    db_now_ms!(),
    ") AS now) AS t WHERE (SELECT count(*) FROM eve_session WHERE principal = ?2) < ?4 RETURNING id"
);

/// The cached sign-in of an MCP connection (migration 0008), if made after ?4.
pub const SELECT_MCP_OAUTH_CLIENT: &str = "SELECT metadata, flow FROM agent_mcp_oauth_client \
    WHERE connection = ?1 AND connection_url = ?2 AND redirect_uri = ?3 AND created_at > ?4";
pub const UPSERT_MCP_OAUTH_CLIENT: &str = "INSERT OR REPLACE INTO agent_mcp_oauth_client \
    (connection, connection_url, redirect_uri, metadata, flow, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
pub const DELETE_MCP_OAUTH_CLIENT: &str =
    "DELETE FROM agent_mcp_oauth_client WHERE connection = ?1 AND connection_url = ?2";

/// Frees the principal's sessions that never held anything — no event, no inbox row, no
/// attachment — that no chat refers to, created more than ?3 ms before the clock ?2 (NULL: the
/// database's; a node whose clock runs ahead must not free a session another just created).
pub const DELETE_UNUSED_SESSIONS: &str = concat!(
    "DELETE FROM eve_session \
    WHERE principal = ?1 AND created_at < COALESCE(?2, ",
    db_now_ms!(),
    ") - ?3 \
    AND NOT EXISTS (SELECT 1 FROM eve_event WHERE session_id = eve_session.id) \
    AND NOT EXISTS (SELECT 1 FROM eve_inbox WHERE session_id = eve_session.id) \
    AND NOT EXISTS (SELECT 1 FROM eve_attachment WHERE session_id = eve_session.id) \
    AND NOT EXISTS (SELECT 1 FROM chat_agent_session WHERE session_id = eve_session.id) \
    AND NOT EXISTS (SELECT 1 FROM chat WHERE owner = ?1 AND json_valid(eve_session) \
        AND json_extract(chat.eve_session, '$.sessionId') = eve_session.id)"
);

/// A session as a request sees it; whether its lease is live is decided by the clock `?3`
/// (NULL: the database's), as [`CLAIM`] decides it.
pub const SELECT_SESSION: &str = concat!(
    "SELECT status, cancel_at, lease_owner, lease_expires, client_context, \
    COALESCE((SELECT MAX(idx) + 1 FROM eve_event WHERE session_id = ?1), 0), \
    (SELECT type FROM eve_event WHERE session_id = ?1 ORDER BY idx DESC LIMIT 1), \
    (SELECT COUNT(*) FROM eve_inbox WHERE session_id = ?1), \
    lease_owner IS NOT NULL AND lease_expires >= COALESCE(?3, ",
    db_now_ms!(),
    ") FROM eve_session WHERE id = ?1 AND principal = ?2"
);

/// A follower's poll in one statement: the session's row as [`SELECT_SESSION`] reads it (its
/// lease judged by the clock `?5`, NULL: the database's) and the page of events from index
/// `?3` (at most `?4`), a row per event, or one row with NULL event columns when there is
/// none. On a remote database every statement is a request, and a reader that asked for the
/// row and the log apart asked about half again as often (docs/performance.md). The row's
/// client context is left out (NULL): it can be large, a follower never needs it, and it
/// would be repeated on every event's row.
pub const FOLLOW_PAGE: &str = concat!(
    "SELECT s.status, s.cancel_at, s.lease_owner, s.lease_expires, NULL, \
    COALESCE((SELECT MAX(idx) + 1 FROM eve_event WHERE session_id = ?1), 0), \
    (SELECT type FROM eve_event WHERE session_id = ?1 ORDER BY idx DESC LIMIT 1), \
    (SELECT COUNT(*) FROM eve_inbox WHERE session_id = ?1), \
    s.lease_owner IS NOT NULL AND s.lease_expires >= COALESCE(?5, ",
    db_now_ms!(),
    "), e.idx, e.type, e.body FROM eve_session AS s LEFT JOIN (SELECT idx, type, body \
    FROM eve_event WHERE session_id = ?1 AND idx >= ?3 ORDER BY idx LIMIT ?4) AS e ON 1 \
    WHERE s.id = ?1 AND s.principal = ?2 ORDER BY e.idx"
);

/// Takes the lease when nobody holds a live one (a dead runner's expired lease is taken over).
/// `?4` is the clock (NULL: the database's), `?5` the lease's length.
pub const CLAIM: &str = concat!(
    "UPDATE eve_session SET lease_owner = ?3, lease_expires = COALESCE(?4, ",
    db_now_ms!(),
    ") + ?5, updated_at = COALESCE(?4, ",
    db_now_ms!(),
    ") WHERE id = ?1 AND principal = ?2 AND status = 'active' \
    AND (lease_owner IS NULL OR lease_expires < COALESCE(?4, ",
    db_now_ms!(),
    ")) RETURNING cancel_at"
);

/// Renews the lease for `?4` ms from the clock `?3`; no row means the lease was lost. Answers
/// the cancel request.
pub const RENEW: &str = concat!(
    "UPDATE eve_session SET lease_expires = COALESCE(?3, ",
    db_now_ms!(),
    ") + ?4 WHERE id = ?1 AND lease_owner = ?2 RETURNING cancel_at"
);

pub const SELECT_RUNNER_STATE: &str =
    "SELECT cancel_at, lease_owner, status FROM eve_session WHERE id = ?1";

pub const RELEASE: &str =
    "UPDATE eve_session SET lease_owner = NULL, lease_expires = 0, updated_at = ?3 \
    WHERE id = ?1 AND lease_owner = ?2";

/// Asks the turn open at `?3` (the log's length when the cancel arrived) to stop.
pub const REQUEST_CANCEL: &str =
    "UPDATE eve_session SET cancel_at = ?3, updated_at = ?4 WHERE id = ?1 AND principal = ?2 AND status = 'active'";

pub const SET_CLIENT_CONTEXT: &str =
    "UPDATE eve_session SET client_context = ?3 WHERE id = ?1 AND principal = ?2";

pub const MARK_RESET: &str = "UPDATE eve_session SET status = 'reset', updated_at = ?3 \
    WHERE id = ?1 AND principal = ?2 AND status = 'active' RETURNING id";

/// Appends at the next index, only while `?5` holds the lease of an active session (a reset
/// fences its runner out too).
pub const APPEND_EVENT: &str = "INSERT INTO eve_event (session_id, idx, type, body, created_at) \
    SELECT ?1, COALESCE((SELECT MAX(idx) + 1 FROM eve_event WHERE session_id = ?1), 0), ?2, ?3, ?4 \
    WHERE EXISTS (SELECT 1 FROM eve_session WHERE id = ?1 AND lease_owner = ?5 AND status = 'active') RETURNING idx";

/// Appends the events of the JSON array `?2` (each `[type, body]`) at the next indices, in
/// order, in one statement, only while `?4` holds the lease of an active session. A turn's
/// deltas go in batches: on a remote database every statement is a request and every write
/// queues for the server's write lock, so one write per token would bound how many turns a
/// deployment runs at once. SQLite reads the `SELECT` whole before it inserts (it reads the
/// table it writes), so every row gets the same base index. Each row also answers the
/// session's cancel request: a write that went through proves the lease is held, so a runner
/// that has just appended need not read its session's row at its next checkpoint.
pub const APPEND_EVENTS: &str = "INSERT INTO eve_event (session_id, idx, type, body, created_at) \
    SELECT ?1, COALESCE((SELECT MAX(idx) + 1 FROM eve_event WHERE session_id = ?1), 0) + j.key, \
    json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'), ?3 FROM json_each(?2) AS j \
    WHERE EXISTS (SELECT 1 FROM eve_session WHERE id = ?1 AND lease_owner = ?4 AND status = 'active') \
    ORDER BY j.key RETURNING idx, (SELECT cancel_at FROM eve_session WHERE id = ?1)";

/// Appends without a lease: the terminal events of a reset (the runner, if any, is fenced
/// off by the status change).
pub const APPEND_EVENT_UNLEASED: &str =
    "INSERT INTO eve_event (session_id, idx, type, body, created_at) \
    SELECT ?1, COALESCE((SELECT MAX(idx) + 1 FROM eve_event WHERE session_id = ?1), 0), ?2, ?3, ?4 RETURNING idx";

pub const SELECT_EVENTS_FROM: &str =
    "SELECT idx, type, body FROM eve_event WHERE session_id = ?1 AND idx >= ?2 ORDER BY idx LIMIT ?3";

pub const SELECT_ALL_EVENTS: &str = "SELECT body FROM eve_event WHERE session_id = ?1 ORDER BY idx";

/// The log's length. Indices are contiguous from 0, so this is the last index + 1, read from
/// the primary key (`COUNT(*)` would scan the whole session on every poll and append).
pub const COUNT_EVENTS: &str =
    "SELECT COALESCE((SELECT MAX(idx) + 1 FROM eve_event WHERE session_id = ?1), 0)";

pub const INSERT_INBOX: &str = "INSERT INTO eve_inbox (session_id, seq, kind, delivery_id, body, created_at) \
    SELECT ?1, COALESCE((SELECT MAX(seq) + 1 FROM eve_inbox WHERE session_id = ?1), 0), ?2, ?3, ?4, ?5 RETURNING seq";

/// The next inbox row, none while the session's principal is a disabled account (issue 20):
/// a message queued before, or racing, the disable starts no turn.
pub const SELECT_INBOX_HEAD: &str = "SELECT seq, kind, delivery_id, body FROM eve_inbox \
    WHERE session_id = ?1 AND NOT EXISTS (SELECT 1 FROM eve_session AS s \
        JOIN account AS a ON a.id = substr(s.principal, 6) \
        WHERE s.id = ?1 AND s.principal LIKE 'user:%' AND a.disabled = 1) \
    ORDER BY seq LIMIT 1";

pub const DELETE_TOKEN: &str =
    "DELETE FROM agent_connection_token WHERE principal = ?1 AND connection = ?2";
pub const DELETE_GRANT: &str =
    "DELETE FROM agent_connection_grant WHERE principal = ?1 AND connection = ?2";
pub const DELETE_INBOX: &str = "DELETE FROM eve_inbox WHERE session_id = ?1 AND seq = ?2";

/// Whether the stream already holds the event of a delivery (an inbox row whose runner died
/// between appending its event and deleting the row).
pub const SELECT_DELIVERED: &str = "SELECT 1 FROM eve_event WHERE session_id = ?1 AND type IN \
    ('turn.started', 'message.received', 'context.cleared', 'compaction.requested') AND body LIKE ?2 LIMIT 1";

pub const SELECT_MEMORY: &str = "SELECT document FROM agent_memory WHERE principal = ?1";
/// The compare-and-swap of a memory document, in one statement each so that two turns that
/// read the same document cannot both write over it: from empty (no row yet, or an emptied
/// one; `?2` is `''`) and from a given document. `RETURNING` tells whether it happened.
pub const REPLACE_EMPTY_MEMORY: &str = "INSERT INTO agent_memory (principal, document, updated_at) \
    VALUES (?1, ?3, ?4) \
    ON CONFLICT (principal) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at \
    WHERE agent_memory.document = ?2 \
    RETURNING 1";
pub const UPDATE_MEMORY: &str = "UPDATE agent_memory SET document = ?3, updated_at = ?4 \
    WHERE principal = ?1 AND document = ?2 RETURNING 1";

pub const INSERT_GRANT: &str =
    "INSERT OR IGNORE INTO agent_connection_grant (principal, connection, granted_at) VALUES (?1, ?2, ?3)";
pub const SELECT_GRANT: &str =
    "SELECT 1 FROM agent_connection_grant WHERE principal = ?1 AND connection = ?2";

pub const UPSERT_TOKEN: &str =
    "INSERT INTO agent_connection_token (principal, connection, access_token, obtained_at) \
    VALUES (?1, ?2, ?3, ?4) ON CONFLICT (principal, connection) DO UPDATE SET \
    access_token = excluded.access_token, obtained_at = excluded.obtained_at";
pub const SELECT_TOKEN: &str =
    "SELECT access_token FROM agent_connection_token WHERE principal = ?1 AND connection = ?2";

/// Keeps an attachment only while the principal's attachments stay within `?8` bytes with
/// it (one statement: two messages at once cannot both pass the cap). `RETURNING` tells.
pub const INSERT_ATTACHMENT: &str = "INSERT INTO eve_attachment \
    (id, principal, session_id, media_type, filename, data, created_at) \
    SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 \
    WHERE COALESCE((SELECT bytes FROM storage_usage WHERE scope = 'attachments:' || ?2), 0) + length(?6) <= ?8 \
    RETURNING 1";
pub const SELECT_ATTACHMENT: &str =
    "SELECT media_type, filename, data FROM eve_attachment WHERE id = ?1 AND principal = ?2";
pub const DELETE_ATTACHMENT: &str = "DELETE FROM eve_attachment WHERE id = ?1 AND principal = ?2";
pub const SELECT_ATTACHMENT_USAGE: &str =
    "SELECT COALESCE((SELECT bytes FROM storage_usage WHERE scope = 'attachments:' || ?1), 0)";

/// One stored attachment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredAttachment {
    pub media_type: String,
    pub filename: Option<String>,
    pub data: Vec<u8>,
}

/// How long a lease lasts without renewal, and how often a runner renews it. Short, so that a
/// turn whose host died is resumed within about two seconds by the next reader or request.
pub const LEASE_MS: i64 = 2_000;
pub const RENEW_EVERY_MS: i64 = 400;

/// A session as a request sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    pub active: bool,
    pub cancel_at: i64,
    pub lease_owner: Option<String>,
    pub lease_expires: i64,
    /// Whether a runner holds a live lease, by the database's clock (as [`CLAIM`] decides).
    pub lease_live: bool,
    pub client_context: Option<String>,
    /// How many events the stream holds.
    pub len: u64,
    pub last_type: Option<String>,
    /// How many inbox rows wait.
    pub inbox: u64,
}

/// What a session is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionState {
    /// Nothing runs; the log is settled (or empty).
    Idle,
    /// A runner holds a live lease.
    Running,
    /// Its runner died mid-turn (lease expired, log unsettled), or work waits in the inbox
    /// with nobody to run it.
    Orphaned,
    /// Reset, failed or completed: it takes nothing more.
    Ended,
}

impl SessionRow {
    pub fn state(&self) -> SessionState {
        if !self.active {
            return SessionState::Ended;
        }
        if self.lease_live {
            return SessionState::Running;
        }
        match self.last_type.as_deref() {
            Some("session.failed" | "session.completed") => SessionState::Ended,
            Some(t) if !eve_api::eve::is_settling_type(t) => SessionState::Orphaned,
            _ if self.inbox > 0 && self.last_type.as_deref() != Some("turn.waiting") => {
                SessionState::Orphaned
            }
            _ => SessionState::Idle,
        }
    }
}

/// What a batch append wrote: the events' indices, and the session's cancel request as it
/// was when they were written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    pub indices: Vec<u64>,
    pub cancel_at: i64,
}

/// A stored event as readers get it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    pub index: u64,
    pub kind: String,
    pub body: String,
}

/// One inbox row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InboxItem {
    pub seq: i64,
    /// `message`, `clear` or `compact`.
    pub kind: String,
    pub delivery_id: String,
    pub body: String,
}

pub struct AgentStore<'a, S: Sql> {
    pub db: &'a S,
}

/// A row of [`SELECT_SESSION`] (or the first columns of [`FOLLOW_PAGE`]).
fn session_row(r: &[SqlValue]) -> SessionRow {
    SessionRow {
        active: r.first().and_then(SqlValue::as_str) == Some("active"),
        cancel_at: int(r.get(1)),
        lease_owner: text(r.get(2)),
        lease_expires: int(r.get(3)),
        lease_live: int(r.get(8)) != 0,
        client_context: text(r.get(4)),
        len: int(r.get(5)).max(0) as u64,
        last_type: text(r.get(6)),
        inbox: int(r.get(7)).max(0) as u64,
    }
}

fn int(v: Option<&SqlValue>) -> i64 {
    v.and_then(SqlValue::as_i64).unwrap_or(0)
}

fn text(v: Option<&SqlValue>) -> Option<String> {
    v.and_then(SqlValue::as_str).map(str::to_string)
}

impl<'a, S: Sql> AgentStore<'a, S> {
    pub fn new(db: &'a S) -> Self {
        AgentStore { db }
    }

    pub fn create_session(&self, id: &str, principal: &str, now_ms: i64) -> Result<(), String> {
        self.db
            .execute(
                INSERT_SESSION,
                vec![id.into(), principal.into(), now_ms.into()],
            )
            .map(|_| ())
    }

    /// The cached `(metadata, flow)` JSON of a connection's sign-in, made after `after_ms`.
    pub fn mcp_oauth_client(
        &self,
        connection: &str,
        connection_url: &str,
        redirect_uri: &str,
        after_ms: i64,
    ) -> Result<Option<(String, String)>, String> {
        let rows = self.db.execute(
            SELECT_MCP_OAUTH_CLIENT,
            vec![
                connection.into(),
                connection_url.into(),
                redirect_uri.into(),
                after_ms.into(),
            ],
        )?;
        Ok(rows
            .first()
            .and_then(|r| Some((text(r.first())?, text(r.get(1))?))))
    }

    /// Keeps a connection's discovered and registered sign-in.
    pub fn save_mcp_oauth_client(
        &self,
        connection: &str,
        connection_url: &str,
        redirect_uri: &str,
        metadata: &str,
        flow: &str,
        now_ms: i64,
    ) -> Result<(), String> {
        self.db
            .execute(
                UPSERT_MCP_OAUTH_CLIENT,
                vec![
                    connection.into(),
                    connection_url.into(),
                    redirect_uri.into(),
                    metadata.into(),
                    flow.into(),
                    now_ms.into(),
                ],
            )
            .map(|_| ())
    }

    /// Forgets a connection's cached sign-in (the server refused its client).
    pub fn forget_mcp_oauth_client(
        &self,
        connection: &str,
        connection_url: &str,
    ) -> Result<(), String> {
        self.db
            .execute(
                DELETE_MCP_OAUTH_CLIENT,
                vec![connection.into(), connection_url.into()],
            )
            .map(|_| ())
    }

    /// Creates session `id` at `clock` unless `principal` already holds `max` sessions
    /// (`false` then).
    pub fn create_session_capped(
        &self,
        id: &str,
        principal: &str,
        clock: Clock,
        max: u64,
    ) -> Result<bool, String> {
        let rows = self.db.execute(
            INSERT_SESSION_CAPPED,
            vec![
                id.into(),
                principal.into(),
                clock.param(),
                (max as i64).into(),
            ],
        )?;
        Ok(!rows.is_empty())
    }

    /// Deletes `principal`'s sessions created more than `lifetime_ms` before `clock` that never
    /// held anything and that no chat refers to ([`DELETE_UNUSED_SESSIONS`]).
    pub fn free_unused_sessions(
        &self,
        principal: &str,
        clock: Clock,
        lifetime_ms: i64,
    ) -> Result<(), String> {
        self.db
            .execute(
                DELETE_UNUSED_SESSIONS,
                vec![principal.into(), clock.param(), lifetime_ms.into()],
            )
            .map(|_| ())
    }

    /// Whether `principal` may start new work: the bytes it stores (chat logs, agent events,
    /// tool outputs; migration 0005's totals) are below `quota`'s principal cap.
    pub fn has_room(&self, principal: &str, quota: &StorageQuota) -> Result<bool, String> {
        let rows = self
            .db
            .execute(SELECT_PRINCIPAL_USAGE, vec![principal.into()])?;
        let used = int(rows.first().and_then(|r| r.first())).max(0) as u64;
        Ok(principal_has_room(used, quota))
    }

    /// The session of `principal` (another principal's is `None`, as an unknown one), its
    /// lease judged by the database's clock.
    pub fn session(&self, id: &str, principal: &str) -> Result<Option<SessionRow>, String> {
        self.session_at(id, principal, Clock::Database)
    }

    /// [`Self::session`] with its lease judged by `clock`.
    pub fn session_at(
        &self,
        id: &str,
        principal: &str,
        clock: Clock,
    ) -> Result<Option<SessionRow>, String> {
        let rows = self.db.execute(
            SELECT_SESSION,
            vec![id.into(), principal.into(), clock.param()],
        )?;
        Ok(rows.first().map(|r| session_row(r)))
    }

    /// [`FOLLOW_PAGE`]: the session of `principal` (`None`: unknown, or another principal's;
    /// its `client_context` is not read) and up to `limit` of its events from index `from`.
    pub fn follow_page(
        &self,
        id: &str,
        principal: &str,
        from: u64,
        limit: u32,
    ) -> Result<Option<(SessionRow, Vec<StoredEvent>)>, String> {
        let rows = self.db.execute(
            FOLLOW_PAGE,
            vec![
                id.into(),
                principal.into(),
                (from as i64).into(),
                (limit as i64).into(),
                Clock::Database.param(),
            ],
        )?;
        let Some(first) = rows.first() else {
            return Ok(None);
        };
        let events = rows
            .iter()
            .filter(|r| r.get(9).is_some_and(|v| !matches!(v, SqlValue::Null)))
            .map(|r| StoredEvent {
                index: int(r.get(9)).max(0) as u64,
                kind: text(r.get(10)).unwrap_or_default(),
                body: text(r.get(11)).unwrap_or_default(),
            })
            .collect();
        Ok(Some((session_row(first), events)))
    }

    /// Takes the lease for `runner` (`None`: someone holds a live one, or the session ended),
    /// judged and timed by `clock` (production: the database's). Answers the cancel request at
    /// the time of the claim.
    pub fn claim(
        &self,
        id: &str,
        principal: &str,
        runner: &str,
        clock: Clock,
    ) -> Result<Option<i64>, String> {
        let rows = self.db.execute(
            CLAIM,
            vec![
                id.into(),
                principal.into(),
                runner.into(),
                clock.param(),
                LEASE_MS.into(),
            ],
        )?;
        Ok(rows.first().map(|r| int(r.first())))
    }

    /// Renews the lease for [`LEASE_MS`] from `clock`: `Some(cancel_at)` while it is ours.
    pub fn renew(&self, id: &str, runner: &str, clock: Clock) -> Result<Option<i64>, String> {
        let rows = self.db.execute(
            RENEW,
            vec![id.into(), runner.into(), clock.param(), LEASE_MS.into()],
        )?;
        Ok(rows.first().map(|r| int(r.first())))
    }

    /// `(cancel_at, lease owner, active)`.
    pub fn runner_state(&self, id: &str) -> Result<Option<(i64, Option<String>, bool)>, String> {
        let rows = self.db.execute(SELECT_RUNNER_STATE, vec![id.into()])?;
        Ok(rows.first().map(|r| {
            (
                int(r.first()),
                text(r.get(1)),
                r.get(2).and_then(SqlValue::as_str) == Some("active"),
            )
        }))
    }

    pub fn release(&self, id: &str, runner: &str, now_ms: i64) -> Result<(), String> {
        self.db
            .execute(RELEASE, vec![id.into(), runner.into(), now_ms.into()])
            .map(|_| ())
    }

    /// Asks the turn open at log length `at` to stop.
    pub fn request_cancel(
        &self,
        id: &str,
        principal: &str,
        at: u64,
        now_ms: i64,
    ) -> Result<(), String> {
        self.db
            .execute(
                REQUEST_CANCEL,
                vec![
                    id.into(),
                    principal.into(),
                    (at as i64).into(),
                    now_ms.into(),
                ],
            )
            .map(|_| ())
    }

    pub fn set_client_context(
        &self,
        id: &str,
        principal: &str,
        context: Option<&str>,
    ) -> Result<(), String> {
        self.db
            .execute(
                SET_CLIENT_CONTEXT,
                vec![
                    id.into(),
                    principal.into(),
                    context.map_or(SqlValue::Null, Into::into),
                ],
            )
            .map(|_| ())
    }

    /// Retires the session for good; false when it was not active.
    pub fn mark_reset(&self, id: &str, principal: &str, now_ms: i64) -> Result<bool, String> {
        let rows = self
            .db
            .execute(MARK_RESET, vec![id.into(), principal.into(), now_ms.into()])?;
        Ok(!rows.is_empty())
    }

    /// Appends `envelope` as the next event while `runner` holds the lease (`None`: fenced).
    /// With `runner: None` it appends unconditionally (only the reset does).
    pub fn append(
        &self,
        id: &str,
        runner: Option<&str>,
        envelope: &Envelope,
        now_ms: i64,
    ) -> Result<Option<u64>, String> {
        let body = envelope.to_json();
        let kind = envelope.event.type_name();
        let rows = match runner {
            Some(r) => self.db.execute(
                APPEND_EVENT,
                vec![id.into(), kind.into(), body.into(), now_ms.into(), r.into()],
            )?,
            None => self.db.execute(
                APPEND_EVENT_UNLEASED,
                vec![id.into(), kind.into(), body.into(), now_ms.into()],
            )?,
        };
        Ok(rows.first().map(|r| int(r.first()).max(0) as u64))
    }

    /// Appends `envelopes` in order under `runner`'s lease ([`APPEND_EVENTS`]): their indices
    /// and the session's cancel request, or `None` when the lease is not held (nothing was
    /// written).
    pub fn append_all(
        &self,
        id: &str,
        runner: &str,
        envelopes: &[Envelope],
        now_ms: i64,
    ) -> Result<Option<Appended>, String> {
        let batch: Vec<serde_json::Value> = envelopes
            .iter()
            .map(|e| serde_json::json!([e.event.type_name(), e.to_json()]))
            .collect();
        let batch = serde_json::Value::Array(batch).to_string();
        let rows = self.db.execute(
            APPEND_EVENTS,
            vec![id.into(), batch.into(), now_ms.into(), runner.into()],
        )?;
        if rows.is_empty() {
            return Ok(None);
        }
        let mut indices: Vec<u64> = rows.iter().map(|r| int(r.first()).max(0) as u64).collect();
        // RETURNING's order is not guaranteed; the rows were inserted in the batch's order.
        indices.sort_unstable();
        let cancel_at = int(rows[0].get(1));
        Ok(Some(Appended { indices, cancel_at }))
    }

    pub fn events_from(&self, id: &str, from: u64, limit: u32) -> Result<Vec<StoredEvent>, String> {
        let rows = self.db.execute(
            SELECT_EVENTS_FROM,
            vec![id.into(), (from as i64).into(), (limit as i64).into()],
        )?;
        Ok(rows
            .iter()
            .map(|r| StoredEvent {
                index: int(r.first()).max(0) as u64,
                kind: text(r.get(1)).unwrap_or_default(),
                body: text(r.get(2)).unwrap_or_default(),
            })
            .collect())
    }

    pub fn len(&self, id: &str) -> Result<u64, String> {
        let rows = self.db.execute(COUNT_EVENTS, vec![id.into()])?;
        Ok(int(rows.first().and_then(|r| r.first())).max(0) as u64)
    }

    /// Every envelope of the session, in order (rows that do not parse are skipped: they
    /// cannot have been written by this code).
    pub fn envelopes(&self, id: &str) -> Result<Vec<Envelope>, String> {
        let rows = self.db.execute(SELECT_ALL_EVENTS, vec![id.into()])?;
        Ok(rows
            .iter()
            .filter_map(|r| r.first().and_then(SqlValue::as_str))
            .filter_map(|b| serde_json::from_str(b).ok())
            .collect())
    }

    /// Every event of the session, in order.
    pub fn all_events(&self, id: &str) -> Result<Vec<Event>, String> {
        Ok(self.envelopes(id)?.into_iter().map(|e| e.event).collect())
    }

    pub fn push_inbox(
        &self,
        id: &str,
        kind: &str,
        delivery_id: &str,
        body: &str,
        now_ms: i64,
    ) -> Result<(), String> {
        self.db
            .execute(
                INSERT_INBOX,
                vec![
                    id.into(),
                    kind.into(),
                    delivery_id.into(),
                    body.into(),
                    now_ms.into(),
                ],
            )
            .map(|_| ())
    }

    pub fn inbox_head(&self, id: &str) -> Result<Option<InboxItem>, String> {
        let rows = self.db.execute(SELECT_INBOX_HEAD, vec![id.into()])?;
        Ok(rows.first().map(|r| InboxItem {
            seq: int(r.first()),
            kind: text(r.get(1)).unwrap_or_default(),
            delivery_id: text(r.get(2)).unwrap_or_default(),
            body: text(r.get(3)).unwrap_or_default(),
        }))
    }

    pub fn delete_inbox(&self, id: &str, seq: i64) -> Result<(), String> {
        self.db
            .execute(DELETE_INBOX, vec![id.into(), seq.into()])
            .map(|_| ())
    }

    /// Whether the stream already holds what delivery `delivery_id` started.
    pub fn delivered(&self, id: &str, delivery_id: &str) -> Result<bool, String> {
        let rows = self.db.execute(
            SELECT_DELIVERED,
            vec![id.into(), format!("%\"{delivery_id}\"%").into()],
        )?;
        Ok(!rows.is_empty())
    }

    pub fn memory(&self, principal: &str) -> Result<String, String> {
        let rows = self.db.execute(SELECT_MEMORY, vec![principal.into()])?;
        Ok(rows
            .first()
            .and_then(|r| text(r.first()))
            .unwrap_or_default())
    }

    /// Writes `document` if the memory still is `expected` (what the caller read); `false`
    /// when another turn wrote in between (read again and redo the change).
    pub fn replace_memory(
        &self,
        principal: &str,
        expected: &str,
        document: &str,
        now_ms: i64,
    ) -> Result<bool, String> {
        let statement = if expected.is_empty() {
            REPLACE_EMPTY_MEMORY
        } else {
            UPDATE_MEMORY
        };
        let rows = self.db.execute(
            statement,
            vec![
                principal.into(),
                expected.into(),
                document.into(),
                now_ms.into(),
            ],
        )?;
        Ok(!rows.is_empty())
    }

    pub fn grant(&self, principal: &str, connection: &str, now_ms: i64) -> Result<(), String> {
        self.db
            .execute(
                INSERT_GRANT,
                vec![principal.into(), connection.into(), now_ms.into()],
            )
            .map(|_| ())
    }

    pub fn granted(&self, principal: &str, connection: &str) -> Result<bool, String> {
        let rows = self
            .db
            .execute(SELECT_GRANT, vec![principal.into(), connection.into()])?;
        Ok(!rows.is_empty())
    }

    pub fn save_token(
        &self,
        principal: &str,
        connection: &str,
        access_token: &str,
        now_ms: i64,
    ) -> Result<(), String> {
        self.db
            .execute(
                UPSERT_TOKEN,
                vec![
                    principal.into(),
                    connection.into(),
                    access_token.into(),
                    now_ms.into(),
                ],
            )
            .map(|_| ())
    }

    pub fn token(&self, principal: &str, connection: &str) -> Result<Option<String>, String> {
        let rows = self
            .db
            .execute(SELECT_TOKEN, vec![principal.into(), connection.into()])?;
        Ok(rows.first().and_then(|r| text(r.first())))
    }

    /// Signs `principal` out of `connection`: its token and its grant go.
    pub fn forget_connection(&self, principal: &str, connection: &str) -> Result<(), String> {
        for sql in [DELETE_TOKEN, DELETE_GRANT] {
            self.db
                .execute(sql, vec![principal.into(), connection.into()])?;
        }
        Ok(())
    }

    /// Keeps `data` as attachment `id` of `principal`'s session; `false` when the principal's
    /// attachments would pass `quota` bytes with it (nothing is kept then).
    #[allow(clippy::too_many_arguments)]
    pub fn insert_attachment(
        &self,
        id: &str,
        principal: &str,
        session_id: &str,
        media_type: &str,
        filename: Option<&str>,
        data: &[u8],
        quota: u64,
        now_ms: i64,
    ) -> Result<bool, String> {
        let rows = self.db.execute(
            INSERT_ATTACHMENT,
            vec![
                id.into(),
                principal.into(),
                session_id.into(),
                media_type.into(),
                SqlValue::opt_text(filename),
                SqlValue::Blob(data.to_vec()),
                now_ms.into(),
                quota.into(),
            ],
        )?;
        Ok(!rows.is_empty())
    }

    /// The attachment `id` if it is `principal`'s.
    pub fn attachment(
        &self,
        id: &str,
        principal: &str,
    ) -> Result<Option<StoredAttachment>, String> {
        let rows = self
            .db
            .execute(SELECT_ATTACHMENT, vec![id.into(), principal.into()])?;
        Ok(rows.into_iter().next().map(|mut r| {
            let data = match r.pop() {
                Some(SqlValue::Blob(b)) => b,
                Some(SqlValue::Text(t)) => t.into_bytes(),
                _ => Vec::new(),
            };
            StoredAttachment {
                media_type: text(r.first()).unwrap_or_default(),
                filename: text(r.get(1)),
                data,
            }
        }))
    }

    pub fn delete_attachment(&self, id: &str, principal: &str) -> Result<(), String> {
        self.db
            .execute(DELETE_ATTACHMENT, vec![id.into(), principal.into()])
            .map(|_| ())
    }

    /// The bytes of attachments `principal` stores.
    pub fn attachment_usage(&self, principal: &str) -> Result<u64, String> {
        let rows = self
            .db
            .execute(SELECT_ATTACHMENT_USAGE, vec![principal.into()])?;
        Ok(int(rows.first().and_then(|r| r.first())).max(0) as u64)
    }
}

#[cfg(test)]
pub mod testing {
    //! rusqlite behind the [`Sql`] seam: the project's one test adapter.
    pub use eve_sql_testing::Db as Lite;
}

#[cfg(test)]
mod tests {
    use super::testing::Lite;
    use super::*;
    use eve_api::eve::{Meta, TurnRef};

    fn db() -> Lite {
        let db = Lite::memory();
        eve_store::migrations::migrate(&db, 1).unwrap();
        db
    }

    fn env(i: u64) -> Envelope {
        Envelope {
            event: Event::TurnStarted(TurnRef::new(i)),
            meta: Meta {
                at: "t".into(),
                id: format!("evt_{i}"),
                delivery_ids: vec!["d1".into()],
            },
        }
    }

    /// Issue 19 item 2: sessions per principal are capped in the insert itself, and empty ones
    /// no chat refers to are freed after their lifetime; used or referenced ones never are.
    #[test]
    fn sessions_are_capped_per_principal_and_unused_ones_are_freed() {
        let db = db();
        let s = AgentStore::new(&db);
        assert!(s
            .create_session_capped("wrun_1", "p", Clock::At(10), 3)
            .unwrap());
        assert!(s
            .create_session_capped("wrun_2", "p", Clock::At(10), 3)
            .unwrap());
        assert!(s
            .create_session_capped("wrun_3", "p", Clock::At(10), 3)
            .unwrap());
        assert!(!s
            .create_session_capped("wrun_4", "p", Clock::At(10), 3)
            .unwrap());
        assert!(s.session("wrun_4", "p").unwrap().is_none());
        // Another principal has its own count.
        assert!(s
            .create_session_capped("wrun_q", "q", Clock::At(10), 3)
            .unwrap());
        // wrun_1 holds an event, wrun_2 is a chat's; wrun_3 is empty and nobody's.
        s.append("wrun_1", None, &env(1), 10).unwrap();
        db.execute(
            "INSERT INTO chat_agent_session (chat_id, session_id) VALUES ('c', 'wrun_2')",
            vec![],
        )
        .unwrap();
        s.free_unused_sessions("p", Clock::At(10), 0).unwrap(); // not older than its lifetime yet
        assert!(s.session("wrun_3", "p").unwrap().is_some());
        s.free_unused_sessions("p", Clock::At(11), 0).unwrap();
        assert!(s.session("wrun_3", "p").unwrap().is_none());
        assert!(s.session("wrun_1", "p").unwrap().is_some());
        assert!(s.session("wrun_2", "p").unwrap().is_some());
        assert!(s.session("wrun_q", "q").unwrap().is_some());
        assert!(s
            .create_session_capped("wrun_4", "p", Clock::At(12), 3)
            .unwrap());
    }

    #[test]
    fn attachments_are_the_principals_own_count_against_both_totals_and_go_with_the_session() {
        let db = db();
        let s = AgentStore::new(&db);
        s.create_session("wrun_a", "u", 1).unwrap();
        assert!(s
            .insert_attachment(
                "att_1",
                "u",
                "wrun_a",
                "text/plain",
                Some("a.txt"),
                b"hello",
                8,
                1
            )
            .unwrap());
        // 5 + 5 > 8: refused, nothing kept.
        assert!(!s
            .insert_attachment("att_2", "u", "wrun_a", "text/plain", None, b"world", 8, 1)
            .unwrap());
        assert_eq!(s.attachment("att_2", "u").unwrap(), None);
        assert_eq!(s.attachment_usage("u").unwrap(), 5);
        let used = |p: &str| {
            int(db
                .execute(SELECT_PRINCIPAL_USAGE, vec![p.into()])
                .unwrap()
                .first()
                .and_then(|r| r.first()))
        };
        let before = used("u");
        assert!(before >= 5);
        let a = s.attachment("att_1", "u").unwrap().unwrap();
        assert_eq!(a.data, b"hello");
        assert_eq!(a.filename.as_deref(), Some("a.txt"));
        assert_eq!(s.attachment("att_1", "someone-else").unwrap(), None);
        db.execute("DELETE FROM eve_session WHERE id = 'wrun_a'", vec![])
            .unwrap();
        assert_eq!(s.attachment("att_1", "u").unwrap(), None);
        assert_eq!(s.attachment_usage("u").unwrap(), 0);
        assert_eq!(used("u"), before - 5);
    }

    #[test]
    fn a_principal_has_room_until_its_agent_events_reach_the_cap() {
        let db = db();
        let s = AgentStore::new(&db);
        let quota = eve_store::limits::storage_quota(None, Some("300"));
        assert!(s.has_room("p", &quota).unwrap());
        s.create_session("wrun_q", "p", 1).unwrap();
        assert!(s
            .claim("wrun_q", "p", "r1", Clock::At(2))
            .unwrap()
            .is_some());
        let mut i = 0;
        while s.has_room("p", &quota).unwrap() {
            assert!(i < 100, "the agent's events are never counted");
            s.append("wrun_q", Some("r1"), &env(i), 3).unwrap().unwrap();
            i += 1;
        }
        assert!(i > 0);
        // Another principal's room is its own.
        assert!(s.has_room("q", &quota).unwrap());
    }

    /// Issue 31: a batch append answers the cancel request with its indices (the runner's
    /// checkpoint then skips reading the session's row), and writes nothing once fenced.
    #[test]
    fn a_batch_append_answers_the_cancel_request_and_writes_nothing_once_fenced() {
        let db = db();
        let s = AgentStore::new(&db);
        s.create_session("wrun_b", "p", 1).unwrap();
        // No cancel asked: -1 (a turn at any index is not cancelled).
        assert_eq!(
            s.claim("wrun_b", "p", "r1", Clock::At(2)).unwrap(),
            Some(-1)
        );
        let first = s.append_all("wrun_b", "r1", &[env(0), env(1)], 3).unwrap();
        assert_eq!(
            first,
            Some(Appended {
                indices: vec![0, 1],
                cancel_at: -1
            })
        );
        s.request_cancel("wrun_b", "p", 2, 4).unwrap();
        let second = s.append_all("wrun_b", "r1", &[env(2)], 5).unwrap().unwrap();
        assert_eq!((second.indices, second.cancel_at), (vec![2], 2));
        // Another runner holds no lease: nothing is written.
        assert_eq!(s.append_all("wrun_b", "r2", &[env(3)], 6).unwrap(), None);
        assert_eq!(s.len("wrun_b").unwrap(), 3);
    }

    /// Issue 31: a follower's poll reads the session's row and its new events in one
    /// statement; another principal's session is unknown to it.
    #[test]
    fn a_follow_page_reads_the_row_and_the_new_events_in_one_statement() {
        let db = db();
        let s = AgentStore::new(&db);
        s.create_session("wrun_f", "p", 1).unwrap();
        let (row, events) = s.follow_page("wrun_f", "p", 0, 10).unwrap().unwrap();
        assert_eq!((row.state(), events.len()), (SessionState::Idle, 0));
        s.claim("wrun_f", "p", "r1", Clock::Database)
            .unwrap()
            .unwrap();
        s.append_all("wrun_f", "r1", &[env(0), env(1), env(2)], 3)
            .unwrap()
            .unwrap();
        let (row, events) = s.follow_page("wrun_f", "p", 1, 10).unwrap().unwrap();
        assert_eq!(row.state(), SessionState::Running);
        let read = s.session("wrun_f", "p").unwrap().unwrap();
        assert_eq!(
            (row.len, row.last_type, row.inbox),
            (read.len, read.last_type, read.inbox)
        );
        let indices: Vec<u64> = events.iter().map(|e| e.index).collect();
        assert_eq!(indices, vec![1, 2]);
        assert_eq!(events[0].kind, "turn.started");
        let (_, page) = s.follow_page("wrun_f", "p", 0, 2).unwrap().unwrap();
        assert_eq!(page.len(), 2);
        assert_eq!(s.follow_page("wrun_f", "q", 0, 10).unwrap(), None);
        assert_eq!(s.follow_page("wrun_none", "p", 0, 10).unwrap(), None);
    }

    #[test]
    fn forgetting_a_connection_drops_only_that_principals_token_and_grant() {
        let db = db();
        let s = AgentStore::new(&db);
        for p in ["alice", "bob"] {
            s.save_token(p, "notes", "sealed", 1).unwrap();
            s.grant(p, "notes", 1).unwrap();
        }
        s.forget_connection("alice", "notes").unwrap();
        assert_eq!(s.token("alice", "notes").unwrap(), None);
        assert!(!s.granted("alice", "notes").unwrap());
        assert_eq!(s.token("bob", "notes").unwrap().as_deref(), Some("sealed"));
        assert!(s.granted("bob", "notes").unwrap());
    }

    #[test]
    fn a_memory_write_from_a_stale_read_changes_nothing() {
        let db = db();
        let s = AgentStore::new(&db);
        assert_eq!(s.memory("p").unwrap(), "");
        assert!(s.replace_memory("p", "", "- a", 1).unwrap());
        // Another turn read "" too: its write is refused, the first one's fact stays.
        assert!(!s.replace_memory("p", "", "- b", 2).unwrap());
        assert_eq!(s.memory("p").unwrap(), "- a");
        assert!(s.replace_memory("p", "- a", "- a\n- b", 3).unwrap());
        assert!(!s.replace_memory("p", "- a", "- a\n- c", 4).unwrap());
        assert_eq!(s.memory("p").unwrap(), "- a\n- b");
        // Emptied by a forget, the document can be written from empty again; others' are apart.
        assert!(s.replace_memory("p", "- a\n- b", "", 5).unwrap());
        assert!(s.replace_memory("p", "", "- d", 6).unwrap());
        assert!(s.replace_memory("q", "", "- e", 7).unwrap());
        assert_eq!(
            (s.memory("p").unwrap(), s.memory("q").unwrap()),
            ("- d".to_string(), "- e".to_string())
        );
    }

    #[test]
    fn appends_take_the_next_index_only_under_the_lease() {
        let db = db();
        let s = AgentStore::new(&db);
        s.create_session("wrun_a", "p", 1).unwrap();
        assert_eq!(
            s.append("wrun_a", Some("r1"), &env(0), 2).unwrap(),
            None,
            "no lease yet"
        );
        assert!(s
            .claim("wrun_a", "p", "r1", Clock::At(10))
            .unwrap()
            .is_some());
        assert!(
            s.claim("wrun_a", "p", "r2", Clock::At(11))
                .unwrap()
                .is_none(),
            "a live lease is not taken"
        );
        assert_eq!(
            s.append("wrun_a", Some("r1"), &env(0), 12).unwrap(),
            Some(0)
        );
        assert_eq!(
            s.append("wrun_a", Some("r1"), &env(1), 13).unwrap(),
            Some(1)
        );
        assert_eq!(
            s.append("wrun_a", Some("r2"), &env(2), 14).unwrap(),
            None,
            "fenced"
        );
        // An expired lease is taken over, and the old runner is fenced out.
        assert!(s
            .claim("wrun_a", "p", "r2", Clock::At(12 + LEASE_MS + 1))
            .unwrap()
            .is_some());
        assert_eq!(s.append("wrun_a", Some("r1"), &env(2), 15).unwrap(), None);
        assert_eq!(s.len("wrun_a").unwrap(), 2);
        assert_eq!(s.envelopes("wrun_a").unwrap()[1], env(1));
        assert!(s.delivered("wrun_a", "d1").unwrap());
        assert!(!s.delivered("wrun_a", "d2").unwrap());
    }

    #[test]
    fn another_principals_session_is_not_found_and_a_reset_one_takes_no_lease() {
        let db = db();
        let s = AgentStore::new(&db);
        s.create_session("wrun_a", "p", 1).unwrap();
        assert!(s.session("wrun_a", "q").unwrap().is_none());
        assert!(s.mark_reset("wrun_a", "p", 2).unwrap());
        assert!(!s.mark_reset("wrun_a", "p", 3).unwrap());
        assert!(s
            .claim("wrun_a", "p", "r", Clock::Database)
            .unwrap()
            .is_none());
        assert_eq!(
            s.session("wrun_a", "p").unwrap().unwrap().state(),
            SessionState::Ended
        );
    }

    #[test]
    fn the_inbox_is_first_in_first_out() {
        let db = db();
        let s = AgentStore::new(&db);
        s.create_session("wrun_a", "p", 1).unwrap();
        s.push_inbox("wrun_a", "message", "d1", "{}", 1).unwrap();
        s.push_inbox("wrun_a", "clear", "d2", "{}", 2).unwrap();
        let head = s.inbox_head("wrun_a").unwrap().unwrap();
        assert_eq!(
            (head.kind.as_str(), head.delivery_id.as_str()),
            ("message", "d1")
        );
        s.delete_inbox("wrun_a", head.seq).unwrap();
        assert_eq!(s.inbox_head("wrun_a").unwrap().unwrap().kind, "clear");
        let row = s.session("wrun_a", "p").unwrap().unwrap();
        assert_eq!(row.inbox, 1);
        assert_eq!(
            row.state(),
            SessionState::Orphaned,
            "work waits with nobody to run it"
        );
    }

    /// Issue 20: a disabled account's queued work is not taken; enabled again, it is.
    #[test]
    fn a_disabled_accounts_inbox_has_no_head() {
        let db = db();
        let s = AgentStore::new(&db);
        db.execute(
            "INSERT INTO account (id, email, role, created_at) VALUES ('m', 'm@x.example', 'member', 1)",
            vec![],
        )
        .unwrap();
        for (id, principal) in [("wrun_m", "user:m"), ("wrun_o", "user:o"), ("wrun_p", "p")] {
            s.create_session(id, principal, 1).unwrap();
            s.push_inbox(id, "message", "d1", "{}", 1).unwrap();
        }
        let disable = |on: i64| {
            db.execute(
                "UPDATE account SET disabled = ?1 WHERE id = 'm'",
                vec![on.into()],
            )
            .unwrap()
        };
        disable(1);
        assert!(s.inbox_head("wrun_m").unwrap().is_none());
        assert!(s.inbox_head("wrun_o").unwrap().is_some(), "no such account");
        assert!(s.inbox_head("wrun_p").unwrap().is_some(), "not an account");
        disable(0);
        assert!(s.inbox_head("wrun_m").unwrap().is_some());
    }
}
