//! Attacks on accounts mode (issue 20): a member on every admin route, forged and replayed
//! invitations, account enumeration through login answers, brute force against the argon2
//! login (the throttle holds, and a refused attempt costs no hashing), and an admin trying
//! to read someone else's chat through any route.

use eve_auth::throttle::FREE_FAILURES;
use eve_chat_tests::accounts::*;
use eve_chat_tests::Host;
use serde_json::json;

/// Every admin route with a body that would be accepted from an admin.
fn admin_routes(target: &str) -> Vec<(&'static str, String, Option<serde_json::Value>)> {
    vec![
        ("GET", "/api/admin/users".into(), None),
        ("GET", "/api/admin/users?q=a".into(), None),
        (
            "PATCH",
            format!("/api/admin/users/{target}"),
            Some(json!({"role": "admin"})),
        ),
        ("DELETE", format!("/api/admin/users/{target}"), None),
        ("POST", format!("/api/admin/users/{target}/reset"), None),
        (
            "POST",
            "/api/admin/invites".into(),
            Some(json!({"role": "admin"})),
        ),
        ("GET", "/api/admin/invites".into(), None),
        ("DELETE", "/api/admin/invites/x".into(), None),
        ("GET", "/api/admin/audit".into(), None),
        ("GET", "/api/admin/usage?days=7".into(), None),
        ("GET", format!("/api/admin/users/{target}/usage"), None),
        (
            "PUT",
            format!("/api/admin/users/{target}/quota"),
            Some(json!({"tokensPerDay": 1, "storageBytes": 1})),
        ),
        ("GET", "/api/admin/models".into(), None),
        (
            "PUT",
            "/api/admin/models".into(),
            Some(json!({"memberModels": ["demo/eve-demo"]})),
        ),
    ]
}

#[test]
fn a_member_and_a_stranger_reach_no_admin_route() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    for (method, path, body) in admin_routes(&m.id) {
        let r = call(&h, method, &path, Some(&m.cookie), body.as_ref());
        assert_eq!(
            (r.status, code(&r)),
            (403, "forbidden".into()),
            "{method} {path}"
        );
        let r = call(&h, method, &path, None, body.as_ref());
        assert_eq!(r.status, 401, "{method} {path} signed out");
    }
    let me = call(&h, "GET", "/api/auth/account", Some(&m.cookie), None).json();
    assert_eq!(me["role"], "member", "nothing changed");
    assert_eq!(
        count(&h, "SELECT count(*) FROM account_invite WHERE ?1 = ?1", "x"),
        1
    );
    // A forged cookie naming the admin's principal is not a session.
    let forged = format!("{COOKIE}=user%3A{}", admin.id);
    assert_eq!(
        call(&h, "GET", "/api/admin/users", Some(&forged), None).status,
        401
    );
}

/// `POST /api/tokens` with `who`'s cookie: the new token.
fn new_token(h: &Host, who: &User) -> String {
    let r = call(
        h,
        "POST",
        "/api/tokens",
        Some(&who.cookie),
        Some(&json!({"name": "script"})),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    r.json()["token"].as_str().unwrap().to_string()
}

/// A script's request with an API token (no cookie, no Origin).
fn with_token(
    h: &Host,
    token: &str,
    method: &str,
    path: &str,
    body: Option<&serde_json::Value>,
) -> eve_chat_tests::Response {
    let authorization = format!("Bearer {token}");
    let bytes = body.map(|b| serde_json::to_vec(b).unwrap());
    let headers = [
        ("authorization", authorization.as_str()),
        ("content-type", "application/json"),
    ];
    h.send(method, path, &headers, bytes.as_deref())
}

/// Issue 32: a leaked admin token must not become a lasting account (a second admin, a reset
/// link for a browser session): it reads the admin routes and changes nothing there; a new
/// password revokes every token of the account.
#[test]
fn an_admin_token_changes_nothing_at_admin_and_a_new_password_revokes_tokens() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    let token = new_token(&h, &admin);
    assert_eq!(
        with_token(&h, &token, "GET", "/api/admin/users", None).status,
        200
    );
    let invites = "SELECT count(*) FROM account_invite WHERE ?1 = ?1";
    let before = count(&h, invites, "x");
    for (method, path, body) in admin_routes(&m.id) {
        if method == "GET" {
            continue;
        }
        let r = with_token(&h, &token, method, &path, body.as_ref());
        assert_eq!(
            (r.status, code(&r)),
            (403, "forbidden".into()),
            "{method} {path}"
        );
    }
    let r = with_token(&h, &token, "POST", "/api/admin/users/x/reset", None);
    assert_eq!(r.status, 403, "{}", r.text());
    assert_eq!(count(&h, invites, "x"), before, "no invitation made");
    let resets = "SELECT count(*) FROM account_reset WHERE ?1 = ?1";
    assert_eq!(count(&h, resets, "x"), 0, "no reset link made");
    let me = call(&h, "GET", "/api/auth/account", Some(&m.cookie), None).json();
    assert_eq!(me["role"], "member", "nothing changed");

    let changed = call(
        &h,
        "POST",
        "/api/auth/password",
        Some(&admin.cookie),
        Some(&json!({"currentPassword": PASSWORD, "newPassword": "a new password"})),
    );
    assert_eq!(changed.status, 204, "{}", changed.text());
    let r = with_token(&h, &token, "GET", "/api/admin/users", None);
    assert_eq!(r.status, 401, "a password change revokes the tokens");

    // A reset link ends the account's tokens as well.
    let members_token = new_token(&h, &m);
    let fresh = session_cookie(&changed);
    let link = call(
        &h,
        "POST",
        &format!("{}/reset", m.admin_path()),
        Some(&fresh),
        None,
    );
    assert_eq!(link.status, 200, "{}", link.text());
    let reset = json!({"token": link.json()["token"], "newPassword": "reset password!"});
    let r = call(&h, "POST", "/api/auth/reset", None, Some(&reset));
    assert_eq!(r.status, 200, "{}", r.text());
    let r = with_token(&h, &members_token, "GET", "/api/chats", None);
    assert_eq!(r.status, 401, "a reset revokes the tokens");
}

#[test]
fn forged_expired_and_replayed_invitations_create_nothing() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let token = invite(&h, &admin, "admin", None);
    let forged = signup(
        &h,
        json!({"email": "x@team.example", "password": PASSWORD, "inviteToken": format!("{token}x")}),
    );
    assert_eq!(
        (forged.status, code(&forged)),
        (404, "invite_invalid".into())
    );
    // Two sign-ups race with one invitation: exactly one account.
    let statuses: Vec<u16> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|i| {
                let (h, token) = (&h, &token);
                s.spawn(move || signup(h, json!({"email": format!("r{i}@team.example"), "password": PASSWORD, "inviteToken": token})).status)
            })
            .collect();
        hs.into_iter().map(|t| t.join().unwrap()).collect()
    });
    assert_eq!(
        statuses.iter().filter(|s| **s == 201).count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        count(&h, "SELECT count(*) FROM account WHERE role = ?1", "admin"),
        2
    );
    // A revoked invitation is as dead as a used one.
    let revoked = invite(&h, &admin, "member", None);
    let list = call(&h, "GET", "/api/admin/invites", Some(&admin.cookie), None).json();
    let id = list["invites"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(
        call(
            &h,
            "DELETE",
            &format!("/api/admin/invites/{id}"),
            Some(&admin.cookie),
            None
        )
        .status,
        204
    );
    let r = signup(
        &h,
        json!({"email": "late@team.example", "password": PASSWORD, "inviteToken": revoked}),
    );
    assert_eq!(r.status, 404, "{}", r.text());
    assert_eq!(
        count(
            &h,
            "SELECT count(*) FROM account WHERE email = ?1",
            "late@team.example"
        ),
        0
    );
}

#[test]
fn login_answers_do_not_tell_which_accounts_exist() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    let d = admin_patch(&h, &admin, &m, &json!({"disabled": true}));
    assert_eq!(d.status, 200);
    let answers = [
        login(&h, "nobody@team.example", PASSWORD),
        login(&h, "boss@example.com", "a wrong password"),
        login(&h, "m@team.example", PASSWORD),
        login(&h, "not-an-email", PASSWORD),
    ];
    for r in &answers {
        assert_eq!(r.status, 401);
        assert_eq!(r.text(), answers[0].text(), "one body for every failure");
        assert_eq!(code(r), "invalid_credentials");
    }
}

/// Failed logins from one address until the throttle answers 429.
fn fail_until_throttled(h: &Host) -> u64 {
    for attempt in 1..=FREE_FAILURES + 5 {
        let r = login(h, "boss@example.com", "not the password!");
        if r.status == 429 {
            return attempt;
        }
        assert_eq!(r.status, 401, "{}", r.text());
    }
    panic!("no 429 after {} failures", FREE_FAILURES + 5)
}

#[test]
fn brute_force_is_throttled_and_refused_attempts_cost_no_hashing() {
    let Some(h) = host(&[]) else { return };
    bootstrap(&h);
    let first_refusal = fail_until_throttled(&h);
    assert!(first_refusal <= FREE_FAILURES + 1, "{first_refusal}");
    // Refused attempts are answered before any password is hashed: even the right password
    // is refused, and the refusals are cheap (every one answers 429 without an audit entry
    // of a checked password).
    let checked_before = count(
        &h,
        "SELECT count(*) FROM audit_log WHERE action = ?1",
        "signin_failed",
    );
    for _ in 0..20 {
        let r = login(&h, "boss@example.com", PASSWORD);
        assert_eq!(r.status, 429, "{}", r.text());
        assert!(r.header("retry-after").is_some());
    }
    let checked_after = count(
        &h,
        "SELECT count(*) FROM audit_log WHERE action = ?1",
        "signin_failed",
    );
    assert_eq!(
        checked_before, checked_after,
        "no password was checked while refused"
    );
    assert_eq!(
        count(
            &h,
            "SELECT count(*) FROM audit_log WHERE action = ?1",
            "signin"
        ),
        0
    );
}

#[test]
fn an_admin_cannot_read_someone_elses_chat_through_any_route() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    let chat = call(
        &h,
        "POST",
        "/api/chats",
        Some(&m.cookie),
        Some(&json!({"pendingUserMessage": "my secret plans"})),
    );
    assert_eq!(chat.status, 201, "{}", chat.text());
    let chat_id = chat.json()["chat"]["id"].as_str().unwrap().to_string();
    let sid = start_session(&h, &m, &json!({"message": "count to 3"}));
    let paths = [
        format!("/api/chats/{chat_id}"),
        format!("/api/chats/{chat_id}/export"),
        format!("/eve/v1/session/{sid}/stream?startIndex=0&follow=false"),
    ];
    for path in &paths {
        let r = call(&h, "GET", path, Some(&admin.cookie), None);
        assert!(
            matches!(r.status, 403 | 404),
            "{path}: {} {}",
            r.status,
            r.text()
        );
        assert!(!r.text().contains("secret plans"), "{path}");
    }
    let list = call(&h, "GET", "/api/chats", Some(&admin.cookie), None);
    assert!(!list.text().contains(&chat_id));
    for path in ["/api/admin/users", "/api/admin/audit", "/api/admin/invites"] {
        let r = call(&h, "GET", path, Some(&admin.cookie), None);
        assert_eq!(r.status, 200, "{path}");
        assert!(
            !r.text().contains("secret plans") && !r.text().contains(&sid),
            "{path}"
        );
    }
}
