//! The keyset cursors. The sidebar's (seed `encodeChatCursor`): `<updatedAt ISO ms UTC>::<chat
//! id>`. The next page holds the chats strictly after the cursor in `updated_at desc, id desc`
//! order, i.e. `(updated_at, id) < (cursor.updated_at, cursor.id)`, so chats sharing a
//! timestamp are neither skipped nor repeated. A chat's event log pages the same way
//! ([`EventCursor`]): `<eventIndex>::<chat id>`, the first event of the window already read.
//! A cursor that does not decode is an error (a 400), never an empty page.

use crate::ids::is_valid_chat_id;
use crate::time::{format_iso_ms, parse_iso_ms, Millis};

/// A decoded cursor: the last chat of the previous page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatCursor {
    pub updated_at: Millis,
    pub id: String,
}

/// Why a cursor was rejected (shown in the 400 message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedCursor(pub &'static str);

/// Longest cursor accepted (24-character timestamp + `::` + the longest id).
pub const MAX_CURSOR_LEN: usize = 24 + 2 + crate::ids::MAX_CHAT_ID_LEN;

impl ChatCursor {
    /// The cursor that continues after the chat `(updated_at, id)`.
    pub fn after(updated_at: Millis, id: &str) -> Self {
        Self {
            updated_at,
            id: id.to_string(),
        }
    }

    /// `<updatedAt ISO ms>::<id>`.
    pub fn encode(&self) -> String {
        format!("{}::{}", format_iso_ms(self.updated_at), self.id)
    }

    /// Decodes [`ChatCursor::encode`]'s output; anything else is malformed.
    pub fn decode(text: &str) -> Result<Self, MalformedCursor> {
        if text.len() > MAX_CURSOR_LEN {
            return Err(MalformedCursor("cursor is too long"));
        }
        let (at, id) = text
            .split_once("::")
            .ok_or(MalformedCursor("cursor must be <updatedAt>::<id>"))?;
        let updated_at = parse_iso_ms(at).ok_or(MalformedCursor(
            "cursor timestamp must be ISO-8601 with milliseconds, UTC",
        ))?;
        if !is_valid_chat_id(id) {
            return Err(MalformedCursor("cursor id is not a chat id"));
        }
        Ok(Self {
            updated_at,
            id: id.to_string(),
        })
    }
}

/// The event log's cursor: the window already read starts at slot `before`; the next page holds
/// the events strictly before it. It names its chat, so a cursor of one chat used on another is
/// refused rather than read as a position in a log it was not taken from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventCursor {
    pub before: u64,
}

/// Longest event cursor accepted (the longest index + `::` + the longest id).
pub const MAX_EVENT_CURSOR_LEN: usize = 20 + 2 + crate::ids::MAX_CHAT_ID_LEN;

impl EventCursor {
    /// `<before>::<chat id>`.
    pub fn encode(&self, chat_id: &str) -> String {
        format!("{}::{chat_id}", self.before)
    }

    /// Decodes [`EventCursor::encode`]'s output for `chat_id`; anything else is malformed.
    pub fn decode(text: &str, chat_id: &str) -> Result<Self, MalformedCursor> {
        if text.len() > MAX_EVENT_CURSOR_LEN {
            return Err(MalformedCursor("cursor is too long"));
        }
        let (index, id) = text.split_once("::").ok_or(MalformedCursor(
            "cursor must be one that this chat's answer gave",
        ))?;
        let digits =
            !index.is_empty() && index.len() <= 10 && index.bytes().all(|b| b.is_ascii_digit());
        let before = index
            .parse::<u64>()
            .ok()
            .filter(|b| digits && *b <= crate::limits::MAX_EVENTS_PER_CHAT)
            .ok_or(MalformedCursor("cursor position is not an event index"))?;
        if id != chat_id {
            return Err(MalformedCursor("cursor belongs to another chat"));
        }
        Ok(Self { before })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_cursor_round_trips_and_names_its_chat() {
        let c = EventCursor { before: 1234 };
        assert_eq!(c.encode("abc"), "1234::abc");
        assert_eq!(EventCursor::decode("1234::abc", "abc"), Ok(c));
        assert_eq!(
            EventCursor::decode("0::abc", "abc"),
            Ok(EventCursor { before: 0 })
        );
    }

    #[test]
    fn malformed_event_cursors_are_errors_not_empty_pages() {
        for bad in [
            "",
            "::",
            "12",
            "::abc",
            "12::",
            "-1::abc",
            "+1::abc",
            "1e3::abc",
            " 1::abc",
            "1.0::abc",
            "99999999999::abc",
            "100001::abc",
            "12::other",
            "12::abc::abc",
            "2024-05-01T12:34:56.789Z::abc",
        ] {
            assert!(EventCursor::decode(bad, "abc").is_err(), "{bad:?}");
        }
        assert!(EventCursor::decode(&format!("1::{}", "a".repeat(500)), "abc").is_err());
    }

    #[test]
    fn cursor_encodes_as_iso_timestamp_double_colon_id() {
        let c = ChatCursor::after(1_714_566_896_789, "abc_DEF-1");
        assert_eq!(c.encode(), "2024-05-01T12:34:56.789Z::abc_DEF-1");
    }

    #[test]
    fn cursor_round_trips_exactly() {
        let c = ChatCursor::after(1_714_566_896_789, "V1StGXR8_Z5jdHi6B-myT");
        assert_eq!(ChatCursor::decode(&c.encode()), Ok(c));
    }

    #[test]
    fn malformed_cursors_are_errors_not_empty_pages() {
        for bad in [
            "",
            "::",
            "abc",
            "2024-05-01T12:34:56.789Z",
            "2024-05-01T12:34:56.789Z::",
            "::abc",
            "2024-05-01T12:34:56Z::abc",
            "yesterday::abc",
            "2024-05-01T12:34:56.789Z::a b",
            "2024-05-01T12:34:56.789Z::abc::def",
            "2024-05-01T12:34:56.789Z::' OR 1=1 --",
        ] {
            assert!(ChatCursor::decode(bad).is_err(), "{bad:?}");
        }
        assert!(
            ChatCursor::decode(&format!("2024-05-01T12:34:56.789Z::{}", "a".repeat(500))).is_err()
        );
    }
}
