//! The chat store: every read and write of `chat`, `chat_event` and `chat_search` for one
//! principal, over the one-statement-per-call [`Sql`] seam.
//!
//! Inputs arrive validated (see [`crate::validate`]); the store decides the order of the
//! statements. Multi-statement writes are ordered so that a request cut off half way leaves a
//! state the same request, retried, repairs — events first, the chat row (which clears the
//! pending message) last — and every write is idempotent.

use crate::cursor::ChatCursor;
use crate::ids::chat_id_for_client;
use crate::limits::{
    StorageQuota, DEFAULT_EVENT_PAGE_SIZE, EVENT_WINDOW_BYTES, MAX_PINNED_CHATS,
    MAX_SEARCH_TEXT_BYTES,
};
use crate::pending::{visible_pending, PendingMessage};
use crate::persistence::*;
use crate::sql::{Sql, SqlRow, SqlValue};
use crate::time::{format_iso_ms, Millis};
use crate::title::fallback_title;
use crate::transcript::search_text;
use crate::validate::{chat_not_found, ListQuery, SessionUpdate, StoredEvent, WindowQuery};
use crate::window::{before_cursor, first_index, window, EventRow, Window};
use eve_api::chat::*;
use eve_api::{ApiError, ErrorCode};
use serde_json::Value;

/// Events read per statement while a tail snapshot computes the search text.
const SEARCH_PAGE_EVENTS: u64 = 500;

/// The chat store as seen by one principal (`owner`): another principal's chats do not exist.
pub struct ChatStore<'a, S: Sql> {
    db: &'a S,
    owner: &'a str,
    quota: StorageQuota,
}

/// What a snapshot writes: `events` at slots `from..`, the log's search text, the session, and
/// the log length it was built on (`base`, see [`ChatStore::save_snapshot`]).
pub struct SnapshotWrite<'a> {
    pub from: u64,
    pub events: &'a [StoredEvent],
    pub search_text: &'a str,
    pub session: &'a SessionUpdate,
    pub base: Option<u64>,
}

/// A chat row with its session and raw pending message.
struct ChatRow {
    summary: ChatSummary,
    session: Option<String>,
    pending: Option<PendingMessage>,
}

impl<'a, S: Sql> ChatStore<'a, S> {
    pub fn new(db: &'a S, owner: &'a str) -> Self {
        Self {
            db,
            owner,
            quota: StorageQuota::default(),
        }
    }

    /// The same store with other byte caps (the Spin variables of `limits::storage_quota`).
    pub fn with_quota(mut self, quota: StorageQuota) -> Self {
        self.quota = quota;
        self
    }

    /// The principal this store acts for.
    pub fn owner(&self) -> &str {
        self.owner
    }

    /// The database, for the domains beside the chat's (a chat's project, issue 21).
    pub fn db(&self) -> &'a S {
        self.db
    }

    /// The principal's chat as the list shows it; 404 when it is not theirs.
    pub fn summary(&self, id: &str) -> Result<ChatSummary, ApiError> {
        self.ensure_owned(id)
    }

    fn exec(&self, sql: &str, params: Vec<SqlValue>) -> Result<Vec<SqlRow>, ApiError> {
        self.db.execute(sql, params).map_err(|e| {
            // The database's message goes to the component log, not to the client.
            eprintln!("chat store: database error: {e}");
            crate::sql::database_error(&e)
        })
    }

    fn owned(&self, id: &str) -> Vec<SqlValue> {
        vec![id.into(), self.owner.into()]
    }

    /// `POST /api/chats`. `pending` is a validated message. `id` is the new chat's id: a
    /// random one, or [`client_id`](Self::chat_id_for) of a client's idempotency key. Returns the
    /// chat and whether it was created now (`false`: an earlier attempt with the same id created
    /// it). The id of a deleted chat is never given out again (409).
    pub fn create(
        &self,
        id: &str,
        pending: Option<&str>,
        now: Millis,
    ) -> Result<(ChatSummary, bool), ApiError> {
        let title = pending.map_or_else(|| DEFAULT_CHAT_TITLE.to_string(), fallback_title);
        let mut params = self.owned(id);
        params.extend([
            title.into(),
            SqlValue::opt_text(pending),
            pending.map_or(SqlValue::Null, |_| now.into()),
            now.into(),
        ]);
        if let Some(row) = self.exec(INSERT_CHAT, params)?.into_iter().next() {
            return Ok((summary(row)?, true));
        }
        if let Some(row) = self
            .exec(SELECT_CHAT_SUMMARY, self.owned(id))?
            .into_iter()
            .next()
        {
            return Ok((summary(row)?, false));
        }
        if !self.exec(SELECT_TOMBSTONE, vec![id.into()])?.is_empty() {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                "a chat with this id was deleted; ids of deleted chats are not reused",
            ));
        }
        // Only reachable with a random id that another chat has (never, in practice): client
        // ids are scoped to their principal by `chat_id_for`.
        Err(ApiError::new(ErrorCode::Conflict, "this chat id is taken"))
    }

    /// The chat id for a client-chosen id: derived from it and the principal, so that two
    /// principals choosing the same id get different chats and neither can learn that the
    /// other's exists.
    pub fn chat_id_for(&self, client_id: &str) -> String {
        chat_id_for_client(self.owner, client_id)
    }

    /// `GET /api/chats`: one page in `updated_at desc, id desc` order; with `pinned`, every
    /// pinned chat, most recently pinned first, on one page.
    pub fn list(&self, query: &ListQuery) -> Result<ChatPage, ApiError> {
        if query.pinned {
            let rows = self.exec(
                LIST_PINNED_CHATS,
                vec![self.owner.into(), (MAX_PINNED_CHATS as i64).into()],
            )?;
            let chats = rows.into_iter().map(summary).collect::<Result<_, _>>()?;
            return Ok(ChatPage {
                chats,
                next_cursor: None,
            });
        }
        let fetch = i64::try_from(query.limit)
            .unwrap_or(i64::MAX)
            .saturating_add(1);
        let mut params: Vec<SqlValue> = vec![self.owner.into(), fetch.into()];
        if let Some(c) = &query.cursor {
            params.extend([c.updated_at.into(), c.id.as_str().into()]);
        } else if query.search.is_some() {
            params.extend([SqlValue::Null, SqlValue::Null]);
        }
        let sql = match (&query.search, &query.cursor) {
            (None, None) => LIST_CHATS_FIRST,
            (None, Some(_)) => LIST_CHATS_AFTER,
            (Some(_), None) => SEARCH_CHATS_FIRST,
            (Some(_), Some(_)) => SEARCH_CHATS_AFTER,
        };
        if let Some(q) = &query.search {
            params.push(like_pattern(q).into());
        }
        let rows = self.exec(sql, params)?;
        let has_more = rows.len() > query.limit;
        let mut last = None;
        let mut chats = Vec::with_capacity(query.limit.min(rows.len()));
        for row in rows.into_iter().take(query.limit) {
            last = Some((int(&row, 3)?, text(&row, 0)?));
            chats.push(summary(row)?);
        }
        let next_cursor = match (has_more, last) {
            (true, Some((at, id))) => Some(ChatCursor::after(at, &id).encode()),
            _ => None,
        };
        Ok(ChatPage { chats, next_cursor })
    }

    fn chat_row(&self, id: &str) -> Result<ChatRow, ApiError> {
        let row = self
            .exec(SELECT_CHAT, self.owned(id))?
            .into_iter()
            .next()
            .ok_or_else(chat_not_found)?;
        let session = row.get(4).cloned().and_then(SqlValue::into_string);
        let pending = match (
            row.get(5).and_then(SqlValue::as_str),
            row.get(6).and_then(SqlValue::as_i64),
        ) {
            (Some(message), Some(created_at)) => Some(PendingMessage {
                message: message.to_string(),
                created_at,
            }),
            _ => None,
        };
        Ok(ChatRow {
            summary: summary(row)?,
            session,
            pending,
        })
    }

    fn events(&self, id: &str) -> Result<Vec<Value>, ApiError> {
        let rows = self.exec(SELECT_EVENTS, vec![id.into()])?;
        rows.into_iter()
            .map(|row| parse_event(&crate::sql::text_at(&row, 0)))
            .collect()
    }

    /// `GET /api/chats/:id` with its defaults: the latest window of the log.
    pub fn get(&self, id: &str) -> Result<ChatDetail, ApiError> {
        self.get_window(
            id,
            &WindowQuery {
                before: None,
                limit: DEFAULT_EVENT_PAGE_SIZE,
            },
        )
    }

    /// `GET /api/chats/:id?before=&limit=`: the chat, one window of its log (see
    /// [`crate::window`]), its session, and its pending message unless a settling event at or
    /// after it exists.
    pub fn get_window(&self, id: &str, query: &WindowQuery) -> Result<ChatDetail, ApiError> {
        let chat = self.chat_row(id)?;
        let window = self.window(id, query)?;
        // Read after the window, so that the length covers every event the window holds.
        let event_count = self.event_count(id)?;
        let first_event_index = first_index(&window, query.before, event_count);
        let branch_before = match first_event_index {
            0 => None,
            first => self.branch_before(id, first)?,
        };
        let pending = self.visible_pending(id, chat.pending)?;
        Ok(ChatDetail {
            chat: chat.summary,
            before_cursor: before_cursor(&window, id),
            events: window
                .events
                .iter()
                .map(|e| parse_event(&e.json))
                .collect::<Result<_, _>>()?,
            first_event_index,
            event_count,
            branch_before,
            session: chat.session.and_then(|s| serde_json::from_str(&s).ok()),
            pending_user_message_created_at: pending.as_ref().map(|p| format_iso_ms(p.created_at)),
            pending_user_message: pending.map(|p| p.message),
        })
    }

    fn window(&self, id: &str, query: &WindowQuery) -> Result<Window, ApiError> {
        let before = query.before.map_or(i64::MAX, |b| b as i64);
        let fetch = query.limit as i64 + 1;
        let rows = self.exec(
            SELECT_EVENTS_BEFORE,
            vec![id.into(), before.into(), fetch.into()],
        )?;
        let rows = rows
            .into_iter()
            .map(|row| {
                let index = u64::try_from(int(&row, 0)?)
                    .map_err(|_| ApiError::internal("unexpected row shape"))?;
                Ok(EventRow {
                    index,
                    json: text(&row, 1)?,
                })
            })
            .collect::<Result<_, ApiError>>()?;
        Ok(window(rows, query.limit, EVENT_WINDOW_BYTES))
    }

    fn branch_before(&self, id: &str, before: u64) -> Result<Option<IndexedEvent>, ApiError> {
        let rows = self.exec(SELECT_BRANCH_BEFORE, vec![id.into(), before.into()])?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(None);
        };
        Ok(Some(IndexedEvent {
            event_index: int(&row, 0)?,
            event: parse_event(&text(&row, 1)?)?,
        }))
    }

    fn visible_pending(
        &self,
        id: &str,
        pending: Option<PendingMessage>,
    ) -> Result<Option<PendingMessage>, ApiError> {
        let Some(p) = pending else {
            return Ok(None);
        };
        let latest = self.exec(LATEST_SETTLING_EVENT_AT, vec![id.into()])?;
        let at = latest
            .first()
            .and_then(|r| r.first())
            .and_then(SqlValue::as_i64);
        Ok(visible_pending(Some(p), at))
    }

    /// The search text of the log a snapshot leaves: `tail` stored from slot `from` on, after
    /// the stored slots before it. Only the start of the log is searchable
    /// ([`MAX_SEARCH_TEXT_BYTES`]), so the stored events are read page by page and no further
    /// than that text reaches: a long chat's tail snapshot reads its first pages, not its log.
    /// A whole log (`from` 0) reads nothing; otherwise the chat must be the principal's (404).
    pub fn snapshot_search_text(
        &self,
        id: &str,
        from: u64,
        tail: &[Value],
    ) -> Result<String, ApiError> {
        if from == 0 {
            return Ok(search_text(tail));
        }
        self.ensure_owned(id)?;
        let mut prefix: Vec<Value> = Vec::new();
        let mut next = 0u64;
        while next < from {
            let params = vec![
                id.into(),
                next.into(),
                from.into(),
                SEARCH_PAGE_EVENTS.into(),
            ];
            let rows = self.exec(SELECT_EVENTS_RANGE, params)?;
            let read = rows.len() as u64;
            for row in rows {
                next = u64::try_from(int(&row, 0)?).unwrap_or(from) + 1;
                prefix.push(parse_event(&text(&row, 1)?)?);
            }
            if search_text(&prefix).len() >= MAX_SEARCH_TEXT_BYTES {
                // The tail's text lies past the cut (a block's `message.completed` restates its
                // deltas), so it cannot change what is searchable.
                return Ok(search_text(&prefix));
            }
            if read < SEARCH_PAGE_EVENTS {
                break;
            }
        }
        Ok(search_text(prefix.iter().chain(tail)))
    }

    /// `GET /api/chats/:id/export`: the chat, its session and its log.
    pub fn export(&self, id: &str, now: Millis) -> Result<ChatExport, ApiError> {
        let chat = self.chat_row(id)?;
        Ok(ChatExport {
            format: CHAT_EXPORT_FORMAT.to_string(),
            exported_at: format_iso_ms(now),
            events: self.events(id)?,
            session: chat.session.and_then(|s| serde_json::from_str(&s).ok()),
            chat: chat.summary,
        })
    }

    /// `PUT /api/chats/:id/pin`: the chat goes to the pinned list (again: it keeps its place).
    /// 404 for a chat that is not the principal's; 409 past [`MAX_PINNED_CHATS`].
    pub fn pin(&self, id: &str, now: Millis) -> Result<ChatSummary, ApiError> {
        let chat = self.ensure_owned(id)?;
        let mut params = self.owned(id);
        params.extend([now.into(), (MAX_PINNED_CHATS as i64).into()]);
        if self.exec(PIN_CHAT, params)?.is_empty() {
            // Deleted in between, or the principal has as many pins as allowed.
            self.ensure_owned(id)?;
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("at most {MAX_PINNED_CHATS} chats can be pinned: unpin one first"),
            ));
        }
        Ok(chat)
    }

    /// `DELETE /api/chats/:id/pin` (a chat that was not pinned is fine).
    pub fn unpin(&self, id: &str) -> Result<ChatSummary, ApiError> {
        let chat = self.ensure_owned(id)?;
        self.exec(UNPIN_CHAT, self.owned(id))?;
        Ok(chat)
    }

    /// `PATCH /api/chats/:id`. `title` is normalised already.
    pub fn rename(&self, id: &str, title: &str) -> Result<ChatSummary, ApiError> {
        let mut params = self.owned(id);
        params.push(title.into());
        let row = self
            .exec(RENAME_CHAT, params)?
            .into_iter()
            .next()
            .ok_or_else(chat_not_found)?;
        summary(row)
    }

    /// `DELETE /api/chats/:id`: the row, then its events and search text. The sweeps run even
    /// when the row is already gone, so a retry finishes a delete that was cut off; the answer
    /// is then 404 (the state is the same).
    pub fn delete(&self, id: &str) -> Result<(), ApiError> {
        let deleted = !self.exec(DELETE_CHAT, self.owned(id))?.is_empty();
        self.exec(SWEEP_ORPHAN_EVENTS, vec![id.into()])?;
        self.exec(SWEEP_ORPHAN_SEARCH_TEXT, vec![id.into()])?;
        if deleted {
            Ok(())
        } else {
            Err(chat_not_found())
        }
    }

    /// Upserts slots in one statement (`sql` is [`UPSERT_EVENTS`] or [`UPSERT_SNAPSHOT_EVENTS`]).
    /// Nothing written: the chat is not the principal's (404), the base did not match (409), or
    /// the write is over a byte cap (413); which one is read afterwards, the write did nothing.
    fn upsert(
        &self,
        sql: &str,
        id: &str,
        events: &[(u64, StoredEvent)],
        base: Option<u64>,
        now: Millis,
    ) -> Result<u64, ApiError> {
        let bytes: u64 = events.iter().map(|(_, e)| e.json.len() as u64).sum();
        let mut params = self.owned(id);
        params.extend([
            now.into(),
            events_param(events).into(),
            base.map_or(SqlValue::Null, SqlValue::from),
            bytes.into(),
            self.quota.chat_bytes.into(),
            self.quota.principal_bytes.into(),
        ]);
        let rows = self.exec(sql, params)?;
        if !rows.is_empty() {
            return Ok(rows.len() as u64);
        }
        self.ensure_owned(id)?;
        if let Some(base) = base {
            let current = self.event_count(id)?;
            let base_failed = if sql == UPSERT_SNAPSHOT_EVENTS {
                current != base
            } else {
                let reach = events.iter().map(|(i, _)| i + 1).max().unwrap_or(0);
                // Within the range, the slot check failed unless the bytes are what did not fit.
                current < base || current > reach || {
                    let (chat, principal) = self.usage(id)?;
                    chat + bytes <= self.quota.chat_bytes
                        && principal + bytes <= self.quota.principal_bytes
                }
            };
            if base_failed {
                return Err(log_conflict(current));
            }
        }
        Err(self.over_quota(id, bytes)?)
    }

    fn over_quota(&self, id: &str, bytes: u64) -> Result<ApiError, ApiError> {
        let (chat, _) = self.usage(id)?;
        Ok(if chat + bytes > self.quota.chat_bytes {
            ApiError::new(
                ErrorCode::PayloadTooLarge,
                format!(
                    "this chat is full: it may store {} and holds {}; start a new chat or delete old ones",
                    human_bytes(self.quota.chat_bytes),
                    human_bytes(chat)
                ),
            )
        } else {
            ApiError::new(
                ErrorCode::PayloadTooLarge,
                format!(
                    "your storage is full ({} across all chats); delete chats you no longer need",
                    human_bytes(self.quota.principal_bytes)
                ),
            )
        })
    }

    /// The running byte totals of the chat and of the principal.
    pub fn usage(&self, id: &str) -> Result<(u64, u64), ApiError> {
        let row = self
            .exec(SELECT_USAGE, self.owned(id))?
            .into_iter()
            .next()
            .unwrap_or_default();
        let n = |i: usize| row.get(i).and_then(SqlValue::as_i64).unwrap_or(0).max(0) as u64;
        Ok((n(0), n(1)))
    }

    /// The length of the chat's log (highest slot + 1); the caller has checked ownership.
    pub fn event_count(&self, id: &str) -> Result<u64, ApiError> {
        let rows = self.exec(SELECT_EVENT_COUNT, vec![id.into()])?;
        Ok(rows
            .first()
            .and_then(|r| r.first())
            .and_then(SqlValue::as_i64)
            .unwrap_or(0)
            .max(0) as u64)
    }

    fn ensure_owned(&self, id: &str) -> Result<ChatSummary, ApiError> {
        let row = self
            .exec(SELECT_CHAT_SUMMARY, self.owned(id))?
            .into_iter()
            .next()
            .ok_or_else(chat_not_found)?;
        summary(row)
    }

    /// `PUT /api/chats/:id/events/:i` and `POST /api/chats/:id/events`: one statement for any
    /// number of slots (it checks the owner itself: a single append costs one round trip).
    /// `base`: the log length the writer extends (see [`UPSERT_EVENTS`]).
    pub fn append(
        &self,
        id: &str,
        events: &[(u64, StoredEvent)],
        base: Option<u64>,
        now: Millis,
    ) -> Result<EventsWritten, ApiError> {
        if events.is_empty() {
            self.ensure_owned(id)?;
            return Ok(EventsWritten {
                written: 0,
                last_event_index: None,
            });
        }
        let written = self.upsert(UPSERT_EVENTS, id, events, base, now)?;
        Ok(EventsWritten {
            written,
            last_event_index: events.iter().map(|(i, _)| *i).max(),
        })
    }

    /// `PUT /api/chats/:id/snapshot` (seed `saveChatSnapshot`), in this order: (1) upsert every
    /// slot, (2) delete slots at or past the length, (3) store the search text, (4) store the
    /// session, clear the pending message and touch `updated_at`. Cut off anywhere, the retry
    /// redoes every step to the same end state; the pending message is cleared only once the
    /// log is complete. With a `base` (the length of the log the snapshot was built on) a log
    /// that another writer changed since refuses the snapshot whole (409), so a stale tab
    /// cannot delete another tab's turn.
    pub fn save_snapshot(
        &self,
        id: &str,
        events: &[StoredEvent],
        search_text: &str,
        session: &SessionUpdate,
        base: Option<u64>,
        now: Millis,
    ) -> Result<SnapshotSaved, ApiError> {
        let write = SnapshotWrite {
            from: 0,
            events,
            search_text,
            session,
            base,
        };
        self.save_snapshot_at(id, &write, now)
    }

    /// [`save_snapshot`](Self::save_snapshot) of the log from slot `write.from` on (a client
    /// that holds a window of a long chat): the slots before it are left as they are.
    pub fn save_snapshot_at(
        &self,
        id: &str,
        write: &SnapshotWrite,
        now: Millis,
    ) -> Result<SnapshotSaved, ApiError> {
        self.ensure_owned(id)?;
        let (from, base) = (write.from, write.base);
        let end = from + write.events.len() as u64;
        if write.events.is_empty() {
            if let Some(base) = base {
                let current = self.event_count(id)?;
                if current != base {
                    return Err(log_conflict(current));
                }
            }
        } else {
            let indexed: Vec<(u64, StoredEvent)> =
                (from..).zip(write.events.iter().cloned()).collect();
            self.upsert(UPSERT_SNAPSHOT_EVENTS, id, &indexed, base, now)?;
        }
        let mut params = self.owned(id);
        params.push(end.into());
        params.push(base.map_or(SqlValue::Null, |b| b.max(end).into()));
        self.exec(DELETE_EVENTS_FROM, params)?;
        let mut params = self.owned(id);
        params.push(write.search_text.into());
        self.exec(UPSERT_SEARCH_TEXT, params)?;
        let chat = self.settle(id, write.session, now)?;
        Ok(SnapshotSaved {
            event_count: end,
            chat,
        })
    }

    fn settle(
        &self,
        id: &str,
        session: &SessionUpdate,
        now: Millis,
    ) -> Result<ChatSummary, ApiError> {
        let (set, value) = match session {
            SessionUpdate::Keep => (false, SqlValue::Null),
            SessionUpdate::Set(s) => (true, SqlValue::opt_text(s.clone())),
        };
        let mut params = self.owned(id);
        params.extend([set.into(), value, now.into()]);
        let row = self
            .exec(SETTLE_CHAT, params)?
            .into_iter()
            .next()
            .ok_or_else(chat_not_found)?;
        summary(row)
    }

    /// `POST /api/chats/:id/authorization/skip`: (1) upsert the local events, (2) store the
    /// session, clear the pending message, touch `updated_at`.
    pub fn skip_authorization(
        &self,
        id: &str,
        events: &[(u64, StoredEvent)],
        session: &SessionUpdate,
        base: Option<u64>,
        now: Millis,
    ) -> Result<AuthorizationSkipped, ApiError> {
        self.ensure_owned(id)?;
        let written = if events.is_empty() {
            0
        } else {
            self.upsert(UPSERT_EVENTS, id, events, base, now)?
        };
        let chat = self.settle(id, session, now)?;
        Ok(AuthorizationSkipped { written, chat })
    }

    /// `PUT /api/chats/:id/pending`. `message` is validated already.
    pub fn mark_pending(
        &self,
        id: &str,
        message: &str,
        now: Millis,
    ) -> Result<PendingMessageSaved, ApiError> {
        let mut params = self.owned(id);
        params.extend([message.into(), now.into(), fallback_title(message).into()]);
        let row = self
            .exec(MARK_PENDING, params)?
            .into_iter()
            .next()
            .ok_or_else(chat_not_found)?;
        Ok(PendingMessageSaved {
            chat: summary(row)?,
            pending_user_message: message.to_string(),
            pending_user_message_created_at: format_iso_ms(now),
        })
    }

    /// `DELETE /api/chats/:id/pending`: the message was not accepted (a 429 on send), so it must
    /// not be sent on the next load. Only the given message is cleared: a newer one marked by
    /// another tab stays. Does not reorder the sidebar.
    pub fn clear_pending(&self, id: &str, message: Option<&str>) -> Result<(), ApiError> {
        let mut params = self.owned(id);
        params.push(SqlValue::opt_text(message));
        self.exec(CLEAR_PENDING, params)?
            .into_iter()
            .next()
            .ok_or_else(chat_not_found)?;
        Ok(())
    }

    /// `PUT /api/chats/:id/session`. `session` is a validated session's JSON, or `None`.
    pub fn set_session(&self, id: &str, session: Option<&str>) -> Result<SessionSaved, ApiError> {
        let mut params = self.owned(id);
        params.push(SqlValue::opt_text(session));
        let row = self
            .exec(SET_SESSION, params)?
            .into_iter()
            .next()
            .ok_or_else(chat_not_found)?;
        let stored = row.into_iter().next().and_then(SqlValue::into_string);
        Ok(SessionSaved {
            session: stored.and_then(|s| serde_json::from_str(&s).ok()),
        })
    }
}

/// `[[index, "type", event], …]` for [`UPSERT_EVENTS`], built from the stored JSON texts.
pub fn events_param(events: &[(u64, StoredEvent)]) -> String {
    let mut out = String::with_capacity(events.iter().map(|(_, e)| e.json.len() + 32).sum());
    out.push('[');
    for (n, (index, event)) in events.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        let event_type = serde_json::to_string(&event.event_type).unwrap_or_else(|_| "\"\"".into());
        out.push_str(&format!("[{index},{event_type},"));
        out.push_str(&event.json);
        out.push(']');
    }
    out.push(']');
    out
}

/// 409 for a write whose base is not the log's length; the body tells the client what to
/// re-read to (see `eve_api::chat::EventLogConflict`).
pub fn log_conflict(current_length: u64) -> ApiError {
    ApiError::new(
        ErrorCode::Conflict,
        format!(
            "the chat changed in another tab or client: it has {current_length} events now; reload it and write again"
        ),
    )
}

fn human_bytes(n: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if n >= MIB {
        format!("{:.1} MiB", n as f64 / MIB as f64)
    } else {
        format!("{:.1} KiB", n as f64 / 1024.0)
    }
}

/// A stored event's JSON text as a value (the store wrote only JSON objects).
fn parse_event(json: &str) -> Result<Value, ApiError> {
    serde_json::from_str(json).map_err(|_| ApiError::internal("a stored event is not JSON"))
}

fn text(row: &SqlRow, i: usize) -> Result<String, ApiError> {
    row.get(i)
        .and_then(SqlValue::as_str)
        .map(str::to_string)
        .ok_or_else(|| ApiError::internal("unexpected row shape"))
}

fn int(row: &SqlRow, i: usize) -> Result<i64, ApiError> {
    row.get(i)
        .and_then(SqlValue::as_i64)
        .ok_or_else(|| ApiError::internal("unexpected row shape"))
}

/// `id, title, created_at, updated_at` → a sidebar entry.
fn summary(row: SqlRow) -> Result<ChatSummary, ApiError> {
    Ok(ChatSummary {
        id: text(&row, 0)?,
        title: text(&row, 1)?,
        created_at: format_iso_ms(int(&row, 2)?),
        updated_at: format_iso_ms(int(&row, 3)?),
        project_id: None,
    })
}
