//! Projects (issue 21, docs/projects.md) with the real components in the local host and real
//! SQLite: projects' CRUD, chats moved in and out and listed by project, project files
//! (upload, list, download, mark final, delete) with refusals that change nothing, another
//! person's project, file or chat answering 404, and the agent: the project's instructions in
//! what the (local, fake OpenAI-compatible) model receives from a chat's first turn on, the
//! file tools, and the issue's scenario — a CSV uploaded, cleaned by the agent into a new
//! file, marked final, and a later overwrite refused as a tool error the model sees. Deleting
//! the project takes its chats, their sessions and its files.
//!
//! Two people in accounts mode (open sign-up), each with their own cookie.

#[allow(dead_code)]
use crate::llm_server;

use std::time::Duration;

use eve_chat_tests::accounts::*;
use eve_chat_tests::eve::{history_as, is_settling, parse_ndjson, types};
use eve_chat_tests::Host;
use llm_server::{LlmServer, Script};
use serde_json::{json, Value};

const SETTLE: Duration = Duration::from_secs(60);

fn person(h: &Host, name: &str) -> User {
    signed_up(
        h,
        json!({"email": format!("{name}@open.example"), "password": PASSWORD}),
    )
}

fn files(h: &Host, u: &User, project: &str) -> Vec<Value> {
    let path = format!("/api/projects/{project}/files");
    let v = ok(call(h, "GET", &path, Some(&u.cookie), None), 200);
    v["files"].as_array().unwrap().clone()
}

fn db_count(h: &Host, sql: &str, param: &str) -> i64 {
    count(h, sql, param)
}

fn stored_bytes(h: &Host, principal: &str) -> i64 {
    database(h)
        .query_row(
            "SELECT coalesce((SELECT bytes FROM storage_usage WHERE scope = 'principal:' || ?1), 0)",
            [principal],
            |r| r.get(0),
        )
        .unwrap()
}

#[test]
fn projects_are_created_renamed_listed_and_deleted_and_anothers_is_a_404() {
    let Some(h) = host(&[]) else { return };
    let (alice, bob) = (person(&h, "alice"), person(&h, "bob"));
    let id = new_project(&h, &alice, "  Audit   2025 ", "Answer in French.");
    let path = format!("/api/projects/{id}");
    let got = ok(call(&h, "GET", &path, Some(&alice.cookie), None), 200);
    assert_eq!(got["project"]["name"], "Audit 2025");
    assert_eq!(got["project"]["instructions"], "Answer in French.");
    let patched = ok(
        call(
            &h,
            "PATCH",
            &path,
            Some(&alice.cookie),
            Some(&json!({"name": "Audit"})),
        ),
        200,
    );
    assert_eq!(patched["project"]["name"], "Audit");
    assert_eq!(patched["project"]["instructions"], "Answer in French.");
    let list = ok(
        call(&h, "GET", "/api/projects", Some(&alice.cookie), None),
        200,
    );
    assert_eq!(list["projects"].as_array().unwrap().len(), 1);
    // An API token works as the cookie does (no same-origin headers: not a browser).
    let token = ok(
        call(
            &h,
            "POST",
            "/api/tokens",
            Some(&alice.cookie),
            Some(&json!({"name": "cli"})),
        ),
        201,
    )["token"]
        .as_str()
        .unwrap()
        .to_string();
    let bearer = format!("Bearer {token}");
    let r = h.send("GET", &path, &[("authorization", &bearer)], None);
    assert_eq!(ok(r, 200)["project"]["id"], id.as_str());

    // Bob sees none of it, exactly as if it did not exist; nothing he sends changes it.
    assert!(ok(
        call(&h, "GET", "/api/projects", Some(&bob.cookie), None),
        200
    )["projects"]
        .as_array()
        .unwrap()
        .is_empty());
    let files_path = format!("{path}/files");
    for (method, p, body) in [
        ("GET", path.as_str(), None),
        ("PATCH", path.as_str(), Some(json!({"name": "mine"}))),
        ("DELETE", path.as_str(), None),
        ("GET", files_path.as_str(), None),
        ("GET", "/api/projects/prj_nothing", None),
    ] {
        let r = call(&h, method, p, Some(&bob.cookie), body.as_ref());
        assert_eq!(
            (r.status, code(&r)),
            (404, "not_found".into()),
            "{method} {p}"
        );
    }
    assert_eq!(
        upload(&h, &bob, &id, "x.txt", "text/plain", b"x").status,
        404
    );

    // Bad input is a 400, a cross-site write a 403, no sign-in a 401: nothing changes.
    for body in [
        json!({"name": "   "}),
        json!({"name": "x".repeat(201)}),
        json!({"name": 3}),
    ] {
        let r = call(
            &h,
            "POST",
            "/api/projects",
            Some(&alice.cookie),
            Some(&body),
        );
        assert_eq!(r.status, 400, "{body}: {}", r.text());
    }
    let long = json!({"instructions": "x".repeat(8001)});
    assert_eq!(
        call(&h, "PATCH", &path, Some(&alice.cookie), Some(&long)).status,
        400
    );
    let cross = h.send(
        "DELETE",
        &path,
        &[("cookie", &alice.cookie), ("sec-fetch-site", "cross-site")],
        None,
    );
    assert_eq!(cross.status, 403, "{}", cross.text());
    assert_eq!(h.get("/api/projects").status, 401);
    assert_eq!(
        call(&h, "PUT", &path, Some(&alice.cookie), None).status,
        405
    );
    let got = ok(call(&h, "GET", &path, Some(&alice.cookie), None), 200);
    assert_eq!(got["project"]["name"], "Audit");

    ok(call(&h, "DELETE", &path, Some(&alice.cookie), None), 204);
    // A retry finds nothing left.
    assert_eq!(
        call(&h, "DELETE", &path, Some(&alice.cookie), None).status,
        404
    );
    assert_eq!(
        db_count(&h, "SELECT count(*) FROM project WHERE id = ?1", &id),
        0
    );
}

#[test]
fn chats_start_in_a_project_move_in_and_out_and_the_list_filters_by_project() {
    let Some(h) = host(&[]) else { return };
    let (alice, bob) = (person(&h, "alice"), person(&h, "bob"));
    let p = new_project(&h, &alice, "P", "");
    let theirs = new_project(&h, &bob, "B", "");
    let created = ok(
        call(
            &h,
            "POST",
            "/api/chats",
            Some(&alice.cookie),
            Some(&json!({"projectId": p})),
        ),
        201,
    );
    let c1 = created["chat"]["id"].as_str().unwrap().to_string();
    assert_eq!(created["chat"]["projectId"], p.as_str());
    let loose = ok(
        call(
            &h,
            "POST",
            "/api/chats",
            Some(&alice.cookie),
            Some(&json!({})),
        ),
        201,
    );
    let c2 = loose["chat"]["id"].as_str().unwrap().to_string();
    assert_eq!(loose["chat"]["projectId"], Value::Null);

    // Bob's project: 404, and no chat is created.
    let before = db_count(
        &h,
        "SELECT count(*) FROM chat WHERE owner = ?1",
        &format!("user:{}", alice.id),
    );
    let body = json!({"projectId": theirs});
    let r = call(&h, "POST", "/api/chats", Some(&alice.cookie), Some(&body));
    assert_eq!(r.status, 404, "{}", r.text());
    let after = db_count(
        &h,
        "SELECT count(*) FROM chat WHERE owner = ?1",
        &format!("user:{}", alice.id),
    );
    assert_eq!(before, after);

    let listed = |query: &str| -> Vec<(String, Value)> {
        let v = ok(
            call(
                &h,
                "GET",
                &format!("/api/chats{query}"),
                Some(&alice.cookie),
                None,
            ),
            200,
        );
        v["chats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["id"].as_str().unwrap().to_string(),
                    c["projectId"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(listed(&format!("?projectId={p}")), [(c1.clone(), json!(p))]);
    let all = listed("");
    assert!(all.contains(&(c1.clone(), json!(p))) && all.contains(&(c2.clone(), Value::Null)));

    // Move c2 in, c1 out; the title is kept; the detail says where the chat is.
    let moved = ok(
        call(
            &h,
            "PATCH",
            &format!("/api/chats/{c2}"),
            Some(&alice.cookie),
            Some(&json!({"projectId": p})),
        ),
        200,
    );
    assert_eq!(moved["chat"]["projectId"], p.as_str());
    let out = ok(
        call(
            &h,
            "PATCH",
            &format!("/api/chats/{c1}"),
            Some(&alice.cookie),
            Some(&json!({"projectId": null, "title": "Out"})),
        ),
        200,
    );
    assert_eq!(
        (
            out["chat"]["projectId"].clone(),
            out["chat"]["title"].clone()
        ),
        (Value::Null, json!("Out"))
    );
    assert_eq!(listed(&format!("?projectId={p}")), [(c2.clone(), json!(p))]);
    let detail = ok(
        call(
            &h,
            "GET",
            &format!("/api/chats/{c2}"),
            Some(&alice.cookie),
            None,
        ),
        200,
    );
    assert_eq!(detail["chat"]["projectId"], p.as_str());

    // Into someone else's project, someone else's chat, a filter on someone else's project:
    // 404, nothing moved. A projectId that is not a string or null: 400.
    let chat = format!("/api/chats/{c2}");
    let filter = format!("/api/chats?projectId={theirs}");
    for (who, method, path, body, status) in [
        (
            &alice,
            "PATCH",
            &chat,
            Some(json!({"projectId": theirs})),
            404,
        ),
        (&bob, "PATCH", &chat, Some(json!({"projectId": null})), 404),
        (&alice, "GET", &filter, None, 404),
        (&alice, "PATCH", &chat, Some(json!({"projectId": 7})), 400),
        (&alice, "PATCH", &chat, Some(json!({})), 400),
    ] {
        let r = call(&h, method, path, Some(&who.cookie), body.as_ref());
        assert_eq!(r.status, status, "{method} {path} {body:?}: {}", r.text());
    }
    assert_eq!(listed(&format!("?projectId={p}")), [(c2.clone(), json!(p))]);
}

#[test]
fn files_upload_list_download_delete_and_every_refusal_changes_nothing() {
    let Some(h) = host(&[
        ("attachment_max_bytes", "4096"),
        ("attachment_types", "text/*,image/png"),
        ("principal_max_bytes", "60000"),
    ]) else {
        return;
    };
    let (alice, bob) = (person(&h, "alice"), person(&h, "bob"));
    let principal = format!("user:{}", alice.id);
    let p = new_project(&h, &alice, "P", "");
    let csv = b"name,qty\n a ,1\nb,2\n";
    let up = ok(
        upload(&h, &alice, &p, "../données\u{202e}.csv", "text/csv", csv),
        201,
    )["file"]
        .clone();
    assert_eq!(
        up["name"], "données.csv",
        "the last segment, no bidi override"
    );
    assert_eq!(up["source"], "user_upload");
    assert_eq!(up["size"], csv.len());
    assert_eq!(up["preview"]["kind"], "text");
    assert!(up["preview"]["text"]
        .as_str()
        .unwrap()
        .starts_with("name,qty"));
    let fid = up["id"].as_str().unwrap().to_string();
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.resize(100, 0);
    let img = ok(upload(&h, &alice, &p, "pic.png", "image/png", &png), 201)["file"].clone();
    assert_eq!(img["preview"]["thumbnailUrl"], img["downloadUrl"]);

    let d = h.send(
        "GET",
        up["downloadUrl"].as_str().unwrap(),
        &[("cookie", &alice.cookie)],
        None,
    );
    assert_eq!(d.status, 200);
    assert_eq!(d.body, csv);
    assert_eq!(d.header("content-type"), Some("application/octet-stream"));
    assert_eq!(
        d.header("content-disposition"),
        Some("attachment; filename=\"donn_es.csv\"; filename*=UTF-8''donn%C3%A9es.csv")
    );
    assert_eq!(d.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(d.header("cache-control"), Some("no-store"));
    let d = h.send(
        "GET",
        img["downloadUrl"].as_str().unwrap(),
        &[("cookie", &alice.cookie)],
        None,
    );
    assert_eq!(d.header("content-type"), Some("image/png"));
    assert!(d
        .header("content-disposition")
        .unwrap()
        .starts_with("inline;"));

    // Refusals: nothing is written, the storage total stays.
    let used = stored_bytes(&h, &principal);
    assert_eq!(used, (csv.len() + png.len()) as i64);
    let big = vec![b'a'; 5000];
    for (r, status) in [
        (
            upload(&h, &alice, &p, "données.csv", "text/csv", b"other"),
            409,
        ),
        (
            upload(&h, &alice, &p, "x.exe", "application/x-msdownload", b"MZ"),
            415,
        ),
        (upload(&h, &alice, &p, "big.txt", "text/plain", &big), 413),
        (upload(&h, &alice, &p, "empty.txt", "text/plain", b""), 400),
        (upload(&h, &alice, &p, "..", "text/plain", b"x"), 400),
    ] {
        assert_eq!(r.status, status, "{}", r.text());
    }
    // Storage: 60,000 bytes in all; the upload that would pass it is refused whole.
    let mut n = 0;
    let refused = loop {
        let r = upload(
            &h,
            &alice,
            &p,
            &format!("f{n}.txt"),
            "text/plain",
            &[b'z'; 4000],
        );
        if r.status != 201 {
            break r;
        }
        n += 1;
        assert!(n < 20, "storage never filled");
    };
    assert_eq!(refused.status, 413, "{}", refused.text());
    assert!(
        refused.text().contains("storage is full"),
        "{}",
        refused.text()
    );
    let used = stored_bytes(&h, &principal);
    assert!(used <= 60_000, "{used}");
    let listed = files(&h, &alice, &p);
    assert_eq!(listed.len(), 2 + n);

    // Marking an upload final: 409. Bob: 404 through his project or hers.
    let final_path = format!("/api/projects/{p}/files/{fid}/final");
    assert_eq!(
        call(&h, "POST", &final_path, Some(&alice.cookie), None).status,
        409
    );
    let bobs = new_project(&h, &bob, "B", "");
    for path in [
        format!("/api/projects/{p}/files/{fid}"),
        format!("/api/projects/{p}/files/{fid}/download"),
        format!("/api/projects/{bobs}/files/{fid}"),
        format!("/api/projects/{bobs}/files/{fid}/download"),
    ] {
        assert_eq!(
            call(&h, "GET", &path, Some(&bob.cookie), None).status,
            404,
            "{path}"
        );
    }
    let r = call(
        &h,
        "DELETE",
        &format!("/api/projects/{bobs}/files/{fid}"),
        Some(&bob.cookie),
        None,
    );
    assert_eq!(r.status, 404);
    assert_eq!(files(&h, &alice, &p).len(), 2 + n);

    // Delete: gone, its bytes given back.
    let path = format!("/api/projects/{p}/files/{fid}");
    ok(call(&h, "DELETE", &path, Some(&alice.cookie), None), 204);
    assert_eq!(
        call(&h, "GET", &path, Some(&alice.cookie), None).status,
        404
    );
    assert_eq!(stored_bytes(&h, &principal), used - csv.len() as i64);
}

// ------------------------------------------------------------------ the agent and its files

/// An accounts host whose model is `server`'s OpenAI-compatible endpoint.
fn model_host(server: &LlmServer) -> Option<Host> {
    let base = format!("{}/v1", server.base);
    host(&[
        ("llm_provider", "openai"),
        ("llm_api_key", "test-key"),
        ("llm_model", "gpt-test"),
        ("llm_base_url", &base),
    ])
}

fn openai_chunk(delta: Value, finish: Option<&str>) -> String {
    format!(
        "data: {}\n\n",
        json!({"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
    )
}

/// A model response that calls `calls` (id, tool, input).
fn tool_calls(calls: &[(&str, &str, Value)]) -> Script {
    let mut chunks = vec![openai_chunk(
        json!({"role": "assistant", "content": null}),
        None,
    )];
    for (i, (id, name, input)) in calls.iter().enumerate() {
        chunks.push(openai_chunk(
            json!({"tool_calls": [{"index": i, "id": id, "type": "function",
                   "function": {"name": name, "arguments": input.to_string()}}]}),
            None,
        ));
    }
    chunks.push(openai_chunk(json!({}), Some("tool_calls")));
    chunks.push("data: [DONE]\n\n".into());
    Script::new(chunks)
}

/// The session's events once its `n`th turn has settled.
fn settled(h: &Host, u: &User, sid: &str, n: usize) -> Vec<Value> {
    let deadline = std::time::Instant::now() + SETTLE;
    loop {
        let r = history_as(h, sid, &[("cookie", &u.cookie)]);
        assert_eq!(r.status, 200, "{}", r.text());
        let events = parse_ndjson(&r.text());
        let turns = events
            .iter()
            .filter(|e| e["type"] == "turn.completed")
            .count();
        if turns >= n && events.last().is_some_and(is_settling) {
            return events;
        }
        assert!(std::time::Instant::now() < deadline, "{:?}", types(&events));
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The tool results a model request carries (OpenAI's `role: tool` messages).
fn tool_results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

const INSTRUCTIONS: &str = "Always answer in French.";

#[test]
fn the_issue_scenario_a_csv_cleaned_by_the_agent_marked_final_then_refused_and_the_project_deleted()
{
    let clean = "name,qty\na,1\nb,2\n";
    let server = LlmServer::start(vec![
        // Turn 1: read the upload, write the cleaned file.
        tool_calls(&[
            (
                "c1",
                "read_file",
                json!({"filePath": "/workspace/data.csv"}),
            ),
            (
                "c2",
                "write_file",
                json!({"filePath": "/workspace/clean.csv", "content": clean}),
            ),
        ]),
        Script::openai_text("C'est fait."),
        // Turn 2 (after the user marked it final): overwrite it, and the upload.
        tool_calls(&[
            (
                "c3",
                "write_file",
                json!({"filePath": "/workspace/clean.csv", "content": "oops"}),
            ),
            (
                "c4",
                "write_file",
                json!({"filePath": "data.csv", "content": "oops"}),
            ),
            ("c5", "glob", json!({"pattern": "*.csv"})),
        ]),
        Script::openai_text("Je ne peux pas."),
    ]);
    let Some(h) = model_host(&server) else {
        return;
    };
    let (alice, bob) = (person(&h, "alice"), person(&h, "bob"));
    let p = new_project(&h, &alice, "Supplier reconciliation", INSTRUCTIONS);
    ok(
        upload(
            &h,
            &alice,
            &p,
            "data.csv",
            "text/csv",
            b"name,qty\n a ,1\nb,2\n",
        ),
        201,
    );
    let chat = new_chat(&h, &alice, Some(&p));
    let keep = new_chat(&h, &alice, None);

    // As the web app starts a chat's session: the message and the chat's id.
    let body = json!({"message": "Clean data.csv into clean.csv", "chatId": chat});
    let sid = start_session(&h, &alice, &body);
    settled(&h, &alice, &sid, 1);
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    // The first model call of the first turn already has the project's instructions.
    let system = bodies[0]["messages"][0]["content"].to_string();
    assert!(
        system.contains("Project instructions (from the project's owner):"),
        "{system}"
    );
    assert!(system.contains(INSTRUCTIONS), "{system}");
    let tools: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    for t in ["read_file", "write_file", "glob", "grep"] {
        assert!(tools.contains(&t), "{tools:?}");
    }
    let results = tool_results(&bodies[1]);
    assert!(results[0].contains("1: name,qty"), "{}", results[0]);
    assert!(results[1].contains("\"existed\":false"), "{}", results[1]);

    // The written file is in the project's list as the agent's (temp); the user marks it final.
    let listed = files(&h, &alice, &p);
    let written = listed
        .iter()
        .find(|f| f["name"] == "clean.csv")
        .expect("clean.csv listed");
    assert_eq!(written["source"], "temp");
    let d = h.send(
        "GET",
        written["downloadUrl"].as_str().unwrap(),
        &[("cookie", &alice.cookie)],
        None,
    );
    assert_eq!(String::from_utf8_lossy(&d.body), clean);
    let final_path = format!(
        "/api/projects/{p}/files/{}/final",
        written["id"].as_str().unwrap()
    );
    let marked = ok(
        call(&h, "POST", &final_path, Some(&alice.cookie), None),
        200,
    );
    assert_eq!(marked["file"]["source"], "final_output");
    assert_eq!(
        call(&h, "POST", &final_path, Some(&bob.cookie), None).status,
        404
    );

    // Turn 2: both overwrites are tool errors the model sees; the files are as they were.
    let next = json!({"message": "Now overwrite it"});
    ok(
        call(
            &h,
            "POST",
            &format!("/eve/v1/session/{sid}"),
            Some(&alice.cookie),
            Some(&next),
        ),
        202,
    );
    settled(&h, &alice, &sid, 2);
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 4);
    assert!(bodies[2]["messages"][0]["content"]
        .to_string()
        .contains(INSTRUCTIONS));
    let results = tool_results(&bodies[3]);
    let turn2 = &results[results.len() - 3..];
    for r in &turn2[..2] {
        assert!(r.contains("cannot be overwritten"), "{r}");
    }
    assert!(
        turn2[2].contains("clean.csv") && turn2[2].contains("data.csv"),
        "{}",
        turn2[2]
    );
    let listed = files(&h, &alice, &p);
    let by_name = |n: &str| listed.iter().find(|f| f["name"] == n).unwrap().clone();
    assert_eq!(by_name("clean.csv")["source"], "final_output");
    assert_eq!(by_name("data.csv")["source"], "user_upload");
    let d = h.send(
        "GET",
        by_name("clean.csv")["downloadUrl"].as_str().unwrap(),
        &[("cookie", &alice.cookie)],
        None,
    );
    assert_eq!(String::from_utf8_lossy(&d.body), clean);

    // Bob cannot reach the chat or the session.
    assert_eq!(
        call(
            &h,
            "GET",
            &format!("/api/chats/{chat}"),
            Some(&bob.cookie),
            None
        )
        .status,
        404
    );

    // Deleting the project takes its chats, their sessions and its files, in one statement.
    let principal = format!("user:{}", alice.id);
    let before = stored_bytes(&h, &principal);
    ok(
        call(
            &h,
            "DELETE",
            &format!("/api/projects/{p}"),
            Some(&alice.cookie),
            None,
        ),
        204,
    );
    assert_eq!(
        call(
            &h,
            "GET",
            &format!("/api/chats/{chat}"),
            Some(&alice.cookie),
            None
        )
        .status,
        404
    );
    assert_eq!(
        call(
            &h,
            "GET",
            &format!("/api/projects/{p}/files"),
            Some(&alice.cookie),
            None
        )
        .status,
        404
    );
    assert_eq!(
        ok(
            call(
                &h,
                "GET",
                &format!("/api/chats/{keep}"),
                Some(&alice.cookie),
                None
            ),
            200
        )["chat"]["id"],
        keep.as_str()
    );
    assert_eq!(
        db_count(&h, "SELECT count(*) FROM chat WHERE id = ?1", &chat),
        0
    );
    assert_eq!(
        db_count(
            &h,
            "SELECT count(*) FROM chat_project WHERE chat_id = ?1",
            &chat
        ),
        0
    );
    assert_eq!(
        db_count(&h, "SELECT count(*) FROM eve_session WHERE id = ?1", &sid),
        0
    );
    assert_eq!(
        db_count(
            &h,
            "SELECT count(*) FROM eve_event WHERE session_id = ?1",
            &sid
        ),
        0
    );
    assert_eq!(
        db_count(
            &h,
            "SELECT count(*) FROM project_file WHERE scope = ?1",
            &format!("project:{p}")
        ),
        0
    );
    let after = stored_bytes(&h, &principal);
    assert!(after < before, "{after} < {before}");
    assert_eq!(
        call(
            &h,
            "DELETE",
            &format!("/api/projects/{p}"),
            Some(&alice.cookie),
            None
        )
        .status,
        404
    );
}

// ------------------------------------------------------- project files named by a message

const PNG: &[u8] =
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";

/// A message whose file parts name project files (`projectFileId`) instead of bringing bytes.
fn naming(text: &str, files: &[&str]) -> Value {
    let mut parts = vec![json!({"type": "text", "text": text})];
    for id in files {
        parts.push(
            json!({"type": "file", "mediaType": "application/octet-stream", "projectFileId": id}),
        );
    }
    json!(parts)
}

fn file_id(h: &Host, u: &User, project: &str, name: &str, media: &str, bytes: &[u8]) -> String {
    ok(upload(h, u, project, name, media, bytes), 201)["file"]["id"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_message_names_project_files_the_model_gets_their_bytes_and_refusals_write_nothing() {
    let server = LlmServer::start(vec![Script::openai_text("Seen.")]);
    let Some(h) = model_host(&server) else {
        return;
    };
    let (alice, bob) = (person(&h, "alice"), person(&h, "bob"));
    let p = new_project(&h, &alice, "Audit", "");
    let other = new_project(&h, &alice, "Other", "");
    let bobs = new_project(&h, &bob, "Bob's", "");
    let csv = file_id(&h, &alice, &p, "data.csv", "text/csv", b"name,qty\na,1\n");
    let png = file_id(&h, &alice, &p, "dot.png", "image/png", PNG);
    let elsewhere = file_id(&h, &alice, &other, "other.txt", "text/plain", b"other");
    let bobs_file = file_id(&h, &bob, &bobs, "bob.txt", "text/plain", b"bob's");
    let chat = new_chat(&h, &alice, Some(&p));
    let outside = new_chat(&h, &alice, None);
    let bobs_chat = new_chat(&h, &bob, Some(&bobs));

    let body = json!({"message": naming("Compare these", &[&csv, &png]), "chatId": chat});
    let sid = start_session(&h, &alice, &body);
    let events = settled(&h, &alice, &sid, 1);

    // The model gets the files as the provider's own parts, joined to the user's message.
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    let user = bodies[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|m| m["role"] == "user")
        .unwrap()
        .clone();
    let content = user["content"].to_string();
    assert!(content.contains("Compare these"), "{content}");
    assert!(
        content.contains("Attached file data.csv (text/csv):\\n\\nname,qty\\na,1\\n"),
        "{content}"
    );
    let png_url = format!(
        "data:image/png;base64,{}",
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, PNG)
    );
    assert!(
        user["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|part| part["type"] == "image_url" && part["image_url"]["url"] == png_url.as_str()),
        "{content}"
    );

    // The stream names the files (no bytes) with their download URLs; nothing was copied.
    let received = events
        .iter()
        .find(|e| e["type"] == "message.received")
        .unwrap();
    let parts = received["data"]["parts"].as_array().unwrap();
    assert_eq!(parts[1]["projectFileId"], csv.as_str());
    assert_eq!(parts[1]["filename"], "data.csv");
    assert_eq!(parts[1]["mediaType"], "text/csv");
    assert_eq!(parts[1]["size"], 13);
    let url = parts[2]["url"].as_str().unwrap();
    assert_eq!(url, format!("/api/projects/{p}/files/{png}/download"));
    let d = h.send("GET", url, &[("cookie", &alice.cookie)], None);
    assert_eq!(d.body, PNG);
    assert_eq!(
        count(
            &h,
            "SELECT count(*) FROM eve_attachment WHERE principal = ?1",
            &format!("user:{}", alice.id)
        ),
        0
    );

    // Refused, and nothing written: no session, no inbox row, no event, no model call.
    let kept = |h: &Host| {
        let db = database(h);
        let n = |t: &str| -> i64 {
            db.query_row(&format!("SELECT count(*) FROM {t}"), [], |r| r.get(0))
                .unwrap()
        };
        (
            n("eve_session"),
            n("eve_inbox"),
            n("eve_event"),
            n("eve_attachment"),
        )
    };
    let before = kept(&h);
    let send = format!("/eve/v1/session/{sid}");
    let refusals = [
        // A file of another project of hers, another person's, one that does not exist.
        (
            &alice,
            send.as_str(),
            json!({"message": naming("x", &[&elsewhere])}),
            404,
        ),
        (
            &alice,
            send.as_str(),
            json!({"message": naming("x", &[&bobs_file])}),
            404,
        ),
        (
            &alice,
            send.as_str(),
            json!({"message": naming("x", &["file_nope"])}),
            404,
        ),
        // Bob names Alice's file in his own project's chat.
        (
            &bob,
            "/eve/v1/session",
            json!({"message": naming("x", &[&csv]), "chatId": bobs_chat}),
            404,
        ),
        // A chat in no project, or no chat named.
        (
            &alice,
            "/eve/v1/session",
            json!({"message": naming("x", &[&csv]), "chatId": outside}),
            400,
        ),
        (
            &alice,
            "/eve/v1/session",
            json!({"message": naming("x", &[&csv])}),
            400,
        ),
        // Bytes and a reference in one part.
        (
            &alice,
            send.as_str(),
            json!({"message": [{"type": "file", "mediaType": "text/plain", "data": "aGk=", "projectFileId": csv}]}),
            400,
        ),
    ];
    for (who, path, body, status) in refusals {
        let r = call(&h, "POST", path, Some(&who.cookie), Some(&body));
        assert_eq!(r.status, status, "{path} {body}: {}", r.text());
    }
    assert_eq!(kept(&h), before);
    assert_eq!(server.bodies().len(), 1);
}
