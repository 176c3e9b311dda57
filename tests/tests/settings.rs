//! The system settings end to end (issue 22, docs/runtime.md "Settings"): only admins reach
//! `/api/admin/settings` (a member and the shared password get 403; in local-dev the one
//! local developer is an admin); a change takes effect on the next turn without a restart —
//! the model request carries the new instructions, the default daily tokens refuse the next
//! turn, sign-up follows the domains, the model requests are logged (never a key), setup says
//! how tool calls are shown; a bad value is a 400 naming its key and changes nothing. Real
//! components in the local host, real SQLite; the model is a local server speaking OpenAI's
//! wire format.

// Shared with eve_stream.rs, models.rs and attachments.rs; this suite uses part of it.
#[allow(dead_code)]
use crate::llm_server;

use std::time::Duration;

use eve_chat_tests::accounts::{self, *};
use eve_chat_tests::eve::{create, read_until_settled, send};
use eve_chat_tests::{Host, HostOptions, Response};
use llm_server::{LlmServer, Script};
use serde_json::{json, Value};

const PATH: &str = "/api/admin/settings";
const SETTLE: Duration = Duration::from_secs(30);

fn local_dev(vars: &[(&str, &str)]) -> Host {
    let mut o = HostOptions::default()
        .var("demo_pacing_ms", "1")
        .var("chat_send_per_hour", "1000");
    for (k, v) in vars {
        o = o.var(k, v);
    }
    Host::start(o).expect("a local host")
}

fn accounts_host() -> Host {
    accounts::host(&[]).expect("a local host in accounts mode")
}

/// `PATCH /api/admin/settings` as the admin page sends it (`cookie`: none in local-dev).
fn patch(h: &Host, cookie: Option<&str>, body: Value) -> Response {
    call(h, "PATCH", PATH, cookie, Some(&body))
}

fn stored(h: &Host, cookie: Option<&str>) -> Value {
    ok(call(h, "GET", PATH, cookie, None), 200)["settings"].clone()
}

#[test]
fn only_admins_reach_the_settings_and_the_local_developer_is_one() {
    let h = accounts_host();
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    let view = ok(call(&h, "GET", PATH, Some(&admin.cookie), None), 200);
    assert_eq!(view["settings"]["toolDisplay"], Value::Null);
    assert_eq!(view["bootstrap"]["toolDisplay"], "collapsed");
    assert_eq!(view["bootstrap"]["signupDomains"], json!(["open.example"]));
    assert!(view["bootstrap"]["instructions"]
        .as_str()
        .unwrap()
        .starts_with("You are eve"));
    assert_eq!(view["bootstrap"]["defaultModel"], "demo/eve-demo");
    for (method, body) in [
        ("GET", None),
        ("PATCH", Some(json!({"toolDisplay": "full"}))),
    ] {
        let r = call(&h, method, PATH, Some(&m.cookie), body.as_ref());
        assert_eq!((r.status, code(&r)), (403, "forbidden".into()), "{method}");
        let r = call(&h, method, PATH, None, body.as_ref());
        assert_eq!(r.status, 401, "{method}: {}", r.text());
    }
    let r = patch(&h, Some(&admin.cookie), json!({"toolDisplay": "full"}));
    assert_eq!(ok(r, 200)["settings"]["toolDisplay"], "full");
    let audit = ok(
        call(&h, "GET", "/api/admin/audit", Some(&admin.cookie), None),
        200,
    );
    let entry = &audit["entries"][0];
    assert_eq!(entry["action"], "settings_updated", "{audit}");

    let password = Host::start(
        HostOptions::default()
            .var("auth_mode", "password")
            .var("session_secret", SECRET)
            .var("chat_password", PASSWORD),
    )
    .expect("a local host in password mode");
    let cookie = password.password_login(PASSWORD);
    let r = call(&password, "GET", PATH, Some(&cookie), None);
    assert_eq!((r.status, code(&r)), (403, "forbidden".into()));

    let dev = local_dev(&[]);
    assert_eq!(stored(&dev, None)["toolDisplay"], Value::Null);
    assert_eq!(
        ok(patch(&dev, None, json!({"logModelRequests": true})), 200)["settings"]
            ["logModelRequests"],
        true
    );
    // What only accounts have is refused plainly; the user list is empty.
    let users = ok(call(&dev, "GET", "/api/admin/users", None, None), 200);
    assert_eq!(users["users"], json!([]));
    let r = call(
        &dev,
        "POST",
        "/api/admin/invites",
        None,
        Some(&json!({"role": "member"})),
    );
    assert_eq!(r.status, 409, "{}", r.text());
    // The tabs the admin page keeps in local-dev answer; the change is on the record.
    ok(
        call(&dev, "GET", "/api/admin/usage?days=7", None, None),
        200,
    );
    let audit = ok(call(&dev, "GET", "/api/admin/audit", None, None), 200);
    assert_eq!(audit["entries"][0]["action"], "settings_updated", "{audit}");
    assert_eq!(audit["entries"][0]["actor"], "local-dev", "{audit}");
    assert_eq!(
        audit["entries"][0]["detail"],
        json!({"set": ["logModelRequests"], "reset": []})
    );
}

#[test]
fn new_instructions_and_request_logging_apply_to_the_next_turn() {
    let server = LlmServer::start(vec![
        Script::openai_text("first"),
        Script::openai_text("second"),
    ]);
    let h = local_dev(&[
        ("llm_provider", "openai"),
        ("llm_api_key", "test-key-never-logged"),
        ("llm_model", "test-model"),
        ("llm_base_url", &format!("{}/v1", server.base)),
    ]);
    let sid = create(&h, &json!({"message": "hello"}));
    let first = read_until_settled(&h, &sid, 0);
    let r = patch(
        &h,
        None,
        json!({"instructions": "You are Captain Verbose. Speak like a pirate.", "logModelRequests": true}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    let r = send(&h, &sid, &json!({"message": "again"}));
    assert_eq!(r.status, 202, "{}", r.text());
    read_until_settled(&h, &sid, first.len() as u64);

    let bodies = server.bodies();
    let system = |b: &Value| {
        b["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        system(&bodies[0]).starts_with("You are eve"),
        "{}",
        system(&bodies[0])
    );
    let next = system(&bodies[1]);
    assert!(
        next.starts_with("You are Captain Verbose. Speak like a pirate."),
        "{next}"
    );
    assert!(!next.contains("You are eve"), "{next}");
    assert!(
        next.contains("What you remember about the user"),
        "the rest stays: {next}"
    );

    let log = h.wait_for_log(SETTLE, |l| l.contains("agent: model request: "));
    let line = log
        .lines()
        .find(|l| l.contains("agent: model request: "))
        .unwrap_or_else(|| panic!("no request logged: {log}"));
    assert!(
        line.contains("provider=openai model=openai/test-model"),
        "{line}"
    );
    assert!(line.contains(&server.base), "{line}");
    assert!(
        line.contains("messages=") && line.contains("output_tokens="),
        "{line}"
    );
    assert_eq!(
        log.matches("agent: model request: ").count(),
        1,
        "only after it was turned on"
    );
    assert!(!log.contains("test-key-never-logged"));
}

#[test]
fn the_default_daily_tokens_refuse_the_next_turn_and_zero_lifts_them() {
    let h = accounts_host();
    let admin = bootstrap(&h);
    let m = member(&h, &admin, "m@team.example");
    settled_session(&h, &m, &json!({"message": "hello"}), SETTLE);
    let r = patch(&h, Some(&admin.cookie), json!({"defaultTokensPerDay": 1}));
    assert_eq!(r.status, 200, "{}", r.text());
    let usage = ok(
        call(
            &h,
            "GET",
            "/api/admin/usage?days=1",
            Some(&admin.cookie),
            None,
        ),
        200,
    );
    assert_eq!(usage["defaults"]["tokensPerDay"], 1, "{usage}");
    let r = call(
        &h,
        "POST",
        "/eve/v1/session",
        Some(&m.cookie),
        Some(&json!({"message": "more"})),
    );
    assert_eq!((r.status, code(&r)), (429, "quota_exceeded".into()));
    let r = patch(&h, Some(&admin.cookie), json!({"defaultTokensPerDay": 0}));
    assert_eq!(r.status, 200, "{}", r.text());
    settled_session(&h, &m, &json!({"message": "more"}), SETTLE);
}

#[test]
fn sign_up_follows_the_domains_setting_and_null_returns_to_the_variable() {
    let h = accounts_host();
    let admin = bootstrap(&h);
    let body = |email: &str| json!({"email": email, "password": PASSWORD});
    let r = signup(&h, body("ann@new.example"));
    assert_eq!((r.status, code(&r)), (403, "signup_closed".into()));
    let r = patch(
        &h,
        Some(&admin.cookie),
        json!({"signupDomains": ["New.Example"]}),
    );
    assert_eq!(
        ok(r, 200)["settings"]["signupDomains"],
        json!(["new.example"])
    );
    assert_eq!(signup(&h, body("ann@new.example")).status, 201);
    let r = signup(&h, body("bo@open.example"));
    assert_eq!(
        r.status,
        403,
        "the setting replaces the variable: {}",
        r.text()
    );
    let r = patch(&h, Some(&admin.cookie), json!({"signupDomains": null}));
    assert_eq!(ok(r, 200)["settings"]["signupDomains"], Value::Null);
    assert_eq!(signup(&h, body("bo@open.example")).status, 201);
}

#[test]
fn a_bad_value_is_a_400_naming_its_key_and_nothing_changes() {
    let h = local_dev(&[]);
    assert_eq!(h.get("/api/setup").json()["toolDisplay"], "collapsed");
    let big = "x".repeat(32 * 1024 + 1);
    for (body, key) in [
        (
            json!({"toolDisplay": "full", "defaultTokensPerDay": -1}),
            "defaultTokensPerDay",
        ),
        (json!({"toolDisplay": "sideways"}), "toolDisplay"),
        (
            json!({"logModelRequests": true, "instructions": big}),
            "instructions",
        ),
        (
            json!({"defaultModel": "openai/not-offered"}),
            "defaultModel",
        ),
        (json!({"signupDomains": ["not a domain"]}), "signupDomains"),
        (
            json!({"toolApprovals": {"get_weather": "sometimes"}}),
            "toolApprovals",
        ),
        (
            json!({"outboundAllowedHosts": ["https://x.example/"]}),
            "outboundAllowedHosts",
        ),
        (json!({"colour": "blue"}), "colour"),
    ] {
        let r = patch(&h, None, body);
        assert_eq!(r.status, 400, "{key}: {}", r.text());
        let message = r.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(message.starts_with(&format!("{key}: ")), "{message}");
    }
    for raw in ["[1, 2]", "\"full\"", "{"] {
        let origin = h.origin();
        let headers = [
            ("origin", origin.as_str()),
            ("content-type", "application/json"),
        ];
        let r = h.send("PATCH", PATH, &headers, Some(raw.as_bytes()));
        assert_eq!(r.status, 400, "{raw}: {}", r.text());
    }
    assert_eq!(
        count(&h, "SELECT count(*) FROM system_setting WHERE ?1 = ?1", "x"),
        0
    );
    // An empty patch changes nothing and records nothing.
    let r = patch(&h, None, json!({}));
    assert_eq!(ok(r, 200)["settings"]["toolDisplay"], Value::Null);
    let audit = ok(call(&h, "GET", "/api/admin/audit", None, None), 200);
    assert_eq!(audit["entries"], json!([]), "{audit}");
    assert_eq!(h.get("/api/setup").json()["toolDisplay"], "collapsed");

    let r = patch(
        &h,
        None,
        json!({"toolDisplay": "full", "defaultModel": "demo/eve-demo"}),
    );
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(h.get("/api/setup").json()["toolDisplay"], "full");
}

#[test]
fn the_default_model_setting_starts_new_sessions_and_info_lists_it_first() {
    let models = r#"[{"provider":"demo","model":"one"},{"provider":"demo","model":"two"}]"#;
    let h = local_dev(&[("llm_models", models)]);
    let info_default = |h: &Host| h.get("/eve/v1/info").json()["agent"]["model"]["id"].clone();
    assert_eq!(info_default(&h), "demo/one");
    let r = patch(&h, None, json!({"defaultModel": "demo/two"}));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(info_default(&h), "demo/two");
    let started = |events: &[Value]| -> Vec<String> {
        events
            .iter()
            .filter(|e| e["type"] == "step.started")
            .map(|e| e["data"]["modelId"].as_str().unwrap().to_string())
            .collect()
    };
    let sid = create(&h, &json!({"message": "hello"}));
    let first = read_until_settled(&h, &sid, 0);
    assert_eq!(started(&first), ["demo/two"]);
    // A session keeps the model it ran on; a message may still pick another.
    let r = patch(&h, None, json!({"defaultModel": null}));
    assert_eq!(r.status, 200, "{}", r.text());
    send(&h, &sid, &json!({"message": "again"}));
    let second = read_until_settled(&h, &sid, first.len() as u64);
    assert_eq!(started(&second), ["demo/two"]);
    let other = create(&h, &json!({"message": "hello"}));
    assert_eq!(started(&read_until_settled(&h, &other, 0)), ["demo/one"]);
    let r = patch(&h, None, json!({"defaultModel": "demo/three"}));
    assert_eq!(r.status, 400, "not offered: {}", r.text());
}
