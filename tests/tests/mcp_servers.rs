//! MCP servers as data end to end (issue 22, docs/runtime.md "MCP servers" and "Outbound
//! access"): an admin adds a server while the app runs and a member's next turn calls its
//! tool; its tools refresh with their annotations; disabled, its tools are gone; the outbound
//! guard refuses local and private addresses unless allowed, and a URL that became forbidden
//! is a tool error without a request; a bearer token is sealed in the database and never
//! answered; members get 403. Real components in the local host, real SQLite, the official
//! MCP reference server (tests/mcp-servers) speaking Streamable HTTP; the demo model's
//! `call tool NAME {json}` issues the calls.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use eve_chat_tests::accounts::*;
use eve_chat_tests::eve::{self, first};
use eve_chat_tests::mcp_servers::{node_server, protected, sign_in_as, NodeServer};
use eve_chat_tests::{Host, HostOptions, Response};
use serde_json::{json, Value};

const SERVERS: &str = "/api/admin/mcp-servers";
const KEY: &str = "7f3c2a9d1e0b4c5f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b";

fn everything() -> NodeServer {
    node_server(
        "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        &["streamableHttp"],
        &[],
        "listening on port",
    )
}

/// An accounts-mode host on `state` with `vars` (and a sealing key).
fn host_on(state: &Path, vars: &[(&str, &str)]) -> Host {
    let mut o = HostOptions::default()
        .var("auth_mode", "accounts")
        .var("session_secret", SECRET)
        .var("admin_setup_token", SETUP_TOKEN)
        .var("signup_allowed_domains", "open.example")
        .var("demo_pacing_ms", "1")
        .var("chat_send_per_hour", "1000")
        .var("secrets_key", KEY);
    for (k, v) in vars {
        o = o.var(k, v);
    }
    o.state_dir = Some(state.to_path_buf());
    Host::start(o).expect("a local host")
}

fn send(h: &Host, who: &User, method: &str, path: &str, body: Option<Value>) -> Response {
    call(h, method, path, Some(&who.cookie), body.as_ref())
}

fn add(h: &Host, admin: &User, body: Value) -> Response {
    send(h, admin, "POST", SERVERS, Some(body))
}

fn local(name: &str, port: u16) -> Value {
    json!({ "name": name, "url": format!("http://127.0.0.1:{port}/mcp"), "auth": "none" })
}

/// `who`'s new session calling `tool` with `input`, settled: the tool's result.
fn call_tool(h: &Host, who: &User, tool: &str, input: Value) -> Value {
    let body = json!({ "message": format!("call tool {tool} {input}") });
    let sid = start_session(h, who, &body);
    let events = eve::settled_as(h, &sid, &who.headers(), Duration::from_secs(60));
    first(&events, "action.result")["data"].clone()
}

fn rows(h: &Host) -> i64 {
    database(h)
        .query_row("SELECT count(*) FROM mcp_server", [], |r| r.get(0))
        .unwrap()
}

fn state() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join(".spin");
    (t, d)
}

/// Server `name`'s entry in the admin listing.
fn listed(h: &Host, admin: &User, name: &str) -> Value {
    let list = ok(send(h, admin, "GET", SERVERS, None), 200);
    let found = list["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name);
    found
        .unwrap_or_else(|| panic!("{name} not listed: {list}"))
        .clone()
}

fn refresh(h: &Host, admin: &User, id: &str) -> Value {
    ok(
        send(h, admin, "POST", &format!("{SERVERS}/{id}/tools"), None),
        200,
    )
}

/// Whether `who`'s connection menu lists `name`.
fn in_menu(h: &Host, who: &User, name: &str) -> bool {
    let menu = ok(send(h, who, "GET", "/eve/v1/connections", None), 200);
    menu["connections"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["name"] == name)
}

fn assert_on_record(h: &Host, admin: &User, actions: &[&str]) {
    let audit = ok(send(h, admin, "GET", "/api/admin/audit", None), 200).to_string();
    for a in actions {
        assert!(audit.contains(a), "{a} not on the record: {audit}");
    }
}

#[test]
fn a_server_added_at_runtime_is_called_on_the_next_turn_and_gone_when_disabled() {
    let server = everything();
    let (_t, dir) = state();
    let h = host_on(&dir, &[("outbound_allowed_hosts", "127.0.0.1")]);
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    let before = call_tool(&h, &m, "docs__echo", json!({ "message": "hi" }));
    assert_eq!(before["status"], "failed", "{before}");

    let created = ok(add(&h, &admin, local("docs", server.port)), 201);
    let id = created["id"].as_str().unwrap().to_string();
    assert_eq!(
        (&created["enabled"], &created["readOnly"]),
        (&json!(true), &json!(false))
    );
    let r = call_tool(&h, &m, "docs__echo", json!({ "message": "hello data" }));
    assert_eq!(r["status"], "completed", "{r}");
    assert_eq!(r["result"]["output"]["text"], "Echo: hello data");
    assert!(in_menu(&h, &m, "docs"));

    // Disabled: the tool is gone from the next turn (and from the menu).
    let off = send(
        &h,
        &admin,
        "PATCH",
        &format!("{SERVERS}/{id}"),
        Some(json!({"enabled": false})),
    );
    assert_eq!(ok(off, 200)["enabled"], false);
    let after = call_tool(&h, &m, "docs__echo", json!({ "message": "again" }));
    assert_eq!(after["status"], "failed", "{after}");
    assert!(!in_menu(&h, &m, "docs"));
    ok(
        send(&h, &admin, "DELETE", &format!("{SERVERS}/{id}"), None),
        204,
    );
    assert_eq!(rows(&h), 0);
    assert_on_record(
        &h,
        &admin,
        &[
            "mcp_server_created",
            "mcp_server_updated",
            "mcp_server_deleted",
        ],
    );
}

#[test]
fn a_refresh_caches_the_tools_with_their_annotations_and_stores_a_failure() {
    let server = everything();
    let (_t, dir) = state();
    let h = host_on(&dir, &[("outbound_allowed_hosts", "127.0.0.1")]);
    let admin = bootstrap(&h);
    let id = ok(add(&h, &admin, local("docs", server.port)), 201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let refreshed = refresh(&h, &admin, &id);
    let tools = refreshed["tools"].as_array().unwrap();
    let echo = tools
        .iter()
        .find(|t| t["name"] == "echo")
        .expect("echo listed");
    assert_eq!(echo["annotations"]["readOnlyHint"], true, "{echo}");
    assert_eq!(echo["annotations"]["destructiveHint"], false, "{echo}");
    assert!(refreshed["toolsAt"].is_string() && refreshed["toolsError"].is_null());
    assert_eq!(listed(&h, &admin, "docs")["tools"], refreshed["tools"]);

    // A server that is not there: the error is stored beside the last list.
    drop(server);
    let failed = refresh(&h, &admin, &id);
    assert!(
        failed["toolsError"]
            .as_str()
            .unwrap()
            .contains("could not be reached"),
        "{failed}"
    );
    assert_eq!(failed["tools"], refreshed["tools"]);
    assert_on_record(&h, &admin, &["mcp_server_tools_refreshed"]);
}

/// A loopback listener that counts the connections it is offered and answers none.
fn counting_listener() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            counter.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (port, seen)
}

const FORBIDDEN: [(&str, &str, &str); 4] = [
    ("loop", "https://127.0.0.1:1/mcp", "127.0.0.1"),
    (
        "metadata",
        "https://169.254.169.254/latest",
        "169.254.169.254",
    ),
    ("private", "https://10.0.0.1/mcp", "10.0.0.1"),
    ("named", "https://localhost:1/mcp", "localhost"),
];

#[test]
fn the_guard_refuses_local_and_private_addresses_unless_allowed() {
    let (_t, dir) = state();
    let mut h = host_on(&dir, &[]);
    let admin = bootstrap(&h);
    for (name, url, host) in FORBIDDEN {
        let r = add(
            &h,
            &admin,
            json!({ "name": name, "url": url, "auth": "none" }),
        );
        assert_eq!(
            (r.status, code(&r)),
            (400, "bad_request".to_string()),
            "{url}: {}",
            r.text()
        );
        let message = r.json()["error"]["message"].as_str().unwrap().to_string();
        let expected = format!("{host} is a local or private address");
        assert!(message.contains(&expected), "{message}");
    }
    let plain = json!({ "name": "plain", "url": "http://mcp.example.com/", "auth": "none" });
    assert_eq!(add(&h, &admin, plain).status, 400);
    assert_eq!(rows(&h), 0, "nothing stored");

    // Allowed explicitly (a host, or a host and port): accepted.
    h.stop();
    let allowed = "127.0.0.1,169.254.169.254,10.0.0.1,localhost:1";
    let h = host_on(&dir, &[("outbound_allowed_hosts", allowed)]);
    for (name, url, _) in FORBIDDEN {
        let r = add(
            &h,
            &admin,
            json!({ "name": name, "url": url, "auth": "none" }),
        );
        assert_eq!(r.status, 201, "{url}: {}", r.text());
    }
    assert_eq!(rows(&h), 4);
}

#[test]
fn a_url_that_became_refused_is_a_tool_error_and_nothing_is_sent_to_it() {
    let (_t, dir) = state();
    let (port, seen) = counting_listener();
    let h = host_on(&dir, &[("outbound_allowed_hosts", "127.0.0.1")]);
    let admin = bootstrap(&h);
    ok(add(&h, &admin, local("counted", port)), 201);
    drop(h);

    // The allow-list shrank (the same database, restarted without it).
    let h = host_on(&dir, &[]);
    let m = member(&h, &admin, "m@team.example");
    let r = call_tool(&h, &m, "counted__echo", json!({ "message": "x" }));
    assert_eq!(r["status"], "failed", "{r}");
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("127.0.0.1 is a local or private address"),
        "{r}"
    );
    let id = listed(&h, &admin, "counted")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let refreshed = refresh(&h, &admin, &id);
    let error = refreshed["toolsError"].as_str().unwrap();
    assert!(error.contains("local or private"), "{refreshed}");
    assert_eq!(
        seen.load(Ordering::SeqCst),
        0,
        "no request reached the server"
    );
}

/// A loopback listener that records each request's `Authorization` header and answers 401.
fn recording_listener() -> (u16, Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen: Arc<std::sync::Mutex<Vec<String>>> = Default::default();
    let recorded = seen.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().map_while(Result::ok) {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut auth = String::new();
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                if let Some((k, v)) = line.split_once(':') {
                    if k.eq_ignore_ascii_case("authorization") {
                        auth = v.trim().to_string();
                    }
                }
                line.clear();
            }
            recorded.lock().unwrap().push(auth);
            let _ = stream.write_all(
                b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    (port, seen)
}

/// Issue 32 (5): a bearer token was entered for its URL's origin. Moving the server to another
/// origin (another port) without the token is refused and changes nothing; with the token
/// entered again it moves, and the new origin only ever sees the new token.
#[test]
fn a_bearer_token_never_follows_the_url_to_another_origin() {
    let (old_port, old_seen) = recording_listener();
    let (new_port, new_seen) = recording_listener();
    let (_t, dir) = state();
    let h = host_on(&dir, &[("outbound_allowed_hosts", "127.0.0.1")]);
    let admin = bootstrap(&h);
    let mut body = local("moving", old_port);
    body["auth"] = "bearer".into();
    body["token"] = "tok-OLD-secret".into();
    let id = ok(add(&h, &admin, body), 201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("{SERVERS}/{id}");
    let new_url = format!("http://127.0.0.1:{new_port}/mcp");

    let r = send(&h, &admin, "PATCH", &path, Some(json!({ "url": new_url })));
    assert_eq!(
        (r.status, code(&r)),
        (400, "bad_request".to_string()),
        "{}",
        r.text()
    );
    let message = r.json()["error"]["message"].as_str().unwrap().to_string();
    assert!(message.contains("enter the token again"), "{message}");
    assert_eq!(
        listed(&h, &admin, "moving")["url"],
        json!(format!("http://127.0.0.1:{old_port}/mcp"))
    );
    refresh(&h, &admin, &id);
    assert_eq!(
        old_seen.lock().unwrap().last().map(String::as_str),
        Some("Bearer tok-OLD-secret")
    );
    assert!(
        new_seen.lock().unwrap().is_empty(),
        "nothing went to the new origin"
    );

    let moved = json!({ "url": new_url, "token": "tok-NEW-secret" });
    let r = ok(send(&h, &admin, "PATCH", &path, Some(moved)), 200);
    assert_eq!(
        (r["url"].clone(), r["hasToken"].clone()),
        (json!(new_url), json!(true))
    );
    refresh(&h, &admin, &id);
    let seen = new_seen.lock().unwrap().clone();
    assert!(!seen.is_empty(), "the refresh reached the new origin");
    assert!(
        seen.iter().all(|a| a == "Bearer tok-NEW-secret"),
        "{seen:?}"
    );
}

/// Every byte of the host's database files (the main file and its write-ahead log).
fn database_bytes(state: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(state).unwrap().map_while(Result::ok) {
        let name = entry.file_name().to_string_lossy().to_string();
        if name.starts_with("sqlite_db") {
            all.extend(std::fs::read(entry.path()).unwrap());
        }
    }
    assert!(
        !all.is_empty(),
        "the database files are in {}",
        state.display()
    );
    all
}

#[test]
fn a_bearer_token_is_sealed_never_answered_and_sent_by_the_agent() {
    let server = everything();
    let token = "tok-4c6e0d-very-secret-bearer";
    let (_t, dir) = state();
    let h = host_on(&dir, &[("outbound_allowed_hosts", "127.0.0.1")]);
    let admin = bootstrap(&h);
    let mut body = local("keyed", server.port);
    body["auth"] = "bearer".into();
    body["token"] = token.into();
    let r = add(&h, &admin, body);
    assert!(!r.text().contains(token));
    assert_eq!(ok(r, 201)["hasToken"], true);
    let list = send(&h, &admin, "GET", SERVERS, None);
    assert_eq!(list.status, 200);
    assert!(!list.text().contains(token));
    let raw = database_bytes(&dir);
    let found = raw.windows(token.len()).any(|w| w == token.as_bytes());
    assert!(!found, "the token is in the database files");

    // The agent opens it and calls the server with it.
    let m = member(&h, &admin, "m@team.example");
    let r = call_tool(&h, &m, "keyed__echo", json!({ "message": "with a token" }));
    assert_eq!(r["status"], "completed", "{r}");
}

#[test]
fn the_bootstrap_is_read_only_and_members_reach_nothing() {
    let (_t, dir) = state();
    let boot = json!([{ "name": "boot", "url": "https://mcp.example.com/mcp" }]).to_string();
    let h = host_on(&dir, &[("mcp_connections", &boot)]);
    let admin = bootstrap(&h);
    let list = ok(send(&h, &admin, "GET", SERVERS, None), 200);
    assert_eq!(
        (
            &list["bootstrap"][0]["name"],
            &list["bootstrap"][0]["readOnly"]
        ),
        (&json!("boot"), &json!(true))
    );
    for name in ["boot", "notion"] {
        let clash = json!({ "name": name, "url": "https://other.example.com/", "auth": "none" });
        assert_eq!(add(&h, &admin, clash).status, 409, "{name}");
    }
    let off = Some(json!({"enabled": false}));
    assert_eq!(
        send(
            &h,
            &admin,
            "PATCH",
            &format!("{SERVERS}/bootstrap:boot"),
            off
        )
        .status,
        409
    );

    let created = ok(
        add(
            &h,
            &admin,
            json!({ "name": "open", "url": "https://mcp.example.com/x", "auth": "none" }),
        ),
        201,
    );
    let m = member(&h, &admin, "m@team.example");
    let item = format!("{SERVERS}/{}", created["id"].as_str().unwrap());
    let tools = format!("{item}/tools");
    for (method, path, body) in [
        ("GET", SERVERS, None),
        ("POST", SERVERS, Some(local("x", 1))),
        ("PATCH", item.as_str(), Some(json!({"enabled": false}))),
        ("DELETE", item.as_str(), None),
        ("POST", tools.as_str(), None),
    ] {
        let r = send(&h, &m, method, path, body.clone());
        assert_eq!(r.status, 403, "{method} {path}: {}", r.text());
        assert_eq!(
            call(&h, method, path, None, body.as_ref()).status,
            401,
            "{method} {path}"
        );
    }
    assert_eq!(rows(&h), 1);
}

#[test]
fn a_token_needs_the_secrets_key() {
    let (_t, dir) = state();
    let mut o = HostOptions::default()
        .var("auth_mode", "accounts")
        .var("session_secret", SECRET)
        .var("admin_setup_token", SETUP_TOKEN);
    o.state_dir = Some(dir);
    let h = Host::start(o).expect("a local host");
    let admin = bootstrap(&h);
    let body = json!({ "name": "keyed", "url": "https://mcp.example.com/mcp", "auth": "bearer", "token": "t" });
    let r = add(&h, &admin, body);
    assert_eq!(r.status, 409, "{}", r.text());
    assert!(r.text().contains("secrets_key"), "{}", r.text());
    let none = add(
        &h,
        &admin,
        json!({ "name": "open", "url": "https://mcp.example.com/mcp", "auth": "none" }),
    );
    assert_eq!(none.status, 201, "{}", none.text());
}

#[test]
fn an_oauth_server_added_at_runtime_signs_each_person_in_as_a_configured_one_does() {
    let server = protected(3600);
    let (_t, dir) = state();
    let h = host_on(&dir, &[("outbound_allowed_hosts", "127.0.0.1")]);
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    let mut body = local("notes", server.port);
    body["auth"] = "oauth".into();
    ok(add(&h, &admin, body), 201);

    let message = json!({ "message": "call tool notes__read_notes {\"topic\":\"roadmap\"}" });
    let sid = start_session(&h, &m, &message);
    let events = eve::settled_as(&h, &sid, &m.headers(), Duration::from_secs(60));
    let required = first(&events, "authorization.required").clone();
    assert_eq!(required["data"]["name"], "notes");
    sign_in_as(&h, &required, &m.headers());
    let n = events.len() as u64;
    let path = eve::stream_path(&sid, &format!("startIndex={n}"));
    let after = eve::Stream::open_path(&h, &path, &m.headers(), n).until(eve::is_settling);
    assert_eq!(after[0]["data"]["outcome"], "authorized", "{after:?}");
    let r = &first(&after, "action.result")["data"];
    assert_eq!(r["status"], "completed", "{r}");
    let menu = ok(send(&h, &m, "GET", "/eve/v1/connections", None), 200);
    let notes = menu["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "notes")
        .unwrap()
        .clone();
    assert_eq!(
        (notes["connected"].clone(), notes["revocable"].clone()),
        (json!(true), json!(true)),
        "{menu}"
    );
}

/// The fixed-list deployment (docs/runtime.md "Outbound access"): a public host the guard lets
/// through but the manifest's `allowed_outbound_hosts` does not list is named as such.
#[test]
fn a_host_outside_allowed_outbound_hosts_is_named_in_the_refresh_error() {
    let (_t, dir) = state();
    let h = host_on(&dir, &[]);
    let admin = bootstrap(&h);
    let body = json!({ "name": "far", "url": "https://mcp.example.com/mcp", "auth": "none" });
    let id = ok(add(&h, &admin, body), 201)["id"]
        .as_str()
        .unwrap()
        .to_string();
    let refreshed = refresh(&h, &admin, &id);
    let error = refreshed["toolsError"].as_str().unwrap_or_default();
    assert!(
        error.contains("is not in allowed_outbound_hosts"),
        "{refreshed}"
    );
}
