//! One turn of the agent in eve's vocabulary: `step.started` → the model's deltas
//! (`reasoning.appended`, `message.appended`, `action.input.appended`) → the completed blocks
//! (`reasoning.completed`, `message.completed`, `actions.requested`) → the tools
//! (`action.result`) → `step.completed`, step after step, until the model answers without
//! tools (`turn.completed`, `session.waiting`). A question (`ask_user`) or a sign-in the turn
//! needs parks it (`input.requested` / `authorization.required`, then `turn.waiting`); the
//! answer, grant or decline continues the same turn.
//!
//! The turn checks for a cancel at seed 003's five checkpoints — before each model call, while
//! the model streams, after a failed call, before each tool call, while a tool runs — and ends
//! a cancelled turn consistently: every call it stopped is answered as cancelled, a question is
//! resolved `cancelled`, a sign-in `declined`, then `turn.cancelled` and `session.waiting`.
//!
//! [`run`] always continues from the log ([`transcript::open_turn`]), so a turn whose runner
//! died is resumed the way eve does it: a step whose model call never finished runs again
//! (same `stepIndex`, new events under new ids; what was streamed stays), tool calls with a
//! persisted result are not run again, and `message.completed` carries the authoritative text.

use eve_api::eve::*;
use serde_json::{json, Value};

use crate::connections;
use crate::mcp::{self, McpClient, McpConnection, McpError, McpHttp};
use crate::model::{Flow, Model, ModelError, ModelEvent, ModelRequest, ToolCall};
use crate::tools::{self, ToolHost, ToolOutcome};
use crate::transcript::{self, OpenTurn, StepState, Waiting};

/// Most model steps in one turn.
pub const MAX_STEPS: u64 = 8;
/// The tool that asks the user a question.
pub const ASK_USER_TOOL: &str = "ask_user";
/// What a cancelled call is answered with.
pub const CANCELLED_BY_USER: &str = "cancelled by the user";
/// `step.failed` / `turn.failed` / `session.failed` code of a failed model call (eve's).
pub const MODEL_CALL_FAILED: &str = "MODEL_CALL_FAILED";

/// This runner no longer owns the session (its lease was taken over): stop without writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fenced;

/// What a turn needs from its environment.
pub trait TurnHost: ToolHost {
    /// Persists `event` as the session's next event (before any reader sees it).
    fn emit(&mut self, event: &Event) -> Result<(), Fenced>;
    /// A checkpoint: whether the turn was asked to stop. Also keeps the lease alive.
    fn stop_requested(&mut self) -> bool;
    /// Keeps an oversized tool output aside (the event and the model get a preview).
    fn store_output_aside(&mut self, call_id: &str, output: &str);
    /// Where the user authorizes a connection for this session.
    fn connect_url(&self, attempt_id: &str) -> String;
    /// The network to MCP servers.
    fn mcp_http(&mut self) -> &mut dyn McpHttp;
    /// The caller's token for `connection`, from its sign-in.
    fn connection_token(&mut self, connection: &str) -> Option<String>;
    /// The bytes of the session principal's attachment `id` (`None`: gone, or not theirs).
    fn attachment(&mut self, _id: &str) -> Option<Vec<u8>> {
        None
    }
}

/// What a turn runs with.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnContext {
    pub session_id: String,
    pub model_id: String,
    pub client_context: Option<String>,
    /// How many characters of history fit the model's context window
    /// ([`crate::config::ModelChoice::context_chars`]); older exchanges are trimmed.
    pub context_chars: usize,
    /// The configured MCP servers (`mcp_connections`).
    pub mcp: Vec<McpConnection>,
}

/// How a turn ended (or stopped for now).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnOutcome {
    Completed,
    Cancelled,
    Failed(String),
    /// Parked on a question or a sign-in (`turn.waiting`).
    Waiting,
    /// Nothing to run: the log has no open turn.
    Idle,
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

/// The events that open turn `sequence` for a message: `session.started` first when it is the
/// session's first turn, `turn.started`, `message.received`.
pub fn start_events(sequence: u64, first: bool, text: &str, parts: &[MessagePart]) -> Vec<Event> {
    let at = TurnRef::new(sequence);
    let mut v = Vec::new();
    if first {
        v.push(Event::SessionStarted(SessionStarted {
            runtime: Some(RuntimeIdentity {
                agent_id: "eve-chat".into(),
                agent_name: "eve-chat".into(),
                eve_version: "0.80.1".into(),
            }),
        }));
    }
    v.push(Event::TurnStarted(at.clone()));
    v.push(received(&at, text, parts));
    v
}

/// `message.received` for a message of turn `at`.
pub fn received(at: &TurnRef, text: &str, parts: &[MessagePart]) -> Event {
    let parts = parts
        .iter()
        .map(|p| match p {
            MessagePart::Text { text } => ReceivedPart::Text { text: text.clone() },
            MessagePart::File {
                media_type,
                filename,
                attachment_id,
                size,
                ..
            } => ReceivedPart::File {
                filename: filename.clone(),
                media_type: media_type.clone(),
                attachment_id: attachment_id.clone(),
                size: *size,
                url: attachment_id.as_deref().map(crate::attachments::url),
            },
        })
        .collect();
    Event::MessageReceived(MessageReceived {
        message: text.into(),
        parts,
        at: at.clone(),
    })
}

/// `session.waiting` with the session's token totals so far.
pub fn session_waiting(session_id: &str, log: &[Event]) -> Event {
    Event::SessionWaiting(SessionWaiting {
        continuation_token: session_id.into(),
        usage: Some(transcript::usage(log)),
        wait: "next-user-message".into(),
    })
}

/// What settles a log whose turn ended but whose runner died before the session event that
/// follows: `session.waiting` after `turn.completed` / `turn.cancelled` (or a non-terminal
/// `turn.failed`), `session.failed` after a terminal `turn.failed`. `None` for any other log.
pub fn unsettled_end(session_id: &str, log: &[Event]) -> Option<Event> {
    match log.last()? {
        Event::TurnFailed(f) if f.terminal == Some(true) => {
            Some(Event::SessionFailed(SessionFailed {
                code: f.code.clone(),
                details: f.details.clone(),
                message: f.message.clone(),
                session_id: session_id.into(),
                usage: Some(transcript::usage(log)),
            }))
        }
        Event::TurnCompleted(_) | Event::TurnCancelled(_) | Event::TurnFailed(_) => {
            Some(session_waiting(session_id, log))
        }
        _ => None,
    }
}

fn action_result(
    at: &StepRef,
    call: &ToolCall,
    output: Value,
    is_error: bool,
    status: &str,
    error: Option<ActionError>,
) -> Event {
    Event::ActionResult(ActionResult {
        error,
        result: ActionOutput {
            call_id: call.id.clone(),
            is_error: is_error.then_some(true),
            kind: "tool-result".into(),
            output,
            tool_name: call.name.clone(),
        },
        status: status.into(),
        at: at.clone(),
    })
}

/// Whether sign-in `attempt_id` was completed authorized.
fn authorized_in_log(log: &[Event], attempt_id: &str) -> bool {
    log.iter().any(|e| {
        matches!(e, Event::AuthorizationCompleted(c)
            if c.attempt_id == attempt_id && c.outcome == AuthorizationOutcome::Authorized)
    })
}

/// The `action.result` of a call that failed with `code` (the model reads `{"error": message}`).
fn failed_result(at: &StepRef, call: &ToolCall, code: &str, message: String) -> Event {
    action_result(
        at,
        call,
        json!({ "error": message }),
        true,
        "failed",
        Some(ActionError {
            code: code.into(),
            message,
        }),
    )
}

/// The events that end the open turn of `log` cancelled: what it waits for is withdrawn, then
/// `turn.cancelled` and `session.waiting`.
pub fn cancel_events(session_id: &str, log: &[Event]) -> Vec<Event> {
    let Some(open) = transcript::open_turn(log) else {
        return Vec::new();
    };
    // The calls it stopped are answered as cancelled in the model's history
    // (`transcript::messages`), not on the stream, as eve does.
    let mut v = withdraw(&open, "cancelled", AuthorizationOutcome::Declined);
    v.push(Event::TurnCancelled(open.turn.clone()));
    let mut all = log.to_vec();
    all.extend(v.iter().cloned());
    v.push(session_waiting(session_id, &all));
    v
}

/// What withdraws the open turn's pending question or sign-in.
fn withdraw(
    open: &OpenTurn,
    input_outcome: &str,
    auth_outcome: AuthorizationOutcome,
) -> Vec<Event> {
    match &open.waiting {
        Some(Waiting::Input { request, at }) => vec![Event::InputResolved(InputResolved {
            resolutions: vec![InputResolution {
                kind: request.kind.clone(),
                outcome: input_outcome.into(),
                request_id: request.request_id.clone(),
                response: None,
            }],
            at: at.clone(),
        })],
        Some(Waiting::Authorization {
            attempt_id,
            name,
            at,
            ..
        }) => vec![Event::AuthorizationCompleted(AuthorizationCompleted {
            attempt_id: attempt_id.clone(),
            name: name.clone(),
            outcome: auth_outcome,
            reason: None,
            at: at.clone(),
        })],
        None => Vec::new(),
    }
}

/// The events that fail turn `at` for good (eve's cascade: `step.failed`, `turn.failed` with
/// `terminal: true`, `session.failed`).
pub fn failed_events(
    session_id: &str,
    log: &[Event],
    at: &StepRef,
    code: &str,
    message: &str,
) -> Vec<Event> {
    let details = json!({ "message": message });
    vec![
        Event::StepFailed(StepFailed {
            code: code.into(),
            details: Some(details.clone()),
            message: message.into(),
            at: at.clone(),
        }),
        Event::TurnFailed(TurnFailed {
            code: code.into(),
            details: Some(details.clone()),
            message: message.into(),
            at: at.turn(),
            terminal: Some(true),
        }),
        Event::SessionFailed(SessionFailed {
            code: code.into(),
            details: Some(details),
            message: message.into(),
            session_id: session_id.into(),
            usage: Some(transcript::usage(log)),
        }),
    ]
}

/// The question the parked turn waits for.
pub fn pending_question(log: &[Event]) -> Option<InputRequest> {
    match transcript::open_turn(log)?.waiting? {
        Waiting::Input { request, .. } => Some(request),
        Waiting::Authorization { .. } => None,
    }
}

/// The sign-in the parked turn waits for: `(attemptId, connection name)`.
pub fn pending_authorization(log: &[Event]) -> Option<(String, String)> {
    match transcript::open_turn(log)?.waiting? {
        Waiting::Authorization {
            attempt_id, name, ..
        } => Some((attempt_id, name)),
        Waiting::Input { .. } => None,
    }
}

/// The events that answer the parked question with `response` (the turn then continues):
/// `input.resolved` and the `ask_user` call's result. `None` when `response` is not for it.
pub fn answer_events(log: &[Event], response: &InputResponse) -> Option<Vec<Event>> {
    let open = transcript::open_turn(log)?;
    let Some(Waiting::Input { request, at }) = &open.waiting else {
        return None;
    };
    if request.request_id != response.request_id {
        return None;
    }
    let value = response
        .text
        .clone()
        .or_else(|| {
            let id = response.option_id.as_deref()?;
            request
                .options
                .iter()
                .find(|o| o.id == id)
                .map(|o| o.label.clone())
        })
        .or_else(|| response.option_id.clone())?;
    let call = transcript::tool_call(&request.action);
    Some(vec![
        Event::InputResolved(InputResolved {
            resolutions: vec![InputResolution {
                kind: request.kind.clone(),
                outcome: "answered".into(),
                request_id: request.request_id.clone(),
                response: Some(response.clone()),
            }],
            at: at.clone(),
        }),
        action_result(
            at,
            &call,
            json!({ "answer": value }),
            false,
            "completed",
            None,
        ),
    ])
}

/// The event that grants the parked sign-in (the turn then continues and makes the call).
pub fn granted_events(log: &[Event]) -> Option<Vec<Event>> {
    let open = transcript::open_turn(log)?;
    let Some(Waiting::Authorization { .. }) = &open.waiting else {
        return None;
    };
    Some(withdraw(
        &open,
        "answered",
        AuthorizationOutcome::Authorized,
    ))
}

/// The events that decline the parked sign-in: `authorization.completed` (declined) and the
/// waiting call answered as failed (the turn then continues without it).
pub fn declined_events(log: &[Event]) -> Option<Vec<Event>> {
    let open = transcript::open_turn(log)?;
    let Some(Waiting::Authorization {
        name, call_id, at, ..
    }) = &open.waiting
    else {
        return None;
    };
    let mut v = withdraw(&open, "cancelled", AuthorizationOutcome::Declined);
    if let (Some(call_id), StepState::Calls(calls)) = (call_id, &open.step_state) {
        if let Some(c) = calls.iter().find(|c| &c.call_id == call_id) {
            v.push(failed_result(
                at,
                &transcript::tool_call(c),
                "authorization_declined",
                format!("the user declined to connect {name}"),
            ));
        }
    }
    Some(v)
}

/// A message that arrives while the turn is parked steers it (eve's rule for the person the
/// turn serves): a question that takes free text is answered with it; a sign-in is declined.
/// Returns the events to write before the turn continues (`message.received` included).
pub fn steer_events(log: &[Event], text: &str, parts: &[MessagePart]) -> Option<Vec<Event>> {
    let open = transcript::open_turn(log)?;
    let mut v = vec![received(&open.turn, text, parts)];
    match open.waiting.as_ref()? {
        Waiting::Input { request, .. } => {
            let response = InputResponse {
                request_id: request.request_id.clone(),
                option_id: None,
                text: Some(text.to_string()),
            };
            v.extend(answer_events(log, &response)?);
        }
        Waiting::Authorization { .. } => v.extend(declined_events(log)?),
    }
    Some(v)
}

/// Runs the open turn of `log` from where it stands to its end or its next wait.
pub fn run(
    host: &mut dyn TurnHost,
    model: &mut dyn Model,
    log: Vec<Event>,
    ctx: &TurnContext,
) -> TurnOutcome {
    let mut turn = Turn { host, log, ctx };
    match turn.run(model) {
        Ok(o) => o,
        Err(Fenced) => TurnOutcome::Fenced,
    }
}

struct Turn<'h> {
    host: &'h mut dyn TurnHost,
    log: Vec<Event>,
    ctx: &'h TurnContext,
}

/// What one model call produced.
#[derive(Default)]
struct StepOutput {
    text: String,
    reasoning: String,
    reasoning_done: bool,
    calls: Vec<ToolCall>,
    names: Vec<(String, String)>,
    usage: Option<StepUsage>,
}

fn finish_reason(has_calls: bool, provider: Option<&str>) -> String {
    if has_calls {
        return "tool-calls".into();
    }
    match provider {
        Some("length" | "max_tokens") => "length".into(),
        Some("content_filter") => "content-filter".into(),
        _ => "stop".into(),
    }
}

/// One MCP server as this turn sees it: its client (session kept for the turn), the tools it
/// offers, the ones it listed that cannot be offered and why, or why it has none.
struct McpServer {
    client: McpClient,
    specs: Vec<crate::model::ToolSpec>,
    unusable: Vec<(String, String)>,
    /// `Some(challenge)` when listing asked for a sign-in; the `sign_in` tool is offered.
    sign_in: Option<Option<String>>,
    unavailable: Option<String>,
}

/// What an MCP tool call came to.
enum McpStep {
    Result(Value, bool),
    Failed(&'static str, String),
    SignIn(Option<String>),
}

/// Where a sign-in's instructions quote the server's challenge ([`pending_challenge`]).
const CHALLENGE_PREFIX: &str = " The server asked: WWW-Authenticate: ";

/// The `WWW-Authenticate` challenge of the pending sign-in `attempt_id`, if its server sent one.
pub fn pending_challenge(log: &[Event], attempt_id: &str) -> Option<String> {
    log.iter().rev().find_map(|e| match e {
        Event::AuthorizationRequired(a) if a.attempt_id == attempt_id => a
            .authorization
            .instructions
            .as_deref()
            .and_then(|i| i.split_once(CHALLENGE_PREFIX))
            .map(|(_, c)| c.to_string()),
        _ => None,
    })
}

/// The tool offered for a server that lists nothing before a sign-in.
const SIGN_IN_TOOL: &str = "sign_in";

impl Turn<'_> {
    /// The enabled MCP servers with their tools, listed once per run: a run after a sign-in
    /// lists again with the new token.
    fn mcp_servers(&mut self) -> std::collections::BTreeMap<String, McpServer> {
        let mut out = std::collections::BTreeMap::new();
        let ctx = self.ctx.client_context.as_deref();
        for c in self
            .ctx
            .mcp
            .iter()
            .filter(|c| connections::is_enabled(ctx, &c.name))
        {
            let bearer = c
                .token
                .clone()
                .or_else(|| self.host.connection_token(&c.name));
            let mut server = McpServer {
                client: McpClient::new(&c.url, bearer),
                specs: Vec::new(),
                unusable: Vec::new(),
                sign_in: None,
                unavailable: None,
            };
            match server.client.list_tools(self.host.mcp_http()) {
                Ok(tools) => {
                    for t in &tools {
                        match (mcp::tool_spec(c, t), &t.input_schema) {
                            (Some(spec), _) => server.specs.push(spec),
                            (None, Err(why)) => {
                                eprintln!("agent: {} tool {} left out: {why}", c.name, t.name);
                                server.unusable.push((t.name.clone(), why.clone()));
                            }
                            (None, Ok(_)) => {}
                        }
                    }
                }
                Err(McpError::Unauthorized(challenge)) => {
                    server.specs.push(crate::model::ToolSpec {
                        name: format!("{}{}{SIGN_IN_TOOL}", c.name, mcp::SEPARATOR),
                        description: format!(
                            "Signs in to {} ({}); its tools are offered after the user connects it.",
                            c.display_name, c.description
                        ),
                        input_schema: json!({ "type": "object", "properties": {} }),
                    });
                    server.sign_in = Some(challenge);
                }
                Err(McpError::Failed(why)) => {
                    eprintln!("agent: {} is unavailable: {why}", c.name);
                    server.unavailable = Some(why);
                }
            }
            out.insert(c.name.clone(), server);
        }
        out
    }

    /// Runs `tool` of `conn`'s server for `call`.
    fn mcp_call(
        &mut self,
        servers: &mut std::collections::BTreeMap<String, McpServer>,
        conn: &McpConnection,
        tool: &str,
        call: &ToolCall,
    ) -> McpStep {
        let Some(server) = servers.get_mut(&conn.name) else {
            return McpStep::Failed(
                "connection_disabled",
                format!("{} is disabled for this turn", conn.display_name),
            );
        };
        if let Some(why) = &server.unavailable {
            return McpStep::Failed(
                "tool_error",
                format!("{} is unavailable: {why}", conn.display_name),
            );
        }
        if let Some((_, why)) = server.unusable.iter().find(|(n, _)| n == tool) {
            return McpStep::Failed(
                "invalid_tool",
                format!("{}'s tool {tool} cannot be used: {why}", conn.display_name),
            );
        }
        let signed_in = authorized_in_log(&self.log, &format!("auth_{}", call.id));
        if tool == SIGN_IN_TOOL {
            if let Some(challenge) = server.sign_in.clone() {
                if !signed_in {
                    return McpStep::SignIn(challenge);
                }
                return McpStep::Failed(
                    "unauthorized",
                    format!(
                        "{} still refuses access after the sign-in",
                        conn.display_name
                    ),
                );
            }
            if signed_in {
                return McpStep::Result(
                    json!({ "text": format!("{} is connected; its tools are offered from the next step on.", conn.display_name) }),
                    false,
                );
            }
        }
        if let Some(raw) = call.input.get("_invalidInput") {
            return McpStep::Failed(
                "invalid_input",
                format!("the tool input is not a JSON object: {raw}"),
            );
        }
        match server
            .client
            .call_tool(self.host.mcp_http(), tool, &call.input)
        {
            Ok(r) => McpStep::Result(r.output, r.is_error),
            Err(McpError::Unauthorized(challenge)) if !signed_in => McpStep::SignIn(challenge),
            Err(McpError::Unauthorized(_)) => McpStep::Failed(
                "unauthorized",
                format!("{} refused the call after the sign-in", conn.display_name),
            ),
            Err(McpError::Failed(why)) => McpStep::Failed("tool_error", why),
        }
    }

    /// Parks the turn on the sign-in `conn`'s server asked for.
    fn sign_in(
        &mut self,
        at: &StepRef,
        turn: &TurnRef,
        call: &ToolCall,
        conn: &McpConnection,
        challenge: Option<String>,
    ) -> Result<(), Fenced> {
        let attempt_id = format!("auth_{}", call.id);
        let url = self.host.connect_url(&attempt_id);
        let mut instructions = format!("Connect {} to continue.", conn.display_name);
        if let Some(c) = challenge {
            instructions.push_str(CHALLENGE_PREFIX);
            instructions.push_str(&c);
        }
        self.emit(Event::AuthorizationRequired(AuthorizationRequired {
            attempt_id,
            authorization: AuthorizationChallenge {
                url: Some(url),
                display_name: Some(conn.display_name.clone()),
                instructions: Some(instructions),
            },
            call_id: Some(call.id.clone()),
            description: conn.description.clone(),
            name: conn.name.clone(),
            at: at.clone(),
        }))?;
        self.emit(Event::TurnWaiting(TurnWaiting {
            on: "input".into(),
            at: turn.clone(),
        }))
    }

    /// Writes a finished tool's `action.result` (an oversized output is stored aside).
    fn tool_done(
        &mut self,
        at: &StepRef,
        call: &ToolCall,
        output: Value,
        is_error: bool,
    ) -> Result<(), Fenced> {
        let (shown, aside) = tools::bound_output(output);
        if let Some(full) = &aside {
            self.host.store_output_aside(&call.id, full);
        }
        let (status, error) = if is_error {
            let message = shown
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("the tool failed")
                .to_string();
            (
                "failed",
                Some(ActionError {
                    code: "tool_error".into(),
                    message,
                }),
            )
        } else {
            ("completed", None)
        };
        self.emit(action_result(at, call, shown, is_error, status, error))
    }

    fn emit(&mut self, event: Event) -> Result<(), Fenced> {
        self.host.emit(&event)?;
        self.log.push(event);
        Ok(())
    }

    fn cancelled(&mut self) -> Result<TurnOutcome, Fenced> {
        for e in cancel_events(&self.ctx.session_id, &self.log) {
            self.emit(e)?;
        }
        Ok(TurnOutcome::Cancelled)
    }

    fn failed(&mut self, at: &StepRef, message: &str) -> Result<TurnOutcome, Fenced> {
        for e in failed_events(
            &self.ctx.session_id,
            &self.log,
            at,
            MODEL_CALL_FAILED,
            message,
        ) {
            self.emit(e)?;
        }
        Ok(TurnOutcome::Failed(message.into()))
    }

    fn completed(&mut self, at: &TurnRef) -> Result<TurnOutcome, Fenced> {
        self.emit(Event::TurnCompleted(at.clone()))?;
        let waiting = session_waiting(&self.ctx.session_id, &self.log);
        self.emit(waiting)?;
        Ok(TurnOutcome::Completed)
    }

    fn run(&mut self, model: &mut dyn Model) -> Result<TurnOutcome, Fenced> {
        let Some(open) = transcript::open_turn(&self.log) else {
            return Ok(TurnOutcome::Idle);
        };
        if matches!(self.log.last(), Some(Event::TurnWaiting(_))) {
            return Ok(TurnOutcome::Waiting);
        }
        let mut specs = tools::specs();
        let mut servers = self.mcp_servers();
        for s in servers.values() {
            specs.extend(s.specs.iter().cloned());
        }
        let mut step = open.step;
        let mut state = open.step_state;
        let mut usage: Option<StepUsage> = None;
        loop {
            let at = open.turn.step(step);
            let calls = match state {
                StepState::Calls(calls) => calls,
                StepState::Fresh | StepState::Interrupted => {
                    if step >= MAX_STEPS {
                        return self.completed(&open.turn);
                    }
                    // Checkpoint 1: before a model call.
                    if self.host.stop_requested() {
                        return self.cancelled();
                    }
                    self.emit(Event::StepStarted(StepStarted {
                        model_id: self.ctx.model_id.clone(),
                        at: at.clone(),
                    }))?;
                    let out = match self.model_step(model, &at, &specs)? {
                        Ok(out) => out,
                        Err(ModelError::Interrupted) => return self.cancelled(),
                        Err(ModelError::Provider { message, code }) => {
                            // Checkpoint 3: a call that failed because of a stop is a stop.
                            if self.host.stop_requested() {
                                return self.cancelled();
                            }
                            // The provider's words (its status, its body, the URL it could
                            // not reach) are for the operator's log: they can name accounts,
                            // quotas or internal hosts, and every reader of the stream sees
                            // what goes into it.
                            eprintln!(
                                "agent: model call failed in session {} ({code}): {message}",
                                self.ctx.session_id
                            );
                            return self.failed(&at, crate::provider::user_message(&code));
                        }
                    };
                    usage = out.usage;
                    if out.calls.is_empty() {
                        self.emit(Event::StepCompleted(StepCompleted {
                            finish_reason: finish_reason(false, None),
                            at: at.clone(),
                            usage: Some(usage.unwrap_or_default()),
                        }))?;
                        return self.completed(&open.turn);
                    }
                    let actions: Vec<ActionRequest> = out
                        .calls
                        .iter()
                        .map(|c| ActionRequest {
                            call_id: c.id.clone(),
                            input: c.input.clone(),
                            kind: "tool-call".into(),
                            tool_name: c.name.clone(),
                        })
                        .collect();
                    self.emit(Event::ActionsRequested(ActionsRequested {
                        actions: actions.clone(),
                        at: at.clone(),
                    }))?;
                    actions
                }
            };
            let turn_events = self.log[open.start..].to_vec();
            for action in transcript::unanswered(&turn_events, &calls) {
                let call = transcript::tool_call(action);
                // Checkpoint 4: before a tool call.
                if self.host.stop_requested() {
                    return self.cancelled();
                }
                if call.name == ASK_USER_TOOL {
                    match ask(&call, &at) {
                        Ok(event) => {
                            self.emit(event)?;
                            self.emit(Event::TurnWaiting(TurnWaiting {
                                on: "input".into(),
                                at: open.turn.clone(),
                            }))?;
                            return Ok(TurnOutcome::Waiting);
                        }
                        Err(message) => {
                            self.emit(failed_result(&at, &call, "invalid_input", message.into()))?;
                            continue;
                        }
                    }
                }
                if let Some((name, tool)) = mcp::split_tool_name(&call.name) {
                    let (name, tool) = (name.to_string(), tool.to_string());
                    if let Some(conn) = self.ctx.mcp.iter().find(|c| c.name == name).cloned() {
                        match self.mcp_call(&mut servers, &conn, &tool, &call) {
                            McpStep::Result(output, is_error) => {
                                self.tool_done(&at, &call, output, is_error)?
                            }
                            // A request the user's stop abandoned is a stop (checkpoint 5).
                            McpStep::Failed(..) if self.host.stop_requested() => {
                                return self.cancelled();
                            }
                            McpStep::Failed(code, message) => {
                                self.emit(failed_result(&at, &call, code, message))?
                            }
                            McpStep::SignIn(challenge) => {
                                self.sign_in(&at, &open.turn, &call, &conn, challenge)?;
                                return Ok(TurnOutcome::Waiting);
                            }
                        }
                        continue;
                    }
                }
                // Checkpoint 5: tools pause in slices and check for a stop.
                match tools::run(&call, &mut *self.host) {
                    ToolOutcome::Done { output, is_error } => {
                        self.tool_done(&at, &call, output, is_error)?
                    }
                    ToolOutcome::Interrupted => return self.cancelled(),
                }
            }
            self.emit(Event::StepCompleted(StepCompleted {
                finish_reason: "tool-calls".into(),
                at: at.clone(),
                usage: usage.take(),
            }))?;
            step += 1;
            state = StepState::Fresh;
        }
    }

    /// One model call: streams its deltas, then writes its completed blocks. The outer
    /// `Result` is a fence; the inner one the model's error.
    fn model_step(
        &mut self,
        model: &mut dyn Model,
        at: &StepRef,
        specs: &[crate::model::ToolSpec],
    ) -> Result<Result<StepOutput, ModelError>, Fenced> {
        let memory = self.host.memory().unwrap_or_default();
        let (mut messages, trimmed) =
            transcript::fit_context(transcript::messages(&self.log), self.ctx.context_chars);
        crate::attachments::resolve(&mut messages, &mut |id| self.host.attachment(id));
        if trimmed && !transcript::compacted_in_turn(&self.log) {
            // Said once per turn, as eve's own compaction: the model no longer sees the
            // oldest exchanges.
            let c = Compaction {
                model_id: self.ctx.model_id.clone(),
                sequence: at.sequence,
                session_id: self.ctx.session_id.clone(),
                step_index: at.step_index,
                turn_id: at.turn_id.clone(),
                usage_input_tokens: None,
            };
            self.emit(Event::CompactionRequested(c.clone()))?;
            self.emit(Event::CompactionCompleted(c))?;
        }
        let request = ModelRequest {
            system: system_prompt(&memory, self.ctx.client_context.as_deref()),
            messages,
            tools: specs.to_vec(),
        };
        let mut out = StepOutput::default();
        let mut fenced = false;
        let mut finish: Option<String> = None;
        let result = {
            let host = &mut *self.host;
            let log = &mut self.log;
            model.stream(&request, &mut |ev| {
                // Checkpoint 2: while the model streams.
                if host.stop_requested() {
                    return Flow::Stop;
                }
                let mut events = Vec::new();
                match ev {
                    ModelEvent::ReasoningDelta(delta) => {
                        out.reasoning.push_str(&delta);
                        events.push(Event::ReasoningAppended(ReasoningAppended {
                            reasoning_delta: delta,
                            at: at.clone(),
                        }));
                    }
                    ModelEvent::TextDelta(delta) => {
                        if !out.reasoning.is_empty() && !out.reasoning_done {
                            out.reasoning_done = true;
                            events.push(Event::ReasoningCompleted(ReasoningCompleted {
                                reasoning: out.reasoning.clone(),
                                at: at.clone(),
                            }));
                        }
                        out.text.push_str(&delta);
                        events.push(Event::MessageAppended(MessageAppended {
                            message_delta: delta,
                            at: at.clone(),
                        }));
                    }
                    ModelEvent::ToolCallStarted { id, name } => out.names.push((id, name)),
                    ModelEvent::ToolInputDelta { id, delta } => {
                        let name = out
                            .names
                            .iter()
                            .find(|(i, _)| *i == id)
                            .map(|(_, n)| n.clone())
                            .unwrap_or_default();
                        events.push(Event::ActionInputAppended(ActionInputAppended {
                            call_id: id,
                            input_text_delta: delta,
                            tool_name: name,
                            at: at.clone(),
                        }));
                    }
                    ModelEvent::ToolCallReady(call) => out.calls.push(call),
                    ModelEvent::Usage {
                        input_tokens,
                        output_tokens,
                    } => {
                        out.usage = Some(StepUsage {
                            input_tokens,
                            output_tokens,
                            cache_read_tokens: 0,
                        })
                    }
                    ModelEvent::Finished { reason } => finish = Some(reason),
                    ModelEvent::Waiting => {}
                }
                for e in events {
                    if host.emit(&e).is_err() {
                        fenced = true;
                        return Flow::Stop;
                    }
                    log.push(e);
                }
                Flow::Continue
            })
        };
        if fenced {
            return Err(Fenced);
        }
        if let Err(e) = result {
            return Ok(Err(e));
        }
        let mut close = |e: Event| -> Result<(), Fenced> {
            self.host.emit(&e)?;
            self.log.push(e);
            Ok(())
        };
        if !out.reasoning.is_empty() && !out.reasoning_done {
            out.reasoning_done = true;
            close(Event::ReasoningCompleted(ReasoningCompleted {
                reasoning: out.reasoning.clone(),
                at: at.clone(),
            }))?;
        }
        if !out.text.is_empty() {
            close(Event::MessageCompleted(MessageCompleted {
                finish_reason: finish_reason(!out.calls.is_empty(), finish.as_deref()),
                message: out.text.clone(),
                at: at.clone(),
            }))?;
        }
        Ok(Ok(out))
    }
}

/// The `input.requested` of an `ask_user` call.
fn ask(call: &ToolCall, at: &StepRef) -> Result<Event, &'static str> {
    let prompt = call
        .input
        .get("prompt")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_string();
    if prompt.is_empty() {
        return Err("ask_user needs a prompt");
    }
    let options: Vec<InputOption> = call
        .input
        .get("options")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .take(10)
                .enumerate()
                .map(|(i, label)| InputOption {
                    id: format!("option_{i}"),
                    label: label.to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(Event::InputRequested(InputRequested {
        call_id: call.id.clone(),
        requests: vec![InputRequest {
            action: ActionRequest {
                call_id: call.id.clone(),
                input: call.input.clone(),
                kind: "tool-call".into(),
                tool_name: call.name.clone(),
            },
            allow_freeform: Some(true),
            display: Some(if options.is_empty() { "text" } else { "select" }.into()),
            kind: "question".into(),
            options,
            prompt,
            request_id: format!("req_{}", call.id),
        }],
        at: at.clone(),
    }))
}

#[cfg(test)]
pub mod testing {
    //! A recording [`TurnHost`] for native tests.
    use super::*;

    /// Records events; stops after a given number of checkpoints (or when `stop_when` says);
    /// counts tool side effects; fences after `fence_after` events.
    #[derive(Default)]
    pub struct Host {
        pub events: Vec<Event>,
        pub checks: usize,
        pub stop_at_check: Option<usize>,
        pub stop_when: Option<fn(&[Event]) -> bool>,
        pub memory: String,
        pub fence_after: Option<usize>,
        pub pauses: usize,
    }

    impl ToolHost for Host {
        fn memory(&mut self) -> Result<String, String> {
            Ok(self.memory.clone())
        }
        fn replace_memory(&mut self, expected: &str, d: &str) -> Result<bool, String> {
            if self.memory != expected {
                return Ok(false);
            }
            self.memory = d.into();
            Ok(true)
        }
        fn pause(&mut self, _ms: u64) -> bool {
            self.pauses += 1;
            !self.stop_requested()
        }
        fn now_ms(&mut self) -> i64 {
            1_796_105_696_230
        }
    }

    impl TurnHost for Host {
        fn emit(&mut self, event: &Event) -> Result<(), Fenced> {
            if self.fence_after.is_some_and(|n| self.events.len() >= n) {
                return Err(Fenced);
            }
            self.events.push(event.clone());
            Ok(())
        }
        fn stop_requested(&mut self) -> bool {
            self.checks += 1;
            self.stop_at_check.is_some_and(|n| self.checks >= n)
                || self.stop_when.is_some_and(|f| f(&self.events))
        }
        fn store_output_aside(&mut self, _: &str, _: &str) {}
        fn connect_url(&self, id: &str) -> String {
            format!("/eve/v1/session/s/authorizations/{id}")
        }
        fn mcp_http(&mut self) -> &mut dyn crate::mcp::McpHttp {
            self
        }
        fn connection_token(&mut self, _: &str) -> Option<String> {
            None
        }
    }

    /// No MCP server is configured in these tests; the real servers are in tests/tests/mcp.rs.
    impl crate::mcp::McpHttp for Host {
        fn post(
            &mut self,
            url: &str,
            _: &[(String, String)],
            _: &[u8],
        ) -> Result<crate::mcp::HttpAnswer, String> {
            Err(format!("{url} is not reachable in unit tests"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::Host;
    use super::*;
    use crate::demo::DemoModel;

    fn demo() -> DemoModel<fn(u64)> {
        DemoModel {
            pacing_ms: 0,
            sleep: |_| {},
        }
    }

    fn ctx() -> TurnContext {
        TurnContext {
            session_id: "wrun_s".into(),
            model_id: "demo/eve-demo".into(),
            client_context: None,
            context_chars: usize::MAX,
            mcp: Vec::new(),
        }
    }

    fn opened(text: &str) -> Vec<Event> {
        start_events(0, true, text, &[MessagePart::Text { text: text.into() }])
    }

    fn types(events: &[Event]) -> Vec<&'static str> {
        events.iter().map(Event::type_name).collect()
    }

    /// Runs the turn of `log` on `h`; the log with the new events.
    fn drive(h: &mut Host, log: Vec<Event>) -> (TurnOutcome, Vec<Event>) {
        let out = run(h, &mut demo(), log.clone(), &ctx());
        let mut all = log;
        all.append(&mut h.events);
        (out, all)
    }

    #[test]
    fn a_turn_that_ended_without_its_session_event_is_settled() {
        let (_, log) = drive(&mut Host::default(), opened("hi"));
        assert_eq!(unsettled_end("wrun_s", &log), None, "settled already");
        let ended = &log[..log.len() - 1];
        assert_eq!(
            unsettled_end("wrun_s", ended).map(|e| e.type_name()),
            Some("session.waiting")
        );
        let (_, failed) = drive(&mut Host::default(), opened("please fail"));
        let Some(Event::SessionFailed(want)) = failed.last().cloned() else {
            panic!("{:?}", types(&failed))
        };
        assert_eq!(
            unsettled_end("wrun_s", &failed[..failed.len() - 1]),
            Some(Event::SessionFailed(want))
        );
        assert_eq!(
            unsettled_end("wrun_s", &opened("hi")),
            None,
            "a turn still open"
        );
    }

    #[test]
    fn a_turn_opens_with_session_started_turn_started_and_message_received() {
        assert_eq!(
            types(&opened("hi")),
            vec!["session.started", "turn.started", "message.received"]
        );
        assert_eq!(
            types(&start_events(3, false, "hi", &[])),
            vec!["turn.started", "message.received"]
        );
    }

    #[test]
    fn a_tool_turn_is_eves_step_sequence() {
        let (out, log) = drive(&mut Host::default(), opened("weather in Paris"));
        assert_eq!(out, TurnOutcome::Completed);
        let t = types(&log);
        let pos = |x: &str| t.iter().position(|y| *y == x).unwrap();
        assert!(pos("step.started") < pos("actions.requested"));
        assert!(pos("actions.requested") < pos("action.result"));
        assert!(pos("action.result") < pos("step.completed"), "{t:?}");
        assert_eq!(&t[t.len() - 2..], ["turn.completed", "session.waiting"]);
        let steps: Vec<u64> = log
            .iter()
            .filter_map(|e| match e {
                Event::StepStarted(s) => Some(s.at.step_index),
                _ => None,
            })
            .collect();
        assert_eq!(steps, vec![0, 1]);
        let Some(Event::StepCompleted(first)) =
            log.iter().find(|e| matches!(e, Event::StepCompleted(_)))
        else {
            panic!()
        };
        assert_eq!(first.finish_reason, "tool-calls");
        let text: String = log
            .iter()
            .filter_map(|e| match e {
                Event::MessageAppended(m) => Some(m.message_delta.as_str()),
                _ => None,
            })
            .collect();
        let completed = log.iter().rev().find_map(|e| match e {
            Event::MessageCompleted(m) => Some(m.message.clone()),
            _ => None,
        });
        assert_eq!(
            completed.as_deref(),
            Some(text.as_str()),
            "completed is the deltas joined"
        );
        let Some(Event::SessionWaiting(w)) = log.last() else {
            panic!()
        };
        assert_eq!(w.continuation_token, "wrun_s");
        assert!(w.usage.unwrap().input_tokens > 0);
    }

    #[test]
    fn a_cancel_before_the_model_call_ends_the_turn_cancelled() {
        let mut h = Host {
            stop_at_check: Some(1),
            ..Default::default()
        };
        let (out, log) = drive(&mut h, opened("hello"));
        assert_eq!(out, TurnOutcome::Cancelled);
        assert_eq!(&types(&log)[3..], ["turn.cancelled", "session.waiting"]);
    }

    #[test]
    fn a_cancel_while_streaming_stops_the_step_without_completing_it() {
        let mut h = Host {
            stop_when: Some(|e| {
                e.iter()
                    .filter(|e| matches!(e, Event::MessageAppended(_)))
                    .count()
                    >= 3
            }),
            ..Default::default()
        };
        let (out, log) = drive(&mut h, opened("count to 100"));
        assert_eq!(out, TurnOutcome::Cancelled);
        let t = types(&log);
        assert!(
            !t.contains(&"message.completed") && !t.contains(&"step.completed"),
            "{t:?}"
        );
        assert_eq!(&t[t.len() - 2..], ["turn.cancelled", "session.waiting"]);
    }

    #[test]
    fn a_cancel_while_a_tool_runs_answers_the_call_as_cancelled_in_the_history() {
        let mut h = Host {
            stop_when: Some(|e| e.iter().any(|e| matches!(e, Event::ActionsRequested(_)))),
            ..Default::default()
        };
        let (out, log) = drive(&mut h, opened("wait 5"));
        assert_eq!(out, TurnOutcome::Cancelled);
        assert!(
            !log.iter().any(|e| matches!(e, Event::ActionResult(_))),
            "the stopped call is not answered on the stream, as eve"
        );
        // The model's history stays consistent: the call and a cancelled result both appear.
        let m = transcript::messages(&log);
        let answered = m.iter().any(|m| {
            matches!(m, crate::model::ModelMessage::ToolResult { content, is_error: true, .. }
                if content.contains(CANCELLED_BY_USER))
        });
        assert!(answered, "{m:?}");
    }

    #[test]
    fn a_provider_failure_is_eves_terminal_cascade() {
        let (out, log) = drive(&mut Host::default(), opened("please fail"));
        assert!(matches!(out, TurnOutcome::Failed(_)));
        let t = types(&log);
        assert_eq!(
            &t[t.len() - 3..],
            ["step.failed", "turn.failed", "session.failed"]
        );
        let Some(Event::TurnFailed(f)) = log.iter().find(|e| matches!(e, Event::TurnFailed(_)))
        else {
            panic!()
        };
        assert_eq!(
            (f.code.as_str(), f.terminal),
            (MODEL_CALL_FAILED, Some(true))
        );
        assert!(transcript::is_terminal(&log));
        // The provider's own text stays in the log; the stream says only that it failed.
        assert_eq!(f.message, "The model provider returned an error.");
        let streamed = serde_json::to_string(&log).unwrap();
        assert!(!streamed.contains("simulated failure"), "{streamed}");
    }

    #[test]
    fn a_question_parks_the_turn_and_its_answer_continues_it() {
        let (out, log) = drive(&mut Host::default(), opened("ask me something"));
        assert_eq!(out, TurnOutcome::Waiting);
        assert_eq!(
            &types(&log)[log.len() - 2..],
            ["input.requested", "turn.waiting"]
        );
        let q = pending_question(&log).expect("a pending question");
        assert_eq!(q.kind, "question");
        let response = InputResponse {
            request_id: q.request_id.clone(),
            option_id: q.options.first().map(|o| o.id.clone()),
            text: None,
        };
        let mut log = log;
        let answer = answer_events(&log, &response).unwrap();
        assert_eq!(types(&answer), ["input.resolved", "action.result"]);
        log.extend(answer);
        let (out, log) = drive(&mut Host::default(), log);
        assert_eq!(out, TurnOutcome::Completed);
        assert_eq!(
            &types(&log)[log.len() - 2..],
            ["turn.completed", "session.waiting"]
        );
        // One turn throughout: every event carries turn_0.
        assert!(log
            .iter()
            .all(|e| !matches!(e, Event::TurnStarted(t) if t.sequence != 0)));
        let wrong = InputResponse {
            request_id: "req_other".into(),
            option_id: None,
            text: Some("x".into()),
        };
        assert_eq!(answer_events(&log, &wrong), None);
    }

    #[test]
    fn a_parked_question_is_withdrawn_by_a_cancel() {
        let (_, log) = drive(&mut Host::default(), opened("ask me something"));
        let v = cancel_events("wrun_s", &log);
        assert_eq!(
            types(&v),
            ["input.resolved", "turn.cancelled", "session.waiting"]
        );
        let Event::InputResolved(r) = &v[0] else {
            panic!()
        };
        assert_eq!(r.resolutions[0].outcome, "cancelled");
    }

    #[test]
    fn a_turn_whose_runner_died_mid_step_runs_that_step_again() {
        // The runner died after streaming part of step 0 of a plain answer.
        let mut h = Host {
            fence_after: Some(8),
            ..Default::default()
        };
        let (out, log) = drive(&mut h, opened("count to 30"));
        assert_eq!(out, TurnOutcome::Fenced);
        let (out, all) = drive(&mut Host::default(), log.clone());
        assert_eq!(out, TurnOutcome::Completed);
        let restarted: Vec<u64> = all[log.len()..]
            .iter()
            .filter_map(|e| match e {
                Event::StepStarted(s) => Some(s.at.step_index),
                _ => None,
            })
            .collect();
        assert_eq!(
            restarted,
            vec![0],
            "the interrupted step runs again under its index"
        );
        let completed: Vec<&str> = all
            .iter()
            .filter_map(|e| match e {
                Event::MessageCompleted(m) => Some(m.message.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(completed.len(), 1);
        assert!(completed[0].starts_with('1'), "{completed:?}");
    }

    #[test]
    fn a_resumed_turn_does_not_run_a_tool_whose_result_is_persisted() {
        // Died right after the first tool result of "weather in Paris and Tokyo".
        let stop_after_result = |e: &[Event]| e.iter().any(|e| matches!(e, Event::ActionResult(_)));
        let mut h = Host::default();
        let log = opened("weather in Paris and Tokyo");
        let _ = run(&mut h, &mut demo(), log.clone(), &ctx());
        let cut = h
            .events
            .iter()
            .position(|e| matches!(e, Event::ActionResult(_)))
            .unwrap()
            + 1;
        let mut partial = log;
        partial.extend(h.events[..cut].iter().cloned());
        assert!(stop_after_result(&partial));
        let mut h2 = Host::default();
        let (out, all) = drive(&mut h2, partial.clone());
        assert_eq!(out, TurnOutcome::Completed);
        let results = all
            .iter()
            .filter(|e| matches!(e, Event::ActionResult(_)))
            .count();
        assert_eq!(results, 2, "one persisted, one run now — not three");
    }

    #[test]
    fn a_fenced_runner_writes_nothing_more() {
        let mut h = Host {
            fence_after: Some(2),
            ..Default::default()
        };
        let (out, log) = drive(&mut h, opened("hello"));
        assert_eq!(out, TurnOutcome::Fenced);
        assert_eq!(log.len(), 3 + 2);
    }
}
