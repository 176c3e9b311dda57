//! `/api/admin/mcp-servers*` (docs/runtime.md "MCP servers"): each parses, calls
//! `eve_runtime::mcp_servers` (which decides and holds the SQL) and replies; every change is
//! on the audit record before it is answered. A tools refresh lists the server's tools with
//! the agent's own MCP client over the agent's platform (`eve_agent_spin::Spin`), so the admin
//! sees what the agent will.

use eve_agent::connections::mcp::{self as client, McpClient, McpConnection, McpError};
use eve_agent::service::env::{self, PlatformMcpHttp};
use eve_agent_spin::Spin;
use eve_api::mcp_servers::{
    CreateMcpServer, McpAuth, McpServer, McpServerList, McpServerPatch, McpServerTool,
};
use eve_api::{ApiError, ErrorCode};
use eve_runtime::mcp_servers::{self as servers, Rules};
use eve_runtime::sealed::Keys;
use eve_spin::db::now_ms;
use eve_spin::json;
use spin_sdk::http::{Request, Response};

use crate::admission::Admin;

/// The id prefix of a server the `mcp_connections` variable configures.
const BOOTSTRAP: &str = "bootstrap:";

/// A bootstrap server as the listing shows it: read-only, its tools not cached here.
fn bootstrap(c: &McpConnection) -> McpServer {
    McpServer {
        id: format!("{BOOTSTRAP}{}", c.name),
        name: c.name.clone(),
        display_name: c.display_name.clone(),
        description: c.description.clone(),
        url: c.url.clone(),
        auth: if c.token.is_some() {
            McpAuth::Bearer
        } else {
            McpAuth::Oauth
        },
        has_token: c.token.is_some(),
        key_unreadable: false,
        enabled: true,
        tools: Vec::new(),
        tools_at: None,
        tools_error: None,
        read_only: true,
    }
}

/// What a write is checked against, read on this request: the bootstrap's names, the guard's
/// allow-list, the sealing keys.
struct Context {
    reserved: Vec<String>,
    allowed: Vec<String>,
    keys: Option<Keys>,
}

impl Context {
    fn read(a: &Admin) -> Result<Context, ApiError> {
        Ok(Context {
            reserved: client::reserved_names(&env::bootstrap_mcp_connections(&Spin)),
            allowed: env::outbound_allowed_hosts(&Spin, &a.db)?,
            keys: env::sealing_keys(&Spin),
        })
    }

    fn rules(&self) -> Rules<'_> {
        Rules {
            reserved: &self.reserved,
            allowed: &self.allowed,
            keys: self.keys.as_ref(),
        }
    }
}

/// 409 for a bootstrap server's id: it is changed in the variable, not here.
fn writable(id: &str) -> Result<(), ApiError> {
    if id.starts_with(BOOTSTRAP) {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            "this server is configured by the mcp_connections variable; change it there",
        ));
    }
    Ok(())
}

/// `GET /api/admin/mcp-servers`.
pub fn list(a: &Admin) -> Result<Response, ApiError> {
    let keys = env::sealing_keys(&Spin);
    let answer = McpServerList {
        bootstrap: env::bootstrap_mcp_connections(&Spin)
            .iter()
            .map(bootstrap)
            .collect(),
        servers: servers::list(&a.db, keys.as_ref())?,
    };
    Ok(json(200, &answer))
}

/// `POST /api/admin/mcp-servers` → 201.
pub fn create(req: &Request, a: &Admin) -> Result<Response, ApiError> {
    let body: CreateMcpServer = eve_spin::json_body(req)?;
    let ctx = Context::read(a)?;
    let id = servers::fresh_id();
    let created = servers::create(&a.db, &ctx.rules(), &id, &body, now_ms())?;
    let detail = serde_json::json!({
        "name": created.name, "url": created.url, "auth": created.auth,
    });
    a.record("mcp_server_created", Some(&id), Some(detail))?;
    Ok(json(201, &created))
}

/// `PATCH /api/admin/mcp-servers/:id`.
pub fn patch(req: &Request, a: &Admin, id: &str) -> Result<Response, ApiError> {
    writable(id)?;
    let body: McpServerPatch = eve_spin::json_body(req)?;
    let ctx = Context::read(a)?;
    let changed = servers::patch(&a.db, &ctx.rules(), id, &body, now_ms())?;
    // The record names what changed; a token only as set or removed.
    let mut detail = serde_json::to_value(McpServerPatch {
        token: None,
        ..body.clone()
    })
    .unwrap_or_default();
    if let Some(token) = &body.token {
        detail["token"] = if token.is_some() { "set" } else { "removed" }.into();
    }
    a.record("mcp_server_updated", Some(id), Some(detail))?;
    Ok(json(200, &changed))
}

/// `DELETE /api/admin/mcp-servers/:id`: 204, also for one already gone (a retry).
pub fn delete(a: &Admin, id: &str) -> Result<Response, ApiError> {
    writable(id)?;
    if servers::delete(&a.db, id)? {
        a.record("mcp_server_deleted", Some(id), None)?;
    }
    Ok(Response::builder()
        .status(204)
        .header("cache-control", "no-store")
        .build())
}

/// `POST /api/admin/mcp-servers/:id/tools`: `initialize` and `tools/list` now, the answer
/// cached (or why there is none stored in `toolsError`, the last list kept).
pub fn refresh(a: &Admin, id: &str) -> Result<Response, ApiError> {
    writable(id)?;
    let ctx = Context::read(a)?;
    let (server, target) = servers::refresh_target(&a.db, ctx.keys.as_ref(), id, &ctx.allowed)?;
    let tools = target.and_then(|token| list_tools(&server.url, token));
    let detail = serde_json::json!({ "ok": tools.is_ok() });
    let refreshed = servers::set_tools(&a.db, ctx.keys.as_ref(), id, &server.url, tools, now_ms())?;
    a.record("mcp_server_tools_refreshed", Some(id), Some(detail))?;
    Ok(json(200, &refreshed))
}

/// The server's tools as its `tools/list` gives them, or why it did not.
fn list_tools(url: &str, token: Option<String>) -> Result<Vec<McpServerTool>, String> {
    let mut mcp = McpClient::new(url, token);
    match mcp.list_tools(&mut PlatformMcpHttp(&Spin)) {
        Ok(tools) => Ok(tools
            .into_iter()
            .map(|t| McpServerTool {
                name: t.name,
                description: t.description,
                annotations: t.annotations,
            })
            .collect()),
        Err(McpError::Unauthorized(_)) => Err(
            "the server wants a sign-in (OAuth) or a valid bearer token before it lists its tools"
                .into(),
        ),
        Err(McpError::Failed(why)) => Err(why),
    }
}
