//! MCP connections: what an owner configures (`mcp_connections`, a JSON Spin variable) and
//! the client that talks to each server over Streamable HTTP (MCP 2025-06-18 / 2025-03-26):
//! `initialize` with protocol-version negotiation, the `Mcp-Session-Id` the server assigns,
//! JSON or SSE answers, `tools/list` (every page) and `tools/call`.
//!
//! The network is behind [`McpHttp`] (the component supplies Spin outbound HTTP with a
//! timeout and a size cap). Tools reach the model as `<connection>__<tool>`, the name eve
//! reports in `actions.requested` / `action.result`.

use serde::Deserialize;
use serde_json::{json, Value};

use eve_protocol::framing::SseDecoder;
use eve_providers::tool::ToolSpec;

/// The protocol versions this client speaks, newest first (the one it asks for first).
pub const PROTOCOL_VERSIONS: &[&str] = &["2025-06-18", "2025-03-26", "2024-11-05"];
/// Separates the connection from the server's tool name.
pub const SEPARATOR: &str = "__";
/// Most tools taken from one server (what is past it is left out and logged).
pub const MAX_TOOLS: usize = 64;
/// Most `tools/list` pages followed.
const MAX_PAGES: usize = 10;

/// One configured MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpConnection {
    /// `[a-z0-9_-]`, the prefix of its tools.
    pub name: String,
    pub display_name: String,
    /// What the model and the connection menu are told it is for.
    pub description: String,
    /// The Streamable HTTP endpoint.
    pub url: String,
    /// A static bearer token (for servers that take an API key instead of OAuth).
    pub token: Option<String>,
    /// Why the server may not be called now (a server added as data whose URL the outbound
    /// guard refuses today, or whose token cannot be opened): its tools are a tool error,
    /// not a request. Always `None` for the variable's servers.
    pub blocked: Option<String>,
}

/// The ready-made entries: the vendors' public MCP endpoints (OAuth sign-in on first use).
pub const PRESETS: &[(&str, &str, &str, &str)] = &[
    (
        "notion",
        "Notion",
        "Notion workspace: search and edit pages and databases.",
        "https://mcp.notion.com/mcp",
    ),
    (
        "linear",
        "Linear",
        "Linear: search and update issues and projects.",
        "https://mcp.linear.app/mcp",
    ),
    (
        "sentry",
        "Sentry",
        "Sentry: look up errors and issues in your projects.",
        "https://mcp.sentry.dev/mcp",
    ),
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Entry {
    name: String,
    #[serde(default)]
    display_name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    token: Option<String>,
}

/// The connections of `mcp_connections`: a JSON array of `{ "name", "url", "description",
/// "displayName", "token" }`; an entry naming a preset (`{"name":"notion"}`) takes the
/// preset's URL and texts unless it sets its own. Empty or unset: none.
pub fn parse_connections(value: Option<&str>) -> Result<Vec<McpConnection>, String> {
    let Some(raw) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(Vec::new());
    };
    let entries: Vec<Entry> =
        serde_json::from_str(raw).map_err(|e| format!("mcp_connections is not valid: {e}"))?;
    let mut out: Vec<McpConnection> = Vec::new();
    for e in entries {
        let name = e.name.trim().to_string();
        let valid = !name.is_empty()
            && name.len() <= 32
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !name.contains(SEPARATOR);
        if !valid {
            return Err(format!(
                "mcp_connections: name {name:?} must be 1-32 of a-z, 0-9, -"
            ));
        }
        if out.iter().any(|c| c.name == name) {
            return Err(format!("mcp_connections: {name:?} is listed twice"));
        }
        let preset = PRESETS.iter().find(|p| p.0 == name);
        let url = e
            .url
            .or_else(|| preset.map(|p| p.3.to_string()))
            .ok_or_else(|| format!("mcp_connections: {name:?} needs a url"))?;
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err(format!(
                "mcp_connections: the url of {name:?} must be http(s)"
            ));
        }
        out.push(McpConnection {
            display_name: e
                .display_name
                .or_else(|| preset.map(|p| p.1.to_string()))
                .unwrap_or_else(|| name.clone()),
            description: e
                .description
                .or_else(|| preset.map(|p| p.2.to_string()))
                .unwrap_or_else(|| format!("The {name} MCP server.")),
            token: e.token.filter(|t| !t.trim().is_empty()),
            url,
            name,
            blocked: None,
        });
    }
    Ok(out)
}

/// The names a server added as data may not take: the variable's servers' and the
/// ready-made ones' (a variable entry may name a preset at any time).
pub fn reserved_names(bootstrap: &[McpConnection]) -> Vec<String> {
    let mut names: Vec<String> = bootstrap.iter().map(|c| c.name.clone()).collect();
    names.extend(PRESETS.iter().map(|p| p.0.to_string()));
    names
}

/// `(connection, tool)` of a model-facing name `connection__tool`.
pub fn split_tool_name(name: &str) -> Option<(&str, &str)> {
    name.split_once(SEPARATOR)
        .filter(|(c, t)| !c.is_empty() && !t.is_empty())
}

/// An HTTP answer, read whole (the transport caps its size).
#[derive(Debug, Clone, PartialEq)]
pub struct HttpAnswer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpAnswer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The network: POSTs with a timeout; `Err` when the server cannot be reached, does not
/// answer in time, or answers more than the cap.
pub trait McpHttp {
    fn post(
        &mut self,
        url: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<HttpAnswer, String>;
}

/// Why a request to a server did not give a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpError {
    /// The server wants a sign-in (401, or a 403 with a challenge): its `WWW-Authenticate`.
    Unauthorized(Option<String>),
    /// Anything else, in words for the model and the user.
    Failed(String),
}

fn failed(message: impl Into<String>) -> McpError {
    McpError::Failed(message.into())
}

/// A tool a server lists, or why it cannot be offered.
#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    pub name: String,
    pub description: String,
    pub input_schema: Result<Value, String>,
    /// The tool's MCP annotations (`readOnlyHint`, `destructiveHint`, …; `null`: none).
    pub annotations: Value,
}

impl McpTool {
    /// The server says the tool changes nothing (`annotations.readOnlyHint`): it needs no
    /// approval by default (docs/approvals.md).
    pub fn read_only(&self) -> bool {
        self.annotations
            .get("readOnlyHint")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }
}

/// A `tools/call` result: the output the model gets and whether the server flagged an error.
#[derive(Debug, Clone, PartialEq)]
pub struct CallResult {
    pub output: Value,
    pub is_error: bool,
}

/// One server's client state: the negotiated version and the server's session id.
#[derive(Debug, Clone)]
pub struct McpClient {
    pub url: String,
    pub bearer: Option<String>,
    pub session_id: Option<String>,
    pub protocol_version: Option<String>,
    next_id: u64,
}

impl McpClient {
    pub fn new(url: &str, bearer: Option<String>) -> Self {
        McpClient {
            url: url.to_string(),
            bearer,
            session_id: None,
            protocol_version: None,
            next_id: 1,
        }
    }

    fn headers(&self) -> Vec<(String, String)> {
        let mut h = vec![
            ("content-type".to_string(), "application/json".to_string()),
            (
                "accept".to_string(),
                "application/json, text/event-stream".to_string(),
            ),
        ];
        if let Some(v) = &self.protocol_version {
            h.push(("mcp-protocol-version".into(), v.clone()));
        }
        if let Some(s) = &self.session_id {
            h.push(("mcp-session-id".into(), s.clone()));
        }
        if let Some(t) = &self.bearer {
            h.push(("authorization".into(), format!("Bearer {t}")));
        }
        h
    }

    fn send(
        &mut self,
        http: &mut dyn McpHttp,
        method: &str,
        params: Value,
    ) -> Result<(HttpAnswer, u64), McpError> {
        let id = self.next_id;
        self.next_id += 1;
        let body = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let answer = http
            .post(&self.url, &self.headers(), body.to_string().as_bytes())
            .map_err(failed)?;
        Ok((answer, id))
    }

    /// `initialize` and `notifications/initialized`: agrees on a version we speak and keeps
    /// the server's session id.
    pub fn initialize(&mut self, http: &mut dyn McpHttp) -> Result<(), McpError> {
        self.session_id = None;
        self.protocol_version = None;
        let (answer, id) = self.send(
            http,
            "initialize",
            json!({
                "protocolVersion": PROTOCOL_VERSIONS[0],
                "capabilities": {},
                "clientInfo": { "name": "eve-chat", "version": env!("CARGO_PKG_VERSION") },
            }),
        )?;
        let result = parse_answer(&answer, id)?;
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !PROTOCOL_VERSIONS.contains(&version) {
            return Err(failed(format!(
                "the server speaks MCP protocol version {version:?}, which this client does not"
            )));
        }
        self.protocol_version = Some(version.to_string());
        self.session_id = answer.header("mcp-session-id").map(str::to_string);
        let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
        let answer = http
            .post(&self.url, &self.headers(), note.to_string().as_bytes())
            .map_err(failed)?;
        if answer.status == 401 {
            return Err(McpError::Unauthorized(
                answer.header("www-authenticate").map(str::to_string),
            ));
        }
        Ok(())
    }

    /// A request within the session: initializes first, and once more when the server
    /// forgot the session (404 for a request that carried its id, as the spec says).
    pub fn request(
        &mut self,
        http: &mut dyn McpHttp,
        method: &str,
        params: Value,
    ) -> Result<Value, McpError> {
        if self.protocol_version.is_none() {
            self.initialize(http)?;
        }
        let (answer, id) = self.send(http, method, params.clone())?;
        if answer.status == 404 && self.session_id.is_some() {
            self.initialize(http)?;
            let (answer, id) = self.send(http, method, params)?;
            return parse_answer(&answer, id);
        }
        parse_answer(&answer, id)
    }

    /// Every tool the server lists (following `nextCursor`), at most [`MAX_TOOLS`].
    pub fn list_tools(&mut self, http: &mut dyn McpHttp) -> Result<Vec<McpTool>, McpError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let result = self.request(http, "tools/list", params)?;
            let page = result
                .get("tools")
                .and_then(Value::as_array)
                .ok_or_else(|| failed("the server's tools/list answer has no tools"))?;
            for t in page {
                let Some(name) = t.get("name").and_then(Value::as_str) else {
                    continue;
                };
                tools.push(McpTool {
                    name: name.to_string(),
                    description: t
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    input_schema: check_input_schema(t.get("inputSchema")),
                    annotations: t.get("annotations").cloned().unwrap_or(Value::Null),
                });
            }
            cursor = result
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(str::to_string);
            if cursor.is_none() || tools.len() >= MAX_TOOLS {
                break;
            }
        }
        tools.truncate(MAX_TOOLS);
        Ok(tools)
    }

    /// Calls `tool` with `arguments`.
    pub fn call_tool(
        &mut self,
        http: &mut dyn McpHttp,
        tool: &str,
        arguments: &Value,
    ) -> Result<CallResult, McpError> {
        let result = self.request(
            http,
            "tools/call",
            json!({ "name": tool, "arguments": arguments }),
        )?;
        Ok(call_result(&result))
    }
}

/// The tool's input schema if it is a usable JSON Schema for an object (what the model
/// providers accept as function parameters), else why not.
pub fn check_input_schema(schema: Option<&Value>) -> Result<Value, String> {
    let Some(schema) = schema else {
        return Ok(json!({ "type": "object", "properties": {} }));
    };
    let obj = schema
        .as_object()
        .ok_or("its input schema is not a JSON object")?;
    match obj.get("type") {
        None => {}
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => return Err(format!("its input schema has type {other}, not \"object\"")),
    }
    if let Some(p) = obj.get("properties") {
        let props = p
            .as_object()
            .ok_or("its input schema's properties is not an object")?;
        if let Some((k, _)) = props
            .iter()
            .find(|(_, v)| !(v.is_object() || v.is_boolean()))
        {
            return Err(format!("its input schema's property {k:?} is not a schema"));
        }
    }
    if let Some(r) = obj.get("required") {
        let ok = r.as_array().is_some_and(|a| a.iter().all(Value::is_string));
        if !ok {
            return Err("its input schema's required is not a list of names".into());
        }
    }
    let mut s = schema.clone();
    s["type"] = json!("object");
    Ok(s)
}

/// What the model gets of a `tools/call` result: the structured content when the server
/// gives one, else the text of its content blocks (other blocks are named, not inlined).
pub fn call_result(result: &Value) -> CallResult {
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let text: Vec<String> = blocks
        .iter()
        .map(|b| match b.get("type").and_then(Value::as_str) {
            Some("text") => b
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            Some("resource") => b
                .pointer("/resource/text")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| "[resource]".into()),
            Some("resource_link") => format!(
                "[resource {}]",
                b.get("uri").and_then(Value::as_str).unwrap_or_default()
            ),
            Some(kind) => format!(
                "[{kind} {}]",
                b.get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            ),
            None => String::new(),
        })
        .collect();
    let text = text.join("\n");
    let output = if is_error {
        json!({ "error": if text.is_empty() { "the tool reported an error".to_string() } else { text } })
    } else if let Some(s) = result.get("structuredContent").filter(|s| !s.is_null()) {
        json!({ "structuredContent": s, "text": text })
    } else {
        json!({ "text": text })
    };
    CallResult { output, is_error }
}

/// The JSON-RPC result for request `id` in an answer (a JSON body or an SSE stream), or why
/// there is none.
pub fn parse_answer(answer: &HttpAnswer, id: u64) -> Result<Value, McpError> {
    let challenge = answer.header("www-authenticate").map(str::to_string);
    if answer.status == 401 || (answer.status == 403 && challenge.is_some()) {
        return Err(McpError::Unauthorized(challenge));
    }
    if !(200..300).contains(&answer.status) {
        return Err(failed(format!(
            "the MCP server answered HTTP {}",
            answer.status
        )));
    }
    let content_type = answer
        .header("content-type")
        .unwrap_or_default()
        .to_ascii_lowercase();
    let messages: Vec<Value> = if content_type.starts_with("text/event-stream") {
        let mut decoder = SseDecoder::new();
        let mut msgs = decoder.push(&answer.body);
        msgs.extend(decoder.finish());
        msgs.iter()
            .filter_map(|m| serde_json::from_str(&m.data).ok())
            .collect()
    } else if content_type.starts_with("application/json") {
        let v: Value = serde_json::from_slice(&answer.body)
            .map_err(|_| failed("the MCP server's JSON answer does not parse"))?;
        match v {
            Value::Array(items) => items,
            v => vec![v],
        }
    } else {
        return Err(failed(format!(
            "the server did not answer as an MCP server (content-type {:?})",
            content_type.split(';').next().unwrap_or_default()
        )));
    };
    let reply = messages
        .into_iter()
        .find(|m| m.get("id").and_then(Value::as_u64) == Some(id))
        .ok_or_else(|| failed("the MCP server's answer has no reply to the request"))?;
    if let Some(e) = reply.get("error") {
        let message = e
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("unknown error");
        return Err(failed(format!(
            "the MCP server refused the request: {}",
            message.chars().take(500).collect::<String>()
        )));
    }
    reply
        .get("result")
        .cloned()
        .ok_or_else(|| failed("the MCP server's reply has no result"))
}

/// The model-facing spec of a server's tool.
pub fn tool_spec(connection: &McpConnection, tool: &McpTool) -> Option<ToolSpec> {
    let schema = tool.input_schema.as_ref().ok()?;
    let description = if tool.description.is_empty() {
        format!("{} ({})", tool.name, connection.display_name)
    } else {
        format!("{} ({})", tool.description, connection.display_name)
    };
    Some(ToolSpec {
        name: format!("{}{SEPARATOR}{}", connection.name, tool.name),
        description,
        input_schema: schema.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, content_type: &str, body: &str) -> HttpAnswer {
        HttpAnswer {
            status,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn presets_fill_in_what_an_entry_leaves_out_and_bad_entries_are_refused() {
        let c = parse_connections(Some(
            r#"[{"name":"notion"},{"name":"local","url":"http://127.0.0.1:3001/mcp","token":"k"}]"#,
        ))
        .unwrap();
        assert_eq!(c[0].url, "https://mcp.notion.com/mcp");
        assert_eq!(c[0].display_name, "Notion");
        assert_eq!(c[1].display_name, "local");
        assert_eq!(c[1].token.as_deref(), Some("k"));
        assert_eq!(parse_connections(None).unwrap(), vec![]);
        for bad in [
            r#"[{"name":"x"}]"#,
            r#"[{"name":"Bad Name","url":"http://a/"}]"#,
            r#"[{"name":"a__b","url":"http://a/"}]"#,
            r#"[{"name":"a","url":"ftp://a/"}]"#,
            r#"[{"name":"a","url":"http://a/"},{"name":"a","url":"http://b/"}]"#,
            r#"[{"name":"a","url":"http://a/","extra":1}]"#,
            "{",
        ] {
            assert!(parse_connections(Some(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn answers_are_read_from_json_or_sse_and_errors_are_words() {
        let sse = "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"ok\":true}}\n\n";
        assert_eq!(
            parse_answer(&answer(200, "text/event-stream", sse), 7).unwrap(),
            json!({"ok": true})
        );
        let body = r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}"#;
        assert_eq!(
            parse_answer(&answer(200, "application/json; charset=utf-8", body), 3).unwrap(),
            json!({"tools": []})
        );
        let html = parse_answer(&answer(200, "text/html", "<html>"), 1).unwrap_err();
        assert!(matches!(html, McpError::Failed(m) if m.contains("text/html")));
        let err = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Unknown tool"}}"#;
        assert!(
            matches!(parse_answer(&answer(200, "application/json", err), 1),
            Err(McpError::Failed(m)) if m.contains("Unknown tool"))
        );
        let mut unauthorized = answer(401, "application/json", "{}");
        unauthorized.headers.push((
            "WWW-Authenticate".into(),
            "Bearer resource_metadata=\"http://x/.well-known/oauth-protected-resource\"".into(),
        ));
        assert!(matches!(parse_answer(&unauthorized, 1),
            Err(McpError::Unauthorized(Some(c))) if c.contains("resource_metadata")));
    }

    #[test]
    fn input_schemas_must_describe_an_object() {
        assert!(check_input_schema(Some(
            &json!({"type":"object","properties":{"a":{"type":"string"}}})
        ))
        .is_ok());
        assert_eq!(
            check_input_schema(None).unwrap(),
            json!({"type":"object","properties":{}})
        );
        for bad in [
            json!("x"),
            json!({"type":"string"}),
            json!({"type":"object","properties":[1]}),
            json!({"type":"object","properties":{"a":3}}),
            json!({"type":"object","required":"a"}),
        ] {
            assert!(check_input_schema(Some(&bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn results_keep_structured_content_and_text_and_flag_errors() {
        let r = call_result(&json!({
            "content": [{"type":"text","text":"a"},{"type":"image","mimeType":"image/png","data":"…"}],
            "structuredContent": {"sum": 3},
        }));
        assert_eq!(
            r.output,
            json!({"structuredContent":{"sum":3},"text":"a\n[image image/png]"})
        );
        assert!(!r.is_error);
        let e = call_result(&json!({"content":[{"type":"text","text":"boom"}],"isError":true}));
        assert!(e.is_error);
        assert_eq!(e.output, json!({"error":"boom"}));
    }

    #[test]
    fn tool_names_carry_their_connection() {
        assert_eq!(
            split_tool_name("everything__echo"),
            Some(("everything", "echo"))
        );
        assert_eq!(split_tool_name("a__get__thing"), Some(("a", "get__thing")));
        assert_eq!(split_tool_name("get_weather"), None);
    }
}
