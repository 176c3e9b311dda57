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
//! Cross-principal access (local-dev and password principals on one state directory, and two
//! password-mode principals through the proxy), forged upstream JWTs at the agent (reached
//! directly, as where it must be public), a client's own `Authorization` header at the proxy,
//! cross-site requests and expired or tampered cookies all fail closed.
//!
//! Errors come in two shapes: the chat API's envelope `{"error":{"code","message"}}` and, on
//! `/eve/v1/*`, eve's own `{"ok":false,"code"?,"error"}`.
//!
//! Requests whose exact bytes matter (raw paths with `..`, `%2e%2e`, `%00`; custom methods;
//! duplicate, huge or forged headers; odd `Host` values) go through [`raw`], a tiny HTTP/1.1
//! client on a plain socket: a URL library would normalise them away before they are sent.

use crate::raw_http::{authority, raw, raw_bytes, Raw};
use eve_agent::jwt::UpstreamJwt;
use eve_api::auth::{AuthMode, Principal};
use eve_auth::cookie::{SessionClaims, SESSION_COOKIE_NAME};
use eve_auth::crypto::{b64url, hmac_sha256};
use eve_auth::AuthConfig;
use eve_chat_tests::eve::{self, parse_ndjson, types};
use eve_chat_tests::{public_agent_manifest, repo_root, Host, HostOptions};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

const SECRET: &str = "attack-suite-session-secret-0123456789abcdef";
const PASSWORD: &str = "correct horse battery staple";
/// `eve_jwt_secret` of the hosts that set one.
const JWT_SECRET: &str = "attack-suite-upstream-jwt-secret-0123456789";
/// How long a seeded demo turn may take to settle.
const SETTLE: Duration = Duration::from_secs(60);

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
            is_app_error(&v) || is_eve_error(&v),
            "{ctx}: not an error body: {v}"
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

/// The chat API's error envelope `{"error":{"code","message"}}`.
fn is_app_error(v: &Value) -> bool {
    v["error"]["code"].is_string() && v["error"]["message"].is_string()
}

/// eve's error body `{"ok":false,"code"?,"error"}`: nothing more, a non-empty message.
fn is_eve_error(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        o.keys()
            .all(|k| ["ok", "code", "error"].contains(&k.as_str()))
            && o.get("ok") == Some(&json!(false))
            && o.get("error")
                .and_then(Value::as_str)
                .is_some_and(|e| !e.is_empty())
            && o.get("code").is_none_or(Value::is_string)
    })
}

/// [`check`] for a request to one of [`routes`], which the component of its path answers: a
/// JSON error there has that component's shape (eve's on `/eve/v1/*`, the app's elsewhere).
fn check_route(ctx: &str, path: &str, r: &Raw) {
    check(ctx, r);
    let is_json = r
        .header("content-type")
        .is_some_and(|c| c.starts_with("application/json"));
    if r.status >= 400 && is_json && !r.body.is_empty() {
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        if path.starts_with("/eve/") {
            assert!(is_eve_error(&v), "{ctx}: not eve's error body: {v}");
        } else {
            assert!(is_app_error(&v), "{ctx}: not the app's error envelope: {v}");
        }
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
    assert_eq!(
        created.status,
        202,
        "POST /eve/v1/session: {}",
        created.text()
    );
    let session = created.json()["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("POST /eve/v1/session: {}", created.text()))
        .to_string();
    assert_eq!(created.header("x-eve-session-id"), Some(session.as_str()));
    let events = wait_settled(h, &session, cookie);
    assert_eq!(
        types(&events).last(),
        Some(&"session.waiting"),
        "the seeded turn: {:?}",
        types(&events)
    );
    (chat, session)
}

/// Reads the session's recorded stream (`follow=false`) until its turn has settled.
fn wait_settled(h: &Host, session: &str, cookie: Option<&str>) -> Vec<Value> {
    let headers: Vec<(&str, &str)> = cookie.map(|c| vec![("cookie", c)]).unwrap_or_default();
    eve::settled_as(h, session, &headers, SETTLE)
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
            "DELETE",
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
        ("GET", "/eve/v1/health".into(), None),
        ("GET", "/eve/v1/info".into(), None),
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
        // `follow=false`: a following stream stays open after the turn settles.
        (
            "GET",
            format!("/eve/v1/session/{session}/stream?follow=false"),
            None,
        ),
        // The controls take an optional JSON object (`turnId`, `reason`) that eve reads
        // leniently, so they are sent without a body here; `malformed_control_bodies_…`
        // sends them what is not an object.
        ("POST", format!("/eve/v1/session/{session}/cancel"), None),
        ("POST", format!("/eve/v1/session/{session}/clear"), None),
        ("POST", format!("/eve/v1/session/{session}/compact"), None),
        ("POST", format!("/eve/v1/session/{session}/reset"), None),
        (
            "GET",
            format!("/eve/v1/session/{session}/authorizations/auth_1"),
            None,
        ),
        ("GET", "/".into(), None),
        ("GET", format!("/chat/{chat}"), None),
        ("GET", "/favicon.svg".into(), None),
    ]
}

/// Whether a route serves only a signed-in caller (its data, or the agent): everything of the
/// chat API and of `/eve/v1/*` but eve's public health check.
fn needs_sign_in(path: &str) -> bool {
    (path.starts_with("/api/chats") || path.starts_with("/eve/")) && path != "/eve/v1/health"
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
            // duplicate keys as JSON parsers do, the last one winning: well-formed JSON. eve
            // reads its bodies the same way (`JSON.parse`: the last `message` wins), so there
            // it is a well-formed message too.
            if what == "duplicate keys" && (path.contains("/events/") || path.starts_with("/eve/"))
            {
                continue;
            }
            let ctx = format!("{method} {path} with {what}");
            let r = send(&h, method, &path, &headers, &body);
            check_route(&ctx, &path, &r);
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
fn malformed_control_bodies_are_refused_with_eves_texts_without_a_write() {
    // eve's controls (cancel, clear, compact, reset) take an optional JSON object; anything
    // that is not one is refused, and the session is untouched.
    let (h, _chat, session) = seeded();
    let before = state(&h, None);
    let mut headers = same_origin(&h);
    headers.push(("content-type", "application/json".into()));
    let not_json = json!({ "ok": false, "error": "Invalid JSON body." });
    let not_object = json!({ "ok": false, "error": "Expected a JSON object." });
    let bodies: Vec<(&str, Vec<u8>, Option<&Value>)> = vec![
        ("not JSON", b"not json".to_vec(), Some(&not_json)),
        ("a lone brace", b"{".to_vec(), Some(&not_json)),
        ("truncated", br#"{"turnId":"tu"#.to_vec(), Some(&not_json)),
        (
            "invalid UTF-8",
            b"{\"turnId\":\"\xff\"}".to_vec(),
            Some(&not_json),
        ),
        (
            "nesting 100 000 deep",
            nested(100_000).into_bytes(),
            Some(&not_json),
        ),
        ("a JSON array", b"[1,2]".to_vec(), Some(&not_object)),
        ("a string", b"\"text\"".to_vec(), Some(&not_object)),
        ("null", b"null".to_vec(), Some(&not_object)),
        ("a number", b"42".to_vec(), Some(&not_object)),
        ("10 MB of garbage", vec![b'\x07'; 10 << 20], None),
    ];
    for control in ["cancel", "clear", "compact", "reset"] {
        let path = format!("/eve/v1/session/{session}/{control}");
        for (what, body, expected) in &bodies {
            let ctx = format!("POST {path} with {what}");
            let r = send(&h, "POST", &path, &headers, body);
            check_route(&ctx, &path, &r);
            match expected {
                Some(e) => {
                    assert_eq!(r.status, 400, "{ctx}: {}", r.text());
                    assert_eq!(
                        &serde_json::from_slice::<Value>(&r.body).unwrap(),
                        *e,
                        "{ctx}"
                    );
                }
                None => assert_eq!(r.status, 413, "{ctx}: {}", r.text()),
            }
        }
    }
    // The fields eve reads are checked too (its texts).
    for (control, body, message) in [
        (
            "cancel",
            r#"{"turnId":""}"#,
            "Expected 'turnId' to be a non-empty string.",
        ),
        (
            "cancel",
            r#"{"turnId":7}"#,
            "Expected 'turnId' to be a non-empty string.",
        ),
        (
            "reset",
            r#"{"reason":""}"#,
            "Expected 'reason' to be a non-empty string.",
        ),
        (
            "reset",
            r#"{"reason":["x"]}"#,
            "Expected 'reason' to be a non-empty string.",
        ),
    ] {
        let path = format!("/eve/v1/session/{session}/{control}");
        let r = send(&h, "POST", &path, &headers, body.as_bytes());
        assert_eq!(
            (r.status, serde_json::from_slice::<Value>(&r.body).unwrap()),
            (400, json!({ "ok": false, "error": message })),
            "POST {path} with {body}"
        );
    }
    assert_unchanged(&h, &before, None, "after bad control bodies");
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
            // eve reads a session body as JSON whatever its type says when that is none or
            // `text/plain` (recorded: 07x-send-text-plain-body), and so does eve-proxy: those
            // are well-formed requests on `/eve/v1/*`.
            let eve_reads_it = matches!(
                content_type,
                None | Some("") | Some("text/plain") | Some("text/plain; charset=utf-8")
            );
            if path.starts_with("/eve/") && eve_reads_it {
                continue;
            }
            let mut headers = same_origin(&h);
            if let Some(ct) = content_type {
                headers.push(("content-type", ct.to_string()));
            }
            let ctx = format!("{method} {path} as {content_type:?}");
            let r = send(&h, method, &path, &headers, valid.to_string().as_bytes());
            check_route(&ctx, &path, &r);
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
            check_route(&ctx, path, &r);
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
        format!("/eve/v1/session/{session}/stream?startIndex={digits}&follow=false"),
        format!("/eve/v1/session/{session}/stream?startIndex=-1&follow=false"),
        format!("/eve/v1/session/{session}/stream?startIndex=-{digits}&follow=false"),
        format!("/eve/v1/session/{session}/stream?startIndex=1e3&follow=false"),
        format!("/eve/v1/session/{session}/stream?startIndex=%00&follow=false"),
        format!("/eve/v1/session/{session}/stream?follow=false&follow=true&includeTailIndex=1"),
        format!("/eve/v1/session/{session}%00/stream"),
        format!("/eve/v1/session/wrun_{long}/stream"),
        "/eve/v1/session/%E2%80%AE/stream".into(),
        "/eve/v1/session/../session".into(),
        "/eve/v1//session".into(),
        "/eve/v1/health/..".into(),
        "/eve/v1/health%2F..%2Finfo".into(),
        format!("/eve/v1/session/{session}/cancel/.."),
        format!("/eve/v1/session/{session}/reset%2F..%2F..%2F{session}"),
        format!("/eve/v1/session/{session}//compact"),
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
                // The retired proxy→agent header: it means nothing to anyone now.
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
            "an unsigned (alg none) upstream JWT naming mallory",
            kv(&[(
                "authorization",
                &format!("Bearer {}", unsigned_jwt("mallory", now())),
            )]),
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
            check_route(&ctx, &path, &r);
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
        if !needs_sign_in(&path) {
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
        check_route(&ctx, &path, &r);
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

/// A session id of the agent's shape that names no session.
const UNKNOWN_SESSION: &str = "wrun_01M8R3RVBZ76Z0CSYSXBR00000";

/// What a route answers for a resource the caller cannot see — eve's answers for a session
/// that is not there (as recorded from eve: a send finds it "no longer active", a stream does
/// not find it, a control has nothing to act on), the chat API's 404 — as (status, eve body).
fn nothing_there(path: &str) -> (u16, Option<Value>) {
    let path = path.split('?').next().unwrap();
    if !path.starts_with("/eve/") {
        return (404, None);
    }
    let last = path.rsplit('/').next().unwrap();
    match last {
        "cancel" => (200, Some(json!({ "ok": true, "status": "no_active_turn" }))),
        "clear" | "compact" | "reset" => (
            200,
            Some(json!({ "ok": true, "status": "no_active_session" })),
        ),
        _ if path.ends_with("/stream") || path.contains("/authorizations/") => (
            404,
            Some(json!({ "ok": false, "error": "Session not found." })),
        ),
        _ => (
            409,
            Some(json!({
                "ok": false,
                "code": "session_not_active",
                "error": "The session is no longer active.",
            })),
        ),
    }
}

/// The same answer for another principal's resource as for one that does not exist, and it
/// is the "nothing there" answer of its route ([`nothing_there`]).
fn assert_same_as_unknown(
    h: &Host,
    headers: &[(&str, String)],
    method: &str,
    path: &str,
    unknown: &str,
    body: &[u8],
) {
    let theirs = send(h, method, path, headers, body);
    let ctx = format!("{method} {path}");
    check_route(&ctx, path, &theirs);
    let (status, eve_body) = nothing_there(path);
    assert_eq!(theirs.status, status, "{ctx}: {}", theirs.text());
    if let Some(expected) = eve_body {
        let got: Value = serde_json::from_slice(&theirs.body)
            .unwrap_or_else(|e| panic!("{ctx}: not JSON ({e}): {}", theirs.text()));
        assert_eq!(got, expected, "{ctx}");
        assert_eq!(
            theirs.header("x-eve-session-id"),
            None,
            "{ctx}: names the session"
        );
    }
    let none = send(h, method, unknown, headers, body);
    assert_eq!(
        (none.status, none.text()),
        (theirs.status, theirs.text()),
        "{ctx}: differs from a resource that does not exist"
    );
}

/// Every chat and eve-session route of `(chat, session)`, as another principal (`headers`
/// say who).
fn assert_invisible_with(
    h: &Host,
    headers: &[(&str, String)],
    chat: &str,
    session: &str,
    owner: &str,
) {
    let unknown_chat = "c".repeat(21);
    let mut headers = headers.to_vec();
    headers.push(("content-type", "application/json".into()));
    for (method, path, body) in routes(chat, session) {
        let mentions_chat = path.contains(chat);
        let mentions_session = path.contains(session);
        if !(mentions_chat || mentions_session) {
            continue;
        }
        let unknown = path
            .replace(chat, &unknown_chat)
            .replace(session, UNKNOWN_SESSION);
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        if path.starts_with("/chat/") {
            continue; // the shell serves the app for any chat URL; the data stays behind the API
        }
        assert_same_as_unknown(h, &headers, method, &path, &unknown, body.as_bytes());
    }
    let list = {
        let headers: Vec<(&str, &str)> = headers
            .iter()
            .filter(|(k, _)| *k == "cookie")
            .map(|(k, v)| (*k, v.as_str()))
            .collect();
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

/// [`assert_invisible_with`] for the caller of `cookie` (local-dev: none).
fn assert_invisible(h: &Host, cookie: Option<&str>, chat: &str, session: &str, owner: &str) {
    let mut headers = same_origin(h);
    if let Some(c) = cookie {
        headers.push(("cookie", c.to_string()));
    }
    assert_invisible_with(h, &headers, chat, session, owner);
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
        if needs_sign_in(&path) {
            let r = send(&pw, method, &path, &same_origin(&pw), b"{}");
            check_route(&format!("{method} {path} signed out"), &path, &r);
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
    let r = eve::history_as(&dev, &dev_session, &[]);
    assert_eq!(
        r.status,
        200,
        "local-dev's own session is intact: {}",
        r.text()
    );
    let events = parse_ndjson(&r.text());
    assert_eq!(
        (
            events.first().map(|e| &e["type"]),
            events.last().map(|e| &e["type"])
        ),
        (
            Some(&json!("session.started")),
            Some(&json!("session.waiting"))
        ),
        "{:?}",
        types(&events)
    );
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "message.received" && e["data"]["message"] == "hello agent"),
        "local-dev's own message is there"
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
                if !needs_sign_in(&path) {
                    continue;
                }
                let mut headers = same_origin(&h);
                headers.push(("content-type", "application/json".into()));
                headers.push(("cookie", cookie.clone()));
                let body = body.map(|b| b.to_string()).unwrap_or_default();
                let ctx = format!("{method} {path} with a cookie {what}");
                let r = send(&h, method, &path, &headers, body.as_bytes());
                check_route(&ctx, &path, &r);
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
        // The raw client reads the answer even when the host closes before the whole body is
        // sent: the 100 000-character password is over the login's cap and refused from the
        // head, unread, and neither Spin nor the local host drains it (docs/local-host.md),
        // so a client that writes it all before reading (ureq) may see a broken pipe.
        let mut headers = same_origin(&h);
        headers.push(("content-type", "application/json".into()));
        let r = send(
            &h,
            "POST",
            "/api/auth/login",
            &headers,
            body.to_string().as_bytes(),
        );
        check("a wrong password", &r);
        assert!(
            (400..500).contains(&r.status),
            "a wrong password: {}",
            r.status
        );
        assert!(
            r.all("set-cookie").is_empty(),
            "a wrong password sets a cookie"
        );
    }
    assert_unchanged(&h, &before, Some(&good), "after bad cookies");
    assert_clean_log(&h);
}

// ------------------------------------------------------------------------ the agent itself

/// A 401 in eve's error shape with the code `unauthorized`; its body, so that a caller can
/// see every way of being wrong gets the same answer.
fn assert_unauthorized(ctx: &str, r: &Raw) -> String {
    check(ctx, r);
    assert_eq!(r.status, 401, "{ctx}: {}", r.text());
    let v: Value = serde_json::from_slice(&r.body).unwrap_or_default();
    assert!(
        is_eve_error(&v) && v["code"] == "unauthorized",
        "{ctx}: {v}"
    );
    r.text()
}

fn principal(id: &str) -> Principal {
    Principal {
        id: id.into(),
        mode: AuthMode::Password,
        name: None,
        email: None,
    }
}

/// A JWT with any header and claims, its HS256 tag made with `key` (what a forger makes,
/// with the right key or without it).
fn forge_jwt(header: &Value, claims: &Value, key: &[u8]) -> String {
    let input = format!(
        "{}.{}",
        b64url(header.to_string().as_bytes()),
        b64url(claims.to_string().as_bytes())
    );
    let tag = hmac_sha256(key, input.as_bytes());
    format!("{input}.{}", b64url(&tag))
}

/// Claims as the proxy mints them for `sub`, issued at `iat`.
fn claims(sub: &str, iat: u64) -> Value {
    json!({
        "sub": sub,
        "iss": eve_agent::jwt::DEFAULT_ISSUER,
        "aud": eve_agent::jwt::DEFAULT_AUDIENCE,
        "iat": iat,
        "exp": iat + eve_agent::jwt::TOKEN_TTL_SECS,
        "mode": "password",
    })
}

/// `alg: none`: claims for `sub` without any signature.
fn unsigned_jwt(sub: &str, iat: u64) -> String {
    format!(
        "{}.{}.",
        b64url(br#"{"alg":"none","typ":"JWT"}"#),
        b64url(claims(sub, iat).to_string().as_bytes())
    )
}

/// The agent's eve routes on `session`, each with a well-formed body.
fn agent_routes(session: &str) -> Vec<(&'static str, String, Vec<u8>)> {
    let mut out = vec![
        ("GET", "/eve/v1/info".to_string(), vec![]),
        (
            "POST",
            "/eve/v1/session".to_string(),
            br#"{"message":"hi"}"#.to_vec(),
        ),
    ];
    out.extend(session_routes(session));
    out
}

/// The routes of one session, each with a well-formed body.
fn session_routes(session: &str) -> Vec<(&'static str, String, Vec<u8>)> {
    vec![
        (
            "POST",
            format!("/eve/v1/session/{session}"),
            br#"{"message":"hi"}"#.to_vec(),
        ),
        (
            "GET",
            format!("/eve/v1/session/{session}/stream?follow=false"),
            vec![],
        ),
        (
            "POST",
            format!("/eve/v1/session/{session}/cancel"),
            br#"{"turnId":"turn_0"}"#.to_vec(),
        ),
        ("POST", format!("/eve/v1/session/{session}/clear"), vec![]),
        ("POST", format!("/eve/v1/session/{session}/compact"), vec![]),
        (
            "POST",
            format!("/eve/v1/session/{session}/reset"),
            br#"{"reason":"pwned"}"#.to_vec(),
        ),
        (
            "GET",
            format!("/eve/v1/session/{session}/authorizations/auth_1"),
            vec![],
        ),
    ]
}

/// Starts a session at the agent reached directly with `bearer`, and lets its turn settle:
/// its id.
fn agent_session(h: &Host, bearer: &str) -> String {
    let created = raw(
        h,
        "POST",
        "/eve/v1/session",
        &[
            ("authorization", bearer),
            ("content-type", "application/json"),
        ],
        br#"{"message":"hello"}"#,
    );
    assert_eq!(created.status, 202, "a valid token: {}", created.text());
    let session = serde_json::from_slice::<Value>(&created.body).unwrap()["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let events = eve::settled_as(h, &session, &[("authorization", bearer)], SETTLE);
    assert_eq!(types(&events).last(), Some(&"session.waiting"));
    session
}

#[test]
fn the_agent_refuses_every_forged_jwt_and_writes_nothing() {
    let (_dir, manifest) = public_agent_manifest();
    let Some(h) = Host::start(HostOptions {
        manifest,
        ..password_options().var("eve_jwt_secret", JWT_SECRET)
    }) else {
        return;
    };
    let jwt = UpstreamJwt::new(
        JWT_SECRET,
        eve_agent::jwt::DEFAULT_ISSUER,
        eve_agent::jwt::DEFAULT_AUDIENCE,
    );
    let (alice, mallory) = (principal("alice"), principal("mallory"));
    let t = now();
    // Positive control: a valid token starts a session, and its turn runs.
    let valid = jwt.mint(&alice, t);
    let bearer = format!("Bearer {valid}");
    let session = agent_session(&h, &bearer);
    // eve's health check is public, at the agent too.
    let health = raw(&h, "GET", "/eve/v1/health", &[], b"");
    assert_eq!(health.status, 200, "{}", health.text());
    assert_eq!(
        serde_json::from_slice::<Value>(&health.body).unwrap()["ok"],
        true
    );
    let before = db_dump(&h);

    let key = JWT_SECRET.as_bytes();
    let (head, body, _) = {
        let mut p = valid.split('.');
        (p.next().unwrap(), p.next().unwrap(), p.next().unwrap())
    };
    let hs256 = json!({ "alg": "HS256", "typ": "JWT" });
    let with = |patch: Value| {
        let mut c = claims("alice", t);
        for (k, v) in patch.as_object().unwrap() {
            if v.is_null() {
                c.as_object_mut().unwrap().remove(k);
            } else {
                c[k] = v.clone();
            }
        }
        format!("Bearer {}", forge_jwt(&hs256, &c, key))
    };
    let session_derived = derived_key(SECRET);
    let dev_key = UpstreamJwt::from_vars(AuthMode::LocalDev, |_| None).expect("the dev key");
    let other_secret = UpstreamJwt::new(
        "another-upstream-secret-that-is-long-enough",
        eve_agent::jwt::DEFAULT_ISSUER,
        eve_agent::jwt::DEFAULT_AUDIENCE,
    );
    let auth = |v: String| vec![("authorization", v)];
    let mut forgeries: Vec<(String, Vec<(&str, String)>)> = vec![
        ("no Authorization header".into(), vec![]),
        ("an empty Authorization".into(), auth(String::new())),
        ("`Bearer` without a token".into(), auth("Bearer".into())),
        ("`Bearer ` and spaces".into(), auth("Bearer    ".into())),
        ("the token without its scheme".into(), auth(valid.clone())),
        ("the token as Basic".into(), auth(format!("Basic {valid}"))),
        ("a bare principal id".into(), auth("Bearer alice".into())),
        (
            "two tokens in one header".into(),
            auth(format!("Bearer {valid} {valid}")),
        ),
        (
            "signed with the key derived from session_secret (eve_jwt_secret is set)".into(),
            auth(session_derived.bearer(&alice, t)),
        ),
        (
            "signed with local-dev's public key".into(),
            auth(dev_key.bearer(&alice, t)),
        ),
        (
            "signed with another secret".into(),
            auth(other_secret.bearer(&alice, t)),
        ),
        (
            "signed with session_secret itself".into(),
            auth(format!(
                "Bearer {}",
                forge_jwt(&hs256, &claims("alice", t), SECRET.as_bytes())
            )),
        ),
        ("expired".into(), auth(jwt.bearer(&alice, t - 3600))),
        (
            "issued in the future".into(),
            auth(jwt.bearer(&alice, t + 3600)),
        ),
        (
            "another issuer".into(),
            auth(with(json!({ "iss": "someone-else" }))),
        ),
        (
            "another audience".into(),
            auth(with(json!({ "aud": "another-agent" }))),
        ),
        (
            "an audience list without ours".into(),
            auth(with(json!({ "aud": ["another-agent"] }))),
        ),
        (
            "living for 30 days".into(),
            auth(with(json!({ "exp": t + 30 * 24 * 3600 }))),
        ),
        ("no exp".into(), auth(with(json!({ "exp": null })))),
        ("no iss".into(), auth(with(json!({ "iss": null })))),
        ("an empty subject".into(), auth(with(json!({ "sub": "" })))),
        ("no subject".into(), auth(with(json!({ "sub": null })))),
        (
            "a numeric exp as a string".into(),
            auth(with(json!({ "exp": (t + 60).to_string() }))),
        ),
        (
            "alg none, unsigned".into(),
            auth(format!("Bearer {}", unsigned_jwt("alice", t))),
        ),
        (
            "alg none with the valid signature".into(),
            auth(format!(
                "Bearer {}.{body}.{}",
                b64url(br#"{"alg":"none","typ":"JWT"}"#),
                valid.rsplit('.').next().unwrap()
            )),
        ),
        (
            "alg HS512 with an HS256 tag".into(),
            auth(format!(
                "Bearer {}",
                forge_jwt(
                    &json!({ "alg": "HS512", "typ": "JWT" }),
                    &claims("alice", t),
                    key
                )
            )),
        ),
        (
            "no alg".into(),
            auth(format!(
                "Bearer {}",
                forge_jwt(&json!({ "typ": "JWT" }), &claims("alice", t), key)
            )),
        ),
        (
            "mallory's claims under alice's signature".into(),
            auth(format!(
                "Bearer {head}.{}.{}",
                b64url(claims("mallory", t).to_string().as_bytes()),
                valid.rsplit('.').next().unwrap()
            )),
        ),
        (
            "without its signature".into(),
            auth(format!("Bearer {head}.{body}.")),
        ),
        (
            "header and claims only".into(),
            auth(format!("Bearer {head}.{body}")),
        ),
        (
            "with a fourth part".into(),
            auth(format!("Bearer {valid}.AAAA")),
        ),
        (
            "with trailing garbage".into(),
            auth(format!("Bearer {valid}x")),
        ),
        (
            "a valid one in a cookie".into(),
            vec![("cookie", format!("{SESSION_COOKIE_NAME}={valid}"))],
        ),
        (
            "a valid one in the retired principal-assertion header".into(),
            vec![("x-eve-principal-assertion", valid.clone())],
        ),
        (
            "principal headers".into(),
            vec![
                ("x-principal", "alice".into()),
                ("x-user-id", "alice".into()),
                ("x-forwarded-user", "alice".into()),
            ],
        ),
    ];
    let sig_start = valid.rfind('.').unwrap() + 1;
    for at in [0, 3, head.len() + 2, sig_start + 1, valid.len() - 2] {
        forgeries.push((
            format!("a valid one with byte {at} changed"),
            auth(format!("Bearer {}", flip_bit(&valid, at))),
        ));
    }
    let routes = agent_routes(&session);
    let mut answers = BTreeSet::new();
    for (what, headers) in &forgeries {
        for (method, path, body) in &routes {
            let mut hs: Vec<(&str, &str)> = vec![("content-type", "application/json")];
            hs.extend(headers.iter().map(|(k, v)| (*k, v.as_str())));
            let ctx = format!("{method} {path} with a token {what}");
            let r = raw(&h, method, path, &hs, body);
            answers.insert(assert_unauthorized(&ctx, &r));
            assert_eq!(r.header("www-authenticate"), Some("Bearer"), "{ctx}");
        }
    }
    assert_eq!(answers.len(), 1, "one 401 for every forgery: {answers:?}");
    // A genuine token for another principal finds nothing of alice's: the answers of a
    // session that does not exist.
    let as_mallory = vec![("authorization", jwt.bearer(&mallory, t))];
    for (method, path, body) in session_routes(&session) {
        let unknown = path.replace(&session, UNKNOWN_SESSION);
        assert_same_as_unknown(&h, &as_mallory, method, &path, &unknown, &body);
    }
    assert_eq!(db_dump(&h), before, "forged tokens wrote nothing");
    // Alice's session is still hers, unchanged.
    let mine = eve::history_as(&h, &session, &[("authorization", &bearer)]);
    assert_eq!(
        types(&parse_ndjson(&mine.text())).last(),
        Some(&"session.waiting")
    );
    assert_clean_log(&h);
}

/// The codec of the key scripts/run (and the harness) derives from `session_secret` when no
/// `eve_jwt_secret` is set, with the default issuer and audience.
fn derived_key(session_secret: &str) -> UpstreamJwt {
    UpstreamJwt::new(
        &eve_agent::jwt::key_derived_from(session_secret),
        eve_agent::jwt::DEFAULT_ISSUER,
        eve_agent::jwt::DEFAULT_AUDIENCE,
    )
}

/// With the key scripts/run derives from the session secret (the harness passes it as
/// `eve_jwt_secret`, as scripts/run does), the agent takes that key's tokens and no other.
#[test]
fn with_the_key_scripts_run_derives_the_agent_takes_only_its_tokens() {
    let (_dir, manifest) = public_agent_manifest();
    let Some(h) = Host::start(HostOptions {
        manifest,
        ..password_options()
    }) else {
        return;
    };
    let alice = principal("alice");
    let t = now();
    // What eve-proxy mints in this configuration: the derived key, the default issuer and
    // audience.
    let derived = derived_key(SECRET);
    let session = agent_session(&h, &derived.bearer(&alice, t));
    let before = db_dump(&h);
    let other_session_secret = derived_key("another-secret-that-is-long-enough-0000");
    let dev_key = UpstreamJwt::from_vars(AuthMode::LocalDev, |_| None).unwrap();
    // The issuer and audience variables, which this host leaves at their defaults.
    let key = eve_agent::jwt::key_derived_from(SECRET);
    let renamed = |name: &'static str, value: &'static str| {
        let pick = |n: &str, default: &str| {
            if n == name {
                value.to_string()
            } else {
                default.to_string()
            }
        };
        UpstreamJwt::new(
            &key,
            &pick("eve_jwt_issuer", eve_agent::jwt::DEFAULT_ISSUER),
            &pick("eve_jwt_audience", eve_agent::jwt::DEFAULT_AUDIENCE),
        )
    };
    for (what, token) in [
        (
            "derived from another session_secret",
            other_session_secret.bearer(&alice, t),
        ),
        (
            "signed with local-dev's public key",
            dev_key.bearer(&alice, t),
        ),
        (
            "signed with session_secret itself",
            format!(
                "Bearer {}",
                forge_jwt(
                    &json!({ "alg": "HS256", "typ": "JWT" }),
                    &claims("alice", t),
                    SECRET.as_bytes()
                )
            ),
        ),
        (
            "for another issuer",
            renamed("eve_jwt_issuer", "someone-else").bearer(&alice, t),
        ),
        (
            "for another audience",
            renamed("eve_jwt_audience", "another-agent").bearer(&alice, t),
        ),
        ("expired", derived.bearer(&alice, t - 3600)),
    ] {
        let mut answers = BTreeSet::new();
        for (method, path, body) in agent_routes(&session) {
            let r = raw(
                &h,
                method,
                &path,
                &[
                    ("authorization", &token),
                    ("content-type", "application/json"),
                ],
                &body,
            );
            answers.insert(assert_unauthorized(
                &format!("{method} {path} with a token {what}"),
                &r,
            ));
        }
        assert_eq!(answers.len(), 1, "{what}: {answers:?}");
    }
    assert_eq!(db_dump(&h), before, "refused tokens wrote nothing");
    assert_clean_log(&h);
}

/// Issue 32 (9): the agent holds no session secret, so it cannot take a token signed with a
/// key derived from one. Without `eve_jwt_secret` outside local-dev it has no key at all: it
/// refuses every token (before issue 32 it derived the key from `session_secret` and took the
/// derived key's tokens), eve-proxy answers 503 instead of calling it, and `/api/setup` names
/// the variable.
#[test]
fn without_eve_jwt_secret_the_agent_has_no_key_and_setup_says_so() {
    let (_dir, manifest) = public_agent_manifest();
    // "" opts out of the harness's derived key: the deployment sets no eve_jwt_secret.
    let Some(agent) = Host::start(HostOptions {
        manifest,
        ..password_options().var("eve_jwt_secret", "")
    }) else {
        return;
    };
    let alice = principal("alice");
    let t = now();
    for (what, token) in [
        (
            "the key once derived from session_secret",
            derived_key(SECRET).bearer(&alice, t),
        ),
        (
            "signed with local-dev's public key",
            UpstreamJwt::from_vars(AuthMode::LocalDev, |_| None)
                .unwrap()
                .bearer(&alice, t),
        ),
    ] {
        let r = raw(
            &agent,
            "POST",
            "/eve/v1/session",
            &[
                ("authorization", &token),
                ("content-type", "application/json"),
            ],
            br#"{"message":"hi"}"#,
        );
        assert_unauthorized(&format!("a token {what}"), &r);
    }

    let Some(h) = Host::start(password_options().var("eve_jwt_secret", "")) else {
        return;
    };
    let setup = h.get("/api/setup").json();
    assert_eq!(setup["appReady"], false, "{setup}");
    let missing = setup["missing"].to_string();
    assert!(missing.contains("eve_jwt_secret"), "{missing}");
    let cookie = sign_in(&h);
    let origin = h.origin();
    let r = raw(
        &h,
        "POST",
        "/eve/v1/session",
        &[
            ("cookie", cookie.as_str()),
            ("origin", origin.as_str()),
            ("content-type", "application/json"),
        ],
        br#"{"message":"hi"}"#,
    );
    assert_eq!(r.status, 503, "{}", r.text());
    assert!(r.text().contains("eve_jwt_secret"), "{}", r.text());
}

/// A validly signed session cookie of password mode naming `id` (the test knows the
/// session secret, as a second sign-in method would): a second principal on one host.
fn cookie_of(id: &str) -> String {
    let codec = password_config(SECRET).session_codec().unwrap();
    let value = codec.seal(&SessionClaims::new(&principal(id), now()));
    format!("{SESSION_COOKIE_NAME}={value}")
}

#[test]
fn the_proxy_sends_its_own_jwt_and_never_a_clients() {
    let Some(h) = Host::start(password_options()) else {
        return;
    };
    // What the agent would accept in this configuration (the key the harness derives from
    // session_secret): a leaked or forged token, as good as the proxy's own.
    let agent_key = derived_key(SECRET);
    let t = now();
    let as_alice = agent_key.bearer(&principal("alice"), t);
    let as_mallory = agent_key.bearer(&principal("mallory"), t);
    let origin = h.origin();
    fn with_json<'a>(origin: &'a str, extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        let mut hs = vec![("content-type", "application/json"), ("origin", origin)];
        hs.extend_from_slice(extra);
        hs
    }
    // Even a correctly signed token is worth nothing without a cookie: 401 at the proxy, on
    // every route, and the agent never hears of it.
    let mut answers = BTreeSet::new();
    for (method, path, body) in agent_routes(UNKNOWN_SESSION) {
        let r = raw(
            &h,
            method,
            &path,
            &with_json(&origin, &[("authorization", &as_alice)]),
            &body,
        );
        answers.insert(assert_unauthorized(
            &format!("{method} {path} with a bearer token and no cookie"),
            &r,
        ));
    }
    // Two Authorization lines change nothing.
    let r = raw(
        &h,
        "POST",
        "/eve/v1/session",
        &with_json(
            &origin,
            &[("authorization", &as_alice), ("authorization", &as_mallory)],
        ),
        br#"{"message":"hi"}"#,
    );
    answers.insert(assert_unauthorized("two bearer tokens and no cookie", &r));
    assert_eq!(answers.len(), 1, "the proxy's one 401: {answers:?}");
    assert!(!db_dump(&h).unwrap_or_default().contains_key("eve_session"));

    // Alice (her cookie) starts a session while claiming to be mallory in Authorization: the
    // session is alice's.
    let alice = cookie_of("alice");
    let created = raw(
        &h,
        "POST",
        "/eve/v1/session",
        &with_json(
            &origin,
            &[("cookie", &alice), ("authorization", &as_mallory)],
        ),
        br#"{"message":"hi"}"#,
    );
    assert_eq!(created.status, 202, "{}", created.text());
    let session = serde_json::from_slice::<Value>(&created.body).unwrap()["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let events = eve::settled_as(&h, &session, &[("cookie", &alice)], SETTLE);
    assert!(events.iter().any(|e| e["type"] == "message.received"));
    let sessions = db_dump(&h).unwrap()["eve_session"].clone();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert!(
        sessions[0].contains("\"alice\"") && !sessions[0].contains("mallory"),
        "the session's owner: {}",
        sessions[0]
    );
    let before = state(&h, Some(&alice));

    // Mallory (his own cookie) with alice's token in Authorization finds nothing of hers: the
    // agent sees the principal of the cookie, never the client's header.
    let mut as_mallory_with_alices_token = same_origin(&h);
    as_mallory_with_alices_token.push(("cookie", cookie_of("mallory")));
    as_mallory_with_alices_token.push(("authorization", as_alice.clone()));
    for (method, path, body) in session_routes(&session) {
        let unknown = path.replace(&session, UNKNOWN_SESSION);
        let mut hs = as_mallory_with_alices_token.clone();
        hs.push(("content-type", "application/json".into()));
        assert_same_as_unknown(&h, &hs, method, &path, &unknown, &body);
    }
    assert_unchanged(&h, &before, Some(&alice), "after mallory's requests");
    // Alice's own stream is intact and hers.
    let mine = eve::history_as(
        &h,
        &session,
        &[("cookie", &alice), ("authorization", &as_mallory)],
    );
    assert_eq!(mine.status, 200, "{}", mine.text());
    assert_eq!(parse_ndjson(&mine.text()), events);
    assert_clean_log(&h);
}
