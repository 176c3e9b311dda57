//! Model choice, end to end through `eve-proxy` and the `agent`: `llm_models` lists what the
//! owner allows, `/eve/v1/info` reports it, a message's `model` picks one (the session keeps
//! it), an unknown one is refused before anything is kept, and `llm_max_tokens` reaches the
//! provider. The providers are local servers speaking OpenAI's and Anthropic's wire formats;
//! the assertions are on the request bodies they receive.

// Shared with eve_stream.rs and attachments.rs; each suite uses part of it.
#[allow(dead_code)]
use crate::llm_server;

use eve_chat_tests::eve::{create, read_until_settled, send, snapshot};
use eve_chat_tests::{Host, HostOptions};
use llm_server::{LlmServer, Script};
use serde_json::{json, Value};

fn host(vars: &[(&str, &str)]) -> Host {
    let mut o = HostOptions::default()
        .var("demo_pacing_ms", "1")
        .var("chat_send_per_hour", "1000");
    for (k, v) in vars {
        o = o.var(k, v);
    }
    Host::start(o).expect("a local host")
}

/// The `modelId` of every `step.started` in `events`.
fn step_models(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "step.started")
        .map(|e| e["data"]["modelId"].as_str().unwrap().to_string())
        .collect()
}

fn sent_models(server: &LlmServer) -> Vec<String> {
    server
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|(_, body)| body["model"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_message_picks_one_of_the_allowed_models_and_the_session_keeps_it() {
    let server = LlmServer::start(vec![
        Script::openai_text("from b"),
        Script::openai_text("still b"),
        Script::openai_text("now a"),
    ]);
    let models = format!(
        r#"[{{"provider":"openai","model":"model-a","label":"Model A","base_url":"{0}/v1"}},
            {{"provider":"openai","model":"model-b","label":"Model B","base_url":"{0}/v1"}}]"#,
        server.base
    );
    let h = host(&[
        ("llm_provider", "openai"),
        ("llm_api_key", "test-key"),
        ("llm_models", &models),
        ("llm_max_tokens", "321"),
    ]);

    let info = h.get("/eve/v1/info").json();
    assert_eq!(info["agent"]["model"]["id"], "openai/model-a");
    assert_eq!(
        info["agent"]["model"]["providerOptions"]["models"],
        json!([
            {"id": "openai/model-a", "label": "Model A", "provider": "openai"},
            {"id": "openai/model-b", "label": "Model B", "provider": "openai"},
        ])
    );

    let sid = create(&h, &json!({"message": "hi", "model": "openai/model-b"}));
    let first = read_until_settled(&h, &sid, 0);
    assert_eq!(step_models(&first), ["openai/model-b"]);

    // No `model`: the session stays on the one it ran on.
    let r = send(&h, &sid, &json!({"message": "again"}));
    assert_eq!(r.status, 202, "{}", r.text());
    let second = read_until_settled(&h, &sid, first.len() as u64);
    assert_eq!(step_models(&second), ["openai/model-b"]);

    let r = send(
        &h,
        &sid,
        &json!({"message": "switch", "model": "openai/model-a"}),
    );
    assert_eq!(r.status, 202, "{}", r.text());
    let third = read_until_settled(&h, &sid, (first.len() + second.len()) as u64);
    assert_eq!(step_models(&third), ["openai/model-a"]);

    assert_eq!(sent_models(&server), ["model-b", "model-b", "model-a"]);
    for (_, body) in server.requests.lock().unwrap().iter() {
        assert_eq!(body["max_tokens"], 321, "{body}");
    }
}

#[test]
fn an_unknown_model_is_refused_and_changes_nothing() {
    let h = host(&[(
        "llm_models",
        r#"[{"provider":"demo","model":"one"},{"provider":"demo","model":"two"}]"#,
    )]);
    let r = h.json(
        "POST",
        "/eve/v1/session",
        &json!({"message": "hi", "model": "openai/gpt-9"}),
    );
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(r.json()["ok"], false);
    assert!(r.json()["error"].as_str().unwrap().contains("openai/gpt-9"));
    for bad in [json!(7), json!(""), json!("x".repeat(201))] {
        let r = h.json(
            "POST",
            "/eve/v1/session",
            &json!({"message": "hi", "model": bad}),
        );
        assert_eq!(r.status, 400, "{bad}: {}", r.text());
    }

    let sid = create(&h, &json!({"message": "hi", "model": "demo/two"}));
    let events = read_until_settled(&h, &sid, 0);
    assert_eq!(step_models(&events), ["demo/two"]);
    let r = send(&h, &sid, &json!({"message": "more", "model": "demo/three"}));
    assert_eq!(r.status, 400, "{}", r.text());
    let after = snapshot(&h, &sid, 0);
    assert_eq!(
        after.len(),
        events.len(),
        "the refused message left no trace"
    );
}

#[test]
fn llm_max_tokens_reaches_anthropic_and_its_default_stays_otherwise() {
    for (max, expected) in [(Some("999"), 999), (None, 4096)] {
        let server = LlmServer::start(vec![Script::anthropic_text("ok")]);
        let mut vars = vec![
            ("llm_provider", "anthropic"),
            ("llm_api_key", "test-key"),
            ("llm_model", "claude-test"),
            ("llm_base_url", server.base.as_str()),
        ];
        if let Some(m) = max {
            vars.push(("llm_max_tokens", m));
        }
        let h = host(&vars);
        let sid = create(&h, &json!({"message": "hi"}));
        let events = read_until_settled(&h, &sid, 0);
        assert_eq!(step_models(&events), ["anthropic/claude-test"]);
        let requests = server.requests.lock().unwrap();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].1["max_tokens"], expected);
        assert_eq!(requests[0].1["model"], "claude-test");
    }
}

#[test]
fn setup_is_not_ready_for_a_hosted_provider_without_its_api_key() {
    let keyless = host(&[("llm_provider", "anthropic"), ("llm_model", "claude-x")]);
    let s = keyless.get("/api/setup").json();
    assert_eq!(s["appReady"], false, "{s}");
    let missing: Vec<&str> = s["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert!(
        missing.contains(&"llm_api_key (for anthropic/claude-x)"),
        "{missing:?}"
    );

    let keyed = host(&[
        ("llm_provider", "anthropic"),
        ("llm_model", "claude-x"),
        ("llm_api_key", "sk-ant-test"),
    ]);
    let s = keyed.get("/api/setup").json();
    assert_eq!(s["appReady"], true, "{s}");
    assert!(!s.to_string().contains("sk-ant-test"));

    let wrong = host(&[("llm_models", "not json")]);
    let s = wrong.get("/api/setup").json();
    assert_eq!(s["appReady"], false, "{s}");
    assert!(
        s["missing"][0].as_str().unwrap().starts_with("llm_models"),
        "{s}"
    );
}

#[test]
fn a_history_over_the_context_window_is_trimmed_oldest_first_and_the_turn_says_so() {
    let server = LlmServer::start(vec![
        Script::openai_text("first answer"),
        Script::openai_text("second answer"),
    ]);
    // 1024 tokens at the assumed 3 characters each: one 2,000-character exchange fits, two
    // do not.
    let h = host(&[
        ("llm_provider", "openai"),
        ("llm_api_key", "test-key"),
        ("llm_model", "small"),
        ("llm_base_url", &format!("{}/v1", server.base)),
        ("llm_context_tokens", "1024"),
    ]);
    let sid = create(&h, &json!({"message": "a".repeat(2000)}));
    let first = read_until_settled(&h, &sid, 0);
    assert!(!first.iter().any(|e| e["type"] == "compaction.requested"));
    let r = send(&h, &sid, &json!({"message": "b".repeat(2000)}));
    assert_eq!(r.status, 202, "{}", r.text());
    let second = read_until_settled(&h, &sid, first.len() as u64);
    let types: Vec<&str> = second.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let requested = types.iter().position(|t| *t == "compaction.requested");
    let completed = types.iter().position(|t| *t == "compaction.completed");
    assert!(
        matches!((requested, completed), (Some(a), Some(b)) if a < b),
        "{types:?}"
    );
    assert_eq!(second[completed.unwrap()]["data"]["turnId"], "turn_1");

    let requests = server.requests.lock().unwrap();
    let users = |body: &Value| -> Vec<String> {
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| m["content"].as_str().unwrap().chars().take(1).collect())
            .collect()
    };
    assert_eq!(users(&requests[0].1), ["a"]);
    assert_eq!(
        users(&requests[1].1),
        ["b"],
        "the first exchange no longer fits"
    );
}
