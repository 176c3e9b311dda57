//! What a tool is to a model: the spec it is offered and a call it makes. Built-in tools,
//! MCP servers' tools and every provider share these shapes.

use serde_json::Value;

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the input object.
    pub input_schema: Value,
}

/// A complete tool call (id, name, full input).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub input: Value,
}

/// The longest the built-in `wait` tool runs, in seconds; the demo model asks for no more.
pub const MAX_WAIT_SECS: u64 = 120;
