//! What the agent can use, managed while it runs (issue 22, docs/runtime.md): model
//! providers, MCP servers and system settings kept as data and read per turn, the Spin
//! variables remaining the bootstrap.
//!
//! - [`sealed`]: secrets at rest (XChaCha20-Poly1305 under `secrets_key`), rotation.
//! - [`settings`]: the system settings (`system_setting`): typed readers, checked patches.
//! - [`mcp_servers`]: MCP servers an admin adds while the app runs, their tools, what the
//!   agent reads of them per turn.
//! - [`outbound`]: the guard on URLs an admin enters (https, no private ranges unless allowed).

pub mod mcp_servers;
pub mod outbound;
pub mod sealed;
pub mod settings;
