//! The `/api/admin/mcp-servers` shapes (issue 22, docs/runtime.md "MCP servers"): MCP servers
//! an admin adds while the app runs, beside the read-only ones of the `mcp_connections`
//! variable. A bearer token is write-only: a server says `hasToken`, never the token.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::accounts::present;

/// How the agent authenticates to a server. `none` and `oauth` send no stored token: a
/// server that answers 401 asks the user to sign in (per user, docs/connections.md); `bearer`
/// sends the admin's token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum McpAuth {
    None,
    Bearer,
    Oauth,
}

impl McpAuth {
    pub fn as_str(self) -> &'static str {
        match self {
            McpAuth::None => "none",
            McpAuth::Bearer => "bearer",
            McpAuth::Oauth => "oauth",
        }
    }

    pub fn parse(text: &str) -> Option<McpAuth> {
        match text {
            "none" => Some(McpAuth::None),
            "bearer" => Some(McpAuth::Bearer),
            "oauth" => Some(McpAuth::Oauth),
            _ => None,
        }
    }
}

/// A tool the server listed at the last refresh, with its MCP annotations
/// (`readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`, `title`) as the
/// server sent them (`null`: none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerTool {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub annotations: Value,
}

/// An MCP server as the admin page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServer {
    /// The row's id; a bootstrap server's is `bootstrap:<name>`.
    pub id: String,
    /// The prefix of its tools (`<name>__<tool>`): `[a-z0-9_-]{1,32}`.
    pub name: String,
    pub display_name: String,
    pub description: String,
    pub url: String,
    pub auth: McpAuth,
    pub has_token: bool,
    /// A stored token sealed under neither `secrets_key` nor `secrets_key_previous`: it must
    /// be entered again.
    #[serde(default)]
    pub key_unreadable: bool,
    pub enabled: bool,
    /// The cached `tools/list` (empty before the first refresh and for bootstrap servers).
    pub tools: Vec<McpServerTool>,
    /// When the tools were last refreshed (ISO-8601), `null` never.
    pub tools_at: Option<String>,
    /// Why the last refresh failed, in words (`null`: it did not).
    pub tools_error: Option<String>,
    /// A bootstrap server (the `mcp_connections` variable): shown, not editable here.
    pub read_only: bool,
}

/// `GET /api/admin/mcp-servers`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerList {
    pub bootstrap: Vec<McpServer>,
    pub servers: Vec<McpServer>,
}

/// `POST /api/admin/mcp-servers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateMcpServer {
    pub name: String,
    #[serde(default)]
    pub display_name: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    pub url: String,
    pub auth: McpAuth,
    /// With `auth: "bearer"` only.
    #[serde(default)]
    pub token: Option<String>,
}

/// `PATCH /api/admin/mcp-servers/:id`: absent keeps a field; `token: null` removes the token.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct McpServerPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<McpAuth>,
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub token: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
}
