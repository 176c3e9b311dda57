//! The usage tables over real SQLite (every migration applied), as the components use them.

use eve_api::usage::{MemberModelsRequest, ModelOption, Quota};
use eve_api::ErrorCode;
use eve_sql_testing::Db;
use eve_store::limits::storage_quota;
use eve_store::sql::{Sql, SqlValue};

use crate::{access, quota, report, standing};

fn db() -> Db {
    let db = Db::memory();
    eve_store::migrations::migrate(&db, 0).unwrap();
    db
}

fn account(db: &Db, id: &str, role: &str) {
    db.execute(
        "INSERT INTO account (id, email, role, created_at) VALUES (?1, ?1 || '@example.com', ?2, 1)",
        vec![id.into(), role.into()],
    )
    .unwrap();
}

fn ints(db: &Db, sql: &str) -> Vec<Vec<i64>> {
    db.execute(sql, vec![])
        .unwrap()
        .iter()
        .map(|r| r.iter().map(|v| v.as_i64().unwrap_or(-1)).collect())
        .collect()
}

/// A usage row `days_ago` days back (the window arithmetic is the database's).
fn past_usage(db: &Db, principal: &str, days_ago: u32, model: &str, tin: i64, tout: i64) {
    db.execute(
        "INSERT INTO usage_daily (principal, day, model, tokens_in, tokens_out, calls) \
         VALUES (?1, date('now', ?2), ?3, ?4, ?5, 1)",
        vec![
            principal.into(),
            format!("-{days_ago} days").into(),
            model.into(),
            tin.into(),
            tout.into(),
        ],
    )
    .unwrap();
}

fn models() -> Vec<ModelOption> {
    ["demo/a", "demo/b", "openai/c"]
        .iter()
        .map(|id| ModelOption {
            id: id.to_string(),
            label: id.to_string(),
        })
        .collect()
}

#[test]
fn a_model_call_is_added_to_its_principals_day_and_model() {
    let db = db();
    standing::record(&db, "user:a", "demo/a", 10, 5).unwrap();
    standing::record(&db, "user:a", "demo/a", 1, 2).unwrap();
    standing::record(&db, "user:a", "demo/b", 7, 0).unwrap();
    let rows = ints(
        &db,
        "SELECT tokens_in, tokens_out, calls FROM usage_daily WHERE day = date('now') ORDER BY model",
    );
    assert_eq!(rows, [vec![11, 7, 2], vec![7, 0, 1]]);
    assert_eq!(standing::read(&db, "user:a").unwrap().tokens_today, 25);
    assert_eq!(standing::read(&db, "user:b").unwrap().tokens_today, 0);
}

fn append(db: &Db, session: &str, idx: i64, kind: &str, data: &str) -> Result<(), String> {
    let body = format!(r#"{{"type":"{kind}","data":{data},"meta":{{"id":"e{idx}","at":"x"}}}}"#);
    db.execute(
        "INSERT INTO eve_event (session_id, idx, type, body, created_at) VALUES (?1, ?2, ?3, ?4, 1)",
        vec![session.into(), idx.into(), kind.into(), body.into()],
    )
    .map(|_| ())
}

#[test]
fn a_settled_step_is_counted_once_under_its_started_model_by_the_append_itself() {
    let db = db();
    db.execute(
        "INSERT INTO eve_session (id, principal, created_at, updated_at) VALUES ('s', 'user:a', 1, 1)",
        vec![],
    )
    .unwrap();
    append(
        &db,
        "s",
        0,
        "step.started",
        r#"{"modelId":"demo/b","stepIndex":0}"#,
    )
    .unwrap();
    append(&db, "s", 1, "message.appended", r#"{"messageDelta":"hi"}"#).unwrap();
    let done = r#"{"finishReason":"stop","usage":{"inputTokens":30,"outputTokens":4}}"#;
    append(&db, "s", 2, "step.completed", done).unwrap();
    // A second write of the same slot (a retried append) fails whole: nothing is added.
    assert!(append(&db, "s", 2, "step.completed", done).is_err());
    // A step whose provider reported nothing counts as a call with no tokens.
    append(&db, "s", 3, "step.completed", r#"{"finishReason":"stop"}"#).unwrap();
    let rows = db
        .execute(
            "SELECT principal, model, tokens_in, tokens_out, calls FROM usage_daily",
            vec![],
        )
        .unwrap();
    assert_eq!(
        rows,
        [vec![
            SqlValue::text("user:a"),
            SqlValue::text("demo/b"),
            SqlValue::Integer(30),
            SqlValue::Integer(4),
            SqlValue::Integer(2)
        ]]
    );
}

#[test]
fn the_daily_quota_is_the_override_else_the_variable_and_empty_or_zero_is_no_limit() {
    let mut s = standing::Standing {
        tokens_today: 1000,
        ..Default::default()
    };
    assert!(quota::check_tokens(&s, None, 0).is_ok());
    assert!(quota::check_tokens(&s, Some(""), 0).is_ok());
    assert!(quota::check_tokens(&s, Some("0"), 0).is_ok());
    assert!(quota::check_tokens(&s, Some("1001"), 0).is_ok());
    let e = quota::check_tokens(&s, Some(" 1000 "), 0).unwrap_err();
    assert_eq!(e.code, ErrorCode::QuotaExceeded);
    assert_eq!(e.status(), 429);
    assert!(e.message.contains("1000 tokens per day"), "{}", e.message);
    s.overrides.tokens_per_day = Some(5000);
    assert!(quota::check_tokens(&s, Some("1000"), 0).is_ok());
    s.overrides.tokens_per_day = Some(999);
    assert!(quota::check_tokens(&s, None, 0).is_err());
}

#[test]
fn a_refused_turn_may_retry_at_the_next_utc_midnight() {
    let s = standing::Standing {
        tokens_today: 5,
        ..Default::default()
    };
    let an_hour_before_midnight = (86_400 * 3 - 3600) * 1000;
    let e = quota::check_tokens(&s, Some("5"), an_hour_before_midnight).unwrap_err();
    assert_eq!(e.retry_after_secs, Some(3600));
}

#[test]
fn an_accounts_overrides_and_role_are_read_with_todays_tokens() {
    let db = db();
    account(&db, "a", "member");
    report::set_quota(
        &db,
        "a",
        &Quota {
            tokens_per_day: Some(70),
            storage_bytes: Some(4096),
        },
    )
    .unwrap();
    past_usage(&db, "user:a", 1, "demo/a", 500, 500);
    standing::record(&db, "user:a", "demo/a", 3, 4).unwrap();
    let s = standing::read(&db, "user:a").unwrap();
    assert!(s.is_account);
    assert_eq!(s.role.as_deref(), Some("member"));
    assert_eq!(s.overrides.tokens_per_day, Some(70));
    assert_eq!(s.overrides.storage_bytes, Some(4096));
    assert_eq!(s.tokens_today, 7, "yesterday does not count");
    let local = standing::read(&db, "local-dev").unwrap();
    assert!(!local.is_account && local.role.is_none());
}

#[test]
fn the_storage_override_replaces_principal_max_bytes_and_nothing_else() {
    let db = db();
    account(&db, "a", "member");
    let base = storage_quota(Some("100"), Some("1000"));
    assert_eq!(quota::storage_override(&db, "user:a").unwrap(), None);
    assert_eq!(quota::with_storage_override(base, None), base);
    report::set_quota(
        &db,
        "a",
        &Quota {
            tokens_per_day: None,
            storage_bytes: Some(5000),
        },
    )
    .unwrap();
    let over = quota::storage_override(&db, "user:a").unwrap();
    assert_eq!(over, Some(5000));
    let q = quota::with_storage_override(base, over);
    assert_eq!((q.chat_bytes, q.principal_bytes), (100, 5000));
}

fn member_models(db: &Db, list: Option<&[&str]>) -> Result<(), eve_api::ApiError> {
    let request = MemberModelsRequest {
        member_models: list.map(|l| l.iter().map(|s| s.to_string()).collect()),
    };
    access::set_member_models(db, &request, &models(), "user:admin", 5).map(|_| ())
}

#[test]
fn members_may_use_only_the_member_models_and_everyone_else_every_model() {
    let db = db();
    account(&db, "m", "member");
    account(&db, "adm", "admin");
    let configured: Vec<String> = models().into_iter().map(|m| m.id).collect();
    let m = standing::read(&db, "user:m").unwrap();
    assert_eq!(access::allowed(&m, &configured).len(), 3, "absent: all");
    member_models(&db, Some(&["openai/c", "demo/b"])).unwrap();
    let m = standing::read(&db, "user:m").unwrap();
    assert_eq!(access::allowed(&m, &configured), ["demo/b", "openai/c"]);
    let e = access::check_model(&m, "demo/a").unwrap_err();
    assert_eq!((e.code, e.status()), (ErrorCode::ModelNotAllowed, 403));
    assert!(access::check_model(&m, "demo/b").is_ok());
    for p in ["user:adm", "local-dev", "eve-chat-user", "oidc:x:y"] {
        let s = standing::read(&db, p).unwrap();
        assert!(access::check_model(&s, "demo/a").is_ok(), "{p}");
    }
    let gone = standing::read(&db, "user:deleted").unwrap();
    assert!(access::check_model(&gone, "demo/a").is_err());
    member_models(&db, None).unwrap();
    let m = standing::read(&db, "user:m").unwrap();
    assert!(access::check_model(&m, "demo/a").is_ok());
}

#[test]
fn a_member_models_list_must_name_configured_models_and_a_refused_one_changes_nothing() {
    let db = db();
    member_models(&db, Some(&["demo/a"])).unwrap();
    let e = member_models(&db, Some(&["demo/a", "demo/nope"])).unwrap_err();
    assert_eq!(e.status(), 400);
    assert!(e.message.contains("demo/nope"));
    assert_eq!(member_models(&db, Some(&[])).unwrap_err().status(), 400);
    let now = access::member_models(&db, &models()).unwrap();
    assert_eq!(now.member_models, Some(vec!["demo/a".to_string()]));
    assert_eq!(now.models.len(), 3);
    member_models(&db, Some(&["demo/b", "demo/b", "demo/a"])).unwrap();
    let now = access::member_models(&db, &models()).unwrap();
    assert_eq!(
        now.member_models,
        Some(vec!["demo/b".into(), "demo/a".into()])
    );
}

#[test]
fn a_quota_is_set_for_an_existing_account_only_with_positive_limits() {
    let db = db();
    account(&db, "a", "member");
    let q = Quota {
        tokens_per_day: Some(10),
        storage_bytes: None,
    };
    assert_eq!(report::set_quota(&db, "a", &q).unwrap(), q);
    let e = report::set_quota(&db, "nobody", &q).unwrap_err();
    assert_eq!(e.status(), 404);
    let zero = Quota {
        tokens_per_day: Some(0),
        storage_bytes: None,
    };
    assert_eq!(
        report::set_quota(&db, "a", &zero).unwrap_err().status(),
        400
    );
    let huge = Quota {
        tokens_per_day: None,
        storage_bytes: Some(u64::MAX),
    };
    assert_eq!(
        report::set_quota(&db, "a", &huge).unwrap_err().status(),
        400
    );
    assert_eq!(
        ints(&db, "SELECT tokens_per_day FROM principal_quota"),
        [vec![10]]
    );
    assert_eq!(
        report::set_quota(&db, "a", &Quota::default()).unwrap(),
        Quota::default()
    );
    let s = standing::read(&db, "user:a").unwrap();
    assert_eq!(s.overrides, Quota::default());
}

#[test]
fn the_overview_lists_accounts_and_other_users_with_their_window_totals() {
    let db = db();
    account(&db, "a", "member");
    account(&db, "b", "admin");
    past_usage(&db, "user:a", 0, "demo/a", 10, 1);
    past_usage(&db, "user:a", 2, "demo/b", 20, 2);
    past_usage(&db, "user:a", 40, "demo/b", 999, 999);
    past_usage(&db, "local-dev", 1, "demo/a", 5, 5);
    past_usage(&db, "old-user", 60, "demo/a", 5, 5);
    db.execute(
        "INSERT INTO chat (id, owner, created_at, updated_at) VALUES ('c1', 'user:a', 1, 1), ('c2', 'user:a', 1, 1)",
        vec![],
    )
    .unwrap();
    db.execute(
        "INSERT INTO storage_usage (scope, bytes) VALUES ('principal:user:a', 900), ('attachments:user:a', 300)",
        vec![],
    )
    .unwrap();
    let defaults = Quota {
        tokens_per_day: Some(100),
        storage_bytes: Some(1 << 20),
    };
    let o = report::overview(&db, 30, defaults).unwrap();
    let who: Vec<&str> = o.users.iter().map(|u| u.principal.as_str()).collect();
    assert_eq!(who, ["local-dev", "user:a", "user:b"]);
    let a = &o.users[1];
    assert_eq!(a.email.as_deref(), Some("a@example.com"));
    assert_eq!(
        (a.chats, a.storage_bytes, a.attachment_bytes),
        (2, 900, 300)
    );
    assert_eq!((a.tokens_in, a.tokens_out), (30, 3));
    assert_eq!(o.users[0].email, None);
    assert_eq!(o.defaults, defaults);
    assert_eq!(o.days.len(), 30);
    let last = o.days.last().unwrap();
    assert_eq!((last.tokens_in, last.tokens_out), (10, 1));
    assert_eq!(o.days[27].tokens_in, 20);
    assert_eq!(o.days.iter().map(|d| d.tokens_in).sum::<u64>(), 35);
    assert!(o.days.windows(2).all(|w| w[0].day < w[1].day));
}

#[test]
fn a_users_days_list_each_model_and_an_unknown_user_is_404() {
    let db = db();
    account(&db, "a", "member");
    past_usage(&db, "user:a", 0, "demo/b", 1, 2);
    past_usage(&db, "user:a", 0, "demo/a", 3, 4);
    past_usage(&db, "user:a", 3, "demo/a", 5, 6);
    past_usage(&db, "user:a", 31, "demo/a", 7, 8);
    let d = report::user_days(&db, "a", 30).unwrap().days;
    let models: Vec<&str> = d.iter().map(|m| m.model.as_str()).collect();
    assert_eq!(models, ["demo/a", "demo/a", "demo/b"]);
    assert_eq!((d[0].tokens_in, d[0].calls), (5, 1));
    assert_eq!(report::user_days(&db, "zz", 30).unwrap_err().status(), 404);
}

#[test]
fn the_window_is_one_to_366_days_and_thirty_by_default() {
    assert_eq!(report::parse_days(None).unwrap(), 30);
    assert_eq!(report::parse_days(Some("7")).unwrap(), 7);
    for bad in ["0", "367", "-1", "x", ""] {
        assert_eq!(
            report::parse_days(Some(bad)).unwrap_err().status(),
            400,
            "{bad}"
        );
    }
}

#[test]
fn forgetting_a_principal_removes_its_usage_and_quota_only() {
    let db = db();
    account(&db, "a", "member");
    account(&db, "b", "member");
    let q = Quota {
        tokens_per_day: Some(10),
        storage_bytes: None,
    };
    report::set_quota(&db, "a", &q).unwrap();
    report::set_quota(&db, "b", &q).unwrap();
    standing::record(&db, "user:a", "demo/a", 1, 1).unwrap();
    standing::record(&db, "user:b", "demo/a", 1, 1).unwrap();
    report::forget(&db, "user:a").unwrap();
    report::forget(&db, "user:a").unwrap();
    assert_eq!(standing::read(&db, "user:a").unwrap().tokens_today, 0);
    assert_eq!(
        standing::read(&db, "user:a").unwrap().overrides,
        Quota::default()
    );
    assert_eq!(standing::read(&db, "user:b").unwrap().tokens_today, 2);
    assert_eq!(standing::read(&db, "user:b").unwrap().overrides, q);
}
