//! The chat store's SQL against a real SQLite (the version the local host embeds), through the
//! same one-statement-per-call seam the components use. Each event-log invariant of
//! DESIGN.md §2 that lives in the store has a test named after it.

use eve_api::chat::IndexedEvent;
use eve_store::migrations::{self, MIGRATIONS};
use eve_store::validate::{self, ListQuery, SessionUpdate, StoredEvent};
mod common;

use common::Db;
use eve_store::{ChatStore, Sql};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::path::PathBuf;

fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("eve-store-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("db.sqlite")
}

fn open_file(path: &PathBuf, foreign_keys: bool) -> Db {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .unwrap();
    conn.pragma_update(None, "foreign_keys", foreign_keys)
        .unwrap();
    Db(conn)
}

/// A migrated in-memory database, with or without foreign keys: Spin's local database and the
/// local host leave them off, and the store must work either way.
fn db_with(foreign_keys: bool) -> Db {
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    conn.pragma_update(None, "foreign_keys", foreign_keys)
        .unwrap();
    let db = Db(conn);
    migrations::migrate(&db, 1).unwrap();
    db
}

fn db() -> Db {
    db_with(true)
}

fn count(db: &Db, sql: &str) -> i64 {
    db.execute(sql, vec![]).unwrap()[0][0].as_i64().unwrap()
}

fn ev(kind: &str, n: u64) -> Value {
    json!({ "type": kind, "index": n })
}

fn stored(v: &Value) -> StoredEvent {
    validate::event(v).unwrap()
}

fn at(index: u64, v: &Value) -> (u64, StoredEvent) {
    (index, stored(v))
}

fn create(store: &ChatStore<'_, Db>, id: &str, now: i64) {
    store.create(id, None, now).unwrap();
}

/// A chat row as the code before migration 0005 wrote it (no tombstone table yet).
fn create_before_0005(db: &Db, id: &str, now: i64) {
    db.execute(
        "INSERT INTO chat (id, owner, created_at, updated_at) VALUES (?1, 'u', ?2, ?2)",
        vec![id.into(), now.into()],
    )
    .unwrap();
}

fn page(limit: usize, cursor: Option<&str>) -> ListQuery {
    validate::list_query(&format!(
        "limit={limit}{}",
        cursor
            .map(|c| format!("&cursor={}", c.replace(':', "%3A")))
            .unwrap_or_default()
    ))
    .unwrap()
}

// ---------------------------------------------------------------- migrations

#[test]
fn migrations_create_every_table_on_a_fresh_database() {
    let db = db();
    for table in [
        "chat",
        "chat_event",
        "chat_search",
        "schema_migrations",
        "eve_session",
        "eve_event",
        "eve_inbox",
        "eve_attachment",
        "agent_mcp_oauth_client",
        "account",
        "account_invite",
        "account_reset",
        "audit_log",
        "api_token",
        "usage_daily",
        "principal_quota",
        "deployment_setting",
        "project",
        "chat_project",
        "project_file",
        "skill",
        "skill_disabled",
    ] {
        let n = count(
            &db,
            &format!(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '{table}'"
            ),
        );
        assert_eq!(n, 1, "{table}");
    }
    assert_eq!(migrations::applied_versions(&db).unwrap(), all_versions());
}

#[test]
fn migration_4_rewrites_a_chat_of_the_earlier_dialect_into_eve_events_row_for_row() {
    let db = Db(rusqlite::Connection::open_in_memory().unwrap());
    db.execute(migrations::CREATE_SCHEMA_MIGRATIONS, vec![])
        .unwrap();
    for m in &MIGRATIONS[..3] {
        for s in migrations::split_statements(m.sql) {
            db.execute(&s, vec![]).unwrap();
        }
        db.execute(
            migrations::RECORD_VERSION,
            vec![m.version.into(), m.name.into(), 0i64.into()],
        )
        .unwrap();
    }
    create_before_0005(&db, "old", 10);
    let old = [
        json!({ "type": "user.message", "index": 0, "text": "What is Spin?" }),
        json!({ "type": "assistant.reasoning.delta", "index": 1, "delta": "hmm" }),
        json!({ "type": "assistant.text.delta", "index": 2, "delta": "Spin is " }),
        json!({ "type": "assistant.text.delta", "index": 3, "delta": "a framework." }),
        json!({ "type": "tool.call.started", "index": 4, "toolCallId": "c1", "toolName": "get_weather" }),
        json!({ "type": "tool.call.ready", "index": 5, "toolCallId": "c1", "toolName": "get_weather", "input": { "city": "Paris" } }),
        json!({ "type": "tool.call.result", "index": 6, "toolCallId": "c1", "toolName": "get_weather", "output": { "t": 2 }, "isError": false }),
        json!({ "type": "usage", "index": 7, "inputTokens": 3, "outputTokens": 4 }),
        json!({ "type": "authorization.required", "index": 8, "authorizationId": "a", "connection": "notion", "displayName": "Notion", "description": "d", "connectUrl": "/u", "toolCallId": "c2" }),
        json!({ "type": "authorization.completed", "index": 9, "authorizationId": "a", "connection": "notion", "outcome": "declined" }),
        json!({ "type": "input.requested", "index": 10, "requestId": "r", "prompt": "Which?", "options": ["a"] }),
        json!({ "type": "session.waiting", "index": 11, "reason": "interrupted" }),
        json!({ "type": "session.failed", "index": 12, "message": "down", "code": "x" }),
        json!({ "type": "session.completed", "index": 13 }),
    ];
    for (i, e) in old.iter().enumerate() {
        db.execute(
            "INSERT INTO chat_event (chat_id, event_index, event_type, event, created_at) VALUES ('old', ?1, ?2, ?3, 1)",
            vec![(i as i64).into(), e["type"].as_str().unwrap().into(), e.to_string().into()],
        )
        .unwrap();
    }
    db.execute(
        "UPDATE chat SET eve_session = '{\"sessionId\":\"ses_abc\",\"streamIndex\":3}' WHERE id = 'old'",
        vec![],
    )
    .unwrap();
    migrations::migrate(&db, 20).unwrap();
    migrations::migrate(&db, 21).unwrap();
    let detail = ChatStore::new(&db, "u").get("old").unwrap();
    assert_eq!(detail.events.len(), old.len(), "row for row");
    for e in &detail.events {
        let parsed: Result<eve_api::eve::Envelope, _> = serde_json::from_value(e.clone());
        assert!(parsed.is_ok(), "{e}: {parsed:?}");
    }
    assert_eq!(detail.events[0]["type"], "message.received");
    assert_eq!(detail.events[0]["data"]["message"], "What is Spin?");
    assert_eq!(
        detail.events[5]["data"]["actions"][0]["input"]["city"],
        "Paris"
    );
    assert_eq!(detail.events[13]["type"], "session.waiting");
    let types: Vec<String> = db
        .execute(
            "SELECT event_type FROM chat_event WHERE chat_id = 'old' ORDER BY event_index",
            vec![],
        )
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap().to_string())
        .collect();
    let expected: Vec<String> = detail
        .events
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(types, expected, "event_type follows the rewritten event");
    assert!(
        detail.session.is_none(),
        "the earlier agent's session is forgotten"
    );
    let turns = eve_store::transcript::search_text(&detail.events);
    assert_eq!(turns, "What is Spin?\nSpin is a framework.");
}

#[test]
fn migrations_apply_exactly_once() {
    let db = db();
    migrations::migrate(&db, 2).unwrap();
    migrations::migrate(&db, 3).unwrap();
    assert_eq!(
        count(&db, "SELECT count(*) FROM schema_migrations"),
        MIGRATIONS.len() as i64
    );
    assert_eq!(
        count(&db, "SELECT max(applied_at) FROM schema_migrations"),
        1
    );
}

#[test]
fn migrations_upgrade_a_database_from_version_1_keeping_its_data() {
    let db = Db(rusqlite::Connection::open_in_memory().unwrap());
    db.execute(migrations::CREATE_SCHEMA_MIGRATIONS, vec![])
        .unwrap();
    for s in migrations::split_statements(MIGRATIONS[0].sql) {
        db.execute(&s, vec![]).unwrap();
    }
    db.execute(
        migrations::RECORD_VERSION,
        vec![1i64.into(), MIGRATIONS[0].name.into(), 0i64.into()],
    )
    .unwrap();
    create_before_0005(&db, "kept", 10);
    assert_eq!(
        migrations::report(&db).missing,
        vec![
            "0002_chat_search".to_string(),
            "0003_eve_agent".to_string(),
            "0004_chat_events_in_eve".to_string(),
            "0005_chat_lifecycle".to_string(),
            "0006_chat_pin".to_string(),
            "0007_attachments".to_string(),
            "0008_mcp_oauth_client".to_string(),
            "0009_accounts".to_string(),
            "0010_api_tokens".to_string(),
            "0011_usage_quotas".to_string(),
            "0012_projects".to_string(),
            "0013_skills".to_string(),
            "0014_runtime".to_string(),
            "0015_slack".to_string(),
            "0016_slack_card".to_string(),
            "0017_slack_thread_per_person".to_string(),
            "0018_chat_event_by_type".to_string(),
        ]
    );
    let status = migrations::migrate_and_report(&db, 5);
    assert!(status.schema_ready, "{status:?}");
    assert_eq!(
        ChatStore::new(&db, "u").get("kept").unwrap().chat.id,
        "kept"
    );
}

#[test]
fn migrations_finish_a_migration_that_was_cut_off_before_its_version_row() {
    let db = Db(rusqlite::Connection::open_in_memory().unwrap());
    db.execute(migrations::CREATE_SCHEMA_MIGRATIONS, vec![])
        .unwrap();
    // The statements of 0001 ran, then the process died before recording the version.
    for s in migrations::split_statements(MIGRATIONS[0].sql)
        .into_iter()
        .take(2)
    {
        db.execute(&s, vec![]).unwrap();
    }
    migrations::migrate(&db, 1).unwrap();
    assert_eq!(migrations::applied_versions(&db).unwrap(), all_versions());
}

#[test]
fn migrations_are_safe_when_instances_start_together() {
    let path = temp_path("race");
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || migrations::migrate(&open_file(&path, false), 1))
        })
        .collect();
    for h in handles {
        h.join().unwrap().unwrap();
    }
    let db = open_file(&path, false);
    assert_eq!(migrations::applied_versions(&db).unwrap(), all_versions());
}

#[test]
fn setup_status_reports_ready_after_migrating() {
    let db = Db(rusqlite::Connection::open_in_memory().unwrap());
    let status = migrations::migrate_and_report(&db, 1);
    assert!(
        status.database_ready && status.schema_ready && status.missing.is_empty(),
        "{status:?}"
    );
}

// ---------------------------------------------------------------- chats

#[test]
fn create_titles_the_chat_from_its_first_message_and_marks_it_pending() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    let (chat, created) = store
        .create("c1", Some("Plan a  trip\nto Kyoto"), 1_000)
        .unwrap();
    assert!(created);
    assert_eq!(chat.title, "Plan a trip to Kyoto");
    assert_eq!(chat.created_at, "1970-01-01T00:00:01.000Z");
    let detail = store.get("c1").unwrap();
    assert_eq!(
        detail.pending_user_message.as_deref(),
        Some("Plan a  trip\nto Kyoto")
    );
    assert_eq!(
        detail.pending_user_message_created_at.as_deref(),
        Some("1970-01-01T00:00:01.000Z")
    );
    assert!(detail.events.is_empty());
    assert_eq!(detail.session, None);
}

#[test]
fn create_without_a_message_is_a_new_chat_without_pending() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    let (chat, _) = store.create("c1", None, 5).unwrap();
    assert_eq!(chat.title, "New chat");
    assert_eq!(store.get("c1").unwrap().pending_user_message, None);
}

#[test]
fn create_with_the_same_id_again_returns_the_first_chat() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    store.create("c1", Some("first"), 5).unwrap();
    let (again, created) = store.create("c1", Some("second"), 9).unwrap();
    assert!(!created);
    assert_eq!(again.title, "first");
    let other = ChatStore::new(&db, "v");
    assert_eq!(other.create("c1", None, 9).unwrap_err().status(), 409);
}

#[test]
fn pagination_over_many_equal_timestamps_has_no_duplicate_and_no_gap() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    let mut expected = Vec::new();
    for i in 0..150 {
        // 60 chats share one millisecond, the rest come in groups of three.
        let at = if i < 60 {
            1_000
        } else {
            2_000 + (i / 3) as i64
        };
        let id = format!("chat{:03}", (i * 37) % 150);
        create(&store, &id, at);
        expected.push((at, id));
    }
    expected.sort_by(|a, b| b.cmp(a));
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let p = store.list(&page(7, cursor.as_deref())).unwrap();
        pages += 1;
        seen.extend(p.chats.iter().map(|c| c.id.clone()));
        match p.next_cursor {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    let want: Vec<String> = expected.into_iter().map(|(_, id)| id).collect();
    assert_eq!(seen, want);
    assert_eq!(pages, 150usize.div_ceil(7));
    assert_eq!(seen.iter().collect::<HashSet<_>>().len(), 150);
}

#[test]
fn last_page_has_a_null_cursor_and_exact_page_sizes_do_not_add_an_empty_page() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    for i in 0..20 {
        create(&store, &format!("c{i:02}"), i);
    }
    let first = store.list(&page(10, None)).unwrap();
    assert_eq!(first.chats.len(), 10);
    let second = store.list(&page(10, first.next_cursor.as_deref())).unwrap();
    assert_eq!(second.chats.len(), 10);
    assert_eq!(second.next_cursor, None);
    assert_eq!(first.chats[0].id, "c19");
}

#[test]
fn a_cursor_encodes_the_last_chat_of_the_page() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    for i in 0..3 {
        create(&store, &format!("c{i}"), 1_714_566_896_789);
    }
    let p = store.list(&page(2, None)).unwrap();
    assert_eq!(
        p.next_cursor.as_deref(),
        Some("2024-05-01T12:34:56.789Z::c1")
    );
}

#[test]
fn search_matches_titles_and_message_text_with_wildcards_escaped() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    store.create("a", Some("Trip to Kyoto"), 1).unwrap();
    store.create("b", Some("Budget"), 2).unwrap();
    store.create("c", Some("100% sure_thing"), 3).unwrap();
    let log = [
        json!({ "type": "message.received", "data": { "message": "Budget", "sequence": 0, "turnId": "turn_0" }, "meta": { "at": "t", "id": "e0" } }),
        json!({ "type": "message.appended", "data": { "messageDelta": "Spend less on KYOTO hotels", "sequence": 0, "stepIndex": 0, "turnId": "turn_0" }, "meta": { "at": "t", "id": "e1" } }),
    ];
    let events: Vec<StoredEvent> = log.iter().map(stored).collect();
    let text = eve_store::transcript::search_text(&log);
    store
        .save_snapshot("b", &events, &text, &SessionUpdate::Keep, None, 4)
        .unwrap();
    let ids = |q: &str| -> Vec<String> {
        store
            .list(&validate::list_query(q).unwrap())
            .unwrap()
            .chats
            .into_iter()
            .map(|c| c.id)
            .collect()
    };
    assert_eq!(ids("q=kyoto"), vec!["b", "a"]);
    assert_eq!(ids("q=100%25"), vec!["c"]);
    assert_eq!(ids("q=%25"), vec!["c"]);
    assert_eq!(ids("q=Tr_p"), Vec::<String>::new(), "_ is not a wildcard");
    assert_eq!(ids("q=sure_thing"), vec!["c"]);
    assert_eq!(ids("q=kyoto&limit=1").len(), 1);
    let first = store
        .list(&validate::list_query("q=kyoto&limit=1").unwrap())
        .unwrap();
    let cursor = first.next_cursor.unwrap().replace(':', "%3A");
    assert_eq!(ids(&format!("q=kyoto&limit=1&cursor={cursor}")), vec!["a"]);
}

#[test]
fn rename_changes_the_title_but_not_the_order_or_the_log() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c1", 1);
    store
        .append("c1", &[at(0, &ev("user.message", 0))], None, 2)
        .unwrap();
    let renamed = store.rename("c1", "Renamed").unwrap();
    assert_eq!(renamed.title, "Renamed");
    assert_eq!(renamed.updated_at, "1970-01-01T00:00:00.001Z");
    assert_eq!(store.get("c1").unwrap().events.len(), 1);
}

#[test]
fn delete_removes_the_chat_its_events_and_its_search_text() {
    for foreign_keys in [true, false] {
        let db = db_with(foreign_keys);
        let store = ChatStore::new(&db, "u");
        create(&store, "c1", 1);
        store
            .save_snapshot(
                "c1",
                &[stored(&ev("user.message", 0))],
                "hello",
                &SessionUpdate::Keep,
                None,
                2,
            )
            .unwrap();
        store.delete("c1").unwrap();
        assert_eq!(store.get("c1").unwrap_err().status(), 404);
        assert_eq!(count(&db, "SELECT count(*) FROM chat_event"), 0);
        assert_eq!(count(&db, "SELECT count(*) FROM chat_search"), 0);
        assert_eq!(
            store.delete("c1").unwrap_err().status(),
            404,
            "a retried delete finds nothing"
        );
    }
}

#[test]
fn deleting_the_chat_row_alone_removes_its_log_in_the_same_statement() {
    for foreign_keys in [false, true] {
        let db = db_with(foreign_keys);
        let store = ChatStore::new(&db, "u");
        create(&store, "c1", 1);
        store
            .append("c1", &[at(0, &ev("a", 0)), at(1, &ev("b", 1))], None, 2)
            .unwrap();
        // Only the first statement of a delete: nothing can be cut off after it.
        db.execute(
            eve_store::persistence::DELETE_CHAT,
            vec!["c1".into(), "u".into()],
        )
        .unwrap();
        assert_eq!(count(&db, "SELECT count(*) FROM chat_event"), 0);
        assert_eq!(count(&db, "SELECT count(*) FROM chat_search"), 0);
        assert_eq!(store.delete("c1").unwrap_err().status(), 404);
    }
}

// ---------------------------------------------------------------- the event log (DESIGN §2)

#[test]
fn invariant_1_event_index_is_unique_per_chat_and_rewriting_a_slot_replaces_it() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c1", 1);
    create(&store, "c2", 1);
    store
        .append("c1", &[at(0, &ev("first", 0))], None, 2)
        .unwrap();
    store
        .append("c1", &[at(0, &ev("second", 0))], None, 3)
        .unwrap();
    store
        .append("c2", &[at(0, &ev("other chat", 0))], None, 3)
        .unwrap();
    assert_eq!(
        count(&db, "SELECT count(*) FROM chat_event WHERE chat_id = 'c1'"),
        1
    );
    assert_eq!(store.get("c1").unwrap().events, vec![ev("second", 0)]);
    assert_eq!(store.get("c2").unwrap().events, vec![ev("other chat", 0)]);
}

#[test]
fn invariant_1_a_batch_writes_many_slots_in_index_order() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c1", 1);
    let batch: Vec<_> = (0..1000)
        .rev()
        .map(|i| at(i, &ev("text.delta", i)))
        .collect();
    let written = store.append("c1", &batch, None, 2).unwrap();
    assert_eq!(
        (written.written, written.last_event_index),
        (1000, Some(999))
    );
    let events = store.get("c1").unwrap().events;
    assert_eq!(events.len(), 1000);
    assert!(events
        .iter()
        .enumerate()
        .all(|(i, e)| e["index"] == i as u64));
}

#[test]
fn invariant_2_a_snapshot_upserts_every_event_and_deletes_rows_at_or_past_its_length() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c1", 1);
    let streamed: Vec<_> = (0..10).map(|i| at(i, &ev("streamed", i))).collect();
    store.append("c1", &streamed, None, 2).unwrap();
    let snapshot: Vec<_> = (0..6).map(|i| stored(&ev("final", i))).collect();
    let saved = store
        .save_snapshot("c1", &snapshot, "", &SessionUpdate::Keep, None, 3)
        .unwrap();
    assert_eq!(saved.event_count, 6);
    let events = store.get("c1").unwrap().events;
    assert_eq!(events, (0..6).map(|i| ev("final", i)).collect::<Vec<_>>());
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM chat_event WHERE event_index >= 6"
        ),
        0
    );
}

#[test]
fn invariant_2_an_empty_snapshot_empties_the_log() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c1", 1);
    store.append("c1", &[at(0, &ev("a", 0))], None, 2).unwrap();
    store
        .save_snapshot("c1", &[], "", &SessionUpdate::Keep, None, 3)
        .unwrap();
    assert!(store.get("c1").unwrap().events.is_empty());
}

#[test]
fn invariant_2_a_snapshot_cut_off_half_way_is_repaired_by_its_retry() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    store.create("c1", Some("hi"), 1).unwrap();
    store
        .append(
            "c1",
            &(0..8)
                .map(|i| at(i, &ev("streamed", i)))
                .collect::<Vec<_>>(),
            None,
            2,
        )
        .unwrap();
    let snapshot: Vec<_> = (0..5).map(|i| stored(&ev("final", i))).collect();
    // Cut off after the upsert: the tail and the pending message are still there.
    let indexed: Vec<_> = snapshot
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, e)| (i as u64, e))
        .collect();
    store.append("c1", &indexed, None, 3).unwrap();
    assert_eq!(store.get("c1").unwrap().events.len(), 8);
    assert!(store.get("c1").unwrap().pending_user_message.is_some());
    // The retry reaches the same end state as an uninterrupted snapshot.
    store
        .save_snapshot("c1", &snapshot, "", &SessionUpdate::Keep, None, 4)
        .unwrap();
    let detail = store.get("c1").unwrap();
    assert_eq!(
        detail.events,
        (0..5).map(|i| ev("final", i)).collect::<Vec<_>>()
    );
    assert_eq!(detail.pending_user_message, None);
}

#[test]
fn invariant_3_a_snapshot_clears_the_pending_message_and_stores_the_session() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    store.create("c1", Some("hello"), 1).unwrap();
    let session = validate::session(Some(&json!({ "sessionId": "s1", "streamIndex": 4 }))).unwrap();
    let saved = store
        .save_snapshot(
            "c1",
            &[stored(&ev("user.message", 0))],
            "",
            &SessionUpdate::Set(session),
            None,
            50,
        )
        .unwrap();
    assert_eq!(saved.chat.updated_at, "1970-01-01T00:00:00.050Z");
    let detail = store.get("c1").unwrap();
    assert_eq!(detail.pending_user_message, None);
    assert_eq!(
        detail.session,
        Some(json!({ "sessionId": "s1", "streamIndex": 4 }))
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM chat WHERE pending_user_message IS NOT NULL"
        ),
        0
    );
}

#[test]
fn invariant_3_a_snapshot_without_a_session_field_keeps_the_stored_session() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c1", 1);
    store
        .set_session("c1", Some(r#"{"sessionId":"s1","streamIndex":1}"#))
        .unwrap();
    store
        .save_snapshot("c1", &[], "", &SessionUpdate::Keep, None, 2)
        .unwrap();
    assert!(store.get("c1").unwrap().session.is_some());
    store
        .save_snapshot("c1", &[], "", &SessionUpdate::Set(None), None, 3)
        .unwrap();
    assert_eq!(store.get("c1").unwrap().session, None);
}

#[test]
fn invariant_3_a_pending_message_older_than_a_settling_event_is_reported_as_null() {
    for settling in [
        "session.completed",
        "session.failed",
        "session.waiting",
        "authorization.required",
    ] {
        let db = db();
        let store = ChatStore::new(&db, "u");
        create(&store, "c1", 1);
        store.mark_pending("c1", "hello", 10).unwrap();
        store
            .append(
                "c1",
                &[at(0, &ev("user.message", 0)), at(1, &ev("text.delta", 1))],
                None,
                11,
            )
            .unwrap();
        assert_eq!(
            store.get("c1").unwrap().pending_user_message.as_deref(),
            Some("hello"),
            "{settling}"
        );
        store
            .append("c1", &[at(2, &ev(settling, 2))], None, 12)
            .unwrap();
        let detail = store.get("c1").unwrap();
        assert_eq!(detail.pending_user_message, None, "{settling}");
        assert_eq!(detail.pending_user_message_created_at, None);
    }
}

#[test]
fn invariant_3_a_settling_event_of_an_earlier_turn_does_not_hide_a_new_pending_message() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c1", 1);
    store
        .append("c1", &[at(0, &ev("session.completed", 0))], None, 5)
        .unwrap();
    store.mark_pending("c1", "next question", 6).unwrap();
    // Rewriting the old settling slot with the same event does not make it new.
    store
        .append("c1", &[at(0, &ev("session.completed", 0))], None, 7)
        .unwrap();
    assert_eq!(
        store.get("c1").unwrap().pending_user_message.as_deref(),
        Some("next question")
    );
}

#[test]
fn invariant_3_authorization_skip_clears_the_pending_message() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    store.create("c1", Some("use notion"), 1).unwrap();
    let events = [
        at(
            3,
            &json!({ "type": "authorization.completed", "outcome": "declined" }),
        ),
        at(4, &json!({ "type": "session.waiting" })),
    ];
    let skipped = store
        .skip_authorization("c1", &events, &SessionUpdate::Keep, None, 9)
        .unwrap();
    assert_eq!(skipped.written, 2);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM chat WHERE pending_user_message IS NOT NULL"
        ),
        0
    );
}

#[test]
fn invariant_4_authorization_skip_events_are_kept_by_the_final_snapshot_that_merges_them() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c1", 1);
    let streamed: Vec<_> = (0..3).map(|i| at(i, &ev("streamed", i))).collect();
    store.append("c1", &streamed, None, 2).unwrap();
    let declined = json!({ "type": "authorization.completed", "outcome": "declined", "index": 3 });
    let waiting = json!({ "type": "session.waiting", "index": 4 });
    store
        .skip_authorization(
            "c1",
            &[at(3, &declined), at(4, &waiting)],
            &SessionUpdate::Keep,
            None,
            3,
        )
        .unwrap();
    assert_eq!(
        store.get("c1").unwrap().events[3..],
        [declined.clone(), waiting.clone()]
    );
    // The client merges its local events into the final snapshot (seed mergeLocalEvents).
    let mut snapshot: Vec<_> = (0..3).map(|i| stored(&ev("streamed", i))).collect();
    snapshot.extend([stored(&declined), stored(&waiting)]);
    store
        .save_snapshot("c1", &snapshot, "", &SessionUpdate::Keep, None, 4)
        .unwrap();
    assert_eq!(store.get("c1").unwrap().events[3..], [declined, waiting]);
}

#[test]
fn invariant_5_a_pending_authorization_belongs_to_its_chat_only() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c1", 1);
    create(&store, "c2", 1);
    store
        .append(
            "c1",
            &[at(
                0,
                &json!({ "type": "authorization.required", "name": "notion" }),
            )],
            None,
            2,
        )
        .unwrap();
    let has_required = |id: &str| {
        store
            .get(id)
            .unwrap()
            .events
            .iter()
            .any(|e| e["type"] == "authorization.required")
    };
    assert!(has_required("c1"));
    assert!(!has_required("c2"));
}

#[test]
fn invariant_6_the_event_log_not_the_sidebar_is_the_source_of_chat_content() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    store
        .create("c1", Some("A title from the first message"), 1)
        .unwrap();
    store
        .append(
            "c1",
            &[at(
                0,
                &json!({ "type": "user.message", "text": "the real text" }),
            )],
            None,
            2,
        )
        .unwrap();
    store.rename("c1", "Something else").unwrap();
    let page = store.list(&page(20, None)).unwrap();
    let entry = serde_json::to_value(&page.chats[0]).unwrap();
    assert_eq!(
        entry.as_object().unwrap().len(),
        4,
        "a sidebar entry carries no content: {entry}"
    );
    assert_eq!(store.get("c1").unwrap().events[0]["text"], "the real text");
}

#[test]
fn an_identical_retry_keeps_the_slot_time_and_a_changed_event_moves_it() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c1", 1);
    let created = || {
        count(
            &db,
            "SELECT created_at FROM chat_event WHERE chat_id = 'c1' AND event_index = 0",
        )
    };
    store.append("c1", &[at(0, &ev("a", 0))], None, 10).unwrap();
    store.append("c1", &[at(0, &ev("a", 0))], None, 20).unwrap();
    assert_eq!(created(), 10);
    store.append("c1", &[at(0, &ev("b", 0))], None, 30).unwrap();
    assert_eq!(created(), 30);
}

#[test]
fn stored_events_are_byte_for_byte_the_canonical_json() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c1", 1);
    let tricky = json!({
        "type": "assistant.text.delta", "delta": "quote \" backslash \\ newline \n tab \t unicode 数据 😀 \u{0001}",
        "n": [1, -2, 3.5, 1e300, 18446744073709551615u64], "nested": { "z": null, "a": true }
    });
    store.append("c1", &[at(0, &tricky)], None, 2).unwrap();
    let text = db.execute("SELECT event FROM chat_event", vec![]).unwrap()[0][0]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(text, stored(&tricky).json);
    assert_eq!(store.get("c1").unwrap().events[0], tricky);
}

#[test]
fn concurrent_appends_keep_distinct_indices_and_one_row_per_index() {
    let path = temp_path("appends");
    let db = open_file(&path, true);
    migrations::migrate(&db, 1).unwrap();
    ChatStore::new(&db, "u").create("c1", None, 1).unwrap();
    let handles: Vec<_> = (0..4u64)
        .map(|t| {
            let path = path.clone();
            std::thread::spawn(move || {
                let db = open_file(&path, true);
                let store = ChatStore::new(&db, "u");
                for i in 0..50u64 {
                    store
                        .append("c1", &[at(t * 50 + i, &ev("distinct", t))], None, 2)
                        .unwrap();
                    store
                        .append("c1", &[at(1000, &ev("same", t))], None, 2)
                        .unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM chat_event WHERE event_index < 200"
        ),
        200
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM chat_event WHERE event_index = 1000"
        ),
        1
    );
}

#[test]
fn mark_pending_titles_a_new_chat_and_touches_it_but_keeps_a_chosen_title() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c1", 1);
    let saved = store.mark_pending("c1", "What is WASI?", 7).unwrap();
    assert_eq!(saved.chat.title, "What is WASI?");
    assert_eq!(saved.chat.updated_at, "1970-01-01T00:00:00.007Z");
    store.rename("c1", "Mine").unwrap();
    assert_eq!(
        store.mark_pending("c1", "Another", 8).unwrap().chat.title,
        "Mine"
    );
}

// ---------------------------------------------------------------- principal isolation

#[test]
fn another_principal_sees_404_for_everything_and_changes_nothing() {
    let db = db();
    let owner = ChatStore::new(&db, "alice");
    owner.create("c1", Some("secret plans"), 1).unwrap();
    owner
        .append("c1", &[at(0, &ev("user.message", 0))], None, 2)
        .unwrap();
    let before = owner.get("c1").unwrap();
    let intruder = ChatStore::new(&db, "mallory");
    let not_found = |r: Result<(), eve_api::ApiError>| assert_eq!(r.unwrap_err().status(), 404);
    not_found(intruder.get("c1").map(|_| ()));
    not_found(intruder.export("c1", 5).map(|_| ()));
    not_found(intruder.rename("c1", "pwned").map(|_| ()));
    not_found(
        intruder
            .append("c1", &[at(0, &ev("pwned", 0))], None, 3)
            .map(|_| ()),
    );
    not_found(intruder.append("c1", &[], None, 3).map(|_| ()));
    not_found(
        intruder
            .save_snapshot("c1", &[], "", &SessionUpdate::Set(None), None, 3)
            .map(|_| ()),
    );
    not_found(intruder.mark_pending("c1", "pwned", 3).map(|_| ()));
    not_found(intruder.set_session("c1", None).map(|_| ()));
    not_found(
        intruder
            .skip_authorization("c1", &[at(5, &ev("x", 5))], &SessionUpdate::Keep, None, 3)
            .map(|_| ()),
    );
    not_found(intruder.delete("c1"));
    assert!(intruder.list(&page(20, None)).unwrap().chats.is_empty());
    assert!(intruder
        .list(&validate::list_query("q=secret").unwrap())
        .unwrap()
        .chats
        .is_empty());
    assert_eq!(owner.get("c1").unwrap(), before);
}

#[test]
fn batch_validation_rejects_the_whole_batch_before_any_write() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c1", 1);
    let events: Vec<IndexedEvent> = serde_json::from_value(json!([
        { "eventIndex": 0, "event": { "type": "ok" } },
        { "eventIndex": -1, "event": { "type": "bad index" } },
    ]))
    .unwrap();
    assert!(validate::indexed_events(&events).is_err());
    assert!(store.get("c1").unwrap().events.is_empty());
}

// ------------------------------------------------- issue 12: bases, quotas, deletion, reuse

fn usage(db: &Db, scope: &str) -> i64 {
    db.execute(
        "SELECT coalesce((SELECT bytes FROM storage_usage WHERE scope = ?1), 0)",
        vec![scope.into()],
    )
    .unwrap()[0][0]
        .as_i64()
        .unwrap()
}

fn log_bytes(db: &Db, chat: &str) -> i64 {
    db.execute(
        "SELECT coalesce(sum(length(CAST(event AS BLOB))), 0) FROM chat_event WHERE chat_id = ?1",
        vec![chat.into()],
    )
    .unwrap()[0][0]
        .as_i64()
        .unwrap()
}

#[test]
fn a_stale_snapshot_is_refused_whole_and_the_merged_one_keeps_both_turns() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c", 1);
    let (a0, a1, b0) = (ev("a", 0), ev("a", 1), ev("b", 0));
    // Tab A writes its turn on an empty log.
    store
        .append("c", &[at(0, &a0), at(1, &a1)], Some(0), 2)
        .unwrap();
    store
        .save_snapshot(
            "c",
            &[stored(&a0), stored(&a1)],
            "",
            &SessionUpdate::Keep,
            Some(2),
            3,
        )
        .unwrap();
    // Tab B loaded the empty log: its append and its snapshot are both refused.
    let e = store.append("c", &[at(0, &b0)], Some(0), 4).unwrap_err();
    assert_eq!(e.status(), 409);
    let e = store
        .save_snapshot("c", &[stored(&b0)], "", &SessionUpdate::Keep, Some(0), 4)
        .unwrap_err();
    assert_eq!(e.status(), 409);
    assert_eq!(store.event_count("c").unwrap(), 2);
    // B re-reads (2 events) and writes the merge on that base.
    store
        .save_snapshot(
            "c",
            &[stored(&a0), stored(&a1), stored(&b0)],
            "",
            &SessionUpdate::Keep,
            Some(2),
            5,
        )
        .unwrap();
    assert_eq!(store.get("c").unwrap().events, vec![a0, a1, b0]);
}

#[test]
fn an_append_with_a_base_accepts_identical_retries_and_refuses_a_different_event() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c", 1);
    let batch = [at(0, &ev("x", 0)), at(1, &ev("x", 1))];
    store.append("c", &batch, Some(0), 2).unwrap();
    // The response was lost; the same batch again is fine.
    store.append("c", &batch, Some(0), 3).unwrap();
    // The same slot with other content on a stale base: refused, nothing written.
    let e = store
        .append("c", &[at(1, &ev("y", 1))], Some(1), 4)
        .unwrap_err();
    assert_eq!(e.status(), 409);
    // A gap (base past the log) is refused too.
    let e = store
        .append("c", &[at(5, &ev("y", 5))], Some(5), 4)
        .unwrap_err();
    assert_eq!(e.status(), 409);
    assert_eq!(store.get("c").unwrap().events, vec![ev("x", 0), ev("x", 1)]);
    // Without a base the seed's upsert still replaces (invariant 1).
    store.append("c", &[at(1, &ev("y", 1))], None, 5).unwrap();
    assert_eq!(store.get("c").unwrap().events[1], ev("y", 1));
}

#[test]
fn byte_totals_follow_every_write_and_the_caps_refuse_a_write_whole() {
    for foreign_keys in [false, true] {
        byte_totals_with(foreign_keys);
    }
}

fn byte_totals_with(foreign_keys: bool) {
    let db = db_with(foreign_keys);
    let quota = eve_store::limits::StorageQuota {
        chat_bytes: 500,
        principal_bytes: 700,
    };
    let store = ChatStore::new(&db, "u").with_quota(quota);
    create(&store, "c1", 1);
    create(&store, "c2", 1);
    let big = |n: u64| json!({ "type": "t", "index": n, "pad": "x".repeat(80) });
    store
        .append("c1", &[at(0, &big(0)), at(1, &big(1))], None, 2)
        .unwrap();
    assert_eq!(usage(&db, "chat:c1"), log_bytes(&db, "c1"));
    // Rewriting a slot moves the totals by the difference.
    store.append("c1", &[at(1, &ev("t", 1))], None, 3).unwrap();
    assert_eq!(usage(&db, "chat:c1"), log_bytes(&db, "c1"));
    store
        .append(
            "c1",
            &[at(1, &big(1)), at(2, &big(2)), at(3, &big(3))],
            None,
            4,
        )
        .unwrap();
    let before = store.get("c1").unwrap().events;
    // Past the chat's cap: 413, and none of the batch is written.
    let e = store
        .append("c1", &[at(4, &big(4)), at(5, &big(5))], None, 5)
        .unwrap_err();
    assert_eq!(e.status(), 413);
    assert!(e.message.contains("chat is full"), "{}", e.message);
    assert_eq!(store.get("c1").unwrap().events, before);
    // A snapshot that does not grow the log is never refused for size.
    let same: Vec<StoredEvent> = before.iter().map(stored).collect();
    store
        .save_snapshot("c1", &same, "", &SessionUpdate::Keep, None, 6)
        .unwrap();
    // Past the principal's cap (across chats): 413 with the other message.
    store.append("c2", &[at(0, &big(0))], None, 7).unwrap();
    let e = store
        .append("c2", &[at(1, &big(1)), at(2, &big(2))], None, 8)
        .unwrap_err();
    assert_eq!(e.status(), 413);
    assert!(e.message.contains("your storage is full"), "{}", e.message);
    assert_eq!(
        usage(&db, "principal:u"),
        log_bytes(&db, "c1") + log_bytes(&db, "c2")
    );
    // Deleting a chat gives its bytes back.
    store.delete("c1").unwrap();
    assert_eq!(usage(&db, "principal:u"), log_bytes(&db, "c2"));
    assert_eq!(usage(&db, "chat:c1"), 0);
}

#[test]
fn deleting_a_chat_deletes_its_agent_sessions_but_not_another_principals() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c", 1);
    for (id, principal) in [("ses_old", "u"), ("ses_now", "u"), ("ses_other", "v")] {
        db.execute(
            "INSERT INTO eve_session (id, principal, created_at, updated_at) VALUES (?1, ?2, 1, 1)",
            vec![id.into(), principal.into()],
        )
        .unwrap();
        for sql in [
            "INSERT INTO eve_event (session_id, idx, type, body, created_at) VALUES (?1, 0, 't', '{}', 1)",
            "INSERT INTO eve_inbox (session_id, seq, kind, delivery_id, body, created_at) VALUES (?1, 0, 'm', 'd', '{}', 1)",
            "INSERT INTO agent_tool_output (session_id, tool_call_id, output, created_at) VALUES (?1, 'c', 'out', 1)",
        ] {
            db.execute(sql, vec![id.into()]).unwrap();
        }
    }
    // The chat moved from one session to another, and names someone else's too.
    for s in ["ses_old", "ses_now", "ses_other"] {
        let session = json!({ "sessionId": s, "streamIndex": 0 }).to_string();
        store.set_session("c", Some(&session)).unwrap();
    }
    assert!(usage(&db, "principal:u") > 0);
    store.delete("c").unwrap();
    for table in ["eve_session", "eve_event", "eve_inbox", "agent_tool_output"] {
        let col = if table == "eve_session" {
            "id"
        } else {
            "session_id"
        };
        let left: Vec<String> = db
            .execute(&format!("SELECT {col} FROM {table}"), vec![])
            .unwrap()
            .into_iter()
            .map(|r| r[0].as_str().unwrap().to_string())
            .collect();
        assert_eq!(left, vec!["ses_other".to_string()], "{table}");
    }
    assert_eq!(count(&db, "SELECT count(*) FROM chat_agent_session"), 0);
    assert_eq!(usage(&db, "principal:u"), 0);
}

#[test]
fn a_deleted_chat_id_is_never_created_again() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c", 1);
    store.append("c", &[at(0, &ev("old", 0))], None, 2).unwrap();
    store.delete("c").unwrap();
    let e = store.create("c", None, 3).unwrap_err();
    assert_eq!(e.status(), 409);
    assert!(e.message.contains("deleted"), "{}", e.message);
    // An append still in flight for the old chat finds nothing to write to.
    assert_eq!(
        store
            .append("c", &[at(1, &ev("late", 1))], None, 4)
            .unwrap_err()
            .status(),
        404
    );
    assert_eq!(count(&db, "SELECT count(*) FROM chat_event"), 0);
}

#[test]
fn clearing_a_refused_pending_message_keeps_a_newer_one() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c", 1);
    store.mark_pending("c", "first", 2).unwrap();
    store.clear_pending("c", Some("other")).unwrap();
    assert_eq!(
        store.get("c").unwrap().pending_user_message.as_deref(),
        Some("first")
    );
    store.clear_pending("c", Some("first")).unwrap();
    assert_eq!(store.get("c").unwrap().pending_user_message, None);
    assert_eq!(
        ChatStore::new(&db, "v")
            .clear_pending("c", None)
            .unwrap_err()
            .status(),
        404
    );
}

// ---------------------------------------------------------------- pins

fn pinned_ids(store: &ChatStore<'_, Db>) -> Vec<String> {
    let page = store
        .list(&validate::list_query("pinned=1").unwrap())
        .unwrap();
    assert_eq!(page.next_cursor, None, "pins are one page");
    page.chats.into_iter().map(|c| c.id).collect()
}

#[test]
fn pinned_chats_list_most_recently_pinned_first_and_pinning_again_keeps_the_place() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    for (i, id) in ["a", "b", "c"].iter().enumerate() {
        create(&store, id, 10 + i as i64);
    }
    assert_eq!(pinned_ids(&store), Vec::<String>::new());
    assert_eq!(store.pin("a", 100).unwrap().id, "a");
    store.pin("c", 200).unwrap();
    store.pin("a", 300).unwrap();
    assert_eq!(pinned_ids(&store), ["c", "a"]);
    // The history still lists every chat, pinned or not.
    let all: Vec<String> = store
        .list(&page(10, None))
        .unwrap()
        .chats
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(all, ["c", "b", "a"]);
    store.unpin("c").unwrap();
    store.unpin("b").unwrap();
    assert_eq!(pinned_ids(&store), ["a"]);
}

#[test]
fn pins_are_per_principal_and_a_deleted_chat_is_unpinned() {
    let db = db();
    let mine = ChatStore::new(&db, "u");
    let theirs = ChatStore::new(&db, "other");
    create(&mine, "a", 10);
    mine.pin("a", 20).unwrap();
    assert_eq!(theirs.pin("a", 30).unwrap_err().status(), 404);
    assert_eq!(theirs.unpin("a").unwrap_err().status(), 404);
    assert_eq!(pinned_ids(&theirs), Vec::<String>::new());
    assert_eq!(
        pinned_ids(&mine),
        ["a"],
        "another principal changed nothing"
    );
    assert_eq!(mine.pin("missing", 30).unwrap_err().status(), 404);
    mine.delete("a").unwrap();
    assert_eq!(count(&db, "SELECT count(*) FROM chat_pin"), 0);
    assert_eq!(pinned_ids(&mine), Vec::<String>::new());
}

#[test]
fn pins_are_capped_and_a_refused_pin_changes_nothing() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    let cap = eve_store::limits::MAX_PINNED_CHATS;
    for i in 0..=cap {
        create(&store, &format!("c{i}"), i as i64);
    }
    for i in 0..cap {
        store.pin(&format!("c{i}"), 100 + i as i64).unwrap();
    }
    let err = store.pin(&format!("c{cap}"), 999).unwrap_err();
    assert_eq!(err.status(), 409);
    assert_eq!(pinned_ids(&store).len(), cap);
    assert!(!pinned_ids(&store).contains(&format!("c{cap}")));
    // Pinning one that is pinned already is fine at the cap.
    store.pin("c0", 1000).unwrap();
}

#[test]
fn pinned_with_a_cursor_or_a_search_is_refused() {
    assert!(validate::list_query("pinned=1").unwrap().pinned);
    assert!(!validate::list_query("pinned=0").unwrap().pinned);
    assert_eq!(
        validate::list_query("pinned=yes").unwrap_err().status(),
        400
    );
    assert_eq!(
        validate::list_query("pinned=1&q=x").unwrap_err().status(),
        400
    );
}

/// A streamed answer appends a batch every ~120 ms to a chat that keeps growing: the work of one
/// append must not grow with the chat. It did: the base check joined the batch to the chat's
/// rows with the chat as the outer loop, so each append visited every event of the chat (a
/// 5,000-token answer's writes took 1–2 s each by its end, and the host's CPU went to them).
/// Counted in SQLite VM steps, not time, so the result does not depend on the machine.
#[test]
fn appending_a_batch_costs_the_same_however_long_the_chat_already_is() {
    use eve_store::persistence::UPSERT_EVENTS;
    use eve_store::store::events_param;
    let db = db();
    let store = ChatStore::new(&db, "u");
    create(&store, "c1", 1);
    let delta = |i: u64| {
        stored(&json!({ "type": "message.delta", "data": { "delta": format!("word{i} ") } }))
    };
    let mut len = 0u64;
    let mut steps_of_an_append_at = |target: u64| {
        while len < target {
            let batch: Vec<_> = (len..len + 32).map(|i| (i, delta(i))).collect();
            store.append("c1", &batch, Some(len), 2).unwrap();
            len += 32;
        }
        let batch: Vec<_> = (len..len + 32).map(|i| (i, delta(i))).collect();
        let bytes: i64 = batch.iter().map(|(_, e)| e.json.len() as i64).sum();
        let params = vec![
            "c1".into(),
            "u".into(),
            2i64.into(),
            events_param(&batch).into(),
            (len as i64).into(),
            bytes.into(),
            i64::MAX.into(),
            i64::MAX.into(),
        ];
        let (rows, steps) = db.execute_counting_steps(UPSERT_EVENTS, params).unwrap();
        assert_eq!(rows.len(), 32, "the append at {len} was written");
        len += 32;
        steps
    };
    let short = steps_of_an_append_at(320);
    let long = steps_of_an_append_at(6400);
    assert!(
        long < short * 2,
        "an append to a chat of 6,400 events took {long} VM steps, to one of 320 {short}"
    );
}

/// Every version of `migrations/`, in order: what a fully migrated database has applied.
fn all_versions() -> Vec<i64> {
    migrations::MIGRATIONS.iter().map(|m| m.version).collect()
}

/// A chat `c1` of principal `u` whose log is `n` events `ev("x", i)`.
fn long_chat(db: &Db, n: u64) -> ChatStore<'_, Db> {
    let store = ChatStore::new(db, "u");
    store.create("c1", None, 1).unwrap();
    let events: Vec<(u64, StoredEvent)> = (0..n).map(|i| at(i, &ev("x", i))).collect();
    store.append("c1", &events, Some(0), 2).unwrap();
    store
}

fn window_of(store: &ChatStore<'_, Db>, raw_query: &str) -> eve_api::chat::ChatDetail {
    let q = validate::window_query(raw_query, "c1").unwrap();
    store.get_window("c1", &q).unwrap()
}

fn indices(detail: &eve_api::chat::ChatDetail) -> Vec<u64> {
    detail
        .events
        .iter()
        .map(|e| e["index"].as_u64().unwrap())
        .collect()
}

#[test]
fn a_chat_opens_at_its_latest_window_and_its_cursors_walk_back_to_the_first_event() {
    let db = db();
    let store = long_chat(&db, 25);
    let first = window_of(&store, "limit=10");
    assert_eq!(indices(&first), (15..25).collect::<Vec<_>>());
    assert_eq!((first.first_event_index, first.event_count), (15, 25));
    let mut seen = indices(&first);
    let mut cursor = first.before_cursor.clone();
    while let Some(c) = cursor {
        let page = window_of(&store, &format!("limit=10&before={c}"));
        assert_eq!(page.event_count, 25);
        seen.splice(0..0, indices(&page));
        cursor = page.before_cursor.clone();
    }
    assert_eq!(seen, (0..25).collect::<Vec<_>>());
    let whole = store.get("c1").unwrap();
    assert_eq!(
        (
            indices(&whole).len(),
            whole.first_event_index,
            whole.before_cursor
        ),
        (25, 0, None)
    );
}

#[test]
fn a_window_after_a_branch_carries_the_newest_marker_before_it() {
    let db = db();
    let store = long_chat(&db, 10);
    let marker = |n: u64| json!({ "type": "eve-chat.branch", "data": { "parent": "root", "at": n }, "meta": { "id": format!("b{n}"), "local": true } });
    store
        .append("c1", &[at(3, &marker(1)), at(6, &marker(2))], None, 3)
        .unwrap();
    let w = window_of(&store, "limit=2");
    let before = w.branch_before.expect("the marker at slot 6");
    assert_eq!(
        (before.event_index, before.event["data"]["at"].clone()),
        (6, json!(2))
    );
    assert_eq!(
        window_of(&store, "limit=5")
            .branch_before
            .unwrap()
            .event_index,
        3
    );
    assert_eq!(window_of(&store, "limit=10").branch_before, None);
}

#[test]
fn a_tail_snapshot_keeps_the_slots_before_it_and_searches_the_whole_log() {
    let db = db();
    let store = ChatStore::new(&db, "u");
    store.create("c1", None, 1).unwrap();
    let said = |i: u64, text: &str| json!({ "type": "message.received", "data": { "message": text, "sequence": i, "turnId": format!("turn_{i}") }, "meta": { "at": "t", "id": format!("e{i}") } });
    let log: Vec<Value> = (0..1200).map(|i| said(i, &format!("words{i}"))).collect();
    let stored_log: Vec<(u64, StoredEvent)> = (0..).zip(log.iter().map(stored)).collect();
    store.append("c1", &stored_log, Some(0), 2).unwrap();
    // The client holds slots 1100.. and saves them with one event fewer and one new one.
    let tail: Vec<Value> = log[1100..1199]
        .iter()
        .cloned()
        .chain([said(5000, "zebra")])
        .collect();
    let text = store.snapshot_search_text("c1", 1100, &tail).unwrap();
    assert!(
        text.starts_with("words0\nwords1\n") && text.ends_with("words1198\nzebra"),
        "{}",
        &text[text.len() - 40..]
    );
    let events: Vec<StoredEvent> = tail.iter().map(stored).collect();
    let write = eve_store::store::SnapshotWrite {
        from: 1100,
        events: &events,
        search_text: &text,
        session: &SessionUpdate::Keep,
        base: Some(1200),
    };
    assert_eq!(
        store.save_snapshot_at("c1", &write, 3).unwrap().event_count,
        1200
    );
    let all = store.export("c1", 4).unwrap().events;
    assert_eq!(all.len(), 1200);
    assert_eq!(
        (all[0].clone(), all[1099].clone()),
        (log[0].clone(), log[1099].clone())
    );
    assert_eq!(all[1199]["data"]["message"], "zebra");
    // A stale base refuses the tail whole, as it does a whole snapshot.
    let stale = eve_store::store::SnapshotWrite {
        base: Some(7),
        ..write
    };
    assert_eq!(
        store
            .save_snapshot_at("c1", &stale, 5)
            .unwrap_err()
            .status(),
        409
    );
    // Another principal's chat: nothing is read for its search text.
    let other = ChatStore::new(&db, "v");
    assert_eq!(
        other
            .snapshot_search_text("c1", 1100, &tail)
            .unwrap_err()
            .status(),
        404
    );
}

#[test]
fn opening_a_long_chat_seeks_its_indexes_instead_of_walking_its_log() {
    use eve_store::persistence::{
        LATEST_SETTLING_EVENT_AT, SELECT_BRANCH_BEFORE, SELECT_EVENTS_BEFORE,
    };
    let db = db();
    let plan = |sql: &str, params: Vec<eve_store::SqlValue>| -> String {
        db.execute(&format!("EXPLAIN QUERY PLAN {sql}"), params)
            .unwrap()
            .iter()
            .map(|row| eve_store::sql::text_at(row, 3))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let branch = plan(SELECT_BRANCH_BEFORE, vec!["c1".into(), 5i64.into()]);
    assert!(
        branch.contains(
            "INDEX idx_chat_event_chat_type (chat_id=? AND event_type=? AND event_index<?)"
        ),
        "{branch}"
    );
    let window = plan(
        SELECT_EVENTS_BEFORE,
        vec!["c1".into(), 5i64.into(), 3i64.into()],
    );
    assert!(
        window.contains("INDEX idx_chat_event_chat_index (chat_id=? AND event_index<?)"),
        "{window}"
    );
    let settling = plan(LATEST_SETTLING_EVENT_AT, vec!["c1".into()]);
    assert!(
        settling.contains("COVERING INDEX idx_chat_event_chat_type"),
        "{settling}"
    );
}
