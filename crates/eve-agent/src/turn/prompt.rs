//! The system prompt a model call gets: who the agent is, the memory rules, what it remembers
//! about the user, and the app's context for the turn.

use crate::tools::memory;

/// The agent's built-in base instructions, eve's `instructions.md` part of the prompt: what
/// the `instructions` setting replaces (docs/runtime.md "Settings").
pub const BASE_INSTRUCTIONS: &str =
    "You are eve, a helpful assistant in the eve-chat web app. Answer in Markdown. Use the tools when they help: \
     get_weather for weather questions; remember / recall / forget for long-term memory about the user.\n\
     Memory rules: remember only stable facts and preferences the user tells you. Never store passwords, tokens, \
     payment data, keys or one-time codes (the memory tool refuses them).\n\
     Connections (the owner's MCP servers, if any): use a connection's tool only when it is offered; the user \
     may have to authorize it first, which the app handles.";

/// The system prompt: `base` (an admin's instructions, else [`BASE_INSTRUCTIONS`]), then what
/// the agent remembers and the app's context for the turn.
pub fn system_prompt(base: Option<&str>, memory: &str, client_context: Option<&str>) -> String {
    let facts = memory::facts(memory);
    let remembered = if facts.is_empty() {
        "(nothing yet)".to_string()
    } else {
        facts
            .iter()
            .map(|f| format!("- {f}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let base = base
        .filter(|b| !b.trim().is_empty())
        .unwrap_or(BASE_INSTRUCTIONS);
    let mut s = String::from(base.trim_end());
    s.push_str("\n\n");
    s.push_str("What you remember about the user:\n");
    s.push_str(&remembered);
    if let Some(ctx) = client_context.filter(|c| !c.trim().is_empty()) {
        s.push_str("\n\nContext from the app for this turn: ");
        s.push_str(ctx.trim());
    }
    s
}
