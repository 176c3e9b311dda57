//! Issue 20, API tokens (`docs/accounts.md`, "Tokens"): the real `auth`, `chats`, `eve-proxy`
//! and `agent` components in the local host with real SQLite. A token is created by a signed-in
//! browser, listed, used as `Authorization: Bearer evc_…` on `/api/*` and `/eve/v1/*` (a turn
//! of the demo model streamed with it), revoked (401 on the next request), expired (the row's
//! expiry moved into the past in the host's database file), refused when it tries to mint
//! another, scoped to its owner (another user's id is 404), void after a mode switch, and
//! re-checked against the OIDC allowlist. eve's own CLI with a token: tests/eve-client/cli-token.

// Shared with tests/tests/auth.rs, which uses more of it.
#[allow(dead_code)]
use crate::oidc_provider;
use crate::support;

use std::path::Path;
use std::time::Duration;

use eve_chat_tests::{eve, Host, HostOptions, Response};
use oidc_provider::{NextUser, Provider, CLIENT_ID, CLIENT_SECRET};
use serde_json::{json, Value};
use support::Client;

const PASSWORD: &str = "correct horse battery staple";
const SECRET: &str = "test-session-secret-0123456789abcdef";
const COOKIE: &str = eve_auth::cookie::SESSION_COOKIE_NAME;

fn start(state: &Path, vars: &[(&str, &str)]) -> Host {
    let mut opts = HostOptions {
        state_dir: Some(state.to_path_buf()),
        ..HostOptions::default()
    }
    .var("session_secret", SECRET)
    .var("demo_pacing_ms", "0")
    .var("chat_send_per_hour", "1000");
    for (k, v) in vars {
        opts = opts.var(k, v);
    }
    Host::start(opts).expect("a host of our own")
}

fn password_host(state: &Path) -> Host {
    start(
        state,
        &[("auth_mode", "password"), ("chat_password", PASSWORD)],
    )
}

fn sqlite(state: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(state.join("sqlite_db.db")).expect("the host's database")
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

/// A request as a browser of this app sends it (same-origin), with `cookie`.
fn as_browser(h: &Host, method: &str, path: &str, cookie: &str, body: Option<&Value>) -> Response {
    let origin = h.origin();
    let body = body.map(|b| b.to_string());
    h.send(
        method,
        path,
        &[
            ("cookie", cookie),
            ("origin", &origin),
            ("sec-fetch-site", "same-origin"),
            ("content-type", "application/json"),
        ],
        body.as_deref().map(str::as_bytes),
    )
}

/// A request as a script sends it: no browser headers, the token in `Authorization`.
fn as_script(h: &Host, method: &str, path: &str, token: &str, body: Option<&Value>) -> Response {
    let auth = bearer(token);
    let body = body.map(|b| b.to_string());
    h.send(
        method,
        path,
        &[
            ("authorization", &auth),
            ("content-type", "application/json"),
        ],
        body.as_deref().map(str::as_bytes),
    )
}

/// Creates a token as the browser with `cookie`: `(token, info)`.
fn create_token(h: &Host, cookie: &str, body: Value) -> (String, Value) {
    let r = as_browser(h, "POST", "/api/tokens", cookie, Some(&body));
    assert_eq!(r.status, 201, "{}", r.text());
    let v = r.json();
    let token = v["token"].as_str().expect("the token").to_string();
    (token, v["info"].clone())
}

fn listed(h: &Host, cookie: &str) -> Vec<Value> {
    let r = as_browser(h, "GET", "/api/tokens", cookie, None);
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["tokens"].as_array().expect("tokens").clone()
}

fn assert_no_cookie(r: &Response, what: &str) {
    assert_eq!(
        r.header("set-cookie"),
        None,
        "{what}: no Set-Cookie to a token"
    );
}

/// 401 in the app's envelope.
fn assert_unauthorized(r: &Response, what: &str) {
    assert_eq!(r.status, 401, "{what}: {}", r.text());
    assert_eq!(r.error_code().as_deref(), Some("unauthorized"), "{what}");
    assert_no_cookie(r, what);
}

/// 401 in eve's error shape (`{"ok":false,"code","error"}`).
fn assert_eve_unauthorized(r: &Response, what: &str) {
    assert_eq!(r.status, 401, "{what}: {}", r.text());
    let (code, _) = eve::error_of(r);
    assert_eq!(code.as_deref(), Some("unauthorized"), "{what}");
    assert_no_cookie(r, what);
}

/// A turn of the demo model through `/eve/v1` with the token: the session id and its events
/// once settled.
fn turn_with_token(h: &Host, token: &str, message: &str) -> (String, Vec<Value>) {
    let r = as_script(
        h,
        "POST",
        "/eve/v1/session",
        token,
        Some(&json!({ "message": message })),
    );
    assert_no_cookie(&r, "create");
    let sid = eve::assert_accepted(&r, None)["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let auth = bearer(token);
    let events = eve::settled_as(
        h,
        &sid,
        &[("authorization", &auth)],
        Duration::from_secs(60),
    );
    (sid, events)
}

fn audit_actions(state: &Path) -> Vec<(String, String)> {
    let db = sqlite(state);
    let mut stmt = db
        .prepare("SELECT action, target FROM audit_log ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn a_token_created_in_password_mode_works_on_the_api_and_eve_until_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join(".spin");
    let h = password_host(&state);
    let cookie = h.password_login(PASSWORD);
    assert!(cookie.starts_with(COOKIE));

    let (token, info) = create_token(&h, &cookie, json!({ "name": "ci runner" }));
    assert!(token.starts_with(&format!("evc_{}_", info["id"].as_str().unwrap())));
    assert_eq!(info["name"], "ci runner");
    assert!(info.get("lastUsedAt").is_none() && info.get("revokedAt").is_none());
    let tokens = listed(&h, &cookie);
    assert_eq!(
        tokens,
        vec![info.clone()],
        "listed as created, never the secret"
    );

    let chats = as_script(&h, "GET", "/api/chats", &token, None);
    assert_eq!(chats.status, 200, "{}", chats.text());
    assert_no_cookie(&chats, "/api/chats");
    let created = as_script(&h, "POST", "/api/chats", &token, Some(&json!({})));
    assert_eq!(created.status, 201, "{}", created.text());
    let session = as_script(&h, "GET", "/api/auth/session", &token, None);
    assert_no_cookie(&session, "/api/auth/session");
    assert_eq!(session.json()["viewer"]["id"], "eve-chat-user");

    let (sid, events) = turn_with_token(&h, &token, "hello");
    let types = eve::types(&events);
    assert!(types.contains(&"message.appended"), "{types:?}");
    assert!(
        listed(&h, &cookie)[0]["lastUsedAt"].is_string(),
        "last use recorded"
    );

    let minted = as_script(
        &h,
        "POST",
        "/api/tokens",
        &token,
        Some(&json!({"name": "x"})),
    );
    assert_eq!(
        minted.status,
        403,
        "a token cannot create tokens: {}",
        minted.text()
    );
    assert_eq!(listed(&h, &cookie).len(), 1, "nothing was created");

    let id = info["id"].as_str().unwrap();
    let path = format!("/api/tokens/{id}");
    let revoked = as_browser(&h, "DELETE", &path, &cookie, None);
    assert_eq!(revoked.status, 204, "{}", revoked.text());
    let again = as_browser(&h, "DELETE", &path, &cookie, None);
    assert_eq!(
        again.status,
        204,
        "revoking is idempotent: {}",
        again.text()
    );
    assert!(listed(&h, &cookie)[0]["revokedAt"].is_string());

    assert_unauthorized(&as_script(&h, "GET", "/api/chats", &token, None), "revoked");
    let stream = eve::stream_path(&sid, "startIndex=0&follow=false");
    assert_eve_unauthorized(&as_script(&h, "GET", &stream, &token, None), "revoked");
    assert_eq!(
        audit_actions(&state),
        vec![
            ("token_created".to_string(), id.to_string()),
            ("token_revoked".to_string(), id.to_string()),
        ],
        "one entry each; the second revoke changed nothing"
    );
}

/// Revoking a token ends the streams it already has open (the proxy asks again every few
/// seconds while it streams, as for a logout).
#[test]
fn revoking_a_token_ends_a_stream_it_has_open() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join(".spin");
    let h = password_host(&state);
    let cookie = h.password_login(PASSWORD);
    let (token, info) = create_token(&h, &cookie, json!({ "name": "streaming" }));
    let (sid, _) = turn_with_token(&h, &token, "hello");
    let auth = bearer(&token);
    // Held open for far longer than the check takes: a stream that outlives the revocation
    // reads until this runs out.
    let mut stream = eve::Stream::open_path_for(
        &h,
        &eve::stream_path(&sid, "startIndex=0"),
        &[("authorization", auth.as_str())],
        0,
        Duration::from_secs(40),
    );
    stream.until(eve::is_settling);
    let path = format!("/api/tokens/{}", info["id"].as_str().unwrap());
    assert_eq!(as_browser(&h, "DELETE", &path, &cookie, None).status, 204);
    let after = stream.rest();
    assert!(
        !stream.timed_out,
        "the stream stayed open after the revocation; it read {} more events",
        after.len()
    );
}

#[test]
fn malformed_unknown_and_expired_tokens_are_401_and_do_not_fall_back_to_the_cookie() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join(".spin");
    let h = password_host(&state);
    let cookie = h.password_login(PASSWORD);
    let (token, info) = create_token(&h, &cookie, json!({ "name": "short", "expiresInDays": 1 }));
    assert_eq!(as_script(&h, "GET", "/api/chats", &token, None).status, 200);

    let unknown = format!("evc_{}_{}", "0".repeat(24), "A".repeat(43));
    let altered = format!(
        "{}{}",
        &token[..token.len() - 1],
        if token.ends_with('A') { "B" } else { "A" }
    );
    let truncated = &token[..token.len() - 1];
    for bad in ["", "nope", "evc_", "evc_x_y", truncated, &unknown, &altered] {
        assert_unauthorized(&as_script(&h, "GET", "/api/chats", bad, None), bad);
        let eve_path = "/eve/v1/session/wrun_x/stream";
        assert_eve_unauthorized(&as_script(&h, "GET", eve_path, bad, None), bad);
        // A valid cookie beside a bad token (`evc_…`) does not rescue it; any other Bearer
        // value is not ours (a gateway's JWT in front of the app) and the cookie decides.
        let auth = bearer(bad);
        let both = h.send(
            "GET",
            "/api/chats",
            &[("authorization", &auth), ("cookie", &cookie)],
            None,
        );
        if bad.starts_with("evc_") {
            assert_unauthorized(&both, "a bad token with a good cookie");
        } else {
            assert_eq!(both.status, 200, "{bad:?} is not a token: {}", both.text());
        }
    }

    let past = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
        - 1;
    let moved = sqlite(&state)
        .execute(
            "UPDATE api_token SET expires_at = ?1 WHERE id = ?2",
            rusqlite::params![past, info["id"].as_str().unwrap()],
        )
        .unwrap();
    assert_eq!(moved, 1);
    assert_unauthorized(&as_script(&h, "GET", "/api/chats", &token, None), "expired");
    let r = as_script(
        &h,
        "POST",
        "/eve/v1/session",
        &token,
        Some(&json!({"message": "hi"})),
    );
    assert_eve_unauthorized(&r, "expired on eve");
}

#[test]
fn token_requests_are_checked_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join(".spin");
    let h = password_host(&state);
    let cookie = h.password_login(PASSWORD);
    for body in [
        json!({ "name": "" }),
        json!({ "name": "x".repeat(101) }),
        json!({ "name": "line\nbreak" }),
        json!({ "name": "ok", "expiresInDays": 0 }),
        json!({ "name": "ok", "expiresInDays": 366 }),
        json!({ "name": "ok", "expiresInDays": "soon" }),
        json!({}),
    ] {
        let r = as_browser(&h, "POST", "/api/tokens", &cookie, Some(&body));
        assert_eq!(r.status, 400, "{body}: {}", r.text());
    }
    let cross = h.send(
        "POST",
        "/api/tokens",
        &[
            ("cookie", &cookie),
            ("origin", "https://evil.example"),
            ("content-type", "application/json"),
        ],
        Some(br#"{"name":"x"}"#),
    );
    assert_eq!(cross.status, 403, "cross-site: {}", cross.text());
    let anonymous = h.send(
        "POST",
        "/api/tokens",
        &[("content-type", "application/json")],
        Some(br#"{"name":"x"}"#),
    );
    assert_eq!(anonymous.status, 401);
    assert!(listed(&h, &cookie).is_empty());
    assert!(audit_actions(&state).is_empty());
    let unknown = as_browser(
        &h,
        "DELETE",
        "/api/tokens/0123456789abcdef01234567",
        &cookie,
        None,
    );
    assert_eq!(unknown.status, 404, "{}", unknown.text());
}

// ---------------------------------------------------------------- OIDC

fn oidc_vars<'a>(provider: &'a Provider, allowed: &'a str) -> Vec<(&'static str, &'a str)> {
    vec![
        ("auth_mode", "oidc"),
        ("oidc_issuer", provider.issuer.as_str()),
        ("oidc_client_id", CLIENT_ID),
        ("oidc_client_secret", CLIENT_SECRET),
        ("oidc_allowed_emails", allowed),
    ]
}

/// Signs `user` in through the local provider: the `Cookie` header value of the session.
fn oidc_sign_in(h: &Host, provider: &Provider, user: NextUser) -> String {
    provider.set_next_user(user);
    let client = Client::of(h);
    let start = client.get("/api/auth/oidc/start?returnTo=/", &[]);
    assert_eq!(start.status, 303, "{}", start.body);
    let flow = start
        .cookie_value("__Host-eve_chat_oidc")
        .expect("a flow cookie");
    let at_provider = client.get_url(start.header("location").unwrap(), &[]);
    assert_eq!(at_provider.status, 302, "{}", at_provider.body);
    let callback = at_provider.header("location").unwrap().to_string();
    let done = client.get_url(
        &callback,
        &[("cookie", format!("__Host-eve_chat_oidc={flow}"))],
    );
    assert_eq!(done.status, 303, "{}", done.body);
    let session = done.cookie_value(COOKIE).expect("a session cookie");
    format!("{COOKIE}={session}")
}

fn user(sub: &str, email: &str) -> NextUser {
    NextUser {
        sub: sub.into(),
        email: Some(email.into()),
        name: Some(sub.into()),
        ..NextUser::default()
    }
}

fn restart(h: Host, state: &Path, vars: &[(&str, &str)]) -> Host {
    drop(h);
    start(state, vars)
}

#[test]
fn oidc_tokens_belong_to_their_user_follow_the_allowlist_and_die_with_a_mode_switch() {
    let provider = Provider::start();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join(".spin");
    let both = "ada@example.com,bob@example.com";
    let h = start(&state, &oidc_vars(&provider, both));
    let ada = oidc_sign_in(&h, &provider, user("ada", "ada@example.com"));
    let bob = oidc_sign_in(&h, &provider, user("bob", "bob@example.com"));
    let (ada_token, ada_info) = create_token(&h, &ada, json!({ "name": "ada's cli" }));
    let (bob_token, _) = create_token(&h, &bob, json!({ "name": "bob's cli" }));

    let viewer =
        as_script(&h, "GET", "/api/auth/session", &ada_token, None).json()["viewer"].clone();
    assert_eq!(viewer["email"], "ada@example.com");
    assert!(viewer["id"].as_str().unwrap().ends_with(":ada"), "{viewer}");
    let chat = as_script(&h, "POST", "/api/chats", &ada_token, Some(&json!({})));
    assert_eq!(chat.status, 201, "{}", chat.text());
    let chat_id = chat.json()["chat"]["id"].as_str().unwrap().to_string();
    let seen = as_script(
        &h,
        "GET",
        &format!("/api/chats/{chat_id}"),
        &bob_token,
        None,
    );
    assert_eq!(seen.status, 404, "bob's token does not reach ada's chat");

    let ada_path = format!("/api/tokens/{}", ada_info["id"].as_str().unwrap());
    let by_bob = as_browser(&h, "DELETE", &ada_path, &bob, None);
    assert_eq!(
        by_bob.status,
        404,
        "another user's token is not found: {}",
        by_bob.text()
    );
    let by_bobs_token = as_script(&h, "DELETE", &ada_path, &bob_token, None);
    assert_eq!(by_bobs_token.status, 404);
    assert_eq!(listed(&h, &bob).len(), 1, "bob sees only his own");
    assert_eq!(
        as_script(&h, "GET", "/api/chats", &ada_token, None).status,
        200
    );

    // Narrowing the allowlist voids ada's token at once, as it does her cookie.
    let h = restart(h, &state, &oidc_vars(&provider, "bob@example.com"));
    assert_unauthorized(
        &as_script(&h, "GET", "/api/chats", &ada_token, None),
        "ada not allowed",
    );
    assert_eq!(
        as_script(&h, "GET", "/api/chats", &bob_token, None).status,
        200
    );

    // A token made under OIDC is void in password mode.
    let h = restart(
        h,
        &state,
        &[("auth_mode", "password"), ("chat_password", PASSWORD)],
    );
    assert_unauthorized(
        &as_script(&h, "GET", "/api/chats", &bob_token, None),
        "mode switch",
    );
}
