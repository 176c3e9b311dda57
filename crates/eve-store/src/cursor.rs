//! The sidebar's keyset cursor (seed `encodeChatCursor`): `<updatedAt ISO ms UTC>::<chat id>`.
//! The next page holds the chats strictly after the cursor in `updated_at desc, id desc` order,
//! i.e. `(updated_at, id) < (cursor.updated_at, cursor.id)`, so chats sharing a timestamp are
//! neither skipped nor repeated. A cursor that does not decode is an error (a 400), never an
//! empty page.

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

#[cfg(test)]
mod tests {
    use super::*;

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
