//! The tools of the turn's MCP servers: listing each enabled server once per run (with the
//! `sign_in` tool offered for one that asks for a sign-in first), and running one call of
//! theirs to a result, a failure, or a sign-in the turn must wait for.

use std::collections::{BTreeMap, BTreeSet};

use eve_api::eve::Event;
use serde_json::{json, Value};

use crate::connections::enabled;
use crate::connections::mcp::{self, McpClient, McpConnection, McpError};
use crate::tools::spec::{ToolCall, ToolSpec};
use crate::turn::authorizations::{attempt_id, authorized_in_log};
use crate::turn::host::{TurnContext, TurnHost};

/// The tool offered for a server that lists nothing before a sign-in.
pub(crate) const SIGN_IN_TOOL: &str = "sign_in";

/// One MCP server as this turn sees it: its client (session kept for the turn), the tools it
/// offers, the ones it listed that cannot be offered and why, or why it has none.
pub(crate) struct McpServer {
    pub client: McpClient,
    pub specs: Vec<ToolSpec>,
    pub unusable: Vec<(String, String)>,
    /// `Some(challenge)` when listing asked for a sign-in; the `sign_in` tool is offered.
    pub sign_in: Option<Option<String>>,
    pub unavailable: Option<String>,
    /// The offered tools (model names) the server marks read-only.
    pub read_only: BTreeSet<String>,
}

/// What an MCP tool call came to.
#[derive(Debug, PartialEq)]
pub(crate) enum McpStep {
    Result(Value, bool),
    Failed(&'static str, String),
    SignIn(Option<String>),
}

/// The enabled MCP servers with their tools, listed once per run: a run after a sign-in
/// lists again with the new token.
pub(crate) fn servers(host: &mut dyn TurnHost, ctx: &TurnContext) -> BTreeMap<String, McpServer> {
    let mut out = BTreeMap::new();
    let client_context = ctx.client_context.as_deref();
    for c in ctx
        .mcp
        .iter()
        .filter(|c| enabled::is_enabled(client_context, &c.name))
    {
        out.insert(c.name.clone(), list(host, c));
    }
    out
}

/// Lists `c`'s tools (with the caller's token, if they signed in).
fn list(host: &mut dyn TurnHost, c: &McpConnection) -> McpServer {
    let bearer = c.token.clone().or_else(|| host.connection_token(&c.name));
    let mut server = McpServer {
        client: McpClient::new(&c.url, bearer),
        specs: Vec::new(),
        unusable: Vec::new(),
        sign_in: None,
        unavailable: c.blocked.clone(),
        read_only: BTreeSet::new(),
    };
    if server.unavailable.is_some() {
        return server;
    }
    match server.client.list_tools(host.mcp_http()) {
        Ok(tools) => {
            for t in &tools {
                match (mcp::tool_spec(c, t), &t.input_schema) {
                    (Some(spec), _) => {
                        if t.read_only() {
                            server.read_only.insert(spec.name.clone());
                        }
                        server.specs.push(spec)
                    }
                    (None, Err(why)) => {
                        eprintln!("agent: {} tool {} left out: {why}", c.name, t.name);
                        server.unusable.push((t.name.clone(), why.clone()));
                    }
                    (None, Ok(_)) => {}
                }
            }
        }
        Err(McpError::Unauthorized(challenge)) => {
            server.specs.push(sign_in_spec(c));
            server.sign_in = Some(challenge);
        }
        Err(McpError::Failed(why)) => {
            eprintln!("agent: {} is unavailable: {why}", c.name);
            server.unavailable = Some(why);
        }
    }
    server
}

/// The `sign_in` tool offered for `c` before the user connects it.
fn sign_in_spec(c: &McpConnection) -> ToolSpec {
    ToolSpec {
        name: format!("{}{}{SIGN_IN_TOOL}", c.name, mcp::SEPARATOR),
        description: format!(
            "Signs in to {} ({}); its tools are offered after the user connects it.",
            c.display_name, c.description
        ),
        input_schema: json!({ "type": "object", "properties": {} }),
    }
}

/// Whether the MCP tool the model calls `name` is read-only, as its server lists it. `None`:
/// not a tool a server offers (nor its `sign_in`): such a call fails without reaching a
/// server, so there is nothing to approve.
pub(crate) fn read_only(servers: &BTreeMap<String, McpServer>, name: &str) -> Option<bool> {
    let server = servers.get(mcp::split_tool_name(name)?.0)?;
    let offered = server.sign_in.is_none() && server.specs.iter().any(|s| s.name == name);
    offered.then(|| server.read_only.contains(name))
}

/// Runs `tool` of `conn`'s server for `call` (`log`: the session's log so far).
pub(crate) fn call(
    host: &mut dyn TurnHost,
    log: &[Event],
    servers: &mut BTreeMap<String, McpServer>,
    conn: &McpConnection,
    tool: &str,
    call: &ToolCall,
) -> McpStep {
    let Some(server) = servers.get_mut(&conn.name) else {
        return McpStep::Failed(
            "connection_disabled",
            format!("{} is disabled for this turn", conn.display_name),
        );
    };
    let signed_in = authorized_in_log(log, &attempt_id(call));
    if let Some(answer) = without_calling(server, conn, tool, call, signed_in) {
        return answer;
    }
    if let Some(why) = host.mcp_blocked(&conn.name) {
        return McpStep::Failed(
            "tool_error",
            format!("{} is unavailable: {why}", conn.display_name),
        );
    }
    match server.client.call_tool(host.mcp_http(), tool, &call.input) {
        Ok(r) => McpStep::Result(r.output, r.is_error),
        Err(McpError::Unauthorized(challenge)) if !signed_in => McpStep::SignIn(challenge),
        Err(McpError::Unauthorized(_)) => McpStep::Failed(
            "unauthorized",
            format!("{} refused the call after the sign-in", conn.display_name),
        ),
        Err(McpError::Failed(why)) => McpStep::Failed("tool_error", why),
    }
}

/// What a call comes to without reaching the server: an unavailable server or unusable tool
/// fails, the `sign_in` tool asks for (or reports) the sign-in, an input that is not an
/// object fails. `None`: the server is called.
pub(crate) fn without_calling(
    server: &McpServer,
    conn: &McpConnection,
    tool: &str,
    call: &ToolCall,
    signed_in: bool,
) -> Option<McpStep> {
    if let Some(why) = &server.unavailable {
        return Some(McpStep::Failed(
            "tool_error",
            format!("{} is unavailable: {why}", conn.display_name),
        ));
    }
    if let Some((_, why)) = server.unusable.iter().find(|(n, _)| n == tool) {
        return Some(McpStep::Failed(
            "invalid_tool",
            format!("{}'s tool {tool} cannot be used: {why}", conn.display_name),
        ));
    }
    if tool == SIGN_IN_TOOL {
        if let Some(challenge) = server.sign_in.clone() {
            if !signed_in {
                return Some(McpStep::SignIn(challenge));
            }
            return Some(McpStep::Failed(
                "unauthorized",
                format!(
                    "{} still refuses access after the sign-in",
                    conn.display_name
                ),
            ));
        }
        if signed_in {
            return Some(McpStep::Result(
                json!({ "text": format!("{} is connected; its tools are offered from the next step on.", conn.display_name) }),
                false,
            ));
        }
    }
    if let Some(raw) = call.input.get("_invalidInput") {
        return Some(McpStep::Failed(
            "invalid_input",
            format!("the tool input is not a JSON object: {raw}"),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conn() -> McpConnection {
        McpConnection {
            name: "notes".into(),
            display_name: "Notes".into(),
            description: "notes".into(),
            url: "http://127.0.0.1:9/mcp".into(),
            token: None,
            blocked: None,
        }
    }

    fn server() -> McpServer {
        McpServer {
            client: McpClient::new("http://127.0.0.1:9/mcp", None),
            specs: Vec::new(),
            unusable: Vec::new(),
            sign_in: None,
            unavailable: None,
            read_only: Default::default(),
        }
    }

    fn call(input: Value) -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: "notes__search".into(),
            input,
        }
    }

    #[test]
    fn an_unavailable_server_or_an_unusable_tool_fails_without_a_call() {
        let mut s = server();
        s.unavailable = Some("down".into());
        let step = without_calling(&s, &conn(), "search", &call(json!({})), false);
        assert!(matches!(step, Some(McpStep::Failed("tool_error", _))));
        let mut s = server();
        s.unusable.push(("search".into(), "bad schema".into()));
        let step = without_calling(&s, &conn(), "search", &call(json!({})), false);
        assert!(matches!(step, Some(McpStep::Failed("invalid_tool", _))));
    }

    #[test]
    fn a_server_blocked_since_the_turn_listed_it_is_a_tool_error_without_a_request() {
        let mut host = crate::turn::testing::Host {
            mcp_blocked: Some("127.0.0.1 is a local or private address".into()),
            ..Default::default()
        };
        let mut servers = BTreeMap::from([("notes".to_string(), server())]);
        let step = super::call(
            &mut host,
            &[],
            &mut servers,
            &conn(),
            "search",
            &call(json!({})),
        );
        let McpStep::Failed("tool_error", message) = step else {
            panic!("{step:?}");
        };
        assert_eq!(
            message,
            "Notes is unavailable: 127.0.0.1 is a local or private address"
        );
    }

    #[test]
    fn the_sign_in_tool_asks_for_a_sign_in_until_the_user_signed_in() {
        let mut s = server();
        s.sign_in = Some(Some("Bearer".into()));
        let asked = without_calling(&s, &conn(), SIGN_IN_TOOL, &call(json!({})), false);
        assert_eq!(asked, Some(McpStep::SignIn(Some("Bearer".into()))));
        let refused = without_calling(&s, &conn(), SIGN_IN_TOOL, &call(json!({})), true);
        assert!(matches!(refused, Some(McpStep::Failed("unauthorized", _))));
        let connected = without_calling(&server(), &conn(), SIGN_IN_TOOL, &call(json!({})), true);
        assert!(matches!(connected, Some(McpStep::Result(_, false))));
    }

    #[test]
    fn an_input_that_is_not_an_object_fails_and_anything_else_calls_the_server() {
        let bad = call(json!({ "_invalidInput": "x" }));
        let step = without_calling(&server(), &conn(), "search", &bad, false);
        assert!(matches!(step, Some(McpStep::Failed("invalid_input", _))));
        assert_eq!(
            without_calling(&server(), &conn(), "search", &call(json!({})), false),
            None
        );
    }
}
