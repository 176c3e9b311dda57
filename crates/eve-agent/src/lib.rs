//! The agent's logic, free of Spin so that it is unit-tested natively. The `agent` component
//! is thin glue over it (HTTP, SQLite, clocks); `eve-proxy` uses [`protocol`] and
//! [`connections::jwt`]. The agent speaks eve's v1 protocol (`eve_api::eve`);
//! `docs/eve-protocol.md` says where it differs from the reference and why, and has a map of
//! where things live.
//!
//! One folder per domain; each uses only the ones listed before it (no module imports one that
//! imports it back):
//!
//! - [`protocol`]: eve v1 on the wire: routes, request validation with eve's error texts,
//!   every size limit, the upload policy, NDJSON / SSE framing, ids.
//! - [`tools`]: what a tool is to a model, the built-in tools, long-term memory.
//! - [`providers`]: the model seam and its implementations: demo, OpenAI-compatible,
//!   Anthropic (each parses its own stream), their configuration, what a model call gets of a
//!   file.
//! - [`connections`]: MCP servers (client, OAuth sign-in, sealed tokens), which ones a turn may
//!   use, and the JWT the proxy presents.
//! - [`session`]: the durable session: the store and its SQL, the transcript read back from
//!   the event log, what a turn whose runner died becomes.
//! - [`turn`]: one turn as eve's event sequence: the step loop, cancel checkpoints, questions,
//!   authorizations (where a tool call waits for the user).
//! - [`service`]: what each route of the agent does, over the seams the component fills.

/// The crates below the agent, under the names its modules use.
pub use eve_connections as connections;
pub use eve_protocol as protocol;
pub use eve_providers as providers;
pub mod service;
pub mod session;
pub mod tools;
pub mod turn;

/// Old path of [`connections::jwt`], kept for the proxy's tests and benches.
pub use connections::jwt;
/// Old path of [`providers::config`], kept for the `auth` component.
pub use providers::config;
pub use providers::offered;
