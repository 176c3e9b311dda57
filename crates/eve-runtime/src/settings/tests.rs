use eve_api::settings::{ToolApproval, ToolDisplay};
use eve_api::ErrorCode;
use eve_sql_testing::Db;
use serde_json::{json, Value};

use super::*;

fn db() -> Db {
    let db = Db::memory();
    eve_store::migrations::migrate(&db, 0).unwrap();
    db
}

fn patch(db: &Db, body: Value, offered: Option<&[String]>) -> Result<(), ApiError> {
    let p = check_patch(body.as_object().unwrap(), offered)?;
    apply(db, &p, "user:admin", 1_000)
}

#[test]
fn unset_keys_fall_back_to_the_variables_then_the_built_in_defaults() {
    let db = db();
    assert_eq!(instructions(&db).unwrap(), None);
    assert_eq!(default_model(&db).unwrap(), None);
    assert_eq!(tool_display(&db).unwrap(), ToolDisplay::Collapsed);
    assert!(!log_model_requests(&db).unwrap());
    assert_eq!(
        signup_domains(&db, Some("Example.com, team.example.org")).unwrap(),
        ["example.com", "team.example.org"]
    );
    assert_eq!(default_tokens_per_day(&db, Some("500")).unwrap(), Some(500));
    assert_eq!(default_tokens_per_day(&db, None).unwrap(), None);
    let approvals = tool_approvals(&db, Some(r#"{"weather__get": "always"}"#)).unwrap();
    assert_eq!(approvals.get("weather__get"), Some(&ToolApproval::Always));
    assert!(tool_approvals(&db, Some("not json")).unwrap().is_empty());
    assert_eq!(
        outbound_allowed_hosts(&db, Some("127.0.0.1:8080 ,bad_host!")).unwrap(),
        ["127.0.0.1:8080"]
    );
    assert_eq!(stored(&db).unwrap(), Settings::default());
}

#[test]
fn a_stored_setting_overrides_its_variable_and_null_returns_to_it() {
    let db = db();
    let body = json!({
        "instructions": "You are terse.",
        "defaultModel": "openai/gpt-4o",
        "toolDisplay": "full",
        "logModelRequests": true,
        "signupDomains": ["Example.COM."],
        "defaultTokensPerDay": 0,
        "toolApprovals": {"weather__get": "once"},
        "outboundAllowedHosts": ["LocalHost:3000", "[::1]:8443", "10.0.0.5"],
    });
    patch(&db, body, Some(&["openai/gpt-4o".to_string()])).unwrap();
    assert_eq!(
        instructions(&db).unwrap().as_deref(),
        Some("You are terse.")
    );
    assert_eq!(
        default_model(&db).unwrap().as_deref(),
        Some("openai/gpt-4o")
    );
    assert_eq!(tool_display(&db).unwrap(), ToolDisplay::Full);
    assert!(log_model_requests(&db).unwrap());
    assert_eq!(
        signup_domains(&db, Some("other.org")).unwrap(),
        ["example.com"]
    );
    assert_eq!(
        default_tokens_per_day(&db, Some("500")).unwrap(),
        None,
        "0 is no limit"
    );
    assert_eq!(
        tool_approvals(&db, None).unwrap().get("weather__get"),
        Some(&ToolApproval::Once)
    );
    assert_eq!(
        outbound_allowed_hosts(&db, Some("x.org")).unwrap(),
        ["localhost:3000", "[::1]:8443", "10.0.0.5"]
    );

    patch(
        &db,
        json!({"signupDomains": null, "defaultTokensPerDay": 42}),
        None,
    )
    .unwrap();
    assert_eq!(
        signup_domains(&db, Some("other.org")).unwrap(),
        ["other.org"]
    );
    assert_eq!(default_tokens_per_day(&db, Some("500")).unwrap(), Some(42));
    let s = stored(&db).unwrap();
    assert_eq!(s.signup_domains, None);
    assert_eq!(s.default_tokens_per_day, Some(42));
    assert_eq!(s.tool_display, Some(ToolDisplay::Full));
}

#[test]
fn one_bad_key_is_a_400_naming_it_and_nothing_is_written() {
    let db = db();
    patch(&db, json!({"toolDisplay": "full"}), None).unwrap();
    let big = "x".repeat(MAX_INSTRUCTIONS_BYTES + 1);
    let cases = [
        (json!({"instructions": big}), "instructions"),
        (json!({"instructions": "  "}), "instructions"),
        (json!({"instructions": 3}), "instructions"),
        (json!({"defaultModel": "nope/model"}), "defaultModel"),
        (json!({"defaultModel": "two words"}), "defaultModel"),
        (json!({"toolDisplay": "hidden"}), "toolDisplay"),
        (json!({"logModelRequests": "yes"}), "logModelRequests"),
        (json!({"signupDomains": ["a@b.com"]}), "signupDomains"),
        (json!({"signupDomains": "example.com"}), "signupDomains"),
        (json!({"defaultTokensPerDay": -1}), "defaultTokensPerDay"),
        (json!({"defaultTokensPerDay": 1.5}), "defaultTokensPerDay"),
        (
            json!({"toolApprovals": {"weather__get": "sometimes"}}),
            "toolApprovals",
        ),
        (
            json!({"toolApprovals": {"bad name": "once"}}),
            "toolApprovals",
        ),
        (
            json!({"outboundAllowedHosts": ["http://x.org"]}),
            "outboundAllowedHosts",
        ),
        (
            json!({"outboundAllowedHosts": ["x.org:99999"]}),
            "outboundAllowedHosts",
        ),
        (json!({"colour": "blue"}), "colour"),
    ];
    let offered = ["openai/gpt-4o".to_string()];
    for (body, key) in cases {
        let mut body = body.as_object().unwrap().clone();
        // A good key beside the bad one is not written either.
        body.entry("logModelRequests").or_insert(json!(true));
        body.entry("toolDisplay").or_insert(Value::Null);
        let e = patch(&db, Value::Object(body.clone()), Some(&offered))
            .map(|_| ())
            .expect_err(&format!("{body:?}"));
        assert_eq!(e.code, ErrorCode::BadRequest, "{body:?}");
        assert!(e.message.starts_with(&format!("{key}: ")), "{}", e.message);
        assert_eq!(stored(&db).unwrap().log_model_requests, None);
        assert_eq!(tool_display(&db).unwrap(), ToolDisplay::Full);
    }
}

#[test]
fn bootstrap_lists_what_applies_without_rows() {
    let vars = |n: &str| match n {
        "signup_allowed_domains" => Some("example.com".to_string()),
        "quota_tokens_per_day" => Some("100".to_string()),
        _ => None,
    };
    let b = bootstrap(vars, "built in", Some("demo/eve-demo".into()));
    assert_eq!(b.instructions.as_deref(), Some("built in"));
    assert_eq!(b.default_model.as_deref(), Some("demo/eve-demo"));
    assert_eq!(b.signup_domains, Some(vec!["example.com".to_string()]));
    assert_eq!(b.default_tokens_per_day, Some(100));
    assert_eq!(b.tool_display, Some(ToolDisplay::Collapsed));
    assert_eq!(b.outbound_allowed_hosts, Some(vec![]));
}

#[test]
fn hosts_and_domains_are_checked_and_canonical() {
    for ok in ["example.com", "a-b.example.org"] {
        assert!(domain(ok).is_ok(), "{ok}");
    }
    for bad in ["", "com", "-a.com", "a_b.com", "a..com", "a b.com"] {
        assert!(domain(bad).is_err(), "{bad}");
    }
    for ok in [
        "localhost",
        "LOCALHOST:8080",
        "127.0.0.1",
        "[::1]",
        "[fe80::1]:443",
        "mcp.internal:3000",
    ] {
        assert!(host(ok).is_ok(), "{ok}");
    }
    for bad in [
        "",
        "::1",
        "host:0",
        "host:x",
        "https://x.org",
        "x.org/path",
        "[nope]",
    ] {
        assert!(host(bad).is_err(), "{bad}");
    }
}

#[test]
fn a_hand_written_row_that_does_not_parse_counts_as_unset() {
    let db = db();
    db.execute(
        "INSERT INTO system_setting (key, value, updated_at) VALUES ('toolDisplay', '\"sideways\"', 0)",
        vec![],
    )
    .unwrap();
    assert_eq!(tool_display(&db).unwrap(), ToolDisplay::Collapsed);
    assert_eq!(stored(&db).unwrap().tool_display, None);
}
