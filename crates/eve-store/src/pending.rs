//! Pending-message recovery (seed "Pending 消息恢复"): a chat row carries the user message that
//! was sent but whose turn has not settled yet, with the time it was marked. A turn settles with
//! one of [`SETTLING_EVENT_TYPES`]; once such an event exists at or after the pending message's
//! time, the pending message is stale and reported as `null`.

use crate::time::Millis;

/// Event types that settle a turn (seed `isChatTurnSettledEvent`, in eve's vocabulary: the
/// session waits or ended, or the turn parked on a person with `turn.waiting`; the seed's
/// `authorization.required` stays, as chats of the earlier dialect end with it).
pub const SETTLING_EVENT_TYPES: [&str; 5] = [
    "session.completed",
    "session.failed",
    "session.waiting",
    "turn.waiting",
    "authorization.required",
];

/// Whether an event of this `type` settles the turn.
pub fn is_settling_event_type(event_type: &str) -> bool {
    SETTLING_EVENT_TYPES.contains(&event_type)
}

/// A pending user message as stored on the chat row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingMessage {
    pub message: String,
    pub created_at: Millis,
}

/// The pending message to report, given the time of the latest settling event of the chat's
/// log (`created_at` of the newest row whose type settles a turn): hidden when that event is at
/// or after the pending message.
pub fn visible_pending(
    pending: Option<PendingMessage>,
    latest_settling_event_at: Option<Millis>,
) -> Option<PendingMessage> {
    let pending = pending?;
    match latest_settling_event_at {
        Some(at) if at >= pending.created_at => None,
        _ => Some(pending),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending_at(at: Millis) -> Option<PendingMessage> {
        Some(PendingMessage {
            message: "hi".into(),
            created_at: at,
        })
    }

    #[test]
    fn settling_types_are_the_seeds_in_eves_vocabulary() {
        for t in [
            "session.completed",
            "session.failed",
            "session.waiting",
            "turn.waiting",
            "authorization.required",
        ] {
            assert!(is_settling_event_type(t));
        }
        for t in [
            "authorization.completed",
            "text.delta",
            "session.started",
            "SESSION.COMPLETED",
            "",
        ] {
            assert!(!is_settling_event_type(t));
        }
    }

    #[test]
    fn settling_types_agree_with_the_eve_protocol_definition() {
        for t in SETTLING_EVENT_TYPES
            .iter()
            .filter(|t| **t != "authorization.required")
        {
            assert!(eve_api::eve::is_settling_type(t), "{t}");
        }
        for t in [
            "message.received",
            "message.appended",
            "authorization.completed",
            "turn.completed",
        ] {
            assert_eq!(
                is_settling_event_type(t),
                eve_api::eve::is_settling_type(t),
                "{t}"
            );
        }
    }

    #[test]
    fn pending_without_any_settling_event_is_visible() {
        assert_eq!(visible_pending(pending_at(100), None), pending_at(100));
    }

    #[test]
    fn pending_older_than_a_settling_event_is_stale() {
        assert_eq!(visible_pending(pending_at(100), Some(101)), None);
    }

    #[test]
    fn settling_event_at_the_same_millisecond_makes_pending_stale() {
        assert_eq!(visible_pending(pending_at(100), Some(100)), None);
    }

    #[test]
    fn settling_event_of_an_earlier_turn_keeps_pending_visible() {
        assert_eq!(visible_pending(pending_at(100), Some(99)), pending_at(100));
    }

    #[test]
    fn no_pending_stays_none() {
        assert_eq!(visible_pending(None, Some(5)), None);
    }
}
