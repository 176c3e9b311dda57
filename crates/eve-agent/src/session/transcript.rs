//! The event log read back, as eve's durability rules say: the model's history is the accepted
//! user input and the **completed** work — `message.received`, `message.completed` (the
//! authoritative text of a block; deltas of a step that never completed are discarded),
//! `actions.requested` with their `action.result`s. History starts after the last
//! `context.cleared`. Also: where the current turn stands (its coordinates, its open tool
//! calls, what it waits for), which a resumed runner and the routes read.

use std::collections::HashSet;

use eve_api::eve::{
    ActionRequest, ActionsRequested, Event, InputRequest, ReceivedPart, StepRef, TokenUsage,
    TurnRef,
};
use serde_json::Value;

use crate::providers::files::{FileContent, ModelFile};
use crate::providers::model::{ModelMessage, ToolCall};

/// What a cancelled call is answered with, in the log and in the history.
pub const CANCELLED_BY_USER: &str = "cancelled by the user";

/// The model's history: user messages, assistant text with its tool calls, tool results.
/// Calls of a turn that ended without their result are answered as cancelled; calls of the
/// open turn without a result are left out. So the history is always consistent.
pub fn messages(events: &[Event]) -> Vec<ModelMessage> {
    let events = since_last_clear(events);
    let mut history = History {
        out: Vec::new(),
        open: None,
        answered: answered_calls(events),
        ended_turns: ended_turns(events),
    };
    for e in events {
        history.add(e);
    }
    let mut out = history.out;
    keep_answered_pairs(&mut out);
    cap_tool_results(&mut out, MAX_TOOL_RESULTS_CHARS);
    out
}

/// The events after the last `context.cleared` (all of them without one).
fn since_last_clear(events: &[Event]) -> &[Event] {
    let start = events
        .iter()
        .rposition(|e| matches!(e, Event::ContextCleared(_)))
        .map_or(0, |i| i + 1);
    &events[start..]
}

/// The calls that have a result.
fn answered_calls(events: &[Event]) -> HashSet<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ActionResult(r) => Some(r.result.call_id.as_str()),
            _ => None,
        })
        .collect()
}

/// Turns that ended: their unanswered calls stay in the history, answered as cancelled.
fn ended_turns(events: &[Event]) -> HashSet<u64> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TurnCancelled(t) | Event::TurnCompleted(t) => Some(t.sequence),
            Event::TurnFailed(f) => Some(f.at.sequence),
            _ => None,
        })
        .collect()
}

/// The history as it is read, event by event.
struct History<'e> {
    out: Vec<ModelMessage>,
    /// The step whose assistant message is the last one of `out`, if it may still grow.
    open: Option<(u64, u64)>,
    answered: HashSet<&'e str>,
    ended_turns: HashSet<u64>,
}

impl History<'_> {
    fn add(&mut self, e: &Event) {
        match e {
            Event::MessageReceived(m) => {
                self.out.push(ModelMessage::User(m.message.clone()));
                self.out.extend(m.parts.iter().filter_map(file_message));
                self.open = None;
            }
            Event::MessageCompleted(m) => {
                if let ModelMessage::Assistant { text, .. } = self.assistant(&m.at) {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&m.message);
                }
            }
            Event::ActionsRequested(a) => self.requested(a),
            Event::ActionResult(r) => {
                self.out.push(ModelMessage::ToolResult {
                    tool_call_id: r.result.call_id.clone(),
                    tool_name: r.result.model_tool_name().to_string(),
                    content: model_text(r),
                    is_error: r.result.is_error.unwrap_or(false) || r.status != "completed",
                });
                self.open = None;
            }
            Event::TurnCancelled(_) | Event::TurnFailed(_) | Event::TurnCompleted(_) => {
                self.turn_ended()
            }
            _ => {}
        }
    }

    /// The assistant message of step `at` (a new one when the last is another step's).
    fn assistant(&mut self, at: &StepRef) -> &mut ModelMessage {
        let key = (at.sequence, at.step_index);
        if self.open != Some(key) {
            self.out.push(ModelMessage::Assistant {
                text: String::new(),
                tool_calls: Vec::new(),
            });
            self.open = Some(key);
        }
        self.out.last_mut().expect("just pushed or open")
    }

    /// The calls of `actions.requested` that stay in the history: answered ones, and all of
    /// a turn that ended.
    fn requested(&mut self, a: &ActionsRequested) {
        let ended = self.ended_turns.contains(&a.at.sequence);
        let calls: Vec<ToolCall> = a
            .actions
            .iter()
            .filter(|c| ended || self.answered.contains(c.call_id.as_str()))
            .map(tool_call)
            .collect();
        if calls.is_empty() {
            return;
        }
        if let ModelMessage::Assistant { tool_calls, .. } = self.assistant(&a.at) {
            tool_calls.extend(calls);
        }
    }

    /// A turn that ended with calls unanswered (cancelled, or failed) answers them as
    /// cancelled in the history, so the model sees the work started and stopped (seed 003's
    /// synthetic results; eve's rule for cancelled calls).
    fn turn_ended(&mut self) {
        let asked: Vec<(String, String)> = self
            .out
            .iter()
            .rev()
            .find_map(|m| match m {
                ModelMessage::Assistant { tool_calls, .. } if !tool_calls.is_empty() => Some(
                    tool_calls
                        .iter()
                        .map(|c| (c.id.clone(), c.name.clone()))
                        .collect(),
                ),
                _ => None,
            })
            .unwrap_or_default();
        for (id, name) in asked {
            let has_result = self.out.iter().any(|m| {
                matches!(m, ModelMessage::ToolResult { tool_call_id, .. } if *tool_call_id == id)
            });
            if !has_result {
                self.out.push(ModelMessage::ToolResult {
                    tool_call_id: id,
                    tool_name: name,
                    content: serde_json::json!({ "error": CANCELLED_BY_USER }).to_string(),
                    is_error: true,
                });
            }
        }
        self.open = None;
    }
}

/// Tool results must directly follow the assistant message that made the calls: drops empty
/// assistant messages and results of calls no message before them made.
fn keep_answered_pairs(out: &mut Vec<ModelMessage>) {
    let mut known: HashSet<String> = Default::default();
    out.retain(|m| match m {
        ModelMessage::Assistant { text, tool_calls } => {
            known.extend(tool_calls.iter().map(|c| c.id.clone()));
            !text.is_empty() || !tool_calls.is_empty()
        }
        ModelMessage::ToolResult { tool_call_id, .. } => known.contains(tool_call_id),
        ModelMessage::User(_) | ModelMessage::File(_) => true,
    });
}

/// The most characters all tool results of one model response may hand back to the model
/// (seed 003: a few large results at once must not flood the context window).
pub const MAX_TOOL_RESULTS_CHARS: usize = 200_000;

/// What replaces the part of a tool result over the response's budget.
pub const TOOL_RESULTS_CUT: &str =
    "\n[cut: this response's tool results exceed the 200000-character limit]";

/// Cuts the tool results answering each assistant message to `max` characters in total (in
/// call order; a result past the budget keeps only the note).
pub fn cap_tool_results(messages: &mut [ModelMessage], max: usize) {
    let mut left = max;
    for m in messages.iter_mut() {
        match m {
            ModelMessage::ToolResult { content, .. } => {
                let n = content.chars().count();
                if n <= left {
                    left -= n;
                } else {
                    let keep: String = content.chars().take(left).collect();
                    *content = keep + TOOL_RESULTS_CUT;
                    left = 0;
                }
            }
            _ => left = max,
        }
    }
}

/// Whether the open (latest) turn already said it compacted the history.
pub fn compacted_in_turn(events: &[Event]) -> bool {
    events
        .iter()
        .rev()
        .take_while(|e| !matches!(e, Event::TurnStarted(_)))
        .any(|e| matches!(e, Event::CompactionCompleted(_)))
}

/// The characters a message costs in the model's context (its text; a rough measure that
/// needs no tokenizer).
fn cost(m: &ModelMessage) -> usize {
    match m {
        ModelMessage::User(t) => t.len(),
        ModelMessage::Assistant { text, tool_calls } => {
            text.len()
                + tool_calls
                    .iter()
                    .map(|c| c.name.len() + c.input.to_string().len())
                    .sum::<usize>()
        }
        ModelMessage::ToolResult { content, .. } => content.len(),
        ModelMessage::File(f) => f.cost(),
    }
}

/// A file part of a received message as the model's history holds it: its stored bytes are
/// read just before each model call; a linked file gets a note.
fn file_message(p: &ReceivedPart) -> Option<ModelMessage> {
    let ReceivedPart::File {
        filename,
        media_type,
        attachment_id,
        project_file_id,
        ..
    } = p
    else {
        return None;
    };
    let content = match attachment_id.as_ref().or(project_file_id.as_ref()) {
        Some(id) => FileContent::Stored(id.clone()),
        None => FileContent::Note(crate::providers::files::NOT_FETCHED.into()),
    };
    Some(ModelMessage::File(ModelFile {
        filename: filename.clone(),
        media_type: media_type.clone(),
        content,
    }))
}

/// The history trimmed to fit `max_chars`: whole exchanges (a user message and everything up to
/// the next one) are dropped oldest first, the latest always kept, so the model sees a
/// consistent, recent history instead of the provider refusing an over-long one.
pub fn fit_context(messages: Vec<ModelMessage>, max_chars: usize) -> (Vec<ModelMessage>, bool) {
    let total: usize = messages.iter().map(cost).sum();
    if total <= max_chars {
        return (messages, false);
    }
    let starts: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter_map(|(i, m)| matches!(m, ModelMessage::User(_)).then_some(i))
        .collect();
    let mut dropped = 0;
    let mut from = 0;
    for &s in starts.iter().skip(1) {
        if total - dropped <= max_chars {
            break;
        }
        dropped += messages[from..s].iter().map(cost).sum::<usize>();
        from = s;
    }
    (messages.into_iter().skip(from).collect(), from > 0)
}

pub fn tool_call(a: &ActionRequest) -> ToolCall {
    ToolCall {
        id: a.call_id.clone(),
        name: a.model_tool_name().to_string(),
        input: a.input.clone(),
    }
}

/// What the model reads of a result: a call refused at its approval is eve's denial text
/// alone (as the AI SDK sends an `execution-denied` output); any other, its output.
fn model_text(r: &eve_api::eve::ActionResult) -> String {
    match (&r.error, r.status.as_str()) {
        (Some(e), "rejected") => e.message.clone(),
        _ => output_text(&r.result.output),
    }
}

/// A tool output as the text a model reads: strings as they are, anything else as JSON.
pub fn output_text(output: &Value) -> String {
    match output {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether the log ends settled (or is empty): nothing runs until the user acts.
pub fn is_settled(events: &[Event]) -> bool {
    events.last().is_none_or(Event::is_settling)
}

/// Whether the session has ended for good (`session.failed`, `session.completed`).
pub fn is_terminal(events: &[Event]) -> bool {
    events
        .iter()
        .rev()
        .find(|e| !matches!(e, Event::SessionWaiting(_)))
        .is_some_and(|e| matches!(e, Event::SessionFailed(_) | Event::SessionCompleted(_)))
}

/// The model the session's latest step ran on (`step.started.modelId`): a message that names
/// none keeps it.
pub fn last_model_id(events: &[Event]) -> Option<&str> {
    events.iter().rev().find_map(|e| match e {
        Event::StepStarted(s) => Some(s.model_id.as_str()),
        _ => None,
    })
}

/// The next turn's `sequence`: one past the last `turn.started`. A clear or compaction is
/// numbered as the next turn without using it up (the message after a clear at `turn_5` is
/// `turn_5` too, as in the reference).
pub fn turns_used(events: &[Event]) -> u64 {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TurnStarted(t) => Some(t.sequence + 1),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// The session's token totals (every `step.completed`).
pub fn usage(events: &[Event]) -> TokenUsage {
    let mut u = TokenUsage::default();
    for e in events {
        if let Event::StepCompleted(s) = e {
            if let Some(step) = &s.usage {
                u.add(step);
            }
        }
    }
    u
}

/// Where the open turn stands.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenTurn {
    /// Index in the log of its `turn.started`.
    pub start: usize,
    pub turn: TurnRef,
    /// The step to run next, and whether it already started (and its model call finished:
    /// `actions.requested` recorded) without completing.
    pub step: u64,
    pub step_state: StepState,
    /// The delivery ids of the messages of this turn.
    pub delivery_ids: Vec<String>,
    /// What it waits for, when parked (`turn.waiting`).
    pub waiting: Option<Waiting>,
}

/// The state of the step an open turn is in.
#[derive(Debug, Clone, PartialEq)]
pub enum StepState {
    /// The next step has not started: run a model call at `step`.
    Fresh,
    /// `step` started but its model call never finished: run it again (same `stepIndex`).
    Interrupted,
    /// `step`'s model call finished with these calls; some may lack results.
    Calls(Vec<ActionRequest>),
    /// The last step answered without calling a tool, so the turn's end is all that is left
    /// to write (its runner died between `step.completed` and `turn.completed`): another model
    /// call would answer twice.
    Answered,
}

/// What a parked turn waits for.
#[derive(Debug, Clone, PartialEq)]
pub enum Waiting {
    /// A question or approvals (`input.requested`): `request` is the first still open, `open`
    /// all that are (approvals of one step are asked together and settled one by one), `batch`
    /// every request of the event.
    Input {
        request: Box<InputRequest>,
        open: Vec<InputRequest>,
        batch: Vec<InputRequest>,
        at: StepRef,
    },
    /// A sign-in (`authorization.required`) that tool call `call_id` needs.
    Authorization {
        attempt_id: String,
        name: String,
        call_id: Option<String>,
        at: StepRef,
    },
}

/// The turn in progress (started, not ended), if any.
pub fn open_turn(events: &[Event]) -> Option<OpenTurn> {
    let start = events
        .iter()
        .rposition(|e| matches!(e, Event::TurnStarted(_)))?;
    let Event::TurnStarted(turn) = &events[start] else {
        unreachable!()
    };
    let own = &events[start..];
    if own.iter().any(|e| {
        matches!(
            e,
            Event::TurnCompleted(_) | Event::TurnFailed(_) | Event::TurnCancelled(_)
        )
    }) {
        return None;
    }
    let mut step = 0;
    let mut step_state = StepState::Fresh;
    let mut waiting = None;
    for e in own {
        match e {
            Event::StepStarted(s) => {
                step = s.at.step_index;
                step_state = StepState::Interrupted;
            }
            Event::ActionsRequested(a) if a.at.step_index == step => {
                step_state = StepState::Calls(a.actions.clone());
            }
            Event::StepCompleted(s) => {
                step = s.at.step_index + 1;
                step_state = if s.finish_reason == "tool-calls" {
                    StepState::Fresh
                } else {
                    StepState::Answered
                };
            }
            Event::InputRequested(r) => {
                waiting = r.requests.first().map(|q| Waiting::Input {
                    request: Box::new(q.clone()),
                    open: r.requests.clone(),
                    batch: r.requests.clone(),
                    at: r.at.clone(),
                })
            }
            Event::ApprovalSettled(a) => settle(&mut waiting, &a.request_id),
            Event::AuthorizationRequired(a) => {
                waiting = Some(Waiting::Authorization {
                    attempt_id: a.attempt_id.clone(),
                    name: a.name.clone(),
                    call_id: a.call_id.clone(),
                    at: a.at.clone(),
                })
            }
            Event::InputResolved(_) | Event::AuthorizationCompleted(_) => waiting = None,
            _ => {}
        }
    }
    // Parked only while the log ends in its `turn.waiting`.
    let parked = matches!(events.last(), Some(Event::TurnWaiting(_)));
    Some(OpenTurn {
        start,
        turn: turn.clone(),
        step,
        step_state,
        delivery_ids: Vec::new(),
        waiting: waiting.filter(|_| parked),
    })
}

/// Takes a settled approval out of what the turn waits for.
fn settle(waiting: &mut Option<Waiting>, request_id: &str) {
    if let Some(Waiting::Input { request, open, .. }) = waiting {
        open.retain(|q| q.request_id != request_id);
        match open.first() {
            Some(first) => **request = first.clone(),
            None => *waiting = None,
        }
    }
}

/// The calls of the open turn's completed steps (before `open.step`) that have no result: the
/// calls a step left waiting for approval. eve runs an approved one at the start of the next
/// step, before its model call.
pub fn carried(events: &[Event], open: &OpenTurn) -> Vec<ActionRequest> {
    let own = &events[open.start..];
    let earlier: Vec<ActionRequest> = own
        .iter()
        .filter_map(|e| match e {
            Event::ActionsRequested(a) if a.at.step_index < open.step => Some(a.actions.iter()),
            _ => None,
        })
        .flatten()
        .cloned()
        .collect();
    unanswered(own, &earlier).into_iter().cloned().collect()
}

/// The calls of `calls` that have no `action.result` in `events`.
pub fn unanswered<'a>(events: &[Event], calls: &'a [ActionRequest]) -> Vec<&'a ActionRequest> {
    calls
        .iter()
        .filter(|c| {
            !events
                .iter()
                .any(|e| matches!(e, Event::ActionResult(r) if r.result.call_id == c.call_id))
        })
        .collect()
}

#[cfg(test)]
mod cap_tests {
    use super::*;

    fn result(id: &str, content: &str) -> ModelMessage {
        ModelMessage::ToolResult {
            tool_call_id: id.into(),
            tool_name: "t".into(),
            content: content.into(),
            is_error: false,
        }
    }

    fn calls() -> ModelMessage {
        ModelMessage::Assistant {
            text: String::new(),
            tool_calls: vec![],
        }
    }

    #[test]
    fn one_responses_tool_results_share_the_budget_and_the_next_response_starts_afresh() {
        let mut m = vec![
            calls(),
            result("a", &"x".repeat(6)),
            result("b", &"y".repeat(6)),
            result("c", "z"),
            calls(),
            result("d", &"w".repeat(10)),
        ];
        cap_tool_results(&mut m, 10);
        let contents: Vec<String> = m
            .iter()
            .filter_map(|m| match m {
                ModelMessage::ToolResult { content, .. } => Some(content.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(contents[0], "xxxxxx");
        assert_eq!(contents[1], format!("yyyy{TOOL_RESULTS_CUT}"));
        assert_eq!(contents[2], TOOL_RESULTS_CUT);
        assert_eq!(contents[3], "w".repeat(10));
    }

    #[test]
    fn multibyte_text_is_cut_at_a_character() {
        let mut m = vec![calls(), result("a", "天气很好")];
        cap_tool_results(&mut m, 2);
        assert!(
            matches!(&m[1], ModelMessage::ToolResult { content, .. } if content.starts_with("天气\n[cut"))
        );
    }

    #[test]
    fn an_over_long_history_drops_whole_exchanges_oldest_first_and_keeps_the_latest() {
        let m = vec![
            ModelMessage::User("a".repeat(50)),
            ModelMessage::Assistant {
                text: "b".repeat(50),
                tool_calls: vec![],
            },
            ModelMessage::User("c".repeat(10)),
            ModelMessage::Assistant {
                text: "d".repeat(10),
                tool_calls: vec![],
            },
            ModelMessage::User("e".repeat(500)),
        ];
        let (same, trimmed) = fit_context(m.clone(), 10_000);
        assert_eq!((same.len(), trimmed), (5, false));
        let (fit, trimmed) = fit_context(m.clone(), 550);
        assert!(trimmed);
        assert_eq!(fit.len(), 3, "the first exchange went");
        assert_eq!(fit[0], ModelMessage::User("c".repeat(10)));
        let (last, _) = fit_context(m, 5);
        assert_eq!(
            last,
            vec![ModelMessage::User("e".repeat(500))],
            "the latest stays whatever it costs"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use eve_api::eve::*;
    use serde_json::json;

    fn turn(n: u64) -> TurnRef {
        TurnRef::new(n)
    }

    fn received(n: u64, text: &str) -> Event {
        Event::MessageReceived(MessageReceived {
            message: text.into(),
            parts: vec![],
            at: turn(n),
        })
    }

    #[test]
    fn a_messages_files_follow_it_in_the_history_as_references_to_their_stored_bytes() {
        let file = |id: Option<&str>| ReceivedPart::File {
            filename: Some("a.png".into()),
            media_type: "image/png".into(),
            attachment_id: id.filter(|i| i.starts_with("att_")).map(str::to_string),
            size: Some(3),
            url: None,
            project_file_id: id.filter(|i| i.starts_with("file_")).map(str::to_string),
        };
        let log = vec![
            Event::MessageReceived(MessageReceived {
                message: "look".into(),
                parts: vec![
                    ReceivedPart::Text {
                        text: "look".into(),
                    },
                    file(Some("att_1")),
                    file(None),
                    file(Some("file_p1")),
                ],
                at: turn(0),
            }),
            completed(0, 0, "a dot"),
        ];
        let m = messages(&log);
        assert_eq!(m.len(), 5, "{m:?}");
        assert_eq!(m[0], ModelMessage::User("look".into()));
        assert!(
            matches!(&m[1], ModelMessage::File(f) if f.content == FileContent::Stored("att_1".into()))
        );
        assert!(matches!(&m[2], ModelMessage::File(f)
            if f.content == FileContent::Note(crate::providers::files::NOT_FETCHED.into())));
        // A project file named by the message: its bytes are read like an attachment's.
        assert!(
            matches!(&m[3], ModelMessage::File(f) if f.content == FileContent::Stored("file_p1".into()))
        );
        assert!(matches!(&m[4], ModelMessage::Assistant { .. }));
    }

    fn completed(n: u64, step: u64, text: &str) -> Event {
        Event::MessageCompleted(MessageCompleted {
            finish_reason: "stop".into(),
            message: text.into(),
            at: turn(n).step(step),
        })
    }

    fn appended(n: u64, step: u64, text: &str) -> Event {
        Event::MessageAppended(MessageAppended {
            message_delta: text.into(),
            at: turn(n).step(step),
        })
    }

    fn requested(n: u64, step: u64, id: &str) -> Event {
        Event::ActionsRequested(ActionsRequested {
            actions: vec![ActionRequest {
                call_id: id.into(),
                input: json!({"city": "Paris"}),
                kind: "tool-call".into(),
                tool_name: "get_weather".into(),
                name: None,
            }],
            presentation: None,
            at: turn(n).step(step),
        })
    }

    fn result(n: u64, step: u64, id: &str) -> Event {
        Event::ActionResult(ActionResult {
            error: None,
            presentation: None,
            result: ActionOutput {
                call_id: id.into(),
                is_error: None,
                kind: "tool-result".into(),
                output: json!({"temp": 20}),
                tool_name: "get_weather".into(),
                name: None,
            },
            status: "completed".into(),
            at: turn(n).step(step),
        })
    }

    #[test]
    fn history_keeps_completed_text_and_answered_calls_and_drops_an_interrupted_steps_deltas() {
        let log = vec![
            Event::TurnStarted(turn(0)),
            received(0, "weather?"),
            requested(0, 0, "c1"),
            result(0, 0, "c1"),
            completed(0, 1, "It is 20°C."),
            Event::TurnStarted(turn(1)),
            received(1, "and tomorrow?"),
            appended(1, 0, "half an ans"),
        ];
        let m = messages(&log);
        assert_eq!(m.len(), 5, "{m:?}");
        assert_eq!(m[0], ModelMessage::User("weather?".into()));
        assert!(
            matches!(&m[1], ModelMessage::Assistant { tool_calls, .. } if tool_calls.len() == 1)
        );
        assert!(
            matches!(&m[2], ModelMessage::ToolResult { tool_call_id, .. } if tool_call_id == "c1")
        );
        assert!(matches!(&m[3], ModelMessage::Assistant { text, .. } if text == "It is 20°C."));
        assert_eq!(m[4], ModelMessage::User("and tomorrow?".into()));
    }

    #[test]
    fn a_call_without_a_result_is_not_in_the_history() {
        let log = vec![received(0, "hi"), requested(0, 0, "c1")];
        assert_eq!(messages(&log), vec![ModelMessage::User("hi".into())]);
    }

    #[test]
    fn history_starts_after_the_last_clear() {
        let log = vec![
            received(0, "old"),
            completed(0, 0, "old answer"),
            Event::ContextCleared(ContextCleared {
                sequence: 1,
                session_id: "s".into(),
                turn_id: "turn_1".into(),
            }),
            received(2, "new"),
        ];
        assert_eq!(messages(&log), vec![ModelMessage::User("new".into())]);
        assert_eq!(
            turns_used(&log),
            0,
            "no turn.started: a clear does not use a turn up"
        );
    }

    #[test]
    fn the_open_turn_knows_its_step_and_what_it_waits_for() {
        let mut log = vec![Event::TurnStarted(turn(0)), received(0, "hi")];
        let t = open_turn(&log).unwrap();
        assert_eq!((t.step, t.step_state.clone()), (0, StepState::Fresh));
        log.push(Event::StepStarted(StepStarted {
            model_id: "m".into(),
            at: turn(0).step(0),
        }));
        assert_eq!(open_turn(&log).unwrap().step_state, StepState::Interrupted);
        log.push(requested(0, 0, "c1"));
        assert!(
            matches!(open_turn(&log).unwrap().step_state, StepState::Calls(ref c) if c.len() == 1)
        );
        log.push(result(0, 0, "c1"));
        log.push(Event::StepCompleted(StepCompleted {
            finish_reason: "tool-calls".into(),
            at: turn(0).step(0),
            usage: None,
        }));
        let t = open_turn(&log).unwrap();
        assert_eq!((t.step, t.step_state), (1, StepState::Fresh));
        log.push(Event::TurnCompleted(turn(0)));
        assert_eq!(open_turn(&log), None);
    }

    #[test]
    fn a_turn_whose_last_step_answered_has_only_its_end_left() {
        let mut log = vec![Event::TurnStarted(turn(0)), received(0, "hi")];
        log.push(Event::StepStarted(StepStarted {
            model_id: "m".into(),
            at: turn(0).step(0),
        }));
        log.push(Event::StepCompleted(StepCompleted {
            finish_reason: "stop".into(),
            at: turn(0).step(0),
            usage: None,
        }));
        let t = open_turn(&log).unwrap();
        assert_eq!((t.step, t.step_state), (1, StepState::Answered));
    }
}
