//! What happens to a turn whose runner died (the host was killed mid-turn): the next reader,
//! message or interrupt takes over the expired lease (fenced: one taker wins) and either
//! **resumes** the turn or **settles** it.
//!
//! A turn is resumed only when its provider is deterministic (the demo model): it is run again
//! from its start — the same transcript before the turn, the same trigger (user message,
//! answer, granted authorization), the same client context — and every event the replay
//! produces is checked against the persisted one and skipped ([`same_event`]); tool calls whose
//! results are persisted are not run again (their results are reused); once the replay has
//! caught up, new events are appended after the persisted ones. A replay that differs from the
//! log settles the turn with `session.failed` (`replay_diverged`) instead of writing an
//! inconsistent log. A turn the user asked to stop is never resumed: it settles as stopped.
//! Turns of a non-deterministic provider (OpenAI-compatible, Anthropic) settle with
//! `session.failed` (`runner_lost`).
//!
//! The replay itself lives in [`crate::turn::resume_turn`]; this module holds the decisions.

use eve_api::eve::{AuthorizationOutcome, Event};

use crate::transcript;
use crate::turn::{self, ASK_USER_TOOL};

/// `session.failed` code of a turn whose runner died and that could not be resumed.
pub const RUNNER_LOST: &str = "runner_lost";
/// Its message.
pub const RUNNER_LOST_MESSAGE: &str = "the agent stopped before finishing this turn";
/// `session.failed` code of a resumed turn whose replay differed from the persisted events.
pub const REPLAY_DIVERGED: &str = "replay_diverged";
/// Its message.
pub const REPLAY_DIVERGED_MESSAGE: &str =
    "the agent restarted and could not resume this turn: its replay differs from the events already sent";

/// Where the current run's own events begin: the index just after the event that started it
/// (a `user.message`, the `tool.call.result` answering an `ask_user` question, or a granted
/// `authorization.completed`). That trigger is the first event after the last settling event
/// that is not a synthetic result (a new message first closes what was left open, with
/// synthetic results). `None` when the log does not look like a run in progress.
pub fn run_start(log: &[Event]) -> Option<usize> {
    let after_settled = log
        .iter()
        .rposition(Event::is_settling)
        .map_or(0, |i| i + 1);
    let trigger = after_settled
        + log[after_settled..].iter().position(|e| {
            !matches!(
                e,
                Event::ToolResult {
                    synthetic: true,
                    ..
                }
            )
        })?;
    match &log[trigger] {
        Event::UserMessage { .. }
        | Event::AuthorizationCompleted {
            outcome: AuthorizationOutcome::Granted,
            ..
        } => Some(trigger + 1),
        Event::ToolResult {
            tool_name,
            synthetic: false,
            ..
        } if tool_name == ASK_USER_TOOL => Some(trigger + 1),
        _ => None,
    }
}

/// What a taker of an expired lease does.
#[derive(Debug, Clone, PartialEq)]
pub enum Takeover {
    /// The log is settled after all (the runner died after its last event): release the lease.
    Nothing,
    /// Append these events (they settle the turn), then release the lease.
    Settle(Vec<Event>),
    /// Re-run the turn whose own events start at `start` (see [`run_start`]).
    Resume { start: usize },
}

/// Decides what to do with an orphaned turn: `log` is the whole session log, `stop_requested`
/// whether the user asked the turn to stop before its runner died, `deterministic` whether the
/// provider replays a turn exactly (only the demo model does) and the log was read whole.
pub fn plan(log: &[Event], stop_requested: bool, deterministic: bool) -> Takeover {
    if transcript::is_settled(log) {
        return Takeover::Nothing;
    }
    if stop_requested {
        return Takeover::Settle(turn::interrupted_events(log));
    }
    match run_start(log) {
        Some(start) if deterministic => Takeover::Resume { start },
        _ => Takeover::Settle(turn::failed_events(log, RUNNER_LOST_MESSAGE, RUNNER_LOST)),
    }
}

/// Whether a replayed event reproduces the persisted one. Everything is compared exactly —
/// text, reasoning, tool call ids, names, inputs, results, settling events — except the token
/// counts of `usage`: the system prompt carries the user's memory document, which the turn's
/// own tools (`remember`, `forget`) may have changed before the runner died, so a replayed
/// model call may count different input tokens. The persisted counts stand.
pub fn same_event(persisted: &Event, replayed: &Event) -> bool {
    match (persisted, replayed) {
        (Event::Usage { .. }, Event::Usage { .. }) => true,
        _ => persisted == replayed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::DemoModel;
    use crate::turn::run_turn;
    use crate::turn::testing::Host;
    use serde_json::json;

    fn demo() -> DemoModel<fn(u64)> {
        DemoModel {
            pacing_ms: 0,
            sleep: |_| {},
        }
    }

    fn user(text: &str) -> Event {
        Event::UserMessage { text: text.into() }
    }

    /// The whole log of an uninterrupted first turn.
    fn full_turn(prompt: &str) -> Vec<Event> {
        let mut h = Host::default();
        let mut log = vec![user(prompt)];
        run_turn(&mut h, &mut demo(), log.clone(), None);
        log.extend(h.events);
        log
    }

    #[test]
    fn the_run_of_a_first_turn_starts_after_its_user_message() {
        let log = full_turn("weather in Paris");
        assert_eq!(run_start(&log[..5]), Some(1));
        assert_eq!(run_start(&log[..1]), Some(1));
        assert_eq!(run_start(&[]), None);
    }

    #[test]
    fn a_later_turn_starts_after_its_own_message_even_after_closing_results() {
        let mut log = full_turn("ask me to choose");
        // A new message instead of the answer: the question is closed first.
        log.extend(turn::unanswered_events(&log));
        let trigger = log.len();
        log.push(user("hello"));
        log.push(Event::ReasoningDelta { delta: "A ".into() });
        assert_eq!(run_start(&log), Some(trigger + 1));
    }

    #[test]
    fn an_answered_question_or_a_granted_authorization_starts_a_run() {
        let mut log = full_turn("ask me to choose");
        let (_, call) = turn::pending_input(&log).unwrap();
        log.push(turn::answer_event(&call, "Lima"));
        assert_eq!(run_start(&log), Some(log.len()));

        let mut log = full_turn("search Notion for the roadmap");
        log.push(turn::granted_event(&log).unwrap());
        assert_eq!(run_start(&log), Some(log.len()));
    }

    #[test]
    fn a_half_written_decline_is_not_a_run_to_resume() {
        let mut log = full_turn("search Notion for the roadmap");
        let declined = turn::declined_events(&log);
        log.push(declined[0].clone());
        assert_eq!(run_start(&log), None);
        assert!(matches!(
            plan(&log, false, true),
            Takeover::Settle(events) if matches!(events.last(), Some(Event::SessionFailed { code: Some(c), .. }) if c == RUNNER_LOST)
        ));
    }

    #[test]
    fn an_orphaned_demo_turn_is_resumed_a_stopped_one_settles_waiting_and_others_fail() {
        let full = full_turn("weather in Paris");
        let cut = &full[..6];
        assert_eq!(plan(cut, false, true), Takeover::Resume { start: 1 });
        match plan(cut, true, true) {
            Takeover::Settle(events) => assert!(matches!(
                events.last(),
                Some(Event::SessionWaiting { reason: Some(r) }) if r == "interrupted"
            )),
            other => panic!("{other:?}"),
        }
        match plan(cut, false, false) {
            Takeover::Settle(events) => {
                let mut after = cut.to_vec();
                after.extend(events.clone());
                assert!(transcript::open_calls(&after).is_empty());
                assert!(matches!(
                    events.last(),
                    Some(Event::SessionFailed { code: Some(c), .. }) if c == RUNNER_LOST
                ));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(plan(&full, false, true), Takeover::Nothing);
    }

    #[test]
    fn usage_counts_may_differ_on_replay_but_nothing_else_may() {
        let usage = |i| Event::Usage {
            input_tokens: i,
            output_tokens: 3,
        };
        assert!(same_event(&usage(10), &usage(12)));
        assert!(same_event(&user("a"), &user("a")));
        assert!(!same_event(&user("a"), &user("b")));
        assert!(!same_event(&usage(1), &user("a")));
        let ready = |id: &str| Event::ToolCallReady {
            tool_call_id: id.into(),
            tool_name: "get_weather".into(),
            input: json!({"city": "Paris"}),
        };
        assert!(!same_event(&ready("call_a"), &ready("call_b")));
    }

    #[test]
    fn a_resumed_first_turn_plans_from_the_log_of_any_cut() {
        let full = full_turn("weather in Paris and Tokyo");
        for k in 1..full.len() {
            assert_eq!(
                plan(&full[..k], false, true),
                Takeover::Resume { start: 1 },
                "cut at {k}"
            );
        }
        // The uninterrupted run really completes.
        assert!(matches!(full.last(), Some(Event::SessionCompleted { .. })));
    }
}
