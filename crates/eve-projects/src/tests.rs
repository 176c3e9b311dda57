//! The domain on real SQLite (every migration applied), as the components use it.

use eve_api::projects::{FilePreview, FileSource};
use eve_sql_testing::Db;
use eve_store::sql::Sql;
use serde_json::{json, Value};

use crate::files::NewFile;
use crate::patterns::{self, NameGlob};
use crate::tools::{self, FileScope};
use crate::{files, names, preview, project_scope, projects, session_scope};

fn db() -> Db {
    let db = Db::memory();
    eve_store::migrations::migrate(&db, 0).unwrap();
    db
}

fn chat(db: &Db, id: &str, owner: &str) {
    db.execute(
        "INSERT INTO chat (id, owner, title, created_at, updated_at) VALUES (?1, ?2, 't', 1, 1)",
        vec![id.into(), owner.into()],
    )
    .unwrap();
}

fn used(db: &Db, p: &str) -> i64 {
    let r = db
        .execute("SELECT coalesce((SELECT bytes FROM storage_usage WHERE scope = 'principal:' || ?1), 0)", vec![p.into()])
        .unwrap();
    r[0][0].as_i64().unwrap()
}

const MAX: u64 = 1 << 30;

/// alice's CSV `name` in `scope`, at time 1, within the default storage.
fn new_file<'a>(scope: &'a str, id: &'a str, name: &'a str, data: Vec<u8>) -> NewFile<'a> {
    NewFile {
        principal: "alice",
        scope,
        id,
        name,
        media_type: "text/csv",
        data,
        now: 1,
        default_max: MAX,
    }
}

#[test]
fn projects_are_created_renamed_listed_and_another_principals_is_a_404() {
    let db = db();
    let p = projects::create(&db, "alice", "prj_1", "Audit", "Answer in French.", 1).unwrap();
    assert_eq!(p.instructions, "Answer in French.");
    let p = projects::update(&db, "alice", "prj_1", Some("Audit 2025"), None, 2).unwrap();
    assert_eq!(
        (p.name.as_str(), p.instructions.as_str()),
        ("Audit 2025", "Answer in French.")
    );
    assert_eq!(projects::list(&db, "alice").unwrap().len(), 1);
    assert!(projects::list(&db, "bob").unwrap().is_empty());
    assert_eq!(
        projects::get(&db, "bob", "prj_1").unwrap_err().status(),
        404
    );
    assert_eq!(
        projects::update(&db, "bob", "prj_1", Some("x"), None, 3)
            .unwrap_err()
            .status(),
        404
    );
    assert_eq!(
        projects::delete(&db, "bob", "prj_1").unwrap_err().status(),
        404
    );
    assert!(projects::name("  ").is_err());
    assert_eq!(projects::name(" a   b ").unwrap(), "a b");
}

#[test]
fn chats_move_in_and_out_and_the_list_filters_by_project() {
    let db = db();
    projects::create(&db, "alice", "prj_1", "A", "", 1).unwrap();
    projects::create(&db, "bob", "prj_b", "B", "", 1).unwrap();
    chat(&db, "c1", "alice");
    chat(&db, "c2", "alice");
    chat(&db, "cb", "bob");
    projects::set_chat_project(&db, "alice", "c1", Some("prj_1")).unwrap();
    // Someone else's chat or project: 404, nothing written.
    assert_eq!(
        projects::set_chat_project(&db, "alice", "cb", Some("prj_1"))
            .unwrap_err()
            .status(),
        404
    );
    assert_eq!(
        projects::set_chat_project(&db, "alice", "c2", Some("prj_b"))
            .unwrap_err()
            .status(),
        404
    );
    let page = projects::chats(&db, "alice", "prj_1", 20, None).unwrap();
    assert_eq!(
        page.chats.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["c1"]
    );
    assert_eq!(
        projects::chats(&db, "bob", "prj_1", 20, None)
            .unwrap_err()
            .status(),
        404
    );
    let summary = |id: &str| eve_api::chat::ChatSummary {
        id: id.into(),
        title: String::new(),
        created_at: String::new(),
        updated_at: String::new(),
        project_id: None,
    };
    let mut list = [summary("c1"), summary("c2"), summary("cb")];
    projects::with_projects(&db, "alice", &mut list).unwrap();
    let said: Vec<_> = list.iter().map(|c| c.project_id.clone()).collect();
    // Bob's chat, asked for by Alice, says nothing of Bob's project.
    assert_eq!(
        said,
        [Some(Some("prj_1".to_string())), Some(None), Some(None)]
    );
    projects::set_chat_project(&db, "alice", "c1", None).unwrap();
    assert!(projects::chats(&db, "alice", "prj_1", 20, None)
        .unwrap()
        .chats
        .is_empty());
    assert_eq!(projects::chat_project(&db, "alice", "c1").unwrap(), None);
}

#[test]
fn the_session_of_a_chat_in_a_project_finds_the_project_and_its_instructions() {
    let db = db();
    projects::create(&db, "alice", "prj_1", "A", "Be brief.", 1).unwrap();
    chat(&db, "c1", "alice");
    projects::set_chat_project(&db, "alice", "c1", Some("prj_1")).unwrap();
    projects::record_chat_session(&db, "alice", "c1", "wrun_1").unwrap();
    // Bob naming Alice's chat records nothing.
    projects::record_chat_session(&db, "bob", "c1", "wrun_b").unwrap();
    assert_eq!(
        projects::session_project(&db, "alice", "wrun_1").unwrap(),
        Some(("prj_1".into(), "Be brief.".into()))
    );
    assert_eq!(
        projects::session_project(&db, "bob", "wrun_b").unwrap(),
        None
    );
    assert_eq!(
        projects::session_project(&db, "bob", "wrun_1").unwrap(),
        None
    );
}

#[test]
fn uploads_count_in_storage_and_refusals_change_nothing() {
    let db = db();
    projects::create(&db, "alice", "prj_1", "A", "", 1).unwrap();
    let scope = project_scope("prj_1");
    let f = files::upload(
        &db,
        "/api/projects/prj_1",
        new_file(&scope, "file_1", "a.csv", b"a,b\n1,2\n".to_vec()),
    )
    .unwrap();
    assert_eq!(f.source, FileSource::UserUpload);
    assert_eq!(
        f.preview,
        FilePreview::Text {
            text: "a,b\n1,2".into()
        }
    );
    assert_eq!(used(&db, "alice"), 8);
    // The same name again: 409; over the storage cap: 413; nothing written either way.
    let e = files::upload(
        &db,
        "/u",
        new_file(&scope, "file_2", "a.csv", b"x".to_vec()),
    )
    .unwrap_err();
    assert_eq!(e.status(), 409);
    let e = files::upload(
        &db,
        "/u",
        NewFile {
            default_max: 50,
            ..new_file(&scope, "file_3", "b.csv", vec![b'x'; 100])
        },
    )
    .unwrap_err();
    assert_eq!(e.status(), 413);
    assert_eq!(used(&db, "alice"), 8);
    assert_eq!(files::list(&db, "alice", &scope, "/u").unwrap().len(), 1);
    // Bob sees nothing of it.
    assert_eq!(
        files::download(&db, "bob", &scope, "file_1")
            .unwrap_err()
            .status(),
        404
    );
    assert!(files::list(&db, "bob", &scope, "/u").unwrap().is_empty());
}

#[test]
fn deleting_a_project_takes_its_chats_sessions_and_files() {
    let db = db();
    project_with_upload(&db);
    assert_eq!(used(&db, "alice"), 19);
    // A chat with a session, in the project.
    chat(&db, "c1", "alice");
    projects::set_chat_project(&db, "alice", "c1", Some("prj_1")).unwrap();
    db.execute("INSERT INTO eve_session (id, principal, created_at, updated_at) VALUES ('wrun_1', 'alice', 1, 1)", vec![]).unwrap();
    projects::record_chat_session(&db, "alice", "c1", "wrun_1").unwrap();
    projects::delete(&db, "alice", "prj_1").unwrap();
    for (table, n) in [
        ("chat", 0),
        ("eve_session", 0),
        ("project_file", 0),
        ("chat_project", 0),
    ] {
        let r = db
            .execute(&format!("SELECT count(*) FROM {table}"), vec![])
            .unwrap();
        assert_eq!(r[0][0].as_i64(), Some(n), "{table}");
    }
    assert_eq!(used(&db, "alice"), 0);
    assert_eq!(
        projects::delete(&db, "alice", "prj_1")
            .unwrap_err()
            .status(),
        404
    );
}

#[test]
fn only_temp_files_are_marked_final_and_a_file_in_use_by_a_running_turn_stays() {
    let db = db();
    projects::create(&db, "alice", "prj_1", "A", "", 1).unwrap();
    let scope = project_scope("prj_1");
    files::upload(
        &db,
        "/u",
        new_file(&scope, "file_1", "a.csv", b"a".to_vec()),
    )
    .unwrap();
    assert_eq!(
        files::mark_final(&db, "alice", &scope, "/u", "file_1", 2)
            .unwrap_err()
            .status(),
        409
    );
    files::write_temp(
        &db,
        NewFile {
            now: 2,
            ..new_file(&scope, "file_2", "b.csv", b"b".to_vec())
        },
    )
    .unwrap();
    let f = files::mark_final(&db, "alice", &scope, "/u", "file_2", 3).unwrap();
    assert_eq!(f.source, FileSource::FinalOutput);
    assert_eq!(
        files::mark_final(&db, "bob", &scope, "/u", "file_2", 3)
            .unwrap_err()
            .status(),
        404
    );
    // A turn runs in a session of the project's chat: its files stay until it ends.
    chat(&db, "c1", "alice");
    projects::set_chat_project(&db, "alice", "c1", Some("prj_1")).unwrap();
    db.execute("INSERT INTO eve_session (id, principal, created_at, updated_at, lease_owner, lease_expires) VALUES ('wrun_1', 'alice', 1, 1, 'r', 100)", vec![]).unwrap();
    projects::record_chat_session(&db, "alice", "c1", "wrun_1").unwrap();
    assert_eq!(
        files::delete(&db, "alice", &scope, "file_1", 50)
            .unwrap_err()
            .status(),
        409
    );
    files::delete(&db, "alice", &scope, "file_1", 150).unwrap();
    assert_eq!(
        files::delete(&db, "alice", &scope, "file_1", 150)
            .unwrap_err()
            .status(),
        404
    );
}

fn scope<'a>(db: &'a Db, scope: &'a str, new_id: &'a dyn Fn() -> String) -> FileScope<'a, Db> {
    FileScope {
        db,
        principal: "alice",
        scope,
        now: 5,
        storage_max: MAX,
        file_max: 1000,
        new_id,
    }
}

fn run(fs: &FileScope<'_, Db>, name: &str, input: Value) -> (Value, bool) {
    tools::run(fs, name, &input)
}

/// Fresh file ids: `file_t1`, `file_t2`, …
fn ids() -> impl Fn() -> String {
    let n = std::cell::Cell::new(0);
    move || {
        n.set(n.get() + 1);
        format!("file_t{}", n.get())
    }
}

/// alice's project `prj_1` with her upload `data.csv`; its scope.
fn project_with_upload(db: &Db) -> String {
    projects::create(db, "alice", "prj_1", "A", "", 1).unwrap();
    let s = project_scope("prj_1");
    let data = b"name,qty\n a ,1\nb,2\n".to_vec();
    files::upload(db, "/u", new_file(&s, "file_up", "data.csv", data)).unwrap();
    s
}

#[test]
fn read_file_reads_numbered_lines_from_an_offset_and_another_principal_sees_nothing() {
    let db = db();
    let s = project_with_upload(&db);
    let new_id = ids();
    let fs = scope(&db, &s, &new_id);
    let (out, err) = run(
        &fs,
        "read_file",
        json!({"filePath": "/workspace/data.csv", "offset": 2, "limit": 1}),
    );
    assert!(!err);
    assert_eq!(out["content"], "2:  a ,1\n");
    assert_eq!(
        (out["totalLines"].clone(), out["nextOffset"].clone()),
        (json!(3), json!(3))
    );
    let (out, _) = run(&fs, "grep", json!({"pattern": "^b,\\d", "glob": "*.csv"}));
    assert_eq!(out["content"], "/workspace/data.csv:3: b,2\n");
    let bob = FileScope {
        principal: "bob",
        ..scope(&db, &s, &new_id)
    };
    assert!(run(&bob, "read_file", json!({"filePath": "data.csv"})).1);
    assert_eq!(run(&bob, "glob", json!({"pattern": "*"})).0["count"], 0);
    assert_eq!(
        run(&bob, "grep", json!({"pattern": "b"})).0["matchCount"],
        0
    );
}

#[test]
fn write_file_writes_temp_files_and_refuses_to_overwrite_uploads_and_finals() {
    let db = db();
    let s = project_with_upload(&db);
    let new_id = ids();
    let fs = scope(&db, &s, &new_id);
    let write = |path: &str, content: &str| {
        run(
            &fs,
            "write_file",
            json!({"filePath": path, "content": content}),
        )
    };
    let (out, err) = write("/workspace/clean.csv", "name,qty\na,1\nb,2\n");
    assert!(!err, "{out}");
    assert_eq!(out["existed"], false);
    assert_eq!(write("clean.csv", "name,qty\na,1\n").0["existed"], true);
    let (out, _) = run(&fs, "glob", json!({"pattern": "**/*.csv"}));
    assert_eq!(out["content"], "/workspace/clean.csv\n/workspace/data.csv");
    // The upload is protected; so is a file marked final.
    let (out, err) = write("/workspace/data.csv", "x");
    assert!(
        err && out["error"].as_str().unwrap().contains("uploaded"),
        "{out}"
    );
    let clean = files::list(&db, "alice", &s, "/u")
        .unwrap()
        .into_iter()
        .find(|f| f.name == "clean.csv")
        .unwrap();
    assert_eq!(clean.source, FileSource::Temp);
    files::mark_final(&db, "alice", &s, "/u", &clean.id, 6).unwrap();
    let (out, err) = write("/workspace/clean.csv", "y");
    assert!(
        err && out["error"].as_str().unwrap().contains("final"),
        "{out}"
    );
    let kept = files::read_by_name(&db, "alice", &s, "clean.csv").unwrap();
    assert_eq!(kept.unwrap().data, b"name,qty\na,1\n");
    // No path escapes the flat namespace.
    assert!(write("/etc/passwd", "x").1);
    assert!(write("../x", "x").1);
}

#[test]
fn a_large_output_becomes_a_session_file_read_back_line_by_line_and_deleted_with_the_session() {
    let db = db();
    db.execute("INSERT INTO eve_session (id, principal, created_at, updated_at) VALUES ('wrun_1', 'alice', 1, 1)", vec![]).unwrap();
    let s = session_scope("wrun_1");
    let new_id = || "file_out".to_string();
    let fs = scope(&db, &s, &new_id);
    let big = "x".repeat(5000);
    let path = tools::keep_output(&fs, "call_1", &big).unwrap();
    assert_eq!(path, "/workspace/tool-output-call_1.json");
    let (out, err) = run(&fs, "read_file", json!({"filePath": path, "offset": 3}));
    assert!(!err);
    assert_eq!(out["content"], format!("3: {}\n", "x".repeat(1000)));
    assert_eq!(used(&db, "alice"), 5000);
    db.execute("DELETE FROM eve_session WHERE id = 'wrun_1'", vec![])
        .unwrap();
    assert_eq!(used(&db, "alice"), 0);
}

#[test]
fn downloads_show_only_true_images_inline() {
    let png = b"\x89PNG\r\n\x1a\nrest";
    let (t, d) = files::served_as("a.png", "image/png", png);
    assert_eq!(t, "image/png");
    assert!(d.starts_with("inline;"), "{d}");
    // An HTML page that calls itself a PNG, and an SVG, are downloads.
    for (name, m, b) in [
        ("x.png", "image/png", b"<html>".as_slice()),
        ("x.svg", "image/svg+xml", b"<svg/>".as_slice()),
        ("r\u{e9}sum\u{e9}.html", "text/html", b"<p>".as_slice()),
    ] {
        let (t, d) = files::served_as(name, m, b);
        assert_eq!(t, "application/octet-stream");
        assert!(d.starts_with("attachment;"), "{d}");
    }
    let (_, d) = files::served_as("r\u{e9}sum\u{e9}.html", "text/html", b"");
    assert_eq!(
        d,
        "attachment; filename=\"r_sum_.html\"; filename*=UTF-8''r%C3%A9sum%C3%A9.html"
    );
}

#[test]
fn names_previews_and_patterns() {
    assert_eq!(
        names::clean("../../etc/pa\u{202e}ss\nwd").as_deref(),
        Some("passwd")
    );
    assert_eq!(names::clean(".."), None);
    assert_eq!(
        names::content_disposition("résumé \"x\".csv", false),
        "attachment; filename=\"r_sum_ _x_.csv\"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22x%22.csv"
    );
    assert_eq!(
        names::percent_decode("r%C3%A9.csv").as_deref(),
        Some("ré.csv")
    );
    let pdf = b"%PDF-1.4\n1 0 obj <</Type /Pages /Count 2>>\n2 0 obj <</Type /Page>>\n3 0 obj <</Type/Page>>";
    assert_eq!(
        preview::preview("application/pdf", pdf),
        FilePreview::Pdf { pages: 2 }
    );
    assert_eq!(
        preview::preview("image/png", b"\x89PNG\r\n\x1a\n"),
        FilePreview::Image {
            thumbnail_url: None
        }
    );
    assert_eq!(preview::preview("image/png", b"<svg>"), FilePreview::Other);
}

#[test]
fn globs_are_ripgreps_over_flat_names() {
    let glob = |p: &str| NameGlob::new(p).unwrap();
    assert!(glob("*.{csv,txt}").matches("a.txt"));
    assert!(!glob("*.csv").matches("a.txt"));
    assert!(glob("[ab]?.csv").matches("b1.csv"));
    assert!(!glob("[ab]?.csv").matches("c1.csv"));
    assert!(glob("[!a]*").matches("b.md"));
    // Files have no directories: the prefixes eve's paths carry are dropped.
    for p in ["**/*.csv", "/workspace/*.csv", "./*.csv", "$HOME/**/*.csv"] {
        assert!(glob(p).matches("data.csv"), "{p}");
    }
    assert!(!glob("sub/*.csv").matches("data.csv"));
    // Alternatives do not multiply out: many groups compile as one automaton.
    assert!(glob(&"{a,b}".repeat(64)).matches(&"ab".repeat(32)));
    let err = NameGlob::new("[a-").unwrap_err();
    assert!(err.starts_with("invalid glob pattern"), "{err}");
}

#[test]
fn grep_patterns_are_full_regular_expressions() {
    let re = |p: &str| patterns::line_regex(p, false, false).unwrap();
    // Alternatives, anchors, groups, classes, counted repetition.
    assert!(re("err.*x|^ok$").is_match("an err: x"));
    assert!(!re("err.*x|^ok$").is_match("ok then"));
    assert!(re(r"^(alice|bob),\d+$").is_match("bob,42"));
    assert!(!re(r"^(alice|bob),\d+$").is_match("carol,42"));
    assert!(re("[A-Z]{2}-[0-9]{3}").is_match("ref FR-123."));
    assert!(re(r"\bqty\b").is_match("name, qty"));
    assert!(!re(r"\bqty\b").is_match("qtys"));
    // Case folding is Unicode-aware, as in ripgrep.
    let folded = patterns::line_regex("ÉTÉ", false, true).unwrap();
    assert!(folded.is_match("un été"));
    assert!(re(r"\w+").is_match("数据"));
    // literal: every character stands for itself.
    let lit = patterns::line_regex("a.b(", true, false).unwrap();
    assert!(lit.is_match("x a.b( y"));
    assert!(!lit.is_match("axb("));
    // Bad and oversized patterns are errors the model can read.
    let err = patterns::line_regex("(a|b", false, false).unwrap_err();
    assert!(
        err.starts_with("invalid pattern") && err.contains("unclosed group"),
        "{err}"
    );
    let err = patterns::line_regex(r"(\w{100}){100}", false, false).unwrap_err();
    assert!(err.contains("too large"), "{err}");
}

#[test]
fn grep_and_glob_answer_a_bad_pattern_with_a_tool_error() {
    let db = db();
    let s = session_scope("wrun_1");
    let new_id = || "file_t".to_string();
    let fs = scope(&db, &s, &new_id);
    for (tool, input) in [
        ("grep", json!({"pattern": "(unclosed"})),
        ("grep", json!({"pattern": "x", "glob": "[a-"})),
        ("glob", json!({"pattern": "{a,"})),
    ] {
        let (out, err) = run(&fs, tool, input.clone());
        assert!(err, "{tool} {input}: {out}");
        assert!(
            out["error"].as_str().unwrap().starts_with("invalid"),
            "{out}"
        );
    }
}

#[test]
fn grep_searches_groups_and_classes_and_the_head_of_a_large_file() {
    let db = db();
    db.execute("INSERT INTO eve_session (id, principal, created_at, updated_at) VALUES ('wrun_1', 'alice', 1, 1)", vec![]).unwrap();
    let s = session_scope("wrun_1");
    let new_id = ids();
    let mut fs = scope(&db, &s, &new_id);
    fs.file_max = MAX;
    let text = "id,city\n1,Paris\n2,paris\n3,Lyon\n";
    assert!(
        !run(
            &fs,
            "write_file",
            json!({"filePath": "a.csv", "content": text})
        )
        .1
    );
    let (out, err) = run(
        &fs,
        "grep",
        json!({"pattern": "^[0-9],(P|L)[a-z]+$", "glob": "*.{csv,tsv}"}),
    );
    assert!(!err, "{out}");
    assert_eq!(
        out["content"],
        "/workspace/a.csv:2: 1,Paris\n/workspace/a.csv:4: 3,Lyon\n"
    );
    assert_eq!(out["matchCount"], 2);
    let (out, _) = run(&fs, "grep", json!({"pattern": "PARIS", "ignoreCase": true}));
    assert_eq!(out["matchCount"], 2);
    // grep reads the first 2 MiB of a file; a cut inside a character still leaves text.
    let mut big = "é".repeat(tools::MAX_GREP_BYTES / 2 - 1);
    big.push_str("x\nneedle 中文\n");
    let big = format!("needle first\n{big}");
    assert!(
        !run(
            &fs,
            "write_file",
            json!({"filePath": "big.txt", "content": big})
        )
        .1
    );
    let (out, _) = run(&fs, "grep", json!({"pattern": "needle", "glob": "big.*"}));
    assert_eq!(out["content"], "/workspace/big.txt:1: needle first\n");
}

#[test]
fn grep_answers_within_its_output_bound_however_wide_the_matches() {
    let db = db();
    let s = project_with_upload(&db);
    let new_id = ids();
    let fs = scope(&db, &s, &new_id);
    // 200 matching lines of 2000 characters, each shown with 20 lines around it: unbounded,
    // 16 MB from a 400 KB file.
    let wide = format!("m{}\n", "x".repeat(1999)).repeat(200);
    files::write_temp(&db, new_file(&s, "file_w", "wide.txt", wide.into_bytes())).unwrap();
    let (out, err) = run(
        &fs,
        "grep",
        json!({"pattern": "^m", "glob": "wide.*", "limit": 1000, "context": 20}),
    );
    assert!(!err, "{out}");
    let content = out["content"].as_str().unwrap();
    assert!(content.len() <= tools::MAX_GREP_CHARS, "{}", content.len());
    assert!(content.starts_with("/workspace/wide.txt:1: m"));
    assert_eq!(out["truncated"], true);
}

#[test]
fn grep_reads_at_most_its_byte_budget_per_call() {
    let db = db();
    let s = project_with_upload(&db);
    let new_id = ids();
    let fs = scope(&db, &s, &new_id);
    let filler = "a\n".repeat(tools::MAX_GREP_BYTES / 2).into_bytes();
    let files_over_budget = tools::MAX_GREP_TOTAL_BYTES / tools::MAX_GREP_BYTES + 1;
    for i in 0..files_over_budget {
        let (id, name) = (format!("file_f{i}"), format!("f{i}.txt"));
        files::write_temp(&db, new_file(&s, &id, &name, filler.clone())).unwrap();
    }
    let needle = b"the needle\n".to_vec();
    files::write_temp(&db, new_file(&s, "file_z", "z.txt", needle)).unwrap();
    let (out, _) = run(&fs, "grep", json!({"pattern": "needle"}));
    assert_eq!(
        (out["matchCount"].clone(), out["truncated"].clone()),
        (json!(0), json!(true))
    );
    // Narrowed to the file, it is read.
    let (out, _) = run(&fs, "grep", json!({"pattern": "needle", "glob": "z.*"}));
    assert_eq!(out["content"], "/workspace/z.txt:1: the needle\n");
}

#[test]
fn a_large_output_is_kept_only_within_the_principals_storage() {
    let db = db();
    db.execute("INSERT INTO eve_session (id, principal, created_at, updated_at) VALUES ('wrun_1', 'alice', 1, 1)", vec![]).unwrap();
    let s = session_scope("wrun_1");
    let new_id = || "file_out".to_string();
    let fs = FileScope {
        storage_max: 4000,
        ..scope(&db, &s, &new_id)
    };
    assert!(tools::keep_output(&fs, "call_1", &"x".repeat(5000)).is_err());
    assert_eq!(used(&db, "alice"), 0, "nothing kept past the cap");
    tools::keep_output(&fs, "call_2", &"x".repeat(3000)).unwrap();
    assert_eq!(used(&db, "alice"), 3000);
}
