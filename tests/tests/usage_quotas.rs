//! Usage, quotas and model access (issue 20, `docs/accounts.md` "Quotas and model access")
//! with the real components in the host: a settled demo turn's tokens land in `usage_daily`
//! under its principal, day and model; a principal at its daily tokens is refused a new turn
//! (429 `quota_exceeded`, nothing written); an account's storage override replaces
//! `principal_max_bytes`; a member asking for a model outside `member_models` is refused
//! (403 `model_not_allowed`, nothing written) and `/eve/v1/info` offers it only the allowed
//! ones.
//!
//! Accounts (`user:<id>` principals) are reached at the agent directly, with the upstream JWT
//! the proxy would present (the agent routed publicly, as `attack.rs` does): the account rows
//! are inserted in the host's database, and quotas and member models set with the functions
//! the admin routes call.

use std::time::Duration;

use eve_agent::jwt::UpstreamJwt;
use eve_api::auth::{AuthMode, Principal};
use eve_api::usage::{MemberModelsRequest, ModelOption, Quota};
use eve_chat_tests::eve;
use eve_chat_tests::{public_agent_manifest, Host, HostOptions, Response};
use eve_sql_testing::Db;
use eve_store::sql::{Sql, SqlValue};
use serde_json::{json, Value};

const JWT_SECRET: &str = "usage-suite-upstream-jwt-secret-0123456789";
const SETTLE: Duration = Duration::from_secs(60);
const TWO_MODELS: &str = r#"[{"provider":"demo","model":"one"},{"provider":"demo","model":"two"}]"#;

/// The host's database, migrated (as any component's first request would).
fn database(h: &Host) -> Db {
    let path = h.state_dir().expect("own host").join("sqlite_db.db");
    let db = Db(rusqlite::Connection::open(path).expect("the host's database"));
    db.0.busy_timeout(Duration::from_secs(10)).unwrap();
    eve_store::migrations::migrate(&db, 1).expect("migrations");
    db
}

fn int(db: &Db, sql: &str) -> i64 {
    db.execute(sql, vec![]).unwrap()[0][0].as_i64().unwrap()
}

/// (sessions, events, inbox rows): what a refused request must leave as it was.
fn kept(db: &Db) -> (i64, i64, i64) {
    (
        int(db, "SELECT COUNT(*) FROM eve_session"),
        int(db, "SELECT COUNT(*) FROM eve_event"),
        int(db, "SELECT COUNT(*) FROM eve_inbox"),
    )
}

/// (model, tokens in, tokens out, calls) of `principal`'s rows today.
fn usage_today(db: &Db, principal: &str) -> Vec<(String, i64, i64, i64)> {
    db.execute(
        "SELECT model, tokens_in, tokens_out, calls FROM usage_daily \
         WHERE principal = ?1 AND day = date('now') ORDER BY model",
        vec![principal.into()],
    )
    .unwrap()
    .into_iter()
    .map(|r| {
        let n = |i: usize| r[i].as_i64().unwrap();
        (r[0].as_str().unwrap().to_string(), n(1), n(2), n(3))
    })
    .collect()
}

/// What the `step.completed` events of a log say was used: (in, out, steps).
fn logged(events: &[Value]) -> (i64, i64, i64) {
    let steps: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "step.completed")
        .collect();
    let sum = |k: &str| {
        steps
            .iter()
            .map(|s| s["data"]["usage"][k].as_i64().unwrap_or(0))
            .sum()
    };
    (sum("inputTokens"), sum("outputTokens"), steps.len() as i64)
}

#[test]
fn a_demo_turn_adds_its_reported_tokens_to_the_principals_day_and_model() {
    let Some(h) = Host::start(HostOptions::default().var("demo_pacing_ms", "0")) else {
        return;
    };
    let sid = eve::start(&h, "weather in Paris");
    let events = eve::read_until_settled(&h, &sid, 0);
    let (tin, tout, steps) = logged(&events);
    assert!(
        steps >= 2 && tin > 0 && tout > 0,
        "the demo reports usage per step"
    );
    let db = database(&h);
    assert_eq!(
        usage_today(&db, "local-dev"),
        [("demo/eve-demo".to_string(), tin, tout, steps)]
    );
}

#[test]
fn a_principal_at_its_daily_token_quota_gets_429_naming_it_and_nothing_is_written() {
    let Some(h) = Host::start(
        HostOptions::default()
            .var("demo_pacing_ms", "0")
            .var("quota_tokens_per_day", "10"),
    ) else {
        return;
    };
    let sid = eve::start(&h, "hello");
    eve::read_until_settled(&h, &sid, 0);
    let db = database(&h);
    assert!(int(&db, "SELECT SUM(tokens_in + tokens_out) FROM usage_daily") >= 10);
    let before = kept(&db);
    for r in [
        eve::send(&h, &sid, &json!({ "message": "again" })),
        h.json("POST", "/eve/v1/session", &json!({ "message": "new" })),
    ] {
        let message = eve::refused(&r, 429, "quota_exceeded");
        assert!(message.contains("10 tokens per day"), "{message}");
        let retry: u64 = r
            .header("retry-after")
            .expect("Retry-After")
            .parse()
            .unwrap();
        assert!((1..=86_400).contains(&retry));
    }
    assert_eq!(kept(&db), before);
    // Work that starts no turn still works.
    assert_eq!(eve::control(&h, &sid, "clear").status, 202);
}

/// A host with the agent public, the upstream JWT's key known, and `vars`.
fn agent_host(vars: &[(&str, &str)]) -> (tempfile::TempDir, Option<Host>) {
    let (dir, manifest) = public_agent_manifest();
    let mut opts = HostOptions {
        manifest,
        ..HostOptions::default()
    }
    .var("auth_mode", "password")
    .var(
        "session_secret",
        "usage-suite-session-secret-0123456789abcdef",
    )
    .var("chat_password", "correct horse battery staple")
    .var("eve_jwt_secret", JWT_SECRET)
    .var("demo_pacing_ms", "0");
    for (k, v) in vars {
        opts = opts.var(k, v);
    }
    (dir, Host::start(opts))
}

/// The `Authorization` header the proxy would send for account `id`.
fn bearer(id: &str) -> String {
    let jwt = UpstreamJwt::new(
        JWT_SECRET,
        eve_agent::jwt::DEFAULT_ISSUER,
        eve_agent::jwt::DEFAULT_AUDIENCE,
    );
    let principal = Principal {
        id: format!("user:{id}"),
        mode: AuthMode::Password,
        name: None,
        email: None,
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    format!("Bearer {}", jwt.mint(&principal, now))
}

fn post(h: &Host, who: &str, path: &str, body: Value) -> Response {
    let auth = bearer(who);
    let body = body.to_string();
    h.send(
        "POST",
        path,
        &[
            ("authorization", &auth),
            ("content-type", "application/json"),
        ],
        Some(body.as_bytes()),
    )
}

/// The settled log of `sid`, read as `who`.
fn settled(h: &Host, who: &str, sid: &str) -> Vec<Value> {
    eve::settled_as(h, sid, &[("authorization", &bearer(who))], SETTLE)
}

fn session_id(r: &Response) -> String {
    assert_eq!(r.status, 202, "{}", r.text());
    r.json()["sessionId"].as_str().unwrap().to_string()
}

fn account(db: &Db, id: &str, role: &str) {
    db.execute(
        "INSERT INTO account (id, email, role, created_at) VALUES (?1, ?1 || '@example.com', ?2, 1)",
        vec![SqlValue::text(id), SqlValue::text(role)],
    )
    .unwrap();
}

#[test]
fn an_accounts_storage_override_replaces_principal_max_bytes() {
    let (_dir, h) = agent_host(&[("principal_max_bytes", "2000")]);
    let Some(h) = h else { return };
    let db = database(&h);
    account(&db, "a", "member");
    let sid = session_id(&post(
        &h,
        "a",
        "/eve/v1/session",
        json!({ "message": "hello" }),
    ));
    settled(&h, "a", &sid);
    let next = format!("/eve/v1/session/{sid}");
    let message = eve::refused(
        &post(&h, "a", &next, json!({ "message": "more" })),
        413,
        "storage_full",
    );
    assert!(message.contains("storage"), "{message}");
    let own = Quota {
        tokens_per_day: None,
        storage_bytes: Some(1 << 30),
    };
    eve_usage::report::set_quota(&db, "a", &own).unwrap();
    assert_eq!(
        post(&h, "a", &next, json!({ "message": "more" })).status,
        202
    );
}

fn models_started(events: &[Value]) -> Vec<String> {
    let mut ids: Vec<String> = events
        .iter()
        .filter(|e| e["type"] == "step.started")
        .map(|e| e["data"]["modelId"].as_str().unwrap().to_string())
        .collect();
    ids.dedup();
    ids
}

fn offered(h: &Host, who: &str) -> Vec<String> {
    let auth = bearer(who);
    eve::offered_models(&h.send("GET", "/eve/v1/info", &[("authorization", &auth)], None))
}

#[test]
fn a_member_is_refused_a_model_outside_member_models_and_offered_only_the_allowed_ones() {
    let (_dir, h) = agent_host(&[("llm_models", TWO_MODELS)]);
    let Some(h) = h else { return };
    let db = database(&h);
    account(&db, "m", "member");
    account(&db, "adm", "admin");
    let configured: Vec<ModelOption> = ["demo/one", "demo/two"]
        .iter()
        .map(|id| ModelOption {
            id: id.to_string(),
            label: id.to_string(),
        })
        .collect();
    let only_two = MemberModelsRequest {
        member_models: Some(vec!["demo/two".into()]),
    };
    eve_usage::access::set_member_models(&db, &only_two, &configured, "user:adm", 1).unwrap();

    assert_eq!(offered(&h, "m"), ["demo/two"]);
    assert_eq!(offered(&h, "adm"), ["demo/one", "demo/two"]);
    let before = kept(&db);
    let one = json!({ "message": "hi", "model": "demo/one" });
    let message = eve::refused(
        &post(&h, "m", "/eve/v1/session", one.clone()),
        403,
        "model_not_allowed",
    );
    assert!(message.contains("demo/one"), "{message}");
    assert_eq!(kept(&db), before, "nothing of the refused create");

    // Named or not, the member's turn runs on the allowed model.
    let sid = session_id(&post(
        &h,
        "m",
        "/eve/v1/session",
        json!({ "message": "hi" }),
    ));
    assert_eq!(models_started(&settled(&h, "m", &sid)), ["demo/two"]);
    let before = kept(&db);
    let next = format!("/eve/v1/session/{sid}");
    eve::refused(&post(&h, "m", &next, one.clone()), 403, "model_not_allowed");
    assert_eq!(kept(&db), before, "nothing of the refused send");
    // An admin may use every model.
    let sid = session_id(&post(&h, "adm", "/eve/v1/session", one));
    assert_eq!(models_started(&settled(&h, "adm", &sid)), ["demo/one"]);
}
