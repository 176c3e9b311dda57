//! Attachments (issue 13 item 7), end to end through `eve-proxy` and the `agent` in the local
//! host with real SQLite: eve's file parts reach the model in each provider's shape (the local
//! providers speak OpenAI's and Anthropic's wire formats; the assertions are on the request
//! bodies they receive), the upload policy answers 413 / 415 as eve does with nothing kept,
//! the per-principal quota holds, a chat's delete takes its files with it, and no one reads
//! another principal's file.

#[allow(dead_code)]
use crate::llm_server;

use base64::Engine;
use eve_chat_tests::eve::{create, error_of, of_type, read_until_settled, send};
use eve_chat_tests::{Host, HostOptions};
use llm_server::{LlmServer, Script};
use serde_json::{json, Value};

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// A PNG signature and header, padded: what the agent checks before it sends bytes as an image.
fn png(len: usize) -> Vec<u8> {
    let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    b.resize(len, 7);
    b
}

const PDF: &[u8] = b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF";

fn file(media_type: &str, filename: &str, bytes: &[u8]) -> Value {
    json!({"type": "file", "mediaType": media_type, "filename": filename, "data": B64.encode(bytes)})
}

fn data_url(media_type: &str, filename: &str, bytes: &[u8]) -> Value {
    json!({"type": "file", "mediaType": media_type, "filename": filename,
           "data": format!("data:{media_type};base64,{}", B64.encode(bytes))})
}

fn host(vars: &[(&str, &str)]) -> Host {
    let mut o = HostOptions::default()
        .var("demo_pacing_ms", "0")
        .var("chat_send_per_hour", "1000");
    for (k, v) in vars {
        o = o.var(k, v);
    }
    Host::start(o).expect("a local host")
}

fn sqlite(h: &Host) -> rusqlite::Connection {
    let path = h.state_dir().expect("own host").join("sqlite_db.db");
    rusqlite::Connection::open(path).expect("the host's database")
}

fn count(db: &rusqlite::Connection, sql: &str) -> i64 {
    db.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// What the stores hold: sessions, inbox rows, attachments and their bytes.
fn stored(db: &rusqlite::Connection) -> (i64, i64, i64, i64) {
    (
        count(db, "SELECT count(*) FROM eve_session"),
        count(db, "SELECT count(*) FROM eve_inbox"),
        count(db, "SELECT count(*) FROM eve_attachment"),
        count(
            db,
            "SELECT coalesce(sum(bytes), 0) FROM storage_usage WHERE scope LIKE 'attachments:%'",
        ),
    )
}

/// The file parts of the first `message.received` of `events`.
fn received_files(events: &[Value]) -> Vec<Value> {
    of_type(events, "message.received")[0]["data"]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["type"] == "file")
        .cloned()
        .collect()
}

/// The user message of the model call: the last message with role `user`.
fn last_user_content(body: &Value) -> Vec<Value> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .as_array()
        .unwrap_or_else(|| panic!("content parts: {body}"))
        .clone()
}

#[test]
fn files_reach_an_openai_compatible_provider_as_image_url_file_and_text_parts() {
    let server = LlmServer::start(vec![
        Script::openai_text("a picture"),
        Script::openai_text("still"),
    ]);
    let h = host(&[
        ("llm_provider", "openai"),
        ("llm_api_key", "test-key"),
        ("llm_model", "gpt-test"),
        ("llm_base_url", &format!("{}/v1", server.base)),
        ("attachment_max_bytes", "600000"),
    ]);
    // Larger than the 256 KiB body cap of other routes: the message route makes room for it.
    let image = png(400_000);
    let sid = create(
        &h,
        &json!({"message": [
            {"type": "text", "text": "what are these?"},
            data_url("image/png", "photo.png", &image),
            file("application/pdf", "report.pdf", PDF),
            file("text/csv", "table.csv", b"city,t\nOslo,3"),
        ]}),
    );
    let events = read_until_settled(&h, &sid, 0);
    assert!(of_type(&events, "turn.completed").len() == 1, "{events:?}");

    let bodies = server.bodies();
    assert_eq!(bodies.len(), 1);
    let c = last_user_content(&bodies[0]);
    assert_eq!(c[0], json!({"type": "text", "text": "what are these?"}));
    assert_eq!(c[1]["text"], "Attached file photo.png (image/png)");
    assert_eq!(
        c[2],
        json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", B64.encode(&image))}})
    );
    assert_eq!(c[3]["text"], "Attached file report.pdf (application/pdf)");
    assert_eq!(
        c[4],
        json!({"type": "file", "file": {"filename": "report.pdf", "file_data": format!("data:application/pdf;base64,{}", B64.encode(PDF))}})
    );
    assert_eq!(
        c[5]["text"],
        "Attached file table.csv (text/csv):\n\ncity,t\nOslo,3"
    );

    // The stream names the files, never their bytes; each has a URL of its own.
    let files = received_files(&events);
    assert_eq!(files.len(), 3);
    assert_eq!(files[0]["filename"], "photo.png");
    assert_eq!(files[0]["mediaType"], "image/png");
    assert_eq!(files[0]["size"], 400_000);
    let log = serde_json::to_string(&events).unwrap();
    assert!(!log.contains(&B64.encode(PDF)), "no bytes in the log");
    let url = files[0]["url"].as_str().unwrap();
    let got = h.get(url);
    assert_eq!(got.status, 200);
    assert_eq!(got.header("content-type"), Some("image/png"));
    assert_eq!(got.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(got.body, image);
    // Not an image: a download, never rendered on the app's origin.
    let pdf = h.get(files[1]["url"].as_str().unwrap());
    assert_eq!(pdf.header("content-type"), Some("application/octet-stream"));
    assert!(pdf
        .header("content-disposition")
        .unwrap()
        .starts_with("attachment"));
    assert_eq!(pdf.body, PDF);

    // The next turn's model call still sees the earlier files (read back from the store).
    let r = send(&h, &sid, &json!({"message": "and now?"}));
    assert_eq!(r.status, 202, "{}", r.text());
    read_until_settled(&h, &sid, events.len() as u64);
    let second = &server.bodies()[1];
    let history = serde_json::to_string(&second["messages"]).unwrap();
    assert!(history.contains(&B64.encode(PDF)), "{history}");
}

#[test]
fn files_reach_anthropic_as_image_document_and_text_blocks() {
    let server = LlmServer::start(vec![Script::anthropic_text("seen")]);
    let h = host(&[
        ("llm_provider", "anthropic"),
        ("llm_api_key", "test-key"),
        ("llm_model", "claude-test"),
        ("llm_base_url", server.base.as_str()),
    ]);
    let image = png(2_000);
    // Files only, no text: no empty text block (Anthropic refuses one).
    let sid = create(
        &h,
        &json!({"message": [
            file("image/png", "p.png", &image),
            file("application/pdf", "r.pdf", PDF),
            file("application/json", "d.json", br#"{"a":1}"#),
        ]}),
    );
    let events = read_until_settled(&h, &sid, 0);
    assert_eq!(of_type(&events, "turn.completed").len(), 1, "{events:?}");
    let bodies = server.bodies();
    let c = last_user_content(&bodies[0]);
    assert_eq!(c.len(), 5, "{c:?}");
    assert_eq!(c[0]["text"], "Attached file p.png (image/png)");
    assert_eq!(
        c[1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64.encode(&image)}})
    );
    assert_eq!(
        c[3],
        json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": B64.encode(PDF)}})
    );
    assert_eq!(
        c[4]["text"],
        "Attached file d.json (application/json):\n\n{\"a\":1}"
    );
}

#[test]
fn a_file_over_the_cap_is_413_a_refused_type_415_as_eve_answers_and_nothing_is_kept() {
    let h = host(&[
        ("attachment_max_bytes", "1000"),
        ("attachment_types", "image/*,text/plain"),
    ]);
    let db = sqlite(&h);
    let sid = create(&h, &json!({"message": "hello"}));
    let settled = read_until_settled(&h, &sid, 0);
    let before = stored(&db);

    let too_big = json!({"message": [{"type": "text", "text": "see"}, file("text/plain", "big.txt", &[b'a'; 1001])]});
    let wrong = json!({"message": [file("application/zip", "a.zip", b"PK\x03\x04"), file("text/plain", "big.txt", &[b'a'; 1001])]});
    for (body, status) in [(&too_big, 413), (&wrong, 415)] {
        for r in [
            h.json("POST", "/eve/v1/session", body),
            send(&h, &sid, body),
        ] {
            assert_eq!(r.status, status, "{}", r.text());
            let v = r.json();
            assert_eq!(v["ok"], false);
            if status == 413 {
                assert_eq!(
                    v["error"],
                    "big.txt (1001 bytes) exceeds the 1000-byte upload limit."
                );
                assert_eq!(
                    v["violations"],
                    json!([{"byteLength": 1001, "filename": "big.txt", "kind": "too-large", "limit": 1000, "mediaType": "text/plain"}])
                );
            } else {
                assert_eq!(
                    v["error"],
                    "a.zip has media type \"application/zip\" which is not allowed by this route. Allowed: image/*, text/plain."
                );
                // Every violation, media type checked first.
                assert_eq!(v["violations"][0]["kind"], "disallowed-media-type");
                assert_eq!(v["violations"][1]["kind"], "too-large");
            }
        }
    }
    // A body past the message route's cap (256 KiB + one 1000-byte file in base64) is refused
    // before it is parsed.
    // Sent while the answer is read, as a browser sends it: the refusal comes from the head
    // and neither Spin nor the local host reads the rest (a client that wrote it all first
    // could lose the answer to the reset).
    let huge = json!({"message": [file("text/plain", "huge.txt", &vec![b'a'; 300_000])]});
    let origin = h.origin();
    let r = eve_chat_tests::raw::send_while_reading(
        &h,
        "POST",
        &format!("/eve/v1/session/{sid}"),
        &[
            ("content-type", "application/json"),
            ("origin", &origin),
            ("sec-fetch-site", "same-origin"),
        ],
        serde_json::to_vec(&huge).unwrap(),
    );
    assert_eq!(r.status, 413, "{}", r.text());
    assert_eq!(r.error_code().as_deref(), Some("payload_too_large"));
    // Malformed parts are a 400.
    for bad in [
        json!({"message": [{"type": "file", "mediaType": "text/plain", "data": "%%%"}]}),
        json!({"message": [{"type": "file", "mediaType": "nonsense", "data": "aGk="}]}),
        json!({"message": [{"type": "file", "mediaType": "text/plain"}]}),
    ] {
        let r = send(&h, &sid, &bad);
        assert_eq!(r.status, 400, "{bad}: {}", r.text());
    }
    assert_eq!(stored(&db), before, "nothing kept");
    let after = eve_chat_tests::eve::snapshot(&h, &sid, 0);
    assert_eq!(after.len(), settled.len(), "no event written");
}

#[test]
fn files_past_the_principals_quota_are_refused_and_nothing_is_kept() {
    let h = host(&[
        ("attachment_max_bytes", "2000"),
        ("attachment_quota_bytes", "3000"),
    ]);
    let db = sqlite(&h);
    let sid = create(
        &h,
        &json!({"message": [file("text/plain", "a.txt", &[b'a'; 1500])]}),
    );
    let events = read_until_settled(&h, &sid, 0);
    assert_eq!(received_files(&events)[0]["size"], 1500);
    let before = stored(&db);
    assert_eq!(before.2, 1);
    assert_eq!(before.3, 1500);
    // 1500 + 1000 + 600 > 3000: the whole message is refused, not only its second file.
    let over = json!({"message": [file("text/plain", "b.txt", &[b'b'; 1000]), file("text/plain", "c.txt", &[b'c'; 600])]});
    for r in [
        send(&h, &sid, &over),
        h.json("POST", "/eve/v1/session", &over),
    ] {
        assert_eq!(r.status, 413, "{}", r.text());
        let (code, error) = error_of(&r);
        assert_eq!(code.as_deref(), Some("attachment_quota_exceeded"));
        assert!(error.contains("3000-byte"), "{error}");
    }
    assert_eq!(stored(&db), before);
    // What fits is still taken.
    let r = send(
        &h,
        &sid,
        &json!({"message": [file("text/plain", "d.txt", &[b'd'; 1500])]}),
    );
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(stored(&db).3, 3000);
}

#[test]
fn deleting_the_chat_deletes_its_attachments_and_gives_their_bytes_back() {
    let h = host(&[]);
    let db = sqlite(&h);
    let r = h.json("POST", "/api/chats", &json!({}));
    assert_eq!(r.status, 201, "{}", r.text());
    let chat = r.json()["chat"]["id"].as_str().unwrap().to_string();
    let sid = create(
        &h,
        &json!({"message": [{"type": "text", "text": "keep this"}, file("image/png", "p.png", &png(5000))]}),
    );
    let events = read_until_settled(&h, &sid, 0);
    let r = h.json(
        "PUT",
        &format!("/api/chats/{chat}/session"),
        &json!({"session": {"sessionId": sid, "streamIndex": events.len()}}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let url = received_files(&events)[0]["url"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(h.get(&url).status, 200);
    let principal = |db: &rusqlite::Connection| {
        count(
            db,
            "SELECT coalesce(sum(bytes), 0) FROM storage_usage WHERE scope LIKE 'principal:%'",
        )
    };
    let with_file = principal(&db);
    assert_eq!(stored(&db).2, 1);

    let r = h.send(
        "DELETE",
        &format!("/api/chats/{chat}"),
        &[("origin", h.origin().as_str())],
        None,
    );
    assert_eq!(r.status, 204, "{}", r.text());
    assert_eq!(stored(&db).2, 0, "the attachment row is gone");
    assert_eq!(stored(&db).3, 0, "its bytes are given back");
    assert!(
        principal(&db) <= with_file - 5000,
        "the principal's total too"
    );
    assert_eq!(h.get(&url).status, 404);
}

/// Issue 19 item 7: an attachment is not kept in the browser's cache, where it would outlive a
/// logout or the chat's delete (it was `private, max-age=86400`).
#[test]
fn an_attachment_is_never_kept_in_the_browser_cache() {
    let h = host(&[]);
    let sid = create(
        &h,
        &json!({"message": [file("image/png", "p.png", &png(2000)), file("text/plain", "n.txt", b"notes")]}),
    );
    let events = read_until_settled(&h, &sid, 0);
    let files = received_files(&events);
    assert_eq!(files.len(), 2);
    for f in files {
        let r = h.get(f["url"].as_str().unwrap());
        assert_eq!(r.status, 200);
        assert_eq!(r.header("cache-control"), Some("no-store"), "{f}");
    }
}

const SECRET: &str = "a-session-secret-of-at-least-32-characters";
const PASSWORD: &str = "correct horse battery staple";

#[test]
fn another_principal_can_neither_read_nor_claim_an_attachment() {
    let mut dev = host(&[]);
    let sid = create(
        &dev,
        &json!({"message": [file("image/png", "mine.png", &png(3000))]}),
    );
    let events = read_until_settled(&dev, &sid, 0);
    let file_part = &received_files(&events)[0];
    let url = file_part["url"].as_str().unwrap().to_string();
    let id = file_part["attachmentId"].as_str().unwrap().to_string();
    assert_eq!(dev.get(&url).status, 200);
    dev.stop();

    let other = dev.on_same_state_in_password_mode(SECRET, PASSWORD);
    let cookie = other.password_login(PASSWORD);
    let origin = other.origin();
    let read = other.send("GET", &url, &[("cookie", cookie.as_str())], None);
    assert_eq!(read.status, 404, "{}", read.text());
    assert!(!read.body.windows(4).any(|w| w == b"IHDR"));
    // Naming someone's attachment in a message of one's own is refused.
    let forged = json!({"message": [{"type": "file", "mediaType": "image/png", "attachmentId": id, "data": "aGk="}]});
    let r = other.send(
        "POST",
        "/eve/v1/session",
        &[
            ("cookie", cookie.as_str()),
            ("origin", origin.as_str()),
            ("content-type", "application/json"),
        ],
        Some(&serde_json::to_vec(&forged).unwrap()),
    );
    assert_eq!(r.status, 400, "{}", r.text());
    // Without a session: 401, as every eve route.
    assert_eq!(other.get(&url).status, 401);
}
