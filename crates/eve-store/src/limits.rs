//! Every bound the chat store enforces, in one place (documented in `docs/chat-store.md`).

use eve_api::variables::Bounded;

/// A user message, counted in Unicode scalar values (seed `MAX_CHAT_MESSAGE_CHARS`). The UI
/// counts UTF-16 units, which is never fewer, so whatever the UI accepts the server accepts.
pub const MAX_MESSAGE_CHARS: usize = 8000;

/// A chat title set by rename, after whitespace is collapsed.
pub const MAX_TITLE_CHARS: usize = 200;

/// A title derived from the first message (seed `createFallbackTitle`), ellipsis included.
pub const FALLBACK_TITLE_CHARS: usize = 60;

/// Sidebar page size (seed `CHAT_HISTORY_PAGE_SIZE`) and the cap on `?limit=`.
pub const DEFAULT_PAGE_SIZE: usize = 20;
pub const MAX_PAGE_SIZE: usize = 100;
/// The most chats one principal may pin (they are listed on one page).
pub const MAX_PINNED_CHATS: usize = 50;

/// Event slots per chat: indices are `0 ..< MAX_EVENTS_PER_CHAT`, so no chat holds more rows.
/// Opening a chat reads one window, not the log, so the cap is about storage (the byte quota
/// binds first for most logs), not about how long a chat takes to open.
pub const MAX_EVENTS_PER_CHAT: u64 = 100_000;

/// Events in one window of `GET /api/chats/:id` (`?limit=`): the default and the cap. The
/// default holds a whole chat of ordinary length, so most chats open in one answer.
pub const DEFAULT_EVENT_PAGE_SIZE: usize = 1000;
pub const MAX_EVENT_PAGE_SIZE: usize = 5000;

/// A window stops growing once its events hold this many bytes (it always has at least one):
/// tool outputs of up to [`MAX_EVENT_BYTES`] each would otherwise make a window of a thousand
/// events hundreds of MiB.
pub const EVENT_WINDOW_BYTES: usize = 2 * 1024 * 1024;

/// One event, serialized.
pub const MAX_EVENT_BYTES: usize = 256 * 1024;

/// An event's `type` string.
pub const MAX_EVENT_TYPE_CHARS: usize = 128;

/// The stored eve session (`ClientSessionState`), serialized; and its `sessionId`.
pub const MAX_SESSION_BYTES: usize = 16 * 1024;
pub const MAX_SESSION_ID_CHARS: usize = 256;

/// Request bodies: snapshot / batch / skip carry many events; everything else is small.
pub const MAX_EVENTS_BODY_BYTES: usize = 32 * 1024 * 1024;
pub const MAX_EVENT_BODY_BYTES: usize = MAX_EVENT_BYTES + 1024;
pub const MAX_SMALL_BODY_BYTES: usize = 64 * 1024;

/// Search: the `q` parameter, and how much of a chat's text is searchable.
pub const MAX_QUERY_CHARS: usize = 200;
pub const MAX_SEARCH_TEXT_BYTES: usize = 64 * 1024;

/// A fixed-window rate-limit policy: at most `limit` actions per `window_secs` per principal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RatePolicy {
    pub prefix: &'static str,
    pub limit: u64,
    pub window_secs: u64,
}

/// The largest limit a rate variable takes: past it a window is no limit at all.
pub const MAX_RATE_LIMIT: u64 = 1_000_000_000;

impl RatePolicy {
    /// This policy with its limit from the variable `name` (raw value `raw`): its default is
    /// this policy's limit, a value out of 1..=[`MAX_RATE_LIMIT`] is clamped and logged.
    pub fn from_variable(self, name: &'static str, raw: Option<&str>) -> RatePolicy {
        let bounded = Bounded {
            name,
            default: self.limit,
            min: 1,
            max: MAX_RATE_LIMIT,
        };
        RatePolicy {
            limit: bounded.read(raw),
            ..self
        }
    }
}

/// Creating chats (seed `chat:create`, 25 per hour).
pub const CHAT_CREATE: RatePolicy = RatePolicy {
    prefix: "chat:create",
    limit: 25,
    window_secs: 3600,
};

/// The `chat:create` policy with the limit from the `chat_create_per_hour` variable: a positive
/// integer, else the seed's 25.
pub fn chat_create_policy(per_hour: Option<&str>) -> RatePolicy {
    CHAT_CREATE.from_variable("chat_create_per_hour", per_hour)
}

/// Sending messages to the agent (seed `chat:send`, 25 per hour; enforced by `eve-proxy`).
pub const CHAT_SEND: RatePolicy = RatePolicy {
    prefix: "chat:send",
    limit: 25,
    window_secs: 3600,
};

/// Session controls that write but start no model work — `clear`, `compact` and a create
/// without a message (`chat:control`, 120 per hour; enforced by `eve-proxy`, variable
/// `chat_control_per_hour`). Cancel and reset are never counted: they always work.
pub const CHAT_CONTROL: RatePolicy = RatePolicy {
    prefix: "chat:control",
    limit: 120,
    window_secs: 3600,
};

/// Byte caps on stored data (the events' JSON): one chat's log, and everything of one
/// principal (every chat's log, the agent's session events and tool outputs). Spin variables
/// `chat_max_bytes` and `principal_max_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StorageQuota {
    pub chat_bytes: u64,
    pub principal_bytes: u64,
}

/// 64 MiB per chat (thousands of long turns), 1 GiB per principal.
pub const DEFAULT_CHAT_MAX_BYTES: u64 = 64 * 1024 * 1024;
pub const DEFAULT_PRINCIPAL_MAX_BYTES: u64 = 1024 * 1024 * 1024;

impl Default for StorageQuota {
    fn default() -> Self {
        Self {
            chat_bytes: DEFAULT_CHAT_MAX_BYTES,
            principal_bytes: DEFAULT_PRINCIPAL_MAX_BYTES,
        }
    }
}

/// The caps from the two variables: positive integers (bytes), else the defaults.
pub fn storage_quota(chat: Option<&str>, principal: Option<&str>) -> StorageQuota {
    // SQLite integers are i64: a cap past that could never be compared in SQL.
    let bytes = |name, default| Bounded {
        name,
        default,
        min: 1,
        max: i64::MAX as u64,
    };
    StorageQuota {
        chat_bytes: bytes("chat_max_bytes", DEFAULT_CHAT_MAX_BYTES).read(chat),
        principal_bytes: bytes("principal_max_bytes", DEFAULT_PRINCIPAL_MAX_BYTES).read(principal),
    }
}

/// Whether a principal holding `used` bytes may start new work that stores more (the agent's
/// turns): not once it is at or past its cap. Writes of the chat log check the bytes they add
/// inside their statement instead (`persistence::UPSERT_EVENTS`).
pub fn principal_has_room(used: u64, quota: &StorageQuota) -> bool {
    used < quota.principal_bytes
}

/// Event writes (appends, batches, snapshots, skips) per principal: a fixed window of one
/// minute, limit from `chat_event_writes_per_minute`. A streaming turn writes a batch every
/// ~120 ms at most, so the default leaves several tabs room.
pub const CHAT_EVENT_WRITE: RatePolicy = RatePolicy {
    prefix: "chat:write",
    limit: 1200,
    window_secs: 60,
};

/// The `chat:write` policy with the limit from its variable (a positive integer).
pub fn event_write_policy(per_minute: Option<&str>) -> RatePolicy {
    CHAT_EVENT_WRITE.from_variable("chat_event_writes_per_minute", per_minute)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chat_create_limit_comes_from_the_variable_clamped_or_defaults_to_25() {
        assert_eq!(chat_create_policy(None).limit, 25);
        assert_eq!(chat_create_policy(Some("")).limit, 25);
        // Out of range: the nearest bound (logged), never the default.
        assert_eq!(chat_create_policy(Some("0")).limit, 1);
        assert_eq!(
            chat_create_policy(Some("99999999999")).limit,
            MAX_RATE_LIMIT
        );
        assert_eq!(chat_create_policy(Some("-4")).limit, 25);
        assert_eq!(chat_create_policy(Some(" 1000 ")).limit, 1000);
        assert_eq!(chat_create_policy(Some("1000")).prefix, "chat:create");
    }

    #[test]
    fn storage_quota_and_write_rate_come_from_variables_or_defaults() {
        assert_eq!(storage_quota(None, None), StorageQuota::default());
        let q = storage_quota(Some(" 4096 "), Some("x"));
        assert_eq!(q.chat_bytes, 4096);
        assert_eq!(q.principal_bytes, DEFAULT_PRINCIPAL_MAX_BYTES);
        assert_eq!(
            storage_quota(Some("many"), Some("-1")),
            StorageQuota::default()
        );
        assert_eq!(storage_quota(Some("0"), None).chat_bytes, 1);
        assert_eq!(event_write_policy(None).limit, 1200);
        assert_eq!(event_write_policy(Some("5")).limit, 5);
        assert_eq!(event_write_policy(Some("5")).prefix, "chat:write");
    }

    #[test]
    fn a_principal_has_room_only_below_its_cap() {
        let q = storage_quota(None, Some("5000"));
        assert!(principal_has_room(0, &q));
        assert!(principal_has_room(4999, &q));
        assert!(!principal_has_room(5000, &q));
        assert!(!principal_has_room(u64::MAX, &q));
    }
}
