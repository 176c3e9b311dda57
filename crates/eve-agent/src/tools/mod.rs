//! What the model may call that runs inside the agent: the built-in tools and their output
//! bounds ([`builtin`]), and long-term memory with its safety checks ([`memory`]), and the skills offered with
//! `eve__skill` ([`skills`]). Tools of
//! MCP servers are in [`crate::connections`]; approving a call is part of the turn
//! ([`crate::turn`]).

pub mod builtin;
pub mod memory;
pub mod skills;
/// What a tool is to a model is the providers' (`eve_providers::tool`).
pub use eve_providers::tool as spec;
