//! Sign-in for eve-chat as plain functions over plain values, unit-tested natively. The Spin
//! glue (`eve_spin::auth`, the `auth` component) reads variables and headers, calls these, and
//! writes responses; nothing here touches a host interface.
//!
//! - [`config`]: the Spin variables, the auth mode they select, and what is missing.
//! - [`cookie`]: the HMAC-SHA256 signed session cookie (sign, verify, rotate, refresh).
//! - [`password`]: the constant-time shared-password check.
//! - [`origin`]: same-origin guard for state-changing requests, and base-URL resolution.
//! - [`oidc`]: OpenID Connect pieces: PKCE, discovery, authorize URL, token and ID-token checks.
//! - [`setup`]: the `/api/setup` status.
//! - [`throttle`]: the client address behind trusted proxies, and the sign-in back-off.
//! - [`api_token`]: API tokens (`evc_…`): create, list, revoke, verify; SQL in [`api_token_sql`].
//! - [`activity`]: an account's `last_active_at`, recorded at most once an hour.
//! - [`standing`]: whether an account may go on (disabled, deleted, OIDC allowlist), from its row.
//! - [`crypto`]: base64url, HMAC and randomness used by the above.

pub mod activity;
pub mod api_token;
pub mod api_token_sql;
pub mod config;
pub mod cookie;
pub mod crypto;
pub mod oidc;
pub mod origin;
pub mod password;
pub mod setup;
pub mod standing;
pub mod throttle;

pub use config::{AuthConfig, VariableName};
pub use cookie::{CookieError, SessionClaims, SessionCodec, Verified};
