//! Request in, response out, for each `events` route. Every input is validated whole before
//! the first write; the store orders the writes (see `eve_store::store`).

use eve_api::chat::{
    AppendEventsRequest, ClearPendingRequest, EventLogConflict, EventLogConflictError,
    PendingMessageRequest, PinChatResponse, SessionRequest, SkipAuthorizationRequest,
    SnapshotRequest,
};
use eve_api::{ApiError, ErrorCode};
use eve_spin::chat_request::{body, no_content, optional_body};
use eve_spin::db::{now_ms, Db};
use eve_spin::{json, ratelimit};
use eve_store::limits::{
    event_write_policy, storage_quota, StorageQuota, MAX_EVENTS_BODY_BYTES, MAX_EVENT_BODY_BYTES,
    MAX_SMALL_BODY_BYTES,
};
use eve_store::store::SnapshotWrite;
use eve_store::validate;
use eve_store::ChatStore;
use serde_json::Value;
use spin_sdk::http::{Request, Response};

type Store<'a> = ChatStore<'a, Db>;

fn variable(name: &str) -> Option<String> {
    spin_sdk::variables::get(name).ok()
}

/// The byte caps (`chat_max_bytes`, `principal_max_bytes`); an account's storage override
/// (issue 20) replaces the principal's, as the agent's 413 does.
pub fn quota(db: &Db, principal: &str) -> StorageQuota {
    let caps = storage_quota(
        variable("chat_max_bytes").as_deref(),
        variable("principal_max_bytes").as_deref(),
    );
    if eve_usage::standing::account_id(principal).is_none() {
        return caps;
    }
    // Unreadable, the default holds: the write that follows fails on the same database.
    let own = eve_usage::quota::storage_override(db, principal).unwrap_or_else(|e| {
        eprintln!("events: storage override: {e}");
        None
    });
    eve_usage::quota::with_storage_override(caps, own)
}

/// Counts one event write of the principal (`chat:write`, `chat_event_writes_per_minute`).
fn count_write(store: &Store) -> Result<(), ApiError> {
    let policy = event_write_policy(variable("chat_event_writes_per_minute").as_deref());
    ratelimit::check_policy(policy, store.owner())
}

/// A refused base becomes the 409 with the log's length, so the client knows where to resume.
fn written<T: serde::Serialize>(
    store: &Store,
    id: &str,
    result: Result<T, ApiError>,
) -> Result<Response, ApiError> {
    match result {
        Ok(v) => Ok(json(200, &v)),
        Err(e) if e.code == ErrorCode::Conflict => Ok(json(
            409,
            &EventLogConflict {
                current_length: store.event_count(id)?,
                error: EventLogConflictError {
                    code: e.code,
                    message: e.message,
                },
            },
        )),
        Err(e) => Err(e),
    }
}

/// `PUT /api/chats/:id/events/:eventIndex[?baseLength=n]` — body: the event; upserts that slot.
pub fn put_event(
    store: &Store,
    id: &str,
    index: &str,
    req: &Request,
) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let index = validate::event_index_segment(index)?;
    let base = validate::base_length_query(req.query())?;
    let event: Value = body(req, MAX_EVENT_BODY_BYTES)?;
    let event = validate::event(&event)?;
    count_write(store)?;
    let result = store.append(id, &[(index, event)], base, now_ms());
    written(store, id, result)
}

/// `POST /api/chats/:id/events` `{ events: [{ eventIndex, event }], baseLength? }` — upserts
/// many slots in one statement.
pub fn append_events(store: &Store, id: &str, req: &Request) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let input: AppendEventsRequest = body(req, MAX_EVENTS_BODY_BYTES)?;
    let events = validate::indexed_events(&input.events)?;
    count_write(store)?;
    let result = store.append(id, &events, input.base_length, now_ms());
    written(store, id, result)
}

/// `PUT /api/chats/:id/snapshot` `{ events: [event…], session?, baseLength?, fromIndex? }`
/// (seed `saveChatSnapshot`; `fromIndex`: the log from that slot on).
pub fn save_snapshot(store: &Store, id: &str, req: &Request) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let input: SnapshotRequest = body(req, MAX_EVENTS_BODY_BYTES)?;
    let events = validate::snapshot_events(&input.events)?;
    let from = validate::snapshot_start(input.from_index, events.len())?;
    let session = validate::session_update(&input.session)?;
    let text = store.snapshot_search_text(id, from, &input.events)?;
    count_write(store)?;
    let write = SnapshotWrite {
        from,
        events: &events,
        search_text: &text,
        session: &session,
        base: input.base_length,
    };
    let result = store.save_snapshot_at(id, &write, now_ms());
    written(store, id, result)
}

/// `PUT /api/chats/:id/pending` `{ message }` (seed `markChatPendingMessage`).
pub fn mark_pending(store: &Store, id: &str, req: &Request) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let input: PendingMessageRequest = body(req, MAX_SMALL_BODY_BYTES)?;
    let message = validate::message(&input.message)?;
    Ok(json(200, &store.mark_pending(id, &message, now_ms())?))
}

/// `DELETE /api/chats/:id/pending` `{ message? }` → 204: the message was refused (a 429 on
/// send), so the next page load must not send it.
pub fn clear_pending(store: &Store, id: &str, req: &Request) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let input: ClearPendingRequest = optional_body(req, MAX_SMALL_BODY_BYTES)?;
    let message = input
        .message
        .as_deref()
        .map(validate::message)
        .transpose()?;
    store.clear_pending(id, message.as_deref())?;
    Ok(no_content())
}

/// `PUT /api/chats/:id/session` `{ session }` (seed `onSessionChange`).
pub fn set_session(store: &Store, id: &str, req: &Request) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let input: SessionRequest = body(req, MAX_SMALL_BODY_BYTES)?;
    let session = validate::session(input.session.as_ref())?;
    Ok(json(200, &store.set_session(id, session.as_deref())?))
}

/// `PUT /api/chats/:id/pin` (`pinned`) and `DELETE /api/chats/:id/pin`: no body.
pub fn pin(store: &Store, id: &str, pinned: bool) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let chat = if pinned {
        store.pin(id, now_ms())?
    } else {
        store.unpin(id)?
    };
    Ok(json(200, &PinChatResponse { chat, pinned }))
}

/// `POST /api/chats/:id/authorization/skip` `{ events: [{ eventIndex, event }], session?,
/// baseLength? }`.
pub fn skip_authorization(store: &Store, id: &str, req: &Request) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let input: SkipAuthorizationRequest = body(req, MAX_EVENTS_BODY_BYTES)?;
    let events = validate::indexed_events(&input.events)?;
    let session = validate::session_update(&input.session)?;
    count_write(store)?;
    let result = store.skip_authorization(id, &events, &session, input.base_length, now_ms());
    written(store, id, result)
}
