//! The channel's facts in SQLite: which `event_id`s were taken, which session a thread belongs
//! to, and the approval cards still open. Each write is one self-contained statement, safe on several nodes at once.

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
    fn thread_key(&self) -> Vec<SqlValue> {
        vec![
            SqlValue::text(&self.team),
            SqlValue::text(&self.channel),
            SqlValue::text(&self.thread_ts),
        ]
    }

    /// The key of `principal`'s session in this thread.
    fn key(&self, principal: &str) -> Vec<SqlValue> {
        let mut key = self.thread_key();
        key.push(SqlValue::text(principal));
        key
    }
}

/// `principal`'s session in the thread. Each person who writes in a thread has their own, so
/// a reply in someone else's thread never runs as them (their memory, approvals, quota).
pub fn thread_session<S: Sql>(
    db: &S,
    t: &Thread,
    principal: &str,
) -> Result<Option<String>, ApiError> {
    let rows = exec(db, SELECT_THREAD, t.key(principal))?;
    Ok(rows.first().map(|r| text_at(r, 0)))
}

/// Records `principal`'s session in the thread; `false` when another request recorded one
/// for them first.
pub fn record_thread<S: Sql>(
    db: &S,
    t: &Thread,
    principal: &str,
    session_id: &str,
    now_ms: i64,
) -> Result<bool, ApiError> {
    let mut params = t.key(principal);
    params.extend([SqlValue::text(session_id), SqlValue::Integer(now_ms)]);
    Ok(!exec(db, INSERT_THREAD, params)?.is_empty())
}

/// Forgets `principal`'s session `session_id` in the thread (the agent answered 404 for it).
pub fn forget_thread<S: Sql>(
    db: &S,
    t: &Thread,
    principal: &str,
    session_id: &str,
) -> Result<(), ApiError> {
    let mut params = t.key(principal);
    params.push(SqlValue::text(session_id));
    exec(db, DELETE_THREAD, params).map(|_| ())
}

/// The thread's status text as last shown (`None`: none, or no such thread).
pub fn thread_status<S: Sql>(db: &S, t: &Thread) -> Result<Option<String>, ApiError> {
    let rows = exec(db, SELECT_THREAD_STATUS, t.thread_key())?;
    Ok(rows.first().and_then(|r| match &r[0] {
        SqlValue::Text(s) => Some(s.clone()),
        _ => None,
    }))
}

/// Remembers the thread's status text (`None`: none).
pub fn set_thread_status<S: Sql>(db: &S, t: &Thread, status: Option<&str>) -> Result<(), ApiError> {
    let mut params = t.thread_key();
    params.push(status.map_or(SqlValue::Null, SqlValue::text));
    exec(db, UPSERT_THREAD_STATUS, params).map(|_| ())
}

/// An approval card posted in a thread and not settled yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    pub channel: String,
    pub thread_ts: String,
    pub request_id: String,
    /// The message the card is on, and its blocks (other requests' cards may share it).
    pub message_ts: String,
    pub blocks: Vec<serde_json::Value>,
    /// The message showing the tool's input, when it has one.
    pub details_ts: Option<String>,
    /// The principal whose message started the turn that asks (only they may answer).
    pub requester: String,
}

/// Records an open card (again: the same request posted anew replaces it).
pub fn record_card<S: Sql>(db: &S, c: &Card, now_ms: i64) -> Result<(), ApiError> {
    let details = c
        .details_ts
        .as_deref()
        .map_or(SqlValue::Null, SqlValue::text);
    let blocks = serde_json::Value::Array(c.blocks.clone()).to_string();
    let params = vec![
        SqlValue::text(&c.channel),
        SqlValue::text(&c.thread_ts),
        SqlValue::text(&c.request_id),
        SqlValue::text(&c.message_ts),
        details,
        SqlValue::text(&blocks),
        SqlValue::Integer(now_ms),
        SqlValue::text(&c.requester),
    ];
    exec(db, UPSERT_CARD, params).map(|_| ())
}

/// Takes request `request_id`'s open card in the thread; `None` when it has none or another
/// invocation settled it first.
pub fn take_card<S: Sql>(
    db: &S,
    channel: &str,
    thread_ts: &str,
    request_id: &str,
) -> Result<Option<Card>, ApiError> {
    let params = vec![
        SqlValue::text(channel),
        SqlValue::text(thread_ts),
        SqlValue::text(request_id),
    ];
    let rows = exec(db, TAKE_CARD, params)?;
    Ok(rows.first().map(|r| Card {
        channel: channel.into(),
        thread_ts: thread_ts.into(),
        request_id: request_id.into(),
        message_ts: text_at(r, 0),
        details_ts: match &r[1] {
            SqlValue::Text(t) => Some(t.clone()),
            _ => None,
        },
        blocks: serde_json::from_str(&text_at(r, 2)).unwrap_or_default(),
        requester: text_at(r, 3),
    }))
}

/// Who may answer request `request_id`'s open card in the thread (`None`: no open card).
pub fn card_requester<S: Sql>(
    db: &S,
    channel: &str,
    thread_ts: &str,
    request_id: &str,
) -> Result<Option<String>, ApiError> {
    let params = vec![
        SqlValue::text(channel),
        SqlValue::text(thread_ts),
        SqlValue::text(request_id),
    ];
    let rows = exec(db, SELECT_CARD_REQUESTER, params)?;
    Ok(rows.first().map(|r| text_at(r, 0)))
}

/// The blocks a settled card left on its message, for the cards still open on it.
pub fn update_card_blocks<S: Sql>(
    db: &S,
    channel: &str,
    message_ts: &str,
    blocks: &[serde_json::Value],
) -> Result<(), ApiError> {
    let blocks = serde_json::Value::Array(blocks.to_vec()).to_string();
    let params = vec![
        SqlValue::text(channel),
        SqlValue::text(message_ts),
        SqlValue::text(&blocks),
    ];
    exec(db, UPDATE_CARD_BLOCKS, params).map(|_| ())
}

/// Whether an open card still refers to tool-input message `details_ts`.
pub fn details_in_use<S: Sql>(db: &S, channel: &str, details_ts: &str) -> Result<bool, ApiError> {
    let params = vec![SqlValue::text(channel), SqlValue::text(details_ts)];
    let rows = exec(db, COUNT_DETAILS_USERS, params)?;
    Ok(rows
        .first()
        .and_then(|r| r.first())
        .is_some_and(|v| matches!(v, SqlValue::Integer(n) if *n > 0)))
}
