//! The wire contracts shared by every component and every test: one definition each.
//!
//! - [`error`]: the JSON error envelope `{ "error": { "code", "message" } }` and its codes.
//! - [`chat`]: the `/api/chats` shapes (chat store).
//! - [`auth`]: the `/api/auth/*` and `/api/setup` shapes.
//! - [`accounts`]: accounts mode's sign-up, settings and `/api/admin/*` account shapes.
//! - [`eve`]: eve's v1 session protocol (`/eve/v1/*`): requests, answers, events and envelope.
//! - [`tokens`]: the `/api/tokens` shapes (API tokens).
//! - [`usage`]: model usage, quotas and model access (`/api/admin/usage`, `…/quota`, `…/models`).
//! - [`projects`]: the `/api/projects` shapes (projects, their files).
//! - [`settings`]: the system settings (`/api/admin/settings`, docs/runtime.md).
//! - [`mcp_servers`]: the `/api/admin/mcp-servers` shapes (MCP servers as data, issue 22).
//! - [`providers`]: model providers as data and secret rotation (`/api/admin/providers*`,
//!   `/api/admin/secrets/rotate`; docs/runtime.md).
//! - [`variables`]: the reader of the deployment's numeric variables (clamped and logged).

pub mod accounts;
pub mod auth;
pub mod chat;
pub mod error;
pub mod eve;
pub mod mcp_servers;
pub mod path;
pub mod projects;
pub mod providers;
pub mod settings;
pub mod skills;
pub mod tokens;
pub mod usage;
pub mod variables;

pub use error::{ApiError, ErrorCode};
