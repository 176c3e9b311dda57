//! Attacks on sign-in and sessions (issue 12, items 1–4 and two of item 14), each through the
//! local host against the real `.wasm` components: who may sign in with OIDC, who local-dev
//! serves, whether one client can lock others out of password sign-in, what the session
//! cookie resists, and whether logout really ends a session.

#[allow(dead_code)]
use crate::oidc_provider;
use crate::support;

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, UdpSocket};
use std::time::Duration;

use eve_api::auth::{AuthMode, SessionResponse, SetupStatus, PASSWORD_PRINCIPAL_ID};
use eve_auth::config::missing;
use eve_auth::cookie::SESSION_COOKIE_NAME;
use eve_auth::throttle::{ACCOUNT_FAILURES_PER_WINDOW, FREE_FAILURES};
use eve_chat_tests::eve::{is_settling, stream_path, Stream};
use eve_chat_tests::Host;
use oidc_provider::{NextUser, Provider, CLIENT_ID, CLIENT_SECRET};
use support::{start_host, Client, Resp};

const PASSWORD: &str = "correct horse battery staple";
const WRONG: &str = "not the password at all";
const SECRET: &str = "test-session-secret-0123456789abcdef";

type Vars = Vec<(&'static str, String)>;

fn vars(pairs: &[(&'static str, &str)]) -> Vars {
    pairs.iter().map(|(k, v)| (*k, v.to_string())).collect()
}

fn password_vars() -> Vars {
    vars(&[("chat_password", PASSWORD), ("session_secret", SECRET)])
}

fn host(vars: &Vars) -> Host {
    start_host(vars).expect("these tests start their own host (unset EVE_CHAT_BASE_URL)")
}

fn login_with(client: &Client, password: &str, headers: &[(&str, String)]) -> Resp {
    client.post_json(
        "/api/auth/login",
        &serde_json::json!({ "password": password }),
        headers,
    )
}

fn cookie_header(value: &str) -> Vec<(&'static str, String)> {
    vec![("cookie", format!("{SESSION_COOKIE_NAME}={value}"))]
}

fn viewer(client: &Client, cookie: &str) -> Option<eve_api::auth::Principal> {
    let resp = client.get("/api/auth/session", &cookie_header(cookie));
    assert_eq!(resp.status, 200, "{}", resp.body);
    resp.json::<SessionResponse>().viewer
}

// ------------------------------------------------------------ raw HTTP from a chosen address

/// One HTTP/1.0 request over a socket bound to `from` (so the host sees that peer address).
fn request_from(
    host: &Host,
    from: IpAddr,
    method: &str,
    path: &str,
    headers: &[(&str, String)],
    body: Option<&str>,
) -> Resp {
    use socket2::{Domain, Socket, Type};
    let target: SocketAddr = host
        .base
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .expect("the local host listens on an IP:port");
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None).expect("a socket");
    socket
        .bind(&SocketAddr::new(from, 0).into())
        .unwrap_or_else(|e| panic!("cannot bind a client socket to {from}: {e}"));
    socket
        .connect_timeout(&target.into(), Duration::from_secs(30))
        .unwrap_or_else(|e| panic!("cannot connect from {from} to {target}: {e}"));
    let mut stream: TcpStream = socket.into();
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    let body = body.unwrap_or("");
    let mut head = format!(
        "{method} {path} HTTP/1.0\r\nhost: {target}\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("a response");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("not an HTTP response: {text:?}"));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {head:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Resp {
        status,
        headers,
        body: body.to_string(),
    }
}

fn login_from(host: &Host, from: IpAddr, password: &str) -> Resp {
    request_from(
        host,
        from,
        "POST",
        "/api/auth/login",
        &[("content-type", "application/json".into())],
        Some(&serde_json::json!({ "password": password }).to_string()),
    )
}

/// An address of this machine that is not loopback (the one it would reach the outside
/// from). Connecting a UDP socket sends nothing; it only picks the route.
fn non_loopback_ip() -> IpAddr {
    for probe in [
        "198.51.100.1:9",
        "192.0.2.1:9",
        "10.255.255.1:9",
        "172.31.255.1:9",
    ] {
        let Ok(socket) = UdpSocket::bind("0.0.0.0:0") else {
            continue;
        };
        if socket.connect(probe).is_err() {
            continue;
        }
        if let Ok(local) = socket.local_addr() {
            let ip = local.ip();
            if !ip.is_loopback() && !ip.is_unspecified() {
                return ip;
            }
        }
    }
    panic!("this test needs a non-loopback IPv4 address on this machine (none has a route)");
}

// ------------------------------------------------------------ 1. who may sign in with OIDC

struct Oidc {
    provider: Provider,
    host: Host,
    client: Client,
}

fn oidc_vars(provider: &Provider, allow: &[(&'static str, &str)]) -> Vars {
    let mut v = vars(&[
        ("oidc_issuer", &provider.issuer),
        ("oidc_client_id", CLIENT_ID),
        ("oidc_client_secret", CLIENT_SECRET),
        ("session_secret", SECRET),
    ]);
    v.extend(vars(allow));
    v
}

fn oidc(allow: &[(&'static str, &str)]) -> Oidc {
    let provider = Provider::start();
    let host = host(&oidc_vars(&provider, allow));
    let client = Client::of(&host);
    Oidc {
        provider,
        host,
        client,
    }
}

/// Start → provider → callback, as `user`; the callback's response.
fn oidc_sign_in(env: &Oidc, user: NextUser) -> Resp {
    env.provider.set_next_user(user);
    let start = env.client.get("/api/auth/oidc/start", &[]);
    assert_eq!(start.status, 303, "{}", start.body);
    let flow = start
        .cookie_value("__Host-eve_chat_oidc")
        .expect("a flow cookie");
    let at_provider = env
        .client
        .get_url(start.header("location").expect("to the provider"), &[]);
    assert_eq!(at_provider.status, 302, "{}", at_provider.body);
    let callback = at_provider.header("location").unwrap().to_string();
    env.client.get_url(
        &callback,
        &[("cookie", format!("__Host-eve_chat_oidc={flow}"))],
    )
}

fn user(sub: &str, email: &str) -> NextUser {
    NextUser {
        sub: sub.into(),
        email: Some(email.into()),
        ..NextUser::default()
    }
}

fn assert_refusal_page(resp: &Resp, expect: &str) {
    assert_eq!(resp.status, 403, "{}", resp.body);
    assert!(
        resp.header("content-type")
            .is_some_and(|t| t.starts_with("text/html")),
        "{:?}",
        resp.headers
    );
    assert!(resp.body.contains(expect), "{}", resp.body);
    assert!(
        resp.cookie_value(SESSION_COOKIE_NAME).is_none(),
        "a refused account gets no session"
    );
    assert!(
        resp.set_cookie("__Host-eve_chat_oidc")
            .is_some_and(|c| c.contains("Max-Age=0")),
        "the flow cookie is cleared"
    );
}

#[test]
fn oidc_is_not_ready_until_an_allowlist_is_set() {
    let env = oidc(&[]);
    let setup: SetupStatus = env.client.get("/api/setup", &[]).json();
    assert_eq!(setup.auth_mode, AuthMode::Oidc);
    assert!(!setup.auth_ready && !setup.app_ready, "{setup:?}");
    assert!(
        setup
            .missing
            .iter()
            .any(|m| m == missing::OIDC_ALLOWLIST_UNSET),
        "{:?}",
        setup.missing
    );
    let start = env.client.get("/api/auth/oidc/start", &[]);
    assert_eq!(start.header("location"), Some("/?authError=not_configured"));
}

#[test]
fn oidc_refuses_accounts_outside_the_allowlist_with_a_clear_page() {
    let env = oidc(&[
        ("oidc_allowed_domains", "team.example"),
        ("oidc_allowed_emails", "boss@partner.example"),
    ]);
    for (sub, email) in [("u-1", "eve@team.example"), ("u-2", "Boss@Partner.example")] {
        let ok = oidc_sign_in(&env, user(sub, email));
        assert_eq!(ok.status, 303, "{email}: {}", ok.body);
        let cookie = ok.cookie_value(SESSION_COOKIE_NAME).expect("signed in");
        assert!(viewer(&env.client, &cookie).is_some());
    }
    for (sub, email) in [
        ("u-3", "mallory@evil.example"),
        ("u-4", "intern@partner.example"),
        ("u-5", "eve@sub.team.example"),
        ("u-6", "eve@team.example.evil.example"),
    ] {
        let refused = oidc_sign_in(&env, user(sub, email));
        assert_refusal_page(&refused, "not allowed");
        assert!(
            refused.body.contains(email),
            "names the account: {}",
            refused.body
        );
    }
    // The refusal page escapes what the provider says.
    let html = oidc_sign_in(&env, user("u-7", "<script>x</script>@evil.example"));
    assert_refusal_page(&html, "not allowed");
    assert!(!html.body.contains("<script>"), "{}", html.body);
}

#[test]
fn oidc_refuses_an_email_the_provider_does_not_call_verified() {
    let env = oidc(&[("oidc_allowed_domains", "example.com")]);
    for verified in [Some(false), None] {
        let resp = oidc_sign_in(
            &env,
            NextUser {
                email_verified: verified,
                ..user("u-1", "eve@example.com")
            },
        );
        assert_refusal_page(&resp, "verified");
    }
    let ok = oidc_sign_in(&env, user("u-1", "eve@example.com"));
    assert!(
        ok.cookie_value(SESSION_COOKIE_NAME).is_some(),
        "{}",
        ok.body
    );
}

#[test]
fn narrowing_the_allowlist_ends_existing_sessions() {
    let env = oidc(&[("oidc_allowed_domains", "example.com, team.example")]);
    let done = oidc_sign_in(&env, user("u-1", "eve@example.com"));
    let cookie = done.cookie_value(SESSION_COOKIE_NAME).expect("signed in");
    assert!(viewer(&env.client, &cookie).is_some());
    // The same deployment after the owner removed example.com (same secret and provider).
    let narrowed = host(&oidc_vars(
        &env.provider,
        &[("oidc_allowed_domains", "team.example")],
    ));
    let client = Client::of(&narrowed);
    assert_eq!(viewer(&client, &cookie), None);
    let chats = client.get("/api/chats", &cookie_header(&cookie));
    assert_eq!(chats.status, 401, "{}", chats.body);
    drop(env.host);
}

#[test]
fn the_oidc_flow_cookie_is_host_prefixed_and_a_tossed_unprefixed_one_is_ignored() {
    let env = oidc(&[("oidc_allowed_domains", "example.com")]);
    env.provider.set_next_user(user("u-1", "eve@example.com"));
    let start = env.client.get("/api/auth/oidc/start", &[]);
    assert_eq!(start.status, 303, "{}", start.body);
    let set = start
        .set_cookie("__Host-eve_chat_oidc")
        .unwrap_or_else(|| panic!("a __Host- flow cookie: {:?}", start.headers));
    assert!(
        set.contains("; Path=/;") && set.contains("; Secure") && !set.contains("Domain"),
        "{set}"
    );
    let flow = start.cookie_value("__Host-eve_chat_oidc").unwrap();
    let at_provider = env
        .client
        .get_url(start.header("location").expect("to the provider"), &[]);
    let callback = at_provider.header("location").unwrap().to_string();
    // A sibling subdomain can plant `eve_chat_oidc` (Domain=.example.com), never a `__Host-`
    // cookie: a flow presented under any other name is no flow (no login CSRF by tossing).
    for name in [
        "eve_chat_oidc",
        "__host-eve_chat_oidc",
        "__Secure-eve_chat_oidc",
    ] {
        let tossed = env
            .client
            .get_url(&callback, &[("cookie", format!("{name}={flow}"))]);
        assert_eq!(tossed.status, 303, "{}", tossed.body);
        assert_eq!(
            tossed.header("location"),
            Some("/?authError=invalid_state"),
            "{name}"
        );
        assert!(tossed.cookie_value(SESSION_COOKIE_NAME).is_none());
    }
    assert_eq!(env.provider.token_requests(), 0);
    let done = env.client.get_url(
        &callback,
        &[("cookie", format!("__Host-eve_chat_oidc={flow}"))],
    );
    assert!(
        done.cookie_value(SESSION_COOKIE_NAME).is_some(),
        "{:?}",
        done.headers
    );
}

#[test]
fn oidc_callbacks_are_throttled_per_address() {
    let env = oidc(&[("oidc_allowed_domains", "example.com")]);
    let from = IpAddr::from([127, 0, 0, 2]);
    let forged = "/api/auth/oidc/callback?code=stolen-code&state=forged-state";
    for i in 0..30 {
        let resp = request_from(&env.host, from, "GET", forged, &[], None);
        assert_eq!(resp.status, 303, "callback {i}: {}", resp.body);
    }
    let refused = request_from(&env.host, from, "GET", forged, &[], None);
    assert_eq!(refused.status, 429, "{}", refused.body);
    let retry: u64 = refused
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .expect("a Retry-After");
    assert!((1..=900).contains(&retry), "{retry}");
    assert!(
        refused
            .set_cookie("__Host-eve_chat_oidc")
            .is_some_and(|c| c.contains("Max-Age=0")),
        "the flow cookie is cleared: {:?}",
        refused.headers
    );
    assert_eq!(env.provider.token_requests(), 0);
    // Another address signs in as usual.
    let ok = oidc_sign_in(&env, user("u-1", "eve@example.com"));
    assert!(
        ok.cookie_value(SESSION_COOKIE_NAME).is_some(),
        "{:?}",
        ok.headers
    );
}

#[test]
fn a_huge_oidc_name_keeps_the_session_cookie_under_4_kb() {
    let env = oidc(&[("oidc_allowed_domains", "example.com")]);
    let resp = oidc_sign_in(
        &env,
        NextUser {
            name: Some("Ünïcödé 😀 ".repeat(2000)),
            ..user(&"s".repeat(255), "eve@example.com")
        },
    );
    assert_eq!(resp.status, 303, "{}", resp.body);
    let set_cookie = resp.set_cookie(SESSION_COOKIE_NAME).expect("signed in");
    assert!(set_cookie.len() < 4096, "{} bytes", set_cookie.len());
    let cookie = resp.cookie_value(SESSION_COOKIE_NAME).unwrap();
    let who = viewer(&env.client, &cookie).expect("the cookie works");
    assert_eq!(
        who.name.unwrap().chars().count(),
        eve_auth::oidc::MAX_NAME_CHARS
    );
}

// ------------------------------------------------------------ 2. local-dev serves this machine only

#[test]
fn local_dev_refuses_clients_that_are_not_on_this_machine() {
    let host = host(&vars(&[("auth_mode", "local-dev")]));
    let loopback: IpAddr = "127.0.0.1".parse().unwrap();
    let here = request_from(&host, loopback, "GET", "/api/chats", &[], None);
    assert_eq!(here.status, 200, "{}", here.body);

    let outside = non_loopback_ip();
    // Host names the loopback address, as a port-forward or a same-machine proxy would send.
    for path in ["/api/chats", "/api/setup"] {
        let resp = request_from(&host, outside, "GET", path, &[], None);
        if path == "/api/setup" {
            assert_eq!(resp.status, 200, "setup stays readable: {}", resp.body);
            continue;
        }
        assert_eq!(resp.status, 401, "{outside} → {path}: {}", resp.body);
    }
    let session = request_from(&host, outside, "GET", "/api/auth/session", &[], None);
    assert_eq!(session.json::<SessionResponse>().viewer, None);

    // A reverse proxy on this machine connects from loopback but says whom it forwards for.
    for (name, value) in [
        ("x-forwarded-for", "203.0.113.9"),
        ("x-forwarded-for", "127.0.0.1, 203.0.113.9"),
        ("forwarded", "for=203.0.113.9;proto=https"),
    ] {
        let resp = request_from(
            &host,
            loopback,
            "GET",
            "/api/chats",
            &[(name, value.into())],
            None,
        );
        assert_eq!(resp.status, 401, "{name}: {value}: {}", resp.body);
    }
}

fn run_script_dry(args: &[&str], env: &[(&str, &str)]) -> (String, String) {
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(eve_chat_tests::repo_root().join("scripts/run"))
        .args(args)
        .env("EVE_CHAT_RUN_DRY_RUN", "1");
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("SPIN_VARIABLE_")) {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run scripts/run");
    assert!(out.status.success(), "{out:?}");
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn scripts_run_forces_local_dev_only_when_no_sign_in_is_configured_and_warns_then() {
    let forced = "auth flags: --variable auth_mode=local-dev";
    let (out, err) = run_script_dry(&[], &[]);
    assert_eq!(out.trim(), forced);
    assert!(
        err.contains("WARNING") && err.contains("local-dev"),
        "{err}"
    );
    let (out, _) = run_script_dry(&["--listen", "127.0.0.1:8080"], &[]);
    assert_eq!(out.trim(), forced);

    for args in [
        &["--variable", "chat_password=a long shared passphrase"][..],
        &["--variable=oidc_issuer=https://id.example.com"],
        &["--variable", "oidc_client_id=eve"],
        &["--variable", "auth_mode=password"],
    ] {
        let (out, err) = run_script_dry(args, &[]);
        assert_eq!(out.trim(), "auth flags:", "{args:?}");
        assert!(!err.contains("WARNING"), "{args:?}: {err}");
    }
    for env in [
        ("SPIN_VARIABLE_CHAT_PASSWORD", "a long shared passphrase"),
        ("SPIN_VARIABLE_OIDC_CLIENT_SECRET", "x"),
        ("SPIN_VARIABLE_AUTH_MODE", "oidc"),
    ] {
        let (out, _) = run_script_dry(&[], &[env]);
        assert_eq!(out.trim(), "auth flags:", "{env:?}");
    }
    // Asked for explicitly: not forced, but still warned about.
    let (out, err) = run_script_dry(&["--variable", "auth_mode=local-dev"], &[]);
    assert_eq!(out.trim(), "auth flags:");
    assert!(err.contains("WARNING"), "{err}");
}

/// Issue 32 (9): the agent gets no session secret, so scripts/run passes the key the app used
/// to derive from it as `eve_jwt_secret` (by flag or environment), unless one is given; it
/// never prints the key.
#[test]
fn scripts_run_derives_eve_jwt_secret_from_a_session_secret_unless_one_is_given() {
    let derived = "eve_jwt_secret: derived from session_secret";
    let secret = "a session secret of at least thirty-two characters";
    let flag = format!("session_secret={secret}");
    for (args, env) in [
        (vec!["--variable", flag.as_str()], vec![]),
        (vec![], vec![("SPIN_VARIABLE_SESSION_SECRET", secret)]),
    ] {
        let (out, _) = run_script_dry(&args, &env);
        assert!(out.lines().any(|l| l == derived), "{args:?} {env:?}: {out}");
        assert!(!out.contains(secret));
    }
    for (args, env) in [
        (
            vec![
                "--variable",
                flag.as_str(),
                "--variable=eve_jwt_secret=given",
            ],
            vec![],
        ),
        (
            vec!["--variable", flag.as_str()],
            vec![("SPIN_VARIABLE_EVE_JWT_SECRET", "given")],
        ),
        (vec![], vec![]),
    ] {
        let (out, _) = run_script_dry(&args, &env);
        assert!(!out.contains(derived), "{args:?} {env:?}: {out}");
    }
}

// ------------------------------------------------------------ 3. nobody locks anyone else out

#[test]
fn failures_from_one_address_do_not_lock_out_another_or_the_right_password_from_elsewhere() {
    let host = host(&password_vars());
    let attacker: IpAddr = "127.0.0.2".parse().unwrap();
    let user: IpAddr = "127.0.0.3".parse().unwrap();
    for attempt in 1..=FREE_FAILURES {
        let resp = login_from(&host, attacker, WRONG);
        assert_eq!(resp.status, 401, "attempt {attempt}: {}", resp.body);
    }
    let slowed = login_from(&host, attacker, WRONG);
    assert_eq!(slowed.status, 429, "{}", slowed.body);
    assert!(slowed.header("retry-after").is_some());
    // Someone else, wrong once and then right, is not held up by the attacker.
    assert_eq!(login_from(&host, user, WRONG).status, 401);
    let ok = login_from(&host, user, PASSWORD);
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert!(ok.cookie_value(SESSION_COOKIE_NAME).is_some());
}

#[test]
fn successful_logins_never_count_against_anyone() {
    let host = host(&password_vars());
    let client = Client::of(&host);
    // More than any old per-address or account-wide attempt limit (10 and 100 per window).
    for attempt in 1..=(ACCOUNT_FAILURES_PER_WINDOW + 20) {
        let resp = login_with(&client, PASSWORD, &[]);
        assert_eq!(resp.status, 200, "login {attempt}: {}", resp.body);
    }
}

fn forwarded(ip: &str) -> Vec<(&'static str, String)> {
    vec![("x-forwarded-for", ip.to_string())]
}

#[test]
fn behind_a_trusted_proxy_clients_are_throttled_by_their_forwarded_address() {
    let mut v = password_vars();
    v.push(("trusted_proxies", "127.0.0.1, 10.0.0.0/8".into()));
    let host = host(&v);
    let client = Client::of(&host);
    // The client's own forged hop is ignored; the one the proxies appended counts.
    let a = forwarded("1.1.1.1, 198.51.100.1, 10.0.0.7");
    for _ in 0..FREE_FAILURES {
        assert_eq!(login_with(&client, WRONG, &a).status, 401);
    }
    assert_eq!(login_with(&client, WRONG, &a).status, 429);
    // The same address with another forged prefix is still the same client.
    assert_eq!(
        login_with(&client, PASSWORD, &forwarded("9.9.9.9, 198.51.100.1")).status,
        429
    );
    let b = forwarded("198.51.100.2");
    assert_eq!(login_with(&client, WRONG, &b).status, 401);
    assert_eq!(login_with(&client, PASSWORD, &b).status, 200);
}

#[test]
fn an_untrusted_peers_forwarded_for_is_ignored() {
    let mut v = password_vars();
    v.push(("trusted_proxies", "10.0.0.1".into()));
    let host = host(&v);
    let client = Client::of(&host);
    for i in 0..FREE_FAILURES {
        let resp = login_with(&client, WRONG, &forwarded(&format!("198.51.100.{i}")));
        assert_eq!(resp.status, 401, "{}", resp.body);
    }
    // Rotating X-Forwarded-For does not make the direct peer someone new.
    let resp = login_with(&client, WRONG, &forwarded("203.0.113.200"));
    assert_eq!(resp.status, 429, "{}", resp.body);
}

#[test]
fn a_distributed_guesser_cannot_lock_a_fresh_address_out() {
    let mut v = password_vars();
    v.push(("trusted_proxies", "127.0.0.1".into()));
    let host = host(&v);
    let client = Client::of(&host);
    for i in 0..=ACCOUNT_FAILURES_PER_WINDOW {
        let ip = format!("198.51.{}.{}", 100 + i / 250, 1 + i % 250);
        let resp = login_with(&client, WRONG, &forwarded(&ip));
        assert_eq!(resp.status, 401, "{ip}: {}", resp.body);
    }
    // The account has seen more failures than its window allows: addresses that guessed
    // wrong wait, but a user who has not failed signs in.
    let guesser = login_with(&client, PASSWORD, &forwarded("198.51.100.1"));
    assert_eq!(guesser.status, 429, "{}", guesser.body);
    let fresh = login_with(&client, PASSWORD, &forwarded("203.0.113.77"));
    assert_eq!(fresh.status, 200, "{}", fresh.body);
}

// ------------------------------------------------------------ 4. cookies and logout

fn signed_in(client: &Client) -> String {
    let resp = login_with(client, PASSWORD, &[]);
    assert_eq!(resp.status, 200, "{}", resp.body);
    resp.cookie_value(SESSION_COOKIE_NAME)
        .expect("a session cookie")
}

#[test]
fn the_session_cookie_is_host_prefixed_and_the_unprefixed_name_is_ignored() {
    let host = host(&password_vars());
    let client = Client::of(&host);
    let resp = login_with(&client, PASSWORD, &[]);
    let set = resp.set_cookie(SESSION_COOKIE_NAME).expect("a cookie");
    assert!(set.starts_with("__Host-eve_chat_session="), "{set}");
    for attr in ["; Secure", "; Path=/;", "; HttpOnly"] {
        assert!(set.contains(attr), "{set} lacks {attr}");
    }
    assert!(!set.to_ascii_lowercase().contains("domain="), "{set}");
    let value = resp.cookie_value(SESSION_COOKIE_NAME).unwrap();
    // A cookie without the prefix (which a sibling subdomain or a plain-http attacker could
    // plant) is not a session, even carrying a valid value.
    let planted = client.get(
        "/api/chats",
        &[("cookie", format!("eve_chat_session={value}"))],
    );
    assert_eq!(planted.status, 401, "{}", planted.body);
    assert_eq!(client.get("/api/chats", &cookie_header(&value)).status, 200);
}

#[test]
fn logout_revokes_a_copied_cookie_in_every_component() {
    let host = host(&password_vars());
    let client = Client::of(&host);
    let stolen = signed_in(&client);
    let before = client.get("/eve/v1/session/x-1/stream", &cookie_header(&stolen));
    assert_ne!(before.status, 401, "{}", before.body);
    let out = client.post_json(
        "/api/auth/logout",
        &serde_json::json!({}),
        &cookie_header(&stolen),
    );
    assert_eq!(out.status, 200, "{}", out.body);
    assert!(out
        .set_cookie(SESSION_COOKIE_NAME)
        .is_some_and(|c| c.contains("Max-Age=0")));
    // The copy the attacker kept is dead everywhere.
    assert_eq!(viewer(&client, &stolen), None);
    for (what, resp) in [
        ("chats", client.get("/api/chats", &cookie_header(&stolen))),
        (
            "events",
            client.request(
                "PUT",
                "/api/chats/some-chat/pending",
                &[
                    cookie_header(&stolen),
                    vec![("content-type", "application/json".to_string())],
                ]
                .concat(),
                Some(r#"{"message":"hi"}"#),
            ),
        ),
        (
            "eve-proxy",
            client.get("/eve/v1/session/x-1/stream", &cookie_header(&stolen)),
        ),
    ] {
        assert_eq!(resp.status, 401, "{what}: {}", resp.body);
    }
    // Signing in again (even within the same second) gives a working session.
    let fresh = signed_in(&client);
    assert_eq!(
        viewer(&client, &fresh).map(|v| v.id).as_deref(),
        Some(PASSWORD_PRINCIPAL_ID)
    );
    assert_eq!(viewer(&client, &stolen), None, "the old one stays dead");
}

/// A logout ends the streams its cookie already has open, not only the requests that come
/// after (issue 19, item 11): the proxy asks again every few seconds while it streams.
#[test]
fn logout_ends_a_stream_that_is_already_open() {
    let host = host(&password_vars());
    let client = Client::of(&host);
    let cookie = signed_in(&client);
    let created = client.post_json(
        "/eve/v1/session",
        &serde_json::json!({"message": "hello"}),
        &cookie_header(&cookie),
    );
    assert_eq!(created.status, 202, "{}", created.body);
    let sid = created.json::<serde_json::Value>()["sessionId"]
        .as_str()
        .expect("a session id")
        .to_string();
    let header = format!("{SESSION_COOKIE_NAME}={cookie}");
    // Held open for far longer than the check takes: a stream that outlives the logout
    // reads until this runs out.
    let mut stream = Stream::open_path_for(
        &host,
        &stream_path(&sid, "startIndex=0"),
        &[("cookie", header.as_str())],
        0,
        Duration::from_secs(40),
    );
    stream.until(is_settling);
    let out = client.post_json(
        "/api/auth/logout",
        &serde_json::json!({}),
        &cookie_header(&cookie),
    );
    assert_eq!(out.status, 200, "{}", out.body);
    let after = stream.rest();
    assert!(
        !stream.timed_out,
        "the stream stayed open after logout; it read {} more events",
        after.len()
    );
}

#[test]
fn sign_in_needs_https_outside_loopback() {
    // A configured plain-http base URL that is not loopback: not ready, and login refused.
    let mut v = password_vars();
    v.push(("app_base_url", "http://chat.example.com".into()));
    let h = host(&v);
    let client = Client::of(&h);
    let setup: SetupStatus = client.get("/api/setup", &[]).json();
    assert!(!setup.auth_ready, "{setup:?}");
    assert!(
        setup
            .missing
            .iter()
            .any(|m| m == missing::APP_BASE_URL_NOT_HTTPS),
        "{:?}",
        setup.missing
    );
    assert_eq!(login_with(&client, PASSWORD, &[]).status, 503);

    // No base URL, and the browser came over plain http by a public name.
    let h = host(&password_vars());
    let client = Client::of(&h);
    let public = vec![("host", "chat.example.com".to_string())];
    let setup: SetupStatus = client.get("/api/setup", &public).json();
    assert!(!setup.auth_ready);
    assert_eq!(
        setup.missing.first().map(String::as_str),
        Some(missing::PLAIN_HTTP_REQUEST)
    );
    let resp = login_with(&client, PASSWORD, &public);
    assert_eq!(resp.status, 503, "{}", resp.body);
    assert!(resp.set_cookie(SESSION_COOKIE_NAME).is_none());
    // Loopback http stays usable for local testing.
    let setup: SetupStatus = client.get("/api/setup", &[]).json();
    assert!(setup.auth_ready, "{:?}", setup.missing);
}

#[test]
fn https_deployments_send_hsts() {
    let mut v = password_vars();
    v.push(("app_base_url", "https://chat.example.com".into()));
    let h = host(&v);
    let client = Client::of(&h);
    let resp = client.get("/api/auth/session", &[]);
    assert_eq!(
        resp.header("strict-transport-security"),
        Some(eve_spin_hsts())
    );
    let plain = host(&password_vars());
    let resp = Client::of(&plain).get("/api/auth/session", &[]);
    assert_eq!(resp.header("strict-transport-security"), None);
}

/// The value `eve_spin::auth::HSTS` sends (the tests do not link the wasm-side crate).
fn eve_spin_hsts() -> &'static str {
    "max-age=31536000"
}
