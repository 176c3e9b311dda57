//! Request in, response out, for each `events` route. Every input is validated whole before
//! the first write; the store orders the writes (see `eve_store::store`).

use eve_api::chat::{
    AppendEventsRequest, PendingMessageRequest, SessionRequest, SkipAuthorizationRequest,
    SnapshotRequest,
};
use eve_api::ApiError;
use eve_spin::chat_request::body;
use eve_spin::db::{now_ms, Db};
use eve_spin::json;
use eve_store::limits::{MAX_EVENTS_BODY_BYTES, MAX_EVENT_BODY_BYTES, MAX_SMALL_BODY_BYTES};
use eve_store::transcript::search_text;
use eve_store::validate;
use eve_store::ChatStore;
use serde_json::Value;
use spin_sdk::http::{Request, Response};

type Store<'a> = ChatStore<'a, Db>;

/// `PUT /api/chats/:id/events/:eventIndex` — body: the event; upserts that slot.
pub fn put_event(
    store: &Store,
    id: &str,
    index: &str,
    req: &Request,
) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let index = validate::event_index_segment(index)?;
    let event: Value = body(req, MAX_EVENT_BODY_BYTES)?;
    let event = validate::event(&event)?;
    Ok(json(200, &store.append(id, &[(index, event)], now_ms())?))
}

/// `POST /api/chats/:id/events` `{ events: [{ eventIndex, event }] }` — upserts many slots in
/// one statement.
pub fn append_events(store: &Store, id: &str, req: &Request) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let input: AppendEventsRequest = body(req, MAX_EVENTS_BODY_BYTES)?;
    let events = validate::indexed_events(&input.events)?;
    Ok(json(200, &store.append(id, &events, now_ms())?))
}

/// `PUT /api/chats/:id/snapshot` `{ events: [event…], session? }` (seed `saveChatSnapshot`).
pub fn save_snapshot(store: &Store, id: &str, req: &Request) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let input: SnapshotRequest = body(req, MAX_EVENTS_BODY_BYTES)?;
    let events = validate::snapshot_events(&input.events)?;
    let session = validate::session_update(&input.session)?;
    let text = search_text(&input.events);
    Ok(json(
        200,
        &store.save_snapshot(id, &events, &text, &session, now_ms())?,
    ))
}

/// `PUT /api/chats/:id/pending` `{ message }` (seed `markChatPendingMessage`).
pub fn mark_pending(store: &Store, id: &str, req: &Request) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let input: PendingMessageRequest = body(req, MAX_SMALL_BODY_BYTES)?;
    let message = validate::message(&input.message)?;
    Ok(json(200, &store.mark_pending(id, &message, now_ms())?))
}

/// `PUT /api/chats/:id/session` `{ session }` (seed `onSessionChange`).
pub fn set_session(store: &Store, id: &str, req: &Request) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let input: SessionRequest = body(req, MAX_SMALL_BODY_BYTES)?;
    let session = validate::session(input.session.as_ref())?;
    Ok(json(200, &store.set_session(id, session.as_deref())?))
}

/// `POST /api/chats/:id/authorization/skip` `{ events: [{ eventIndex, event }], session? }`.
pub fn skip_authorization(store: &Store, id: &str, req: &Request) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let input: SkipAuthorizationRequest = body(req, MAX_EVENTS_BODY_BYTES)?;
    let events = validate::indexed_events(&input.events)?;
    let session = validate::session_update(&input.session)?;
    Ok(json(
        200,
        &store.skip_authorization(id, &events, &session, now_ms())?,
    ))
}
