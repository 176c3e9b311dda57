//! The admin's usage, quota and model routes end to end in accounts mode (issue 20,
//! docs/accounts.md): a member's turn shows in `/api/admin/usage`; a quota the admin sets
//! refuses the member's next turn (429) and a storage override the chat log's writes (413);
//! the member models the admin picks are all a member is offered and may ask for (403), also
//! as its default model; members and members' API tokens reach no admin route, an admin's
//! token does; disabling drops the account's queued messages; `lastActiveAt` follows activity
//! without a write per request. Real components in the local host, real SQLite.

use std::time::Duration;

use eve_chat_tests::accounts::*;
use eve_chat_tests::eve;
use eve_chat_tests::{Host, Response};
use serde_json::{json, Value};

const SETTLE: Duration = Duration::from_secs(30);
const TWO_MODELS: &str = r#"[{"provider":"demo","model":"one"},{"provider":"demo","model":"two"}]"#;

/// A member's new session with `body`, settled; its id.
fn settled_turn(h: &Host, m: &User, body: Value) -> String {
    settled_session(h, m, &body, SETTLE)
}

fn admin_get(h: &Host, admin: &User, path: &str) -> Value {
    ok(call(h, "GET", path, Some(&admin.cookie), None), 200)
}

fn put(h: &Host, who: &User, path: &str, body: Value) -> Response {
    call(h, "PUT", path, Some(&who.cookie), Some(&body))
}

fn audit_actions(h: &Host, admin: &User) -> Vec<String> {
    admin_get(h, admin, "/api/admin/audit")["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["action"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn a_members_turn_shows_in_the_admins_usage() {
    let Some(h) = host(&[("quota_tokens_per_day", "100000")]) else {
        return;
    };
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    settled_turn(&h, &m, json!({"message": "weather in Paris"}));
    let usage = admin_get(&h, &admin, "/api/admin/usage?days=7");
    let principal = m.principal();
    let row = usage["users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["principal"] == principal.as_str())
        .unwrap_or_else(|| panic!("{usage}"))
        .clone();
    assert_eq!(row["email"], "m@team.example");
    assert!(row["tokensIn"].as_u64().unwrap() > 0, "{row}");
    assert!(row["tokensOut"].as_u64().unwrap() > 0, "{row}");
    assert!(row["lastActiveAt"].is_string(), "{row}");
    assert_eq!(
        row["quota"],
        json!({"tokensPerDay": null, "storageBytes": null})
    );
    assert_eq!(
        usage["defaults"],
        json!({"tokensPerDay": 100000, "storageBytes": 1073741824})
    );
    let days = usage["days"].as_array().unwrap();
    assert_eq!(days.len(), 7);
    assert!(days[6]["tokensOut"].as_u64().unwrap() > 0, "today last");
    let mine = admin_get(&h, &admin, &format!("/api/admin/users/{}/usage", m.id));
    let day = &mine["days"][0];
    assert_eq!(day["model"], "demo/eve-demo", "{mine}");
    assert!(day["calls"].as_u64().unwrap() >= 1);
    assert_eq!(day["tokensIn"], row["tokensIn"]);
    for (path, status) in [
        ("/api/admin/usage?days=0".to_string(), 400),
        ("/api/admin/usage?days=367".to_string(), 400),
        ("/api/admin/usage?days=x".to_string(), 400),
        ("/api/admin/users/nobody/usage".to_string(), 404),
        (format!("/api/admin/users/{}/usage?days=-1", m.id), 400),
    ] {
        let r = call(&h, "GET", &path, Some(&admin.cookie), None);
        assert_eq!(r.status, status, "{path}: {}", r.text());
    }
}

#[test]
fn a_quota_set_by_the_admin_refuses_the_members_next_turn_and_null_lifts_it() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    let sid = settled_turn(&h, &m, json!({"message": "hello"}));
    let path = format!("/api/admin/users/{}/quota", m.id);
    for bad in [
        json!({"tokensPerDay": 0}),
        json!({"tokensPerDay": -5}),
        json!({"storageBytes": "lots"}),
    ] {
        assert_eq!(put(&h, &admin, &path, bad.clone()).status, 400, "{bad}");
    }
    let r = put(
        &h,
        &admin,
        "/api/admin/users/nobody/quota",
        json!({"tokensPerDay": 1}),
    );
    assert_eq!(r.status, 404, "{}", r.text());
    assert_eq!(
        count(
            &h,
            "SELECT count(*) FROM principal_quota WHERE ?1 = ?1",
            "x"
        ),
        0,
        "refusals wrote nothing"
    );
    let r = put(
        &h,
        &admin,
        &path,
        json!({"tokensPerDay": 1, "storageBytes": null}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json(), json!({"tokensPerDay": 1, "storageBytes": null}));
    assert!(audit_actions(&h, &admin).contains(&"quota_updated".to_string()));
    let send = |body: Value| {
        call(
            &h,
            "POST",
            &format!("/eve/v1/session/{sid}"),
            Some(&m.cookie),
            Some(&body),
        )
    };
    let r = send(json!({"message": "again"}));
    eve::refused(&r, 429, "quota_exceeded");
    assert!(
        eve::error_of(&r).1.contains("1 tokens per day"),
        "{}",
        r.text()
    );
    let r = call(
        &h,
        "POST",
        "/eve/v1/session",
        Some(&m.cookie),
        Some(&json!({"message": "new"})),
    );
    eve::refused(&r, 429, "quota_exceeded");
    let row = admin_get(&h, &admin, "/api/admin/usage")["users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["email"] == "m@team.example")
        .cloned()
        .unwrap();
    assert_eq!(row["quota"]["tokensPerDay"], 1);
    let r = put(
        &h,
        &admin,
        &path,
        json!({"tokensPerDay": null, "storageBytes": null}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(send(json!({"message": "again"})).status, 202);
}

/// One chat-log append of `m` (the events component).
fn append(h: &Host, m: &User, chat: &str, index: u64) -> Response {
    let event = json!({
        "type": "message.appended",
        "data": {"messageDelta": "y".repeat(900)},
        "meta": {"id": format!("evt_{index}")},
    });
    call(
        h,
        "POST",
        &format!("/api/chats/{chat}/events"),
        Some(&m.cookie),
        Some(&json!({"events": [{"eventIndex": index, "event": event}]})),
    )
}

#[test]
fn a_storage_override_lets_and_refuses_the_members_chat_log_writes() {
    let Some(h) = host(&[("principal_max_bytes", "2500")]) else {
        return;
    };
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    let chat = call(&h, "POST", "/api/chats", Some(&m.cookie), Some(&json!({})));
    assert_eq!(chat.status, 201, "{}", chat.text());
    let chat = chat.json()["chat"]["id"].as_str().unwrap().to_string();
    for i in 0..2 {
        assert_eq!(append(&h, &m, &chat, i).status, 200);
    }
    let r = append(&h, &m, &chat, 2);
    assert_eq!(r.status, 413, "the default holds: {}", r.text());
    let path = format!("/api/admin/users/{}/quota", m.id);
    let r = put(&h, &admin, &path, json!({"storageBytes": 1_000_000}));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(append(&h, &m, &chat, 2).status, 200, "the override lets it");
    let r = put(&h, &admin, &path, json!({"storageBytes": 100}));
    assert_eq!(r.status, 200, "{}", r.text());
    let r = append(&h, &m, &chat, 3);
    assert_eq!(r.status, 413, "the override refuses it: {}", r.text());
    assert!(r.text().contains("storage is full"), "{}", r.text());
}

fn offered(h: &Host, who: &User) -> Vec<String> {
    eve::offered_models(&call(h, "GET", "/eve/v1/info", Some(&who.cookie), None))
}

#[test]
fn the_member_models_the_admin_picks_are_all_a_member_is_offered_and_may_use() {
    let Some(h) = host(&[("llm_models", TWO_MODELS)]) else {
        return;
    };
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    let all = admin_get(&h, &admin, "/api/admin/models");
    assert_eq!(all["memberModels"], Value::Null);
    assert_eq!(
        all["models"],
        json!([{"id": "demo/one", "label": "one"}, {"id": "demo/two", "label": "two"}])
    );
    for bad in [
        json!({"memberModels": ["demo/three"]}),
        json!({"memberModels": []}),
        json!({"models": null}),
    ] {
        let r = put(&h, &admin, "/api/admin/models", bad.clone());
        assert_eq!(r.status, 400, "{bad}: {}", r.text());
    }
    assert_eq!(
        admin_get(&h, &admin, "/api/admin/models")["memberModels"],
        Value::Null
    );
    let r = put(
        &h,
        &admin,
        "/api/admin/models",
        json!({"memberModels": ["demo/two", "demo/two"]}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["memberModels"], json!(["demo/two"]));
    assert!(audit_actions(&h, &admin).contains(&"models_updated".to_string()));

    assert_eq!(offered(&h, &m), ["demo/two"]);
    assert_eq!(offered(&h, &admin), ["demo/one", "demo/two"]);
    let r = call(
        &h,
        "POST",
        "/eve/v1/session",
        Some(&m.cookie),
        Some(&json!({"message": "hi", "model": "demo/one"})),
    );
    eve::refused(&r, 403, "model_not_allowed");
    settled_turn(&h, &m, json!({"message": "hi", "model": "demo/two"}));

    // The default model of the member's settings: allowed, not allowed, unknown.
    let patch = |who: &User, model: &str| {
        call(
            &h,
            "PATCH",
            "/api/auth/account",
            Some(&who.cookie),
            Some(&json!({"defaultModel": model})),
        )
    };
    assert_eq!(patch(&m, "demo/two").status, 200);
    let r = patch(&m, "demo/one");
    assert_eq!((r.status, code(&r)), (403, "model_not_allowed".into()));
    assert_eq!(patch(&m, "demo/nope").status, 400);
    let me = call(&h, "GET", "/api/auth/account", Some(&m.cookie), None).json();
    assert_eq!(me["defaultModel"], "demo/two", "refusals changed nothing");
    assert_eq!(
        patch(&admin, "demo/one").status,
        200,
        "admins use every model"
    );

    let r = put(
        &h,
        &admin,
        "/api/admin/models",
        json!({"memberModels": null}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(offered(&h, &m), ["demo/one", "demo/two"]);
    assert_eq!(patch(&m, "demo/one").status, 200);
}

/// The routes this suite adds, with bodies an admin would have accepted.
fn usage_routes(target: &str) -> Vec<(&'static str, String, Option<Value>)> {
    vec![
        ("GET", "/api/admin/usage".into(), None),
        ("GET", format!("/api/admin/users/{target}/usage"), None),
        (
            "PUT",
            format!("/api/admin/users/{target}/quota"),
            Some(json!({"tokensPerDay": 1})),
        ),
        ("GET", "/api/admin/models".into(), None),
        (
            "PUT",
            "/api/admin/models".into(),
            Some(json!({"memberModels": ["demo/eve-demo"]})),
        ),
    ]
}

fn bearer(h: &Host, token: &str, method: &str, path: &str, body: Option<&Value>) -> Response {
    let auth = format!("Bearer {token}");
    let bytes = body.map(|b| serde_json::to_vec(b).unwrap());
    h.send(
        method,
        path,
        &[
            ("authorization", &auth),
            ("content-type", "application/json"),
        ],
        bytes.as_deref(),
    )
}

fn token_of(h: &Host, who: &User) -> String {
    let r = call(
        h,
        "POST",
        "/api/tokens",
        Some(&who.cookie),
        Some(&json!({"name": "cli"})),
    );
    assert_eq!(r.status, 201, "{}", r.text());
    r.json()["token"].as_str().unwrap().to_string()
}

#[test]
fn members_and_their_tokens_reach_no_usage_route_and_an_admins_token_does() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    let member_token = token_of(&h, &m);
    let admin_token = token_of(&h, &admin);
    for (method, path, body) in usage_routes(&m.id) {
        let r = call(&h, method, &path, Some(&m.cookie), body.as_ref());
        assert_eq!(
            (r.status, code(&r)),
            (403, "forbidden".into()),
            "{method} {path}"
        );
        let r = bearer(&h, &member_token, method, &path, body.as_ref());
        assert_eq!(
            r.status,
            403,
            "a member's token: {method} {path}: {}",
            r.text()
        );
        let r = call(&h, method, &path, None, body.as_ref());
        assert_eq!(r.status, 401, "no one: {method} {path}");
    }
    assert_eq!(
        count(
            &h,
            "SELECT count(*) FROM principal_quota WHERE ?1 = ?1",
            "x"
        ),
        0
    );
    assert_eq!(
        count(
            &h,
            "SELECT count(*) FROM deployment_setting WHERE key = ?1",
            "member_models"
        ),
        0
    );
    // An admin's token reads the usage routes; changing anything needs a browser session
    // (issue 32, finding 2: a leaked token must not become a lasting account change).
    for (method, path, body) in usage_routes(&m.id) {
        let r = bearer(&h, &admin_token, method, &path, body.as_ref());
        let expected = if method == "GET" { 200 } else { 403 };
        assert_eq!(
            r.status,
            expected,
            "an admin's token: {method} {path}: {}",
            r.text()
        );
    }
}

#[test]
fn disabling_drops_the_members_queued_message() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    let (sid, _stream) = running_turn(&h, &m);
    let queued = call(
        &h,
        "POST",
        &format!("/eve/v1/session/{sid}"),
        Some(&m.cookie),
        Some(&json!({"message": "queued behind the running turn"})),
    );
    assert_eq!(queued.status, 202, "{}", queued.text());
    assert_eq!(
        count(
            &h,
            "SELECT count(*) FROM eve_inbox WHERE session_id = ?1",
            &sid
        ),
        1
    );
    let r = admin_patch(&h, &admin, &m, &json!({"disabled": true}));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        count(
            &h,
            "SELECT count(*) FROM eve_inbox WHERE session_id = ?1",
            &sid
        ),
        0,
        "the queued message is dropped"
    );
    let r = admin_patch(&h, &admin, &m, &json!({"disabled": false}));
    assert_eq!(r.status, 200, "{}", r.text());
    let events = eve::settled_as(&h, &sid, &m.headers(), SETTLE);
    let types = eve::types(&events);
    assert!(types.contains(&"turn.cancelled"), "{types:?}");
    assert_eq!(
        types.iter().filter(|t| **t == "turn.started").count(),
        1,
        "the queued message never ran: {types:?}"
    );
}

fn last_active(h: &Host, id: &str) -> Option<i64> {
    database(h)
        .query_row(
            "SELECT last_active_at FROM account WHERE id = ?1",
            [id],
            |r| r.get(0),
        )
        .unwrap()
}

/// Sets the time activity of `principal` was last recorded (the key-value marker).
fn recorded_at(h: &Host, principal: &str, secs: u64) {
    let path = h.state_dir().expect("own host").join("sqlite_key_value.db");
    let kv = rusqlite::Connection::open(path).unwrap();
    kv.busy_timeout(Duration::from_secs(10)).unwrap();
    let changed = kv
        .execute(
            "UPDATE spin_key_value SET value = ?1 WHERE store = 'default' AND key = ?2",
            rusqlite::params![
                secs.to_string().into_bytes(),
                format!("account:active:{principal}")
            ],
        )
        .unwrap();
    assert_eq!(changed, 1, "the marker of {principal}");
}

#[test]
fn last_active_follows_activity_at_most_once_an_hour() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    let chats = |m: &User| call(&h, "GET", "/api/chats", Some(&m.cookie), None).status;
    assert_eq!(chats(&m), 200);
    let first = last_active(&h, &m.id).expect("recorded");
    database(&h)
        .execute(
            "UPDATE account SET last_active_at = 1000 WHERE id = ?1",
            [&m.id],
        )
        .unwrap();
    assert_eq!(chats(&m), 200);
    assert_eq!(
        last_active(&h, &m.id),
        Some(1000),
        "not written on every request"
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    recorded_at(&h, &m.principal(), now - 3601);
    assert_eq!(chats(&m), 200);
    let again = last_active(&h, &m.id).expect("recorded");
    assert!(
        again > 1000 && again >= first,
        "an hour later it is written again: {again}, first {first}"
    );
    let users = admin_get(&h, &admin, "/api/admin/users");
    let listed = users["users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["id"] == m.id.as_str())
        .cloned()
        .unwrap();
    assert!(listed["lastActiveAt"].is_string(), "{listed}");
}
