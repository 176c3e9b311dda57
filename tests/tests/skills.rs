//! Skills (issue 22, docs/skills.md) with the real components in the local host and real
//! SQLite: a person's own skills created, imported (a SKILL.md text, a zipped skill folder),
//! changed and deleted; bad SKILL.md files and names refused with eve's reason and nothing
//! written; global skills written by admins only (a member gets 403) and switched off per
//! person; another person's skill answering 404; an account's deletion taking its skills; the
//! local developer as an admin; and the agent: the (local, fake OpenAI-compatible) model sees
//! the enabled skills in its instructions and `eve__skill`, and a call returns the body,
//! reported as eve's `load-skill` action; `/eve/v1/info` lists the skills.

#[allow(dead_code)]
use crate::llm_server;
use crate::raw_http::raw;

use std::io::Write;
use std::time::Duration;

use eve_chat_tests::accounts::*;
use eve_chat_tests::eve::{history_as, is_settling, parse_ndjson, types};
use eve_chat_tests::{Host, HostOptions, Response};
use llm_server::{LlmServer, Script};
use serde_json::{json, Value};

const SETTLE: Duration = Duration::from_secs(60);

fn person(h: &Host, name: &str) -> User {
    signed_up(
        h,
        json!({"email": format!("{name}@open.example"), "password": PASSWORD}),
    )
}

fn create(h: &Host, u: &User, body: Value) -> Response {
    call(h, "POST", "/api/skills", Some(&u.cookie), Some(&body))
}

fn zip_of(files: &[(&str, &str)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, text) in files {
        w.start_file(*name, options).unwrap();
        w.write_all(text.as_bytes()).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// A zip posted as the web app posts a file: its bytes, `application/zip`.
fn post_zip(h: &Host, u: &User, query: &str, bytes: &[u8]) -> Response {
    let origin = h.origin();
    let headers = [
        ("origin", origin.as_str()),
        ("sec-fetch-site", "same-origin"),
        ("cookie", u.cookie.as_str()),
        ("content-type", "application/zip"),
    ];
    h.send(
        "POST",
        &format!("/api/skills{query}"),
        &headers,
        Some(bytes),
    )
}

fn listed(h: &Host, u: &User) -> Value {
    ok(call(h, "GET", "/api/skills", Some(&u.cookie), None), 200)
}

fn names(list: &Value) -> Vec<(String, String, bool)> {
    list["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_string(),
                s["scope"].as_str().unwrap().to_string(),
                s["enabled"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn skill_rows(h: &Host) -> i64 {
    database(h)
        .query_row("SELECT count(*) FROM skill", [], |r| r.get(0))
        .unwrap()
}

const MD: &str = "---\nname: release-notes\ndescription: Use when the user asks for release notes.\nlicense: MIT\n---\n\n# Release notes\n\n1. List the changes.\n";

#[test]
fn own_skills_are_created_imported_changed_and_deleted_and_anothers_is_a_404() {
    let Some(h) = host(&[]) else { return };
    let (alice, bob) = (person(&h, "alice"), person(&h, "bob"));
    let made = ok(
        create(
            &h,
            &alice,
            json!({"name": "notes", "description": "Take notes.", "body": "Write them down."}),
        ),
        201,
    );
    let notes = made["skill"]["id"].as_str().unwrap().to_string();
    assert_eq!(made["skill"]["scope"], "personal");
    assert_eq!(made["skill"]["enabled"], true);
    let text = ok(create(&h, &alice, json!({"skillMd": MD})), 201);
    assert_eq!(text["skill"]["name"], "release-notes");
    assert_eq!(
        text["skill"]["body"],
        "# Release notes\n\n1. List the changes.\n"
    );
    assert_eq!(text["skill"]["license"], "MIT");
    let zip = zip_of(&[
        (
            "pdf-forms/SKILL.md",
            "---\ndescription: Fill PDF forms.\ndeferred: true\n---\nStep one.\n",
        ),
        ("pdf-forms/references/a.md", "ref"),
    ]);
    let zipped = ok(post_zip(&h, &alice, "", &zip), 201);
    assert_eq!(
        (&zipped["skill"]["name"], &zipped["skill"]["deferred"]),
        (&json!("pdf-forms"), &json!(true))
    );
    let list = listed(&h, &alice);
    assert_eq!(list["canManageGlobal"], false);
    assert_eq!(names(&list).len(), 3);

    // Bob sees none of it and can touch none of it: 404, as for an id that does not exist.
    assert!(names(&listed(&h, &bob)).is_empty());
    let path = format!("/api/skills/{notes}");
    let enabled = format!("{path}/enabled");
    for (method, p, body) in [
        ("GET", path.as_str(), None),
        ("PATCH", path.as_str(), Some(json!({"body": "mine"}))),
        ("DELETE", path.as_str(), None),
        ("PUT", enabled.as_str(), Some(json!({"enabled": false}))),
        ("GET", "/api/skills/skill_nothing", None),
    ] {
        let r = call(&h, method, p, Some(&bob.cookie), body.as_ref());
        assert_eq!(
            (r.status, code(&r)),
            (404, "not_found".into()),
            "{method} {p}"
        );
    }

    let patched = ok(
        call(
            &h,
            "PATCH",
            &path,
            Some(&alice.cookie),
            Some(&json!({"body": "Write them twice."})),
        ),
        200,
    );
    assert_eq!(patched["skill"]["body"], "Write them twice.");
    assert_eq!(patched["skill"]["description"], "Take notes.");
    let off = ok(
        call(
            &h,
            "PUT",
            &enabled,
            Some(&alice.cookie),
            Some(&json!({"enabled": false})),
        ),
        200,
    );
    assert_eq!(off["skill"]["enabled"], false);
    ok(call(&h, "DELETE", &path, Some(&alice.cookie), None), 204);
    assert_eq!(
        call(&h, "DELETE", &path, Some(&alice.cookie), None).status,
        404
    );
    let switches = count(
        &h,
        "SELECT count(*) FROM skill_disabled WHERE skill_id = ?1",
        &notes,
    );
    assert_eq!(switches, 0);
}

#[test]
fn bad_skill_md_files_and_requests_are_refused_with_the_reason_and_write_nothing() {
    let Some(h) = host(&[]) else { return };
    let alice = person(&h, "alice");
    ok(create(&h, &alice, json!({"skillMd": MD})), 201);
    let before = skill_rows(&h);
    let cases = [
        (
            json!({"skillMd": "# no frontmatter"}),
            "Skill markdown must start with YAML frontmatter.",
        ),
        (
            json!({"skillMd": "---\nname: x\n---\nbody"}),
            "Missing required \"description\" frontmatter.",
        ),
        (
            json!({"skillMd": "---\nname: x\ndescription: d\ndeferred: maybe\n---\n"}),
            "Expected \"deferred\" frontmatter to be true or false.",
        ),
        (
            json!({"skillMd": "---\nname: x\ndescription: d\n"}),
            "Markdown frontmatter is missing a closing delimiter.",
        ),
        (
            json!({"skillMd": "---\nname: bad name\ndescription: d\n---\n"}),
            "has an illegal name \"bad name\"",
        ),
        (
            json!({"skillMd": "---\nname: eve__x\ndescription: d\n---\n"}),
            "reserved",
        ),
        (
            json!({"name": "-x", "description": "d"}),
            "starting with a letter or digit",
        ),
        (json!({"name": "ok"}), "needs a name and a description"),
        (json!({"skillMd": MD}), "exists already"),
        (json!({"name": "ok", "description": "d", "extra": 1}), ""),
    ];
    for (body, reason) in cases {
        let r = create(&h, &alice, body.clone());
        assert!(
            r.status == 400 || r.status == 409,
            "{body}: {} {}",
            r.status,
            r.text()
        );
        let message = r.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(message.contains(reason), "{body}: {message}");
    }
    for (zip, reason) in [
        (zip_of(&[("a/README.md", "x")]), "no SKILL.md"),
        (zip_of(&[("bad name/SKILL.md", MD)]), "illegal name"),
        (
            zip_of(&[("a/SKILL.md", MD), ("b/SKILL.md", MD)]),
            "more than one",
        ),
        (b"not a zip".to_vec(), "not a readable zip"),
    ] {
        let r = post_zip(&h, &alice, "", &zip);
        assert_eq!(r.status, 400, "{}", r.text());
        assert!(r.text().contains(reason), "{reason}: {}", r.text());
    }
    // A zip past the cap is refused before it is read: the host may answer and close while the
    // body is still being written, so it goes through a client that reads that early answer.
    let origin = h.origin();
    let r = raw(
        &h,
        "POST",
        "/api/skills",
        &[
            ("Origin", origin.as_str()),
            ("Sec-Fetch-Site", "same-origin"),
            ("Cookie", alice.cookie.as_str()),
            ("Content-Type", "application/zip"),
        ],
        &vec![0u8; 1024 * 1024 + 1],
    );
    assert_eq!(r.status, 413, "{}", r.text());
    // No sign-in, a cross-site write, a wrong method.
    assert_eq!(h.get("/api/skills").status, 401);
    let cross = h.send(
        "POST",
        "/api/skills",
        &[("cookie", &alice.cookie), ("sec-fetch-site", "cross-site")],
        Some(br#"{"name":"x","description":"d"}"#),
    );
    assert_eq!(cross.status, 403);
    assert_eq!(
        call(&h, "PUT", "/api/skills", Some(&alice.cookie), None).status,
        405
    );
    assert_eq!(skill_rows(&h), before);
}

#[test]
fn global_skills_are_written_by_admins_switched_off_per_person_and_go_with_an_account() {
    let Some(h) = host(&[]) else { return };
    let admin = bootstrap(&h);
    let (alice, bob) = (person(&h, "alice"), person(&h, "bob"));
    // A member cannot create, import, change or delete a global skill.
    let global = json!({"name": "review", "description": "Review code.", "body": "Look twice.", "global": true});
    assert_eq!(create(&h, &alice, global.clone()).status, 403);
    let zip = zip_of(&[("review/SKILL.md", "---\ndescription: d\n---\nx")]);
    assert_eq!(post_zip(&h, &alice, "?global=true", &zip).status, 403);
    assert_eq!(skill_rows(&h), 0);
    assert_eq!(listed(&h, &admin)["canManageGlobal"], true);
    let made = ok(create(&h, &admin, global), 201);
    let id = made["skill"]["id"].as_str().unwrap().to_string();
    assert_eq!(made["skill"]["scope"], "global");
    let path = format!("/api/skills/{id}");
    let seen = ok(call(&h, "GET", &path, Some(&alice.cookie), None), 200);
    assert_eq!(
        (&seen["skill"]["editable"], &seen["skill"]["enabled"]),
        (&json!(false), &json!(true))
    );
    for (method, body) in [("PATCH", Some(json!({"body": "mine"}))), ("DELETE", None)] {
        let r = call(&h, method, &path, Some(&alice.cookie), body.as_ref());
        assert_eq!((r.status, code(&r)), (403, "forbidden".into()), "{method}");
    }
    assert_eq!(
        ok(call(&h, "GET", &path, Some(&bob.cookie), None), 200)["skill"]["body"],
        "Look twice."
    );
    // Alice switches it off for herself; Bob still has it.
    let enabled = format!("{path}/enabled");
    ok(
        call(
            &h,
            "PUT",
            &enabled,
            Some(&alice.cookie),
            Some(&json!({"enabled": false})),
        ),
        200,
    );
    assert_eq!(
        names(&listed(&h, &alice)),
        [("review".into(), "global".into(), false)]
    );
    assert_eq!(
        names(&listed(&h, &bob)),
        [("review".into(), "global".into(), true)]
    );
    // An admin edits it; a personal skill of the same name replaces it for its owner.
    ok(
        call(
            &h,
            "PATCH",
            &path,
            Some(&admin.cookie),
            Some(&json!({"description": "Review all code."})),
        ),
        200,
    );
    ok(
        create(
            &h,
            &bob,
            json!({"name": "review", "description": "Bob's way."}),
        ),
        201,
    );
    let bobs = listed(&h, &bob);
    let shadowed: Vec<&Value> = bobs["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["shadowed"] == true)
        .collect();
    assert_eq!(shadowed.len(), 1);
    assert_eq!(shadowed[0]["scope"], "global");

    // Deleting Alice's account takes her skills and her switches.
    ok(
        create(&h, &alice, json!({"name": "mine", "description": "d"})),
        201,
    );
    let principal = format!("user:{}", alice.id);
    assert_eq!(
        count(
            &h,
            "SELECT count(*) FROM skill_disabled WHERE principal = ?1",
            &principal
        ),
        1
    );
    let r = call(
        &h,
        "DELETE",
        &format!("/api/admin/users/{}", alice.id),
        Some(&admin.cookie),
        None,
    );
    assert_eq!(r.status, 204, "{}", r.text());
    assert_eq!(
        count(
            &h,
            "SELECT count(*) FROM skill WHERE owner = ?1",
            &principal
        ),
        0
    );
    assert_eq!(
        count(
            &h,
            "SELECT count(*) FROM skill_disabled WHERE principal = ?1",
            &principal
        ),
        0
    );
    assert_eq!(
        count(&h, "SELECT count(*) FROM skill WHERE id = ?1", &id),
        1
    );
}

#[test]
fn the_local_developer_manages_global_skills() {
    let Some(h) = Host::start(HostOptions::default()) else {
        return;
    };
    let origin = h.origin();
    let headers = [
        ("origin", origin.as_str()),
        ("sec-fetch-site", "same-origin"),
        ("content-type", "application/json"),
    ];
    let body = br#"{"name":"review","description":"Review code.","global":true}"#;
    let r = h.send("POST", "/api/skills", &headers, Some(body));
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["skill"]["scope"], "global");
    assert_eq!(h.get("/api/skills").json()["canManageGlobal"], true);
}

// ------------------------------------------------------------------ the agent

fn openai_chunk(delta: Value, finish: Option<&str>) -> String {
    format!(
        "data: {}\n\n",
        json!({"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
    )
}

/// A model response that calls `tool` with `input`.
fn tool_call(id: &str, tool: &str, input: Value) -> Script {
    Script::new(vec![
        openai_chunk(json!({"role": "assistant", "content": null}), None),
        openai_chunk(
            json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                   "function": {"name": tool, "arguments": input.to_string()}}]}),
            None,
        ),
        openai_chunk(json!({}), Some("tool_calls")),
        "data: [DONE]\n\n".into(),
    ])
}

/// The session's events once its first turn has settled.
fn settled(h: &Host, u: &User, sid: &str) -> Vec<Value> {
    let deadline = std::time::Instant::now() + SETTLE;
    loop {
        let r = history_as(h, sid, &[("cookie", &u.cookie)]);
        assert_eq!(r.status, 200, "{}", r.text());
        let events = parse_ndjson(&r.text());
        let done = events.iter().any(|e| e["type"] == "turn.completed");
        if done && events.last().is_some_and(is_settling) {
            return events;
        }
        assert!(std::time::Instant::now() < deadline, "{:?}", types(&events));
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_model_sees_the_enabled_skills_and_eve_skill_returns_the_body_as_a_load_skill_action() {
    let server = LlmServer::start(vec![
        tool_call("call_1", "eve__skill", json!({"name": "release-notes"})),
        Script::openai_text("Done."),
    ]);
    let base = format!("{}/v1", server.base);
    let Some(h) = host(&[
        ("llm_provider", "openai"),
        ("llm_api_key", "test-key"),
        ("llm_model", "gpt-test"),
        ("llm_base_url", &base),
    ]) else {
        return;
    };
    let admin = bootstrap(&h);
    let alice = person(&h, "alice");
    let global = |name: &str, description: &str| json!({"name": name, "description": description, "body": "Global body.", "global": true});
    ok(
        create(&h, &admin, global("deploy", "Use when deploying.")),
        201,
    );
    let off = ok(
        create(&h, &admin, global("review", "Use when reviewing.")),
        201,
    );
    let off_path = format!(
        "/api/skills/{}/enabled",
        off["skill"]["id"].as_str().unwrap()
    );
    ok(
        call(
            &h,
            "PUT",
            &off_path,
            Some(&alice.cookie),
            Some(&json!({"enabled": false})),
        ),
        200,
    );
    ok(create(&h, &alice, json!({"skillMd": MD})), 201);
    ok(
        create(
            &h,
            &person(&h, "bob"),
            json!({"name": "bobs", "description": "Bob's only."}),
        ),
        201,
    );

    let body = json!({"message": "please use the skill release-notes"});
    let sid = ok(
        call(
            &h,
            "POST",
            "/eve/v1/session",
            Some(&alice.cookie),
            Some(&body),
        ),
        202,
    )["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let events = settled(&h, &alice, &sid);
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    let system = bodies[0]["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(system.contains("Available skills\n"), "{system}");
    assert!(
        system.contains("\n- deploy: Use when deploying."),
        "{system}"
    );
    assert!(
        system.contains("\n- release-notes: Use when the user asks for release notes."),
        "{system}"
    );
    assert!(
        !system.contains("- review:") && !system.contains("bobs"),
        "{system}"
    );
    let tools: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"eve__skill"), "{tools:?}");
    let tool_message = bodies[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert_eq!(
        tool_message["content"],
        "# Release notes\n\n1. List the changes.\n"
    );

    // On the stream: eve's load-skill action and its result, no input deltas.
    let of = |t: &str| {
        events
            .iter()
            .filter(|e| e["type"] == t)
            .map(|e| e["data"].clone())
            .collect::<Vec<_>>()
    };
    let requested = &of("actions.requested")[0];
    assert_eq!(
        requested["actions"][0],
        json!({"callId": "call_1", "input": {"name": "release-notes"}, "kind": "load-skill", "name": "release-notes"})
    );
    assert_eq!(
        requested["presentation"]["call_1"]["label"],
        "Load skill release-notes"
    );
    let result = &of("action.result")[0];
    assert_eq!(
        result["result"],
        json!({"callId": "call_1", "kind": "load-skill-result", "name": "release-notes",
               "output": "# Release notes\n\n1. List the changes.\n"})
    );
    assert_eq!(result["status"], "completed");
    assert!(of("action.input.appended").is_empty());

    // /eve/v1/info lists what Alice is offered.
    let info = ok(
        call(&h, "GET", "/eve/v1/info", Some(&alice.cookie), None),
        200,
    );
    let listed: Vec<&str> = info["skills"]["static"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["deploy", "release-notes"]);
    assert_eq!(info["skills"]["static"][1]["sourceKind"], "skill-package");
}
