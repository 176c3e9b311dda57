//! The seam to the platform: what the agent's routes and its work need besides the database
//! (the clock, sleeping, variables, outbound HTTP, the proxy's token keys). The `agent`
//! component implements [`AgentEnv`] over Spin; native tests implement it in memory. The
//! configuration read through it (models, MCP servers, upload policy, storage quota) is
//! decided here, once.

use std::time::Duration;

use eve_runtime::mcp_servers::{self, AgentServer};
use eve_runtime::sealed::Keys;
use eve_store::sql::Sql;

use crate::connections::jwt::UpstreamJwt;
use crate::connections::mcp::{self, HttpAnswer, McpConnection, McpHttp};
use crate::protocol::uploads::UploadPolicy;
use crate::protocol::Refusal;
use crate::providers::config::ModelChoice;
use crate::providers::http::Transport;
use crate::providers::offered;

/// The HTTP methods of [`AgentEnv::fetch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
}

/// What the agent needs from the platform it runs on.
pub trait AgentEnv {
    /// Milliseconds since the epoch.
    fn now_ms(&self) -> i64;
    /// Waits `ms` milliseconds.
    fn sleep_ms(&self, ms: u64);
    /// A variable of the owner's configuration (`None`: unset).
    fn variable(&self, name: &str) -> Option<String>;
    /// The codec of the proxy's tokens for this configuration (`None`: none verifies).
    fn upstream_jwt(&self) -> Option<UpstreamJwt>;
    /// Outbound HTTP for the model providers.
    fn model_transport(&self) -> Box<dyn Transport>;
    /// One POST to an MCP server, its answer read whole within `timeout`; `waiting` runs
    /// between polls (`false` abandons the request).
    fn mcp_post(
        &self,
        url: &str,
        headers: &[(String, String)],
        body: &[u8],
        timeout: Duration,
        waiting: &mut dyn FnMut() -> bool,
    ) -> Result<HttpAnswer, String>;
    /// A small request (OAuth metadata, registration, tokens): its status and body.
    fn fetch(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<(u16, Vec<u8>), String>;
}

/// The MCP servers of the `mcp_connections` variable (the bootstrap); a broken value is
/// logged and gives none.
pub fn bootstrap_mcp_connections(env: &dyn AgentEnv) -> Vec<McpConnection> {
    mcp::parse_connections(env.variable("mcp_connections").as_deref()).unwrap_or_else(|e| {
        eprintln!("agent: {e}");
        Vec::new()
    })
}

/// Every MCP server the agent uses now: the variable's, then the enabled ones admins added
/// (docs/runtime.md), read from the database on each call so a server added while the app
/// runs is used on the next turn, on every node. Each added server's URL is checked against
/// the outbound guard with today's allow-list (a refusal blocks it: its tools are a tool
/// error, not a request). One named like a bootstrap server is left out; a database that
/// cannot be read gives the bootstrap alone (logged).
pub fn mcp_connections<S: Sql>(env: &dyn AgentEnv, db: &S) -> Vec<McpConnection> {
    let mut all = bootstrap_mcp_connections(env);
    let keys = sealing_keys(env);
    let data = outbound_allowed_hosts(env, db)
        .and_then(|allowed| mcp_servers::for_agent(db, keys.as_ref(), &allowed));
    let data = data.unwrap_or_else(|e| {
        eprintln!("agent: reading the MCP servers: {}", e.message);
        Vec::new()
    });
    for s in data {
        if all.iter().any(|c| c.name == s.name) {
            eprintln!(
                "agent: MCP server {:?} is also in mcp_connections; left out",
                s.name
            );
            continue;
        }
        all.push(connection_of(s));
    }
    all
}

fn connection_of(s: AgentServer) -> McpConnection {
    McpConnection {
        name: s.name,
        display_name: s.display_name,
        description: s.description,
        url: s.url,
        token: s.token,
        blocked: s.blocked,
    }
}

/// The hosts the outbound guard lets through (`outboundAllowedHosts`, else the
/// `outbound_allowed_hosts` variable).
pub fn outbound_allowed_hosts<S: Sql>(
    env: &dyn AgentEnv,
    db: &S,
) -> Result<Vec<String>, eve_api::ApiError> {
    mcp_servers::allowed_hosts(db, env.variable("outbound_allowed_hosts").as_deref())
}

/// The keys secrets are sealed with (`secrets_key`, `secrets_key_previous`); `None` when
/// unset or malformed (logged): sealed tokens then stay closed.
pub fn sealing_keys(env: &dyn AgentEnv) -> Option<Keys> {
    let current = env.variable("secrets_key");
    let previous = env.variable("secrets_key_previous");
    Keys::from_vars(current.as_deref(), previous.as_deref()).unwrap_or_else(|e| {
        eprintln!("agent: {e}");
        None
    })
}

/// MCP requests over the platform with the configured timeout, for a caller no user can stop
/// (the admin's refresh of a server's tools).
pub struct PlatformMcpHttp<'a>(pub &'a dyn AgentEnv);

impl McpHttp for PlatformMcpHttp<'_> {
    fn post(
        &mut self,
        url: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<HttpAnswer, String> {
        let timeout = mcp_timeout(self.0);
        self.0.mcp_post(url, headers, body, timeout, &mut || true)
    }
}

/// The models offered, the default first: the owner's (`llm_models`), then the admins'
/// providers read from `db` now ([`offered::choices`]).
pub fn model_choices<S: Sql + ?Sized>(
    env: &dyn AgentEnv,
    db: &S,
) -> Result<Vec<ModelChoice>, offered::Unoffered> {
    offered::choices(|name| env.variable(name), db)
}

/// [`model_choices`] for a request: a wrong list is 400 (logged), a database out of reach
/// 503.
pub fn offered_models<S: Sql + ?Sized>(
    env: &dyn AgentEnv,
    db: &S,
) -> Result<Vec<ModelChoice>, Refusal> {
    model_choices(env, db).map_err(|e| match e {
        offered::Unoffered::Database(e) => db_refusal(e),
        offered::Unoffered::Config(e) => {
            eprintln!("agent: {e}");
            Refusal::bad_request("The model list is misconfigured.")
        }
    })
}

/// The owner's upload policy (`attachment_max_bytes`, `attachment_types`,
/// `attachment_quota_bytes`).
pub fn upload_policy(env: &dyn AgentEnv) -> UploadPolicy {
    UploadPolicy::from_vars(
        env.variable("attachment_max_bytes").as_deref(),
        env.variable("attachment_types").as_deref(),
        env.variable("attachment_quota_bytes").as_deref(),
    )
}

/// How long an MCP call may take (`mcp_timeout_secs`, default 30 s).
/// The principal's storage cap (`principal_max_bytes`; an account's override wins in SQL).
pub fn storage_max(env: &dyn AgentEnv) -> u64 {
    let max = env.variable("principal_max_bytes");
    eve_store::limits::storage_quota(None, max.as_deref()).principal_bytes
}

pub fn mcp_timeout(env: &dyn AgentEnv) -> Duration {
    Duration::from_secs(MCP_TIMEOUT_SECS.read(env.variable(MCP_TIMEOUT_SECS.name).as_deref()))
}

/// The variable of [`mcp_timeout`] (a value past its range is clamped and logged).
pub const MCP_TIMEOUT_SECS: eve_api::variables::Bounded = eve_api::variables::Bounded {
    name: "mcp_timeout_secs",
    default: 30,
    min: 1,
    max: 3600,
};

/// A database error, logged and answered without details: 503 with `Retry-After` while the
/// database is out of reach, 500 for a statement SQLite refused (a bug).
pub fn db_refusal(e: String) -> Refusal {
    eprintln!("agent: database: {e}");
    if eve_store::sql::is_statement_error(&e) {
        return Refusal::new(500, Some("internal"), "Internal error.");
    }
    Refusal::unavailable()
}
