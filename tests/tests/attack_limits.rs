//! What one client can exhaust (issue 12, items 5, 7, 8 and the connect page's framing):
//!
//! - **Bodies** (item 5): every component answers from the request's head — authentication and
//!   a declared `Content-Length` over the route's cap — without reading the body, and stops
//!   reading a chunked body the moment it passes the cap. The requests here declare a length
//!   they never send, or send a chunked body that never ends: a component that read the whole
//!   body first would wait forever, and the test would see no answer.
//! - **Streams** (item 7): one principal holds at most 8 open stream reads; the ninth is 429
//!   with `Retry-After` while another principal streams as usual, and closing one frees its
//!   slot.
//! - **Turns** (item 8): a connection's OAuth callback resumes a turn, so it counts toward
//!   `chat_send_per_hour` like messages and answers; opening the connect page (a redirect to
//!   the connection's server) does not.
//! - The sign-in's pages cannot be framed (`frame-ancestors 'none'`).
//!
//! Requests whose bytes matter (a length that is never sent, an endless chunked body, a stream
//! held open) go through a tiny HTTP/1.1 client on a plain socket.

use eve_agent::jwt::UpstreamJwt;
use eve_api::auth::{AuthMode, Principal};
use eve_auth::cookie::{SessionClaims, SESSION_COOKIE_NAME};
use eve_auth::AuthConfig;
use eve_chat_tests::raw::{
    self, authority, head_text, no_answer, parse, parse_head, read_response, Raw,
};
use eve_chat_tests::{eve, mcp_servers};
use eve_chat_tests::{public_agent_manifest, Host, HostOptions};
use serde_json::json;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

const SECRET: &str = "attack-limits-session-secret-0123456789abcdef";
const PASSWORD: &str = "correct horse battery staple";
const JWT_SECRET: &str = "attack-limits-upstream-jwt-secret-0123456789";
/// A declared body length far over every cap (and never sent).
const HUGE: u64 = 1 << 40;
/// How long a following stream may take to show that it is open (its response head).
const OPEN_WAIT: Duration = Duration::from_secs(60);

// ------------------------------------------------------------------------ raw HTTP client

/// Sends the head of a request that declares `declared` body bytes, and never sends them.
fn declared_only(
    h: &Host,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    declared: u64,
) -> Raw {
    let mut s = TcpStream::connect(authority(h)).expect("connect");
    let head = head_text(h, method, path, headers) + &format!("Content-Length: {declared}\r\n\r\n");
    s.write_all(head.as_bytes()).expect("send the head");
    read_response(&mut s)
}

/// Sends a chunked body that never ends (64 KiB chunks, up to 64 MiB, no last chunk) while
/// waiting for the answer.
fn endless_chunked(h: &Host, method: &str, path: &str, headers: &[(&str, &str)]) -> Raw {
    let mut s = TcpStream::connect(authority(h)).expect("connect");
    let head = head_text(h, method, path, headers) + "Transfer-Encoding: chunked\r\n\r\n";
    s.write_all(head.as_bytes()).expect("send the head");
    let mut w = s.try_clone().expect("clone the socket");
    let writer = std::thread::spawn(move || {
        let chunk = format!("10000\r\n{}\r\n", "x".repeat(0x10000));
        for _ in 0..1024 {
            if w.write_all(chunk.as_bytes()).is_err() {
                break;
            }
        }
    });
    let r = read_response(&mut s);
    // Unblocks the writer whatever the server did with the rest.
    let _ = s.shutdown(Shutdown::Both);
    writer.join().expect("the writer");
    r
}

/// Sends a request with a `len`-byte body while reading its answer, as browsers and curl do.
fn sent_while_reading(
    h: &Host,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    len: usize,
) -> Raw {
    raw::send_while_reading(h, method, path, headers, vec![b'x'; len])
}

/// Opens a following stream and reads up to the end of its response head (the whole response
/// when it is a refusal); the socket stays open (the stream holds its slot) until dropped.
fn open_stream(h: &Host, sid: &str, cookie: &str) -> (TcpStream, Raw) {
    let mut s = TcpStream::connect(authority(h)).expect("connect");
    let path = eve::stream_path(sid, "startIndex=0");
    let head = head_text(h, "GET", &path, &[("cookie", cookie)]) + "\r\n";
    s.write_all(head.as_bytes()).expect("send the head");
    let deadline = Instant::now() + OPEN_WAIT;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some((mut head, rest)) = parse_head(&buf) {
            // An open stream's body never ends; a refusal's is read whole.
            if head.status == 200 {
                head.body = rest.to_vec();
                return (s, head);
            }
            if let Some(r) = parse(&buf, false) {
                return (s, r);
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            break;
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let r = parse(&buf, true).unwrap_or_else(|| no_answer(&buf));
    (s, r)
}

// ------------------------------------------------------------------------ hosts and principals

fn password_options() -> HostOptions {
    HostOptions::default()
        .var("auth_mode", "password")
        .var("session_secret", SECRET)
        .var("chat_password", PASSWORD)
        .var("chat_create_per_hour", "100000")
        .var("chat_send_per_hour", "100000")
        .var("demo_pacing_ms", "1")
}

fn principal(id: &str) -> Principal {
    Principal {
        id: id.into(),
        mode: AuthMode::Password,
        name: None,
        email: None,
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A validly signed password-mode session cookie naming `id` (the test knows the session
/// secret): as many principals on one host as a test needs.
fn cookie_of(id: &str) -> String {
    let config = AuthConfig::from_lookup(|name| match name {
        "auth_mode" => Some("password".into()),
        "session_secret" => Some(SECRET.into()),
        "chat_password" => Some(PASSWORD.into()),
        _ => None,
    });
    let value = config
        .session_codec()
        .expect("a session codec")
        .seal(&SessionClaims::new(&principal(id), now()));
    format!("{SESSION_COOKIE_NAME}={value}")
}

/// The headers of a same-origin JSON request as `cookie`.
fn as_user<'a>(h: &'a Host, cookie: &'a str) -> Vec<(&'a str, &'a str)> {
    let origin: &'a str = h.base.as_str();
    vec![
        ("cookie", cookie),
        ("origin", origin),
        ("sec-fetch-site", "same-origin"),
        ("content-type", "application/json"),
    ]
}

/// The same-origin headers without a session.
fn anonymous(h: &Host) -> Vec<(&str, &str)> {
    vec![
        ("origin", h.base.as_str()),
        ("sec-fetch-site", "same-origin"),
        ("content-type", "application/json"),
    ]
}

fn assert_refused(ctx: &str, r: &Raw, status: u16, code: &str) {
    assert_eq!(r.status, status, "{ctx}: {:?} {}", r.headers, r.text());
    assert_eq!(r.error_code().as_deref(), Some(code), "{ctx}: {}", r.text());
}

/// No trap or panic in the host's log.
fn assert_clean_log(h: &Host) {
    let log = h.log();
    for bad in ["trapped", "panicked"] {
        assert!(!log.contains(bad), "{bad} in the host's log:\n{log}");
    }
}

// ------------------------------------------------------------------------ item 5: bodies

/// A client that reads while it sends its body (as browsers and curl do) gets the refusal of
/// a body over the cap, on this host and on Spin: the component answers from the head and the
/// connection is closed with the rest unread (docs/local-host.md, "Where this host differs
/// from Spin": neither host drains it).
#[test]
fn a_client_that_reads_while_it_sends_a_refused_body_gets_the_answer() {
    let Some(h) = Host::start(password_options()) else {
        return;
    };
    let alice = cookie_of("alice");
    let user = as_user(&h, &alice);
    for round in 0..5 {
        for (method, path, headers, status, code) in [
            (
                "POST",
                "/api/auth/login",
                anonymous(&h),
                413,
                "payload_too_large",
            ),
            ("POST", "/api/chats", user.clone(), 413, "payload_too_large"),
            (
                "POST",
                "/eve/v1/session",
                user.clone(),
                413,
                "payload_too_large",
            ),
            ("POST", "/api/chats", anonymous(&h), 401, "unauthorized"),
        ] {
            let r = sent_while_reading(&h, method, path, &headers, REFUSED_BODY);
            assert_refused(&format!("round {round}: {method} {path}"), &r, status, code);
        }
    }
    assert_clean_log(&h);
}

/// The other side of the same choice: a client that writes a large refused body in full
/// before it reads (ureq does) loses the answer to a reset connection, on Spin 4.0.2 as here.
/// The host does not drain what a component left unread (it used to, as nginx's
/// `lingering_close` does, and so passed a test Spin fails).
#[test]
fn a_client_that_writes_a_large_refused_body_before_reading_loses_the_answer_as_on_spin() {
    let Some(h) = Host::start(password_options()) else {
        return;
    };
    let body = vec![b'x'; REFUSED_BODY];
    let headers = anonymous(&h);
    let mut req = h.client().post(&h.url("/api/auth/login"));
    for (k, v) in &headers {
        req = req.set(k, v);
    }
    match req.send_bytes(&body) {
        Err(eve_chat_tests::ureq::Error::Transport(_)) => {}
        Ok(r) | Err(eve_chat_tests::ureq::Error::Status(_, r)) => panic!(
            "the host read (or drained) a refused 16 MiB body: {} {}",
            r.status(),
            r.into_string().unwrap_or_default()
        ),
    }
    assert_clean_log(&h);
}

/// A body over every cap, the message routes' too (256 KiB plus one 5 MiB file in base64),
/// and over what the sockets of a loopback connection buffer.
const REFUSED_BODY: usize = 16 << 20;

#[test]
fn a_declared_body_over_the_cap_is_refused_by_every_component_before_it_is_sent() {
    let Some(h) = Host::start(password_options()) else {
        return;
    };
    let alice = cookie_of("alice");
    let user = as_user(&h, &alice);
    let chat = h.send("POST", "/api/chats", &user, Some(b"{}"));
    assert_eq!(chat.status, 201, "{}", chat.text());
    let id = chat.json()["chat"]["id"].as_str().unwrap().to_string();
    let cases = [
        ("chats", "PATCH", format!("/api/chats/{id}")),
        ("chats", "POST", "/api/chats".to_string()),
        ("events", "PUT", format!("/api/chats/{id}/snapshot")),
        ("events", "POST", format!("/api/chats/{id}/events")),
        ("events", "PUT", format!("/api/chats/{id}/events/0")),
        ("events", "PUT", format!("/api/chats/{id}/pending")),
        ("auth", "POST", "/api/auth/login".to_string()),
        ("eve-proxy", "POST", "/eve/v1/session".to_string()),
    ];
    for (component, method, path) in &cases {
        let r = declared_only(&h, method, path, &user, HUGE);
        assert_refused(
            &format!("{component}: {method} {path}"),
            &r,
            413,
            "payload_too_large",
        );
    }
    // The shell reads no body at all: a GET is served, another method refused, unread.
    let r = declared_only(&h, "GET", "/", &[], HUGE);
    assert_eq!(r.status, 200, "shell GET: {}", r.text());
    let r = declared_only(&h, "POST", "/", &anonymous(&h), HUGE);
    assert_eq!(r.status, 405, "shell POST: {}", r.text());
    // Nothing was written: the chat is as it was created.
    let after = h.send("GET", &format!("/api/chats/{id}"), &user, None);
    assert_eq!(after.status, 200);
    assert_eq!(after.json()["chat"]["title"], chat.json()["chat"]["title"]);
    assert_clean_log(&h);
}

#[test]
fn an_unauthenticated_request_is_refused_without_its_body_being_read() {
    let Some(h) = Host::start(password_options()) else {
        return;
    };
    let headers = anonymous(&h);
    for (method, path) in [
        ("POST", "/api/chats"),
        ("PATCH", "/api/chats/c1"),
        ("PUT", "/api/chats/c1/snapshot"),
        ("POST", "/api/chats/c1/events"),
        ("POST", "/eve/v1/session"),
        ("POST", "/eve/v1/session/s1"),
    ] {
        // A declared length within every cap: only the missing session can refuse it early.
        let r = declared_only(&h, method, path, &headers, 1000);
        assert_refused(&format!("{method} {path}"), &r, 401, "unauthorized");
    }
    assert_clean_log(&h);
}

#[test]
fn a_chunked_body_is_cut_off_at_the_cap_while_it_streams() {
    let Some(h) = Host::start(password_options()) else {
        return;
    };
    let alice = cookie_of("alice");
    let user = as_user(&h, &alice);
    for (component, method, path) in [
        ("chats", "PATCH", "/api/chats/c1"),
        ("events", "PUT", "/api/chats/c1/pending"),
        ("auth", "POST", "/api/auth/login"),
        ("eve-proxy", "POST", "/eve/v1/session"),
    ] {
        let r = endless_chunked(&h, method, path, &user);
        assert_refused(
            &format!("{component}: {method} {path}"),
            &r,
            413,
            "payload_too_large",
        );
    }
    assert_clean_log(&h);
}

#[test]
fn the_agent_itself_refuses_a_body_over_its_cap_unread() {
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
    let bearer = jwt.bearer(&principal("alice"), now());
    let headers = [
        ("authorization", bearer.as_str()),
        ("content-type", "application/json"),
    ];
    let r = declared_only(&h, "POST", "/eve/v1/session", &headers, HUGE);
    assert_refused("declared", &r, 413, "payload_too_large");
    let r = endless_chunked(&h, "POST", "/eve/v1/session", &headers);
    assert_refused("chunked", &r, 413, "payload_too_large");
    // Without the proxy's token: 401 before the body.
    let r = declared_only(
        &h,
        "POST",
        "/eve/v1/session",
        &[("content-type", "application/json")],
        1000,
    );
    assert_refused("no token", &r, 401, "unauthorized");
    assert_clean_log(&h);
}

// ------------------------------------------------------------------------ item 7: streams

/// A session of `cookie`'s principal whose first turn has settled (its following stream then
/// stays open, waiting for the next message).
fn settled_session(h: &Host, cookie: &str) -> String {
    let user = as_user(h, cookie);
    let r = h.send(
        "POST",
        "/eve/v1/session",
        &user,
        Some(br#"{"message":"hello"}"#),
    );
    let sid = eve::assert_accepted(&r, None)["sessionId"]
        .as_str()
        .expect("a session id")
        .to_string();
    eve::settled_as(h, &sid, &[("cookie", cookie)], Duration::from_secs(120));
    sid
}

#[test]
fn one_user_holds_at_most_eight_open_streams_and_cannot_starve_another() {
    let Some(h) = Host::start(password_options().var("agent_keepalive_secs", "1")) else {
        return;
    };
    let (alice, bob) = (cookie_of("alice"), cookie_of("bob"));
    let sid = settled_session(&h, &alice);
    let mut open = Vec::new();
    for n in 0..8 {
        let (s, r) = open_stream(&h, &sid, &alice);
        assert_eq!(r.status, 200, "stream {n}: {}", r.text());
        open.push(s);
    }
    let (_, ninth) = open_stream(&h, &sid, &alice);
    assert_eq!(ninth.status, 429, "{:?} {}", ninth.headers, ninth.text());
    assert_eq!(
        ninth.error_code().as_deref(),
        Some("too_many_streams"),
        "{}",
        ninth.text()
    );
    assert!(ninth.text().contains("at most 8"), "{}", ninth.text());
    let retry: u64 = ninth
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .expect("Retry-After");
    assert!(retry > 0);

    // Bob is not affected by Alice's streams.
    let bob_sid = settled_session(&h, &bob);
    let (bob_stream, r) = open_stream(&h, &bob_sid, &bob);
    assert_eq!(r.status, 200, "bob: {}", r.text());

    // Closing one of Alice's streams frees its slot (the proxy notices at its next write).
    drop(open.pop());
    let deadline = Instant::now() + Duration::from_secs(120);
    let reopened = loop {
        let (s, r) = open_stream(&h, &sid, &alice);
        if r.status == 200 {
            break s;
        }
        assert_eq!(r.status, 429, "{}", r.text());
        assert!(
            Instant::now() < deadline,
            "the closed stream's slot was never freed"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    // Full again.
    let (_, r) = open_stream(&h, &sid, &alice);
    assert_eq!(r.status, 429);
    drop((reopened, bob_stream, open));
    assert_clean_log(&h);
}

/// A raised limit stays raised: `max_streams_per_user` above the old ceiling of 1000 used to
/// fall back to 8 without a word; now a value in range is taken and one past it is clamped to
/// the ceiling, and the log says so.
#[test]
fn a_raised_stream_limit_is_honoured_and_one_past_its_range_is_clamped_and_logged() {
    let Some(h) = Host::start(
        password_options()
            .var("agent_keepalive_secs", "1")
            .var("max_streams_per_user", "2000000"),
    ) else {
        return;
    };
    let alice = cookie_of("alice");
    let sid = settled_session(&h, &alice);
    let open: Vec<TcpStream> = (0..12)
        .map(|n| {
            let (s, r) = open_stream(&h, &sid, &alice);
            assert_eq!(r.status, 200, "stream {n}: {}", r.text());
            s
        })
        .collect();
    let log = h.log();
    assert!(
        log.contains("variable max_streams_per_user: 2000000 is outside 1..=100000; using 100000"),
        "{log}"
    );
    drop(open);
}

// ------------------------------------------------------------------------ item 8: turns

#[test]
fn oauth_callbacks_count_toward_chat_send_per_hour_and_the_connect_page_does_not() {
    // The sign-in of a real MCP server that wants OAuth (tests/mcp-servers/protected.mjs).
    let notes = mcp_servers::protected(3600);
    let connections = json!([mcp_servers::connection("notes", notes.port)]).to_string();
    let Some(h) = Host::start(
        HostOptions::default()
            .var("chat_send_per_hour", "3")
            .var("demo_pacing_ms", "1")
            .var("mcp_connections", &connections),
    ) else {
        return;
    };
    // 1: a message that parks its turn on a connection sign-in.
    let sid = eve::start(&h, r#"call tool notes__read_notes {"topic":"roadmap"}"#);
    let events = eve::read_until_settled(&h, &sid, 0);
    let required = eve::first(&events, "authorization.required").clone();
    let url = required["data"]["authorization"]["url"]
        .as_str()
        .expect("a connect URL")
        .to_string();
    // Opening the connect page only redirects to the server: not counted, however often.
    for _ in 0..3 {
        let page = h.get(&url);
        assert_eq!(page.status, 302, "{}", page.text());
    }
    // Sign-ins are answered at the server: the connect page takes no POST (a 404, as eve's
    // router answers a method it does not route).
    let origin = h.origin();
    let form = [
        ("content-type", "application/x-www-form-urlencoded"),
        ("origin", origin.as_str()),
        ("sec-fetch-site", "same-origin"),
    ];
    let posted = h.send("POST", &url, &form, Some(b"decision=allow"));
    assert_eq!(posted.status, 404, "{}", posted.text());
    // 2: the server's callback resumes the turn; its page cannot be framed.
    let authorize = h.get(&url).header("location").unwrap().to_string();
    let back = match h.client().get(&authorize).call() {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("the authorization endpoint: {e}"),
    };
    let callback = back.header("location").unwrap().to_string();
    let done = h.get(callback.strip_prefix(&h.origin()).unwrap());
    assert_eq!(done.status, 200, "{}", done.text());
    let csp = done.header("content-security-policy").unwrap_or("");
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    let n = events.len() as u64;
    let rest = eve::read_until_settled(&h, &sid, n);
    assert!(
        eve::types(&rest).contains(&"authorization.completed"),
        "{:?}",
        eve::types(&rest)
    );
    // 3: a cross-site page navigating the victim to the callback with a made-up state (the Lax
    // cookie travels on a top-level navigation) spends nothing (issue 19 item 4): only a
    // callback whose state verifies is counted.
    let cross_site = [
        ("sec-fetch-site", "cross-site"),
        ("sec-fetch-mode", "navigate"),
        ("referer", "https://evil.example/"),
    ];
    for state in ["forged", "v1.AAAA.BBBB", ""] {
        for _ in 0..4 {
            let forged = h.send(
                "GET",
                &format!("/eve/v1/connections/callback?state={state}&code=c"),
                &cross_site,
                None,
            );
            assert_eq!(forged.status, 400, "{}", forged.text());
        }
    }
    // The callback's own state, replayed once the sign-in is over, verifies: it is counted
    // (the third of 3) and the agent finds nothing pending.
    let replay = h.get(callback.strip_prefix(&h.origin()).unwrap());
    assert_eq!(replay.status, 409, "{}", replay.text());
    let n = n + rest.len() as u64;
    // The budget of 3 is spent: a message is refused now; a forged callback still answers
    // 400 (it is not counted, so not refused as over the budget either).
    let r = eve::send(&h, &sid, &json!({ "message": "and now?" }));
    assert_eq!(r.status, 429, "{}", r.text());
    assert_eq!(eve::error_of(&r).0.as_deref(), Some("rate_limited"));
    assert!(r.header("retry-after").is_some());
    let forged = h.send(
        "GET",
        "/eve/v1/connections/callback?state=forged&code=c",
        &cross_site,
        None,
    );
    assert_eq!(forged.status, 400, "{}", forged.text());
    // A refused callback ran nothing: the turn's log is as it settled.
    assert_eq!(eve::len(&h, &sid), n);
}

// ------------------------------------------------- issue 19 item 2: controls and creates

/// Clears, compacts and creates without a message write rows but start no model work: they
/// are metered on their own budget (`chat_control_per_hour`), 429 past it as sends are; a
/// cancel and a reset are never refused by it.
#[test]
fn clears_compacts_and_empty_creates_are_metered() {
    let Some(h) = Host::start(
        HostOptions::default()
            .var("demo_pacing_ms", "1")
            .var("chat_send_per_hour", "1000")
            .var("chat_control_per_hour", "3"),
    ) else {
        return;
    };
    let sid = eve::start(&h, "hello");
    eve::read_until_settled(&h, &sid, 0);
    assert_eq!(eve::control(&h, &sid, "clear").status, 202);
    assert_eq!(eve::control(&h, &sid, "compact").status, 202);
    eve::create(&h, &json!({}));
    for r in [
        eve::control(&h, &sid, "clear"),
        eve::control(&h, &sid, "compact"),
        h.json("POST", "/eve/v1/session", &json!({})),
    ] {
        assert_eq!(r.status, 429, "{}", r.text());
        assert_eq!(eve::error_of(&r).0.as_deref(), Some("rate_limited"));
        assert!(r.header("retry-after").is_some());
    }
    // Sends have their own budget; cancel and reset always pass.
    eve::send_message(&h, &sid, "still here");
    let r = eve::control(&h, &sid, "cancel");
    assert!(r.status == 200 || r.status == 202, "{}", r.text());
    assert_eq!(eve::control(&h, &sid, "reset").status, 200);
}

/// A principal at its byte cap (`principal_max_bytes`) can no longer clear, compact or create
/// sessions (each writes); cancel and reset still work.
#[test]
fn controls_and_empty_creates_are_refused_when_the_storage_is_full() {
    let Some(h) = Host::start(
        HostOptions::default()
            .var("demo_pacing_ms", "1")
            .var("chat_send_per_hour", "1000")
            .var("principal_max_bytes", "1000"),
    ) else {
        return;
    };
    // The first turn starts below the cap and ends past it (a demo turn stores ~18 KB).
    let sid = eve::start(&h, "hello");
    let events = eve::read_until_settled(&h, &sid, 0);
    for r in [
        eve::control(&h, &sid, "clear"),
        eve::control(&h, &sid, "compact"),
        h.json("POST", "/eve/v1/session", &json!({})),
    ] {
        assert_eq!(r.status, 413, "{}", r.text());
        assert_eq!(eve::error_of(&r).0.as_deref(), Some("storage_full"));
    }
    assert_eq!(
        eve::len(&h, &sid),
        events.len() as u64,
        "nothing was written"
    );
    let r = eve::control(&h, &sid, "cancel");
    assert!(r.status == 200 || r.status == 202, "{}", r.text());
    assert_eq!(eve::control(&h, &sid, "reset").status, 200);
}

/// Sessions per principal are capped (`max_sessions_per_user`): the next create is 429
/// `too_many_sessions`, and nothing is created.
#[test]
fn sessions_per_principal_are_capped() {
    let Some(h) = Host::start(
        HostOptions::default()
            .var("demo_pacing_ms", "1")
            .var("chat_send_per_hour", "1000")
            .var("max_sessions_per_user", "3"),
    ) else {
        return;
    };
    eve::create(&h, &json!({}));
    eve::create(&h, &json!({}));
    let sid = eve::start(&h, "hello");
    eve::read_until_settled(&h, &sid, 0);
    for body in [json!({}), json!({ "message": "one more" })] {
        let r = h.json("POST", "/eve/v1/session", &body);
        assert_eq!(r.status, 429, "{}", r.text());
        assert_eq!(eve::error_of(&r).0.as_deref(), Some("too_many_sessions"));
    }
    let db = rusqlite::Connection::open(h.state_dir().unwrap().join("sqlite_db.db")).unwrap();
    let n: i64 = db
        .query_row("SELECT count(*) FROM eve_session", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 3);
}
