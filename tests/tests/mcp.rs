//! MCP connections end to end: the agent in the local host, configured by `mcp_connections`,
//! against the official MCP reference server (`@modelcontextprotocol/server-everything` in
//! Streamable HTTP mode, from tests/mcp-servers; `scripts/prepare` installs it), a server
//! built with the official SDK that wants a bearer token (tests/mcp-servers/protected.mjs),
//! and small loopback servers that misbehave (HTML, silence, an invalid schema, nothing
//! listening). The demo model's `call tool NAME {json}` issues the calls.
//!
//! A server that does not start fails the test: nothing here skips itself.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use eve_chat_tests::eve::{self, first, read_until_settled, types};
use eve_chat_tests::mcp_servers::{
    connection, free_port, node_server, protected, sign_in, NodeServer,
};
use eve_chat_tests::{Host, HostOptions};
use serde_json::{json, Value};

fn everything(env: &[(&str, &str)]) -> NodeServer {
    node_server(
        "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        &["streamableHttp"],
        env,
        "listening on port",
    )
}

/// A local host with `connections` as `mcp_connections`.
fn host(connections: Value, extra: &[(&str, &str)]) -> Host {
    let mut o = HostOptions::default()
        .var("demo_pacing_ms", "1")
        .var("chat_send_per_hour", "1000")
        .var("mcp_connections", &connections.to_string());
    for (k, v) in extra {
        o = o.var(k, v);
    }
    Host::start(o).expect("a local host")
}

/// Runs `call tool NAME {input}` in a new session; its events up to the settling one.
fn call(h: &Host, tool: &str, input: Value) -> (String, Vec<Value>) {
    let sid = eve::start(h, &format!("call tool {tool} {input}"));
    let events = read_until_settled(h, &sid, 0);
    (sid, events)
}

fn result_of(events: &[Value]) -> &Value {
    &first(events, "action.result")["data"]
}

#[test]
fn the_reference_servers_tools_answer_with_text_and_structured_content() {
    let server = everything(&[]);
    let h = host(json!([connection("everything", server.port)]), &[]);

    let (_, events) = call(&h, "everything__echo", json!({ "message": "hello mcp" }));
    let action = &first(&events, "actions.requested")["data"]["actions"][0];
    assert_eq!(action["toolName"], "everything__echo");
    let r = result_of(&events);
    assert_eq!(r["status"], "completed", "{r}");
    assert_eq!(r["result"]["toolName"], "everything__echo");
    assert_eq!(r["result"]["output"]["text"], "Echo: hello mcp");
    assert_eq!(events.last().unwrap()["type"], "session.waiting");

    let (_, events) = call(
        &h,
        "everything__get-structured-content",
        json!({ "location": "Chicago" }),
    );
    let r = result_of(&events);
    assert_eq!(r["status"], "completed", "{r}");
    let s = &r["result"]["output"]["structuredContent"];
    assert!(
        s["temperature"].is_number() && s["conditions"].is_string(),
        "{r}"
    );

    // /eve/v1/info reports the connection as eve does (protocol mcp, its URL).
    let info = h.get("/eve/v1/info").json();
    let c = info["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["connectionName"] == "everything")
        .expect("the MCP connection in /eve/v1/info")
        .clone();
    assert_eq!(c["protocol"], "mcp");
    assert_eq!(
        c["url"],
        format!("http://127.0.0.1:{}/mcp", server.port).as_str()
    );
}

#[test]
fn a_servers_errors_reach_the_model_as_tool_errors() {
    let server = everything(&[]);
    let h = host(json!([connection("everything", server.port)]), &[]);
    // Arguments the server's schema refuses, and a tool it does not have.
    for (tool, input) in [
        ("everything__get-sum", json!({ "a": "two", "b": 3 })),
        ("everything__no-such-tool", json!({})),
    ] {
        let (_, events) = call(&h, tool, input);
        let r = result_of(&events);
        assert_eq!(r["status"], "failed", "{tool}: {r}");
        assert_eq!(r["result"]["isError"], true);
        let message = r["error"]["message"].as_str().unwrap();
        assert!(!message.is_empty(), "{r}");
        assert_eq!(events.last().unwrap()["type"], "session.waiting");
    }
}

#[test]
fn an_output_over_the_cap_is_stored_aside_and_the_stream_gets_a_preview() {
    // get-env answers with the server's environment: make it 300 KB (one variable may hold
    // at most 128 KB).
    let big = "x".repeat(100 * 1024);
    let server = everything(&[
        ("EVE_BIG_1", big.as_str()),
        ("EVE_BIG_2", big.as_str()),
        ("EVE_BIG_3", big.as_str()),
    ]);
    let h = host(json!([connection("everything", server.port)]), &[]);
    let (_, events) = call(&h, "everything__get-env", json!({}));
    let r = result_of(&events);
    assert_eq!(r["status"], "completed", "{r}");
    let shown = r["result"]["output"].to_string();
    assert!(
        shown.len() < 20 * 1024,
        "the event carries a preview, not {} bytes",
        shown.len()
    );
    assert_eq!(r["result"]["output"]["truncated"], true, "{shown}");
    assert!(r["result"]["output"]["totalBytes"].as_u64().unwrap() > 300 * 1024);
}

/// A loopback server that answers every request with `answer(body)` (raw HTTP), or never
/// answers when it gives `None`.
fn raw_server(answer: fn(&str) -> Option<String>) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            std::thread::spawn(move || serve_one(stream, answer));
        }
    });
    port
}

fn serve_one(mut stream: TcpStream, answer: fn(&str) -> Option<String>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let body = loop {
        let Ok(n) = stream.read(&mut chunk) else {
            return;
        };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&buf).to_string();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                })
                .unwrap_or(0);
            if body.len() >= len {
                break body.to_string();
            }
        }
    };
    match answer(&body) {
        Some(response) => {
            let _ = stream.write_all(response.as_bytes());
        }
        None => std::thread::sleep(Duration::from_secs(60)),
    }
}

fn http(status: &str, content_type: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// A minimal JSON-answering MCP server whose one tool has an input schema that is no schema.
fn invalid_schema_server(body: &str) -> Option<String> {
    let req: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let id = req["id"].clone();
    let result = match req["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": "2025-06-18",
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "broken", "version": "1" },
        }),
        Some("tools/list") => json!({ "tools": [
            { "name": "lookup", "description": "d", "inputSchema": { "type": "string" } },
        ]}),
        Some("tools/call") => {
            json!({ "content": [{ "type": "text", "text": "should not be called" }] })
        }
        _ => return Some(http("202 Accepted", "application/json", "")),
    };
    let reply = json!({ "jsonrpc": "2.0", "id": id, "result": result });
    Some(http("200 OK", "application/json", &reply.to_string()))
}

#[test]
fn broken_servers_give_clear_tool_errors_and_the_turn_ends() {
    let html = raw_server(|_| {
        Some(http(
            "200 OK",
            "text/html",
            "<html><body>Sign in</body></html>",
        ))
    });
    let hangs = raw_server(|_| None);
    let schema = raw_server(invalid_schema_server);
    let closed = free_port();
    let h = host(
        json!([
            connection("html", html),
            connection("hangs", hangs),
            connection("schema", schema),
            connection("closed", closed),
        ]),
        &[("mcp_timeout_secs", "2")],
    );
    for (tool, expect) in [
        ("html__search", "text/html"),
        ("hangs__search", "within 2s"),
        ("schema__lookup", "input schema"),
        ("closed__search", "unavailable"),
    ] {
        let (_, events) = call(&h, tool, json!({ "q": "x" }));
        let r = result_of(&events);
        assert_eq!(r["status"], "failed", "{tool}: {r}");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(message.contains(expect), "{tool}: {message}");
        let t = types(&events);
        assert_eq!(t.last(), Some(&"session.waiting"), "{tool}: {t:?}");
        assert!(t.contains(&"turn.completed"), "{tool}: {t:?}");
    }
}

// ------------------------------------------------------------------ sign-in (OAuth 2.1)

#[test]
fn a_server_that_lists_nothing_anonymously_offers_sign_in_then_its_tools() {
    let server = node_server(
        "protected.mjs",
        &[],
        &[("PROTECT_ALL", "1")],
        "protected MCP server listening",
    );
    let h = host(json!([connection("notes", server.port)]), &[]);
    // Its tools are unknown before the sign-in; the one offered is notes__sign_in.
    let (sid, events) = call(&h, "notes__sign_in", json!({}));
    let required = first(&events, "authorization.required").clone();
    assert!(required["data"]["authorization"]["instructions"]
        .as_str()
        .unwrap()
        .contains("resource_metadata="));
    sign_in(&h, &required);
    let after = read_until_settled(&h, &sid, events.len() as u64);
    assert_eq!(result_of(&after)["status"], "completed");
    let (_, events) = call(&h, "notes__read_notes", json!({ "topic": "b" }));
    let r = result_of(&events);
    assert_eq!(r["status"], "completed", "{r}");
    assert_eq!(r["result"]["output"]["structuredContent"]["topic"], "b");
}

fn stats(server: &NodeServer) -> Value {
    ureq::get(&format!("http://127.0.0.1:{}/stats", server.port))
        .call()
        .expect("the server's stats")
        .into_json()
        .unwrap()
}

#[test]
fn a_401_asks_for_sign_in_and_the_call_is_made_again_with_the_token() {
    let server = protected(3600);
    let h = host(json!([connection("notes", server.port)]), &[]);
    let (sid, events) = call(&h, "notes__read_notes", json!({ "topic": "roadmap" }));
    // tools/list answered anonymously (the tool was offered); the call was refused with a
    // challenge that names the protected-resource metadata.
    let t = types(&events);
    assert_eq!(
        t[t.len() - 2..],
        ["authorization.required", "turn.waiting"],
        "{t:?}"
    );
    let required = first(&events, "authorization.required").clone();
    assert_eq!(required["data"]["name"], "notes");
    let instructions = required["data"]["authorization"]["instructions"]
        .as_str()
        .unwrap();
    assert!(
        instructions.contains("resource_metadata="),
        "{instructions}"
    );

    let authorize = sign_in(&h, &required);
    let query = authorize.split_once('?').unwrap().1;
    let param = |k: &str| {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(&format!("{k}=")))
            .map(|v| v.replace("%3A", ":").replace("%2F", "/"))
    };
    assert_eq!(param("code_challenge_method").as_deref(), Some("S256"));
    assert!(param("code_challenge").is_some_and(|c| c.len() == 43));
    assert_eq!(
        param("resource"),
        Some(format!("http://127.0.0.1:{}/mcp", server.port))
    );
    assert!(
        param("client_id").is_some(),
        "dynamically registered: {authorize}"
    );

    let after = read_until_settled(&h, &sid, events.len() as u64);
    assert_eq!(after[0]["data"]["outcome"], "authorized");
    let r = result_of(&after);
    assert_eq!(r["status"], "completed", "{r}");
    assert_eq!(
        r["result"]["output"]["structuredContent"]["topic"],
        "roadmap"
    );
    assert!(r["result"]["output"]["structuredContent"]["client"].is_string());
    assert_eq!(after.last().unwrap()["type"], "session.waiting");
    assert_eq!(stats(&server)["tokenCalls"], 1);

    // The token is kept for this principal: the next chat's call needs no sign-in.
    let (_, events) = call(&h, "notes__read_notes", json!({ "topic": "budget" }));
    assert!(!types(&events).contains(&"authorization.required"));
    assert_eq!(result_of(&events)["status"], "completed");
}

fn listed(h: &Host, name: &str) -> Value {
    let r = h.get("/eve/v1/connections");
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .cloned()
        .unwrap_or_else(|| panic!("{name} in /eve/v1/connections"))
}

#[test]
fn revoking_a_connection_revokes_its_tokens_and_the_next_call_asks_again() {
    let server = protected(3600);
    let h = host(json!([connection("notes", server.port)]), &[]);
    assert_eq!(listed(&h, "notes")["connected"], false);
    let (sid, events) = call(&h, "notes__read_notes", json!({ "topic": "a" }));
    sign_in(&h, &first(&events, "authorization.required").clone());
    read_until_settled(&h, &sid, events.len() as u64);
    assert_eq!(listed(&h, "notes")["connected"], true);

    let cross = h.send(
        "POST",
        "/eve/v1/connections/notes/revoke",
        &[
            ("origin", "https://evil.example"),
            ("sec-fetch-site", "cross-site"),
        ],
        Some(b"{}"),
    );
    assert_eq!(cross.status, 403, "a cross-site revoke is refused");
    assert_eq!(listed(&h, "notes")["connected"], true);
    let r = h.json("POST", "/eve/v1/connections/notes/revoke", &json!({}));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["revoked"], true);
    // Access and refresh token, at the server's revocation endpoint.
    assert_eq!(stats(&server)["revoked"], 2);
    assert_eq!(listed(&h, "notes")["connected"], false);
    let (_, events) = call(&h, "notes__read_notes", json!({ "topic": "b" }));
    assert!(types(&events).contains(&"authorization.required"));

    let unknown = h.json("POST", "/eve/v1/connections/nope/revoke", &json!({}));
    assert_eq!(unknown.status, 404);
}

#[test]
fn a_token_about_to_expire_is_refreshed_before_the_call() {
    // 61 s tokens are inside the refresh margin (60 s) a second after they are issued.
    let server = protected(61);
    let h = host(json!([connection("notes", server.port)]), &[]);
    let (sid, events) = call(&h, "notes__read_notes", json!({ "topic": "a" }));
    let required = first(&events, "authorization.required").clone();
    sign_in(&h, &required);
    let after = read_until_settled(&h, &sid, events.len() as u64);
    assert_eq!(result_of(&after)["status"], "completed");
    std::thread::sleep(Duration::from_millis(1500));
    let (_, events) = call(&h, "notes__read_notes", json!({ "topic": "b" }));
    assert!(!types(&events).contains(&"authorization.required"));
    assert_eq!(result_of(&events)["status"], "completed");
    assert!(stats(&server)["refreshes"].as_u64().unwrap() >= 1);
}

/// Runs `call tool notes__read_notes` against the protected server up to the parked sign-in;
/// returns the session, the events and the `authorization.required` event.
fn parked_sign_in(h: &Host, body: Value) -> (String, Vec<Value>, Value) {
    let sid = eve::create(h, &body);
    let events = read_until_settled(h, &sid, 0);
    let t = types(&events);
    assert_eq!(
        t[t.len() - 2..],
        ["authorization.required", "turn.waiting"],
        "{t:?}"
    );
    assert_eq!(events.last().unwrap()["data"]["on"], "input");
    let required = events[events.len() - 2].clone();
    (sid, events, required)
}

fn read_notes(topic: &str) -> Value {
    json!({ "message": format!("call tool notes__read_notes {}", json!({ "topic": topic })) })
}

fn connect_url(required: &Value) -> String {
    required["data"]["authorization"]["url"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_message_while_the_sign_in_is_pending_declines_it_and_the_turn_goes_on() {
    let server = protected(3600);
    let h = host(json!([connection("notes", server.port)]), &[]);
    let (sid, events, required) = parked_sign_in(&h, read_notes("a"));
    let data = &required["data"];
    let attempt = data["attemptId"].as_str().unwrap();
    assert_eq!(
        connect_url(&required),
        format!("/eve/v1/session/{sid}/authorizations/{attempt}")
    );
    let action = &first(&events, "actions.requested")["data"]["actions"][0];
    assert_eq!(action["toolName"], "notes__read_notes");
    assert_eq!(data["callId"], action["callId"]);
    // Parked: a bounded read ends at turn.waiting; nothing more is written.
    assert_eq!(eve::snapshot(&h, &sid, 0), events);
    // Sign-ins are answered through the connect page, not with inputResponses.
    let r = eve::send(
        &h,
        &sid,
        &json!({ "inputResponses": [{ "requestId": attempt, "optionId": "allow" }] }),
    );
    assert_eq!(r.status, 409, "{}", r.text());
    assert_eq!(eve::error_of(&r).0.as_deref(), Some("input_not_pending"));

    let n = events.len() as u64;
    eve::send_message(&h, &sid, "never mind");
    let rest = read_until_settled(&h, &sid, n);
    let t = types(&rest);
    assert_eq!(
        t[..4],
        [
            "message.received",
            "authorization.completed",
            "action.result",
            "step.completed"
        ],
        "{t:?}"
    );
    assert_eq!(rest[1]["data"]["outcome"], "declined");
    assert_eq!(rest[1]["data"]["attemptId"], attempt);
    let r = &first(&rest, "action.result")["data"];
    assert_eq!(r["status"], "failed");
    assert_eq!(r["error"]["code"], "authorization_declined");
    assert_eq!(r["result"]["isError"], true);
    assert_eq!(t[t.len() - 2..], ["turn.completed", "session.waiting"]);
    assert_eq!(stats(&server)["tokenCalls"], 0);
    // The connect page has nothing to authorize any more.
    assert_eq!(h.get(&connect_url(&required)).status, 409);
}

#[test]
fn a_refusal_at_the_authorization_server_declines_the_sign_in_and_the_turn_goes_on() {
    let server = protected(3600);
    let h = host(json!([connection("notes", server.port)]), &[]);
    let (sid, events, required) = parked_sign_in(&h, read_notes("a"));
    let r = h.get(&connect_url(&required));
    assert_eq!(r.status, 302, "{}", r.text());
    let authorize = r.header("location").unwrap().to_string();
    let query = authorize.split_once('?').unwrap().1;
    let state = query
        .split('&')
        .find_map(|kv| kv.strip_prefix("state="))
        .expect("the authorize URL carries a state");
    // What an authorization server sends back when the user clicks Deny (RFC 6749 §4.1.2.1).
    let done = h.get(&format!(
        "/eve/v1/connections/callback?error=access_denied&state={state}"
    ));
    assert_eq!(done.status, 200, "{}", done.text());
    assert!(done.text().contains("not connected"), "{}", done.text());
    let rest = read_until_settled(&h, &sid, events.len() as u64);
    assert_eq!(
        types(&rest)[..2],
        ["authorization.completed", "action.result"]
    );
    assert_eq!(rest[0]["data"]["outcome"], "declined");
    assert_eq!(rest[1]["data"]["error"]["code"], "authorization_declined");
    assert_eq!(rest.last().unwrap()["type"], "session.waiting");
    assert_eq!(stats(&server)["tokenCalls"], 0);
    // The state was for that one pending sign-in.
    let again = h.get(&format!(
        "/eve/v1/connections/callback?error=access_denied&state={state}"
    ));
    assert_eq!(again.status, 409, "{}", again.text());
    // The next message works.
    let n = eve::len(&h, &sid);
    eve::send_message(&h, &sid, "hello again");
    let turn = read_until_settled(&h, &sid, n);
    assert_eq!(eve::of_type(&turn, "turn.completed").len(), 1);
}

#[test]
fn cancelling_a_pending_sign_in_declines_it_and_ends_the_turn() {
    let server = protected(3600);
    let h = host(json!([connection("notes", server.port)]), &[]);
    let (sid, events, required) = parked_sign_in(&h, read_notes("a"));
    eve::assert_control_accepted(&eve::control(&h, &sid, "cancel"), &sid);
    let rest = read_until_settled(&h, &sid, events.len() as u64);
    assert_eq!(
        types(&rest),
        [
            "authorization.completed",
            "turn.cancelled",
            "session.waiting"
        ]
    );
    assert_eq!(rest[0]["data"]["outcome"], "declined");
    assert_eq!(rest[0]["data"]["attemptId"], required["data"]["attemptId"]);
    assert_eq!(rest[1]["data"]["turnId"], required["data"]["turnId"]);
    assert_eq!(h.get(&connect_url(&required)).status, 409);
}

#[test]
fn a_connection_the_client_context_turns_off_is_not_used() {
    let server = protected(3600);
    let h = host(json!([connection("notes", server.port)]), &[]);
    let mut body = read_notes("a");
    body["clientContext"] = json!(
        "Connections the user enabled for this turn: everything. Connections the user disabled (do not use them): notes."
    );
    let sid = eve::create(&h, &body);
    let events = read_until_settled(&h, &sid, 0);
    assert!(!types(&events).contains(&"authorization.required"));
    let r = result_of(&events);
    assert_eq!(r["status"], "failed", "{r}");
    assert_eq!(r["error"]["code"], "connection_disabled");
    assert_eq!(events.last().unwrap()["type"], "session.waiting");
}

#[test]
fn a_declined_sign_in_answers_the_call_as_failed() {
    let server = protected(3600);
    let h = host(json!([connection("notes", server.port)]), &[]);
    let (sid, events) = call(&h, "notes__read_notes", json!({ "topic": "a" }));
    let n = events.len() as u64;
    eve::send_message(&h, &sid, "never mind");
    let rest = read_until_settled(&h, &sid, n);
    let r = &first(&rest, "action.result")["data"];
    assert_eq!(r["status"], "failed");
    assert_eq!(r["error"]["code"], "authorization_declined");
    assert_eq!(stats(&server)["tokenCalls"], 0);
}

/// Issue 19 item 1: a server whose sign-in metadata names another resource (RFC 9728 §3.3),
/// another issuer (RFC 8414 §3.3), or an authorization server at an address that is neither
/// https nor the test server's own loopback is refused with a clear page (English and
/// Simplified Chinese): no client is registered there and no token is kept.
#[test]
fn a_sign_in_whose_metadata_names_another_resource_or_issuer_or_address_is_refused() {
    let lying: Vec<(&str, NodeServer)> = ["resource", "issuer", "elsewhere"]
        .into_iter()
        .map(|lie| {
            let server = node_server(
                "protected.mjs",
                &[],
                &[("LIE", lie)],
                "protected MCP server listening",
            );
            (lie, server)
        })
        .collect();
    let connections: Vec<Value> = lying
        .iter()
        .map(|(lie, s)| connection(&format!("lies-{lie}"), s.port))
        .collect();
    let h = host(json!(connections), &[]);
    for (lie, server) in &lying {
        let body = json!({ "message": format!("call tool lies-{lie}__read_notes {}", json!({"topic": "x"})) });
        let (_sid, _events, required) = parked_sign_in(&h, body);
        let page = h.get(&connect_url(&required));
        let text = page.text();
        assert_eq!(page.status, 403, "{lie}: {text}");
        assert!(page.header("location").is_none(), "{lie}");
        assert!(text.contains("sign-in was refused"), "{lie}: {text}");
        assert!(text.contains("已拒绝"), "{lie}: {text}");
        let why = match *lie {
            "resource" => "https://mcp.notion.com/mcp",
            "issuer" => "issuer https://mcp.notion.com/",
            _ => "169.254.169.254",
        };
        assert!(text.contains(why), "{lie}: {text}");
        let s = stats(server);
        assert_eq!(s["registrations"], 0, "{lie}: {s}");
        assert_eq!(s["tokenCalls"], 0, "{lie}: {s}");
    }
    let db = rusqlite::Connection::open(h.state_dir().unwrap().join("sqlite_db.db")).unwrap();
    let tokens: i64 = db
        .query_row("SELECT count(*) FROM agent_connection_token", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(tokens, 0, "no token is stored");
}

/// Issue 19 item 2: the connect page discovers and registers at the provider once per
/// connection, not on every visit; the cached client signs in as a fresh one does.
#[test]
fn the_connect_page_registers_once_and_reuses_the_client() {
    let server = protected(3600);
    let h = host(json!([connection("notes", server.port)]), &[]);
    let (sid, events, required) = parked_sign_in(&h, read_notes("roadmap"));
    let connect = connect_url(&required);
    let mut clients = Vec::new();
    for _ in 0..3 {
        let r = h.get(&connect);
        assert_eq!(r.status, 302, "{}", r.text());
        let location = r.header("location").unwrap().to_string();
        let client = location
            .split(['?', '&'])
            .find_map(|kv| kv.strip_prefix("client_id="))
            .unwrap()
            .to_string();
        clients.push(client);
    }
    assert!(clients.iter().all(|c| *c == clients[0]), "{clients:?}");
    let s = stats(&server);
    assert_eq!(s["registrations"], 1, "{s}");
    assert_eq!(s["metadataReads"], 2, "one discovery: {s}");
    // The cached client completes the sign-in.
    sign_in(&h, &required);
    let after = read_until_settled(&h, &sid, events.len() as u64);
    assert_eq!(after[0]["data"]["outcome"], "authorized");
    assert_eq!(result_of(&after)["status"], "completed");
    assert_eq!(stats(&server)["registrations"], 1);
}
