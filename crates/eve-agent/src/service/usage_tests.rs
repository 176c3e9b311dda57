//! Usage, quotas and model access (issue 20) through the routes' decisions and the work loop,
//! over real SQLite: what a settled turn records, and what a message past a quota or outside
//! the member models is refused with, nothing kept.

use eve_api::eve::{Event, StepCompleted};
use eve_store::sql::Sql;

use crate::protocol::Refusal;
use crate::service::sessions;
use crate::service::work::{drain, First};
use crate::session::store::testing::Lite;
use crate::session::store::AgentStore;

use super::tests::{configured, db, request, Lent, Offline};

fn create(env: &Offline, db: &Lite, who: &str, body: &str) -> Result<String, Refusal> {
    let (lent, id) = sessions::create(env, || Ok(Lent(db)), who, request(body, true), None)?;
    drain(env, &lent, &id, who, First::Nothing, None);
    Ok(id)
}

fn send(env: &Offline, db: &Lite, who: &str, id: &str, body: &str) -> Result<(), Refusal> {
    let (lent, _, first) = sessions::send(env, || Ok(Lent(db)), who, id, request(body, false))?;
    drain(env, &lent, id, who, first, None);
    Ok(())
}

/// What a refused request must not have left: (sessions, events, inbox rows).
fn kept(db: &Lite) -> (i64, i64, i64) {
    (
        int(db, "SELECT COUNT(*) FROM eve_session"),
        int(db, "SELECT COUNT(*) FROM eve_event"),
        int(db, "SELECT COUNT(*) FROM eve_inbox"),
    )
}

fn int(db: &Lite, sql: &str) -> i64 {
    db.execute(sql, vec![]).unwrap()[0][0].as_i64().unwrap()
}

/// (model, tokens in, tokens out, calls) of every usage row.
fn usage_rows(db: &Lite) -> Vec<(String, i64, i64, i64)> {
    db.execute(
        "SELECT model, tokens_in, tokens_out, calls FROM usage_daily ORDER BY model",
        vec![],
    )
    .unwrap()
    .into_iter()
    .map(|r| {
        let n = |i: usize| r[i].as_i64().unwrap();
        (r[0].as_str().unwrap().to_string(), n(1), n(2), n(3))
    })
    .collect()
}

/// What the log's `step.completed` events say was used: (tokens in, tokens out, steps).
fn logged(db: &Lite, id: &str) -> (i64, i64, i64) {
    let steps: Vec<StepCompleted> = AgentStore::new(db)
        .all_events(id)
        .unwrap()
        .into_iter()
        .filter_map(|e| match e {
            Event::StepCompleted(s) => Some(s),
            _ => None,
        })
        .collect();
    let sum = |f: fn(&StepCompleted) -> u64| steps.iter().map(f).sum::<u64>() as i64;
    (
        sum(|s| s.usage.map_or(0, |u| u.input_tokens)),
        sum(|s| s.usage.map_or(0, |u| u.output_tokens)),
        steps.len() as i64,
    )
}

#[test]
fn a_settled_turn_adds_its_tokens_to_the_principals_day_under_its_model() {
    let db = db();
    let id = create(
        &configured(&[]),
        &db,
        "p",
        r#"{"message":"weather in Paris"}"#,
    )
    .unwrap();
    let (tin, tout, steps) = logged(&db, &id);
    assert!(
        steps >= 2 && tin > 0 && tout > 0,
        "a tool step and an answer"
    );
    assert_eq!(
        usage_rows(&db),
        [("demo/eve-demo".into(), tin, tout, steps)]
    );
    assert_eq!(
        int(
            &db,
            "SELECT COUNT(*) FROM usage_daily WHERE principal = 'p' AND day = date('now')"
        ),
        1
    );
}

/// A node died after the turn's first step settled; another takes the session over and
/// finishes the turn. The first step was counted when it was appended, and only then.
#[test]
fn a_turn_taken_over_after_its_runner_died_counts_each_settled_step_once() {
    let env = configured(&[]);
    let done = db();
    let id = create(&env, &done, "p", r#"{"message":"weather in Paris"}"#).unwrap();
    let full = AgentStore::new(&done).envelopes(&id).unwrap();
    let first_step = full
        .iter()
        .position(|e| matches!(e.event, Event::StepCompleted(_)))
        .unwrap();
    let crashed = db();
    crashed
        .execute(
            "INSERT INTO eve_session (id, principal, created_at, updated_at, lease_owner, lease_expires) \
             VALUES (?1, 'p', 1, 1, 'dead-node', 0)",
            vec![id.as_str().into()],
        )
        .unwrap();
    for (i, e) in full[..=first_step].iter().enumerate() {
        let row = vec![
            id.as_str().into(),
            (i as i64).into(),
            e.event.type_name().into(),
            e.to_json().into(),
        ];
        crashed
            .execute(
                "INSERT INTO eve_event (session_id, idx, type, body, created_at) VALUES (?1, ?2, ?3, ?4, 1)",
                row,
            )
            .unwrap();
    }
    assert_eq!(
        usage_rows(&crashed)[0].3,
        1,
        "the first step, counted as it settled"
    );
    drain(&env, &crashed, &id, "p", First::Nothing, None);
    let log = AgentStore::new(&crashed).all_events(&id).unwrap();
    assert!(
        matches!(log.last(), Some(Event::SessionWaiting(_))),
        "the turn was finished"
    );
    let (tin, tout, steps) = logged(&crashed, &id);
    assert!(steps >= 2);
    assert_eq!(
        usage_rows(&crashed),
        [("demo/eve-demo".into(), tin, tout, steps)]
    );
}

fn refused_with(result: Result<impl Sized, Refusal>, status: u16, code: &str) -> Refusal {
    let Err(e) = result else {
        panic!("expected {status} {code}")
    };
    assert_eq!((e.status, e.code.as_deref()), (status, Some(code)), "{e:?}");
    e
}

#[test]
fn a_message_at_the_daily_token_quota_is_429_naming_the_quota_and_keeps_nothing() {
    let env = configured(&[("quota_tokens_per_day", "40")]);
    let db = db();
    eve_usage::standing::record(&db, "p", "demo/eve-demo", 39, 0).unwrap();
    let id = create(&env, &db, "p", r#"{"message":"hi"}"#).unwrap();
    let before = kept(&db);
    let e = refused_with(
        send(&env, &db, "p", &id, r#"{"message":"again"}"#),
        429,
        "quota_exceeded",
    );
    assert!(e.message.contains("40 tokens per day"), "{}", e.message);
    assert!(e.retry_after_secs.is_some_and(|s| s > 0 && s <= 86_400));
    refused_with(
        create(&env, &db, "p", r#"{"message":"hi"}"#),
        429,
        "quota_exceeded",
    );
    assert_eq!(kept(&db), before, "nothing of either refused request");
    // Another principal has its own day; an empty create starts no turn.
    assert!(create(&env, &db, "q", r#"{"message":"hi"}"#).is_ok());
    assert!(create(&env, &db, "p", "{}").is_ok());
}

fn account(db: &Lite, id: &str, role: &str) {
    db.execute(
        "INSERT INTO account (id, email, role, created_at) VALUES (?1, ?1 || '@example.com', ?2, 1)",
        vec![id.into(), role.into()],
    )
    .unwrap();
}

fn own_quota(db: &Lite, id: &str, tokens: Option<u64>, storage: Option<u64>) {
    let quota = eve_api::usage::Quota {
        tokens_per_day: tokens,
        storage_bytes: storage,
    };
    eve_usage::report::set_quota(db, id, &quota).unwrap();
}

#[test]
fn an_accounts_own_quotas_override_the_deployment_defaults() {
    let loose = configured(&[("quota_tokens_per_day", "10")]);
    let tight = configured(&[
        ("quota_tokens_per_day", "10"),
        ("principal_max_bytes", "10"),
    ]);
    let db = db();
    account(&db, "a", "member");
    let id = create(&loose, &db, "user:a", r#"{"message":"hi"}"#).unwrap();
    assert!(int(&db, "SELECT SUM(tokens_in + tokens_out) FROM usage_daily") > 10);
    let more = r#"{"message":"more"}"#;
    let e = refused_with(send(&tight, &db, "user:a", &id, more), 413, "storage_full");
    assert!(e.message.contains("storage"));
    own_quota(&db, "a", None, Some(1 << 30));
    refused_with(
        send(&tight, &db, "user:a", &id, more),
        429,
        "quota_exceeded",
    );
    own_quota(&db, "a", Some(1_000_000), Some(1 << 30));
    send(&tight, &db, "user:a", &id, more).unwrap();
    own_quota(&db, "a", Some(5), Some(1 << 30));
    refused_with(
        send(&tight, &db, "user:a", &id, more),
        429,
        "quota_exceeded",
    );
}

const TWO_MODELS: &str = r#"[{"provider":"demo","model":"one"},{"provider":"demo","model":"two"}]"#;

fn member_models(db: &Lite, ids: &[&str]) {
    let request = eve_api::usage::MemberModelsRequest {
        member_models: Some(ids.iter().map(|s| s.to_string()).collect()),
    };
    let configured: Vec<_> = ["demo/one", "demo/two"]
        .iter()
        .map(|id| eve_api::usage::ModelOption {
            id: id.to_string(),
            label: id.to_string(),
        })
        .collect();
    eve_usage::access::set_member_models(db, &request, &configured, "user:adm", 1).unwrap();
}

fn models_used(db: &Lite, id: &str) -> Vec<String> {
    let log = AgentStore::new(db).all_events(id).unwrap();
    let mut ids: Vec<String> = log
        .into_iter()
        .filter_map(|e| match e {
            Event::StepStarted(s) => Some(s.model_id),
            _ => None,
        })
        .collect();
    ids.dedup();
    ids
}

#[test]
fn a_member_asking_for_a_model_outside_member_models_is_403_and_keeps_nothing() {
    let env = configured(&[("llm_models", TWO_MODELS)]);
    let db = db();
    account(&db, "m", "member");
    account(&db, "adm", "admin");
    member_models(&db, &["demo/two"]);
    let ask_one = r#"{"message":"hi","model":"demo/one"}"#;
    let e = refused_with(
        create(&env, &db, "user:m", ask_one),
        403,
        "model_not_allowed",
    );
    assert!(e.message.contains("demo/one"));
    assert_eq!(kept(&db), (0, 0, 0));
    let id = create(
        &env,
        &db,
        "user:m",
        r#"{"message":"hi","model":"demo/two"}"#,
    )
    .unwrap();
    let before = kept(&db);
    refused_with(
        send(&env, &db, "user:m", &id, ask_one),
        403,
        "model_not_allowed",
    );
    assert_eq!(kept(&db), before);
    // Admins and principals that are not accounts use every model.
    assert!(create(&env, &db, "user:adm", ask_one).is_ok());
    assert!(create(&env, &db, "local-dev", ask_one).is_ok());
}

#[test]
fn a_members_message_that_names_no_model_runs_on_an_allowed_one() {
    let env = configured(&[("llm_models", TWO_MODELS)]);
    let db = db();
    account(&db, "m", "member");
    member_models(&db, &["demo/two"]);
    let id = create(&env, &db, "user:m", r#"{"message":"hi"}"#).unwrap();
    assert_eq!(models_used(&db, &id), ["demo/two"]);
    member_models(&db, &["demo/one", "demo/two"]);
    send(&env, &db, "user:m", &id, r#"{"message":"again"}"#).unwrap();
    assert_eq!(
        models_used(&db, &id),
        ["demo/two"],
        "the session keeps its allowed model"
    );
}

#[test]
fn info_offers_a_member_only_the_models_it_may_use() {
    let env = configured(&[("llm_models", TWO_MODELS)]);
    let db = db();
    account(&db, "m", "member");
    member_models(&db, &["demo/two"]);
    let listed = |who: &str| {
        let doc = crate::service::info::document_for(&env, || Ok(Lent(&db)), who).unwrap();
        let ids: Vec<String> = doc["agent"]["model"]["providerOptions"]["models"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_string())
            .collect();
        (
            doc["agent"]["model"]["id"].as_str().unwrap().to_string(),
            ids,
        )
    };
    assert_eq!(
        listed("user:m"),
        ("demo/two".into(), vec!["demo/two".into()])
    );
    let all = (
        "demo/one".to_string(),
        vec!["demo/one".to_string(), "demo/two".into()],
    );
    assert_eq!(listed("local-dev"), all);
}

/// A message queued for a disabled account (accepted just before the disable, or racing it)
/// starts no turn, and the runner does not spin on it: it leaves.
#[test]
fn a_disabled_accounts_queued_message_starts_no_turn() {
    let env = configured(&[]);
    let db = db();
    account(&db, "m", "member");
    let id = create(&env, &db, "user:m", r#"{"message":"hi"}"#).unwrap();
    let turns = |db: &Lite| {
        let events = AgentStore::new(db).all_events(&id).unwrap();
        events
            .iter()
            .filter(|e| matches!(e, Event::TurnStarted(_)))
            .count()
    };
    assert_eq!(turns(&db), 1);
    let (lent, _, first) = sessions::send(
        &env,
        || Ok(Lent(&db)),
        "user:m",
        &id,
        request(r#"{"message":"again"}"#, false),
    )
    .unwrap();
    db.execute("UPDATE account SET disabled = 1 WHERE id = 'm'", vec![])
        .unwrap();
    drain(&env, &lent, &id, "user:m", first, None);
    assert_eq!(turns(&db), 1, "no second turn");
    assert_eq!(int(&db, "SELECT COUNT(*) FROM eve_inbox"), 1);
}
