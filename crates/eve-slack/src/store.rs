//! The channel's two facts in SQLite: which `event_id`s were taken, and which session a thread
//! belongs to. Each write is one self-contained statement, safe on several nodes at once.

use eve_api::ApiError;
use eve_store::sql::{text_at, Sql, SqlValue};

use crate::sql::*;

/// How long an event id is remembered (ms): Slack retries within minutes.
pub const EVENT_MEMORY_MS: i64 = 24 * 60 * 60 * 1000;

fn exec<S: Sql>(db: &S, sql: &str, params: Vec<SqlValue>) -> Result<Vec<Vec<SqlValue>>, ApiError> {
    db.execute(sql, params).map_err(|e| {
        eprintln!("slack: database error: {e}");
        eve_store::sql::database_error(&e)
    })
}

/// Whether this is the first time `event_id` is seen (then it is taken); old ids are forgotten.
pub fn claim_event<S: Sql>(db: &S, event_id: &str, now_ms: i64) -> Result<bool, ApiError> {
    exec(
        db,
        PRUNE_EVENTS,
        vec![SqlValue::Integer(now_ms - EVENT_MEMORY_MS)],
    )?;
    let rows = exec(
        db,
        CLAIM_EVENT,
        vec![SqlValue::text(event_id), SqlValue::Integer(now_ms)],
    )?;
    Ok(!rows.is_empty())
}

/// A Slack thread: the workspace, the channel, the root message's `ts`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thread {
    pub team: String,
    pub channel: String,
    pub thread_ts: String,
}

impl Thread {
    fn key(&self) -> Vec<SqlValue> {
        vec![
            SqlValue::text(&self.team),
            SqlValue::text(&self.channel),
            SqlValue::text(&self.thread_ts),
        ]
    }
}

/// The thread's session: `(session id, owning principal)`.
pub fn thread_session<S: Sql>(db: &S, t: &Thread) -> Result<Option<(String, String)>, ApiError> {
    let rows = exec(db, SELECT_THREAD, t.key())?;
    Ok(rows.first().map(|r| (text_at(r, 0), text_at(r, 1))))
}

/// Records the thread's session; `false` when another request recorded one first.
pub fn record_thread<S: Sql>(
    db: &S,
    t: &Thread,
    session_id: &str,
    principal: &str,
    now_ms: i64,
) -> Result<bool, ApiError> {
    let mut params = t.key();
    params.extend([
        SqlValue::text(session_id),
        SqlValue::text(principal),
        SqlValue::Integer(now_ms),
    ]);
    Ok(!exec(db, INSERT_THREAD, params)?.is_empty())
}

/// Forgets the thread's session `session_id` (the agent answered 404 for it).
pub fn forget_thread<S: Sql>(db: &S, t: &Thread, session_id: &str) -> Result<(), ApiError> {
    let mut params = t.key();
    params.push(SqlValue::text(session_id));
    exec(db, DELETE_THREAD, params).map(|_| ())
}
