//! A message that names project files (`projectFileId`), through the routes' decisions and
//! the work loop on real SQLite: checked against the chat's project and the caller before
//! anything is kept, and read by the model call as each provider's own parts.

use eve_api::eve::{Event, ReceivedPart};
use eve_store::sql::Sql;

use super::tests::{db, request, Lent, OFFLINE};
use crate::protocol::SessionRequest;
use crate::providers::{anthropic, model, openai};
use crate::service::project_files::stored_bytes;
use crate::service::sessions;
use crate::service::work::{drain, First};
use crate::session::store::testing::Lite;
use crate::session::store::AgentStore;
use crate::session::transcript;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

fn chat(db: &Lite, id: &str, owner: &str, project: Option<&str>) {
    db.execute(
        "INSERT INTO chat (id, owner, title, created_at, updated_at) VALUES (?1, ?2, 't', 1, 1)",
        vec![id.into(), owner.into()],
    )
    .unwrap();
    eve_projects::projects::set_chat_project(db, owner, id, project).unwrap();
}

fn file(db: &Lite, owner: &str, project: &str, id: &str, name: &str, media: &str, data: &[u8]) {
    let scope = eve_projects::project_scope(project);
    let new = eve_projects::files::NewFile {
        principal: owner,
        scope: &scope,
        id,
        name,
        media_type: media,
        data: data.to_vec(),
        now: 1,
        default_max: 1 << 30,
    };
    eve_projects::files::upload(db, "/u", new).unwrap();
}

/// alice: project prj_a (a CSV and a PNG) with chat chat_in, project prj_b (one file), and
/// chat chat_out in no project; bob: project prj_bob with one file.
fn world() -> Lite {
    let db = db();
    for (owner, p) in [("alice", "prj_a"), ("alice", "prj_b"), ("bob", "prj_bob")] {
        eve_projects::projects::create(&db, owner, p, p, "", 1).unwrap();
    }
    file(
        &db,
        "alice",
        "prj_a",
        "file_csv",
        "data.csv",
        "text/csv",
        b"a,b\n1,2\n",
    );
    file(
        &db,
        "alice",
        "prj_a",
        "file_png",
        "dot.png",
        "image/png",
        PNG,
    );
    file(
        &db,
        "alice",
        "prj_b",
        "file_b",
        "b.txt",
        "text/plain",
        b"other",
    );
    file(
        &db,
        "bob",
        "prj_bob",
        "file_bob",
        "bob.txt",
        "text/plain",
        b"bob's",
    );
    chat(&db, "chat_in", "alice", Some("prj_a"));
    chat(&db, "chat_out", "alice", None);
    db
}

fn body(ids: &[&str], chat: Option<&str>) -> String {
    let mut parts = vec![serde_json::json!({"type": "text", "text": "use these"})];
    for id in ids {
        // The client's type and name are replaced by the stored file's.
        parts.push(
            serde_json::json!({"type": "file", "mediaType": "application/octet-stream",
            "filename": "x", "projectFileId": id}),
        );
    }
    serde_json::json!({"message": parts, "chatId": chat}).to_string()
}

fn count(db: &Lite, table: &str) -> i64 {
    let rows = db
        .execute(&format!("SELECT count(*) FROM {table}"), vec![])
        .unwrap();
    rows[0][0].as_i64().unwrap()
}

fn create(db: &Lite, ids: &[&str], chat: Option<&str>) -> Result<String, u16> {
    let r = request(&body(ids, chat), true);
    let (lent, id) =
        sessions::create(&OFFLINE, || Ok(Lent(db)), "alice", r, chat).map_err(|e| e.status)?;
    if let Some(chat) = chat {
        eve_projects::projects::record_chat_session(&lent, "alice", chat, &id).unwrap();
    }
    drain(&OFFLINE, &lent, &id, "alice", First::Nothing, None);
    Ok(id)
}

#[test]
fn a_message_names_files_of_its_chats_project_and_the_model_gets_their_bytes() {
    let db = world();
    let id = create(&db, &["file_csv", "file_png"], Some("chat_in")).unwrap();
    let events = AgentStore::new(&db).all_events(&id).unwrap();
    let Some(Event::MessageReceived(m)) =
        events.iter().find(|e| e.type_name() == "message.received")
    else {
        panic!("message.received")
    };
    let files: Vec<_> = m
        .parts
        .iter()
        .filter(|p| matches!(p, ReceivedPart::File { .. }))
        .collect();
    assert_eq!(
        serde_json::to_value(files[0]).unwrap(),
        serde_json::json!({"type": "file", "filename": "data.csv", "mediaType": "text/csv",
            "size": 8, "url": "/api/projects/prj_a/files/file_csv/download",
            "projectFileId": "file_csv"})
    );
    // Not copied: no attachment kept, the project's bytes counted once.
    assert_eq!(count(&db, "eve_attachment"), 0);

    // What the next model call gets: read just before it, as each provider's own parts.
    let mut messages = transcript::messages(&events);
    model::resolve_files(&mut messages, &mut |f| stored_bytes(&db, "alice", f));
    let call = model::ModelRequest {
        system: String::new(),
        messages,
        tools: vec![],
    };
    let o = openai::request_body("m", &call).to_string();
    assert!(
        o.contains("Attached file data.csv (text/csv):\\n\\na,b\\n1,2\\n"),
        "{o}"
    );
    assert!(
        o.contains(r#""image_url":{"url":"data:image/png;base64,"#),
        "{o}"
    );
    let a = anthropic::request_body("m", &call);
    let blocks = a["messages"][0]["content"].as_array().unwrap();
    assert!(
        blocks
            .iter()
            .any(|b| b["type"] == "image" && b["source"]["media_type"] == "image/png"),
        "{a}"
    );
    assert!(
        blocks
            .iter()
            .any(|b| b["text"].as_str().is_some_and(|t| t.contains("a,b\n1,2"))),
        "{a}"
    );
    // Another principal's read of the same id gets nothing.
    assert_eq!(stored_bytes(&db, "bob", "file_csv"), None);

    // A later message of the session: checked against the session's project.
    let r = request(&body(&["file_b"], None), false);
    let inbox = count(&db, "eve_inbox");
    let refused = sessions::send(&OFFLINE, || Ok(Lent(&db)), "alice", &id, r).map(|_| ());
    assert_eq!(refused.map_err(|e| e.status), Err(404));
    assert_eq!(count(&db, "eve_inbox"), inbox);
}

#[test]
fn another_project_another_principal_or_no_project_is_refused_and_nothing_is_written() {
    for (ids, chat, status) in [
        (&["file_b"][..], Some("chat_in"), 404), // the caller's, another project's
        (&["file_bob"][..], Some("chat_in"), 404), // another principal's
        (&["file_gone"][..], Some("chat_in"), 404),
        (&["file_csv"][..], Some("chat_out"), 400), // a chat in no project
        (&["file_csv"][..], None, 400),             // no chat named
        (&["file_csv", "file_b"][..], Some("chat_in"), 404),
    ] {
        let db = world();
        let before = (count(&db, "eve_session"), count(&db, "eve_inbox"));
        assert_eq!(create(&db, ids, chat), Err(status), "{ids:?} {chat:?}");
        assert_eq!((count(&db, "eve_session"), count(&db, "eve_inbox")), before);
    }
    // Bytes and a reference in one part: a 400 before the database is read.
    let bad = r#"{"message":[{"type":"file","mediaType":"text/plain","data":"aGk=","projectFileId":"file_csv"}]}"#;
    let SessionRequest::Message(m) = request(bad, true) else {
        panic!("a message")
    };
    let policy = crate::protocol::uploads::UploadPolicy::default();
    assert_eq!(
        crate::protocol::uploads::check(&m.parts, &policy)
            .unwrap_err()
            .status,
        400
    );
}
