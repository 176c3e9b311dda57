//! Accounts mode through the local host (`docs/accounts.md`): a host with the setup token,
//! people with their own session cookies, and the requests a browser on the app would send.

use std::time::Duration;

use crate::{Host, HostOptions, Response};
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

impl User {
    /// This account's principal, `user:<id>`.
    pub fn principal(&self) -> String {
        format!("user:{}", self.id)
    }

    /// Where an admin manages this account: `/api/admin/users/<id>`.
    pub fn admin_path(&self) -> String {
        format!("/api/admin/users/{}", self.id)
    }

    /// This person's request headers for eve's streams (their cookie).
    pub fn headers(&self) -> Vec<(&str, &str)> {
        vec![("cookie", self.cookie.as_str())]
    }
}

/// The body of a response that must have `status` (`Null` when it has none).
pub fn ok(r: Response, status: u16) -> Value {
    assert_eq!(r.status, status, "{}", r.text());
    if r.body.is_empty() {
        Value::Null
    } else {
        r.json()
    }
}

/// `who` creates an eve session with `body` (202); its id.
pub fn start_session(h: &Host, who: &User, body: &Value) -> String {
    let r = call(h, "POST", "/eve/v1/session", Some(&who.cookie), Some(body));
    ok(r, 202)["sessionId"].as_str().unwrap().to_string()
}

/// [`start_session`], waiting for its turn to settle (at most `timeout`).
pub fn settled_session(h: &Host, who: &User, body: &Value, timeout: Duration) -> String {
    let sid = start_session(h, who, body);
    crate::eve::settled_as(h, &sid, &who.headers(), timeout);
    sid
}

/// `who`'s session running the demo's 30 s tool, read through a following stream that has
/// seen the tool requested.
pub fn running_turn(h: &Host, who: &User) -> (String, crate::eve::Stream) {
    let sid = start_session(h, who, &json!({"message": "wait 30"}));
    let path = crate::eve::stream_path(&sid, "startIndex=0");
    let mut stream = crate::eve::Stream::open_path(h, &path, &who.headers(), 0);
    stream.until_type("actions.requested");
    (sid, stream)
}

/// The admin's change to `user` (`{role?, disabled?}`), as the admin page sends it.
pub fn admin_patch(h: &Host, admin: &User, user: &User, patch: &Value) -> Response {
    call(
        h,
        "PATCH",
        &user.admin_path(),
        Some(&admin.cookie),
        Some(patch),
    )
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

// ------------------------------------------------------------ projects (docs/projects.md)

/// `u`'s new project `name` with `instructions`; its id.
pub fn new_project(h: &Host, u: &User, name: &str, instructions: &str) -> String {
    let body = json!({"name": name, "instructions": instructions});
    let v = ok(
        call(h, "POST", "/api/projects", Some(&u.cookie), Some(&body)),
        201,
    );
    v["project"]["id"].as_str().unwrap().to_string()
}

/// An upload as the web app sends it: the raw bytes, their type, the percent-encoded name.
pub fn upload(
    h: &Host,
    u: &User,
    project: &str,
    name: &str,
    media: &str,
    bytes: &[u8],
) -> Response {
    let origin = h.origin();
    let encoded: String = name
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    let headers = [
        ("origin", origin.as_str()),
        ("sec-fetch-site", "same-origin"),
        ("cookie", u.cookie.as_str()),
        ("content-type", media),
        ("x-file-name", encoded.as_str()),
    ];
    h.send(
        "POST",
        &format!("/api/projects/{project}/files"),
        &headers,
        Some(bytes),
    )
}

/// `u`'s new chat, in `project` when given; its id.
pub fn new_chat(h: &Host, u: &User, project: Option<&str>) -> String {
    let body = json!({ "projectId": project });
    ok(
        call(h, "POST", "/api/chats", Some(&u.cookie), Some(&body)),
        201,
    )["chat"]["id"]
        .as_str()
        .unwrap()
        .to_string()
}
