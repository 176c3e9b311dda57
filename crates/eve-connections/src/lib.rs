//! The agent's links to the outside world on the user's behalf: MCP servers ([`mcp`]: their
//! configuration and JSON-RPC client), signing in to them ([`mcp_oauth`]: discovery, PKCE, sealed tokens;
//! [`oauth`]: query encoding and token answers; [`flow_state`]: the signed `state`), which connections a
//! turn may use ([`enabled`]), and the token `eve-proxy` presents to the agent ([`jwt`]).
//!
//! Below the agent (`eve-agent`): nothing here knows about sessions or turns; `eve-proxy`
//! and `slack` name [`jwt`] through `eve_agent::connections`.

pub mod enabled;
pub mod flow_state;
pub mod jwt;
pub mod mcp;
pub mod mcp_oauth;
pub mod oauth;
