//! The chat store's wire shapes: `/api/chats` (the `chats` component) and
//! `/api/chats/:id/...` (the `events` component). Field names are camelCase as in the seed.
//!
//! Events and the eve session are carried as raw JSON values: the store keeps them verbatim
//! (after validating that an event is an object with a string `type`), so that the event log
//! stays the authoritative copy of whatever the agent emitted. See `docs/chat-store.md`.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// The title a chat has until something better is known (seed `DEFAULT_CHAT_TITLE`).
pub const DEFAULT_CHAT_TITLE: &str = "New chat";

/// One sidebar entry. Timestamps are ISO-8601 with milliseconds, UTC (`…T12:00:00.000Z`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatSummary {
    pub id: String,
    pub title: String,
    pub created_at: String,
    pub updated_at: String,
    /// The chat's project (issue 21, docs/projects.md): `Some(Some(id))` in a project,
    /// `Some(None)` (`null`) in none; absent (`None`) on the answers that do not look it up
    /// (the `events` component's: pending, snapshot, pin) — keep what the list said.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub project_id: Option<Option<String>>,
}

/// `GET /api/chats?cursor=&limit=&q=` → one page, newest first (`updatedAt desc, id desc`).
/// `nextCursor` is `null` on the last page; otherwise pass it back as `cursor`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatPage {
    pub chats: Vec<ChatSummary>,
    pub next_cursor: Option<String>,
}

/// `POST /api/chats` body (may be empty or `{}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateChatRequest {
    /// The first user message; becomes the pending message and gives the chat its title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_user_message: Option<String>,
    /// Optional client-chosen id (same charset and length rules as server ids). Retrying a
    /// create with the same id returns the chat created by the first attempt (idempotent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Creates the chat in this project of the caller's (404 otherwise, nothing created).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_id: Option<String>,
}

/// `POST /api/chats` → 201 (or 200 when an idempotent retry found the chat already there).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateChatResponse {
    pub chat: ChatSummary,
}

/// `GET /api/chats/:id?limit=&before=` → the chat with one window of its event log, in index
/// order: the latest events, or with `before` the ones just before an earlier window. A chat
/// whose log fits one window (most chats) answers its whole log, as before paging existed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatDetail {
    pub chat: ChatSummary,
    /// The window: `events[i]` is the event at slot `firstEventIndex + i`.
    pub events: Vec<Value>,
    /// The slot of `events[0]` (the log length when the window is empty).
    #[serde(default)]
    pub first_event_index: u64,
    /// The log's length (highest slot + 1): the `baseLength` of the next write.
    #[serde(default)]
    pub event_count: u64,
    /// Pass back as `before` for the events just before this window; `null` when the window
    /// starts the log. Opaque: clients never build one.
    #[serde(default)]
    pub before_cursor: Option<String>,
    /// The newest branch marker (`eve-chat.branch`, docs/web.md) before the window, when the
    /// window does not start the log: the conversation the window shows continues that branch.
    #[serde(default)]
    pub branch_before: Option<IndexedEvent>,
    /// The eve `ClientSessionState` (`{ sessionId, streamIndex }`) or `null`.
    pub session: Option<Value>,
    /// `null` when there is none, or when a settling event at or after it exists (stale).
    pub pending_user_message: Option<String>,
    /// When the (visible) pending message was marked; `null` together with it.
    pub pending_user_message_created_at: Option<String>,
}

/// `PATCH /api/chats/:id` body: a new title, and/or a move (`projectId: "<id>"` into the
/// caller's project, `projectId: null` out of any); at least one of them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RenameChatRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub project_id: Option<Option<String>>,
}

/// `PATCH /api/chats/:id` → the chat as it is now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RenameChatResponse {
    pub chat: ChatSummary,
}

/// One event at an explicit slot of the chat's log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexedEvent {
    /// Signed so that a negative index is a clear 400 rather than a type error.
    pub event_index: i64,
    pub event: Value,
}

/// `POST /api/chats/:id/events` body: upsert many slots in one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppendEventsRequest {
    pub events: Vec<IndexedEvent>,
    /// The log length the writer extends (what it has read and written). A slot that holds a
    /// different event by now is a 409 [`EventLogConflict`]; absent: no check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_length: Option<u64>,
}

/// `PUT /api/chats/:id/events/:eventIndex` and `POST /api/chats/:id/events` → how many slots
/// were written and the highest index written (`null` when none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventsWritten {
    pub written: u64,
    pub last_event_index: Option<u64>,
}

/// `PUT /api/chats/:id/snapshot` body (seed `saveChatSnapshot`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotRequest {
    /// The log from slot `fromIndex` on: `events[i]` is stored at slot `fromIndex + i`; rows
    /// at or past `fromIndex + events.len()` go, rows before `fromIndex` stay as they are.
    pub events: Vec<Value>,
    /// Where `events` starts (absent: 0, the whole log). A client that opened a window of a
    /// long chat saves the window it holds, not a log it never read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_index: Option<u64>,
    /// Absent: keep the stored session. `null`: clear it. Object: store it.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub session: Option<Option<Value>>,
    /// The length of the stored log the snapshot was built on. Any other length (another tab
    /// or client wrote since) is a 409 [`EventLogConflict`] and nothing is written; absent: no
    /// check (last writer wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_length: Option<u64>,
}

/// 409 on an event write whose base is not the stored log: the standard error envelope plus
/// the log's length now. The client re-reads the chat, re-applies what it has that the log
/// lacks, and writes again with the new base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventLogConflict {
    pub error: EventLogConflictError,
    pub current_length: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventLogConflictError {
    pub code: crate::ErrorCode,
    pub message: String,
}

/// `PUT /api/chats/:id/snapshot` → the resulting log length.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotSaved {
    pub event_count: u64,
    pub chat: ChatSummary,
}

/// `PUT /api/chats/:id/pending` body (seed `markChatPendingMessage`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingMessageRequest {
    pub message: String,
}

/// `DELETE /api/chats/:id/pending` body (optional): the message that was not accepted. Only
/// a pending message equal to it is cleared (a newer one from another tab stays); absent or
/// empty body: whatever is pending is cleared. → 204.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClearPendingRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// `PUT /api/chats/:id/pending` → the chat (its title may have changed from "New chat").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingMessageSaved {
    pub chat: ChatSummary,
    pub pending_user_message: String,
    pub pending_user_message_created_at: String,
}

/// `PUT /api/chats/:id/session` body (seed `onSessionChange`). `null` clears it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRequest {
    #[serde(deserialize_with = "nullable")]
    pub session: Option<Value>,
}

/// `PUT /api/chats/:id/session` → what is stored now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSaved {
    pub session: Option<Value>,
}

/// `POST /api/chats/:id/authorization/skip` body: the locally synthesised events (a declined
/// `authorization.completed`, a local `session.waiting`) at their slots, and the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkipAuthorizationRequest {
    pub events: Vec<IndexedEvent>,
    /// As in [`AppendEventsRequest`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_length: Option<u64>,
    /// Absent: keep the stored session. `null`: clear it. Object: store it.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub session: Option<Option<Value>>,
}

/// `POST /api/chats/:id/authorization/skip` → slots written and the chat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthorizationSkipped {
    pub written: u64,
    pub chat: ChatSummary,
}

/// `GET /api/chats/:id/export?format=json` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChatExport {
    /// Always `"eve-chat.export.v1"`, so that an importer knows what it reads.
    pub format: String,
    pub exported_at: String,
    pub chat: ChatSummary,
    pub session: Option<Value>,
    pub events: Vec<Value>,
}

/// The `format` tag of [`ChatExport`].
pub const CHAT_EXPORT_FORMAT: &str = "eve-chat.export.v1";

/// Distinguishes "field present (maybe null)" from "field absent" when used with
/// `#[serde(default)]`: present → `Some(value)`, absent → `None` (the default).
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// A field that must be present but may be `null` (serde lets a plain `Option` be absent).
fn nullable<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d)
}

/// `PUT` / `DELETE /api/chats/:id/pin` → the chat and whether it is pinned now. The pinned
/// chats are `GET /api/chats?pinned=1`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PinChatResponse {
    pub chat: ChatSummary,
    pub pinned: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn snapshot_session_distinguishes_absent_null_and_value() {
        let absent: SnapshotRequest = serde_json::from_value(json!({ "events": [] })).unwrap();
        assert_eq!(absent.session, None);
        let null: SnapshotRequest =
            serde_json::from_value(json!({ "events": [], "session": null })).unwrap();
        assert_eq!(null.session, Some(None));
        let set: SnapshotRequest = serde_json::from_value(
            json!({ "events": [], "session": { "sessionId": "s", "streamIndex": 3 } }),
        )
        .unwrap();
        assert_eq!(
            set.session,
            Some(Some(json!({ "sessionId": "s", "streamIndex": 3 })))
        );
    }

    #[test]
    fn session_request_requires_the_session_field_but_accepts_null() {
        assert!(serde_json::from_value::<SessionRequest>(json!({})).is_err());
        let null: SessionRequest = serde_json::from_value(json!({ "session": null })).unwrap();
        assert_eq!(null.session, None);
    }

    #[test]
    fn chat_page_serializes_camel_case_with_null_cursor() {
        let page = ChatPage {
            chats: vec![ChatSummary {
                id: "a".into(),
                title: "t".into(),
                created_at: "2024-01-01T00:00:00.000Z".into(),
                updated_at: "2024-01-01T00:00:00.000Z".into(),
                project_id: None,
            }],
            next_cursor: None,
        };
        let v = serde_json::to_value(&page).unwrap();
        assert_eq!(v["nextCursor"], Value::Null);
        assert!(
            v["chats"][0].get("projectId").is_none(),
            "not looked up: absent"
        );
        assert_eq!(v["chats"][0]["updatedAt"], "2024-01-01T00:00:00.000Z");
        assert_eq!(v["chats"][0]["createdAt"], "2024-01-01T00:00:00.000Z");
    }

    #[test]
    fn a_chat_patch_tells_a_move_out_from_no_move() {
        let out: RenameChatRequest = serde_json::from_value(json!({ "projectId": null })).unwrap();
        assert_eq!(out.project_id, Some(None));
        let none: RenameChatRequest = serde_json::from_value(json!({ "title": "t" })).unwrap();
        assert_eq!(none.project_id, None);
        assert!(serde_json::from_value::<RenameChatRequest>(json!({ "projectId": 3 })).is_err());
        let s = ChatSummary {
            id: "a".into(),
            title: "t".into(),
            created_at: String::new(),
            updated_at: String::new(),
            project_id: Some(None),
        };
        assert_eq!(serde_json::to_value(&s).unwrap()["projectId"], Value::Null);
    }

    #[test]
    fn indexed_event_reads_event_index_in_camel_case() {
        let e: IndexedEvent =
            serde_json::from_value(json!({ "eventIndex": 4, "event": { "type": "x" } })).unwrap();
        assert_eq!(e.event_index, 4);
    }
}
