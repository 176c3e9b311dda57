//! One turn of the agent: model calls and tool calls until the model is done, with the five
//! interrupt checkpoints of seed 003 —
//!
//! 1. before each model call;
//! 2. while the model streams (every event);
//! 3. after a failed model call (an interrupt that broke the call is a stop, not a failure);
//! 4. before each tool call;
//! 5. while a tool runs (tools pause in small slices and check).
//!
//! A stop closes every open tool call with a synthetic error result ("interrupted by the
//! user"; half-streamed fragments are marked discarded and never reach the model) and settles
//! with `session.waiting`. Every event goes through [`TurnHost::emit`], which persists it
//! before any reader can see it.
//!
//! [`resume_turn`] re-runs a turn whose runner died (see [`crate::resume`]): the events the
//! replay reproduces are checked against the persisted ones and not written again, persisted
//! tool results are reused instead of running their tools again, and the turn goes on from
//! where the log ends.

use std::collections::VecDeque;

use eve_api::eve::{AuthorizationOutcome, Event};
use serde_json::json;

use crate::connections;
use crate::model::{Flow, Model, ModelError, ModelEvent, ModelRequest, ToolCall};
use crate::resume::{self, REPLAY_DIVERGED, REPLAY_DIVERGED_MESSAGE};
use crate::tools::{self, ToolHost, ToolOutcome};
use crate::transcript::{self, INTERRUPTED_BY_USER};

/// Most model calls in one turn.
pub const MAX_MODEL_CALLS: usize = 8;

/// This runner no longer owns the session (its lease was taken over): stop without writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fenced;

/// What a turn needs from its environment.
pub trait TurnHost: ToolHost {
    /// Persists `event` as the session's next event (before any reader sees it).
    fn emit(&mut self, event: &Event) -> Result<(), Fenced>;
    /// A checkpoint: whether the user asked this turn to stop. Also keeps the lease alive.
    fn stop_requested(&mut self) -> bool;
    /// Whether the caller has authorized `connection`.
    fn connection_granted(&mut self, connection: &str) -> bool;
    /// Keeps an oversized tool output aside (the event and the model get a preview).
    fn store_output_aside(&mut self, tool_call_id: &str, output: &str);
    /// Where the user authorizes a connection for this session.
    fn connect_url(&self, authorization_id: &str) -> String;
    /// A resumed turn is replaying persisted events (`true`), or has caught up (`false`): the
    /// host may skip the model's pacing while nothing new is written.
    fn set_replaying(&mut self, _replaying: bool) {}
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnOutcome {
    Completed,
    /// Stopped by the user (`session.waiting`).
    Interrupted,
    Failed(String),
    AwaitingAuthorization,
    /// Asked the user a question (`input.requested`, then `session.waiting`).
    AwaitingInput,
    /// Lost the session to another runner; nothing more was written.
    Fenced,
}

/// The system prompt.
pub fn system_prompt(memory: &str, client_context: Option<&str>) -> String {
    let facts = crate::memory::facts(memory);
    let remembered = if facts.is_empty() {
        "(nothing yet)".to_string()
    } else {
        facts
            .iter()
            .map(|f| format!("- {f}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut s = String::from(
        "You are eve, a helpful assistant in the eve-chat web app. Answer in Markdown. Use the tools when they help: \
         get_weather for weather questions; remember / recall / forget for long-term memory about the user.\n\
         Memory rules: remember only stable facts and preferences the user tells you. Never store passwords, tokens, \
         payment data, keys or one-time codes (the memory tool refuses them).\n\
         Connections (Notion, Linear, Sentry): use a connection's search tool only when it is offered; the user may \
         have to authorize it first, which the app handles.\n\n",
    );
    s.push_str("What you remember about the user:\n");
    s.push_str(&remembered);
    if let Some(ctx) = client_context.filter(|c| !c.trim().is_empty()) {
        s.push_str("\n\nContext from the app for this turn: ");
        s.push_str(ctx.trim());
    }
    s
}

/// Events that close an interrupted turn.
pub fn interrupted_events(log: &[Event]) -> Vec<Event> {
    let mut v = transcript::closing_results(log, INTERRUPTED_BY_USER);
    v.push(Event::SessionWaiting {
        reason: Some("interrupted".into()),
    });
    v
}

/// Events that close a failed turn.
pub fn failed_events(log: &[Event], message: &str, code: &str) -> Vec<Event> {
    let mut v = transcript::closing_results(log, &format!("not run: {message}"));
    v.push(Event::SessionFailed {
        message: message.into(),
        code: Some(code.into()),
    });
    v
}

/// The authorization a settled session waits for: `(authorizationId, connection)`.
pub fn pending_authorization(log: &[Event]) -> Option<(String, String)> {
    match log.last()? {
        Event::AuthorizationRequired {
            authorization_id,
            connection,
            ..
        } => Some((authorization_id.clone(), connection.clone())),
        _ => None,
    }
}

/// Events that end a pending authorization declined: the completion, synthetic results for
/// the calls that waited, `session.waiting`.
pub fn declined_events(log: &[Event]) -> Vec<Event> {
    let Some((authorization_id, connection)) = pending_authorization(log) else {
        return Vec::new();
    };
    let name = connections::by_id(&connection).map_or(connection.as_str(), |c| c.display_name);
    let mut v = vec![Event::AuthorizationCompleted {
        authorization_id,
        connection: connection.clone(),
        outcome: AuthorizationOutcome::Declined,
    }];
    v.extend(transcript::closing_results(
        log,
        &format!("the user declined to connect {name}"),
    ));
    v.push(Event::SessionWaiting {
        reason: Some("declined".into()),
    });
    v
}

/// The tool that asks the user a question.
pub const ASK_USER_TOOL: &str = "ask_user";

/// The `requestId` of the question a call asks.
pub fn input_request_id(tool_call_id: &str) -> String {
    format!("input_{tool_call_id}")
}

/// The question the session waits for: `(requestId, the ask_user call)`.
pub fn pending_input(log: &[Event]) -> Option<(String, ToolCall)> {
    let call = transcript::unanswered_ready_calls(log)
        .into_iter()
        .find(|c| c.name == ASK_USER_TOOL)?;
    let request_id = input_request_id(&call.id);
    let asked = log
        .iter()
        .any(|e| matches!(e, Event::InputRequested { request_id: r, .. } if *r == request_id));
    asked.then_some((request_id, call))
}

/// The result that answers a question (the turn then continues).
pub fn answer_event(call: &ToolCall, value: &str) -> Event {
    Event::ToolResult {
        tool_call_id: call.id.clone(),
        tool_name: call.name.clone(),
        output: json!({ "answer": value }),
        is_error: false,
        synthetic: false,
        discarded: false,
        truncated: false,
    }
}

/// Before a new message starts a turn: synthetic results for any call left open (a question
/// the user did not answer, a call of a dead runner), so the new turn starts consistently.
pub fn unanswered_events(log: &[Event]) -> Vec<Event> {
    transcript::closing_results(log, "not answered: the user sent a new message instead")
}

/// The event that grants a pending authorization (the turn then continues).
pub fn granted_event(log: &[Event]) -> Option<Event> {
    let (authorization_id, connection) = pending_authorization(log)?;
    Some(Event::AuthorizationCompleted {
        authorization_id,
        connection,
        outcome: AuthorizationOutcome::Granted,
    })
}

/// Runs a turn over `log` (the session's events so far, ending with what started this turn:
/// a user message, or a granted authorization).
pub fn run_turn(
    host: &mut dyn TurnHost,
    model: &mut dyn Model,
    log: Vec<Event>,
    client_context: Option<&str>,
) -> TurnOutcome {
    drive(host, model, log, VecDeque::new(), client_context)
}

/// Resumes a turn whose runner died: `log` is the whole session log and `start` the index of
/// the turn's first own event ([`resume::run_start`]). The turn runs again from its start with
/// the same inputs; the events it reproduces are checked against `log[start..]` and not
/// written again, persisted tool results are reused (their tools do not run twice), and new
/// events are emitted once the replay has caught up. A replay that differs from the log
/// settles the turn with `session.failed` (`replay_diverged`).
pub fn resume_turn(
    host: &mut dyn TurnHost,
    model: &mut dyn Model,
    mut log: Vec<Event>,
    start: usize,
    client_context: Option<&str>,
) -> TurnOutcome {
    let replay: VecDeque<Event> = log.split_off(start.min(log.len())).into();
    drive(host, model, log, replay, client_context)
}

fn drive(
    host: &mut dyn TurnHost,
    model: &mut dyn Model,
    log: Vec<Event>,
    replay: VecDeque<Event>,
    client_context: Option<&str>,
) -> TurnOutcome {
    if !replay.is_empty() {
        host.set_replaying(true);
    }
    let mut turn = Turn { host, log, replay };
    match turn.run(model, client_context) {
        Ok(outcome) => outcome,
        Err(Halt::Fenced) => TurnOutcome::Fenced,
        Err(Halt::Diverged) => match turn.failed(REPLAY_DIVERGED_MESSAGE, REPLAY_DIVERGED) {
            Ok(outcome) => outcome,
            Err(_) => TurnOutcome::Fenced,
        },
    }
}

/// Why a turn stopped writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Halt {
    /// Another runner owns the session.
    Fenced,
    /// A resumed turn produced an event that differs from the persisted one.
    Diverged,
}

impl From<Fenced> for Halt {
    fn from(_: Fenced) -> Self {
        Halt::Fenced
    }
}

/// Emits `event`, or — while a resumed turn replays — checks it against the next persisted
/// event and keeps the persisted one instead of writing.
fn push_event(
    host: &mut dyn TurnHost,
    replay: &mut VecDeque<Event>,
    log: &mut Vec<Event>,
    event: Event,
) -> Result<(), Halt> {
    if let Some(persisted) = replay.pop_front() {
        if !resume::same_event(&persisted, &event) {
            replay.push_front(persisted);
            return Err(Halt::Diverged);
        }
        log.push(persisted);
        if replay.is_empty() {
            host.set_replaying(false);
        }
        return Ok(());
    }
    host.emit(&event)?;
    log.push(event);
    Ok(())
}

struct Turn<'h> {
    host: &'h mut dyn TurnHost,
    log: Vec<Event>,
    /// The persisted events of a resumed turn that the replay has not reproduced yet.
    replay: VecDeque<Event>,
}

impl Turn<'_> {
    fn emit(&mut self, event: Event) -> Result<(), Halt> {
        push_event(&mut *self.host, &mut self.replay, &mut self.log, event)
    }

    fn emit_all(&mut self, events: Vec<Event>) -> Result<(), Halt> {
        events.into_iter().try_for_each(|e| self.emit(e))
    }

    /// Leaves the replay (a stop, a failure, a divergence): the log is the persisted one, and
    /// whatever settles the turn is written after it.
    fn abandon_replay(&mut self) {
        if !self.replay.is_empty() {
            self.log.extend(self.replay.drain(..));
            self.host.set_replaying(false);
        }
    }

    /// The persisted result of `call` when the replay has reached it: reused, not run again.
    fn persisted_result(&mut self, call: &ToolCall) -> Option<Event> {
        let is_it = matches!(self.replay.front(), Some(Event::ToolResult { tool_call_id, .. }) if *tool_call_id == call.id);
        if !is_it {
            return None;
        }
        let result = self.replay.pop_front();
        if self.replay.is_empty() {
            self.host.set_replaying(false);
        }
        result
    }

    fn interrupted(&mut self) -> Result<TurnOutcome, Halt> {
        self.abandon_replay();
        let events = interrupted_events(&self.log);
        self.emit_all(events)?;
        Ok(TurnOutcome::Interrupted)
    }

    fn failed(&mut self, message: &str, code: &str) -> Result<TurnOutcome, Halt> {
        self.abandon_replay();
        let events = failed_events(&self.log, message, code);
        self.emit_all(events)?;
        Ok(TurnOutcome::Failed(message.to_string()))
    }

    fn run(
        &mut self,
        model: &mut dyn Model,
        client_context: Option<&str>,
    ) -> Result<TurnOutcome, Halt> {
        let enabled = connections::enabled(client_context);
        let specs = tools::specs(&enabled);
        for _ in 0..MAX_MODEL_CALLS {
            // Complete tool calls without results run first (after a model call, or when a
            // granted authorization resumes the turn).
            for call in transcript::unanswered_ready_calls(&self.log) {
                // Checkpoint 4: before a tool call.
                if self.host.stop_requested() {
                    return self.interrupted();
                }
                if let Some(result) = self.persisted_result(&call) {
                    self.log.push(result);
                    continue;
                }
                if call.name == ASK_USER_TOOL {
                    let prompt = call
                        .input
                        .get("prompt")
                        .and_then(|p| p.as_str())
                        .unwrap_or("")
                        .trim()
                        .to_string();
                    let options: Vec<String> = call
                        .input
                        .get("options")
                        .and_then(|o| o.as_array())
                        .map(|a| {
                            a.iter()
                                .filter_map(|o| o.as_str().map(str::to_string))
                                .take(10)
                                .collect()
                        })
                        .unwrap_or_default();
                    if prompt.is_empty() {
                        self.tool_result(
                            &call,
                            json!({ "error": "ask_user needs a prompt" }),
                            true,
                        )?;
                        continue;
                    }
                    self.emit(Event::InputRequested {
                        request_id: input_request_id(&call.id),
                        prompt,
                        options,
                    })?;
                    self.emit(Event::SessionWaiting {
                        reason: Some("input".into()),
                    })?;
                    return Ok(TurnOutcome::AwaitingInput);
                }
                if let Some(c) = connections::for_tool(&call.name) {
                    if !enabled.iter().any(|e| e.id == c.id) {
                        self.tool_result(&call, json!({ "error": format!("{} is disabled for this turn", c.display_name) }), true)?;
                        continue;
                    }
                    if !self.host.connection_granted(c.id) {
                        let authorization_id = format!("auth_{}", call.id);
                        let connect_url = self.host.connect_url(&authorization_id);
                        self.emit(Event::AuthorizationRequired {
                            authorization_id,
                            connection: c.id.into(),
                            display_name: c.display_name.into(),
                            description: c.description.into(),
                            connect_url,
                            tool_call_id: call.id.clone(),
                        })?;
                        return Ok(TurnOutcome::AwaitingAuthorization);
                    }
                }
                // Checkpoint 5: tools pause in slices and check for a stop.
                match tools::run(&call, &mut *self.host) {
                    ToolOutcome::Done { output, is_error } => {
                        self.tool_result(&call, output, is_error)?
                    }
                    ToolOutcome::Interrupted => return self.interrupted(),
                }
            }
            // Checkpoint 1: before a model call.
            if self.host.stop_requested() {
                return self.interrupted();
            }
            let memory = self.host.memory().unwrap_or_default();
            let request = ModelRequest {
                system: system_prompt(&memory, client_context),
                messages: transcript::messages(&self.log),
                tools: specs.clone(),
            };
            let mut made_calls = false;
            let mut halt = None;
            let result = {
                let host = &mut *self.host;
                let log = &mut self.log;
                let replay = &mut self.replay;
                model.stream(&request, &mut |ev| {
                    // Checkpoint 2: while streaming.
                    if host.stop_requested() {
                        return Flow::Stop;
                    }
                    let event = match ev {
                        ModelEvent::TextDelta(delta) => Event::TextDelta { delta },
                        ModelEvent::ReasoningDelta(delta) => Event::ReasoningDelta { delta },
                        ModelEvent::ToolCallStarted { id, name } => Event::ToolCallStarted {
                            tool_call_id: id,
                            tool_name: name,
                        },
                        ModelEvent::ToolInputDelta { id, delta } => Event::ToolInputDelta {
                            tool_call_id: id,
                            delta,
                        },
                        ModelEvent::ToolCallReady(ToolCall { id, name, input }) => {
                            made_calls = true;
                            Event::ToolCallReady {
                                tool_call_id: id,
                                tool_name: name,
                                input,
                            }
                        }
                        ModelEvent::Usage {
                            input_tokens,
                            output_tokens,
                        } => Event::Usage {
                            input_tokens,
                            output_tokens,
                        },
                        ModelEvent::Finished { .. } | ModelEvent::Waiting => return Flow::Continue,
                    };
                    if let Err(h) = push_event(host, replay, log, event) {
                        halt = Some(h);
                        return Flow::Stop;
                    }
                    Flow::Continue
                })
            };
            if let Some(h) = halt {
                return Err(h);
            }
            match result {
                Ok(()) => {}
                Err(ModelError::Interrupted) => return self.interrupted(),
                Err(ModelError::Provider { message, code }) => {
                    // Checkpoint 3: a call that failed because of a stop is a stop.
                    if self.host.stop_requested() {
                        return self.interrupted();
                    }
                    return self.failed(&message, &code);
                }
            }
            if !made_calls {
                // Fragments of calls that never completed (a provider quirk) are closed too.
                let closing = transcript::closing_results(
                    &self.log,
                    "the model did not finish this tool call",
                );
                self.emit_all(closing)?;
                self.emit(Event::SessionCompleted {
                    finish_reason: Some("stop".into()),
                })?;
                return Ok(TurnOutcome::Completed);
            }
        }
        let closing = transcript::closing_results(&self.log, "the turn reached its step limit");
        self.emit_all(closing)?;
        self.emit(Event::SessionCompleted {
            finish_reason: Some("max_steps".into()),
        })?;
        Ok(TurnOutcome::Completed)
    }

    fn tool_result(
        &mut self,
        call: &ToolCall,
        output: serde_json::Value,
        is_error: bool,
    ) -> Result<(), Halt> {
        let (shown, aside) = tools::bound_output(output);
        if let Some(full) = &aside {
            self.host.store_output_aside(&call.id, full);
        }
        self.emit(Event::ToolResult {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            output: shown,
            is_error,
            synthetic: false,
            discarded: false,
            truncated: aside.is_some(),
        })
    }
}

#[cfg(test)]
pub mod testing {
    //! A recording [`TurnHost`] for native tests.
    use super::*;

    /// Records events, stops after a given number of checkpoints (or when `stop_when` says),
    /// counts tool side effects.
    #[derive(Default)]
    pub struct Host {
        pub events: Vec<Event>,
        pub checks: usize,
        pub stop_at_check: Option<usize>,
        pub stop_when: Option<fn(&[Event]) -> bool>,
        pub granted: Vec<String>,
        pub memory: String,
        pub fence_after: Option<usize>,
        /// How often a tool wrote memory / paused (ran).
        pub memory_writes: usize,
        pub pauses: usize,
        /// The replay flag as the turn last set it, and whether it was set while emitting.
        pub replaying: bool,
        pub emitted_while_replaying: bool,
    }

    impl ToolHost for Host {
        fn memory(&mut self) -> Result<String, String> {
            Ok(self.memory.clone())
        }
        fn set_memory(&mut self, d: &str) -> Result<(), String> {
            self.memory_writes += 1;
            self.memory = d.into();
            Ok(())
        }
        fn pause(&mut self, _ms: u64) -> bool {
            self.pauses += 1;
            !self.stop_requested()
        }
    }

    impl TurnHost for Host {
        fn emit(&mut self, event: &Event) -> Result<(), Fenced> {
            if self.fence_after.is_some_and(|n| self.events.len() >= n) {
                return Err(Fenced);
            }
            self.emitted_while_replaying |= self.replaying;
            self.events.push(event.clone());
            Ok(())
        }
        fn stop_requested(&mut self) -> bool {
            self.checks += 1;
            self.stop_at_check.is_some_and(|n| self.checks >= n)
                || self.stop_when.is_some_and(|f| f(&self.events))
        }
        fn connection_granted(&mut self, c: &str) -> bool {
            self.granted.iter().any(|g| g == c)
        }
        fn store_output_aside(&mut self, _: &str, _: &str) {}
        fn connect_url(&self, id: &str) -> String {
            format!("/eve/v1/session/s/authorizations/{id}")
        }
        fn set_replaying(&mut self, replaying: bool) {
            self.replaying = replaying;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::Host;
    use super::*;
    use crate::demo::DemoModel;
    use crate::model::ModelRequest;

    fn demo() -> DemoModel<fn(u64)> {
        DemoModel {
            pacing_ms: 0,
            sleep: |_| {},
        }
    }

    fn user(text: &str) -> Vec<Event> {
        vec![Event::UserMessage { text: text.into() }]
    }

    fn types(events: &[Event]) -> Vec<&'static str> {
        events.iter().map(Event::type_name).collect()
    }

    #[test]
    fn a_weather_turn_calls_the_tool_then_answers_and_completes() {
        let mut h = Host::default();
        let out = run_turn(&mut h, &mut demo(), user("weather in Paris"), None);
        assert_eq!(out, TurnOutcome::Completed);
        let t = types(&h.events);
        assert!(
            t.contains(&"tool.call.started")
                && t.contains(&"tool.call.ready")
                && t.contains(&"tool.call.result")
        );
        assert_eq!(t.last(), Some(&"session.completed"));
        assert!(
            t.iter().rposition(|x| *x == "assistant.text.delta")
                > t.iter().position(|x| *x == "tool.call.result")
        );
    }

    #[test]
    fn a_stop_before_the_model_call_settles_waiting_without_model_output() {
        let mut h = Host {
            stop_at_check: Some(1),
            ..Default::default()
        };
        let out = run_turn(&mut h, &mut demo(), user("hello"), None);
        assert_eq!(out, TurnOutcome::Interrupted);
        assert_eq!(types(&h.events), vec!["session.waiting"]);
    }

    #[test]
    fn a_stop_while_streaming_ends_the_stream_and_settles_waiting() {
        let mut h = Host {
            stop_at_check: Some(6),
            ..Default::default()
        };
        let out = run_turn(&mut h, &mut demo(), user("count to 100"), None);
        assert_eq!(out, TurnOutcome::Interrupted);
        let t = types(&h.events);
        assert_eq!(t.last(), Some(&"session.waiting"));
        assert!(t.len() < 20);
    }

    #[test]
    fn a_stop_while_a_tool_call_streams_discards_the_fragment_and_keeps_the_transcript_consistent()
    {
        // Stop as soon as the first input fragment is persisted.
        let mut h = Host {
            stop_when: Some(|ev: &[Event]| {
                ev.iter().any(|e| matches!(e, Event::ToolInputDelta { .. }))
            }),
            ..Default::default()
        };
        let mut log = user("weather in Paris");
        let out = run_turn(&mut h, &mut demo(), log.clone(), None);
        assert_eq!(out, TurnOutcome::Interrupted);
        let last_two: Vec<_> = h.events.iter().rev().take(2).collect();
        assert!(matches!(last_two[0], Event::SessionWaiting { .. }));
        assert!(matches!(
            last_two[1],
            Event::ToolResult {
                discarded: true,
                synthetic: true,
                is_error: true,
                ..
            }
        ));
        log.extend(h.events.clone());
        assert!(transcript::open_calls(&log).is_empty());
        // The fragment never reaches the model.
        assert!(transcript::messages(&log)
            .iter()
            .all(|m| !matches!(m, crate::model::ModelMessage::ToolResult { .. })));
    }

    #[test]
    fn a_stop_during_a_tool_call_gives_every_complete_call_a_synthetic_interrupted_result() {
        let mut h = Host {
            stop_when: Some(|ev: &[Event]| {
                ev.iter()
                    .filter(|e| matches!(e, Event::ToolCallReady { .. }))
                    .count()
                    >= 2
            }),
            ..Default::default()
        };
        let mut log = user("weather in Paris and Rome");
        let out = run_turn(&mut h, &mut demo(), log.clone(), None);
        assert_eq!(out, TurnOutcome::Interrupted);
        let synthetic: Vec<_> = h
            .events
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    Event::ToolResult {
                        synthetic: true,
                        discarded: false,
                        ..
                    }
                )
            })
            .collect();
        assert_eq!(synthetic.len(), 2);
        for e in synthetic {
            if let Event::ToolResult {
                output, is_error, ..
            } = e
            {
                assert!(*is_error);
                assert_eq!(output["error"], INTERRUPTED_BY_USER);
            }
        }
        // The next turn starts consistently: every call has its result in the transcript.
        log.extend(h.events.clone());
        log.push(Event::UserMessage {
            text: "hello".into(),
        });
        let mut h2 = Host::default();
        assert_eq!(
            run_turn(&mut h2, &mut demo(), log, None),
            TurnOutcome::Completed
        );
    }

    #[test]
    fn a_stop_while_the_wait_tool_runs_interrupts_it() {
        let mut h = Host {
            stop_when: Some(|ev: &[Event]| {
                ev.iter().any(|e| matches!(e, Event::ToolCallReady { .. }))
            }),
            ..Default::default()
        };
        // The first checkpoint after the call is ready is "before the tool" (4); make it pass
        // once so the stop lands inside the tool (5).
        let out = run_turn(&mut h, &mut demo(), user("wait 5"), None);
        assert_eq!(out, TurnOutcome::Interrupted);
        assert!(h.events.iter().any(|e| matches!(
            e,
            Event::ToolResult {
                synthetic: true,
                ..
            }
        )));
    }

    #[test]
    fn a_provider_failure_settles_failed_with_synthetic_results() {
        let mut h = Host::default();
        let out = run_turn(&mut h, &mut demo(), user("fail please"), None);
        assert!(matches!(out, TurnOutcome::Failed(_)));
        assert!(matches!(h.events.last(), Some(Event::SessionFailed { .. })));
    }

    #[test]
    fn a_failure_caused_by_a_stop_settles_waiting_not_failed() {
        struct Breaks;
        impl Model for Breaks {
            fn stream(
                &mut self,
                _: &ModelRequest,
                _: &mut dyn FnMut(ModelEvent) -> Flow,
            ) -> Result<(), ModelError> {
                Err(ModelError::provider("stream_cut", "connection reset"))
            }
        }
        let mut h = Host {
            stop_at_check: Some(2),
            ..Default::default()
        };
        let out = run_turn(&mut h, &mut Breaks, user("hi"), None);
        assert_eq!(out, TurnOutcome::Interrupted);
        assert!(matches!(
            h.events.last(),
            Some(Event::SessionWaiting { .. })
        ));
    }

    #[test]
    fn an_unauthorized_connection_emits_authorization_required_and_settles() {
        let mut h = Host::default();
        let mut log = user("search Notion for the roadmap");
        let out = run_turn(&mut h, &mut demo(), log.clone(), None);
        assert_eq!(out, TurnOutcome::AwaitingAuthorization);
        let last = h.events.last().unwrap();
        assert!(
            matches!(last, Event::AuthorizationRequired { connection, connect_url, .. }
            if connection == "notion" && connect_url.contains("/authorizations/"))
        );
        log.extend(h.events.clone());

        // Granted: the waiting call runs and the turn continues.
        let mut granted = log.clone();
        granted.push(granted_event(&log).unwrap());
        let mut h2 = Host {
            granted: vec!["notion".into()],
            ..Default::default()
        };
        assert_eq!(
            run_turn(&mut h2, &mut demo(), granted, None),
            TurnOutcome::Completed
        );
        assert!(h2.events.iter().any(|e| matches!(e, Event::ToolResult { tool_name, is_error: false, .. } if tool_name == "notion_search")));

        // Declined: completion, synthetic result, waiting; the transcript stays consistent.
        let declined = declined_events(&log);
        assert_eq!(
            types(&declined),
            vec![
                "authorization.completed",
                "tool.call.result",
                "session.waiting"
            ]
        );
        let mut after = log.clone();
        after.extend(declined);
        assert!(transcript::open_calls(&after).is_empty());
    }

    #[test]
    fn a_disabled_connection_is_never_used() {
        let mut h = Host::default();
        let ctx = "Connections the user disabled (do not use them): Notion, Linear, Sentry.";
        let out = run_turn(&mut h, &mut demo(), user("search Notion for x"), Some(ctx));
        assert_eq!(out, TurnOutcome::Completed);
        assert!(!h
            .events
            .iter()
            .any(|e| matches!(e, Event::AuthorizationRequired { .. })));
    }

    #[test]
    fn a_fenced_runner_stops_without_writing_more() {
        let mut h = Host {
            fence_after: Some(3),
            ..Default::default()
        };
        let out = run_turn(&mut h, &mut demo(), user("count to 50"), None);
        assert_eq!(out, TurnOutcome::Fenced);
        assert_eq!(h.events.len(), 3);
    }

    #[test]
    fn memory_tools_use_the_hosts_memory() {
        let mut h = Host::default();
        run_turn(
            &mut h,
            &mut demo(),
            user("remember that I like green tea"),
            None,
        );
        assert_eq!(h.memory, "- I like green tea");
        assert!(system_prompt(&h.memory, Some("ctx")).contains("- I like green tea"));
    }

    #[test]
    fn a_question_settles_waiting_and_its_answer_continues_the_turn() {
        let mut h = Host::default();
        let mut log = user("ask me to choose a city");
        assert_eq!(
            run_turn(&mut h, &mut demo(), log.clone(), None),
            TurnOutcome::AwaitingInput
        );
        assert_eq!(
            types(&h.events)[h.events.len() - 2..],
            ["input.requested", "session.waiting"]
        );
        log.extend(h.events.clone());
        let (request_id, call) = pending_input(&log).expect("a pending question");
        assert!(h.events.iter().any(|e| matches!(e, Event::InputRequested { request_id: r, options, .. } if *r == request_id && options.len() == 3)));
        log.push(answer_event(&call, "Lima"));
        let mut h2 = Host::default();
        assert_eq!(
            run_turn(&mut h2, &mut demo(), log.clone(), None),
            TurnOutcome::Completed
        );
        let text: String = h2
            .events
            .iter()
            .filter_map(|e| match e {
                Event::TextDelta { delta } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert!(text.contains("Lima"), "{text}");
        log.extend(h2.events);
        assert!(pending_input(&log).is_none());
    }

    #[test]
    fn a_new_message_instead_of_an_answer_closes_the_question() {
        let mut h = Host::default();
        let mut log = user("ask me something");
        run_turn(&mut h, &mut demo(), log.clone(), None);
        log.extend(h.events.clone());
        let closing = unanswered_events(&log);
        assert_eq!(types(&closing), vec!["tool.call.result"]);
        log.extend(closing);
        assert!(pending_input(&log).is_none());
        assert!(transcript::open_calls(&log).is_empty());
    }

    /// The log of an uninterrupted turn after `before` (the trigger is `before`'s last event),
    /// and the host it ran with.
    fn uninterrupted(before: &[Event], memory: &str) -> (Vec<Event>, Host) {
        let mut h = Host {
            memory: memory.into(),
            ..Default::default()
        };
        run_turn(&mut h, &mut demo(), before.to_vec(), None);
        let mut log = before.to_vec();
        log.extend(h.events.clone());
        (log, h)
    }

    /// Resumes the log cut after `cut` events; the host it ran with.
    fn resume_at(log: &[Event], cut: usize, memory: &str) -> Host {
        let start = crate::resume::run_start(&log[..cut]).expect("a run in progress");
        let mut h = Host {
            memory: memory.into(),
            ..Default::default()
        };
        resume_turn(&mut h, &mut demo(), log[..cut].to_vec(), start, None);
        h
    }

    #[test]
    fn a_turn_resumed_after_any_cut_writes_exactly_the_missing_suffix_of_the_uninterrupted_run() {
        for prompt in [
            "weather in Paris and Tokyo",
            "think about it",
            "count to 30",
            "search Notion for the roadmap",
        ] {
            let (full, _) = uninterrupted(&user(prompt), "");
            for cut in 1..full.len() {
                let h = resume_at(&full, cut, "");
                assert_eq!(
                    h.events,
                    full[cut..].to_vec(),
                    "{prompt:?} cut at {cut}: the resumed turn wrote something else"
                );
                assert!(
                    !h.emitted_while_replaying,
                    "{prompt:?} cut at {cut}: wrote while replaying"
                );
            }
        }
    }

    #[test]
    fn a_later_turn_resumes_from_its_own_start_with_the_earlier_turns_as_context() {
        let (first, _) = uninterrupted(&user("weather in Oslo"), "");
        let mut before = first.clone();
        before.push(Event::UserMessage {
            text: "weather in Lima".into(),
        });
        let (full, _) = uninterrupted(&before, "");
        for cut in before.len()..full.len() {
            assert_eq!(
                resume_at(&full, cut, "").events,
                full[cut..].to_vec(),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn persisted_tool_results_are_reused_and_their_tools_never_run_again() {
        let (full, original) = uninterrupted(&user("remember that I like green tea"), "");
        assert_eq!(original.memory_writes, 1);
        let result_at = full
            .iter()
            .position(|e| matches!(e, Event::ToolResult { .. }))
            .unwrap();
        // Killed just after the result was persisted: memory already holds the fact (which
        // changes the replayed usage counts; the persisted ones stand).
        let h = resume_at(&full, result_at + 1, &original.memory);
        assert_eq!(h.memory_writes, 0, "the memory write happened twice");
        assert_eq!(h.events, full[result_at + 1..].to_vec());

        let (full, original) = uninterrupted(&user("weather in Paris"), "");
        assert_eq!(original.pauses, 1);
        let result_at = full
            .iter()
            .position(|e| matches!(e, Event::ToolResult { .. }))
            .unwrap();
        let h = resume_at(&full, result_at + 1, "");
        assert_eq!(h.pauses, 0, "get_weather ran again");
        // Killed before the result: the tool runs (once) in the resumed turn.
        let h = resume_at(&full, result_at, "");
        assert_eq!(h.pauses, 1);
        assert_eq!(h.events, full[result_at..].to_vec());
    }

    #[test]
    fn a_replay_that_differs_from_the_log_settles_failed_and_rewrites_nothing() {
        let (full, _) = uninterrupted(&user("weather in Paris"), "");
        let ready_at = full
            .iter()
            .position(|e| matches!(e, Event::ToolCallReady { .. }))
            .unwrap();
        let mut tampered = full[..=ready_at].to_vec();
        // The persisted reasoning says something the model would not say again.
        tampered[1] = Event::ReasoningDelta {
            delta: "Something else ".into(),
        };
        let start = crate::resume::run_start(&tampered).unwrap();
        let mut h = Host::default();
        let out = resume_turn(&mut h, &mut demo(), tampered.clone(), start, None);
        assert!(matches!(out, TurnOutcome::Failed(_)));
        assert_eq!(
            types(&h.events),
            vec!["tool.call.result", "session.failed"],
            "only the closing events are written"
        );
        assert!(matches!(
            &h.events[0],
            Event::ToolResult {
                synthetic: true,
                ..
            }
        ));
        assert!(matches!(
            &h.events[1],
            Event::SessionFailed { code: Some(c), .. } if c == REPLAY_DIVERGED
        ));
        let mut after = tampered;
        after.extend(h.events);
        assert!(transcript::open_calls(&after).is_empty());
    }

    #[test]
    fn a_stop_during_the_replay_keeps_the_persisted_events_and_closes_their_open_calls() {
        let (full, _) = uninterrupted(&user("weather in Paris"), "");
        let ready_at = full
            .iter()
            .position(|e| matches!(e, Event::ToolCallReady { .. }))
            .unwrap();
        let cut = full[..=ready_at].to_vec();
        let mut h = Host {
            stop_at_check: Some(2),
            ..Default::default()
        };
        let out = resume_turn(&mut h, &mut demo(), cut.clone(), 1, None);
        assert_eq!(out, TurnOutcome::Interrupted);
        assert_eq!(
            types(&h.events),
            vec!["tool.call.result", "session.waiting"]
        );
        let mut after = cut;
        after.extend(h.events);
        assert!(transcript::open_calls(&after).is_empty());
    }

    #[test]
    fn demo_tool_call_ids_are_the_same_on_replay_and_distinct_per_call_and_per_turn() {
        let ids = |log: &[Event]| -> Vec<String> {
            log.iter()
                .filter_map(|e| match e {
                    Event::ToolCallReady { tool_call_id, .. } => Some(tool_call_id.clone()),
                    _ => None,
                })
                .collect()
        };
        let (a, _) = uninterrupted(&user("weather in Paris and Tokyo"), "");
        let (b, _) = uninterrupted(&user("weather in Paris and Tokyo"), "");
        assert_eq!(ids(&a), ids(&b));
        assert_eq!(ids(&a).len(), 2);
        assert_ne!(ids(&a)[0], ids(&a)[1]);
        let mut next = a.clone();
        next.push(Event::UserMessage {
            text: "weather in Paris and Tokyo".into(),
        });
        let (c, _) = uninterrupted(&next, "");
        let later = ids(&c[a.len()..]);
        assert_eq!(later.len(), 2);
        assert!(later.iter().all(|id| !ids(&a).contains(id)));
    }
}
