//! The agent's logic, free of Spin so that it is unit-tested natively. The `agent` component
//! is thin glue over it (HTTP, SQLite, clocks); `eve-proxy` uses [`protocol`] and [`jwt`].
//! The agent speaks eve's v1 protocol (`eve_api::eve`); `docs/eve-protocol.md` says where it
//! differs from the reference and why.
//!
//! - Protocol: [`protocol`] (routes, request validation with eve's error texts), [`framing`]
//!   (NDJSON / SSE lines, keep-alives, cursors, the SSE decoder of provider streams),
//!   [`ids`] (event, session and delivery ids), [`info`] (`GET /eve/v1/info`), [`jwt`] (the
//!   proxy's HS256 bearer token, as eve's `jwtHmac` verifies it).
//! - Session: [`store`] (tables and SQL: sessions with leases, the event log, the inbox,
//!   memory, connection grants, outputs stored aside), [`transcript`] (the log read back: the
//!   model's history, the open turn), [`resume`] (what a turn whose runner died becomes).
//! - Turn: [`turn`] (one turn as eve's event sequence, with the five cancel checkpoints).
//! - Files: [`attachments`] (eve's upload policy, decoding, what a model call gets of a file).
//! - Providers: [`model`], [`provider`], [`demo`], [`openai`], [`anthropic`], [`config`].
//! - Tools: [`tools`], [`memory`], [`connections`], [`oauth`], [`mcp`] (MCP servers: config and client), [`mcp_oauth`] (their sign-in).

pub mod anthropic;
pub mod attachments;
pub mod config;
pub mod connections;
pub mod demo;
pub mod framing;
pub mod ids;
pub mod info;
pub mod jwt;
pub mod mcp;
pub mod mcp_oauth;
pub mod memory;
pub mod model;
pub mod oauth;
pub mod openai;
pub mod protocol;
pub mod provider;
pub mod resume;
pub mod store;
pub mod tools;
pub mod transcript;
pub mod turn;
