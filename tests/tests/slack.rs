//! The Slack channel (issue 23, docs/slack.md) end to end: the real `slack` and `agent`
//! components in the local host, Slack played by the Web API simulator
//! (tests/slack/slack-sim.mjs) that records every call, and events signed as Slack signs them.
//! The agent is the demo model, so replies are deterministic.

use std::time::Duration;

// Shared with the provider suites; this one scripts a question without options.
#[allow(dead_code)]
use crate::llm_server;

use eve_chat_tests::accounts::database;
use eve_chat_tests::slack_sim::{
    envelope, mention, methods, now_secs, post_event, post_signed, SlackSim, BOT_TOKEN, ROUTE,
    SIGNING_SECRET,
};
use eve_chat_tests::{Host, HostOptions};
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(60);

fn host(sim: &SlackSim) -> Host {
    host_with(sim, &[])
}

fn host_with(sim: &SlackSim, vars: &[(&str, &str)]) -> Host {
    let mut o = HostOptions::default()
        .var("demo_pacing_ms", "0")
        .var("chat_send_per_hour", "1000")
        .var("slack_bot_token", BOT_TOKEN)
        .var("slack_signing_secret", SIGNING_SECRET)
        .var("slack_api_base_url", &sim.api_base());
    for (k, v) in vars {
        o = o.var(k, v);
    }
    Host::start(o).expect("a local host")
}

fn posts_in(calls: &[Value], thread_ts: &str) -> Vec<Value> {
    calls
        .iter()
        .filter(|c| c["method"] == "chat.postMessage" && c["body"]["thread_ts"] == thread_ts)
        .cloned()
        .collect()
}

/// The calls of thread `thread_ts` in channel C1, as `(method, status or text)`.
fn thread_calls(calls: &[Value], thread_ts: &str) -> Vec<(String, String)> {
    calls
        .iter()
        .filter(|c| c["body"]["thread_ts"] == thread_ts || c["method"] == "conversations.info")
        .map(|c| {
            let b = &c["body"];
            let what = b["status"]
                .as_str()
                .or(b["markdown_text"].as_str())
                .or(b["text"].as_str())
                .unwrap_or("");
            (c["method"].as_str().unwrap().to_string(), what.to_string())
        })
        .collect()
}

fn ok(r: &eve_chat_tests::Response) {
    assert_eq!((r.status, r.text().as_str()), (200, "ok"), "{}", r.text());
}

#[test]
fn unsigned_mis_signed_and_stale_requests_are_401_and_do_nothing() {
    let sim = SlackSim::start();
    let h = host(&sim);
    let body = envelope("EvBad", mention("U1", "hello", "100.000001", None)).to_string();
    let now = now_secs();
    for (why, r) in [
        (
            "wrong secret",
            post_signed(&h, &body, "application/json", now, "not the secret", &[]),
        ),
        (
            "301 s old",
            post_signed(
                &h,
                &body,
                "application/json",
                now - 301,
                SIGNING_SECRET,
                &[],
            ),
        ),
        (
            "301 s ahead",
            post_signed(
                &h,
                &body,
                "application/json",
                now + 301,
                SIGNING_SECRET,
                &[],
            ),
        ),
        (
            "unsigned",
            h.send(
                "POST",
                ROUTE,
                &[("content-type", "application/json")],
                Some(body.as_bytes()),
            ),
        ),
    ] {
        assert_eq!(
            (r.status, r.text().as_str()),
            (401, "unauthorized"),
            "{why}"
        );
    }
    // A body changed after signing.
    let ts = now.to_string();
    let sig = eve_slack::verify::sign(SIGNING_SECRET, &ts, body.as_bytes());
    let tampered = body.replace("hello", "HELLO");
    let r = h.send(
        "POST",
        ROUTE,
        &[
            ("content-type", "application/json"),
            ("x-slack-request-timestamp", &ts),
            ("x-slack-signature", &sig),
        ],
        Some(tampered.as_bytes()),
    );
    assert_eq!(r.status, 401);
    // The same event id, properly signed, is still new: nothing was stored for the refused ones.
    ok(&post_event(&h, &serde_json::from_str(&body).unwrap(), &[]));
    let calls = sim.wait_for(WAIT, |c| !posts_in(c, "100.000001").is_empty());
    assert_eq!(posts_in(&calls, "100.000001").len(), 1);
}

#[test]
fn the_url_verification_challenge_is_answered() {
    let sim = SlackSim::start();
    let h = host(&sim);
    let r = post_event(
        &h,
        &json!({"token": "t", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", "type": "url_verification"}),
        &[],
    );
    assert_eq!(r.status, 200);
    assert_eq!(
        r.text(),
        "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"
    );
    assert_eq!(r.header("content-type"), Some("text/plain"));
    // Other callbacks and bodies that are not JSON: `ok`, nothing else.
    ok(&post_event(
        &h,
        &json!({"type": "app_rate_limited", "team_id": "T1"}),
        &[],
    ));
    ok(&post_signed(
        &h,
        "not json",
        "application/json",
        now_secs(),
        SIGNING_SECRET,
        &[],
    ));
    // Only POST is routed, as in eve.
    let r = h.get(ROUTE);
    assert_eq!(r.status, 404);
    assert_eq!(
        r.json(),
        json!({"ok": false, "error": "Cannot find any route matching [GET] /eve/v1/slack"})
    );
    assert!(sim.calls().is_empty());
}

#[test]
fn a_mention_is_answered_in_its_thread_and_the_thread_keeps_its_session() {
    let sim = SlackSim::start();
    let h = host(&sim);
    ok(&post_event(
        &h,
        &envelope("Ev1", mention("U1", "hello there", "200.000001", None)),
        &[],
    ));
    let calls = sim.wait_for(WAIT, |c| {
        thread_calls(c, "200.000001")
            .iter()
            .filter(|(m, s)| m == "assistant.threads.setStatus" && s.is_empty())
            .count()
            == 1
    });
    let seen = thread_calls(&calls, "200.000001");
    let status = |s: &str| ("assistant.threads.setStatus".to_string(), s.to_string());
    let (methods_seen, reply): (Vec<_>, Vec<_>) = seen
        .iter()
        .cloned()
        .partition(|(m, _)| m != "chat.postMessage");
    // eve's default renderer: Thinking... on arrival (then eve asks whether the channel is
    // private), again when the turn starts, the reasoning's last sentence, "Writing a reply..."
    // past 280 characters, the reply, the status cleared.
    assert_eq!(
        methods_seen,
        vec![
            status("Thinking..."),
            ("conversations.info".to_string(), String::new()),
            status("Thinking..."),
            status("A general question: I'll answer directly and..."),
            status("Writing a reply..."),
            status(""),
        ]
    );
    assert_eq!(seen[5].0, "chat.postMessage");
    assert!(
        reply[0].1.starts_with("This is the offline **demo model**"),
        "{reply:?}"
    );
    // Slack's wire format: form bodies with the bot's token; the reply as eve posts it.
    for c in &calls {
        assert_eq!(c["contentType"], "application/x-www-form-urlencoded", "{c}");
        assert_eq!(c["authorized"], true, "{c}");
    }
    let reply = &posts_in(&calls, "200.000001")[0]["body"];
    assert_eq!(
        (
            reply["channel"].as_str(),
            reply["unfurl_links"].as_str(),
            reply["unfurl_media"].as_str()
        ),
        (Some("C1"), Some("false"), Some("false"))
    );
    let status = &calls[0]["body"];
    assert_eq!(status["channel_id"], "C1");
    assert_eq!(status["loading_messages"], r#"["Thinking..."]"#);

    // A second mention in the thread continues the same session, owned by the Slack user.
    ok(&post_event(
        &h,
        &envelope(
            "Ev2",
            mention("U1", "and again", "200.000002", Some("200.000001")),
        ),
        &[],
    ));
    sim.wait_for(WAIT, |c| posts_in(c, "200.000001").len() == 2);
    let db = database(&h);
    let owned: Vec<(String, String)> = db
        .prepare("SELECT session_id, principal FROM slack_thread_session")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(owned.len(), 1);
    assert_eq!(owned[0].1, "slack:T1:U1");
    let (sessions, turns): (i64, i64) = db
        .query_row(
            "SELECT (SELECT count(*) FROM eve_session WHERE principal = 'slack:T1:U1'), \
             (SELECT count(*) FROM eve_event WHERE session_id = ?1 AND type = 'turn.completed')",
            [&owned[0].0],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((sessions, turns), (1, 2));
    // What the model read: eve's <slack_message> block.
    let received: String = db
        .query_row(
            "SELECT body FROM eve_event WHERE session_id = ?1 AND type = 'message.received' ORDER BY idx LIMIT 1",
            [&owned[0].0],
            |r| r.get(0),
        )
        .unwrap();
    assert!(received.contains("<slack_message>\\nsender_type: user\\nsender_id: U1\\nbot_user_id: UBOT\\nis_mentioned: true\\nchannel_id: C1\\nthread_ts: 200.000001"), "{received}");
}

#[test]
fn retries_and_repeated_event_ids_start_no_second_turn() {
    let sim = SlackSim::start();
    let h = host(&sim);
    let first = envelope("EvDup", mention("U1", "hello", "300.000001", None));
    ok(&post_event(&h, &first, &[]));
    // Slack's retry after a timeout, a retry for another reason, and a plain duplicate: all
    // `ok`, decided before the answer (nothing runs after it).
    ok(&post_event(
        &h,
        &first,
        &[
            ("x-slack-retry-num", "1"),
            ("x-slack-retry-reason", "http_timeout"),
        ],
    ));
    ok(&post_event(
        &h,
        &first,
        &[
            ("x-slack-retry-num", "2"),
            ("x-slack-retry-reason", "http_error"),
        ],
    ));
    ok(&post_event(&h, &first, &[]));
    // Another event afterwards, in its own thread, to wait for.
    ok(&post_event(
        &h,
        &envelope("EvNext", mention("U1", "hello", "301.000001", None)),
        &[],
    ));
    let calls = sim.wait_for(WAIT, |c| {
        posts_in(c, "300.000001").len() == 1 && posts_in(c, "301.000001").len() == 1
    });
    assert_eq!(posts_in(&calls, "300.000001").len(), 1);
    let sessions: i64 = database(&h)
        .query_row(
            "SELECT count(*) FROM eve_session WHERE principal = 'slack:T1:U1'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(sessions, 2);
}

#[test]
fn the_apps_own_messages_are_ignored() {
    let sim = SlackSim::start();
    let h = host(&sim);
    // Its bot user, and a message carrying its app id.
    ok(&post_event(
        &h,
        &envelope(
            "EvSelf1",
            mention("UBOT", "I said this", "400.000001", None),
        ),
        &[],
    ));
    let mut by_app = mention("U7", "posted by the app", "401.000001", None);
    by_app["app_id"] = json!("A1");
    ok(&post_event(&h, &envelope("EvSelf2", by_app), &[]));
    ok(&post_event(
        &h,
        &envelope("EvPerson", mention("U1", "hello", "402.000001", None)),
        &[],
    ));
    let calls = sim.wait_for(WAIT, |c| posts_in(c, "402.000001").len() == 1);
    for ts in ["400.000001", "401.000001"] {
        assert!(
            calls.iter().all(|c| c["body"]["thread_ts"] != ts),
            "{calls:?}"
        );
    }
}

#[test]
fn a_question_is_buttons_and_a_click_answers_it() {
    let sim = SlackSim::start();
    let h = host(&sim);
    ok(&post_event(
        &h,
        &envelope("EvQ", mention("U1", "ask me something", "500.000001", None)),
        &[],
    ));
    // The card, then the status cleared while the turn waits on the person (turn.waiting).
    let calls = sim.wait_for(WAIT, |c| {
        let card = c
            .iter()
            .position(|p| p["method"] == "chat.postMessage" && p["body"]["blocks"].is_string());
        card.is_some_and(|i| {
            c[i..]
                .iter()
                .any(|x| x["method"] == "assistant.threads.setStatus" && x["body"]["status"] == "")
        })
    });
    let card = posts_in(&calls, "500.000001")
        .into_iter()
        .find(|p| p["body"]["blocks"].is_string())
        .unwrap();
    let blocks: Value = serde_json::from_str(card["body"]["blocks"].as_str().unwrap()).unwrap();
    assert_eq!(blocks[0]["type"], "card");
    let button = blocks[0]["actions"][0].clone();
    assert!(
        button["action_id"]
            .as_str()
            .unwrap()
            .starts_with("eve_input:"),
        "{button}"
    );
    assert_eq!(
        thread_calls(&calls, "500.000001").last().unwrap(),
        &("assistant.threads.setStatus".to_string(), String::new())
    );

    let click = |user: &str| {
        let payload = json!({
            "type": "block_actions", "user": {"id": user, "username": "someone", "team_id": "T1"},
            "api_app_id": "A1", "team": {"id": "T1"}, "channel": {"id": "C1"},
            "container": {"type": "message", "message_ts": "1700000002.000100", "channel_id": "C1"},
            "message": {"type": "message", "ts": "1700000002.000100", "thread_ts": "500.000001", "blocks": blocks},
            "actions": [button], "trigger_id": "t1", "response_url": "http://127.0.0.1:9/unused",
        });
        let body = format!("payload={}", urlencode(&payload.to_string()));
        ok(&post_signed(
            &h,
            &body,
            "application/x-www-form-urlencoded",
            now_secs(),
            SIGNING_SECRET,
            &[],
        ));
    };
    let notices = |c: &[Value]| {
        posts_in(c, "500.000001")
            .iter()
            .filter(|p| p["body"]["markdown_text"].is_string())
            .count()
    };
    // Issue 32: someone else's click does not answer as the person asked (their turn, their
    // session): it is told so, and the card stays.
    click("U2");
    let calls = sim.wait_for(WAIT, |c| notices(c) == 1);
    let refusal = posts_in(&calls, "500.000001")
        .into_iter()
        .find(|p| p["body"]["markdown_text"].is_string())
        .unwrap();
    assert_eq!(
        refusal["body"]["markdown_text"],
        "Only the person who requested this action can respond to this approval."
    );
    assert!(calls.iter().all(|c| c["method"] != "chat.update"));
    click("U1");
    let calls = sim.wait_for(WAIT, |c| notices(c) == 2);
    let update = calls
        .iter()
        .find(|c| c["method"] == "chat.update")
        .expect("the card is updated");
    assert_eq!(update["body"]["ts"], "1700000002.000100");
    let label = button["text"]["text"].as_str().unwrap();
    assert_eq!(update["body"]["text"], format!("Answered: {label}"));
    assert!(update["body"]["blocks"]
        .as_str()
        .unwrap()
        .contains("by <@U1>"));
}

#[test]
fn a_long_answer_is_uploaded_as_a_snippet() {
    let sim = SlackSim::start();
    let h = host(&sim);
    ok(&post_event(
        &h,
        &envelope("EvLong", mention("U1", "count to 3000", "600.000001", None)),
        &[],
    ));
    let calls = sim.wait_for(WAIT, |c| {
        c.iter()
            .any(|x| x["method"] == "files.completeUploadExternal")
    });
    let m = methods(&calls);
    let at = |name: &str| m.iter().position(|x| x == name).unwrap();
    assert!(
        at("files.getUploadURLExternal") < at("upload")
            && at("upload") < at("files.completeUploadExternal")
    );
    let reserve = &calls[at("files.getUploadURLExternal")]["body"];
    assert_eq!(
        (
            reserve["filename"].as_str(),
            reserve["snippet_type"].as_str()
        ),
        (Some("eve-response.md"), Some("markdown"))
    );
    let upload = &calls[at("upload")]["body"];
    assert_eq!(
        upload["length"].to_string(),
        reserve["length"].as_str().unwrap()
    );
    assert!(upload["length"].as_u64().unwrap() > 12_000);
    let done = &calls[at("files.completeUploadExternal")]["body"];
    assert_eq!(done["thread_ts"], "600.000001");
    assert_eq!(
        done["initial_comment"],
        "Here's a snippet with the full response."
    );
    assert!(posts_in(&calls, "600.000001").is_empty());
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[test]
fn a_direct_message_is_answered_without_asking_whether_the_channel_is_private() {
    let sim = SlackSim::start();
    let h = host(&sim);
    let dm = json!({"type": "message", "channel_type": "im", "user": "U1", "text": "hi there",
        "ts": "700.000001", "channel": "D1", "team": "T1", "event_ts": "700.000001"});
    ok(&post_event(&h, &envelope("EvDm", dm), &[]));
    let calls = sim.wait_for(WAIT, |c| {
        posts_in(c, "700.000001").len() == 1 && c.last().is_some_and(|l| l["body"]["status"] == "")
    });
    assert!(
        methods(&calls).iter().all(|m| m != "conversations.info"),
        "{calls:?}"
    );
    let reply = &posts_in(&calls, "700.000001")[0]["body"];
    assert_eq!(reply["channel"], "D1");
    // A message edit in the DM, and another bot's DM, start nothing.
    let edit = json!({"type": "message", "channel_type": "im", "subtype": "message_changed",
        "user": "U1", "text": "edited", "ts": "701.000001", "channel": "D1"});
    ok(&post_event(&h, &envelope("EvEdit", edit), &[]));
    let bot = json!({"type": "message", "channel_type": "im", "bot_id": "B9", "user": "U9",
        "text": "beep", "ts": "702.000001", "channel": "D1"});
    ok(&post_event(&h, &envelope("EvBot", bot), &[]));
    ok(&post_event(
        &h,
        &envelope("EvDm2", mention("U1", "hello", "703.000001", None)),
        &[],
    ));
    let calls = sim.wait_for(WAIT, |c| posts_in(c, "703.000001").len() == 1);
    assert!(calls
        .iter()
        .all(|c| c["body"]["thread_ts"] != "701.000001" && c["body"]["thread_ts"] != "702.000001"));
}

/// The reply texts posted in thread `thread_ts`, in order.
fn replies_in(calls: &[Value], thread_ts: &str) -> Vec<String> {
    posts_in(calls, thread_ts)
        .iter()
        .filter_map(|p| p["body"]["markdown_text"].as_str().map(str::to_string))
        .collect()
}

/// Issue 32: whoever started a thread, each person's turn in it runs as that person — their
/// memory, not the thread starter's.
#[test]
fn a_reply_in_someone_elses_thread_runs_as_its_author_and_sees_only_their_memory() {
    let sim = SlackSim::start();
    let h = host(&sim);
    let dm = json!({"type": "message", "channel_type": "im", "user": "U1",
        "text": "remember that my codename is Bluebird", "ts": "800.000001", "channel": "D1",
        "team": "T1", "event_ts": "800.000001"});
    ok(&post_event(&h, &envelope("EvMem", dm), &[]));
    sim.wait_for(WAIT, |c| replies_in(c, "800.000001").len() == 1);
    let root = "801.000001";
    ok(&post_event(
        &h,
        &envelope("EvRoot", mention("U1", "hello there", root, None)),
        &[],
    ));
    sim.wait_for(WAIT, |c| replies_in(c, root).len() == 1);
    let ask = |event: &str, user: &str, ts: &str| {
        let m = mention(user, "what do you know about me?", ts, Some(root));
        ok(&post_event(&h, &envelope(event, m), &[]));
    };
    ask("EvU2", "U2", "801.000002");
    let calls = sim.wait_for(WAIT, |c| replies_in(c, root).len() == 2);
    let to_u2 = &replies_in(&calls, root)[1];
    assert!(
        !to_u2.contains("Bluebird"),
        "U1's memory reached U2: {to_u2}"
    );
    // The same question from U1 in the same thread does find it (the check above can fail).
    ask("EvU1", "U1", "801.000003");
    let calls = sim.wait_for(WAIT, |c| replies_in(c, root).len() == 3);
    let to_u1 = &replies_in(&calls, root)[2];
    assert!(to_u1.contains("Bluebird"), "{to_u1}");
    let owners: Vec<String> = database(&h)
        .prepare(
            "SELECT principal FROM slack_thread_session WHERE thread_ts = ?1 ORDER BY principal",
        )
        .unwrap()
        .query_map([root], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(owners, ["slack:T1:U1", "slack:T1:U2"]);
}

#[test]
fn a_message_the_agent_refuses_is_answered_with_eves_failure_notice() {
    let sim = SlackSim::start();
    let h = host(&sim);
    // Over the agent's 8,000 characters once wrapped in <slack_message>.
    let long = "x".repeat(8_000);
    ok(&post_event(
        &h,
        &envelope("EvTooLong", mention("U1", &long, "800.000001", None)),
        &[],
    ));
    let calls = sim.wait_for(WAIT, |c| posts_in(c, "800.000001").len() == 1);
    let text = posts_in(&calls, "800.000001")[0]["body"]["markdown_text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.starts_with("I hit an error while handling your request (")
            && text.ends_with("Please try again, rephrase, or reach out if it keeps failing."),
        "{text}"
    );
    // Nothing was kept for the thread.
    let threads: i64 = database(&h)
        .query_row("SELECT count(*) FROM slack_thread_session", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(threads, 0);
}

#[test]
fn the_channel_speaks_chinese_with_slack_language_zh() {
    let sim = SlackSim::start();
    let h = host_with(&sim, &[("slack_language", "zh")]);
    ok(&post_event(
        &h,
        &envelope(
            "EvZh",
            mention("U1", "ask me something", "900.000001", None),
        ),
        &[],
    ));
    let calls = sim.wait_for(WAIT, |c| {
        c.iter()
            .any(|p| p["method"] == "chat.postMessage" && p["body"]["blocks"].is_string())
    });
    assert_eq!(calls[0]["body"]["status"], "思考中...");
    let long = "count to 200";
    ok(&post_event(
        &h,
        &envelope("EvZh2", mention("U1", long, "901.000001", None)),
        &[],
    ));
    let calls = sim.wait_for(WAIT, |c| posts_in(c, "901.000001").len() == 1);
    assert!(
        thread_calls(&calls, "901.000001")
            .iter()
            .any(|(_, s)| s == "正在撰写回复..."),
        "{calls:?}"
    );
}

/// An OpenAI stream that calls `tool` with `arguments`.
fn openai_tool_call(tool: &str, arguments: &Value) -> llm_server::Script {
    let chunk = |delta: Value, finish: Option<&str>| {
        format!(
            "data: {}\n\n",
            json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    llm_server::Script::new(vec![
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                "function": {"name": tool, "arguments": arguments.to_string()}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        "data: [DONE]\n\n".into(),
    ])
}

fn form_payload(payload: &Value) -> String {
    format!("payload={}", urlencode(&payload.to_string()))
}

#[test]
fn a_question_without_options_is_answered_in_eves_modal() {
    let sim = SlackSim::start();
    let model = llm_server::LlmServer::start(vec![
        openai_tool_call("ask_user", &json!({"prompt": "What is your name?"})),
        llm_server::Script::openai_text("Nice to meet you."),
    ]);
    let base = format!("{}/v1", model.base);
    let h = host_with(
        &sim,
        &[
            ("llm_provider", "openai"),
            ("llm_api_key", "k"),
            ("llm_base_url", &base),
            ("llm_model", "m"),
        ],
    );
    ok(&post_event(
        &h,
        &envelope("EvFree", mention("U1", "guess my name", "950.000001", None)),
        &[],
    ));
    let calls = sim.wait_for(WAIT, |c| {
        let card = c
            .iter()
            .position(|p| p["method"] == "chat.postMessage" && p["body"]["blocks"].is_string());
        card.is_some_and(|i| c[i..].iter().any(|x| x["body"]["status"] == ""))
    });
    let card = calls
        .iter()
        .find(|p| p["body"]["blocks"].is_string())
        .unwrap();
    let blocks: Value = serde_json::from_str(card["body"]["blocks"].as_str().unwrap()).unwrap();
    assert_eq!(
        blocks[0],
        json!({"type": "section", "text": {"type": "mrkdwn", "text": "What is your name?"}})
    );
    let button = blocks[1]["elements"][0].clone();
    assert_eq!(button["text"]["text"], "Type your answer");
    assert!(button["action_id"]
        .as_str()
        .unwrap()
        .starts_with("eve_input_freeform:"));

    // "Type your answer" opens eve's modal before the click is answered.
    let message = json!({"type": "message", "ts": "1700000003.000100", "thread_ts": "950.000001", "blocks": blocks});
    let click = json!({"type": "block_actions", "user": {"id": "U1", "team_id": "T1"}, "team": {"id": "T1"},
        "channel": {"id": "C1"}, "message": message, "actions": [button], "trigger_id": "trigger-1"});
    ok(&post_signed(
        &h,
        &form_payload(&click),
        "application/x-www-form-urlencoded",
        now_secs(),
        SIGNING_SECRET,
        &[],
    ));
    let calls = sim.calls();
    let open = calls
        .iter()
        .find(|c| c["method"] == "views.open")
        .expect("the modal is opened");
    assert_eq!(open["body"]["trigger_id"], "trigger-1");
    let view: Value = serde_json::from_str(open["body"]["view"].as_str().unwrap()).unwrap();
    assert_eq!(
        (view["callback_id"].as_str(), view["title"]["text"].as_str()),
        (
            Some("eve_input_freeform_submit"),
            Some("What is your name?")
        )
    );

    // The submission answers the question with its text; the message shows the answer.
    let submit = json!({"type": "view_submission", "user": {"id": "U1", "team_id": "T1"}, "team": {"id": "T1"},
        "view": {"id": "V00000001", "callback_id": "eve_input_freeform_submit",
            "private_metadata": view["private_metadata"],
            "state": {"values": {"eve_freeform_block": {"eve_freeform_text": {"type": "plain_text_input", "value": "Ada"}}}}}});
    let r = post_signed(
        &h,
        &form_payload(&submit),
        "application/x-www-form-urlencoded",
        now_secs(),
        SIGNING_SECRET,
        &[],
    );
    assert_eq!((r.status, r.text().as_str()), (200, ""));
    let calls = sim.wait_for(WAIT, |c| {
        posts_in(c, "950.000001")
            .iter()
            .any(|p| p["body"]["markdown_text"] == "Nice to meet you.")
    });
    let update = calls
        .iter()
        .find(|c| c["method"] == "chat.update")
        .expect("the question is updated");
    assert_eq!(
        (
            update["body"]["ts"].as_str(),
            update["body"]["text"].as_str()
        ),
        (Some("1700000003.000100"), Some("Answered: Ada"))
    );
    assert!(update["body"]["blocks"]
        .as_str()
        .unwrap()
        .contains("Answered by <@U1>"));
    let second = &model.bodies()[1];
    assert!(second.to_string().contains("Ada"), "{second}");
}

#[test]
fn a_reply_slack_refuses_goes_as_a_snippet_and_one_that_fails_leaves_a_notice() {
    let sim = SlackSim::start();
    let h = host(&sim);
    // The demo model quotes the message, so the simulator refuses the reply as too long...
    ok(&post_event(
        &h,
        &envelope(
            "EvRef",
            mention("U1", "[[slack-sim:msg_too_long]]", "960.000001", None),
        ),
        &[],
    ));
    let calls = sim.wait_for(WAIT, |c| {
        c.iter()
            .any(|x| x["method"] == "files.completeUploadExternal")
    });
    let done = calls
        .iter()
        .find(|x| x["method"] == "files.completeUploadExternal")
        .unwrap();
    assert_eq!(done["body"]["thread_ts"], "960.000001");
    // ...or fails it for another reason: no retry, a notice with an error id instead.
    ok(&post_event(
        &h,
        &envelope(
            "EvErr",
            mention("U1", "[[slack-sim:internal_error]]", "961.000001", None),
        ),
        &[],
    ));
    let calls = sim.wait_for(WAIT, |c| posts_in(c, "961.000001").len() == 2);
    let notice = posts_in(&calls, "961.000001")[1]["body"]["markdown_text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        notice.starts_with("I finished, but couldn't deliver my answer in Slack (error id `")
            && notice.ends_with("`). Please ask me to resend it."),
        "{notice}"
    );
    assert!(
        !notice.contains("slack-sim"),
        "the notice carries no reply content"
    );
}

/// The `ts` the simulator gave the `n`th (0-based) `chat.postMessage` of `calls` (it numbers
/// every accepted post from 1700000001).
fn posted_ts(calls: &[Value], call: &Value) -> String {
    let n = calls
        .iter()
        .filter(|c| c["method"] == "chat.postMessage")
        .position(|c| c == call)
        .expect("a post");
    format!("{}.000100", 1_700_000_001 + n)
}

/// Mentions the app in thread `ts` asking for the weather; the approval's two messages (the
/// tool input, then the card) once the turn waits on them, and every call so far.
fn ask_for_approval(
    h: &Host,
    sim: &SlackSim,
    event_id: &str,
    ts: &str,
) -> (Value, Value, Vec<Value>) {
    ok(&post_event(
        h,
        &envelope(event_id, mention("U1", "weather in Paris please", ts, None)),
        &[],
    ));
    let calls = sim.wait_for(WAIT, |c| {
        let posts = posts_in(c, ts);
        let card = c.iter().position(|p| {
            p["body"]["thread_ts"] == ts
                && p["body"]["blocks"]
                    .as_str()
                    .is_some_and(|b| b.contains("\"card\""))
        });
        posts.len() >= 2 && card.is_some_and(|i| c[i..].iter().any(|x| x["body"]["status"] == ""))
    });
    let posts = posts_in(&calls, ts);
    assert_eq!(posts.len(), 2, "{posts:?}");
    (posts[0].clone(), posts[1].clone(), calls)
}

/// `user`'s click on button `n` of an approval card (`blocks`, posted as `card_ts`).
/// `update` (a `chat.update`) retires the card posted at `card_ts` as answered with `label`.
fn assert_answered(update: &Value, card_ts: &str, label: &str) {
    let text = format!("Answered: {label}");
    assert_eq!(
        (
            update["body"]["ts"].as_str(),
            update["body"]["text"].as_str()
        ),
        (Some(card_ts), Some(text.as_str()))
    );
}

fn click(h: &Host, user: &str, card_ts: &str, thread_ts: &str, blocks: &Value, n: usize) {
    let message =
        json!({"type": "message", "ts": card_ts, "thread_ts": thread_ts, "blocks": blocks});
    let payload = json!({"type": "block_actions", "user": {"id": user, "team_id": "T1"}, "team": {"id": "T1"},
        "api_app_id": "A1", "channel": {"id": "C1"}, "message": message,
        "actions": [blocks[0]["actions"][n]], "trigger_id": "t1"});
    ok(&post_signed(
        h,
        &form_payload(&payload),
        "application/x-www-form-urlencoded",
        now_secs(),
        SIGNING_SECRET,
        &[],
    ));
}

#[test]
fn a_tool_approval_is_eves_card_and_approve_or_cancel_settles_it() {
    let sim = SlackSim::start();
    let city = json!({"city": "Paris"});
    let model = llm_server::LlmServer::start(vec![
        openai_tool_call("get_weather", &city),
        llm_server::Script::openai_text("Sunny in Paris."),
        openai_tool_call("get_weather", &city),
        llm_server::Script::openai_text("I did not look it up."),
        openai_tool_call("get_weather", &city),
        llm_server::Script::openai_text("Fine, no weather then."),
    ]);
    let base = format!("{}/v1", model.base);
    let h = host_with(
        &sim,
        &[
            ("llm_provider", "openai"),
            ("llm_api_key", "k"),
            ("llm_base_url", &base),
            ("llm_model", "m"),
            ("tool_approvals", r#"{"get_weather":"always"}"#),
        ],
    );
    let (details, card, calls) = ask_for_approval(&h, &sim, "EvAp1", "970.000001");
    // eve's format: the tool input in its own message, then the card: the prompt, Cancel and
    // Approve (primary), and the paused subtext.
    let shown: Value = serde_json::from_str(details["body"]["blocks"].as_str().unwrap()).unwrap();
    assert_eq!(shown[0]["type"], "container");
    assert_eq!(shown[0]["title"]["text"], "Tool input");
    assert!(shown[0].to_string().contains("Paris"), "{shown}");
    let blocks: Value = serde_json::from_str(card["body"]["blocks"].as_str().unwrap()).unwrap();
    assert_eq!(blocks.as_array().unwrap().len(), 1, "{blocks}");
    assert_eq!(blocks[0]["type"], "card");
    assert_eq!(blocks[0]["body"]["text"], "*Approve Get weather?*");
    assert_eq!(
        blocks[0]["subtext"]["text"],
        "I've paused until someone approves or cancels."
    );
    let buttons = blocks[0]["actions"].as_array().unwrap();
    let labels: Vec<_> = buttons
        .iter()
        .map(|b| (b["text"]["text"].clone(), b["value"].clone()))
        .collect();
    assert_eq!(
        labels,
        [
            (json!("Cancel"), json!("cancel")),
            (json!("Approve"), json!("approve"))
        ]
    );
    assert_eq!(buttons[1]["style"], "primary");
    assert!(buttons[1]["action_id"]
        .as_str()
        .unwrap()
        .starts_with("eve_input:tool-approval:"));
    assert_eq!(card["body"]["text"], "Approve Get weather?");
    assert!(
        !calls.iter().any(|c| c["method"] == "chat.update"),
        "nothing settled yet"
    );

    // Someone else's click is refused in eve's words; the card stays and the turn waits.
    let (details_ts, card_ts) = (posted_ts(&calls, &details), posted_ts(&calls, &card));
    click(&h, "U2", &card_ts, "970.000001", &blocks, 1);
    let calls = sim.wait_for(WAIT, |c| posts_in(c, "970.000001").len() == 3);
    let notice = &posts_in(&calls, "970.000001")[2];
    assert_eq!(
        notice["body"]["markdown_text"],
        "Only the person who requested this action can respond to this approval."
    );
    assert!(!calls.iter().any(|c| c["method"] == "chat.update"));
    assert_eq!(model.bodies().len(), 1, "the agent was not asked again");

    // The requester's Approve: the card is retired when the agent settles it, its tool input
    // deleted, the tool runs and the answer follows in the thread.
    click(&h, "U1", &card_ts, "970.000001", &blocks, 1);
    let calls = sim.wait_for(WAIT, |c| {
        posts_in(c, "970.000001")
            .iter()
            .any(|p| p["body"]["markdown_text"] == "Sunny in Paris.")
    });
    let at = |m: &str| {
        calls
            .iter()
            .position(|c| c["method"] == m)
            .unwrap_or_else(|| panic!("no {m}: {calls:?}"))
    };
    let (update, delete) = (&calls[at("chat.update")], &calls[at("chat.delete")]);
    assert!(at("chat.update") < at("chat.delete"));
    assert_answered(update, &card_ts, "Approve");
    let settled: Value = serde_json::from_str(update["body"]["blocks"].as_str().unwrap()).unwrap();
    assert_eq!(
        settled[0]["subtext"]["text"],
        ":white_check_mark: *Approve* by <@U1>"
    );
    assert!(settled[0].get("actions").is_none(), "{settled}");
    assert_eq!(delete["body"]["ts"].as_str(), Some(details_ts.as_str()));
    let asked = model.bodies()[1].to_string();
    assert!(
        asked.contains("\"role\":\"tool\"") && !asked.contains("denied"),
        "{asked}"
    );

    // Cancel: the card says so, the tool does not run, the model is told it was refused.
    let (details, card, calls) = ask_for_approval(&h, &sim, "EvAp2", "971.000001");
    let blocks: Value = serde_json::from_str(card["body"]["blocks"].as_str().unwrap()).unwrap();
    let (details_ts, card_ts) = (posted_ts(&calls, &details), posted_ts(&calls, &card));
    click(&h, "U1", &card_ts, "971.000001", &blocks, 0);
    let calls = sim.wait_for(WAIT, |c| {
        posts_in(c, "971.000001")
            .iter()
            .any(|p| p["body"]["markdown_text"] == "I did not look it up.")
    });
    let update = calls
        .iter()
        .rfind(|c| c["method"] == "chat.update")
        .unwrap();
    assert_answered(update, &card_ts, "Cancel");
    assert!(update["body"]["blocks"]
        .as_str()
        .unwrap()
        .contains(":white_check_mark: *Cancel* by <@U1>"));
    let at = calls
        .iter()
        .rposition(|c| c["method"] == "chat.delete")
        .unwrap();
    assert_eq!(calls[at]["body"]["ts"].as_str(), Some(details_ts.as_str()));
    // The resumed turn's next step shows the status the thread had when it paused, as eve's.
    let next = calls[at..]
        .iter()
        .find(|c| c["method"] == "assistant.threads.setStatus");
    assert_eq!(next.unwrap()["body"]["status"], "Get weather");
    assert!(
        model.bodies()[3]
            .to_string()
            .contains("Tool execution was denied."),
        "{:?}",
        model.bodies()[3]
    );
    // A second click on a settled card changes nothing in Slack (the agent refuses it).
    let before = sim.calls().len();
    click(&h, "U1", &card_ts, "971.000001", &blocks, 1);
    assert!(sim.calls()[before..]
        .iter()
        .all(|c| c["method"] != "chat.update"));

    // A message instead of a click: the agent ignores the approval and the card is no longer
    // needed (eve's input.resolved), the turn goes on with the message.
    let (_, card, calls) = ask_for_approval(&h, &sim, "EvAp3", "972.000001");
    let card_ts = posted_ts(&calls, &card);
    ok(&post_event(
        &h,
        &envelope(
            "EvAp4",
            mention("U1", "never mind", "972.000009", Some("972.000001")),
        ),
        &[],
    ));
    let calls = sim.wait_for(WAIT, |c| {
        posts_in(c, "972.000001")
            .iter()
            .any(|p| p["body"]["markdown_text"] == "Fine, no weather then.")
    });
    let update = calls
        .iter()
        .rfind(|c| c["method"] == "chat.update")
        .unwrap();
    assert_answered(update, &card_ts, "No longer needed");
}
