use eve_api::providers::{ProviderCreate, ProviderKind, ProviderModel, ProviderPatch};
use eve_api::ErrorCode;
use eve_sql_testing::Db;
use eve_store::sql::Sql;

use super::*;
use crate::sealed::{Keys, SealingKey};

const SECRET: &str = "sk-test-PLAINTEXT-4f1c9e";

fn keys(current: u8, previous: Option<u8>) -> Keys {
    Keys {
        current: SealingKey::from_bytes([current; 32]),
        previous: previous.map(|p| SealingKey::from_bytes([p; 32])),
    }
}

fn db() -> Db {
    let db = Db::memory();
    eve_store::migrations::migrate(&db, 0).unwrap();
    db
}

fn model(name: &str, enabled: bool) -> ProviderModel {
    ProviderModel {
        model: name.into(),
        label: None,
        enabled,
        context_tokens: None,
        shadowed: false,
    }
}

fn new(name: &str) -> ProviderCreate {
    ProviderCreate {
        name: name.into(),
        kind: ProviderKind::Openai,
        base_url: Some("https://llm.example.com/v1/".into()),
        api_key: Some(SECRET.into()),
        max_tokens: Some(500),
        models: vec![model("a", true), model("b", false)],
    }
}

fn count<S: Sql>(db: &S, table: &str) -> i64 {
    let rows = db
        .execute(&format!("SELECT count(*) FROM {table}"), vec![])
        .unwrap();
    eve_store::sql::int_at(&rows[0], 0)
}

#[test]
fn a_provider_is_created_listed_and_never_answers_its_key() {
    let db = db();
    let k = keys(1, None);
    let p = create(&db, Some(&k), &[], &new("acme"), 1000).unwrap();
    assert_eq!(p.base_url, "https://llm.example.com/v1");
    assert!(p.has_key && !p.key_unreadable);
    assert_eq!(p.models.len(), 2);
    let json = serde_json::to_string(&list(&db, Some(&k), &[]).unwrap()).unwrap();
    assert!(!json.contains(SECRET), "{json}");
    let stored = db
        .execute("SELECT api_key_sealed, key_id FROM provider", vec![])
        .unwrap();
    assert!(!format!("{stored:?}").contains(SECRET));
    assert_eq!(eve_store::sql::text_at(&stored[0], 1), k.current.id());

    let offered = offered(&db, Some(&k), &[]).unwrap();
    assert_eq!(offered.len(), 1, "only the enabled model");
    assert_eq!(offered[0].id, "acme/a");
    assert_eq!(offered[0].api_key.as_deref(), Some(SECRET));
    assert_eq!(offered[0].max_tokens, Some(500));
    assert!(names_provider(&db, "acme/b").unwrap());
    assert!(!names_provider(&db, "other/b").unwrap());
}

#[test]
fn bad_inputs_are_400_and_change_nothing() {
    let db = db();
    let k = keys(1, None);
    let mut cases = Vec::new();
    for name in ["", "Acme", "-x", "a b", &"x".repeat(33)] {
        cases.push(ProviderCreate {
            name: name.into(),
            ..new("x")
        });
    }
    for url in [
        "http://llm.example.com",
        "https://127.0.0.1/v1",
        "ftp://x.example",
        "https://u:p@x.example",
    ] {
        cases.push(ProviderCreate {
            base_url: Some(url.into()),
            ..new("x")
        });
    }
    cases.push(ProviderCreate {
        api_key: Some(" ".into()),
        ..new("x")
    });
    cases.push(ProviderCreate {
        api_key: Some("a\nb".into()),
        ..new("x")
    });
    cases.push(ProviderCreate {
        max_tokens: Some(0),
        ..new("x")
    });
    cases.push(ProviderCreate {
        models: vec![model("a", true), model("a", true)],
        ..new("x")
    });
    cases.push(ProviderCreate {
        models: vec![model("", true)],
        ..new("x")
    });
    for c in cases {
        let e = create(&db, Some(&k), &[], &c, 1).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest, "{c:?}");
    }
    assert_eq!(
        (count(&db, "provider"), count(&db, "provider_model")),
        (0, 0)
    );

    create(&db, Some(&k), &[], &new("acme"), 1).unwrap();
    let e = create(&db, Some(&k), &[], &new("acme"), 2).unwrap_err();
    assert_eq!(e.code, ErrorCode::Conflict);
    let e = create(&db, None, &[], &new("other"), 2).unwrap_err();
    assert_eq!(e.code, ErrorCode::Conflict, "no secrets_key: no key stored");
    assert!(e.message.contains("secrets_key"));
    assert_eq!(
        (count(&db, "provider"), count(&db, "provider_model")),
        (1, 2)
    );
}

#[test]
fn an_allowed_host_passes_the_guard_and_the_setting_wins_over_the_variable() {
    let db = db();
    let local = ProviderCreate {
        base_url: Some("http://127.0.0.1:9000/v1".into()),
        api_key: None,
        ..new("local")
    };
    assert!(create(&db, None, &[], &local, 1).is_err());
    let allowed = allowed_hosts(&db, Some(" 127.0.0.1:9000 , x.example")).unwrap();
    assert_eq!(allowed, ["127.0.0.1:9000", "x.example"]);
    create(&db, None, &allowed, &local, 1).unwrap();
    assert_eq!(offered(&db, None, &allowed).unwrap().len(), 1);
    assert!(
        offered(&db, None, &[]).unwrap().is_empty(),
        "no longer allowed: not offered"
    );

    db.execute(
        "INSERT INTO system_setting (key, value, updated_at) VALUES \
         ('outboundAllowedHosts', '[\"y.example\"]', 1), ('defaultModel', '\"local/a\"', 1)",
        vec![],
    )
    .unwrap();
    assert_eq!(
        allowed_hosts(&db, Some("127.0.0.1:9000")).unwrap(),
        ["y.example"]
    );
    assert_eq!(default_model(&db).unwrap().as_deref(), Some("local/a"));
}

#[test]
fn a_patch_changes_what_it_names_and_replaces_the_models() {
    let db = db();
    let k = keys(1, None);
    let p = create(&db, Some(&k), &[], &new("acme"), 1).unwrap();
    let body = ProviderPatch {
        api_key: Some(None),
        max_tokens: Some(None),
        models: Some(vec![model("c", true), model("a", false)]),
        ..Default::default()
    };
    let after = patch(&db, Some(&k), &[], &p.id, &body, 2).unwrap();
    assert!(!after.has_key);
    assert_eq!(after.max_tokens, None);
    assert_eq!(after.base_url, p.base_url);
    let names: Vec<(&str, bool)> = after
        .models
        .iter()
        .map(|m| (m.model.as_str(), m.enabled))
        .collect();
    assert_eq!(names, [("c", true), ("a", false)]);

    let bad = ProviderPatch {
        base_url: Some("https://10.0.0.1".into()),
        api_key: Some(Some("new".into())),
        ..Default::default()
    };
    assert_eq!(
        patch(&db, Some(&k), &[], &p.id, &bad, 3).unwrap_err().code,
        ErrorCode::BadRequest
    );
    assert!(
        !get(&db, Some(&k), &p.id).unwrap().has_key,
        "nothing changed"
    );
    let e = patch(&db, Some(&k), &[], "nope", &ProviderPatch::default(), 3).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotFound);

    assert!(delete(&db, &p.id).unwrap());
    assert!(!delete(&db, &p.id).unwrap());
    assert_eq!(
        (count(&db, "provider"), count(&db, "provider_model")),
        (0, 0)
    );
}

#[test]
fn rotation_reseals_under_the_new_key_and_reports_what_is_left() {
    let db = db();
    let old = keys(1, None);
    let p = create(&db, Some(&old), &[], &new("acme"), 1).unwrap();
    let lost = create(&db, Some(&keys(9, None)), &[], &new("lost"), 1).unwrap();
    let rotating = keys(2, Some(1));
    assert!(!get(&db, Some(&rotating), &p.id).unwrap().key_unreadable);
    assert!(get(&db, Some(&rotating), &lost.id).unwrap().key_unreadable);

    let r = crate::rotate(&db, &rotating).unwrap();
    assert_eq!((r.resealed, r.remaining), (1, 1));
    let again = crate::rotate(&db, &rotating).unwrap();
    assert_eq!((again.resealed, again.remaining), (0, 1));

    let new_only = keys(2, None);
    let o = offered(&db, Some(&new_only), &[]).unwrap();
    let acme = o.iter().find(|m| m.id == "acme/a").unwrap();
    assert_eq!(
        acme.api_key.as_deref(),
        Some(SECRET),
        "opens without the old key"
    );
    assert_eq!(o.iter().find(|m| m.id == "lost/a").unwrap().api_key, None);
}

#[test]
fn the_database_file_holds_no_key_in_the_clear() {
    let dir = std::env::temp_dir().join(format!("eve-runtime-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("raw.db");
    let _ = std::fs::remove_file(&path);
    {
        let db = Db(rusqlite::Connection::open(&path).unwrap());
        eve_store::migrations::migrate(&db, 0).unwrap();
        let k = keys(1, None);
        let p = create(&db, Some(&k), &[], &new("acme"), 1).unwrap();
        let body = ProviderPatch {
            api_key: Some(Some(format!("{SECRET}-2"))),
            ..Default::default()
        };
        patch(&db, Some(&k), &[], &p.id, &body, 2).unwrap();
        crate::rotate(&db, &keys(2, Some(1))).unwrap();
    }
    let mut raw = std::fs::read(&path).unwrap();
    for suffix in ["-wal", "-journal"] {
        raw.extend(std::fs::read(dir.join(format!("raw.db{suffix}"))).unwrap_or_default());
    }
    assert!(raw.len() > 4096, "a real database file");
    let needle = b"PLAINTEXT-4f1c9e";
    assert!(
        !raw.windows(needle.len()).any(|w| w == needle),
        "the key is in the file"
    );
    assert!(
        raw.windows(4).any(|w| w == b"acme"),
        "the file holds the rows"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 32 (5): a key was entered for its base URL's origin; a patch that moves the provider
/// to another origin drops it unless it enters one, and a path on the same origin keeps it.
#[test]
fn a_new_origin_drops_the_stored_key_unless_one_is_entered() {
    let db = db();
    let k = keys(1, None);
    let p = create(&db, Some(&k), &[], &new("acme"), 1).unwrap();
    let to = |url: &str, key: Option<&str>| ProviderPatch {
        base_url: Some(url.into()),
        api_key: key.map(|k| Some(k.to_string())),
        ..Default::default()
    };
    let opened = |id: &str| with_key(&db, Some(&k), id).unwrap().1;

    let same = patch(
        &db,
        Some(&k),
        &[],
        &p.id,
        &to("https://llm.example.com:443/v2", None),
        2,
    );
    assert!(same.unwrap().has_key, "same origin, another path: kept");
    assert_eq!(opened(&p.id).as_deref(), Some(SECRET));

    let moved = patch(
        &db,
        Some(&k),
        &[],
        &p.id,
        &to("https://elsewhere.example/v1", None),
        3,
    );
    let moved = moved.unwrap();
    assert!(!moved.has_key, "another host: dropped");
    assert_eq!(opened(&p.id), None);
    assert_eq!(moved.base_url, "https://elsewhere.example/v1");

    let rekeyed = patch(
        &db,
        Some(&k),
        &[],
        &p.id,
        &to("https://third.example", Some("sk-new")),
        4,
    );
    assert!(
        rekeyed.unwrap().has_key,
        "a key entered with the move is stored"
    );
    assert_eq!(opened(&p.id).as_deref(), Some("sk-new"));

    let http = patch(
        &db,
        Some(&k),
        &["third.example".into()],
        &p.id,
        &to("http://third.example", None),
        5,
    );
    assert!(!http.unwrap().has_key, "another scheme is another origin");
}

/// The patch is decided against the base URL it read: a write that finds another one there
/// (a concurrent change) changes nothing, which `patch` answers 409.
#[test]
fn an_update_against_a_base_url_that_changed_meanwhile_changes_nothing() {
    let db = db();
    let k = keys(1, None);
    let p = create(&db, Some(&k), &[], &new("acme"), 1).unwrap();
    let params = vec![
        p.id.as_str().into(),
        SqlValue::Null,
        true.into(),
        SqlValue::Null,
        SqlValue::Null,
        false.into(),
        SqlValue::Null,
        2i64.into(),
        "https://not-what-is-stored.example".into(),
    ];
    assert!(db.execute(sql::UPDATE_PROVIDER, params).unwrap().is_empty());
    assert!(
        get(&db, Some(&k), &p.id).unwrap().has_key,
        "nothing changed"
    );
}
