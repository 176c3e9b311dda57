//! The agent's tables and every SQL statement on them, over the one-statement-per-call
//! [`Sql`] seam (Spin's SQLite in the component, rusqlite in tests). No statement relies on a
//! transaction: each write is one self-contained statement.
//!
//! - `agent_session`: owner principal, turn counter, interrupt flag, and the **lease** of the
//!   runner executing the current turn (`lease_owner`, `lease_expires`, renewed while it runs).
//! - `agent_event`: the event log, `(session_id, idx)` unique. An event is appended by one
//!   statement that computes the next index and only succeeds while the writer holds the
//!   lease (fencing: a runner that lost its lease cannot write).
//! - `agent_memory`, `agent_connection_grant`, `agent_tool_output`: per-principal memory,
//!   authorized connections, tool outputs stored aside.

use eve_api::eve::Event;
use eve_store::{Sql, SqlValue};

/// The schema version this code writes; bumped with every change to [`SCHEMA`].
pub const SCHEMA_VERSION: i64 = 2;

/// Idempotent DDL, one statement each.
pub const SCHEMA: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS agent_schema (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS agent_session (\
        id TEXT PRIMARY KEY NOT NULL, \
        principal TEXT NOT NULL, \
        created_at INTEGER NOT NULL, \
        updated_at INTEGER NOT NULL, \
        turn INTEGER NOT NULL DEFAULT 0, \
        interrupt_turn INTEGER NOT NULL DEFAULT 0, \
        lease_owner TEXT, \
        lease_expires INTEGER NOT NULL DEFAULT 0, \
        client_context TEXT)",
    "CREATE INDEX IF NOT EXISTS agent_session_by_principal ON agent_session (principal, updated_at)",
    "CREATE TABLE IF NOT EXISTS agent_event (\
        session_id TEXT NOT NULL, \
        idx INTEGER NOT NULL, \
        type TEXT NOT NULL, \
        body TEXT NOT NULL, \
        created_at INTEGER NOT NULL, \
        PRIMARY KEY (session_id, idx)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS agent_memory (\
        principal TEXT PRIMARY KEY NOT NULL, document TEXT NOT NULL, updated_at INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS agent_connection_grant (\
        principal TEXT NOT NULL, connection TEXT NOT NULL, granted_at INTEGER NOT NULL, \
        PRIMARY KEY (principal, connection))",
    "CREATE TABLE IF NOT EXISTS agent_connection_token (\
        principal TEXT NOT NULL, connection TEXT NOT NULL, access_token TEXT NOT NULL, obtained_at INTEGER NOT NULL, \
        PRIMARY KEY (principal, connection))",
    "CREATE TABLE IF NOT EXISTS agent_tool_output (\
        session_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, output TEXT NOT NULL, created_at INTEGER NOT NULL, \
        PRIMARY KEY (session_id, tool_call_id))",
];

pub const SELECT_SCHEMA_VERSION: &str = "SELECT version FROM agent_schema WHERE id = 1";
pub const RECORD_SCHEMA_VERSION: &str =
    "INSERT INTO agent_schema (id, version) VALUES (1, ?1) ON CONFLICT (id) DO UPDATE SET version = excluded.version";

pub const INSERT_SESSION: &str = "INSERT INTO agent_session \
    (id, principal, created_at, updated_at, turn, interrupt_turn, lease_owner, lease_expires, client_context) \
    VALUES (?1, ?2, ?3, ?3, 1, 0, ?4, ?5, ?6)";

pub const SELECT_SESSION: &str =
    "SELECT turn, interrupt_turn, lease_owner, lease_expires, client_context, \
    (SELECT MAX(idx) FROM agent_event WHERE session_id = ?1), \
    (SELECT type FROM agent_event WHERE session_id = ?1 ORDER BY idx DESC LIMIT 1) \
    FROM agent_session WHERE id = ?1 AND principal = ?2";

/// Takes the lease for a new turn when nobody holds a live one (a dead runner's expired lease
/// is taken over). `?7` says whether this turn brings a new client context.
pub const CLAIM: &str = "UPDATE agent_session SET lease_owner = ?3, lease_expires = ?4, turn = turn + 1, \
    interrupt_turn = 0, updated_at = ?5, client_context = CASE WHEN ?7 THEN ?6 ELSE client_context END \
    WHERE id = ?1 AND principal = ?2 AND (lease_owner IS NULL OR lease_expires < ?5) RETURNING turn";

/// Takes over the lease of a turn whose runner died (its lease expired), **without** starting
/// a new turn: the turn number and its interrupt flag stay, so the turn can be resumed (or, if
/// a stop was asked for, settled as stopped). Fenced: of two takers, only the first matches.
pub const TAKE_OVER: &str =
    "UPDATE agent_session SET lease_owner = ?3, lease_expires = ?4, updated_at = ?5 \
    WHERE id = ?1 AND principal = ?2 AND (lease_owner IS NULL OR lease_expires < ?5) \
    RETURNING turn, interrupt_turn";

/// Renews the lease; no row means the lease was lost.
pub const RENEW: &str =
    "UPDATE agent_session SET lease_expires = ?3 WHERE id = ?1 AND lease_owner = ?2 RETURNING interrupt_turn, turn";

pub const SELECT_RUNNER_STATE: &str =
    "SELECT interrupt_turn, turn, lease_owner FROM agent_session WHERE id = ?1";

pub const RELEASE: &str =
    "UPDATE agent_session SET lease_owner = NULL, lease_expires = 0, updated_at = ?3 WHERE id = ?1 AND lease_owner = ?2";

/// Appends at the next index, only while `?5` holds the lease.
pub const APPEND_EVENT: &str = "INSERT INTO agent_event (session_id, idx, type, body, created_at) \
    SELECT ?1, COALESCE((SELECT MAX(idx) + 1 FROM agent_event WHERE session_id = ?1), 0), ?2, ?3, ?4 \
    WHERE EXISTS (SELECT 1 FROM agent_session WHERE id = ?1 AND lease_owner = ?5) RETURNING idx";

pub const SELECT_EVENTS_FROM: &str =
    "SELECT idx, type, body FROM agent_event WHERE session_id = ?1 AND idx >= ?2 ORDER BY idx LIMIT ?3";

pub const SELECT_ALL_EVENTS: &str =
    "SELECT body FROM agent_event WHERE session_id = ?1 ORDER BY idx";

pub const SELECT_EVENT_AT: &str =
    "SELECT type, body FROM agent_event WHERE session_id = ?1 AND idx = ?2";

/// Asks the running turn to stop (only while a live lease exists).
pub const REQUEST_INTERRUPT: &str = "UPDATE agent_session SET interrupt_turn = turn \
    WHERE id = ?1 AND principal = ?2 AND lease_owner IS NOT NULL AND lease_expires >= ?3 RETURNING turn";

pub const SELECT_MEMORY: &str = "SELECT document FROM agent_memory WHERE principal = ?1";
pub const UPSERT_MEMORY: &str = "INSERT INTO agent_memory (principal, document, updated_at) VALUES (?1, ?2, ?3) \
    ON CONFLICT (principal) DO UPDATE SET document = excluded.document, updated_at = excluded.updated_at";

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

pub const UPSERT_TOOL_OUTPUT: &str = "INSERT OR REPLACE INTO agent_tool_output \
    (session_id, tool_call_id, output, created_at) VALUES (?1, ?2, ?3, ?4)";

/// How long a lease lasts without renewal, and how often a runner renews it.
pub const LEASE_MS: i64 = 10_000;
pub const RENEW_EVERY_MS: i64 = 2_000;

/// A session as a request sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    pub turn: i64,
    pub interrupt_turn: i64,
    pub lease_owner: Option<String>,
    pub lease_expires: i64,
    pub client_context: Option<String>,
    pub last_index: Option<u64>,
    pub last_type: Option<String>,
}

/// What a session is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionState {
    /// No turn running; the next message may start one.
    Idle,
    /// A runner holds a live lease.
    Running,
    /// Settled on `authorization.required`: waiting for Connect, or a decline.
    AwaitingAuthorization,
    /// The runner died mid-turn (lease expired, log not settled): must be settled.
    Orphaned,
}

impl SessionState {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionState::Idle => "idle",
            SessionState::Running => "running",
            SessionState::AwaitingAuthorization => "awaiting_authorization",
            SessionState::Orphaned => "orphaned",
        }
    }
}

impl SessionRow {
    /// The index the next event will get.
    pub fn next_index(&self) -> u64 {
        self.last_index.map_or(0, |i| i + 1)
    }

    pub fn state(&self, now_ms: i64) -> SessionState {
        if self.lease_owner.is_some() && self.lease_expires >= now_ms {
            return SessionState::Running;
        }
        match self.last_type.as_deref() {
            None => SessionState::Idle,
            Some("authorization.required") => SessionState::AwaitingAuthorization,
            Some(t) if eve_api::eve::is_settling_type(t) => SessionState::Idle,
            Some(_) => SessionState::Orphaned,
        }
    }
}

/// A stored event: its index, type and JSON body (without index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    pub index: u64,
    pub kind: String,
    pub body: String,
}

/// The repository.
pub struct AgentStore<'a, S: Sql> {
    pub db: &'a S,
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

    /// Creates the tables when this code's schema version is not recorded (one SELECT when it is).
    pub fn ensure_schema(&self) -> Result<(), String> {
        if let Ok(rows) = self.db.execute(SELECT_SCHEMA_VERSION, vec![]) {
            if rows
                .first()
                .and_then(|r| r.first())
                .and_then(SqlValue::as_i64)
                == Some(SCHEMA_VERSION)
            {
                return Ok(());
            }
        }
        for statement in SCHEMA {
            self.db.execute(statement, vec![])?;
        }
        self.db
            .execute(RECORD_SCHEMA_VERSION, vec![SCHEMA_VERSION.into()])?;
        Ok(())
    }

    /// A new session whose first turn is held by `runner`.
    pub fn create_session(
        &self,
        id: &str,
        principal: &str,
        runner: &str,
        now_ms: i64,
        client_context: Option<&str>,
    ) -> Result<(), String> {
        self.db
            .execute(
                INSERT_SESSION,
                vec![
                    id.into(),
                    principal.into(),
                    now_ms.into(),
                    runner.into(),
                    (now_ms + LEASE_MS).into(),
                    SqlValue::opt_text(client_context),
                ],
            )
            .map(|_| ())
    }

    /// The session if it exists and belongs to `principal`.
    pub fn session(&self, id: &str, principal: &str) -> Result<Option<SessionRow>, String> {
        let rows = self
            .db
            .execute(SELECT_SESSION, vec![id.into(), principal.into()])?;
        Ok(rows.first().map(|r| SessionRow {
            turn: int(r.first()),
            interrupt_turn: int(r.get(1)),
            lease_owner: text(r.get(2)),
            lease_expires: int(r.get(3)),
            client_context: text(r.get(4)),
            last_index: r
                .get(5)
                .and_then(SqlValue::as_i64)
                .and_then(|i| u64::try_from(i).ok()),
            last_type: text(r.get(6)),
        }))
    }

    /// Takes the lease for a new turn; `None` when a live runner holds it.
    pub fn claim(
        &self,
        id: &str,
        principal: &str,
        runner: &str,
        now_ms: i64,
        client_context: Option<Option<&str>>,
    ) -> Result<Option<i64>, String> {
        let (set, ctx) = match client_context {
            Some(c) => (true, SqlValue::opt_text(c)),
            None => (false, SqlValue::Null),
        };
        let rows = self.db.execute(
            CLAIM,
            vec![
                id.into(),
                principal.into(),
                runner.into(),
                (now_ms + LEASE_MS).into(),
                now_ms.into(),
                ctx,
                set.into(),
            ],
        )?;
        Ok(rows.first().map(|r| int(r.first())))
    }

    /// Takes over an expired lease for the current turn: `Some((turn, interrupt_turn))`, or
    /// `None` when a live runner holds it (another taker was first).
    pub fn take_over(
        &self,
        id: &str,
        principal: &str,
        runner: &str,
        now_ms: i64,
    ) -> Result<Option<(i64, i64)>, String> {
        let rows = self.db.execute(
            TAKE_OVER,
            vec![
                id.into(),
                principal.into(),
                runner.into(),
                (now_ms + LEASE_MS).into(),
                now_ms.into(),
            ],
        )?;
        Ok(rows.first().map(|r| (int(r.first()), int(r.get(1)))))
    }

    /// Renews the lease: `Some((interrupt_turn, turn))`, or `None` when it was lost.
    pub fn renew(&self, id: &str, runner: &str, now_ms: i64) -> Result<Option<(i64, i64)>, String> {
        let rows = self.db.execute(
            RENEW,
            vec![id.into(), runner.into(), (now_ms + LEASE_MS).into()],
        )?;
        Ok(rows.first().map(|r| (int(r.first()), int(r.get(1)))))
    }

    /// `(interrupt_turn, turn, lease_owner)`.
    pub fn runner_state(&self, id: &str) -> Result<Option<(i64, i64, Option<String>)>, String> {
        let rows = self.db.execute(SELECT_RUNNER_STATE, vec![id.into()])?;
        Ok(rows
            .first()
            .map(|r| (int(r.first()), int(r.get(1)), text(r.get(2)))))
    }

    pub fn release(&self, id: &str, runner: &str, now_ms: i64) -> Result<(), String> {
        self.db
            .execute(RELEASE, vec![id.into(), runner.into(), now_ms.into()])
            .map(|_| ())
    }

    /// Appends `event`; `Ok(None)` when `runner` does not hold the lease (nothing written).
    pub fn append(
        &self,
        id: &str,
        runner: &str,
        event: &Event,
        now_ms: i64,
    ) -> Result<Option<u64>, String> {
        let rows = self.db.execute(
            APPEND_EVENT,
            vec![
                id.into(),
                event.type_name().into(),
                event.to_json().into(),
                now_ms.into(),
                runner.into(),
            ],
        )?;
        Ok(rows
            .first()
            .and_then(|r| r.first())
            .and_then(SqlValue::as_i64)
            .and_then(|i| u64::try_from(i).ok()))
    }

    /// Up to `limit` events from index `start`.
    pub fn events_from(
        &self,
        id: &str,
        start: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, String> {
        let rows = self.db.execute(
            SELECT_EVENTS_FROM,
            vec![id.into(), start.into(), i64::from(limit).into()],
        )?;
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                let mut it = r.into_iter();
                let index = it.next()?.as_i64().and_then(|i| u64::try_from(i).ok())?;
                let kind = it.next()?.into_string()?;
                let body = it.next()?.into_string()?;
                Some(StoredEvent { index, kind, body })
            })
            .collect())
    }

    /// The event at `index`.
    pub fn event_at(&self, id: &str, index: u64) -> Result<Option<StoredEvent>, String> {
        let rows = self
            .db
            .execute(SELECT_EVENT_AT, vec![id.into(), index.into()])?;
        Ok(rows.into_iter().next().and_then(|r| {
            let mut it = r.into_iter();
            Some(StoredEvent {
                index,
                kind: it.next()?.into_string()?,
                body: it.next()?.into_string()?,
            })
        }))
    }

    /// The whole log, parsed.
    pub fn all_events(&self, id: &str) -> Result<Vec<Event>, String> {
        let rows = self.db.execute(SELECT_ALL_EVENTS, vec![id.into()])?;
        Ok(rows
            .into_iter()
            .filter_map(|r| r.into_iter().next()?.into_string())
            .filter_map(|body| serde_json::from_str(&body).ok())
            .collect())
    }

    /// Asks a running turn to stop: whether one was running.
    pub fn request_interrupt(
        &self,
        id: &str,
        principal: &str,
        now_ms: i64,
    ) -> Result<bool, String> {
        let rows = self.db.execute(
            REQUEST_INTERRUPT,
            vec![id.into(), principal.into(), now_ms.into()],
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

    pub fn set_memory(&self, principal: &str, document: &str, now_ms: i64) -> Result<(), String> {
        self.db
            .execute(
                UPSERT_MEMORY,
                vec![principal.into(), document.into(), now_ms.into()],
            )
            .map(|_| ())
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
        Ok(!self
            .db
            .execute(SELECT_GRANT, vec![principal.into(), connection.into()])?
            .is_empty())
    }

    /// Keeps a connection's OAuth access token (never logged, never sent to a client).
    pub fn save_token(
        &self,
        principal: &str,
        connection: &str,
        token: &str,
        now_ms: i64,
    ) -> Result<(), String> {
        self.db
            .execute(
                UPSERT_TOKEN,
                vec![
                    principal.into(),
                    connection.into(),
                    token.into(),
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

    pub fn store_tool_output(
        &self,
        id: &str,
        tool_call_id: &str,
        output: &str,
        now_ms: i64,
    ) -> Result<(), String> {
        self.db
            .execute(
                UPSERT_TOOL_OUTPUT,
                vec![id.into(), tool_call_id.into(), output.into(), now_ms.into()],
            )
            .map(|_| ())
    }
}

#[cfg(test)]
pub mod testing {
    //! rusqlite behind the [`Sql`] seam, for native tests.
    use super::*;
    use eve_store::SqlRow;
    use std::cell::RefCell;

    pub struct Lite(pub RefCell<rusqlite::Connection>);

    impl Lite {
        pub fn memory() -> Self {
            Lite(RefCell::new(
                rusqlite::Connection::open_in_memory().unwrap(),
            ))
        }
    }

    impl Sql for Lite {
        fn execute(&self, statement: &str, params: Vec<SqlValue>) -> Result<Vec<SqlRow>, String> {
            let conn = self.0.borrow();
            let mut stmt = conn.prepare(statement).map_err(|e| e.to_string())?;
            let params: Vec<rusqlite::types::Value> = params
                .into_iter()
                .map(|p| match p {
                    SqlValue::Integer(i) => rusqlite::types::Value::Integer(i),
                    SqlValue::Real(f) => rusqlite::types::Value::Real(f),
                    SqlValue::Text(s) => rusqlite::types::Value::Text(s),
                    SqlValue::Blob(b) => rusqlite::types::Value::Blob(b),
                    SqlValue::Null => rusqlite::types::Value::Null,
                })
                .collect();
            let n = stmt.column_count();
            let mut rows = stmt
                .query(rusqlite::params_from_iter(params))
                .map_err(|e| e.to_string())?;
            let mut out = Vec::new();
            while let Some(row) = rows.next().map_err(|e| e.to_string())? {
                let mut r = Vec::new();
                for i in 0..n {
                    r.push(
                        match row
                            .get::<_, rusqlite::types::Value>(i)
                            .map_err(|e| e.to_string())?
                        {
                            rusqlite::types::Value::Integer(i) => SqlValue::Integer(i),
                            rusqlite::types::Value::Real(f) => SqlValue::Real(f),
                            rusqlite::types::Value::Text(s) => SqlValue::Text(s),
                            rusqlite::types::Value::Blob(b) => SqlValue::Blob(b),
                            rusqlite::types::Value::Null => SqlValue::Null,
                        },
                    );
                }
                out.push(r);
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::Lite;
    use super::*;

    fn store(db: &Lite) -> AgentStore<'_, Lite> {
        let s = AgentStore::new(db);
        s.ensure_schema().unwrap();
        s
    }

    fn text_event(t: &str) -> Event {
        Event::TextDelta { delta: t.into() }
    }

    #[test]
    fn the_schema_is_created_once_and_is_idempotent() {
        let db = Lite::memory();
        let s = store(&db);
        s.ensure_schema().unwrap();
        for stmt in SCHEMA {
            db.execute(stmt, vec![]).unwrap();
        }
    }

    #[test]
    fn events_get_consecutive_indices_and_read_back_as_exact_suffixes() {
        let db = Lite::memory();
        let s = store(&db);
        s.create_session("s", "p", "r1", 0, None).unwrap();
        for i in 0..5 {
            assert_eq!(
                s.append("s", "r1", &text_event(&i.to_string()), 0).unwrap(),
                Some(i)
            );
        }
        for k in 0..=5u64 {
            let got: Vec<u64> = s
                .events_from("s", k, 100)
                .unwrap()
                .iter()
                .map(|e| e.index)
                .collect();
            assert_eq!(got, (k..5).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_runner_without_the_lease_cannot_append() {
        let db = Lite::memory();
        let s = store(&db);
        s.create_session("s", "p", "r1", 0, None).unwrap();
        assert_eq!(
            s.append("s", "intruder", &text_event("x"), 0).unwrap(),
            None
        );
        s.release("s", "r1", 1).unwrap();
        assert_eq!(s.append("s", "r1", &text_event("x"), 0).unwrap(), None);
        assert!(s.events_from("s", 0, 10).unwrap().is_empty());
    }

    #[test]
    fn a_live_lease_blocks_a_new_turn_and_an_expired_one_is_taken_over() {
        let db = Lite::memory();
        let s = store(&db);
        s.create_session("s", "p", "r1", 1000, Some("ctx")).unwrap();
        assert_eq!(
            s.claim("s", "p", "r2", 1000 + LEASE_MS - 1, Some(None))
                .unwrap(),
            None
        );
        assert_eq!(
            s.claim("s", "p", "r2", 1000 + LEASE_MS + 1, Some(None))
                .unwrap(),
            Some(2)
        );
        assert_eq!(
            s.append("s", "r1", &text_event("late"), 0).unwrap(),
            None,
            "the dead runner is fenced out"
        );
        assert!(s.append("s", "r2", &text_event("x"), 0).unwrap().is_some());
    }

    #[test]
    fn only_one_of_two_takers_gets_an_expired_lease_and_the_turn_stays_the_same() {
        let db = Lite::memory();
        let s = store(&db);
        s.create_session("s", "p", "dead", 1000, None).unwrap();
        s.append("s", "dead", &Event::UserMessage { text: "hi".into() }, 0)
            .unwrap();
        let later = 1000 + LEASE_MS + 1;
        assert_eq!(
            s.take_over("s", "p", "early", 1000 + LEASE_MS - 1).unwrap(),
            None,
            "a live lease is not taken over"
        );
        assert_eq!(s.take_over("s", "p", "a", later).unwrap(), Some((1, 0)));
        assert_eq!(s.take_over("s", "p", "b", later).unwrap(), None);
        assert_eq!(s.take_over("s", "q", "c", later * 2).unwrap(), None);
        assert_eq!(s.append("s", "dead", &text_event("late"), 0).unwrap(), None);
        assert_eq!(s.append("s", "b", &text_event("b"), 0).unwrap(), None);
        assert_eq!(s.append("s", "a", &text_event("a"), 0).unwrap(), Some(1));
        assert_eq!(s.runner_state("s").unwrap(), Some((0, 1, Some("a".into()))));
    }

    #[test]
    fn a_stop_asked_before_the_runner_died_survives_the_takeover() {
        let db = Lite::memory();
        let s = store(&db);
        s.create_session("s", "p", "dead", 0, None).unwrap();
        assert!(s.request_interrupt("s", "p", 1).unwrap());
        assert_eq!(
            s.take_over("s", "p", "a", LEASE_MS + 1).unwrap(),
            Some((1, 1))
        );
    }

    #[test]
    fn sessions_are_scoped_to_their_principal() {
        let db = Lite::memory();
        let s = store(&db);
        s.create_session("s", "alice", "r", 0, None).unwrap();
        assert!(s.session("s", "alice").unwrap().is_some());
        assert!(s.session("s", "bob").unwrap().is_none());
        assert_eq!(s.claim("s", "bob", "r2", LEASE_MS * 2, None).unwrap(), None);
        assert!(!s.request_interrupt("s", "bob", 0).unwrap());
    }

    #[test]
    fn session_state_follows_the_lease_and_the_last_event() {
        let db = Lite::memory();
        let s = store(&db);
        s.create_session("s", "p", "r", 0, None).unwrap();
        assert_eq!(
            s.session("s", "p").unwrap().unwrap().state(1),
            SessionState::Running
        );
        s.append("s", "r", &Event::UserMessage { text: "hi".into() }, 0)
            .unwrap();
        // The runner died: lease expired, log not settled.
        assert_eq!(
            s.session("s", "p").unwrap().unwrap().state(LEASE_MS + 1),
            SessionState::Orphaned
        );
        s.append(
            "s",
            "r",
            &Event::SessionCompleted {
                finish_reason: None,
            },
            0,
        )
        .unwrap();
        s.release("s", "r", 2).unwrap();
        let row = s.session("s", "p").unwrap().unwrap();
        assert_eq!(row.state(3), SessionState::Idle);
        assert_eq!(row.next_index(), 2);
        assert_eq!(row.last_type.as_deref(), Some("session.completed"));
    }

    #[test]
    fn interrupt_marks_the_current_turn_and_renew_reports_it() {
        let db = Lite::memory();
        let s = store(&db);
        s.create_session("s", "p", "r", 0, None).unwrap();
        assert_eq!(s.renew("s", "r", 1).unwrap(), Some((0, 1)));
        assert!(s.request_interrupt("s", "p", 1).unwrap());
        assert_eq!(s.renew("s", "r", 2).unwrap(), Some((1, 1)));
        assert_eq!(s.renew("s", "other", 2).unwrap(), None);
        // A new turn clears the flag.
        s.release("s", "r", 3).unwrap();
        assert_eq!(
            s.claim("s", "p", "r2", 4, Some(Some("c"))).unwrap(),
            Some(2)
        );
        assert_eq!(
            s.runner_state("s").unwrap(),
            Some((0, 2, Some("r2".into())))
        );
        assert_eq!(
            s.session("s", "p")
                .unwrap()
                .unwrap()
                .client_context
                .as_deref(),
            Some("c")
        );
    }

    #[test]
    fn memory_grants_and_tool_outputs_round_trip() {
        let db = Lite::memory();
        let s = store(&db);
        assert_eq!(s.memory("p").unwrap(), "");
        s.set_memory("p", "- a", 0).unwrap();
        s.set_memory("p", "- b", 1).unwrap();
        assert_eq!(s.memory("p").unwrap(), "- b");
        assert_eq!(s.memory("q").unwrap(), "");
        assert!(!s.granted("p", "notion").unwrap());
        s.grant("p", "notion", 0).unwrap();
        s.grant("p", "notion", 0).unwrap();
        assert!(s.granted("p", "notion").unwrap());
        assert!(!s.granted("q", "notion").unwrap());
        s.create_session("s", "p", "r", 0, None).unwrap();
        s.store_tool_output("s", "c", "{}", 0).unwrap();
        s.save_token("p", "notion", "t1", 0).unwrap();
        s.save_token("p", "notion", "t2", 1).unwrap();
        assert_eq!(s.token("p", "notion").unwrap().as_deref(), Some("t2"));
        assert_eq!(s.token("q", "notion").unwrap(), None);
    }

    #[test]
    fn all_events_parses_the_log_in_order() {
        let db = Lite::memory();
        let s = store(&db);
        s.create_session("s", "p", "r", 0, None).unwrap();
        s.append("s", "r", &Event::UserMessage { text: "a".into() }, 0)
            .unwrap();
        s.append("s", "r", &text_event("b"), 0).unwrap();
        assert_eq!(
            s.all_events("s").unwrap(),
            vec![Event::UserMessage { text: "a".into() }, text_event("b")]
        );
        assert_eq!(
            s.event_at("s", 1).unwrap().unwrap().kind,
            "assistant.text.delta"
        );
    }
}
