//! Issue 12, "data and quotas": the real `chats`, `events`, `eve-proxy` and `agent` components
//! in the local host with real SQLite, attacked where data outlives or leaks from its chat and
//! where one client could fill the store.
//!
//! - two clients interleaved on one chat lose nothing (writes carry their base; 409 on a stale one)
//! - deleting a chat deletes its agent session, events, inbox and tool outputs (rows checked)
//! - a deleted chat id cannot be created again to inherit anything
//! - a client-chosen id taken by another principal reveals nothing
//! - byte caps per chat and per principal (413, nothing written), event-write rate (429)
//! - a principal at its byte cap starts no agent turn (413, nothing stored); streams still read
//! - a refused message can be un-marked pending, so no page load sends it later

use eve_chat_tests::{eve, Host, HostOptions, Response};
use serde_json::{json, Value};

fn create(h: &Host, body: Value) -> String {
    let r = h.json("POST", "/api/chats", &body);
    assert_eq!(r.status, 201, "{}", r.text());
    r.json()["chat"]["id"].as_str().unwrap().to_string()
}

fn chat(h: &Host, id: &str) -> Value {
    let r = h.get(&format!("/api/chats/{id}"));
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

fn events(h: &Host, id: &str) -> Vec<Value> {
    chat(h, id)["events"].as_array().unwrap().clone()
}

fn append(h: &Host, id: &str, base: Option<u64>, pairs: &[(u64, Value)]) -> Response {
    let events: Vec<Value> = pairs
        .iter()
        .map(|(i, e)| json!({ "eventIndex": i, "event": e }))
        .collect();
    let mut body = json!({ "events": events });
    if let Some(b) = base {
        body["baseLength"] = json!(b);
    }
    h.json("POST", &format!("/api/chats/{id}/events"), &body)
}

fn snapshot(h: &Host, id: &str, base: Option<u64>, events: &[Value]) -> Response {
    let mut body = json!({ "events": events });
    if let Some(b) = base {
        body["baseLength"] = json!(b);
    }
    h.json("PUT", &format!("/api/chats/{id}/snapshot"), &body)
}

fn ev(tab: &str, n: u64) -> Value {
    json!({ "type": "message.appended", "data": { "messageDelta": format!("{tab}{n}") }, "meta": { "id": format!("evt_{tab}_{n}") } })
}

fn sqlite(h: &Host) -> rusqlite::Connection {
    let path = h.state_dir().expect("own host").join("sqlite_db.db");
    rusqlite::Connection::open(path).expect("the host's database")
}

fn rows(db: &rusqlite::Connection, sql: &str, param: &str) -> i64 {
    db.query_row(sql, [param], |r| r.get(0)).unwrap()
}

/// Tab B reads the chat after a 409 and puts back what it has that the log lacks (by `meta.id`),
/// as the web app does.
fn merge(stored: &[Value], mine: &[Value]) -> Vec<Value> {
    let mut out = stored.to_vec();
    for e in mine {
        if !stored.iter().any(|s| s["meta"]["id"] == e["meta"]["id"]) {
            out.push(e.clone());
        }
    }
    out
}

// ------------------------------------------------------------------ item 11: stale writes

#[test]
fn two_clients_interleaved_on_one_chat_lose_nothing() {
    let h = Host::shared();
    let id = create(&h, json!({}));
    let first = [ev("s", 0), ev("s", 1)];
    assert_eq!(snapshot(&h, &id, Some(0), &first).status, 200);
    // Both tabs load the chat: two events.
    let loaded = events(&h, &id);
    assert_eq!(loaded.len(), 2);

    // Tab A's turn: appended as it streams, then the snapshot.
    let a = [ev("a", 2), ev("a", 3), ev("a", 4)];
    let r = append(&h, &id, Some(2), &[(2, a[0].clone()), (3, a[1].clone())]);
    assert_eq!(r.status, 200, "{}", r.text());
    // Tab B, still on the two events it loaded, starts its own turn in between.
    let b = [ev("b", 2), ev("b", 3)];
    let r = append(&h, &id, Some(2), &[(2, b[0].clone())]);
    assert_eq!(
        r.status,
        409,
        "B's append would overwrite A's slot 2: {}",
        r.text()
    );
    assert_eq!(r.error_code().as_deref(), Some("conflict"));
    assert_eq!(r.json()["currentLength"], 4);
    let r = append(&h, &id, Some(4), &[(4, a[2].clone())]);
    assert_eq!(r.status, 200, "{}", r.text());
    let a_log: Vec<Value> = loaded.iter().chain(a.iter()).cloned().collect();
    assert_eq!(snapshot(&h, &id, Some(5), &a_log).status, 200);

    // B's snapshot is built on two events: refused whole, the log unchanged.
    let b_log: Vec<Value> = loaded.iter().chain(b.iter()).cloned().collect();
    let r = snapshot(&h, &id, Some(2), &b_log);
    assert_eq!(r.status, 409, "{}", r.text());
    assert_eq!(r.json()["currentLength"], 5);
    assert_eq!(events(&h, &id), a_log, "a refused snapshot writes nothing");

    // B recovers: re-read, re-apply its own events, write on the new base.
    let merged = merge(&events(&h, &id), &b_log);
    let r = snapshot(&h, &id, Some(5), &merged);
    assert_eq!(r.status, 200, "{}", r.text());
    let end = events(&h, &id);
    for e in a_log.iter().chain(b.iter()) {
        assert!(end.contains(e), "lost {e}: {end:?}");
    }
    assert_eq!(end.len(), 7);

    // An identical retry of a batch that landed is not a conflict.
    let r = append(
        &h,
        &id,
        Some(5),
        &[(5, end[5].clone()), (6, end[6].clone())],
    );
    assert_eq!(r.status, 200, "{}", r.text());
    // Bad bases are a 400 and change nothing.
    let r = h.json(
        "PUT",
        &format!("/api/chats/{id}/events/7?baseLength=-1"),
        &ev("x", 7),
    );
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(events(&h, &id), end);
}

// ------------------------------------------------------------ item 12: delete everything

#[test]
fn deleting_a_chat_deletes_its_agent_session_events_and_tool_outputs() {
    let Some(h) = Host::start(HostOptions::default().var("demo_pacing_ms", "0")) else {
        return;
    };
    let id = create(&h, json!({}));
    // A real turn on the agent; the chat stores its session the way the web app does.
    let sid = eve::start(&h, "hello");
    let turn = eve::read_until_settled(&h, &sid, 0);
    assert!(!turn.is_empty());
    let r = h.json(
        "PUT",
        &format!("/api/chats/{id}/session"),
        &json!({ "session": { "sessionId": sid, "streamIndex": turn.len() } }),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(snapshot(&h, &id, None, &turn).status, 200);
    let db = sqlite(&h);
    // A tool output kept aside (the agent stores large outputs there) and an unread message.
    db.execute(
        "INSERT INTO agent_tool_output (session_id, tool_call_id, output, created_at) VALUES (?1, 'call_1', 'big output', 1)",
        [&sid],
    )
    .unwrap();
    db.execute(
        "INSERT INTO eve_inbox (session_id, seq, kind, delivery_id, body, created_at) VALUES (?1, 99, 'message', 'd', '{}', 1)",
        [&sid],
    )
    .unwrap();
    assert!(
        rows(
            &db,
            "SELECT count(*) FROM eve_event WHERE session_id = ?1",
            &sid
        ) > 0
    );
    // Counted (migration 0005) before the delete, given back after it.
    let principal_bytes = |db: &rusqlite::Connection| {
        db.query_row(
            "SELECT coalesce(sum(bytes), 0) FROM storage_usage WHERE scope LIKE 'principal:%'",
            [],
            |r| r.get::<_, i64>(0),
        )
    };
    let before_delete = principal_bytes(&db);

    let r = h.send(
        "DELETE",
        &format!("/api/chats/{id}"),
        &[("origin", h.origin().as_str())],
        None,
    );
    assert_eq!(r.status, 204, "{}", r.text());

    for (table, col) in [
        ("eve_session", "id"),
        ("eve_event", "session_id"),
        ("eve_inbox", "session_id"),
        ("agent_tool_output", "session_id"),
    ] {
        let sql = format!("SELECT count(*) FROM {table} WHERE {col} = ?1");
        assert_eq!(
            rows(&db, &sql, &sid),
            0,
            "{table} still holds the deleted chat's session"
        );
    }
    for table in ["chat", "chat_search"] {
        let col = if table == "chat" { "id" } else { "chat_id" };
        let sql = format!("SELECT count(*) FROM {table} WHERE {col} = ?1");
        assert_eq!(rows(&db, &sql, &id), 0, "{table}");
    }
    assert_eq!(
        rows(
            &db,
            "SELECT count(*) FROM chat_event WHERE chat_id = ?1",
            &id
        ),
        0
    );
    assert!(*before_delete.as_ref().unwrap() > 0, "{before_delete:?}");
    assert_eq!(
        principal_bytes(&db).unwrap(),
        0,
        "the principal's storage is given back"
    );
    assert_eq!(
        rows(
            &db,
            "SELECT count(*) FROM chat_agent_session WHERE session_id = ?1",
            &sid
        ),
        0
    );
    // The agent no longer knows the session.
    let r = h.get(&eve::stream_path(&sid, "startIndex=0&follow=false"));
    assert_eq!(r.status, 404, "{}", r.text());
}

#[test]
fn a_deleted_chat_id_cannot_be_created_again_to_inherit_old_events() {
    let h = Host::shared();
    let key = format!("reuse-{}", std::process::id());
    let id = create(&h, json!({ "id": key }));
    assert_eq!(append(&h, &id, None, &[(0, ev("old", 0))]).status, 200);
    let r = h.send(
        "DELETE",
        &format!("/api/chats/{id}"),
        &[("origin", h.origin().as_str())],
        None,
    );
    assert_eq!(r.status, 204);
    // An append of the old chat still in flight finds nothing.
    assert_eq!(append(&h, &id, None, &[(1, ev("late", 1))]).status, 404);
    // The same client id again: refused, nothing of the old chat comes back.
    let r = h.json("POST", "/api/chats", &json!({ "id": key }));
    assert_eq!(r.status, 409, "{}", r.text());
    assert!(r.text().contains("deleted"), "{}", r.text());
    assert_eq!(h.get(&format!("/api/chats/{id}")).status, 404);
    // A fresh chat starts empty.
    let fresh = create(&h, json!({ "id": format!("{key}-2") }));
    assert_ne!(fresh, id);
    assert_eq!(events(&h, &fresh), Vec::<Value>::new());
}

// ---------------------------------------------------- item 14: a taken id reveals nothing

const SECRET: &str = "a-session-secret-of-at-least-32-characters";
const PASSWORD: &str = "correct horse battery staple";

#[test]
fn a_client_chat_id_taken_by_another_principal_reveals_nothing() {
    let Some(mut dev) = Host::start(HostOptions::default()) else {
        return;
    };
    let theirs = create(
        &dev,
        json!({ "id": "shared-name", "pendingUserMessage": "secret" }),
    );
    dev.stop();
    let other = dev.on_same_state_in_password_mode(SECRET, PASSWORD);
    let cookie = other.password_login(PASSWORD);
    let origin = other.origin();
    let post = |body: Value| {
        other.send(
            "POST",
            "/api/chats",
            &[
                ("cookie", cookie.as_str()),
                ("origin", origin.as_str()),
                ("content-type", "application/json"),
            ],
            Some(&serde_json::to_vec(&body).unwrap()),
        )
    };
    // The id the first principal uses, and one nobody uses: the same answer.
    let taken = post(json!({ "id": "shared-name" }));
    let free = post(json!({ "id": "never-used-name" }));
    assert_eq!(taken.status, 201, "{}", taken.text());
    assert_eq!(free.status, 201, "{}", free.text());
    let mine = taken.json()["chat"]["id"].as_str().unwrap().to_string();
    assert_ne!(mine, theirs, "a chat of its own, not the other's");
    assert_eq!(taken.json()["chat"]["title"], "New chat");
    // And the first principal's chat is untouched.
    drop(other);
    dev.restart();
    assert_eq!(chat(&dev, &theirs)["pendingUserMessage"], "secret");
}

// ------------------------------------------------------------------- item 9: storage quotas

#[test]
fn a_write_over_the_chat_byte_cap_is_413_and_writes_nothing() {
    let Some(h) = Host::start(HostOptions::default().var("chat_max_bytes", "4000")) else {
        return;
    };
    let id = create(&h, json!({}));
    let big = |n: u64| json!({ "type": "message.appended", "data": { "messageDelta": "x".repeat(900) }, "meta": { "id": format!("evt_{n}") } });
    let r = append(&h, &id, Some(0), &[(0, big(0)), (1, big(1)), (2, big(2))]);
    assert_eq!(r.status, 200, "{}", r.text());
    let before = events(&h, &id);
    let r = append(&h, &id, Some(3), &[(3, big(3)), (4, big(4))]);
    assert_eq!(r.status, 413, "{}", r.text());
    assert_eq!(r.error_code().as_deref(), Some("payload_too_large"));
    assert!(r.text().contains("chat is full"), "{}", r.text());
    assert_eq!(
        events(&h, &id),
        before,
        "nothing of the refused batch is written"
    );
    // The snapshot that grows it is refused the same way; one that does not grow it passes.
    let grown: Vec<Value> = (0..5).map(big).collect();
    assert_eq!(snapshot(&h, &id, Some(3), &grown).status, 413);
    assert_eq!(events(&h, &id), before);
    assert_eq!(snapshot(&h, &id, Some(3), &before).status, 200);
    // Another chat of the same principal still has room.
    let other = create(&h, json!({}));
    assert_eq!(append(&h, &other, Some(0), &[(0, big(0))]).status, 200);
}

#[test]
fn a_principal_over_its_byte_cap_across_chats_is_413() {
    let Some(h) = Host::start(
        HostOptions::default()
            .var("chat_max_bytes", "100000")
            .var("principal_max_bytes", "5000"),
    ) else {
        return;
    };
    let big = |n: u64| json!({ "type": "message.appended", "data": { "messageDelta": "y".repeat(900) }, "meta": { "id": format!("evt_{n}") } });
    let one = create(&h, json!({}));
    let two = create(&h, json!({}));
    assert_eq!(
        append(&h, &one, None, &[(0, big(0)), (1, big(1))]).status,
        200
    );
    assert_eq!(
        append(&h, &two, None, &[(0, big(0)), (1, big(1))]).status,
        200
    );
    let r = append(&h, &two, None, &[(2, big(2)), (3, big(3))]);
    assert_eq!(r.status, 413, "{}", r.text());
    assert!(r.text().contains("storage is full"), "{}", r.text());
    assert_eq!(events(&h, &two).len(), 2);
    // Deleting a chat frees its bytes.
    let r = h.send(
        "DELETE",
        &format!("/api/chats/{one}"),
        &[("origin", h.origin().as_str())],
        None,
    );
    assert_eq!(r.status, 204);
    assert_eq!(
        append(&h, &two, None, &[(2, big(2)), (3, big(3))]).status,
        200
    );
}

#[test]
fn a_principal_at_its_byte_cap_starts_no_agent_turn_until_a_chat_is_deleted() {
    // A demo turn stores some 18 KB of events: two fit, with room for the chat to fill.
    const CAP: i64 = 80_000;
    let Some(h) = Host::start(
        HostOptions::default()
            .var("demo_pacing_ms", "0")
            .var("chat_max_bytes", "1000000")
            .var("principal_max_bytes", &CAP.to_string()),
    ) else {
        return;
    };
    let db = sqlite(&h);
    let used = |db: &rusqlite::Connection| -> i64 {
        db.query_row(
            "SELECT coalesce(sum(bytes), 0) FROM storage_usage WHERE scope LIKE 'principal:%'",
            [],
            |r| r.get(0),
        )
        .unwrap()
    };
    let count = |db: &rusqlite::Connection, table: &str| -> i64 {
        db.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .unwrap()
    };
    let sid = eve::start(&h, "hello");
    let first = eve::read_until_settled(&h, &sid, 0);
    assert!(used(&db) > 0, "the agent's events are counted");
    // Chat writes fill the rest: the chat store lets the total reach the cap, never pass it.
    let big = |n: u64| json!({ "type": "message.appended", "data": { "messageDelta": "z".repeat(900) }, "meta": { "id": format!("evt_{n}") } });
    let chat_id = create(&h, json!({}));
    let mut n = 0;
    while append(&h, &chat_id, Some(n), &[(n, big(n))]).status == 200 {
        n += 1;
        assert!(n < 200, "the principal cap never refused a chat write");
    }
    assert!(n > 0);
    // One more turn, started below the cap, is not cut when it crosses it.
    if used(&db) < CAP {
        eve::send_message(&h, &sid, "one more");
        let more = eve::read_until_settled(&h, &sid, first.len() as u64);
        assert!(!more.is_empty());
    }
    assert!(used(&db) >= CAP, "{} < {CAP}", used(&db));

    let log = h.get(&eve::stream_path(&sid, "startIndex=0&follow=false"));
    assert_eq!(log.status, 200, "{}", log.text());
    let before = eve::parse_ndjson(&log.text());
    let (sessions, inbox) = (count(&db, "eve_session"), count(&db, "eve_inbox"));
    let refused = [
        h.json("POST", "/eve/v1/session", &json!({ "message": "new" })),
        eve::send(&h, &sid, &json!({ "message": "next" })),
        // An answer resumes a turn: refused too (before it is matched to a question).
        eve::send(
            &h,
            &sid,
            &json!({ "inputResponses": [{ "requestId": "req_1", "optionId": "yes" }] }),
        ),
    ];
    for r in refused {
        assert_eq!(r.status, 413, "{}", r.text());
        let (code, error) = eve::error_of(&r);
        assert_eq!(code.as_deref(), Some("storage_full"));
        assert!(error.contains("storage is full"), "{error}");
    }
    assert_eq!(count(&db, "eve_session"), sessions, "no session row");
    assert_eq!(count(&db, "eve_inbox"), inbox, "no inbox row");
    // Reading and the controls still work.
    let r = h.get(&eve::stream_path(&sid, "startIndex=0&follow=false"));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(eve::parse_ndjson(&r.text()), before);
    eve::assert_control_accepted(&eve::control(&h, &sid, "cancel"), &sid);

    // Deleting the chat frees its bytes; the agent takes messages again.
    let r = h.send(
        "DELETE",
        &format!("/api/chats/{chat_id}"),
        &[("origin", h.origin().as_str())],
        None,
    );
    assert_eq!(r.status, 204, "{}", r.text());
    assert!(used(&db) < CAP, "{} after the delete", used(&db));
    eve::send_message(&h, &sid, "after the delete");
    let after = eve::read_until_settled(&h, &sid, before.len() as u64);
    assert!(!after.is_empty());
}

#[test]
fn event_writes_over_the_rate_are_429_with_retry_after() {
    let Some(h) = Host::start(HostOptions::default().var("chat_event_writes_per_minute", "5"))
    else {
        return;
    };
    let id = create(&h, json!({}));
    let mut statuses = Vec::new();
    for n in 0..12u64 {
        let r = h.json("PUT", &format!("/api/chats/{id}/events/{n}"), &ev("r", n));
        statuses.push(r.status);
        if r.status == 429 {
            assert!(r.header("retry-after").is_some());
            assert_eq!(r.error_code().as_deref(), Some("rate_limited"));
        }
    }
    // A fixed window of one minute: the 12 writes may straddle its edge, so 5 pass, or at most
    // two windows' worth (10); either way some are refused.
    let ok = statuses.iter().filter(|s| **s == 200).count();
    assert!((5..=10).contains(&ok), "{statuses:?}");
    assert!(statuses.contains(&429), "{statuses:?}");
    // Refused writes wrote nothing.
    assert_eq!(events(&h, &id).len(), ok);
}

// ------------------------------------------------------------ item 13: a refused message

#[test]
fn a_refused_message_can_be_unmarked_so_no_page_load_sends_it() {
    let h = Host::shared();
    let id = create(&h, json!({ "pendingUserMessage": "first" }));
    assert_eq!(chat(&h, &id)["pendingUserMessage"], "first");
    let clear = |body: Option<Value>| {
        h.send(
            "DELETE",
            &format!("/api/chats/{id}/pending"),
            &[
                ("origin", h.origin().as_str()),
                ("content-type", "application/json"),
            ],
            body.map(|b| serde_json::to_vec(&b).unwrap()).as_deref(),
        )
    };
    // Another tab's newer message is not cleared by a stale refusal.
    assert_eq!(clear(Some(json!({ "message": "older" }))).status, 204);
    assert_eq!(chat(&h, &id)["pendingUserMessage"], "first");
    assert_eq!(clear(Some(json!({ "message": "first" }))).status, 204);
    assert_eq!(chat(&h, &id)["pendingUserMessage"], Value::Null);
    assert_eq!(
        h.send(
            "DELETE",
            "/api/chats/nope/pending",
            &[("origin", h.origin().as_str())],
            None
        )
        .status,
        404
    );
}
