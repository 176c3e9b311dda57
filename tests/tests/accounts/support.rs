//! Accounts mode through the local host: a host with the setup token, people with their own
//! session cookies, and the requests a browser on the app would send.

#![allow(dead_code)]

use eve_chat_tests::{Host, HostOptions, Response};
use serde_json::{json, Value};

pub const SECRET: &str = "accounts-session-secret-0123456789abcdef";
pub const SETUP_TOKEN: &str = "the-admin-setup-token-of-this-test";
pub const PASSWORD: &str = "correct horse battery";
pub const COOKIE: &str = eve_auth::cookie::SESSION_COOKIE_NAME;

/// A host in accounts mode with the setup token, open sign-up for `open.example`, the demo
/// model paced at 1 ms, and `extra` variables.
pub fn host(extra: &[(&str, &str)]) -> Option<Host> {
    let mut o = HostOptions::default()
        .var("auth_mode", "accounts")
        .var("session_secret", SECRET)
        .var("admin_setup_token", SETUP_TOKEN)
        .var("signup_allowed_domains", "open.example")
        .var("demo_pacing_ms", "1")
        .var("chat_send_per_hour", "1000");
    for (k, v) in extra {
        o = o.var(k, v);
    }
    Host::start(o)
}

/// A signed-in person: the `Cookie` header value of their session.
#[derive(Clone, Debug)]
pub struct User {
    pub cookie: String,
    pub id: String,
}

/// A same-origin request as the app's pages send it, with `cookie` when given.
pub fn call(
    h: &Host,
    method: &str,
    path: &str,
    cookie: Option<&str>,
    body: Option<&Value>,
) -> Response {
    let origin = h.origin();
    let bytes = body.map(|b| serde_json::to_vec(b).unwrap());
    let mut headers: Vec<(&str, &str)> = vec![
        ("origin", &origin),
        ("sec-fetch-site", "same-origin"),
        ("content-type", "application/json"),
    ];
    if let Some(c) = cookie {
        headers.push(("cookie", c));
    }
    h.send(method, path, &headers, bytes.as_deref())
}

/// The `Cookie` value of the session a response sets.
pub fn session_cookie(r: &Response) -> String {
    let set = r
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("set-cookie"))
        .map(|(_, v)| v.as_str())
        .find(|v| v.starts_with(&format!("{COOKIE}=")) && !v.contains("Max-Age=0"))
        .unwrap_or_else(|| panic!("no session cookie: {} {}", r.status, r.text()));
    set.split(';').next().unwrap().to_string()
}

fn user_of(r: &Response) -> User {
    let v = r.json();
    let principal = v["viewer"]["id"].as_str().expect("a viewer").to_string();
    User {
        cookie: session_cookie(r),
        id: principal
            .strip_prefix("user:")
            .expect("an account principal")
            .to_string(),
    }
}

/// `POST /api/auth/signup` with `body` (any answer).
pub fn signup(h: &Host, body: Value) -> Response {
    call(h, "POST", "/api/auth/signup", None, Some(&body))
}

/// Signs up successfully; the new user.
pub fn signed_up(h: &Host, body: Value) -> User {
    let r = signup(h, body);
    assert_eq!(r.status, 201, "{}", r.text());
    user_of(&r)
}

/// The first admin, made with the setup token.
pub fn bootstrap(h: &Host) -> User {
    signed_up(
        h,
        json!({"email": "boss@example.com", "password": PASSWORD, "setupToken": SETUP_TOKEN}),
    )
}

/// `POST /api/auth/login` (any answer).
pub fn login(h: &Host, email: &str, password: &str) -> Response {
    call(
        h,
        "POST",
        "/api/auth/login",
        None,
        Some(&json!({"email": email, "password": password})),
    )
}

/// Signs in successfully.
pub fn signed_in(h: &Host, email: &str, password: &str) -> User {
    let r = login(h, email, password);
    assert_eq!(r.status, 200, "{}", r.text());
    user_of(&r)
}

/// An invitation's token, made by `admin`.
pub fn invite(h: &Host, admin: &User, role: &str, email: Option<&str>) -> String {
    let body = match email {
        Some(e) => json!({"role": role, "email": e}),
        None => json!({"role": role}),
    };
    let r = call(
        h,
        "POST",
        "/api/admin/invites",
        Some(&admin.cookie),
        Some(&body),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    r.json()["token"].as_str().unwrap().to_string()
}

/// A member invited by `admin`, signed up.
pub fn member(h: &Host, admin: &User, email: &str) -> User {
    let token = invite(h, admin, "member", None);
    signed_up(
        h,
        json!({"email": email, "password": PASSWORD, "inviteToken": token}),
    )
}

/// The viewer of a cookie (`None`: signed out).
pub fn viewer(h: &Host, cookie: &str) -> Option<String> {
    let r = call(h, "GET", "/api/auth/session", Some(cookie), None);
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["viewer"]["id"].as_str().map(str::to_string)
}

/// The host's SQLite database.
pub fn database(h: &Host) -> rusqlite::Connection {
    let path = h.state_dir().expect("own host").join("sqlite_db.db");
    rusqlite::Connection::open(path).expect("the host's database")
}

/// `SELECT count(*)` of `sql` with `param`.
pub fn count(h: &Host, sql: &str, param: &str) -> i64 {
    database(h)
        .query_row(sql, [param], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The error code of an app error body.
pub fn code(r: &Response) -> String {
    r.error_code()
        .unwrap_or_else(|| panic!("no error code: {} {}", r.status, r.text()))
}
