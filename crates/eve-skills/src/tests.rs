//! The domain on real SQLite (every migration applied), as the components use it; SKILL.md
//! texts and zips made here.

use std::io::Write;

use eve_api::skills::SkillScope;
use eve_api::ErrorCode;
use eve_sql_testing::Db;
use eve_store::sql::Sql;

use crate::import;
use crate::skill_md::{self, SkillMd};
use crate::store::{self, Caller, NewSkill, SkillPatch};

fn db() -> Db {
    let db = Db::memory();
    eve_store::migrations::migrate(&db, 0).unwrap();
    db
}

const ALICE: Caller = Caller {
    principal: "user:alice",
    admin: false,
};
const BOB: Caller = Caller {
    principal: "user:bob",
    admin: false,
};
const ADMIN: Caller = Caller {
    principal: "user:root",
    admin: true,
};

fn new(name: &str, description: &str) -> NewSkill {
    NewSkill {
        name: name.into(),
        description: description.into(),
        body: format!("Do {name}."),
        ..NewSkill::default()
    }
}

fn code(e: eve_api::ApiError) -> ErrorCode {
    e.code
}

#[test]
fn a_skill_md_is_read_as_eve_reads_it() {
    let md = skill_md::parse(
        "---\nname: release-notes\ndescription: Use for release notes.\n---\n\n# Steps\n",
    )
    .unwrap();
    assert_eq!(
        md,
        SkillMd {
            name: Some("release-notes".into()),
            description: "Use for release notes.".into(),
            deferred: false,
            license: None,
            body: "# Steps\n".into(),
        }
    );
    // A BOM, `---yaml`, CRLF, other keys ignored, `deferred`, a quoted description, an empty
    // body, a closing fence with trailing blanks and no break after it.
    let md = skill_md::parse(
        "\u{feff}--- yaml\r\ndescription: \"a: b\"\r\ndeferred: true\r\nlicense: MIT\r\nmetadata:\r\n  x: y\r\nallowed-tools: [a]\r\n--- \t",
    )
    .unwrap();
    assert_eq!(md.description, "a: b");
    assert!(md.deferred);
    assert_eq!(md.license.as_deref(), Some("MIT"));
    assert_eq!(md.body, "");
    // `deferred: null` is absent; `True` is YAML's true as js-yaml reads it.
    assert!(
        !skill_md::parse("---\ndescription: d\ndeferred: ~\n---\nx")
            .unwrap()
            .deferred
    );
    assert!(
        skill_md::parse("---\ndescription: d\ndeferred: True\n---\nx")
            .unwrap()
            .deferred
    );
}

#[test]
fn bad_frontmatter_is_refused_with_eves_reason() {
    let cases = [
        (
            "# No frontmatter\n",
            "Skill markdown must start with YAML frontmatter.",
        ),
        (
            "----\ndescription: d\n----\n",
            "Skill markdown must start with YAML frontmatter.",
        ),
        (
            "---toml\ndescription = 'd'\n---\n",
            "Frontmatter language \"toml\" is not supported. Use YAML frontmatter.",
        ),
        (
            "---\ndescription: d\n",
            "Markdown frontmatter is missing a closing delimiter.",
        ),
        (
            "---\n- a\n- b\n---\n",
            "Markdown frontmatter must parse to an object.",
        ),
        (
            "---\njust text\n---\n",
            "Markdown frontmatter must parse to an object.",
        ),
        (
            "---\n---\nbody",
            "Missing required \"description\" frontmatter.",
        ),
        (
            "---\nname: x\n---\nbody",
            "Missing required \"description\" frontmatter.",
        ),
        (
            "---\ndescription: 3\n---\n",
            "Expected \"description\" frontmatter to be a string.",
        ),
        (
            "---\ndescription: [a]\n---\n",
            "Expected \"description\" frontmatter to be a string.",
        ),
        (
            "---\ndescription: d\nlicense: 1\n---\n",
            "Expected \"license\" frontmatter to be a string.",
        ),
        (
            "---\ndescription: d\ndeferred: \"true\"\n---\n",
            "Expected \"deferred\" frontmatter to be true or false.",
        ),
        (
            "---\ndescription: d\ndeferred: yes\n---\n",
            "Expected \"deferred\" frontmatter to be true or false.",
        ),
    ];
    for (text, reason) in cases {
        let e = skill_md::parse(text).unwrap_err();
        assert_eq!(
            e,
            format!("Invalid authored skill frontmatter in \"SKILL.md\": {reason}"),
            "{text:?}"
        );
    }
    let e = skill_md::parse("---\ndescription: [unclosed\n---\n").unwrap_err();
    assert!(
        e.starts_with("Invalid authored skill frontmatter in \"SKILL.md\": "),
        "{e}"
    );
    let long = format!("---\ndescription: {}\n---\n", "d".repeat(1025));
    assert!(skill_md::parse(&long).unwrap_err().contains("at most 1024"));
}

#[test]
fn names_follow_eves_rule_and_its_reserved_namespace() {
    for ok in ["a", "Alpha_2", "release-notes", "9lives", &"x".repeat(64)] {
        skill_md::check_name(ok).unwrap();
    }
    for bad in ["", "-x", "_x", "a b", "a.b", "é", "a/b", &"x".repeat(65)] {
        let e = skill_md::check_name(bad).unwrap_err();
        assert!(e.ends_with(skill_md::NAME_RULE), "{bad}: {e}");
    }
    for reserved in ["eve", "eve__search"] {
        assert!(skill_md::check_name(reserved)
            .unwrap_err()
            .contains("reserved"));
    }
    skill_md::check_name("eve_x").unwrap();
    skill_md::check_name("Eve").unwrap();
}

fn zip(files: &[(&str, &str)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, text) in files {
        w.start_file(*name, options).unwrap();
        w.write_all(text.as_bytes()).unwrap();
    }
    w.finish().unwrap().into_inner()
}

const MD: &str = "---\nname: from-frontmatter\ndescription: Do things.\n---\nStep 1.\n";

#[test]
fn imports_name_a_skill_as_eve_does() {
    let text = import::from_text(MD, None).unwrap();
    assert_eq!(text.name, "from-frontmatter");
    assert_eq!(import::from_text(MD, Some("given")).unwrap().name, "given");
    let e = import::from_text("---\ndescription: d\n---\n", None).unwrap_err();
    assert!(e.contains("needs a name"), "{e}");
    // A folder names the skill (eve ignores the frontmatter's name), its other files are
    // not kept, a Finder's __MACOSX copy is skipped.
    let z = zip(&[
        ("my-skill/SKILL.md", MD),
        ("my-skill/references/a.md", "ref"),
        ("__MACOSX/my-skill/._SKILL.md", "junk"),
    ]);
    let imported = import::from_zip(&z).unwrap();
    assert_eq!(imported.name, "my-skill");
    assert_eq!(imported.md.body, "Step 1.\n");
    assert_eq!(
        import::from_zip(&zip(&[("skill.md", MD)])).unwrap().name,
        "from-frontmatter"
    );
}

#[test]
fn bad_zips_are_refused_with_the_reason() {
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"not a zip".to_vec(), "not a readable zip"),
        (zip(&[("a/README.md", "x")]), "no SKILL.md"),
        (zip(&[("a/b/SKILL.md", MD)]), "no SKILL.md"),
        (
            zip(&[("a/SKILL.md", MD), ("b/SKILL.md", MD)]),
            "more than one",
        ),
        (
            zip(&[("bad name/SKILL.md", MD)]),
            "Skill \"skills/bad name/SKILL.md\" has an illegal name",
        ),
        (
            zip(&[("ok/SKILL.md", "no frontmatter")]),
            "must start with YAML frontmatter",
        ),
        (vec![0; import::MAX_ZIP_BYTES + 1], "at most 1024 KiB"),
    ];
    for (bytes, reason) in cases {
        let e = import::from_zip(&bytes).unwrap_err();
        assert!(e.contains(reason), "{reason}: {e}");
    }
    // A SKILL.md that inflates past the bound is cut off there, not read to the end.
    let huge = format!("---\ndescription: d\n---\n{}", "a".repeat(200 * 1024));
    let e = import::from_zip(&zip(&[("big/SKILL.md", &huge)])).unwrap_err();
    assert!(e.contains("at most"), "{e}");
}

#[test]
fn own_skills_are_created_changed_deleted_and_invisible_to_others() {
    let db = db();
    let s = store::create(&db, &ALICE, "sk_1", false, &new("notes", "Take notes."), 1).unwrap();
    assert_eq!(
        (s.scope, s.enabled, s.editable),
        (SkillScope::Personal, true, true)
    );
    let dup = store::create(&db, &ALICE, "sk_2", false, &new("notes", "again"), 2);
    assert_eq!(code(dup.unwrap_err()), ErrorCode::Conflict);
    // Bob may use the same name; he neither sees nor touches Alice's.
    store::create(&db, &BOB, "sk_3", false, &new("notes", "Bob's."), 2).unwrap();
    assert_eq!(store::list(&db, &BOB).unwrap().len(), 1);
    let patch = SkillPatch {
        body: Some("mine now".into()),
        ..SkillPatch::default()
    };
    for e in [
        store::get(&db, &BOB, "sk_1").unwrap_err(),
        store::update(&db, &BOB, "sk_1", &patch, 3).unwrap_err(),
        store::delete(&db, &BOB, "sk_1").unwrap_err(),
        store::set_enabled(&db, &BOB, "sk_1", false).unwrap_err(),
    ] {
        assert_eq!(e.code, ErrorCode::NotFound);
    }
    let s = store::update(&db, &ALICE, "sk_1", &patch, 3).unwrap();
    assert_eq!(
        (s.body.as_str(), s.description.as_str()),
        ("mine now", "Take notes.")
    );
    store::create(&db, &ALICE, "sk_4", false, &new("other", "o"), 4).unwrap();
    let rename = SkillPatch {
        name: Some("notes".into()),
        ..SkillPatch::default()
    };
    let e = store::update(&db, &ALICE, "sk_4", &rename, 5).unwrap_err();
    assert_eq!(e.code, ErrorCode::Conflict);
    let bad = SkillPatch {
        name: Some("bad name".into()),
        ..SkillPatch::default()
    };
    assert_eq!(
        store::update(&db, &ALICE, "sk_4", &bad, 5)
            .unwrap_err()
            .code,
        ErrorCode::BadRequest
    );
    assert_eq!(store::get(&db, &ALICE, "sk_4").unwrap().name, "other");
    store::delete(&db, &ALICE, "sk_1").unwrap();
    assert_eq!(
        store::get(&db, &ALICE, "sk_1").unwrap_err().code,
        ErrorCode::NotFound
    );
    assert_eq!(store::get(&db, &BOB, "sk_3").unwrap().body, "Do notes.");
}

#[test]
fn global_skills_are_for_admins_to_write_and_everyone_to_switch() {
    let db = db();
    let e = store::create(&db, &ALICE, "sk_g", true, &new("review", "Review code."), 1);
    assert_eq!(code(e.unwrap_err()), ErrorCode::Forbidden);
    assert!(store::list(&db, &ALICE).unwrap().is_empty());
    let g = store::create(&db, &ADMIN, "sk_g", true, &new("review", "Review code."), 1).unwrap();
    assert_eq!(g.scope, SkillScope::Global);
    let seen = store::get(&db, &ALICE, "sk_g").unwrap();
    assert!(seen.enabled && !seen.editable);
    let patch = SkillPatch {
        body: Some("x".into()),
        ..SkillPatch::default()
    };
    assert_eq!(
        store::update(&db, &ALICE, "sk_g", &patch, 2)
            .unwrap_err()
            .code,
        ErrorCode::Forbidden
    );
    assert_eq!(
        store::delete(&db, &ALICE, "sk_g").unwrap_err().code,
        ErrorCode::Forbidden
    );
    assert_eq!(store::get(&db, &ALICE, "sk_g").unwrap().body, "Do review.");
    // Alice switches it off for herself only.
    assert!(
        !store::set_enabled(&db, &ALICE, "sk_g", false)
            .unwrap()
            .enabled
    );
    assert!(store::offered(&db, "user:alice").unwrap().is_empty());
    assert_eq!(store::offered(&db, "user:bob").unwrap().len(), 1);
    assert!(
        store::set_enabled(&db, &ALICE, "sk_g", true)
            .unwrap()
            .enabled
    );
    store::set_enabled(&db, &ALICE, "sk_g", false).unwrap();
    // Deleting the skill deletes every switch on it.
    store::delete(&db, &ADMIN, "sk_g").unwrap();
    let left = db
        .execute("SELECT count(*) FROM skill_disabled", vec![])
        .unwrap();
    assert_eq!(left[0][0].as_i64(), Some(0));
}

#[test]
fn an_own_enabled_skill_replaces_a_global_one_of_its_name() {
    let db = db();
    store::create(&db, &ADMIN, "sk_g", true, &new("review", "Global."), 1).unwrap();
    store::create(
        &db,
        &ADMIN,
        "sk_h",
        true,
        &new("deploy", "Deploy.").with_deferred(),
        1,
    )
    .unwrap();
    store::create(&db, &ALICE, "sk_a", false, &new("review", "Mine."), 2).unwrap();
    let offered = store::offered(&db, "user:alice").unwrap();
    let names: Vec<_> = offered
        .iter()
        .map(|s| (s.name.as_str(), s.description.as_str(), s.deferred))
        .collect();
    assert_eq!(
        names,
        [("deploy", "Deploy.", true), ("review", "Mine.", false)]
    );
    assert!(store::get(&db, &ALICE, "sk_g").unwrap().shadowed);
    // Switching her own off brings the global one back.
    store::set_enabled(&db, &ALICE, "sk_a", false).unwrap();
    let offered = store::offered(&db, "user:alice").unwrap();
    assert_eq!(offered[1].description, "Global.");
    assert!(!store::get(&db, &ALICE, "sk_g").unwrap().shadowed);
}

#[test]
fn admins_are_read_from_sql_and_local_dev_is_one() {
    let db = db();
    assert!(store::is_admin(&db, "local-dev", true).unwrap());
    assert!(!store::is_admin(&db, "eve-chat-user", false).unwrap());
    assert!(!store::is_admin(&db, "user:a1", false).unwrap());
    db.execute(
        "INSERT INTO account (id, email, password_hash, role, created_at) VALUES ('a1', 'a@x', 'h', 'admin', 1)",
        vec![],
    )
    .unwrap();
    assert!(store::is_admin(&db, "user:a1", false).unwrap());
    db.execute("UPDATE account SET disabled = 1 WHERE id = 'a1'", vec![])
        .unwrap();
    assert!(!store::is_admin(&db, "user:a1", false).unwrap());
}

#[test]
fn a_full_owner_is_refused() {
    let db = db();
    for i in 0..store::MAX_SKILLS {
        store::create(
            &db,
            &ALICE,
            &format!("sk_{i}"),
            false,
            &new(&format!("s{i}"), "d"),
            1,
        )
        .unwrap();
    }
    let e = store::create(&db, &ALICE, "sk_x", false, &new("one-more", "d"), 1).unwrap_err();
    assert!(e.message.contains("at most"), "{}", e.message);
}

trait Deferred {
    fn with_deferred(self) -> Self;
}

impl Deferred for NewSkill {
    fn with_deferred(mut self) -> Self {
        self.deferred = true;
        self
    }
}
