//! MCP servers as data on real SQLite (every migration applied), as the admin component and
//! the agent use them.

use eve_api::mcp_servers::{CreateMcpServer, McpAuth, McpServerPatch, McpServerTool};
use eve_api::providers::Rotation;
use eve_api::ErrorCode;
use eve_sql_testing::Db;
use eve_store::sql::Sql;
use serde_json::json;

use super::*;
use crate::sealed::SealingKey;

fn db() -> Db {
    let db = Db::memory();
    eve_store::migrations::migrate(&db, 0).unwrap();
    db
}

fn keys(current: u8, previous: Option<u8>) -> Keys {
    Keys {
        current: SealingKey::from_bytes([current; 32]),
        previous: previous.map(|p| SealingKey::from_bytes([p; 32])),
    }
}

/// No reserved names, any URL: the rules a test of sealing or storage needs.
fn open_rules(keys: Option<&Keys>) -> Rules<'_> {
    Rules {
        reserved: &[],
        allowed: &[],
        keys,
    }
}

fn reserved() -> Vec<String> {
    vec!["notion".into(), "everything".into()]
}

fn new(name: &str, url: &str) -> CreateMcpServer {
    CreateMcpServer {
        name: name.into(),
        display_name: None,
        description: None,
        url: url.into(),
        auth: McpAuth::None,
        token: None,
    }
}

fn bearer(name: &str, token: &str) -> CreateMcpServer {
    CreateMcpServer {
        auth: McpAuth::Bearer,
        token: Some(token.into()),
        ..new(name, "https://mcp.example.com/mcp")
    }
}

fn count(db: &Db) -> i64 {
    let rows = db
        .execute("SELECT count(*) FROM mcp_server", vec![])
        .unwrap();
    rows[0][0].as_i64().unwrap()
}

#[test]
fn servers_are_created_listed_changed_and_removed() {
    let db = db();
    let k = keys(1, None);
    let rules = Rules {
        reserved: &reserved(),
        allowed: &[],
        keys: Some(&k),
    };
    let s = create(
        &db,
        &rules,
        "m1",
        &new("docs", "https://mcp.example.com/mcp"),
        1000,
    )
    .unwrap();
    assert_eq!(
        (s.display_name.as_str(), s.enabled, s.read_only),
        ("docs", true, false)
    );
    assert_eq!((s.tools.len(), s.tools_at.as_deref()), (0, None));
    let p = McpServerPatch {
        display_name: Some("Docs".into()),
        enabled: Some(false),
        ..McpServerPatch::default()
    };
    let s = patch(&db, &rules, "m1", &p, 2000).unwrap();
    assert_eq!((s.display_name.as_str(), s.enabled), ("Docs", false));
    assert_eq!(list(&db, Some(&k)).unwrap(), vec![s]);
    assert!(delete(&db, "m1").unwrap());
    assert!(!delete(&db, "m1").unwrap());
    let gone = patch(&db, &rules, "m1", &p, 3000).unwrap_err();
    assert_eq!(gone.code, ErrorCode::NotFound);
}

#[test]
fn bad_names_urls_and_texts_are_refused_and_nothing_is_stored() {
    let db = db();
    let rules = Rules {
        reserved: &reserved(),
        allowed: &[],
        keys: None,
    };
    let cases = [
        (new("Bad", "https://a.example.com/"), ErrorCode::BadRequest),
        (new("a__b", "https://a.example.com/"), ErrorCode::BadRequest),
        (new("a_", "https://a.example.com/"), ErrorCode::BadRequest),
        (
            new(&"a".repeat(33), "https://a.example.com/"),
            ErrorCode::BadRequest,
        ),
        (new("notion", "https://a.example.com/"), ErrorCode::Conflict),
        (
            new("everything", "https://a.example.com/"),
            ErrorCode::Conflict,
        ),
        (new("x", "http://a.example.com/"), ErrorCode::BadRequest),
        (new("x", "https://127.0.0.1:9/mcp"), ErrorCode::BadRequest),
        (new("x", "https://169.254.169.254/"), ErrorCode::BadRequest),
        (new("x", "https://10.0.0.1/"), ErrorCode::BadRequest),
        (new("x", "https://localhost/"), ErrorCode::BadRequest),
        (new("x", "ftp://a.example.com/"), ErrorCode::BadRequest),
        (bearer("x", "secret"), ErrorCode::Conflict),
        (
            CreateMcpServer {
                token: None,
                ..bearer("x", "")
            },
            ErrorCode::BadRequest,
        ),
        (
            CreateMcpServer {
                token: Some("t".into()),
                ..new("x", "https://a.example.com/")
            },
            ErrorCode::BadRequest,
        ),
        (
            CreateMcpServer {
                display_name: Some("a\u{7}".into()),
                ..new("x", "https://a.example.com/")
            },
            ErrorCode::BadRequest,
        ),
    ];
    for (body, code) in cases {
        let e = create(&db, &rules, "m1", &body, 1).unwrap_err();
        assert_eq!(e.code, code, "{body:?}: {e}");
    }
    let e = create(&db, &rules, "m1", &new("x", "https://169.254.169.254/"), 1).unwrap_err();
    assert!(
        e.message
            .contains("169.254.169.254 is a local or private address"),
        "{e}"
    );
    assert_eq!(count(&db), 0);
}

#[test]
fn an_allowed_host_passes_and_a_name_is_taken_once() {
    let db = db();
    let allowed = vec!["127.0.0.1".to_string()];
    let rules = Rules {
        reserved: &[],
        allowed: &allowed,
        keys: None,
    };
    create(
        &db,
        &rules,
        "m1",
        &new("local", "http://127.0.0.1:9000/mcp"),
        1,
    )
    .unwrap();
    let e = create(
        &db,
        &rules,
        "m2",
        &new("local", "http://127.0.0.1:9001/mcp"),
        1,
    )
    .unwrap_err();
    assert_eq!(e.code, ErrorCode::Conflict);
    let shrunk = Rules {
        allowed: &[],
        ..rules
    };
    let p = McpServerPatch {
        url: Some("http://127.0.0.1:9002/mcp".into()),
        ..Default::default()
    };
    assert_eq!(
        patch(&db, &shrunk, "m1", &p, 2).unwrap_err().code,
        ErrorCode::BadRequest
    );
    assert_eq!(
        get(&db, None, "m1").unwrap().url,
        "http://127.0.0.1:9000/mcp"
    );
}

#[test]
fn a_token_is_stored_sealed_never_answered_and_follows_the_auth() {
    let db = db();
    let k = keys(1, None);
    let rules = open_rules(Some(&k));
    let s = create(&db, &rules, "m1", &bearer("api", "tok-SECRET-1"), 1).unwrap();
    assert!(s.has_token && !s.key_unreadable);
    assert!(!serde_json::to_string(&s).unwrap().contains("SECRET"));
    let raw = db
        .execute("SELECT bearer_sealed, key_id FROM mcp_server", vec![])
        .unwrap();
    let sealed = raw[0][0].as_str().unwrap();
    assert!(!sealed.contains("SECRET"));
    assert_eq!(raw[0][1].as_str(), Some(k.current.id()));
    // A bearer server keeps its token unless told; removing it without another is refused.
    let keep = McpServerPatch {
        description: Some("d".into()),
        ..Default::default()
    };
    assert!(patch(&db, &rules, "m1", &keep, 2).unwrap().has_token);
    let remove = McpServerPatch {
        token: Some(None),
        ..Default::default()
    };
    assert_eq!(
        patch(&db, &rules, "m1", &remove, 3).unwrap_err().code,
        ErrorCode::BadRequest
    );
    let to_oauth = McpServerPatch {
        auth: Some(McpAuth::Oauth),
        ..Default::default()
    };
    let s = patch(&db, &rules, "m1", &to_oauth, 4).unwrap();
    assert!(!s.has_token);
    let token_without_bearer = McpServerPatch {
        token: Some(Some("t".into())),
        ..Default::default()
    };
    let e = patch(&db, &rules, "m1", &token_without_bearer, 5).unwrap_err();
    assert_eq!(e.code, ErrorCode::BadRequest);
    let back = McpServerPatch {
        auth: Some(McpAuth::Bearer),
        token: Some(Some("tok-2".into())),
        ..Default::default()
    };
    assert!(patch(&db, &rules, "m1", &back, 6).unwrap().has_token);
    let agent = for_agent(&db, Some(&k), &[]).unwrap();
    assert_eq!(agent[0].token.as_deref(), Some("tok-2"));
}

/// Issue 32 (5): a bearer token was entered for its URL's origin. Moving the server to
/// another origin needs the token entered again (400, nothing changed); a new path on the
/// same origin keeps it; a move forgets people's OAuth tokens of the server.
#[test]
fn a_new_origin_needs_the_token_again_and_forgets_oauth_tokens() {
    let db = db();
    let k = keys(1, None);
    let rules = open_rules(Some(&k));
    create(&db, &rules, "m1", &bearer("api", "tok-SECRET-1"), 1).unwrap();
    let to = |url: &str, token: Option<&str>| McpServerPatch {
        url: Some(url.into()),
        token: token.map(|t| Some(t.to_string())),
        ..Default::default()
    };
    let token = |db: &Db| for_agent(db, Some(&k), &[]).unwrap()[0].token.clone();

    let e = patch(&db, &rules, "m1", &to("https://evil.example/mcp", None), 2).unwrap_err();
    assert_eq!(e.code, ErrorCode::BadRequest);
    assert_eq!(e.message, TOKEN_AFTER_MOVE);
    let kept = get(&db, Some(&k), "m1").unwrap();
    assert_eq!(kept.url, "https://mcp.example.com/mcp", "nothing changed");
    assert_eq!(token(&db).as_deref(), Some("tok-SECRET-1"));

    let path = patch(
        &db,
        &rules,
        "m1",
        &to("https://mcp.example.com:443/v2", None),
        3,
    );
    assert!(path.unwrap().has_token, "same origin: kept");
    assert_eq!(token(&db).as_deref(), Some("tok-SECRET-1"));

    let moved = patch(
        &db,
        &rules,
        "m1",
        &to("https://new.example/mcp", Some("tok-NEW")),
        4,
    );
    assert_eq!(moved.unwrap().url, "https://new.example/mcp");
    assert_eq!(token(&db).as_deref(), Some("tok-NEW"));

    // An OAuth server: a person's token of it goes with a move, not with a new path.
    let oauth = CreateMcpServer {
        auth: McpAuth::Oauth,
        ..new("wiki", "https://wiki.example/mcp")
    };
    create(&db, &rules, "m2", &oauth, 5).unwrap();
    let people_tokens = |db: &Db| {
        let rows = db
            .execute(
                "SELECT count(*) FROM agent_connection_token WHERE connection = 'wiki'",
                vec![],
            )
            .unwrap();
        rows[0][0].as_i64().unwrap()
    };
    db.execute(
        "INSERT INTO agent_connection_token (principal, connection, access_token, obtained_at) \
         VALUES ('user:a', 'wiki', 'sealed', 1), ('user:b', 'api', 'sealed', 1)",
        vec![],
    )
    .unwrap();
    patch(
        &db,
        &rules,
        "m2",
        &to("https://wiki.example/v2/mcp", None),
        6,
    )
    .unwrap();
    assert_eq!(people_tokens(&db), 1, "same origin: kept");
    patch(
        &db,
        &rules,
        "m2",
        &to("https://wiki.other.example/mcp", None),
        7,
    )
    .unwrap();
    assert_eq!(people_tokens(&db), 0, "another origin: forgotten");
    let others = db
        .execute("SELECT count(*) FROM agent_connection_token", vec![])
        .unwrap();
    assert_eq!(
        others[0][0].as_i64(),
        Some(1),
        "another server's token stays"
    );
}

#[test]
fn refreshed_tools_keep_their_annotations_and_a_failure_keeps_the_last_list() {
    let db = db();
    let rules = open_rules(None);
    create(
        &db,
        &rules,
        "m1",
        &new("docs", "https://mcp.example.com/mcp"),
        1,
    )
    .unwrap();
    let tools = vec![McpServerTool {
        name: "search".into(),
        description: "Searches.".into(),
        annotations: json!({ "readOnlyHint": true, "title": "Search" }),
    }];
    let url = "https://mcp.example.com/mcp";
    let s = set_tools(&db, None, "m1", url, Ok(tools.clone()), 5000).unwrap();
    assert_eq!(s.tools, tools);
    assert_eq!(s.tools_at.as_deref(), Some("1970-01-01T00:00:05.000Z"));
    let s = set_tools(
        &db,
        None,
        "m1",
        url,
        Err("the MCP server answered HTTP 500".into()),
        6000,
    )
    .unwrap();
    assert_eq!(
        (s.tools.clone(), s.tools_error.as_deref()),
        (tools, Some("the MCP server answered HTTP 500"))
    );
    // A refresh of a URL the server no longer has is not kept; a new URL forgets the tools.
    let s = set_tools(
        &db,
        None,
        "m1",
        "https://old.example.com/",
        Ok(vec![]),
        7000,
    )
    .unwrap();
    assert_eq!(s.tools.len(), 1);
    let moved = McpServerPatch {
        url: Some("https://mcp2.example.com/mcp".into()),
        ..Default::default()
    };
    let s = patch(&db, &rules, "m1", &moved, 8000).unwrap();
    assert_eq!((s.tools.len(), s.tools_at, s.tools_error), (0, None, None));
}

#[test]
fn the_agent_gets_enabled_servers_and_a_refused_url_or_lost_key_blocks_one() {
    let db = db();
    let k = keys(1, None);
    let allowed = vec!["127.0.0.1:9000".to_string()];
    let rules = Rules {
        reserved: &[],
        allowed: &allowed,
        keys: Some(&k),
    };
    create(
        &db,
        &rules,
        "m1",
        &new("local", "http://127.0.0.1:9000/mcp"),
        1,
    )
    .unwrap();
    create(&db, &rules, "m2", &bearer("api", "tok"), 1).unwrap();
    create(
        &db,
        &rules,
        "m3",
        &new("off", "https://off.example.com/"),
        1,
    )
    .unwrap();
    let off = McpServerPatch {
        enabled: Some(false),
        ..Default::default()
    };
    patch(&db, &rules, "m3", &off, 2).unwrap();

    let agent = for_agent(&db, Some(&k), &allowed).unwrap();
    let names: Vec<&str> = agent.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["api", "local"]);
    assert!(agent.iter().all(|s| s.blocked.is_none()));

    // The allow-list shrank: the loopback server is blocked, not dropped.
    let agent = for_agent(&db, Some(&k), &[]).unwrap();
    let why = agent[1].blocked.as_deref().unwrap();
    assert!(
        why.contains("127.0.0.1 is a local or private address"),
        "{why}"
    );
    // The key was lost: the bearer server is blocked, and the listing says so.
    let other = keys(2, None);
    let agent = for_agent(&db, Some(&other), &allowed).unwrap();
    assert!(agent[0].blocked.as_deref().unwrap().contains("secrets_key"));
    assert!(get(&db, Some(&other), "m2").unwrap().key_unreadable);
    let (_, target) = refresh_target(&db, Some(&other), "m2", &allowed).unwrap();
    assert!(target.unwrap_err().contains("secrets_key"));
}

#[test]
fn reseal_moves_tokens_to_the_current_key_and_counts_the_unreadable() {
    let db = db();
    let old = keys(1, None);
    let rules = open_rules(Some(&old));
    create(&db, &rules, "m1", &bearer("a", "tok-a"), 1).unwrap();
    let lost = keys(9, None);
    let rules_lost = Rules {
        keys: Some(&lost),
        ..rules
    };
    create(&db, &rules_lost, "m2", &bearer("b", "tok-b"), 1).unwrap();

    let rotated = keys(2, Some(1));
    let done = reseal(&db, &rotated).unwrap();
    assert_eq!(
        done,
        Rotation {
            resealed: 1,
            remaining: 1
        }
    );
    let only_new = keys(2, None);
    assert_eq!(
        for_agent(&db, Some(&only_new), &[]).unwrap()[0]
            .token
            .as_deref(),
        Some("tok-a")
    );
    assert_eq!(
        reseal(&db, &rotated).unwrap(),
        Rotation {
            resealed: 0,
            remaining: 1
        }
    );
}

#[test]
fn the_allow_list_is_the_setting_when_set_else_the_variable() {
    let db = db();
    let hosts = allowed_hosts(&db, Some(" 127.0.0.1:9000, llm.internal ,")).unwrap();
    assert_eq!(hosts, ["127.0.0.1:9000", "llm.internal"]);
    assert!(allowed_hosts(&db, None).unwrap().is_empty());
    db.execute(
        "INSERT INTO system_setting (key, value, updated_at) VALUES ('outboundAllowedHosts', ?1, 1)",
        vec![r#"["10.0.0.1"]"#.into()],
    )
    .unwrap();
    assert_eq!(allowed_hosts(&db, Some("127.0.0.1")).unwrap(), ["10.0.0.1"]);
}
