//! Bad input and attack (issue 7, item 4): every route of the app — auth, chats, events, the
//! eve session API and the shell — is sent malformed, truncated, oversized and wrongly typed
//! bodies, wrong content types, odd methods, path tricks and header tricks. Whatever arrives:
//!
//! - no 5xx (the only deliberate one is the agent's documented `503 not_configured` when its
//!   database is unavailable, which none of these requests may cause),
//! - no `trapped` / `panicked` line in the host's log,
//! - no write: every table of the app's SQLite database is compared before and after, as are
//!   the chat list and each chat's contents over HTTP,
//! - no session cookie on a failure, no CORS grant to another origin.
//!
//! Cross-principal access (local-dev and password principals on one state directory), forged
//! principal assertions at the agent (reached directly, as where it must be public), cross-site
//! requests and expired or tampered cookies all fail closed.
//!
//! Requests whose exact bytes matter (raw paths with `..`, `%2e%2e`, `%00`; custom methods;
//! duplicate, huge or forged headers; odd `Host` values) go through [`raw`], a tiny HTTP/1.1
//! client on a plain socket: a URL library would normalise them away before they are sent.

use eve_api::auth::{AuthMode, Principal};
use eve_auth::cookie::{SessionClaims, SESSION_COOKIE_NAME};
use eve_auth::AuthConfig;
use eve_chat_tests::{repo_root, Host, HostOptions, Response};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

const SECRET: &str = "attack-suite-session-secret-0123456789abcdef";
const PASSWORD: &str = "correct horse battery staple";

// ------------------------------------------------------------------------ raw HTTP client

/// A response read off the socket (`status` 0: the server closed the connection without one).
#[derive(Debug, Clone)]
struct Raw {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn from_response(r: &Response) -> Raw {
        Raw {
            status: r.status,
            headers: r.headers.clone(),
            body: r.body.clone(),
        }
    }
}

/// `host:port` of the app.
fn authority(h: &Host) -> String {
    h.base
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string()
}

/// Sends exactly `method target HTTP/1.1`, the given header lines (a `Host` line is added
/// unless one is given; `Content-Length` whenever there is a body) and `body`.
fn raw(h: &Host, method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Raw {
    let mut head = format!("{method} {target} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {}\r\n", authority(h)));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH") {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("Connection: close\r\n\r\n");
    raw_bytes(h, &[head.as_bytes(), body].concat())
}

/// Writes `request` as is and reads the whole response.
fn raw_bytes(h: &Host, request: &[u8]) -> Raw {
    let mut s = TcpStream::connect(authority(h)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    // The server may answer (431, 413) and close before reading everything: that is fine.
    let _ = s.write_all(request);
    let _ = s.flush();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    parse_response(&buf)
}

fn parse_response(buf: &[u8]) -> Raw {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Raw {
            status: 0,
            headers: vec![],
            body: buf.to_vec(),
        };
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let rest = &buf[end + 4..];
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.to_ascii_lowercase().contains("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    Raw {
        status,
        headers,
        body,
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(nl) = data.windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&data[..nl]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .unwrap_or(0);
        data = &data[nl + 2..];
        if size == 0 || data.len() < size {
            out.extend_from_slice(&data[..size.min(data.len())]);
            break;
        }
        out.extend_from_slice(&data[..size]);
        data = data.get(size + 2..).unwrap_or(&[]);
    }
    out
}

// ------------------------------------------------------------------------ the checks

/// A request's outcome is acceptable whatever it was: not a 5xx, an error envelope when it
/// is a JSON error, no session cookie set on a failure, no CORS grant.
fn check(ctx: &str, r: &Raw) {
    assert!(
        r.status < 500,
        "{ctx}: answered {} — {}",
        r.status,
        r.text().chars().take(300).collect::<String>()
    );
    let is_json = r
        .header("content-type")
        .is_some_and(|c| c.starts_with("application/json"));
    if r.status >= 400 && is_json && !r.body.is_empty() {
        let v: Value = serde_json::from_slice(&r.body)
            .unwrap_or_else(|e| panic!("{ctx}: a JSON error that is not JSON ({e}): {}", r.text()));
        assert!(
            v["error"]["code"].is_string() && v["error"]["message"].is_string(),
            "{ctx}: not the error envelope: {v}"
        );
    }
    if r.status >= 400 {
        for c in r.all("set-cookie") {
            assert!(
                c.contains("Max-Age=0"),
                "{ctx}: a failure ({}) set a cookie: {c}",
                r.status
            );
        }
    }
    if let Some(acao) = r.header("access-control-allow-origin") {
        panic!("{ctx}: grants CORS to {acao}");
    }
}

/// The host has logged no trap and no panic.
fn assert_clean_log(h: &Host) {
    let log = h.log();
    for bad in [
        "trapped",
        "panicked",
        "component task failed",
        "returned without setting a response",
        "cannot prepare",
    ] {
        assert!(
            !log.contains(bad),
            "the host log has `{bad}`:\n{}",
            log.lines()
                .filter(|l| l.contains(bad) || l.contains("panic"))
                .take(20)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

/// Every row of every table of the app's database (own hosts only), read-only.
fn db_dump(h: &Host) -> Option<BTreeMap<String, Vec<String>>> {
    let path = h.state_dir()?.join("sqlite_db.db");
    let conn = rusqlite::Connection::open_with_flags(
        &path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .ok()?;
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut out = BTreeMap::new();
    for t in tables {
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{t}\"")).unwrap();
        let n = stmt.column_count();
        let mut rows: Vec<String> = stmt
            .query_map([], |r| {
                Ok((0..n)
                    .map(|i| match r.get_ref(i).unwrap() {
                        rusqlite::types::ValueRef::Text(t) => {
                            format!("{:?}", String::from_utf8_lossy(t))
                        }
                        other => format!("{other:?}"),
                    })
                    .collect::<Vec<_>>()
                    .join("|"))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        rows.sort();
        // A table created on demand (the agent's, on its first request) is not a write of data.
        if !rows.is_empty() {
            out.insert(t, rows);
        }
    }
    Some(out)
}

/// What a client can see, plus the database: compared before and after an attack.
#[derive(Debug, PartialEq)]
struct State {
    db: Option<BTreeMap<String, Vec<String>>>,
    chats: Value,
    contents: Vec<Value>,
}

fn state(h: &Host, cookie: Option<&str>) -> State {
    let headers: Vec<(&str, &str)> = cookie.map(|c| vec![("cookie", c)]).unwrap_or_default();
    let list = h.send("GET", "/api/chats?limit=100", &headers, None);
    let chats = if list.status == 200 {
        list.json()["chats"].clone()
    } else {
        json!(null)
    };
    let contents = chats
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| {
                    let id = c["id"].as_str().unwrap();
                    h.send("GET", &format!("/api/chats/{id}"), &headers, None)
                        .json()
                })
                .collect()
        })
        .unwrap_or_default();
    State {
        db: db_dump(h),
        chats,
        contents,
    }
}

fn assert_unchanged(h: &Host, before: &State, cookie: Option<&str>, ctx: &str) {
    let after = state(h, cookie);
    if let (Some(a), Some(b)) = (&before.db, &after.db) {
        for (table, rows) in b {
            assert_eq!(a.get(table), Some(rows), "{ctx}: table `{table}` changed");
        }
        for table in a.keys() {
            assert!(b.contains_key(table), "{ctx}: table `{table}` was emptied");
        }
    }
    assert_eq!(before.chats, after.chats, "{ctx}: the chat list changed");
    assert_eq!(before.contents, after.contents, "{ctx}: a chat changed");
}

// ------------------------------------------------------------------------ the app under attack

/// A local-dev app (or `EVE_CHAT_BASE_URL`) with a seeded chat (events, pending message,
/// session) and a settled eve session: `(host, chat id, eve session id)`.
fn seeded() -> (Host, String, String) {
    let h = match Host::start(HostOptions::default().var("chat_create_per_hour", "100000")) {
        Some(h) => h,
        None => Host::shared(),
    };
    let (chat, session) = seed(&h, None, "local-dev");
    (h, chat, session)
}

/// Seeds one chat and one eve session for the caller of `cookie`.
/// The chat's title and pending message name `label`, so searches can look for it.
fn seed(h: &Host, cookie: Option<&str>, label: &str) -> (String, String) {
    let origin = h.origin();
    let mut headers = vec![
        ("content-type", "application/json"),
        ("origin", origin.as_str()),
    ];
    if let Some(c) = cookie {
        headers.push(("cookie", c));
    }
    let send = |method: &str, path: &str, body: Value| {
        let r = h.send(method, path, &headers, Some(body.to_string().as_bytes()));
        assert!(
            r.status < 300,
            "seeding {method} {path}: {} {}",
            r.status,
            r.text()
        );
        r
    };
    let chat = send(
        "POST",
        "/api/chats",
        json!({ "pendingUserMessage": format!("the seeded chat of {label}") }),
    )
    .json()["chat"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    send(
        "POST",
        &format!("/api/chats/{chat}/events"),
        json!({ "events": [
            { "eventIndex": 0, "event": { "type": "user.message", "index": 0, "text": "hi" } },
            { "eventIndex": 1, "event": { "type": "assistant.text.delta", "index": 1, "delta": "hello" } },
        ] }),
    );
    send(
        "PUT",
        &format!("/api/chats/{chat}/session"),
        json!({ "session": { "sessionId": "ses_seeded", "streamIndex": 2 } }),
    );
    send(
        "PUT",
        &format!("/api/chats/{chat}/pending"),
        json!({ "message": "still pending" }),
    );
    let created = send(
        "POST",
        "/eve/v1/session",
        json!({ "message": "hello agent" }),
    );
    let session = created.json()["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("POST /eve/v1/session: {}", created.text()))
        .to_string();
    wait_settled(h, &session, cookie);
    (chat, session)
}

/// Reads the session's stream until the turn settles (the stream then ends).
fn wait_settled(h: &Host, session: &str, cookie: Option<&str>) {
    let mut req = h
        .client()
        .get(&h.url(&format!("/eve/v1/session/{session}/stream?startIndex=0")));
    if let Some(c) = cookie {
        req = req.set("cookie", c);
    }
    let resp = req.call().expect("the stream opens");
    let reader = BufReader::new(resp.into_reader());
    for line in reader.lines() {
        let Ok(line) = line else { break };
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if v["type"]
            .as_str()
            .is_some_and(eve_api::eve::is_settling_type)
        {
            return;
        }
    }
    panic!("the seeded turn of {session} never settled");
}

/// Every route of the app with a method it answers and a well-formed body (`None`: no body).
fn routes(chat: &str, session: &str) -> Vec<(&'static str, String, Option<Value>)> {
    vec![
        ("GET", "/api/setup".into(), None),
        ("GET", "/api/auth/session".into(), None),
        (
            "POST",
            "/api/auth/login".into(),
            Some(json!({ "password": "not the password" })),
        ),
        ("POST", "/api/auth/logout".into(), None),
        ("GET", "/api/auth/oidc/start".into(), None),
        ("GET", "/api/auth/oidc/callback?code=x&state=y".into(), None),
        ("GET", "/api/chats".into(), None),
        (
            "POST",
            "/api/chats".into(),
            Some(json!({ "pendingUserMessage": "a new chat" })),
        ),
        ("GET", format!("/api/chats/{chat}"), None),
        (
            "PATCH",
            format!("/api/chats/{chat}"),
            Some(json!({ "title": "renamed" })),
        ),
        ("DELETE", format!("/api/chats/{chat}"), None),
        ("GET", format!("/api/chats/{chat}/export?format=json"), None),
        (
            "POST",
            format!("/api/chats/{chat}/events"),
            Some(json!({ "events": [{ "eventIndex": 5, "event": { "type": "x" } }] })),
        ),
        (
            "PUT",
            format!("/api/chats/{chat}/events/7"),
            Some(json!({ "type": "x" })),
        ),
        (
            "PUT",
            format!("/api/chats/{chat}/snapshot"),
            Some(json!({ "events": [{ "type": "x" }], "session": null })),
        ),
        (
            "PUT",
            format!("/api/chats/{chat}/pending"),
            Some(json!({ "message": "another" })),
        ),
        (
            "PUT",
            format!("/api/chats/{chat}/session"),
            Some(json!({ "session": { "sessionId": "ses_other", "streamIndex": 9 } })),
        ),
        (
            "POST",
            format!("/api/chats/{chat}/authorization/skip"),
            Some(
                json!({ "events": [{ "eventIndex": 9, "event": { "type": "authorization.completed" } }] }),
            ),
        ),
        (
            "POST",
            "/eve/v1/session".into(),
            Some(json!({ "message": "start" })),
        ),
        (
            "POST",
            format!("/eve/v1/session/{session}"),
            Some(json!({ "message": "next" })),
        ),
        ("GET", format!("/eve/v1/session/{session}/stream"), None),
        ("POST", format!("/eve/v1/session/{session}/interrupt"), None),
        ("GET", "/".into(), None),
        ("GET", format!("/chat/{chat}"), None),
        ("GET", "/favicon.svg".into(), None),
    ]
}

/// Routes that take a JSON body and must refuse a bad one.
fn body_routes(chat: &str, session: &str) -> Vec<(&'static str, String, Value)> {
    routes(chat, session)
        .into_iter()
        .filter_map(|(m, p, b)| b.map(|b| (m, p, b)))
        .collect()
}

fn same_origin(h: &Host) -> Vec<(&'static str, String)> {
    vec![
        ("origin", h.origin()),
        ("sec-fetch-site", "same-origin".to_string()),
    ]
}

fn send(h: &Host, method: &str, path: &str, headers: &[(&str, String)], body: &[u8]) -> Raw {
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    raw(h, method, path, &headers, body)
}

/// `count` levels of nested arrays.
fn nested(count: usize) -> String {
    format!("{}{}", "[".repeat(count), "]".repeat(count))
}

/// Bodies no route accepts, whatever its shape.
fn bad_bodies(valid: &Value) -> Vec<(String, Vec<u8>)> {
    let valid_text = valid.to_string();
    let mut bodies: Vec<(String, Vec<u8>)> = vec![
        ("not JSON".into(), b"not json".to_vec()),
        ("a lone brace".into(), b"{".to_vec()),
        ("a JSON array".into(), b"[1,2]".to_vec()),
        ("an empty array".into(), b"[]".to_vec()),
        ("a positional array".into(), b"[\"x\", \"y\"]".to_vec()),
        ("a number".into(), b"42".to_vec()),
        ("a string".into(), b"\"text\"".to_vec()),
        ("null".into(), b"null".to_vec()),
        ("true".into(), b"true".to_vec()),
        (
            "every field wrongly typed".into(),
            br#"{"password":5,"pendingUserMessage":5,"id":[],"title":7,"events":"x","session":"x","message":{"a":1},"inputResponses":"x","type":3}"#.to_vec(),
        ),
        (
            "duplicate keys".into(),
            br#"{"message":"a","message":"b","title":"a","title":"b","password":"a","password":"b","pendingUserMessage":"a","pendingUserMessage":"b","events":[],"events":[],"type":"a","type":"b","session":null,"session":null}"#.to_vec(),
        ),
        (
            "invalid UTF-8".into(),
            b"{\"message\":\"\xff\xfe\",\"title\":\"\xc3\x28\",\"password\":\"\xed\xa0\x80\",\"type\":\"\xff\"}".to_vec(),
        ),
        (
            "a byte-order mark".into(),
            [&b"\xef\xbb\xbf"[..], valid_text.as_bytes()].concat(),
        ),
        (
            "nesting 100 000 deep".into(),
            format!("{{\"events\":{0},\"message\":{0},\"type\":{0}}}", nested(100_000)).into_bytes(),
        ),
        (
            "10 MB of one string".into(),
            format!(
                "{{\"events\":\"{0}\",\"message\":{{\"x\":\"{0}\"}},\"title\":7,\"password\":7,\"type\":7}}",
                "a".repeat(5 << 20)
            )
            .into_bytes(),
        ),
        ("10 MB of garbage".into(), vec![b'\x07'; 10 << 20]),
    ];
    for cut in [1, valid_text.len() / 2, valid_text.len() - 1] {
        bodies.push((
            format!("truncated at {cut} of {}", valid_text.len()),
            valid_text.as_bytes()[..cut].to_vec(),
        ));
    }
    bodies
}

#[test]
fn malformed_truncated_oversized_and_wrongly_typed_bodies_fail_on_every_route_without_a_write() {
    let (h, chat, session) = seeded();
    let before = state(&h, None);
    let mut headers = same_origin(&h);
    headers.push(("content-type", "application/json".into()));
    for (method, path, valid) in body_routes(&chat, &session) {
        for (what, body) in bad_bodies(&valid) {
            // The one free-form body (an event is any JSON object with a `type`) takes
            // duplicate keys as JSON parsers do, the last one winning: well-formed JSON.
            if what == "duplicate keys" && path.contains("/events/") {
                continue;
            }
            let ctx = format!("{method} {path} with {what}");
            let r = send(&h, method, &path, &headers, &body);
            check(&ctx, &r);
            assert!(
                (400..500).contains(&r.status),
                "{ctx}: answered {} — {}",
                r.status,
                r.text().chars().take(200).collect::<String>()
            );
        }
    }
    // A large batch of good events with one bad one at the very end writes none of them.
    let mut events: Vec<Value> = (0..40_000)
        .map(|i| json!({ "eventIndex": i % 19_000 + 100, "event": { "type": "x", "pad": "p".repeat(300) } }))
        .collect();
    events.push(json!({ "eventIndex": -1, "event": { "type": "x" } }));
    let big = json!({ "events": events }).to_string();
    assert!(big.len() > 10 << 20);
    for path in [
        format!("/api/chats/{chat}/events"),
        format!("/api/chats/{chat}/authorization/skip"),
    ] {
        let r = send(&h, "POST", &path, &headers, big.as_bytes());
        check(&format!("POST {path} with a bad last event"), &r);
        assert!((400..500).contains(&r.status), "{path}: {}", r.status);
    }
    assert_unchanged(&h, &before, None, "after bad bodies");
    assert_clean_log(&h);
}

#[test]
fn a_well_formed_body_with_the_wrong_content_type_is_refused_without_a_write() {
    let (h, chat, session) = seeded();
    let before = state(&h, None);
    for (method, path, valid) in body_routes(&chat, &session) {
        for content_type in [
            None,
            Some("text/plain"),
            Some("text/plain; charset=utf-8"),
            Some("application/x-www-form-urlencoded"),
            Some("multipart/form-data; boundary=x"),
            Some("application/jsonp"),
            Some("application/json-patch+json"),
            Some("text/json"),
            Some("application/xml"),
            Some(""),
        ] {
            let mut headers = same_origin(&h);
            if let Some(ct) = content_type {
                headers.push(("content-type", ct.to_string()));
            }
            let ctx = format!("{method} {path} as {content_type:?}");
            let r = send(&h, method, &path, &headers, valid.to_string().as_bytes());
            check(&ctx, &r);
            assert!(
                (400..500).contains(&r.status),
                "{ctx}: answered {} — {}",
                r.status,
                r.text()
            );
        }
    }
    assert_unchanged(&h, &before, None, "after wrong content types");
    assert_clean_log(&h);
}

#[test]
fn odd_methods_on_every_route_are_refused_without_a_write_and_trace_echoes_nothing() {
    let (h, chat, session) = seeded();
    let before = state(&h, None);
    let table = routes(&chat, &session);
    let mut headers = same_origin(&h);
    headers.push(("content-type", "application/json".into()));
    headers.push(("cookie", "secret-cookie-value=do-not-echo".into()));
    headers.push(("authorization", "Bearer do-not-echo-either".into()));
    let paths: Vec<(String, Vec<&str>)> = {
        let mut by_path: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for (m, p, _) in &table {
            by_path.entry(p.clone()).or_default().push(m);
        }
        by_path.into_iter().collect()
    };
    for (path, allowed) in &paths {
        for method in [
            "OPTIONS", "TRACE", "PATCH", "PUT", "DELETE", "POST", "HEAD", "FOO", "PROPFIND", "get",
            "post", "M-SEARCH", "BREW",
        ] {
            if allowed.contains(&method) {
                continue;
            }
            // HEAD is GET without a body wherever GET is allowed.
            if method == "HEAD" && allowed.contains(&"GET") {
                continue;
            }
            let ctx = format!("{method} {path}");
            let r = send(
                &h,
                method,
                path,
                &headers,
                b"{\"title\":\"x\",\"message\":\"x\"}",
            );
            check(&ctx, &r);
            assert!(
                (400..500).contains(&r.status),
                "{ctx}: answered {} — {}",
                r.status,
                r.text()
            );
            assert!(
                !r.text().contains("do-not-echo"),
                "{ctx}: echoes request headers back: {}",
                r.text()
            );
        }
    }
    // CONNECT with a path (not an authority) is not a tunnel request; whatever the host says,
    // it stays up.
    let r = send(&h, "CONNECT", "/api/chats", &headers, b"");
    assert!(r.status == 0 || r.status < 500, "CONNECT: {}", r.status);
    assert_eq!(h.get("/api/setup").status, 200, "the host is still up");
    assert_unchanged(&h, &before, None, "after odd methods");
    assert_clean_log(&h);
}

/// Raw request targets that try to escape their route, reach files, or confuse id parsing.
fn tricky_paths(chat: &str, session: &str) -> Vec<String> {
    let long = "a".repeat(10_000);
    let digits = "9".repeat(10_000);
    let mut out: Vec<String> = vec![
        "/..".into(),
        "/../../../../etc/passwd".into(),
        "/%2e%2e/%2e%2e/%2e%2e/etc/passwd".into(),
        "/%2E%2E%2F%2E%2E%2Fspin.toml".into(),
        "/assets/..%2F..%2F..%2Fspin.toml".into(),
        "/assets/%2e%2e/%2e%2e/Cargo.toml".into(),
        "/assets/%252e%252e/%252e%252e/Cargo.toml".into(),
        "/..%5C..%5Cspin.toml".into(),
        "/index.html%00.js".into(),
        "/%00".into(),
        "//etc/passwd".into(),
        "///api/chats".into(),
        "/.git/config".into(),
        "/.spin/sqlite_db.db".into(),
        format!("/chat/{long}"),
        format!("/chat/{chat}/../../spin.toml"),
        "/chat/%E2%80%AE%F0%9F%92%A5".into(),
        "/chat/%ff%fe".into(),
        "/api".into(),
        "/api/".into(),
        "/api/../api/chats".into(),
        "/api/chats/".into(),
        "/api/chats//".into(),
        "//api//chats".into(),
        "/api//chats".into(),
        "/api/chats/..".into(),
        "/api/chats/%2e%2e".into(),
        format!("/api/chats/{chat}/.."),
        format!("/api/chats/{chat}/../../setup"),
        format!("/api/chats/{chat}%2Fevents%2F0"),
        format!("/api/chats/{chat}%2F..%2F..%2Fsetup"),
        format!("/api/chats/{chat}/events/0%2F..%2F1"),
        format!("/api/chats/{chat}//events"),
        format!("/api/chats/{chat}/events//0"),
        format!("/api/chats/{chat}/events/0/"),
        format!("/api/chats/{chat}/export/"),
        format!("/api/chats/{chat}%00"),
        format!("/api/chats/{chat}%00/events/0"),
        format!("/api/chats/%00{chat}"),
        "/api/chats/%E6%97%A5%E6%9C%AC%E8%AA%9E".into(),
        "/api/chats/%F0%9F%92%A5/events/0".into(),
        "/api/chats/%C0%AE%C0%AE".into(),
        "/api/chats/x%0D%0ASet-Cookie:%20pwned=1".into(),
        format!("/api/chats/{long}"),
        format!("/api/chats/{long}/events/0"),
        format!("/api/chats/{chat}/events/{digits}"),
        format!("/api/chats/{chat}/events/-0"),
        format!("/api/chats/{chat}/events/%2B1"),
        format!("/api/chats/{chat}/events/0x10"),
        format!("/api/chats/{chat}/authorization/skip/.."),
        format!(
            "/api/chats?cursor={}&limit={digits}",
            "2024-01-01T00:00:00.000Z%3A%3A".to_string() + &long
        ),
        format!("/api/chats?q={}", "%25".repeat(3000)),
        "/api/chats?limit=-1&limit=0&cursor=%00".into(),
        "/api/auth/..".into(),
        "/api/auth/%2e%2e/setup".into(),
        "/api/auth/login/..%2F..%2Fsetup".into(),
        "/api/auth//login".into(),
        format!("/api/auth/oidc/callback?code={long}&state={long}"),
        "/api/auth/oidc/start?returnTo=%2F%2Fevil.example".into(),
        "/api/setup%00".into(),
        "/api/setup/../chats".into(),
        "/eve".into(),
        "/eve/v1".into(),
        "/eve/v1/".into(),
        "/eve/v1/..".into(),
        "/eve/v1/../../api/chats".into(),
        "/eve/v1/%2e%2e/%2e%2e/api/chats".into(),
        "/eve/v1/session/..%2F..%2F..%2Fapi%2Fchats".into(),
        format!("/eve/v1/session/{session}%2Fstream"),
        format!("/eve/v1/session/{session}/../{session}/stream"),
        format!("/eve/v1/session/{session}/stream/.."),
        format!("/eve/v1/session/{session}/stream?startIndex={digits}"),
        format!("/eve/v1/session/{session}/stream?startIndex=-1"),
        format!("/eve/v1/session/{session}%00/stream"),
        format!("/eve/v1/session/ses_{long}/stream"),
        "/eve/v1/session/%E2%80%AE/stream".into(),
        "/eve/v1//session".into(),
        format!("/eve/v1/session/{session}/authorizations/..%2F..%2Fstream"),
        format!("/eve/v1/session/{session}/authorizations/{long}"),
    ];
    out.dedup();
    out
}

#[test]
fn path_tricks_never_escape_their_route_reach_files_or_write() {
    let (h, chat, session) = seeded();
    let before = state(&h, None);
    let mut headers = same_origin(&h);
    headers.push(("content-type", "application/json".into()));
    let manifest = std::fs::read_to_string(repo_root().join("spin.toml")).unwrap();
    let secret_line = manifest
        .lines()
        .find(|l| l.starts_with("spin_manifest_version"))
        .unwrap()
        .to_string();
    for path in tricky_paths(&chat, &session) {
        for (method, body) in [
            ("GET", &b""[..]),
            (
                "POST",
                &br#"{"message":"x","events":[],"pendingUserMessage":"x"}"#[..],
            ),
            (
                "PUT",
                &br#"{"type":"x","message":"x","session":null,"events":[]}"#[..],
            ),
            ("PATCH", &br#"{"title":"pwned"}"#[..]),
            ("DELETE", &b""[..]),
        ] {
            // A query string on a real route is still that route (POST /api/chats?q=x
            // creates a chat, rightly): those targets are read only.
            if path.contains('?') && method != "GET" {
                continue;
            }
            let ctx = format!("{method} {}", path.chars().take(120).collect::<String>());
            let r = send(&h, method, &path, &headers, body);
            check(&ctx, &r);
            let text = r.text();
            for leak in [
                secret_line.as_str(),
                "root:x:0:0",
                "[workspace]",
                "SQLite format",
                "repositoryformatversion",
            ] {
                assert!(!text.contains(leak), "{ctx}: leaks `{leak}`");
            }
            assert!(
                r.header("pwned").is_none()
                    && !r.all("set-cookie").iter().any(|c| c.contains("pwned")),
                "{ctx}: header injection"
            );
        }
        let short: String = path.chars().take(120).collect();
        assert_unchanged(&h, &before, None, &format!("after {short}"));
    }
    assert_unchanged(&h, &before, None, "after path tricks");
    assert_clean_log(&h);
}

/// Header tricks sent with a request that must fail: a state change from another origin, or
/// a read (which never writes).
fn header_tricks(own: &str) -> Vec<(&'static str, Vec<(String, String)>)> {
    let kv = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    vec![
        ("nothing more", vec![]),
        (
            "a 512 KiB header",
            kv(&[("x-huge", &"x".repeat(512 * 1024))]),
        ),
        ("a 64 KiB header", kv(&[("x-big", &"x".repeat(64 * 1024))])),
        (
            "a 60 KiB cookie",
            kv(&[("cookie", &format!("a={}", "b".repeat(60 * 1024)))]),
        ),
        (
            "500 headers",
            (0..500)
                .map(|i| (format!("x-filler-{i}"), "y".to_string()))
                .collect(),
        ),
        (
            "forged spin-* headers naming the attacker's origin",
            kv(&[
                ("spin-full-url", "http://evil.example/api/chats"),
                ("spin-path-info", "/../../spin.toml"),
                ("spin-matched-route", "/..."),
                ("spin-component-route", ""),
                ("spin-path-match-id", "../../x"),
                ("spin-client-addr", "10.0.0.1:1"),
                ("spin-base-path", "/evil"),
            ]),
        ),
        (
            "proxy headers naming the attacker's origin",
            kv(&[
                ("x-forwarded-for", "127.0.0.1"),
                ("x-forwarded-host", "evil.example"),
                ("x-forwarded-proto", "https"),
                ("forwarded", "for=127.0.0.1;host=evil.example;proto=https"),
                ("x-original-url", "/api/setup"),
                ("x-http-method-override", "GET"),
            ]),
        ),
        (
            "forged principal headers",
            kv(&[
                (
                    "x-eve-principal-assertion",
                    "v1.eyJwIjp7ImlkIjoibWFsbG9yeSJ9fQ.AAAA",
                ),
                ("x-principal", "mallory"),
                ("x-user-id", "mallory"),
                ("x-remote-user", "mallory"),
                ("authorization", "Bearer forged"),
            ]),
        ),
        (
            "the app's origin in a referer",
            kv(&[("referer", &format!("{own}/chat/x"))]),
        ),
        ("an empty Host", kv(&[("host", "")])),
        ("a Host with a space", kv(&[("host", "a b")])),
        (
            "a Host with an impossible port",
            kv(&[("host", "127.0.0.1:99999")]),
        ),
        (
            "a Host with credentials",
            kv(&[("host", "user@evil.example")]),
        ),
        ("a half IPv6 Host", kv(&[("host", "[::1")])),
        (
            "the agent's internal Host",
            kv(&[("host", "agent.spin.internal")]),
        ),
        (
            "a 10 000-character Host",
            kv(&[("host", &"h".repeat(10_000))]),
        ),
        (
            "two Host headers",
            kv(&[("host", "evil.example"), ("host", "127.0.0.1")]),
        ),
        (
            "odd stream headers",
            kv(&[
                ("last-event-id", &"9".repeat(200)),
                ("accept", "text/event-stream;q=abc, */*;;;"),
                ("accept-encoding", "br;q=2, gzip;q=-1, identity;q=0"),
                ("range", "bytes=999999999-0"),
                ("if-none-match", &"\"x\", ".repeat(1000)),
            ]),
        ),
        ("a negative Last-Event-ID", kv(&[("last-event-id", "-1")])),
        (
            "an Origin header with the app's origin as a prefix",
            kv(&[("x-origin", own)]),
        ),
    ]
}

#[test]
fn header_tricks_never_turn_a_refused_request_into_a_write_or_a_5xx() {
    let (h, chat, session) = seeded();
    let before = state(&h, None);
    let own = h.origin();
    for (method, path, body) in routes(&chat, &session) {
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let reads = method == "GET";
        for (what, extra) in header_tricks(&own) {
            // A state change comes from another site (and must be refused whatever the trick);
            // a read comes from the app itself (and writes nothing whatever the trick).
            let mut headers: Vec<(&str, &str)> = vec![("content-type", "application/json")];
            let evil_origin = format!("{own}.evil.example");
            if reads {
                headers.push(("origin", own.as_str()));
            } else {
                headers.push(("origin", evil_origin.as_str()));
            }
            headers.extend(extra.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            let ctx = format!("{method} {path} with {what}");
            let r = raw(&h, method, &path, &headers, body.as_bytes());
            // 0: the host closed the connection on an oversized head (allowed).
            assert!(
                r.status == 0 || r.status < 500,
                "{ctx}: {} {}",
                r.status,
                r.text()
            );
            if r.status != 0 {
                check(&ctx, &r);
                if !reads {
                    assert!(
                        (400..500).contains(&r.status),
                        "{ctx}: answered {}",
                        r.status
                    );
                }
            }
        }
        // A request head split oddly: two Content-Length values, and an obsolete line fold.
        if !reads {
            let b = body.as_bytes();
            let req = format!(
                "{method} {path} HTTP/1.1\r\nHost: {}\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\nContent-Length: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                authority(&h),
                b.len(),
                b.len() + 5
            );
            let r = raw_bytes(&h, &[req.as_bytes(), b].concat());
            assert!(
                r.status == 0 || (400..500).contains(&r.status),
                "{method} {path} with two Content-Lengths: {}",
                r.status
            );
            let req = format!(
                "{method} {path} HTTP/1.1\r\nHost: {}\r\nOrigin: http://evil.example\r\nX-Folded: a\r\n {own}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                authority(&h),
                b.len()
            );
            let r = raw_bytes(&h, &[req.as_bytes(), b].concat());
            assert!(
                r.status == 0 || (400..500).contains(&r.status),
                "{method} {path} with a folded header: {}",
                r.status
            );
        }
    }
    assert_eq!(h.get("/api/setup").status, 200, "the host is still up");
    assert_unchanged(&h, &before, None, "after header tricks");
    assert_clean_log(&h);
}

#[test]
fn forged_spin_headers_are_replaced_by_the_host() {
    let (h, chat, _) = seeded();
    // The shell serves what the request path names, not a forged `spin-path-info`.
    let r = raw(
        &h,
        "GET",
        "/favicon.svg",
        &[("spin-path-info", "/index.html")],
        b"",
    );
    assert_eq!(r.status, 200);
    assert!(
        r.header("content-type").unwrap_or("").contains("svg"),
        "{:?}",
        r.headers
    );
    // A cross-site write with a forged `spin-full-url` naming the attacker is still cross-site.
    let before = state(&h, None);
    let r = raw(
        &h,
        "PATCH",
        &format!("/api/chats/{chat}"),
        &[
            ("origin", "http://evil.example"),
            ("spin-full-url", "http://evil.example/"),
            ("content-type", "application/json"),
        ],
        br#"{"title":"pwned"}"#,
    );
    assert_eq!(r.status, 403, "{}", r.text());
    assert_unchanged(&h, &before, None, "forged spin-full-url");
}

/// Origins a cross-site attacker's page can make a browser send with a state change.
fn hostile_origins(own: &str) -> Vec<(String, Vec<(&'static str, String)>)> {
    let port = own.rsplit(':').next().unwrap().to_string();
    let mut out: Vec<(String, Vec<(&'static str, String)>)> = vec![
        ("Origin: null".into(), vec![("origin", "null".into())]),
        (
            "another site".into(),
            vec![("origin", "https://evil.example".into())],
        ),
        (
            "the app's host as a subdomain of the attacker's".into(),
            vec![("origin", format!("http://127.0.0.1.evil.example:{port}"))],
        ),
        (
            "another port".into(),
            vec![("origin", "http://127.0.0.1:1".into())],
        ),
        (
            "localhost instead of 127.0.0.1".into(),
            vec![("origin", format!("http://localhost:{port}"))],
        ),
        (
            "a garbage Origin".into(),
            vec![("origin", "not a url".into())],
        ),
        (
            "an Origin with credentials".into(),
            vec![("origin", format!("http://user@127.0.0.1:{port}"))],
        ),
        (
            "Sec-Fetch-Site: cross-site with the app's Origin".into(),
            vec![
                ("origin", own.to_string()),
                ("sec-fetch-site", "cross-site".into()),
            ],
        ),
        (
            "Sec-Fetch-Site: same-site".into(),
            vec![
                ("origin", own.to_string()),
                ("sec-fetch-site", "same-site".into()),
            ],
        ),
        (
            "Sec-Fetch-Site: cross-site without Origin".into(),
            vec![("sec-fetch-site", "cross-site".into())],
        ),
    ];
    out.push((
        "Sec-Fetch-Site: CROSS-SITE in capitals".into(),
        vec![("sec-fetch-site", "CROSS-SITE".into())],
    ));
    out
}

/// Every state-changing route, with a well-formed body, sent from hostile origins: refused,
/// no write, no cookie.
fn assert_cross_site_refused(h: &Host, chat: &str, session: &str, cookie: Option<&str>) {
    let before = state(h, cookie);
    for (method, path, body) in routes(chat, session) {
        if method == "GET" {
            continue;
        }
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        for (what, origin_headers) in hostile_origins(&h.origin()) {
            let mut headers: Vec<(&str, &str)> = vec![("content-type", "application/json")];
            if let Some(c) = cookie {
                headers.push(("cookie", c));
            }
            headers.extend(origin_headers.iter().map(|(k, v)| (*k, v.as_str())));
            let ctx = format!("{method} {path} from {what}");
            let r = raw(h, method, &path, &headers, body.as_bytes());
            check(&ctx, &r);
            assert_eq!(r.status, 403, "{ctx}: {}", r.text());
            assert!(r.all("set-cookie").is_empty(), "{ctx}: sets a cookie");
        }
    }
    assert_unchanged(h, &before, cookie, "after cross-site requests");
    assert_clean_log(h);
}

#[test]
fn cross_site_requests_to_every_state_changing_route_fail_closed_in_local_dev() {
    let (h, chat, session) = seeded();
    assert_cross_site_refused(&h, &chat, &session, None);
}

fn password_options() -> HostOptions {
    HostOptions::default()
        .var("auth_mode", "password")
        .var("session_secret", SECRET)
        .var("chat_password", PASSWORD)
        .var("chat_create_per_hour", "100000")
}

/// Signs in on a password-mode host; the `Cookie` header value.
fn sign_in(h: &Host) -> String {
    let r = h.json("POST", "/api/auth/login", &json!({ "password": PASSWORD }));
    assert_eq!(r.status, 200, "login: {}", r.text());
    r.header("set-cookie")
        .expect("a session cookie")
        .split(';')
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn cross_site_requests_with_a_valid_session_cookie_fail_closed_in_password_mode() {
    let Some(h) = Host::start(password_options()) else {
        return;
    };
    let cookie = sign_in(&h);
    let (chat, session) = seed(&h, Some(&cookie), "password");
    assert_cross_site_refused(&h, &chat, &session, Some(&cookie));
}

#[test]
fn a_dns_rebinding_page_cannot_read_or_write_local_dev_data() {
    // A page on another site whose name is rebound to 127.0.0.1 reaches the local-dev app
    // with the browser believing it is same-origin: its requests carry the attacker's host
    // name in `Host` (and a matching `Origin`, `Sec-Fetch-Site: same-origin`). Local-dev has
    // no sign-in, so the app must answer only requests addressed to a loopback name.
    let (h, chat, session) = seeded();
    let before = state(&h, None);
    let port = h.origin().rsplit(':').next().unwrap().to_string();
    let rebound = format!("rebound.evil.example:{port}");
    let origin = format!("http://{rebound}");
    for (method, path, body) in routes(&chat, &session) {
        if !(path.starts_with("/api/chats") || path.starts_with("/eve/")) {
            continue;
        }
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let headers = [
            ("host", rebound.as_str()),
            ("origin", origin.as_str()),
            ("sec-fetch-site", "same-origin"),
            ("content-type", "application/json"),
        ];
        let ctx = format!("{method} {path} via a rebound host name");
        let r = raw(&h, method, &path, &headers, body.as_bytes());
        check(&ctx, &r);
        assert!(
            (400..500).contains(&r.status),
            "{ctx}: answered {} — {}",
            r.status,
            r.text().chars().take(200).collect::<String>()
        );
        assert!(!r.text().contains("seeded"), "{ctx}: leaks the chat");
    }
    assert_unchanged(&h, &before, None, "after a DNS-rebinding page");
    // The same requests by a loopback name still work (`localhost`, `[::1]`-style names).
    let r = raw(
        &h,
        "GET",
        "/api/chats",
        &[("host", &format!("localhost:{port}"))],
        b"",
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_clean_log(&h);
}

// ------------------------------------------------------------------------ principals

/// The same response for another principal's resource as for one that does not exist.
fn assert_not_found_like_unknown(
    h: &Host,
    cookie: Option<&str>,
    method: &str,
    path: &str,
    unknown: &str,
    body: &[u8],
) {
    let mut headers = same_origin(h);
    headers.push(("content-type", "application/json".into()));
    if let Some(c) = cookie {
        headers.push(("cookie", c.to_string()));
    }
    let theirs = send(h, method, path, &headers, body);
    check(&format!("{method} {path}"), &theirs);
    assert_eq!(theirs.status, 404, "{method} {path}: {}", theirs.text());
    let none = send(h, method, unknown, &headers, body);
    assert_eq!(
        (none.status, none.text()),
        (theirs.status, theirs.text()),
        "{method} {path}: differs from a resource that does not exist"
    );
}

/// Every chat and eve-session route of `(chat, session)`, as another principal.
fn assert_invisible(h: &Host, cookie: Option<&str>, chat: &str, session: &str, owner: &str) {
    let unknown_chat = "c".repeat(21);
    let unknown_session = format!("ses_{}", "u".repeat(32));
    for (method, path, body) in routes(chat, session) {
        let mentions_chat = path.contains(chat);
        let mentions_session = path.contains(session);
        if !(mentions_chat || mentions_session) {
            continue;
        }
        let unknown = path
            .replace(chat, &unknown_chat)
            .replace(session, &unknown_session);
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        if path.starts_with("/chat/") {
            continue; // the shell serves the app for any chat URL; the data stays behind the API
        }
        assert_not_found_like_unknown(h, cookie, method, &path, &unknown, body.as_bytes());
    }
    let list = {
        let headers: Vec<(&str, &str)> = cookie.map(|c| vec![("cookie", c)]).unwrap_or_default();
        h.send(
            "GET",
            &format!("/api/chats?limit=100&q={owner}"),
            &headers,
            None,
        )
    };
    assert_eq!(list.status, 200);
    assert_eq!(
        list.json()["chats"],
        json!([]),
        "search shows another principal's chat"
    );
}

#[test]
fn local_dev_and_password_principals_on_one_state_dir_cannot_see_or_touch_each_other() {
    // local-dev writes a chat and an eve session.
    let Some(mut dev) = Host::start(HostOptions::default()) else {
        return;
    };
    let (dev_chat, dev_session) = seed(&dev, None, "local-dev");
    dev.stop();
    let state_dir = dev.state_dir().unwrap().to_path_buf();

    // The password principal, on the same database, sees none of it and changes none of it.
    let pw = Host::start(HostOptions {
        state_dir: Some(state_dir.clone()),
        ..password_options()
    })
    .expect("own host");
    let cookie = sign_in(&pw);
    let before = state(&pw, Some(&cookie));
    let all_rows = before.db.clone();
    assert_invisible(&pw, Some(&cookie), &dev_chat, &dev_session, "local-dev");
    // Signed out, the same paths answer 401 (no existence leak either).
    for (method, path, _) in routes(&dev_chat, &dev_session) {
        if path.starts_with("/api/chats") || path.starts_with("/eve/") {
            let r = send(&pw, method, &path, &same_origin(&pw), b"{}");
            check(&format!("{method} {path} signed out"), &r);
            assert_eq!(r.status, 401, "{method} {path} signed out: {}", r.text());
        }
    }
    assert_eq!(
        db_dump(&pw),
        all_rows,
        "the password principal wrote nothing"
    );
    let (pw_chat, pw_session) = seed(&pw, Some(&cookie), "password");
    assert_clean_log(&pw);
    drop(pw);

    // And local-dev, back on the same database, cannot see the password principal's data.
    dev.restart();
    assert_invisible(&dev, None, &pw_chat, &pw_session, "password");
    let chats = dev.get("/api/chats").json()["chats"].clone();
    assert_eq!(chats.as_array().unwrap().len(), 1);
    assert_eq!(
        chats[0]["id"],
        json!(dev_chat),
        "local-dev's own chat is intact"
    );
    let r = dev.get(&format!("/eve/v1/session/{dev_session}/stream"));
    assert_eq!(
        r.status,
        200,
        "local-dev's own session is intact: {}",
        r.text()
    );
    assert_clean_log(&dev);
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn password_config(secret: &str) -> AuthConfig {
    let secret = secret.to_string();
    AuthConfig::from_lookup(move |name| match name {
        "auth_mode" => Some("password".into()),
        "session_secret" => Some(secret.clone()),
        "chat_password" => Some(PASSWORD.into()),
        _ => None,
    })
}

fn local_dev_config() -> AuthConfig {
    AuthConfig::from_lookup(|name| (name == "auth_mode").then(|| "local-dev".to_string()))
}

fn flip_bit(value: &str, at: usize) -> String {
    let mut bytes = value.as_bytes().to_vec();
    bytes[at] ^= 1;
    String::from_utf8(bytes).unwrap()
}

#[test]
fn expired_tampered_and_foreign_cookies_fail_closed_on_every_route() {
    let Some(h) = Host::start(password_options()) else {
        return;
    };
    let good = sign_in(&h);
    let (chat, session) = seed(&h, Some(&good), "password");
    let before = state(&h, Some(&good));
    let codec = password_config(SECRET).session_codec().expect("a codec");
    let principal = Principal {
        id: eve_api::auth::PASSWORD_PRINCIPAL_ID.into(),
        mode: AuthMode::Password,
        name: None,
        email: None,
    };
    let t = now();
    let value = good.split_once('=').unwrap().1.to_string();
    let expired = codec.seal(&SessionClaims {
        iat: t - 8 * 24 * 3600,
        exp: t - 24 * 3600,
        auth: t - 8 * 24 * 3600,
        ..SessionClaims::new(&principal, t)
    });
    let from_the_future = codec.seal(&SessionClaims::new(&principal, t + 3600));
    let over_absolute = codec.seal(&SessionClaims {
        iat: t - 3600,
        exp: t + 3600,
        auth: t - 31 * 24 * 3600,
        ..SessionClaims::new(&principal, t)
    });
    let other_secret = password_config("another-secret-that-is-long-enough-0000")
        .session_codec()
        .unwrap()
        .issue(&principal, t)
        .0;
    let local_dev_claims = codec.seal(&SessionClaims::new(
        &Principal {
            id: eve_api::auth::LOCAL_DEV_PRINCIPAL_ID.into(),
            mode: AuthMode::LocalDev,
            name: None,
            email: None,
        },
        t,
    ));
    let empty_subject = codec.seal(&SessionClaims {
        sub: String::new(),
        ..SessionClaims::new(&principal, t)
    });
    let mut cases: Vec<(String, String)> = vec![
        ("expired".into(), expired),
        ("issued in the future".into(), from_the_future),
        ("past the absolute lifetime".into(), over_absolute),
        ("signed with another secret".into(), other_secret),
        ("claims of another mode".into(), local_dev_claims),
        ("an empty subject".into(), empty_subject),
        ("truncated".into(), value[..value.len() - 3].to_string()),
        (
            "without its tag".into(),
            value.rsplit_once('.').unwrap().0.to_string(),
        ),
        ("doubled".into(), format!("{value}{value}")),
        ("oversized".into(), format!("{value}{}", "A".repeat(8000))),
        ("empty".into(), String::new()),
        ("quoted garbage".into(), "\"v1..\"".into()),
    ];
    for at in [0, 3, value.len() / 3, value.len() / 2, value.len() - 1] {
        cases.push((
            format!("with bit 0 of byte {at} flipped"),
            flip_bit(&value, at),
        ));
    }
    for (what, bad) in &cases {
        let cookie_headers = [
            format!("{SESSION_COOKIE_NAME}={bad}"),
            format!("{SESSION_COOKIE_NAME}={bad}; {SESSION_COOKIE_NAME}={bad}; other=1"),
            format!("theme=dark;{SESSION_COOKIE_NAME}={bad}"),
        ];
        for cookie in &cookie_headers {
            for (method, path, body) in routes(&chat, &session) {
                if !(path.starts_with("/api/chats") || path.starts_with("/eve/")) {
                    continue;
                }
                let mut headers = same_origin(&h);
                headers.push(("content-type", "application/json".into()));
                headers.push(("cookie", cookie.clone()));
                let body = body.map(|b| b.to_string()).unwrap_or_default();
                let ctx = format!("{method} {path} with a cookie {what}");
                let r = send(&h, method, &path, &headers, body.as_bytes());
                check(&ctx, &r);
                assert_eq!(r.status, 401, "{ctx}: {}", r.text());
            }
            // The viewer is nobody, and the bad cookie is cleared (never replaced by a good one).
            let r = send(
                &h,
                "GET",
                "/api/auth/session",
                &[("cookie", cookie.clone())],
                b"",
            );
            assert_eq!(r.status, 200);
            let v: Value = serde_json::from_slice(&r.body).unwrap();
            assert_eq!(v["viewer"], Value::Null, "a cookie {what} is a viewer");
            for c in r.all("set-cookie") {
                assert!(
                    c.contains("Max-Age=0"),
                    "a cookie {what} got a new session: {c}"
                );
            }
        }
        // Two `Cookie` header lines, the bad one first: never an error, never a 5xx.
        let r = raw(
            &h,
            "GET",
            "/api/chats",
            &[
                ("cookie", &format!("{SESSION_COOKIE_NAME}={bad}")),
                ("cookie", &format!("{SESSION_COOKIE_NAME}={bad}")),
            ],
            b"",
        );
        check("two bad Cookie lines", &r);
        assert_eq!(r.status, 401);
    }
    // Logging in with a wrong password, from any origin trick, never sets a cookie.
    for body in [
        json!({ "password": "wrong" }),
        json!({ "password": "" }),
        json!({ "password": PASSWORD.to_uppercase() }),
        json!({ "password": format!("{PASSWORD} ") }),
        json!({ "password": "x".repeat(100_000) }),
    ] {
        let r = h.json("POST", "/api/auth/login", &body);
        check("a wrong password", &Raw::from_response(&r));
        assert!(
            (400..500).contains(&r.status),
            "a wrong password: {}",
            r.status
        );
        assert!(
            r.header("set-cookie").is_none(),
            "a wrong password sets a cookie"
        );
    }
    assert_unchanged(&h, &before, Some(&good), "after bad cookies");
    assert_clean_log(&h);
}

// ------------------------------------------------------------------------ the agent itself

/// The app's manifest with `/eve/v1/...` routed to the agent directly (as where it must be
/// reachable by URL), so requests reach it without the proxy.
fn public_agent_manifest() -> (tempfile::TempDir, std::path::PathBuf) {
    let root = repo_root();
    let text = std::fs::read_to_string(root.join("spin.toml")).unwrap();
    let proxied = "route = \"/eve/v1/...\"\ncomponent = \"eve-proxy\"";
    let private = "route = { private = true }\ncomponent = \"agent\"";
    assert!(
        text.contains(proxied) && text.contains(private),
        "spin.toml changed shape"
    );
    let text = text
        .replace(proxied, "route = \"/eve/v1/...\"\ncomponent = \"agent\"")
        .replace(
            private,
            "route = { private = true }\ncomponent = \"eve-proxy\"",
        )
        .replace(
            "source = \"target/",
            &format!("source = \"{}/target/", root.display()),
        )
        .replace(
            "source = \"static/",
            &format!("source = \"{}/static/", root.display()),
        );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spin.toml");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn the_agent_refuses_every_forged_principal_assertion_and_writes_nothing() {
    use eve_agent::assertion::AssertionCodec;
    let (_dir, manifest) = public_agent_manifest();
    let Some(h) = Host::start(HostOptions {
        manifest,
        ..password_options()
    }) else {
        return;
    };
    let codec = AssertionCodec::from_config(&password_config(SECRET)).unwrap();
    let alice = Principal {
        id: "alice".into(),
        mode: AuthMode::Password,
        name: None,
        email: None,
    };
    let mallory = Principal {
        id: "mallory".into(),
        ..alice.clone()
    };
    let t = now();
    // Positive control: a valid assertion starts a session.
    let header = eve_api::eve::PRINCIPAL_ASSERTION_HEADER;
    let valid = codec.seal(&alice, t);
    let created = raw(
        &h,
        "POST",
        "/eve/v1/session",
        &[(header, &valid), ("content-type", "application/json")],
        br#"{"message":"hello"}"#,
    );
    assert_eq!(created.status, 201, "a valid assertion: {}", created.text());
    let session = serde_json::from_slice::<Value>(&created.body).unwrap()["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    // Let the turn settle, then nothing may change.
    let r = raw(
        &h,
        "GET",
        &format!("/eve/v1/session/{session}/stream"),
        &[(header, &valid)],
        b"",
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let before = db_dump(&h);

    let dev_key = AssertionCodec::from_config(&local_dev_config()).unwrap();
    let other_secret =
        AssertionCodec::from_config(&password_config("another-secret-that-is-long-enough-0000"))
            .unwrap();
    let mut forgeries: Vec<(String, Vec<(&str, String)>)> = vec![
        ("no assertion".into(), vec![]),
        ("a bare principal id".into(), vec![(header, "alice".into())]),
        ("an empty assertion".into(), vec![(header, String::new())]),
        (
            "one signed with local-dev's public key".into(),
            vec![(header, dev_key.seal(&alice, t))],
        ),
        (
            "one signed with another secret".into(),
            vec![(header, other_secret.seal(&alice, t))],
        ),
        (
            "an expired one".into(),
            vec![(header, codec.seal(&alice, t - 3600))],
        ),
        (
            "one from the future".into(),
            vec![(header, codec.seal(&alice, t + 3600))],
        ),
        (
            "a valid one in a cookie".into(),
            vec![("cookie", format!("{SESSION_COOKIE_NAME}={valid}"))],
        ),
        (
            "a valid one as a bearer token".into(),
            vec![("authorization", format!("Bearer {valid}"))],
        ),
        (
            "principal headers".into(),
            vec![
                ("x-principal", "alice".into()),
                ("x-user-id", "alice".into()),
            ],
        ),
        (
            "a valid one with trailing garbage".into(),
            vec![(header, format!("{valid}x"))],
        ),
    ];
    for at in [0, 3, valid.len() / 2, valid.len() - 1] {
        forgeries.push((
            format!("a valid one with byte {at} changed"),
            vec![(header, flip_bit(&valid, at))],
        ));
    }
    let routes = [
        (
            "POST",
            "/eve/v1/session".to_string(),
            br#"{"message":"hi"}"#.to_vec(),
        ),
        (
            "POST",
            format!("/eve/v1/session/{session}"),
            br#"{"message":"hi"}"#.to_vec(),
        ),
        ("GET", format!("/eve/v1/session/{session}/stream"), vec![]),
        (
            "POST",
            format!("/eve/v1/session/{session}/interrupt"),
            vec![],
        ),
        (
            "GET",
            format!("/eve/v1/session/{session}/authorizations/auth_1"),
            vec![],
        ),
    ];
    for (what, headers) in &forgeries {
        for (method, path, body) in &routes {
            let mut hs: Vec<(&str, &str)> = vec![("content-type", "application/json")];
            hs.extend(headers.iter().map(|(k, v)| (*k, v.as_str())));
            let ctx = format!("{method} {path} with {what}");
            let r = raw(&h, method, path, &hs, body);
            check(&ctx, &r);
            assert_eq!(r.status, 401, "{ctx}: {}", r.text());
        }
    }
    // A genuine assertion for another principal finds nothing of alice's.
    let as_mallory = codec.seal(&mallory, t);
    for (method, path, body) in &routes[1..] {
        let r = raw(
            &h,
            method,
            path,
            &[(header, &as_mallory), ("content-type", "application/json")],
            body,
        );
        check(&format!("{method} {path} as mallory"), &r);
        assert_eq!(r.status, 404, "{method} {path} as mallory: {}", r.text());
    }
    assert_eq!(db_dump(&h), before, "forged assertions wrote nothing");
    assert_clean_log(&h);
}

#[test]
fn the_proxy_sends_its_own_assertion_and_never_a_clients() {
    use eve_agent::assertion::AssertionCodec;
    let Some(h) = Host::start(password_options()) else {
        return;
    };
    let header = eve_api::eve::PRINCIPAL_ASSERTION_HEADER;
    let codec = AssertionCodec::from_config(&password_config(SECRET)).unwrap();
    let mallory = Principal {
        id: "mallory".into(),
        mode: AuthMode::Password,
        name: None,
        email: None,
    };
    // Even a correctly signed assertion (a leaked one, say) is worth nothing without a cookie.
    let forged = codec.seal(&mallory, now());
    let r = raw(
        &h,
        "POST",
        "/eve/v1/session",
        &[(header, &forged), ("content-type", "application/json")],
        br#"{"message":"hi"}"#,
    );
    assert_eq!(r.status, 401, "{}", r.text());
    assert!(!db_dump(&h)
        .unwrap_or_default()
        .contains_key("agent_session"));
    // Signed in, the session belongs to the cookie's principal, not the forged one.
    let cookie = sign_in(&h);
    let r = raw(
        &h,
        "POST",
        "/eve/v1/session",
        &[
            (header, &forged),
            ("cookie", &cookie),
            ("origin", &h.origin()),
            ("content-type", "application/json"),
        ],
        br#"{"message":"hi"}"#,
    );
    assert_eq!(r.status, 201, "{}", r.text());
    let sessions = db_dump(&h).unwrap()["agent_session"].clone();
    assert_eq!(sessions.len(), 1);
    assert!(
        sessions[0].contains(eve_api::auth::PASSWORD_PRINCIPAL_ID)
            && !sessions[0].contains("mallory"),
        "the session's owner: {}",
        sessions[0]
    );
    assert_clean_log(&h);
}
