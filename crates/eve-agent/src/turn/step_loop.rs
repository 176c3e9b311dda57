//! The turn as a small state machine of named steps: [`run`] continues the open turn from the
//! log; each step calls the model (or takes the calls a resumed step left unanswered), runs
//! the calls one by one, and completes; the turn ends completed, cancelled, failed, or waits
//! for a question or a sign-in. The five cancel checkpoints are marked where they are.

use std::collections::BTreeMap;

use eve_api::eve::*;

use crate::connections::mcp::{self, McpConnection};
use crate::providers::http::user_message;
use crate::providers::model::{Model, ModelError};
use crate::session::transcript::{self, OpenTurn, StepState};
use crate::tools::builtin::{self as tools, ToolOutcome};
use crate::tools::skills;
use crate::tools::spec::{ToolCall, ToolSpec};
use crate::turn::approvals;
use crate::turn::authorizations::{attempt_id, sign_in_events};
use crate::turn::events::{
    action_requests, cancel_events, failed_events, failed_result, finish_reason, session_waiting,
    tool_result, MODEL_CALL_FAILED,
};
use crate::turn::host::{Fenced, TurnContext, TurnHost, TurnLog, TurnOutcome};
use crate::turn::mcp_tools::{self, McpServer, McpStep};
use crate::turn::model_call::model_step;
use crate::turn::questions::{ask, ASK_USER_TOOL};

/// Most model steps in one turn.
pub const MAX_STEPS: u64 = 8;

/// Runs the open turn of `log` from where it stands to its end or its next wait.
pub fn run(
    host: &mut dyn TurnHost,
    model: &mut dyn Model,
    log: Vec<Event>,
    ctx: &TurnContext,
) -> TurnOutcome {
    let mut turn = Turn {
        w: TurnLog { host, events: log },
        ctx,
        skills: Vec::new(),
    };
    match turn.run(model) {
        Ok(o) => o,
        Err(Fenced) => TurnOutcome::Fenced,
    }
}

struct Turn<'h> {
    w: TurnLog<'h>,
    ctx: &'h TurnContext,
    /// The skills `eve__skill` loads from, read once per run with the tools.
    skills: Vec<eve_skills::store::Offered>,
}

/// Where a step stands after its model call: calls to run, or the turn's end.
enum Called {
    Calls(Vec<ActionRequest>),
    Ended(TurnOutcome),
}

/// The MCP servers of this run and every tool offered to the model.
struct Offered {
    servers: BTreeMap<String, McpServer>,
    specs: Vec<ToolSpec>,
}

impl Turn<'_> {
    fn run(&mut self, model: &mut dyn Model) -> Result<TurnOutcome, Fenced> {
        let Some(open) = transcript::open_turn(&self.w.events) else {
            return Ok(TurnOutcome::Idle);
        };
        if matches!(self.w.events.last(), Some(Event::TurnWaiting(_))) {
            return Ok(TurnOutcome::Waiting);
        }
        let mut offered = self.offered();
        let mut step = open.step;
        let mut state = open.step_state.clone();
        let mut usage: Option<StepUsage> = None;
        let carried = transcript::carried(&self.w.events, &open);
        loop {
            let at = open.turn.step(step);
            // Calls a step left for approval run first in the next step, as eve runs them.
            let started = state == StepState::Fresh && step == open.step && !carried.is_empty();
            if started {
                self.w.emit(Event::StepStarted(StepStarted {
                    model_id: self.ctx.model_id.clone(),
                    at: at.clone(),
                }))?;
                let servers = &mut offered.servers;
                if let Some(end) = self.run_calls(&open, &at, &carried, servers, &mut usage)? {
                    return Ok(end);
                }
            }
            let calls = match state {
                StepState::Answered => return self.completed(&open.turn),
                StepState::Calls(calls) => calls,
                StepState::Fresh | StepState::Interrupted => {
                    let specs = &offered.specs;
                    match self.call_model(model, &open.turn, &at, specs, &mut usage, started)? {
                        Called::Calls(calls) => calls,
                        Called::Ended(outcome) => return Ok(outcome),
                    }
                }
            };
            if let Some(end) =
                self.run_calls(&open, &at, &calls, &mut offered.servers, &mut usage)?
            {
                return Ok(end);
            }
            self.w.emit(Event::StepCompleted(StepCompleted {
                finish_reason: "tool-calls".into(),
                at: at.clone(),
                usage: usage.take(),
            }))?;
            step += 1;
            state = StepState::Fresh;
        }
    }

    /// The built-in tools and the enabled MCP servers' tools, listed once per run.
    fn offered(&mut self) -> Offered {
        let mut specs = tools::specs();
        specs.extend(eve_projects::tools::specs().into_iter().map(
            |(name, description, input_schema)| ToolSpec {
                name,
                description,
                input_schema,
            },
        ));
        // eve offers `eve__skill` whenever the agent has a skill.
        self.skills = self.w.host.skills();
        if !self.skills.is_empty() {
            specs.push(skills::spec());
        }
        let servers = mcp_tools::servers(&mut *self.w.host, self.ctx);
        for s in servers.values() {
            specs.extend(s.specs.iter().cloned());
        }
        Offered { servers, specs }
    }

    /// Step `at`'s model call: `step.started` (unless `started` already), the call, then
    /// `actions.requested` (or the step and the turn completed when the model called no tool).
    fn call_model(
        &mut self,
        model: &mut dyn Model,
        turn: &TurnRef,
        at: &StepRef,
        specs: &[ToolSpec],
        usage: &mut Option<StepUsage>,
        started: bool,
    ) -> Result<Called, Fenced> {
        if at.step_index >= MAX_STEPS {
            return self.completed(turn).map(Called::Ended);
        }
        // Checkpoint 1: before a model call.
        if self.w.host.stop_requested() {
            return self.cancelled().map(Called::Ended);
        }
        if !started {
            self.w.emit(Event::StepStarted(StepStarted {
                model_id: self.ctx.model_id.clone(),
                at: at.clone(),
            }))?;
        }
        let out = match model_step(&mut self.w, self.ctx, model, at, specs)? {
            Ok(out) => out,
            Err(e) => return self.model_failed(at, e).map(Called::Ended),
        };
        *usage = out.usage;
        if out.calls.is_empty() {
            self.w.emit(Event::StepCompleted(StepCompleted {
                finish_reason: finish_reason(false, None),
                at: at.clone(),
                usage: Some(usage.unwrap_or_default()),
            }))?;
            return self.completed(turn).map(Called::Ended);
        }
        let actions = action_requests(&out.calls);
        self.w.emit(Event::ActionsRequested(ActionsRequested {
            presentation: skills::requested_labels(&actions),
            actions: actions.clone(),
            at: at.clone(),
        }))?;
        Ok(Called::Calls(actions))
    }

    /// A model call that failed: a stop is a cancel; anything else fails the turn for good.
    fn model_failed(&mut self, at: &StepRef, e: ModelError) -> Result<TurnOutcome, Fenced> {
        match e {
            ModelError::Interrupted => self.cancelled(),
            ModelError::Provider { message, code, .. } => {
                // Checkpoint 3: a call that failed because of a stop is a stop.
                if self.w.host.stop_requested() {
                    return self.cancelled();
                }
                // The provider's words (its status, its body, the URL it could not reach) are
                // for the operator's log: they can name accounts, quotas or internal hosts,
                // and every reader of the stream sees what goes into it.
                eprintln!(
                    "agent: model call failed in session {} ({code}): {message}",
                    self.ctx.session_id
                );
                self.failed(at, user_message(&code))
            }
        }
    }

    /// Runs the calls of step `at` that have no result yet, in order; a call that waits for
    /// approval is left for the end, when the step completes and the turn parks on it (eve's
    /// order). `Some`: the turn ended or waits.
    fn run_calls(
        &mut self,
        open: &OpenTurn,
        at: &StepRef,
        calls: &[ActionRequest],
        servers: &mut BTreeMap<String, McpServer>,
        usage: &mut Option<StepUsage>,
    ) -> Result<Option<TurnOutcome>, Fenced> {
        let turn_events = self.w.events[open.start..].to_vec();
        let mut gated = Vec::new();
        for action in transcript::unanswered(&turn_events, calls) {
            let call = transcript::tool_call(action);
            if !self.may_run(&call, servers) {
                gated.push(call);
                continue;
            }
            // Checkpoint 4: before a tool call.
            if self.w.host.stop_requested() {
                return self.cancelled().map(Some);
            }
            if let Some(end) = self.run_call(&open.turn, at, &call, servers)? {
                return Ok(Some(end));
            }
        }
        if gated.is_empty() {
            return Ok(None);
        }
        self.ask_approval(&open.turn, at, &gated, usage).map(Some)
    }

    /// Parks the turn on the approval of `calls`: the step completes, then one
    /// `input.requested` for them all and `turn.waiting`.
    fn ask_approval(
        &mut self,
        turn: &TurnRef,
        at: &StepRef,
        calls: &[ToolCall],
        usage: &mut Option<StepUsage>,
    ) -> Result<TurnOutcome, Fenced> {
        self.w.emit(Event::StepCompleted(StepCompleted {
            finish_reason: "tool-calls".into(),
            at: at.clone(),
            usage: usage.take(),
        }))?;
        self.w.emit(approvals::ask(calls, at))?;
        let usage = Some(transcript::usage(&self.w.events));
        self.w.emit(Event::TurnWaiting(TurnWaiting {
            on: "input".into(),
            at: turn.clone(),
            usage,
        }))?;
        Ok(TurnOutcome::Waiting)
    }

    /// One call: a question to the user, an MCP server's tool, or a built-in tool.
    fn run_call(
        &mut self,
        turn: &TurnRef,
        at: &StepRef,
        call: &ToolCall,
        servers: &mut BTreeMap<String, McpServer>,
    ) -> Result<Option<TurnOutcome>, Fenced> {
        if call.name == ASK_USER_TOOL {
            return self.ask_user(turn, at, call);
        }
        if call.name == SKILL_TOOL {
            let loaded = skills::load(call, &self.skills);
            self.w.emit(skills::result_event(at, call, loaded))?;
            return Ok(None);
        }
        if let Some((name, tool)) = mcp::split_tool_name(&call.name) {
            if let Some(conn) = self.ctx.mcp.iter().find(|c| c.name == name).cloned() {
                return self.mcp_tool(turn, at, call, &conn, tool, servers);
            }
        }
        if eve_projects::tools::NAMES.contains(&call.name.as_str()) {
            if let Some(raw) = call.input.get("_invalidInput") {
                let output = serde_json::json!({ "error": format!("the tool input is not a JSON object: {raw}") });
                return self.tool_done(at, call, output, true).map(|()| None);
            }
            let (output, is_error) = self.w.host.file_tool(&call.name, &call.input);
            return self.tool_done(at, call, output, is_error).map(|()| None);
        }
        // Checkpoint 5: tools pause in slices and check for a stop.
        match tools::run(call, &mut *self.w.host) {
            ToolOutcome::Done { output, is_error } => {
                self.tool_done(at, call, output, is_error)?;
                Ok(None)
            }
            ToolOutcome::Interrupted => self.cancelled().map(Some),
        }
    }

    /// Whether `call`'s approval policy lets it run now (docs/approvals.md); a question or a
    /// skill load is the framework's, never gated.
    fn may_run(&self, call: &ToolCall, servers: &BTreeMap<String, McpServer>) -> bool {
        if call.name == ASK_USER_TOOL || call.name == SKILL_TOOL {
            return true;
        }
        let read_only = mcp_tools::read_only(servers, &call.name);
        let policy = approvals::policy_for(&self.ctx.tool_approvals, call, read_only);
        approvals::may_run(&self.w.events, call, policy)
    }

    /// `ask_user`: parks the turn on the question, or answers a malformed one as failed.
    fn ask_user(
        &mut self,
        turn: &TurnRef,
        at: &StepRef,
        call: &ToolCall,
    ) -> Result<Option<TurnOutcome>, Fenced> {
        match ask(call, at) {
            Ok(event) => {
                self.w.emit(event)?;
                self.w.emit(Event::TurnWaiting(TurnWaiting {
                    on: "input".into(),
                    at: turn.clone(),
                    usage: None,
                }))?;
                Ok(Some(TurnOutcome::Waiting))
            }
            Err(message) => {
                self.w
                    .emit(failed_result(at, call, "invalid_input", message.into()))?;
                Ok(None)
            }
        }
    }

    /// A tool of `conn`'s MCP server: its result, its failure, or a sign-in to wait for.
    fn mcp_tool(
        &mut self,
        turn: &TurnRef,
        at: &StepRef,
        call: &ToolCall,
        conn: &McpConnection,
        tool: &str,
        servers: &mut BTreeMap<String, McpServer>,
    ) -> Result<Option<TurnOutcome>, Fenced> {
        let log = &self.w.events;
        match mcp_tools::call(&mut *self.w.host, log, servers, conn, tool, call) {
            McpStep::Result(output, is_error) => self.tool_done(at, call, output, is_error)?,
            // A request the user's stop abandoned is a stop (checkpoint 5).
            McpStep::Failed(..) if self.w.host.stop_requested() => {
                return self.cancelled().map(Some);
            }
            McpStep::Failed(code, message) => {
                self.w.emit(failed_result(at, call, code, message))?
            }
            McpStep::SignIn(challenge) => {
                let url = self.w.host.connect_url(&attempt_id(call));
                self.w
                    .emit_all(sign_in_events(at, turn, call, conn, challenge, url))?;
                return Ok(Some(TurnOutcome::Waiting));
            }
        }
        Ok(None)
    }

    /// Writes a finished tool's `action.result` (an oversized output is stored aside).
    fn tool_done(
        &mut self,
        at: &StepRef,
        call: &ToolCall,
        output: serde_json::Value,
        is_error: bool,
    ) -> Result<(), Fenced> {
        let (mut shown, aside) = tools::bound_output(output);
        if let Some(full) = &aside {
            if let Some(path) = self.w.host.store_output_aside(&call.id, full) {
                shown["path"] = path.clone().into();
                shown["note"] = format!(
                    "the full output is kept as the file {path}: read the rest with read_file"
                )
                .into();
            }
        }
        self.w.emit(tool_result(at, call, shown, is_error))
    }

    fn cancelled(&mut self) -> Result<TurnOutcome, Fenced> {
        let events = cancel_events(&self.ctx.session_id, &self.w.events);
        self.w.emit_all(events)?;
        Ok(TurnOutcome::Cancelled)
    }

    fn failed(&mut self, at: &StepRef, message: &str) -> Result<TurnOutcome, Fenced> {
        let events = failed_events(
            &self.ctx.session_id,
            &self.w.events,
            at,
            MODEL_CALL_FAILED,
            message,
        );
        self.w.emit_all(events)?;
        Ok(TurnOutcome::Failed(message.into()))
    }

    fn completed(&mut self, at: &TurnRef) -> Result<TurnOutcome, Fenced> {
        self.w.emit(Event::TurnCompleted(at.clone()))?;
        let waiting = session_waiting(&self.ctx.session_id, &self.w.events);
        self.w.emit(waiting)?;
        Ok(TurnOutcome::Completed)
    }
}
