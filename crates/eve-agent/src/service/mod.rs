//! What the agent's routes do, in terms of the domains below it: the `agent` component parses
//! a request, calls one function here, and writes the reply. The platform is behind
//! [`env::AgentEnv`] (clock, variables, outbound HTTP) and the database behind
//! `eve_store::sql::Sql`, so all of it runs natively in tests.
//!
//! - [`sessions`]: create, send, cancel, clear / compact, reset; with [`uploads`] (a
//!   message's files: policy, quota, kept all or nothing, served back).
//! - [`sign_in`]: the connect page, the OAuth callback, the connection menu.
//! - [`stream`]: `GET /eve/v1/session/:id/stream` (following, keep-alives, take-over).
//! - [`info`]: `GET /eve/v1/info`.
//! - [`work`]: running a session's work after the request answered (the inbox, turns,
//!   resume), over [`runner`] (the lease and the [`crate::turn::TurnHost`] over the store).
//! - [`connection_tokens`]: the caller's sealed connection tokens, refreshed when due.
//! - [`tool_approvals`]: the owner's approval policies (setting, else variable).
//! - [`env`]: the seam to the platform and the configuration read through it.

pub mod connection_tokens;
pub mod env;
pub mod info;
pub mod project_files;
pub mod runner;
pub mod sessions;
pub mod sign_in;
pub mod stream;
pub mod tool_approvals;
pub mod uploads;
pub mod work;

#[cfg(test)]
mod project_files_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod usage_tests;
