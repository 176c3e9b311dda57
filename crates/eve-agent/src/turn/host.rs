//! What a turn needs from its environment ([`TurnHost`]), what it runs with ([`TurnContext`]),
//! how it ends or stops for now ([`TurnOutcome`]), and its log as it grows ([`TurnLog`]):
//! every event is persisted through the host before the turn reads it back.

use eve_api::eve::Event;

use crate::connections::mcp::{McpConnection, McpHttp};
use crate::tools::builtin::ToolHost;

/// This runner no longer owns the session (its lease was taken over): stop without writing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fenced;

/// What a turn needs from its environment.
pub trait TurnHost: ToolHost {
    /// Persists `event` as the session's next event (before any reader sees it).
    fn emit(&mut self, event: &Event) -> Result<(), Fenced>;
    /// A checkpoint: whether the turn was asked to stop. Also keeps the lease alive.
    fn stop_requested(&mut self) -> bool;
    /// Keeps an oversized tool output aside as a temp file of the session's project (or of
    /// the session) that `read_file` reads; its path (`None`: it could not be kept).
    fn store_output_aside(&mut self, call_id: &str, output: &str) -> Option<String>;
    /// The admins' base instructions (the `instructions` setting), read per model call;
    /// `None`: the built-in ones.
    fn base_instructions(&mut self) -> Option<String> {
        None
    }
    /// The instructions of the project the session's chat is in (docs/projects.md).
    fn project_instructions(&mut self) -> Option<String> {
        None
    }
    /// The skills offered to the session's principal (docs/skills.md), by name.
    fn skills(&mut self) -> Vec<eve_skills::store::Offered> {
        Vec::new()
    }
    /// Runs one of the file tools (`eve_projects::tools::NAMES`) over the session's files.
    fn file_tool(&mut self, _name: &str, _input: &serde_json::Value) -> (serde_json::Value, bool) {
        (
            serde_json::json!({ "error": "files are not available here" }),
            true,
        )
    }
    /// Where the user authorizes a connection for this session.
    fn connect_url(&self, attempt_id: &str) -> String;
    /// The network to MCP servers.
    fn mcp_http(&mut self) -> &mut dyn McpHttp;
    /// The caller's token for `connection`, from its sign-in.
    fn connection_token(&mut self, connection: &str) -> Option<String>;
    /// Why `connection` may not be called now, asked again before each call: a server added
    /// as data whose URL the outbound guard refuses today (the allow-list shrank), or that was
    /// disabled or removed since the turn listed it. `None`: call it.
    fn mcp_blocked(&mut self, _connection: &str) -> Option<String> {
        None
    }
    /// The bytes of the session principal's attachment `id`, or of the project file `id` a
    /// message named (`None`: gone, or not theirs).
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
    /// ([`crate::providers::config::ModelChoice::context_chars`]); older exchanges are trimmed.
    pub context_chars: usize,
    /// The configured MCP servers (`mcp_connections`).
    pub mcp: Vec<McpConnection>,
    /// The owner's approval policies by tool ([`crate::service::tool_approvals`]).
    pub tool_approvals: crate::turn::approvals::Policies,
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

/// The turn's log as it grows: an event is persisted through the host first, then kept.
pub(crate) struct TurnLog<'h> {
    pub host: &'h mut dyn TurnHost,
    pub events: Vec<Event>,
}

impl TurnLog<'_> {
    /// Persists `event`, then keeps it.
    pub fn emit(&mut self, event: Event) -> Result<(), Fenced> {
        self.host.emit(&event)?;
        self.events.push(event);
        Ok(())
    }

    /// Persists and keeps `events` in order, stopping at a fence.
    pub fn emit_all(&mut self, events: Vec<Event>) -> Result<(), Fenced> {
        for e in events {
            self.emit(e)?;
        }
        Ok(())
    }
}
