//! Models: the [`model::Model`] seam the turn drives and [`tool`], what a tool is to a model;
//! the streaming core every provider reports through ([`stream`]) and the HTTP plumbing every
//! remote provider shares ([`http`]); the providers themselves
//! ([`demo`], [`openai`], [`anthropic`]); what a model call gets of a file ([`files`]); and
//! which one a turn gets ([`config`]: the variables; [`offered`]: with the admins' providers),
//! logged ([`logged`]) or tried once by an admin ([`probe`]); which failed calls are tried
//! again, and when ([`retry`]). Where a provider's stream is parsed, it is in that provider's
//! file.
//!
//! Below the agent (`eve-agent`): nothing here knows about sessions, turns or MCP servers.

pub mod anthropic;
pub mod config;
pub mod demo;
pub mod files;
pub mod http;
pub mod logged;
pub mod model;
pub mod offered;
pub mod openai;
pub mod probe;
pub mod retry;
pub mod stream;
#[cfg(test)]
pub(crate) mod testing;
pub mod tool;
