//! What the agent can use, managed while it runs (issue 22, docs/runtime.md): model
//! providers, MCP servers and system settings kept as data and read per turn, the Spin
//! variables remaining the bootstrap.
//!
//! - [`sealed`]: secrets at rest (XChaCha20-Poly1305 under `secrets_key`), rotation.
//! - [`settings`]: the system settings (`system_setting`): typed readers, checked patches.
//! - [`mcp_servers`]: MCP servers an admin adds while the app runs, their tools, what the
//!   agent reads of them per turn.
//! - [`outbound`]: the guard on URLs an admin enters (https, no private ranges unless allowed).
//! - [`providers`]: model providers as data, their models and sealed API keys.
//! - [`rotate`]: re-seals every domain's secrets under the current key.

pub mod mcp_servers;
pub mod outbound;
pub mod providers;
pub mod sealed;
pub mod settings;

use eve_api::providers::Rotation;
use eve_api::ApiError;
use eve_store::sql::Sql;

/// `POST /api/admin/secrets/rotate`: re-seals every secret not under the current key, each
/// domain by its own function (providers' API keys, MCP servers' bearer tokens), and sums what
/// was re-sealed and what is left.
pub fn rotate<S: Sql + ?Sized>(db: &S, keys: &sealed::Keys) -> Result<Rotation, ApiError> {
    let domains = [providers::reseal(db, keys)?, mcp_servers::reseal(db, keys)?];
    Ok(domains.iter().fold(Rotation::default(), |a, d| Rotation {
        resealed: a.resealed + d.resealed,
        remaining: a.remaining + d.remaining,
    }))
}
