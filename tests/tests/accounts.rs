//! Accounts mode end to end (issue 20, docs/accounts.md): the first admin with the setup
//! token, invitations, open sign-up, sign-in, password change and reset links, settings,
//! disabling (mid-stream: the stream ends, the next request is 401, the running turn is
//! cancelled), deleting everything of an account, and the last-admin guard. Real components
//! in the local host, real SQLite.

use std::time::Duration;

use eve_api::auth::SetupStatus;
use eve_chat_tests::accounts::*;
use eve_chat_tests::eve;
use eve_chat_tests::Host;
use serde_json::{json, Value};

fn setup(h: &Host) -> SetupStatus {
    serde_json::from_value(h.get("/api/setup").json()).unwrap()
}

#[test]
fn the_setup_token_makes_the_first_admin_once() {
    let Some(h) = host(&[]) else { return };
    let s = setup(&h);
    assert!(s.accounts_need_admin && s.app_ready, "{s:?}");
    let wrong = signup(
        &h,
        json!({"email": "a@example.com", "password": PASSWORD, "setupToken": "guess"}),
    );
    assert_eq!(wrong.status, 403, "{}", wrong.text());
    let admin = bootstrap(&h);
    assert_eq!(
        viewer(&h, &admin.cookie),
        Some(format!("user:{}", admin.id))
    );
    let me = call(&h, "GET", "/api/auth/account", Some(&admin.cookie), None).json();
    assert_eq!(me["role"], "admin");
    assert!(!setup(&h).accounts_need_admin);
    let again = signup(
        &h,
        json!({"email": "second@example.com", "password": PASSWORD, "setupToken": SETUP_TOKEN}),
    );
    assert_eq!(again.status, 403, "{}", again.text());
    assert_eq!(
        count(&h, "SELECT count(*) FROM account WHERE role = ?1", "admin"),
        1
    );
}

#[test]
fn without_a_setup_token_setup_says_what_is_missing() {
    let Some(h) = host(&[("admin_setup_token", "")]) else {
        return;
    };
    let s = setup(&h);
    assert!(s.accounts_need_admin && !s.auth_ready);
    assert!(
        s.missing.iter().any(|m| m.starts_with("admin_setup_token")),
        "{s:?}"
    );
}

#[test]
fn racing_setup_sign_ups_make_exactly_one_admin() {
    let Some(h) = host(&[]) else { return };
    let statuses: Vec<u16> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..6)
            .map(|i| {
                let h = &h;
                s.spawn(move || {
                    signup(
                        h,
                        json!({"email": format!("racer{i}@example.com"), "password": PASSWORD, "setupToken": SETUP_TOKEN}),
                    )
                    .status
                })
            })
            .collect();
        handles.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(
        statuses.iter().filter(|s| **s == 201).count(),
        1,
        "{statuses:?}"
    );
    assert!(
        statuses.iter().all(|s| *s == 201 || *s == 403),
        "{statuses:?}"
    );
    assert_eq!(
        count(&h, "SELECT count(*) FROM account WHERE ?1 = ?1", "x"),
        1
    );
}

#[test]
fn an_invite_signs_up_once_and_its_member_signs_in() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let token = invite(&h, &admin, "member", Some("ann@team.example"));
    // Issue 32: the token goes in a POST body; the old query form is no route any more, so
    // no access log of the app (or a proxy in front of it) holds a working invitation.
    let by_query = call(
        &h,
        "GET",
        &format!("/api/auth/invite?token={token}"),
        None,
        None,
    );
    assert_eq!(by_query.status, 405, "{}", by_query.text());
    assert!(!by_query.text().contains("member"), "{}", by_query.text());
    let info = call(
        &h,
        "POST",
        "/api/auth/invite",
        None,
        Some(&json!({ "token": token })),
    );
    assert_eq!(info.status, 200, "{}", info.text());
    assert_eq!(info.json()["role"], "member");
    assert_eq!(info.json()["email"], "ann@team.example");
    let other = signup(
        &h,
        json!({"email": "eve@team.example", "password": PASSWORD, "inviteToken": token}),
    );
    assert_eq!(
        other.status,
        403,
        "bound to another address: {}",
        other.text()
    );
    let ann = signed_up(
        &h,
        json!({"email": "Ann@Team.example", "password": PASSWORD, "inviteToken": token, "displayName": "Ann"}),
    );
    let replay = signup(
        &h,
        json!({"email": "bob@team.example", "password": PASSWORD, "inviteToken": token}),
    );
    assert_eq!(
        (replay.status, code(&replay)),
        (404, "invite_invalid".into())
    );
    let gone = call(
        &h,
        "POST",
        "/api/auth/invite",
        None,
        Some(&json!({ "token": token })),
    );
    assert_eq!(gone.status, 404);
    let again = signed_in(&h, "ann@team.example", PASSWORD);
    assert_eq!(again.id, ann.id);
    let me = call(&h, "GET", "/api/auth/account", Some(&again.cookie), None).json();
    assert_eq!(
        (me["role"].as_str(), me["displayName"].as_str()),
        (Some("member"), Some("Ann"))
    );
    let listed = call(&h, "GET", "/api/admin/invites", Some(&admin.cookie), None).json();
    assert!(listed["invites"][0]["usedAt"].is_string(), "{listed}");
    assert!(
        !listed.to_string().contains(&token),
        "tokens are never listed"
    );
}

#[test]
fn open_sign_up_is_for_the_listed_domains_only() {
    let Some(h) = host(&[]) else { return };
    let _admin = bootstrap(&h);
    let open = signed_up(
        &h,
        json!({"email": "cy@open.example", "password": PASSWORD}),
    );
    let me = call(&h, "GET", "/api/auth/account", Some(&open.cookie), None).json();
    assert_eq!(me["role"], "member");
    let closed = signup(
        &h,
        json!({"email": "cy@closed.example", "password": PASSWORD}),
    );
    assert_eq!(
        (closed.status, code(&closed)),
        (403, "signup_closed".into())
    );
    let short = signup(&h, json!({"email": "dd@open.example", "password": "short"}));
    assert_eq!(short.status, 400);
}

#[test]
fn a_password_change_ends_the_other_sessions() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    let other = signed_in(&h, "m@team.example", PASSWORD);
    let wrong = call(
        &h,
        "POST",
        "/api/auth/password",
        Some(&m.cookie),
        Some(&json!({"currentPassword": "not it at all", "newPassword": "a new password"})),
    );
    assert_eq!(wrong.status, 401);
    let r = call(
        &h,
        "POST",
        "/api/auth/password",
        Some(&m.cookie),
        Some(&json!({"currentPassword": PASSWORD, "newPassword": "a new password"})),
    );
    assert_eq!(r.status, 204, "{}", r.text());
    let fresh = session_cookie(&r);
    assert_eq!(viewer(&h, &other.cookie), None, "the other session ended");
    assert_eq!(
        viewer(&h, &m.cookie),
        None,
        "the old cookie of this browser too"
    );
    assert_eq!(
        viewer(&h, &fresh),
        Some(m.principal()),
        "this browser stays"
    );
    assert_eq!(login(&h, "m@team.example", PASSWORD).status, 401);
    signed_in(&h, "m@team.example", "a new password");
}

#[test]
fn a_reset_link_works_once() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    let link = call(
        &h,
        "POST",
        &format!("/api/admin/users/{}/reset", m.id),
        Some(&admin.cookie),
        None,
    );
    assert_eq!(link.status, 200, "{}", link.text());
    let link = link.json();
    assert!(
        link["url"].as_str().unwrap().contains("/reset#token="),
        "{link}"
    );
    let token = link["token"].as_str().unwrap();
    let r = call(
        &h,
        "POST",
        "/api/auth/reset",
        None,
        Some(&json!({"token": token, "newPassword": "reset password!"})),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(viewer(&h, &session_cookie(&r)), Some(m.principal()));
    assert_eq!(viewer(&h, &m.cookie), None, "older sessions end");
    let again = call(
        &h,
        "POST",
        "/api/auth/reset",
        None,
        Some(&json!({"token": token, "newPassword": "another password"})),
    );
    assert_eq!(again.status, 404, "{}", again.text());
    signed_in(&h, "m@team.example", "reset password!");
}

#[test]
fn settings_are_read_and_changed_and_bad_ones_refused() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let patch = |body: Value| {
        call(
            &h,
            "PATCH",
            "/api/auth/account",
            Some(&admin.cookie),
            Some(&body),
        )
    };
    let r = patch(
        json!({"displayName": "The Boss", "language": "zh-CN", "defaultModel": "demo/eve-demo"}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(
        (
            v["displayName"].as_str(),
            v["language"].as_str(),
            v["defaultModel"].as_str()
        ),
        (Some("The Boss"), Some("zh-CN"), Some("demo/eve-demo"))
    );
    for bad in [
        json!({"language": "fr"}),
        json!({"displayName": "x".repeat(101)}),
        json!({"defaultModel": "nope"}),
        json!({"role": "admin"}),
        json!({"displayName": "a\u{1}"}),
    ] {
        let r = patch(bad.clone());
        assert_eq!(r.status, 400, "{bad}: {}", r.text());
    }
    let v = call(&h, "GET", "/api/auth/account", Some(&admin.cookie), None).json();
    assert_eq!(
        v["displayName"], "The Boss",
        "refused changes changed nothing"
    );
    assert_eq!(call(&h, "GET", "/api/auth/account", None, None).status, 401);
}

/// Issue 32 (8): the account row is what every request is decided from. Until then a disable
/// was the SQL write and then a key-value flag that requests checked, so a failed key-value
/// write left an account disabled in the database and working everywhere. Here the database
/// alone says disabled (exactly that state: no flag was ever written) and the account's
/// cookie and API token stop at their next request; the row alone enables it again.
#[test]
fn the_account_row_alone_decides_a_disable_for_cookies_and_tokens() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    let created = ok(
        call(
            &h,
            "POST",
            "/api/tokens",
            Some(&m.cookie),
            Some(&json!({"name": "cli", "expiresInDays": 1})),
        ),
        201,
    );
    let bearer = format!("Bearer {}", created["token"].as_str().unwrap());
    let with_cookie = || call(&h, "GET", "/api/chats", Some(&m.cookie), None).status;
    let with_token = || {
        h.send(
            "GET",
            "/api/chats",
            &[("authorization", bearer.as_str())],
            None,
        )
        .status
    };
    assert_eq!((with_cookie(), with_token()), (200, 200));

    let set_disabled = |disabled: i64| {
        let changed = database(&h)
            .execute(
                "UPDATE account SET disabled = ?1 WHERE id = ?2",
                rusqlite::params![disabled, m.id],
            )
            .unwrap();
        assert_eq!(changed, 1);
    };
    set_disabled(1);
    assert_eq!((with_cookie(), with_token()), (401, 401));
    let stream = call(
        &h,
        "POST",
        "/eve/v1/session",
        Some(&m.cookie),
        Some(&json!({})),
    );
    assert_eq!(stream.status, 401, "the proxy too: {}", stream.text());
    set_disabled(0);
    assert_eq!((with_cookie(), with_token()), (200, 200));
}

#[test]
fn disabling_mid_stream_ends_the_stream_refuses_the_next_request_and_cancels_the_turn() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    let (sid, mut stream) = running_turn(&h, &m);
    let r = admin_patch(&h, &admin, &m, &json!({"disabled": true}));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["disabled"], true);
    // The stream ends (the proxy's sign-in re-check) without the turn's end reaching it.
    let rest = stream.rest();
    assert!(!stream.timed_out, "the stream ended");
    assert!(
        rest.iter().all(|e| e["type"] != "turn.completed"),
        "{rest:?}"
    );
    assert_eq!(
        call(&h, "GET", "/api/chats", Some(&m.cookie), None).status,
        401
    );
    assert_eq!(viewer(&h, &m.cookie), None);
    assert_eq!(login(&h, "m@team.example", PASSWORD).status, 401);
    // Enabled again, the same cookie reads the session: its turn was cancelled.
    let r = admin_patch(&h, &admin, &m, &json!({"disabled": false}));
    assert_eq!(r.status, 200, "{}", r.text());
    let events = eve::settled_as(&h, &sid, &m.headers(), Duration::from_secs(20));
    assert!(
        eve::types(&events).contains(&"turn.cancelled"),
        "{:?}",
        eve::types(&events)
    );
}

#[test]
fn deleting_an_account_removes_everything_of_it() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    let chat = call(&h, "POST", "/api/chats", Some(&m.cookie), Some(&json!({})));
    assert_eq!(chat.status, 201, "{}", chat.text());
    let body = json!({"message": "count to 3"});
    let sid = settled_session(&h, &m, &body, Duration::from_secs(20));
    let project = call(
        &h,
        "POST",
        "/api/projects",
        Some(&m.cookie),
        Some(&json!({"name": "Audit"})),
    );
    assert_eq!(project.status, 201, "{}", project.text());
    let project = project.json()["project"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let origin = h.origin();
    let uploaded = h.send(
        "POST",
        &format!("/api/projects/{project}/files"),
        &[
            ("origin", origin.as_str()),
            ("sec-fetch-site", "same-origin"),
            ("cookie", m.cookie.as_str()),
            ("content-type", "text/csv"),
            ("x-file-name", "data.csv"),
        ],
        Some(b"a,b\n1,2\n"),
    );
    assert_eq!(uploaded.status, 201, "{}", uploaded.text());
    let p = m.principal();
    assert!(
        count(
            &h,
            "SELECT count(*) FROM eve_session WHERE principal = ?1",
            &p
        ) > 0
    );
    let r = call(&h, "DELETE", &m.admin_path(), Some(&admin.cookie), None);
    assert_eq!(r.status, 204, "{}", r.text());
    for (table, filter) in [
        ("chat", "owner = ?1"),
        ("eve_session", "principal = ?1"),
        (
            "eve_event",
            "session_id IN (SELECT id FROM eve_session WHERE principal = ?1)",
        ),
        ("eve_attachment", "principal = ?1"),
        ("project", "principal = ?1"),
        ("project_file", "principal = ?1"),
        ("agent_memory", "principal = ?1"),
        ("api_token", "principal = ?1"),
        ("usage_daily", "principal = ?1"),
        (
            "storage_usage",
            "scope IN ('principal:' || ?1, 'attachments:' || ?1)",
        ),
        ("account", "'user:' || id = ?1"),
    ] {
        assert_eq!(
            count(
                &h,
                &format!("SELECT count(*) FROM {table} WHERE {filter}"),
                &p
            ),
            0,
            "{table}"
        );
    }
    assert_eq!(
        count(
            &h,
            "SELECT count(*) FROM eve_event WHERE session_id = ?1",
            &sid
        ),
        0
    );
    assert_eq!(viewer(&h, &m.cookie), None);
    assert_eq!(login(&h, "m@team.example", PASSWORD).status, 401);
    let again = call(&h, "DELETE", &m.admin_path(), Some(&admin.cookie), None);
    assert_eq!(again.status, 204, "idempotent");
    let audit = call(&h, "GET", "/api/admin/audit", Some(&admin.cookie), None).json();
    let actions: Vec<&str> = audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["action"].as_str())
        .collect();
    for a in ["user_deleted", "invite_created", "signup"] {
        assert!(actions.contains(&a), "{a}: {actions:?}");
    }
}

#[test]
fn the_last_enabled_admin_is_guarded() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let path = format!("/api/admin/users/{}", admin.id);
    for body in [json!({"role": "member"}), json!({"disabled": true})] {
        let r = call(&h, "PATCH", &path, Some(&admin.cookie), Some(&body));
        assert_eq!((r.status, code(&r)), (409, "last_admin".into()), "{body}");
    }
    let r = call(&h, "DELETE", &path, Some(&admin.cookie), None);
    assert_eq!((r.status, code(&r)), (409, "last_admin".into()));
    assert_eq!(
        viewer(&h, &admin.cookie),
        Some(format!("user:{}", admin.id)),
        "still in"
    );
    // With a second admin the first may step down, and then has no admin routes.
    let token = invite(&h, &admin, "admin", None);
    let second = signed_up(
        &h,
        json!({"email": "two@team.example", "password": PASSWORD, "inviteToken": token}),
    );
    let r = call(
        &h,
        "PATCH",
        &path,
        Some(&second.cookie),
        Some(&json!({"role": "member"})),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let r = call(&h, "GET", "/api/admin/users", Some(&admin.cookie), None);
    assert_eq!(r.status, 403, "the role is read on every request");
    let users = call(
        &h,
        "GET",
        "/api/admin/users?q=two",
        Some(&second.cookie),
        None,
    )
    .json();
    assert_eq!(users["users"].as_array().unwrap().len(), 1, "{users}");
}
