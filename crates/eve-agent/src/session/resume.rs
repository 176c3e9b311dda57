//! What happens to a turn whose runner died (the host was killed mid-turn): the next reader,
//! message or control takes over the expired lease (fenced: one taker wins) and **continues**
//! the turn from its log, the way eve resumes a durable step — for every provider: a step
//! whose model call never finished runs again under the same `stepIndex` (what was streamed
//! stays; the retried step's events get new ids, and its `message.completed` carries the
//! authoritative text), tool calls whose results are persisted are not run again. A turn that
//! was asked to stop before its runner died is ended cancelled instead.

use eve_api::eve::Event;

use crate::session::transcript;

/// What a taker of an expired lease does with the session's log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takeover {
    /// No turn is open, or it is parked (waiting for a person): nothing to resume.
    Nothing,
    /// The open turn was asked to stop: end it cancelled.
    Cancel,
    /// Run the open turn on from where its log stands.
    Continue,
}

/// Decides what to do with an orphaned log; `cancel_at` is the session's cancel request (the
/// log length when it arrived, `-1` for none).
pub fn plan(log: &[Event], cancel_at: i64) -> Takeover {
    match transcript::open_turn(log) {
        None => Takeover::Nothing,
        Some(open) if cancel_applies(cancel_at, open.start) => Takeover::Cancel,
        Some(_) if matches!(log.last(), Some(Event::TurnWaiting(_))) => Takeover::Nothing,
        Some(_) => Takeover::Continue,
    }
}

/// Whether a cancel request made at log length `cancel_at` applies to the turn that opened at
/// index `turn_start` (a cancel reaches the turn that was open when it arrived, never a later
/// one).
pub fn cancel_applies(cancel_at: i64, turn_start: usize) -> bool {
    cancel_at > turn_start as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use eve_api::eve::{MessageReceived, TurnRef, TurnWaiting};

    fn open() -> Vec<Event> {
        vec![
            Event::TurnStarted(TurnRef::new(0)),
            Event::MessageReceived(MessageReceived {
                message: "hi".into(),
                parts: vec![],
                at: TurnRef::new(0),
            }),
        ]
    }

    #[test]
    fn an_open_turn_is_continued_and_a_cancelled_one_is_ended() {
        assert_eq!(plan(&open(), -1), Takeover::Continue);
        assert_eq!(plan(&open(), 2), Takeover::Cancel);
        assert_eq!(plan(&[], -1), Takeover::Nothing);
    }

    #[test]
    fn a_parked_turn_is_not_resumed_but_can_be_cancelled() {
        let mut log = open();
        log.push(Event::TurnWaiting(TurnWaiting {
            on: "input".into(),
            at: TurnRef::new(0),
            usage: None,
        }));
        assert_eq!(plan(&log, -1), Takeover::Nothing);
        assert_eq!(plan(&log, 3), Takeover::Cancel);
    }

    #[test]
    fn a_cancel_reaches_only_the_turn_open_when_it_arrived() {
        assert!(cancel_applies(5, 3));
        assert!(!cancel_applies(3, 3));
        assert!(!cancel_applies(-1, 0));
    }
}
