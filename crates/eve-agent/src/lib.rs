//! The agent's logic, free of Spin so that it is unit-tested natively. The `agent` component
//! is thin glue over it (HTTP, SQLite, clocks); `eve-proxy` uses [`assertion`] and
//! [`request`].
//!
//! - [`framing`]: NDJSON / SSE framing of stored events, keep-alives, `Last-Event-ID`, and the
//!   SSE decoder of provider streams.
//! - [`store`]: the agent's tables and SQL (sessions with leases, the event log, memory,
//!   connection grants, outputs stored aside).
//! - [`turn`]: one turn as a state machine with the five interrupt checkpoints; [`transcript`]:
//!   the log read back for the model, open tool calls, synthetic results; [`resume`]: what a
//!   turn whose runner died becomes (resumed by deterministic replay, or settled).
//! - [`model`], [`provider`], [`demo`], [`openai`], [`anthropic`], [`config`]: model providers.
//! - [`tools`], [`memory`], [`connections`]: tools, the memory document with its secret check,
//!   Notion / Linear / Sentry.
//! - [`assertion`]: the signed principal header from the proxy to the agent.
//! - [`request`]: validation of `/eve/v1` request bodies and routes.

pub mod anthropic;
pub mod assertion;
pub mod config;
pub mod connections;
pub mod demo;
pub mod framing;
pub mod memory;
pub mod model;
pub mod oauth;
pub mod openai;
pub mod provider;
pub mod request;
pub mod resume;
pub mod store;
pub mod tools;
pub mod transcript;
pub mod turn;
