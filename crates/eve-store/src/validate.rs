//! Turning request input into values the store can write, or a clear 4xx. Nothing here touches
//! the database: a request is validated whole before its first write, so bad input changes
//! nothing.

use crate::cursor::{ChatCursor, EventCursor};
use crate::ids::is_valid_chat_id;
use crate::limits::*;
use eve_api::chat::IndexedEvent;
use eve_api::{ApiError, ErrorCode};
use serde_json::Value;
use std::collections::BTreeMap;

/// An event ready to store: its `type` and its canonical JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    pub event_type: String,
    pub json: String,
}

/// What a write does to the stored eve session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionUpdate {
    /// The field was absent: leave the stored session alone.
    Keep,
    /// Store this (`None` clears it); the JSON text of a validated `ClientSessionState`.
    Set(Option<String>),
}

fn too_large(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::PayloadTooLarge, message)
}

/// A request body of at most `max` bytes.
pub fn body_size(len: usize, max: usize) -> Result<(), ApiError> {
    if len > max {
        return Err(too_large(format!(
            "request body is too large (at most {max} bytes)"
        )));
    }
    Ok(())
}

/// A chat id from a URL or a body. An invalid id is answered like an unknown chat (404).
pub fn chat_id(id: &str) -> Result<&str, ApiError> {
    if is_valid_chat_id(id) {
        Ok(id)
    } else {
        Err(chat_not_found())
    }
}

/// The one answer for an unknown chat, a malformed id and another principal's chat.
pub fn chat_not_found() -> ApiError {
    ApiError::not_found("chat not found")
}

/// A user message (pending or first): trimmed, non-empty, at most 8000 characters.
pub fn message(text: &str) -> Result<String, ApiError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(ApiError::bad_request("message must not be empty"));
    }
    if trimmed.chars().count() > MAX_MESSAGE_CHARS {
        return Err(ApiError::bad_request(format!(
            "message is too long (at most {MAX_MESSAGE_CHARS} characters)"
        )));
    }
    Ok(trimmed.to_string())
}

/// An event index from a number in a body.
pub fn event_index(index: i64) -> Result<u64, ApiError> {
    u64::try_from(index)
        .ok()
        .filter(|i| *i < MAX_EVENTS_PER_CHAT)
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "eventIndex must be an integer from 0 to {}",
                MAX_EVENTS_PER_CHAT - 1
            ))
        })
}

/// An event index from a URL segment: ASCII digits only (no sign, no spaces, no exponent).
pub fn event_index_segment(segment: &str) -> Result<u64, ApiError> {
    if segment.is_empty() || segment.len() > 10 || !segment.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::bad_request(format!(
            "eventIndex must be an integer from 0 to {}",
            MAX_EVENTS_PER_CHAT - 1
        )));
    }
    event_index(segment.parse::<i64>().unwrap_or(i64::MAX))
}

/// An event: a JSON object with a non-empty string `type`, at most [`MAX_EVENT_BYTES`].
pub fn event(value: &Value) -> Result<StoredEvent, ApiError> {
    let object = value
        .as_object()
        .ok_or_else(|| ApiError::bad_request("an event must be a JSON object"))?;
    let event_type = match object.get("type") {
        Some(Value::String(t)) if !t.is_empty() && t.chars().count() <= MAX_EVENT_TYPE_CHARS => {
            t.clone()
        }
        Some(Value::String(_)) => {
            return Err(ApiError::bad_request(format!(
                "an event's type must be 1 to {MAX_EVENT_TYPE_CHARS} characters"
            )))
        }
        _ => {
            return Err(ApiError::bad_request(
                "an event must have a string \"type\"",
            ))
        }
    };
    let json = serde_json::to_string(value).map_err(|_| ApiError::bad_request("bad event"))?;
    if json.len() > MAX_EVENT_BYTES {
        return Err(too_large(format!(
            "an event is too large (at most {MAX_EVENT_BYTES} bytes)"
        )));
    }
    Ok(StoredEvent { event_type, json })
}

/// Events at explicit slots (batch append, authorization skip). The same index twice: the later
/// one wins, exactly as two single writes would. Sorted by index.
pub fn indexed_events(events: &[IndexedEvent]) -> Result<Vec<(u64, StoredEvent)>, ApiError> {
    if events.len() as u64 > MAX_EVENTS_PER_CHAT {
        return Err(too_large(format!(
            "at most {MAX_EVENTS_PER_CHAT} events per request"
        )));
    }
    let mut by_index = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        let index = event_index(e.event_index).map_err(|err| at(i, err))?;
        let stored = event(&e.event).map_err(|err| at(i, err))?;
        by_index.insert(index, stored);
    }
    Ok(by_index.into_iter().collect())
}

/// A snapshot's whole log: `events[i]` goes to slot `i`.
pub fn snapshot_events(events: &[Value]) -> Result<Vec<StoredEvent>, ApiError> {
    if events.len() as u64 > MAX_EVENTS_PER_CHAT {
        return Err(too_large(format!(
            "a chat holds at most {MAX_EVENTS_PER_CHAT} events"
        )));
    }
    events
        .iter()
        .enumerate()
        .map(|(i, e)| event(e).map_err(|err| at(i, err)))
        .collect()
}

fn at(i: usize, err: ApiError) -> ApiError {
    ApiError {
        message: format!("events[{i}]: {}", err.message),
        ..err
    }
}

/// An eve `ClientSessionState`: `null`, or an object with a string `sessionId` and a
/// non-negative integer `streamIndex` (other fields are kept as they are).
pub fn session(value: Option<&Value>) -> Result<Option<String>, ApiError> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let bad = || {
        ApiError::bad_request(
            "session must be null or { sessionId: string, streamIndex: non-negative integer }",
        )
    };
    let object = value.as_object().ok_or_else(bad)?;
    match object.get("sessionId") {
        Some(Value::String(id)) if !id.is_empty() && id.chars().count() <= MAX_SESSION_ID_CHARS => {
        }
        _ => return Err(bad()),
    }
    if object.get("streamIndex").and_then(Value::as_u64).is_none() {
        return Err(bad());
    }
    let json = serde_json::to_string(value).map_err(|_| bad())?;
    if json.len() > MAX_SESSION_BYTES {
        return Err(too_large(format!(
            "session is too large (at most {MAX_SESSION_BYTES} bytes)"
        )));
    }
    Ok(Some(json))
}

/// A session field that may be absent (keep), `null` (clear) or a session (store).
pub fn session_update(field: &Option<Option<Value>>) -> Result<SessionUpdate, ApiError> {
    match field {
        None => Ok(SessionUpdate::Keep),
        Some(v) => Ok(SessionUpdate::Set(session(v.as_ref())?)),
    }
}

/// `GET /api/chats` parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListQuery {
    pub cursor: Option<ChatCursor>,
    pub limit: usize,
    /// Search text (trimmed, non-empty).
    pub search: Option<String>,
    /// `pinned=1`: only the pinned chats, all on one page (most recently pinned first).
    pub pinned: bool,
}

/// Parses `cursor=&limit=&q=` from a raw (percent-encoded) query string. Unknown parameters
/// are ignored; a malformed cursor or limit, or an overlong `q`, is a 400. `limit` above
/// [`MAX_PAGE_SIZE`] is capped.
pub fn list_query(raw_query: &str) -> Result<ListQuery, ApiError> {
    let mut query = ListQuery {
        cursor: None,
        limit: DEFAULT_PAGE_SIZE,
        search: None,
        pinned: false,
    };
    for (key, value) in form_urlencoded::parse(raw_query.as_bytes()) {
        match key.as_ref() {
            "cursor" if !value.is_empty() => {
                let cursor = ChatCursor::decode(&value)
                    .map_err(|e| ApiError::bad_request(format!("malformed cursor: {}", e.0)))?;
                query.cursor = Some(cursor);
            }
            "limit" if !value.is_empty() => query.limit = page_limit(&value, MAX_PAGE_SIZE)?,
            "q" => {
                let q = value.trim();
                if q.chars().count() > MAX_QUERY_CHARS {
                    return Err(ApiError::bad_request(format!(
                        "q is too long (at most {MAX_QUERY_CHARS} characters)"
                    )));
                }
                query.search = (!q.is_empty()).then(|| q.to_string());
            }
            "pinned" => {
                query.pinned = match value.as_ref() {
                    "1" | "true" => true,
                    "0" | "false" | "" => false,
                    _ => return Err(ApiError::bad_request("pinned must be 1 or 0")),
                }
            }
            _ => {}
        }
    }
    if query.pinned && (query.cursor.is_some() || query.search.is_some()) {
        return Err(ApiError::bad_request(
            "pinned lists every pinned chat on one page: no cursor or q with it",
        ));
    }
    Ok(query)
}

/// A `limit=` of a paged list: a positive integer, capped at `max` (a bigger one is not an
/// error: a client asking for "all" gets the most a page holds).
fn page_limit(value: &str, max: usize) -> Result<usize, ApiError> {
    let n: usize = value
        .parse()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| ApiError::bad_request("limit must be a positive integer"))?;
    Ok(n.min(max))
}

/// `GET /api/chats/:id` parameters: which window of the log to answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowQuery {
    /// The window ends just before this slot (`None`: at the end of the log).
    pub before: Option<u64>,
    pub limit: usize,
}

/// Parses `before=&limit=` for chat `chat_id` as [`list_query`] parses the sidebar's: a
/// malformed or foreign cursor, or a limit that is not a positive integer, is a 400; a limit
/// above [`MAX_EVENT_PAGE_SIZE`] is capped. Unknown parameters are ignored.
pub fn window_query(raw_query: &str, chat_id: &str) -> Result<WindowQuery, ApiError> {
    let mut query = WindowQuery {
        before: None,
        limit: DEFAULT_EVENT_PAGE_SIZE,
    };
    for (key, value) in form_urlencoded::parse(raw_query.as_bytes()) {
        match key.as_ref() {
            "before" if !value.is_empty() => {
                let cursor = EventCursor::decode(&value, chat_id)
                    .map_err(|e| ApiError::bad_request(format!("malformed cursor: {}", e.0)))?;
                query.before = Some(cursor.before);
            }
            "limit" if !value.is_empty() => query.limit = page_limit(&value, MAX_EVENT_PAGE_SIZE)?,
            _ => {}
        }
    }
    Ok(query)
}

/// A snapshot's `fromIndex` with its events: the slots they go to must lie within the cap.
pub fn snapshot_start(from: Option<u64>, len: usize) -> Result<u64, ApiError> {
    let from = from.unwrap_or(0);
    if from.saturating_add(len as u64) > MAX_EVENTS_PER_CHAT {
        return Err(ApiError::bad_request(format!(
            "fromIndex + events must stay within the {MAX_EVENTS_PER_CHAT} slots of a chat"
        )));
    }
    Ok(from)
}

/// `?format=` of an export: `md` (default) or `json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Markdown,
    Json,
}

/// `?baseLength=n` of a single-event write (the batch and snapshot bodies carry it as a field):
/// `None` when absent, 400 when not a non-negative integer.
pub fn base_length_query(raw_query: &str) -> Result<Option<u64>, ApiError> {
    let mut base = None;
    for (key, value) in form_urlencoded::parse(raw_query.as_bytes()) {
        if key == "baseLength" {
            base =
                Some(value.parse::<u64>().map_err(|_| {
                    ApiError::bad_request("baseLength must be a non-negative integer")
                })?);
        }
    }
    Ok(base)
}

/// Parses the export query string.
pub fn export_format(raw_query: &str) -> Result<ExportFormat, ApiError> {
    let mut format = ExportFormat::Markdown;
    for (key, value) in form_urlencoded::parse(raw_query.as_bytes()) {
        if key == "format" {
            format = match value.as_ref() {
                "md" | "markdown" => ExportFormat::Markdown,
                "json" => ExportFormat::Json,
                _ => return Err(ApiError::bad_request("format must be md or json")),
            };
        }
    }
    Ok(format)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn message_is_trimmed_and_bounded_at_8000_characters() {
        assert_eq!(message("  hi \n").unwrap(), "hi");
        assert!(message("   ").is_err());
        assert!(message(&"字".repeat(MAX_MESSAGE_CHARS)).is_ok());
        let err = message(&"a".repeat(MAX_MESSAGE_CHARS + 1)).unwrap_err();
        assert_eq!(err.status(), 400);
    }

    #[test]
    fn event_must_be_an_object_with_a_string_type() {
        assert!(event(&json!({ "type": "text.delta", "delta": "x" })).is_ok());
        for bad in [
            json!(null),
            json!([]),
            json!("x"),
            json!({}),
            json!({ "type": 3 }),
            json!({ "type": "" }),
        ] {
            assert_eq!(event(&bad).unwrap_err().status(), 400, "{bad}");
        }
    }

    #[test]
    fn oversized_event_is_payload_too_large() {
        let big = json!({ "type": "x", "text": "a".repeat(MAX_EVENT_BYTES) });
        assert_eq!(event(&big).unwrap_err().status(), 413);
    }

    #[test]
    fn event_json_is_canonical_so_identical_retries_store_identical_text() {
        let a = event(&serde_json::from_str(r#"{"type":"x","b":1,"a":2}"#).unwrap()).unwrap();
        let b =
            event(&serde_json::from_str(r#"{ "a": 2, "type": "x", "b": 1 }"#).unwrap()).unwrap();
        assert_eq!(a.json, b.json);
    }

    #[test]
    fn negative_or_absurd_event_index_is_rejected() {
        assert_eq!(event_index(0).unwrap(), 0);
        assert_eq!(
            event_index(MAX_EVENTS_PER_CHAT as i64 - 1).unwrap(),
            MAX_EVENTS_PER_CHAT - 1
        );
        assert!(event_index(-1).is_err());
        assert!(event_index(MAX_EVENTS_PER_CHAT as i64).is_err());
        assert!(event_index(i64::MAX).is_err());
    }

    #[test]
    fn event_index_in_the_path_is_plain_digits() {
        assert_eq!(event_index_segment("42").unwrap(), 42);
        for bad in [
            "",
            "-1",
            "+1",
            "1e3",
            " 1",
            "0x10",
            "99999999999999999999",
            "1.0",
        ] {
            assert!(event_index_segment(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn indexed_events_keep_the_last_write_per_slot_and_sort_by_index() {
        let events: Vec<IndexedEvent> = serde_json::from_value(json!([
            { "eventIndex": 2, "event": { "type": "b" } },
            { "eventIndex": 0, "event": { "type": "a" } },
            { "eventIndex": 2, "event": { "type": "c" } },
        ]))
        .unwrap();
        let out = indexed_events(&events).unwrap();
        let got: Vec<_> = out
            .iter()
            .map(|(i, e)| (*i, e.event_type.as_str()))
            .collect();
        assert_eq!(got, vec![(0, "a"), (2, "c")]);
    }

    #[test]
    fn one_bad_event_rejects_the_whole_batch_naming_its_position() {
        let events: Vec<IndexedEvent> = serde_json::from_value(json!([
            { "eventIndex": 0, "event": { "type": "a" } },
            { "eventIndex": 1, "event": { "kind": "no type" } },
        ]))
        .unwrap();
        let err = indexed_events(&events).unwrap_err();
        assert!(err.message.starts_with("events[1]"), "{}", err.message);
    }

    #[test]
    fn snapshot_over_the_event_cap_is_rejected() {
        let events = vec![json!({ "type": "x" }); MAX_EVENTS_PER_CHAT as usize + 1];
        assert_eq!(snapshot_events(&events).unwrap_err().status(), 413);
    }

    #[test]
    fn session_is_null_or_a_client_session_state() {
        assert_eq!(session(None).unwrap(), None);
        assert_eq!(session(Some(&json!(null))).unwrap(), None);
        assert!(
            session(Some(&json!({ "sessionId": "s1", "streamIndex": 0 })))
                .unwrap()
                .is_some()
        );
        for bad in [
            json!({}),
            json!({ "sessionId": "s1" }),
            json!({ "sessionId": "", "streamIndex": 0 }),
            json!({ "sessionId": "s1", "streamIndex": -1 }),
            json!({ "sessionId": "s1", "streamIndex": 1.5 }),
            json!({ "sessionId": 5, "streamIndex": 0 }),
            json!("s1"),
        ] {
            assert!(session(Some(&bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_eve_client_session_state_is_a_valid_session() {
        let state = eve_api::eve::ClientSessionState {
            session_id: "s-1".into(),
            stream_index: 12,
        };
        let value = serde_json::to_value(&state).unwrap();
        let stored = session(Some(&value)).unwrap().unwrap();
        let back: eve_api::eve::ClientSessionState = serde_json::from_str(&stored).unwrap();
        assert_eq!(back, state);
    }

    #[test]
    fn session_update_distinguishes_keep_clear_and_set() {
        assert_eq!(session_update(&None).unwrap(), SessionUpdate::Keep);
        assert_eq!(
            session_update(&Some(None)).unwrap(),
            SessionUpdate::Set(None)
        );
        let set =
            session_update(&Some(Some(json!({ "sessionId": "s", "streamIndex": 2 })))).unwrap();
        assert!(matches!(set, SessionUpdate::Set(Some(_))));
    }

    #[test]
    fn list_query_defaults_caps_and_decodes() {
        let q = list_query("").unwrap();
        assert_eq!(
            (q.limit, q.cursor, q.search),
            (DEFAULT_PAGE_SIZE, None, None)
        );
        assert_eq!(list_query("limit=1000").unwrap().limit, MAX_PAGE_SIZE);
        let q = list_query("cursor=2024-05-01T12%3A34%3A56.789Z%3A%3Aabc&q=%20hello%20world%20")
            .unwrap();
        assert_eq!(q.cursor.unwrap().id, "abc");
        assert_eq!(q.search.as_deref(), Some("hello world"));
        assert_eq!(list_query("q=++").unwrap().search, None);
    }

    #[test]
    fn list_query_rejects_malformed_cursor_and_limit() {
        for bad in [
            "cursor=nope",
            "cursor=2024-05-01::abc",
            "limit=0",
            "limit=-3",
            "limit=ten",
        ] {
            assert_eq!(list_query(bad).unwrap_err().status(), 400, "{bad}");
        }
        assert!(list_query(&format!("q={}", "a".repeat(MAX_QUERY_CHARS + 1))).is_err());
    }

    #[test]
    fn window_query_defaults_caps_and_decodes_this_chats_cursor() {
        let q = window_query("", "c1").unwrap();
        assert_eq!((q.before, q.limit), (None, DEFAULT_EVENT_PAGE_SIZE));
        assert_eq!(
            window_query("limit=100000", "c1").unwrap().limit,
            MAX_EVENT_PAGE_SIZE
        );
        let q = window_query("before=40%3A%3Ac1&limit=7", "c1").unwrap();
        assert_eq!((q.before, q.limit), (Some(40), 7));
        assert_eq!(window_query("before=&limit=", "c1").unwrap().before, None);
    }

    #[test]
    fn window_query_rejects_malformed_or_foreign_cursors_and_limits() {
        for bad in [
            "before=nope",
            "before=40",
            "before=40%3A%3Aother",
            "before=-1%3A%3Ac1",
            "limit=0",
            "limit=-3",
            "limit=ten",
            "limit=1.5",
        ] {
            assert_eq!(window_query(bad, "c1").unwrap_err().status(), 400, "{bad}");
        }
    }

    #[test]
    fn a_snapshot_start_keeps_its_slots_within_the_cap() {
        assert_eq!(snapshot_start(None, 3).unwrap(), 0);
        assert_eq!(snapshot_start(Some(10), 3).unwrap(), 10);
        let last = MAX_EVENTS_PER_CHAT - 1;
        assert_eq!(snapshot_start(Some(last), 1).unwrap(), last);
        assert_eq!(snapshot_start(Some(last), 2).unwrap_err().status(), 400);
        assert_eq!(snapshot_start(Some(u64::MAX), 1).unwrap_err().status(), 400);
    }

    #[test]
    fn export_format_is_md_by_default_or_json() {
        assert_eq!(export_format("").unwrap(), ExportFormat::Markdown);
        assert_eq!(export_format("format=md").unwrap(), ExportFormat::Markdown);
        assert_eq!(export_format("format=json").unwrap(), ExportFormat::Json);
        assert!(export_format("format=pdf").is_err());
    }

    #[test]
    fn malformed_chat_ids_answer_not_found() {
        assert_eq!(chat_id("../etc").unwrap_err().status(), 404);
        assert_eq!(chat_id("abc").unwrap(), "abc");
    }
}
