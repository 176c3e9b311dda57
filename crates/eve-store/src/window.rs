//! Which events one answer of `GET /api/chats/:id` carries: a window of the log, bounded in
//! events and in bytes, read newest first from just before a slot (the end of the log, or an
//! [`EventCursor`]'s). Plain functions over the rows the store read, tested natively.
//!
//! A window may start inside a turn, a tool call or a branch of the conversation: the answer
//! says where it starts (`firstEventIndex`) and carries the newest branch marker before it, so
//! a client reduces what it holds, loads the pages before it as the reader scrolls up, and
//! reduces again; the events themselves are never reshaped here.

use crate::cursor::EventCursor;

/// The app's local event that opens a branch of a chat (an edit or a regenerate; docs/web.md):
/// the conversation after it depends on it, so a window that starts after it carries it.
pub const BRANCH_EVENT_TYPE: &str = "eve-chat.branch";

/// One stored event as read: its slot and its JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    pub index: u64,
    pub json: String,
}

/// The events one answer carries, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub events: Vec<EventRow>,
    /// Events before the window exist (the rows read went past it).
    pub has_earlier: bool,
}

/// The window from `newest_first` (at most `limit + 1` rows, newest first, as
/// `SELECT_EVENTS_BEFORE` reads them): up to `limit` events, and no more than `max_bytes` of
/// them unless a single event is larger (a window always makes progress).
pub fn window(newest_first: Vec<EventRow>, limit: usize, max_bytes: usize) -> Window {
    let read = newest_first.len();
    let mut bytes = 0usize;
    let mut events: Vec<EventRow> = Vec::with_capacity(limit.min(read));
    for row in newest_first {
        let size = row.json.len();
        if events.len() == limit || (!events.is_empty() && bytes + size > max_bytes) {
            break;
        }
        bytes += size;
        events.push(row);
    }
    let has_earlier = events.len() < read;
    events.reverse();
    Window {
        events,
        has_earlier,
    }
}

/// Where a window starts: its first event's slot; for an empty window, where it was asked to
/// end (`before`, or the log's end), never past the log.
pub fn first_index(window: &Window, before: Option<u64>, event_count: u64) -> u64 {
    window
        .events
        .first()
        .map(|e| e.index)
        .unwrap_or_else(|| before.unwrap_or(event_count).min(event_count))
}

/// The cursor of the page before `window` of chat `chat_id`, when there is one.
pub fn before_cursor(window: &Window, chat_id: &str) -> Option<String> {
    let first = window.events.first()?;
    window.has_earlier.then(|| {
        EventCursor {
            before: first.index,
        }
        .encode(chat_id)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows `hi-1, hi-2, …, lo` (newest first), each `size` bytes.
    fn rows(lo: u64, hi: u64, size: usize) -> Vec<EventRow> {
        (lo..hi)
            .rev()
            .map(|index| EventRow {
                index,
                json: "x".repeat(size),
            })
            .collect()
    }

    fn indices(w: &Window) -> Vec<u64> {
        w.events.iter().map(|e| e.index).collect()
    }

    #[test]
    fn the_latest_events_oldest_first_and_whether_earlier_ones_exist() {
        let w = window(rows(6, 10, 10), 3, 1000);
        assert_eq!((indices(&w), w.has_earlier), (vec![7, 8, 9], true));
        assert_eq!(before_cursor(&w, "c").as_deref(), Some("7::c"));
        assert_eq!(first_index(&w, None, 10), 7);
    }

    #[test]
    fn a_log_that_fits_is_one_window_without_a_cursor() {
        let w = window(rows(0, 3, 10), 3, 1000);
        assert_eq!((indices(&w), w.has_earlier), (vec![0, 1, 2], false));
        assert_eq!(before_cursor(&w, "c"), None);
    }

    #[test]
    fn an_empty_log_or_a_cursor_at_the_first_event_is_an_empty_window_at_its_start() {
        let w = window(Vec::new(), 5, 1000);
        assert_eq!((w.events.len(), w.has_earlier), (0, false));
        assert_eq!(before_cursor(&w, "c"), None);
        assert_eq!(first_index(&w, None, 0), 0);
        assert_eq!(first_index(&w, Some(0), 40), 0);
        assert_eq!(first_index(&w, Some(90), 40), 40);
    }

    #[test]
    fn bytes_bound_a_window_but_one_large_event_still_makes_progress() {
        let w = window(rows(0, 10, 100), 10, 250);
        assert_eq!((indices(&w), w.has_earlier), (vec![8, 9], true));
        let w = window(rows(0, 2, 5000), 10, 250);
        assert_eq!((indices(&w), w.has_earlier), (vec![1], true));
        assert_eq!(before_cursor(&w, "c").as_deref(), Some("1::c"));
    }

    #[test]
    fn pages_walked_by_their_cursors_cover_the_log_once_in_order() {
        let all = rows(0, 23, 10);
        let mut before = 23u64;
        let mut seen = Vec::new();
        loop {
            let page: Vec<EventRow> = all
                .iter()
                .filter(|r| r.index < before)
                .take(5 + 1)
                .cloned()
                .collect();
            let w = window(page, 5, 1000);
            let mut got = indices(&w);
            got.extend(seen);
            seen = got;
            match before_cursor(&w, "c") {
                Some(c) => before = EventCursor::decode(&c, "c").unwrap().before,
                None => break,
            }
        }
        assert_eq!(seen, (0..23).collect::<Vec<_>>());
    }
}
