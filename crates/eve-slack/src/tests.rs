//! The channel's decisions against eve's: inbound payloads as Slack sends them, the Slack
//! calls a turn's events make, buttons, and the two tables on real SQLite.

use eve_api::eve::{Event, InputRequest};
use eve_sql_testing::Db;
use serde_json::{json, Value};

use crate::inbound::{self, Inbound, Kind};
use crate::render::{Action, Renderer};
use crate::store::{self, Thread};
use crate::words::{self, EN, ZH};
use crate::{hitl, web_api};

fn mention(event: Value) -> Value {
    json!({
        "token": "x", "team_id": "T1", "api_app_id": "A1", "type": "event_callback",
        "event_id": "Ev1", "event_time": 1,
        "authorizations": [{"team_id": "T1", "user_id": "UBOT", "is_bot": true}],
        "event": event,
    })
}

fn parse(v: &Value) -> Inbound {
    inbound::parse(v.to_string().as_bytes(), false)
}

#[test]
fn a_mention_is_a_message_of_its_workspace_user() {
    let v = mention(
        json!({"type": "app_mention", "user": "U1", "text": "<@UBOT> hi",
        "ts": "1.1", "channel": "C1", "team": "T1"}),
    );
    let Inbound::Message(m) = parse(&v) else {
        panic!("{:?}", parse(&v))
    };
    assert_eq!(
        (m.kind, m.team.as_str(), m.user.as_str()),
        (Kind::AppMention, "T1", "U1")
    );
    assert_eq!(
        (m.thread_ts.as_str(), m.event_id.as_deref()),
        ("1.1", Some("Ev1"))
    );
    assert_eq!(
        inbound::principal(&m.team, &m.user, m.is_bot),
        "slack:T1:U1"
    );
    assert_eq!(
        inbound::model_text(&m),
        "<slack_message>\nsender_type: user\nsender_id: U1\nbot_user_id: UBOT\nis_mentioned: true\n\
         channel_id: C1\nthread_ts: 1.1\nmessage_ts: 1.1\nteam_id: T1\n<content>\n<@UBOT> hi\n\
         </content>\n</slack_message>"
    );
    // A reply in a thread keeps the thread's ts.
    let v = mention(
        json!({"type": "app_mention", "user": "U2", "text": "more", "ts": "1.5",
        "thread_ts": "1.1", "channel": "C1"}),
    );
    let Inbound::Message(m) = parse(&v) else {
        panic!()
    };
    assert_eq!((m.thread_ts.as_str(), m.ts.as_str()), ("1.1", "1.5"));
}

#[test]
fn the_apps_own_messages_and_other_events_are_ignored() {
    for event in [
        json!({"type": "app_mention", "user": "UBOT", "text": "x", "ts": "1", "channel": "C1"}),
        json!({"type": "app_mention", "user": "U9", "app_id": "A1", "text": "x", "ts": "1", "channel": "C1"}),
        json!({"type": "message", "channel_type": "im", "bot_id": "B1", "user": "U1", "text": "x", "ts": "1", "channel": "D1"}),
        json!({"type": "message", "channel_type": "im", "subtype": "message_changed", "user": "U1", "text": "x", "ts": "1", "channel": "D1"}),
        json!({"type": "message", "channel_type": "channel", "user": "U1", "text": "x", "ts": "1", "channel": "C1"}),
        json!({"type": "reaction_added", "user": "U1"}),
        json!({"type": "app_mention", "user": "U1", "text": "x", "channel": "C1"}),
    ] {
        assert_eq!(parse(&mention(event.clone())), Inbound::Ignored, "{event}");
    }
    assert_eq!(inbound::parse(b"not json", false), Inbound::Ignored);
    assert_eq!(
        inbound::parse(b"{\"type\":\"app_rate_limited\"}", false),
        Inbound::Ignored
    );
    // A DM from a person is a message.
    let dm = mention(
        json!({"type": "message", "channel_type": "im", "user": "U1", "text": "hi",
        "ts": "2", "channel": "D1"}),
    );
    assert!(
        matches!(parse(&dm), Inbound::Message(m) if m.kind == Kind::DirectMessage
        && m.channel_type.as_deref() == Some("private"))
    );
}

#[test]
fn the_challenge_and_timeout_retries() {
    let v = json!({"token": "t", "challenge": "abc123", "type": "url_verification"});
    assert_eq!(parse(&v), Inbound::Challenge("abc123".into()));
    assert!(inbound::is_timeout_retry(Some("1"), Some("http_timeout")));
    assert!(!inbound::is_timeout_retry(Some("1"), Some("http_error")));
    assert!(!inbound::is_timeout_retry(Some("0"), Some("http_timeout")));
    assert!(!inbound::is_timeout_retry(None, None));
}

fn question() -> InputRequest {
    serde_json::from_value(json!({
        "action": {"callId": "c1", "input": {}, "kind": "tool-call", "toolName": "ask"},
        "kind": "question", "prompt": "Which one?", "requestId": "req_1",
        "options": [{"id": "a", "label": "Apple"}, {"id": "b", "label": "Banana"}],
    }))
    .unwrap()
}

#[test]
fn questions_are_buttons_and_a_click_answers_them() {
    let (blocks, text) = hitl::request_messages(&[question()], &EN).remove(0);
    assert_eq!(text, "Which one?");
    assert_eq!(
        blocks,
        vec![json!({"type": "card",
            "body": {"type": "mrkdwn", "text": "*Which one?*", "verbatim": false},
            "actions": [
                {"type": "button", "text": {"type": "plain_text", "text": "Apple", "emoji": false},
                 "action_id": "eve_input:req_1:button:0", "value": "a"},
                {"type": "button", "text": {"type": "plain_text", "text": "Banana", "emoji": false},
                 "action_id": "eve_input:req_1:button:1", "value": "b"}]})]
    );
    let payload = json!({"type": "block_actions", "user": {"id": "U1", "team_id": "T1"},
        "team": {"id": "T1"}, "channel": {"id": "C1"},
        "message": {"ts": "9.9", "thread_ts": "1.1", "blocks": blocks},
        "actions": [{"action_id": "eve_input:req_1:button:1", "value": "b",
                     "text": {"type": "plain_text", "text": "Banana"}}]});
    let body = form_urlencoded::Serializer::new(String::new())
        .append_pair("payload", &payload.to_string())
        .finish();
    let Inbound::Answer(a) = inbound::parse(body.as_bytes(), true) else {
        panic!()
    };
    assert_eq!(
        (
            a.request_id.as_str(),
            a.option_id.as_str(),
            a.label.as_str()
        ),
        ("req_1", "b", "Banana")
    );
    assert_eq!(
        (a.thread_ts.as_str(), a.message_ts.as_str()),
        ("1.1", "9.9")
    );
    let answered = hitl::answered_blocks(&a.blocks, "req_1", &a.label, &a.user, &EN);
    assert_eq!(
        answered[0]["subtext"]["text"],
        ":white_check_mark: *Banana* by <@U1>"
    );
    assert!(answered[0].get("actions").is_none());
    // Someone else's buttons are not ours.
    assert_eq!(hitl::decode_button("my_button"), None);
    assert_eq!(
        hitl::decode_button("eve_input:tool-approval:r9:button:1").as_deref(),
        Some("r9")
    );
}

fn ev(v: Value) -> Event {
    serde_json::from_value(v).unwrap()
}

fn calls(actions: Vec<Action>) -> Vec<(String, String)> {
    actions
        .into_iter()
        .map(|a| match a {
            Action::Call(c) => (c.method.to_string(), c.form()),
            Action::Reply { markdown } if markdown.len() > 100 => {
                ("reply".into(), markdown.len().to_string())
            }
            Action::Reply { markdown } => ("reply".into(), markdown),
            Action::Ask { call, .. } => (call.method.to_string(), call.form()),
            Action::Settle {
                request_id, label, ..
            } => ("settle".into(), format!("{request_id} {label}")),
        })
        .collect()
}

#[test]
fn a_turn_renders_as_eves_default_renderer() {
    let mut r = Renderer::new("C1", "1.1", &EN);
    let mut out = calls(r.received());
    let turn = json!({"sequence": 0, "turnId": "turn_0"});
    let step = json!({"sequence": 0, "turnId": "turn_0", "stepIndex": 0});
    for e in [
        json!({"type": "turn.started", "data": turn}),
        json!({"type": "step.started", "data": {"modelId": "m", "sequence": 0, "turnId": "turn_0", "stepIndex": 0}}),
        json!({"type": "message.appended", "data": {"messageDelta": "Hello", "sequence": 0, "turnId": "turn_0", "stepIndex": 0}}),
        json!({"type": "message.completed", "data": {"finishReason": "stop", "message": "Hello", "sequence": 0, "turnId": "turn_0", "stepIndex": 0}}),
        json!({"type": "turn.completed", "data": turn}),
    ] {
        let _ = &step;
        out.extend(calls(r.on_event(&ev(e))));
    }
    let thinking =
        "channel_id=C1&thread_ts=1.1&status=Thinking...&loading_messages=%5B%22Thinking...%22%5D";
    assert_eq!(
        out,
        vec![
            ("assistant.threads.setStatus".into(), thinking.into()),
            ("assistant.threads.setStatus".into(), thinking.into()),
            ("reply".into(), "Hello".into()),
            (
                "assistant.threads.setStatus".into(),
                "channel_id=C1&thread_ts=1.1&status=".into()
            ),
        ]
    );
}

#[test]
fn long_replies_tools_and_questions() {
    let mut r = Renderer::new("C1", "1.1", &EN);
    let at = json!({"sequence": 0, "turnId": "turn_0", "stepIndex": 0});
    let mut with = |mut v: Value| {
        v["data"]
            .as_object_mut()
            .unwrap()
            .extend(at.as_object().unwrap().clone());
        calls(r.on_event(&ev(v)))
    };
    let tools = with(json!({"type": "actions.requested", "data": {"actions": [
        {"callId": "c1", "input": {}, "kind": "tool-call", "toolName": "get_time"},
        {"callId": "c2", "input": {}, "kind": "tool-call", "toolName": "mcp__searchDocs"}]}}));
    assert_eq!(tools[0].1, "channel_id=C1&thread_ts=1.1&status=Get+time+%2B1+more&loading_messages=%5B%22Get+time+%2B1+more%22%5D");
    let long = "x".repeat(300);
    let writing = with(json!({"type": "message.appended", "data": {"messageDelta": long}}));
    assert!(writing[0].1.contains("status=Writing+a+reply..."));
    let big = "y".repeat(12_001);
    let done = with(
        json!({"type": "message.completed", "data": {"finishReason": "stop", "message": big}}),
    );
    assert_eq!(done, vec![("reply".to_string(), "12001".to_string())]);
    let q = serde_json::to_value(question()).unwrap();
    let asked = with(json!({"type": "input.requested", "data": {"callId": "c1", "requests": [q]}}));
    assert_eq!(asked[0].0, "chat.postMessage");
    assert!(asked[0].1.contains("eve_input%3Areq_1%3Abutton%3A0"));
    assert_eq!(renderer_title("crm__sync_accounts"), "Sync accounts");
    assert_eq!(renderer_title("syncAccounts"), "Sync accounts");
    assert_eq!(renderer_title("getHTTPResponse"), "Get HTTP response");
}

fn renderer_title(name: &str) -> String {
    crate::render::display_title(name)
}

#[test]
fn statuses_are_cut_as_eve_cuts_them() {
    use crate::render::truncate_status;
    assert_eq!(truncate_status("  a   b "), "a b");
    let long = "Searching the documentation for the answer to your long question";
    let cut = truncate_status(long);
    assert!(cut.chars().count() <= 50 && cut.ends_with("..."), "{cut}");
    assert_eq!(cut, "Searching the documentation for the answer to...");
}

#[test]
fn web_api_bodies_and_answers() {
    let c = web_api::Call::new(
        "x",
        vec![
            ("a", json!("b c")),
            ("n", Value::Null),
            ("o", json!({"k": 1})),
        ],
    );
    assert_eq!(c.form(), "a=b+c&o=%7B%22k%22%3A1%7D");
    assert_eq!(
        web_api::method_url("http://h/api/", "chat.update"),
        "http://h/api/chat.update"
    );
    assert!(web_api::verdict(200, br#"{"ok":true,"ts":"1"}"#).is_ok());
    assert_eq!(
        web_api::verdict(200, br#"{"ok":false,"error":"not_authed"}"#),
        Err("not_authed".into())
    );
    assert!(web_api::verdict(502, b"<html>").is_err());
}

fn db() -> Db {
    let db = Db::memory();
    eve_store::migrations::migrate(&db, 0).unwrap();
    db
}

#[test]
fn an_event_id_is_taken_once_and_forgotten_after_a_day() {
    let db = db();
    assert!(store::claim_event(&db, "Ev1", 1_000).unwrap());
    assert!(!store::claim_event(&db, "Ev1", 2_000).unwrap());
    assert!(store::claim_event(&db, "Ev2", 2_000).unwrap());
    let later = 2_000 + store::EVENT_MEMORY_MS + 1;
    assert!(store::claim_event(&db, "Ev1", later).unwrap());
}

#[test]
fn each_person_in_a_thread_has_their_own_session_the_first_writer_wins() {
    let db = db();
    let t = Thread {
        team: "T1".into(),
        channel: "C1".into(),
        thread_ts: "1.1".into(),
    };
    let (u1, u2) = ("slack:T1:U1", "slack:T1:U2");
    assert_eq!(store::thread_session(&db, &t, u1).unwrap(), None);
    assert!(store::record_thread(&db, &t, u1, "wrun_a", 1).unwrap());
    assert!(!store::record_thread(&db, &t, u1, "wrun_b", 2).unwrap());
    // Someone else replying in the thread is not the thread's first writer.
    assert_eq!(store::thread_session(&db, &t, u2).unwrap(), None);
    assert!(store::record_thread(&db, &t, u2, "wrun_c", 3).unwrap());
    assert_eq!(
        store::thread_session(&db, &t, u1).unwrap().as_deref(),
        Some("wrun_a")
    );
    assert_eq!(
        store::thread_session(&db, &t, u2).unwrap().as_deref(),
        Some("wrun_c")
    );
    let other = Thread {
        thread_ts: "2.2".into(),
        ..t.clone()
    };
    assert_eq!(store::thread_session(&db, &other, u1).unwrap(), None);
    store::forget_thread(&db, &t, u1, "wrun_other").unwrap();
    store::forget_thread(&db, &t, u2, "wrun_a").unwrap();
    assert!(store::thread_session(&db, &t, u1).unwrap().is_some());
    store::forget_thread(&db, &t, u1, "wrun_a").unwrap();
    assert_eq!(store::thread_session(&db, &t, u1).unwrap(), None);
    assert!(store::thread_session(&db, &t, u2).unwrap().is_some());
}

#[test]
fn reasoning_shows_its_heading_or_last_sentence() {
    use crate::render::reasoning_status;
    assert_eq!(
        reasoning_status("**Planning the answer**\nI will look.").as_deref(),
        Some("Planning the answer")
    );
    assert_eq!(
        reasoning_status("The user greets me. I should answer briefly and kindly.").as_deref(),
        Some("I should answer briefly and kindly.")
    );
    assert_eq!(
        reasoning_status("1. First step here. Ok.").as_deref(),
        Some("First step here.")
    );
    assert_eq!(reasoning_status("```code```"), None);
}

#[test]
fn failures_are_said_in_eves_words() {
    use crate::render::failure_text;
    assert_eq!(
        failure_text(
            &EN,
            false,
            "model refused",
            &Some(json!({"name": "APICallError", "errorId": "e1"}))
        ),
        "I hit an error while handling your request (APICallError: model refused).\n\n\
         Please try again, rephrase, or reach out if it keeps failing.\n\n_Error id: `e1`_"
    );
    assert_eq!(
        failure_text(&EN, true, "", &None),
        "This session couldn't recover from an error.\n\nStart a new thread to continue — I can't pick this one back up."
    );
}

#[test]
fn the_channel_speaks_chinese_when_asked() {
    assert_eq!(words::for_language(None), &EN);
    assert_eq!(words::for_language(Some("en")), &EN);
    for zh in ["zh", "ZH", "zh-CN", "zh-Hans", "zh_CN"] {
        assert_eq!(words::for_language(Some(zh)), &ZH, "{zh}");
    }
    let mut r = Renderer::new("C1", "1.1", &ZH);
    assert!(calls(r.received())[0]
        .1
        .contains(&form("status", "思考中...")));
    assert_eq!(
        crate::render::failure_text(&ZH, false, "", &None),
        "处理你的请求时出错了。\n\n请重试或换个说法；如果一直失败，请联系管理员。"
    );
    let (blocks, _) = hitl::request_messages(&[question()], &ZH).remove(0);
    let answered = hitl::answered_blocks(&blocks, "req_1", "苹果", "U1", &ZH);
    assert_eq!(
        answered[0]["subtext"]["text"],
        ":white_check_mark: *苹果* 由 <@U1> 回答"
    );
}

fn form(key: &str, value: &str) -> String {
    form_urlencoded::Serializer::new(String::new())
        .append_pair(key, value)
        .finish()
}

#[test]
fn a_question_without_options_opens_eves_modal_and_its_submission_answers() {
    let mut q = question();
    q.options.clear();
    let (blocks, _) = hitl::request_messages(&[q], &EN).remove(0);
    assert_eq!(
        blocks[1]["elements"][0]["action_id"],
        "eve_input_freeform:req_1"
    );
    assert_eq!(hitl::prompt_of(&blocks).as_deref(), Some("Which one?"));
    let click = json!({"type": "block_actions", "user": {"id": "U1"}, "team": {"id": "T1"},
        "channel": {"id": "C1"}, "trigger_id": "tr", "actions": [blocks[1]["elements"][0]],
        "message": {"ts": "9.9", "thread_ts": "1.1", "blocks": blocks}});
    let body = form("payload", &click.to_string());
    let Inbound::OpenModal(m) = inbound::parse(body.as_bytes(), true) else {
        panic!()
    };
    assert_eq!(
        (m.request_id.as_str(), m.trigger_id.as_str()),
        ("req_1", "tr")
    );
    let view = hitl::freeform_modal(m.prompt.as_deref(), &m.metadata(), &EN);
    assert_eq!(view["title"]["text"], "Which one?");
    let submit = json!({"type": "view_submission", "user": {"id": "U2"}, "team": {"id": "T1"},
        "view": {"callback_id": "eve_input_freeform_submit", "private_metadata": view["private_metadata"],
            "state": {"values": {"eve_freeform_block": {"eve_freeform_text": {"value": "Banana"}}}}}});
    let Inbound::Answer(a) = inbound::parse(form("payload", &submit.to_string()).as_bytes(), true)
    else {
        panic!()
    };
    assert_eq!(
        (
            a.text.as_deref(),
            a.request_id.as_str(),
            a.message_ts.as_str()
        ),
        (Some("Banana"), "req_1", "9.9")
    );
    // An empty answer, or another app's modal, is nothing.
    let mut empty = submit.clone();
    empty["view"]["state"]["values"]["eve_freeform_block"]["eve_freeform_text"]["value"] =
        json!("");
    assert_eq!(
        inbound::parse(form("payload", &empty.to_string()).as_bytes(), true),
        Inbound::Ignored
    );
    let mut other = submit;
    other["view"]["callback_id"] = json!("someone_else");
    assert_eq!(
        inbound::parse(form("payload", &other.to_string()).as_bytes(), true),
        Inbound::Ignored
    );
}

/// eve's own renderings (tests/slack/record-hitl.mjs ran eve 0.80.1's `renderInputRequestBlocks`,
/// `deriveHitlResponse`, `answeredBlocksFromActionBlock`, `buildFreeformModalView` and
/// `buildAnsweredBlocks`), replayed.
#[test]
fn recorded_eve_question_and_approval_blocks_match() {
    let rec = recorded_hitl();
    for case in rec["cases"].as_array().unwrap() {
        let request: InputRequest = serde_json::from_value(case["request"].clone()).unwrap();
        let blocks = hitl::request_blocks(&request, &EN);
        assert_eq!(
            Value::Array(blocks.clone()),
            case["blocks"],
            "{}",
            request.request_id
        );
        let buttons: Vec<&Value> = blocks
            .iter()
            .flat_map(|b| {
                b["actions"]
                    .as_array()
                    .or(b["elements"].as_array())
                    .into_iter()
                    .flatten()
            })
            .collect();
        for (b, decoded) in buttons.iter().zip(case["decoded"].as_array().unwrap()) {
            let id = b["action_id"].as_str().unwrap();
            match decoded["response"]["requestId"].as_str() {
                Some(want) => assert_eq!(hitl::decode_button(id).as_deref(), Some(want), "{id}"),
                None => assert_eq!(hitl::decode_button(id), None, "{id}"),
            }
        }
        if !case["answered"].is_null() {
            let label = buttons[0]["text"]["text"].as_str().unwrap();
            let answered = hitl::answered_blocks(&blocks, &request.request_id, label, "U2", &EN);
            assert_eq!(answered[0], case["answered"][0], "{}", request.request_id);
        }
    }
}

fn recorded_hitl() -> Value {
    serde_json::from_str(include_str!("../../../tests/slack/recordings/hitl.json")).unwrap()
}

/// Posted as eve's buildInputRequestPosts posts them: the approval's tool input first, then
/// every card and question together in one message; eve's free-form modal and its answer.
#[test]
fn recorded_eve_posts_and_modal_match() {
    let rec = recorded_hitl();
    let all: Vec<InputRequest> = rec["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| serde_json::from_value(c["request"].clone()).unwrap())
        .collect();
    let posts = hitl::request_messages(&all, &EN);
    assert_eq!(posts.len(), 2);
    assert_eq!(posts[0].0, vec![rec["cases"][2]["blocks"][1].clone()]);
    assert!(
        posts[0]
            .1
            .starts_with("Allow write_file?\n*Tool input*\n```\n{"),
        "{}",
        posts[0].1
    );
    let kinds: Vec<&str> = posts[1]
        .0
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["card", "card", "card", "section", "actions"]);
    assert_eq!(
        posts[1].1.lines().next(),
        Some("Which city should I check the weather for?")
    );
    let modal = hitl::freeform_modal(
        Some("What is your name?"),
        &json!({"requestId": "req_f1"}),
        &EN,
    );
    assert_eq!(modal, rec["modal"]);
    assert_eq!(
        Value::Array(hitl::answered_freeform_blocks("Ada", "U2", &EN)),
        rec["answeredFreeform"]
    );
}

#[test]
fn a_reply_is_inline_until_it_is_too_long_or_refused() {
    use crate::render::{first_delivery, is_refused_payload, undelivered_notice, Delivery};
    assert_eq!(first_delivery(&"x".repeat(12_000)), Delivery::Inline);
    assert_eq!(first_delivery(&"x".repeat(12_001)), Delivery::Snippet);
    assert!(is_refused_payload("msg_too_long") && is_refused_payload("invalid_blocks"));
    assert!(!is_refused_payload("channel_not_found") && !is_refused_payload("ratelimited"));
    assert_eq!(
        undelivered_notice(&EN, "e-1"),
        "I finished, but couldn't deliver my answer in Slack (error id `e-1`). Please ask me to resend it."
    );
}

fn approval() -> InputRequest {
    serde_json::from_value(json!({
        "action": {"callId": "c1", "input": {"city": "Paris"}, "kind": "tool-call", "toolName": "get_weather"},
        "allowFreeform": false, "display": "confirmation", "kind": "tool-approval",
        "prompt": "Approve Get weather?", "requestId": "approval_c1",
        "options": [{"id": "approve", "label": "Approve"}, {"id": "cancel", "label": "Cancel"}],
    }))
    .unwrap()
}

#[test]
fn an_approval_is_its_tool_input_then_its_card_and_is_settled_by_the_agents_events() {
    let posts = hitl::request_posts(&[approval(), question()], &EN);
    let kinds: Vec<_> = posts
        .iter()
        .map(|p| (p.details, p.approvals.clone()))
        .collect();
    assert_eq!(
        kinds,
        [
            (true, vec!["approval_c1".to_string()]),
            (false, vec!["approval_c1".to_string()])
        ]
    );
    let mut r = Renderer::new("C1", "1.1", &EN);
    r.responder = Some("U2".into());
    let at = json!({"sequence": 3, "turnId": "t1", "stepIndex": 0});
    let settled = |outcome: &str| {
        let mut data = json!({"outcome": outcome, "requestId": "approval_c1", "responderPrincipalId": "slack:T1:U1"});
        data.as_object_mut()
            .unwrap()
            .extend(at.as_object().unwrap().clone());
        serde_json::from_value::<Event>(json!({"type": "approval.settled", "data": data})).unwrap()
    };
    let settle = |r: &mut Renderer, e: &Event| match r.on_event(e).remove(0) {
        Action::Settle {
            request_id,
            label,
            user,
        } => (request_id, label, user),
        other => panic!("{other:?}"),
    };
    let u2 = Some("U2".to_string());
    assert_eq!(
        settle(&mut r, &settled("approved")),
        ("approval_c1".into(), "Approve".into(), u2.clone())
    );
    assert_eq!(
        settle(&mut r, &settled("cancelled")),
        ("approval_c1".into(), "Cancel".into(), u2)
    );
    // input.resolved settles what is still open, without naming anyone: denied is Cancel, an
    // ignored or withdrawn request no longer needed.
    for (outcome, label) in [
        ("approved", "Approve"),
        ("denied", "Cancel"),
        ("ignored", "No longer needed"),
    ] {
        let mut data = json!({"resolutions": [{"kind": "tool-approval", "outcome": outcome, "requestId": "approval_c1"}]});
        data.as_object_mut()
            .unwrap()
            .extend(at.as_object().unwrap().clone());
        let e = serde_json::from_value::<Event>(json!({"type": "input.resolved", "data": data}))
            .unwrap();
        assert_eq!(
            settle(&mut r, &e),
            ("approval_c1".into(), label.into(), None)
        );
    }
    // The answered card names the responder only when known.
    let blocks = hitl::request_blocks(&approval(), &EN);
    let card = vec![blocks[0].clone()];
    let named = hitl::answered_blocks(&card, "approval_c1", "Approve", "U2", &EN);
    assert_eq!(
        named[0]["subtext"]["text"],
        ":white_check_mark: *Approve* by <@U2>"
    );
    let anonymous = hitl::answered_blocks(&card, "approval_c1", "No longer needed", "", &EN);
    assert_eq!(
        anonymous[0]["subtext"]["text"],
        ":white_check_mark: *No longer needed*"
    );
}

#[test]
fn an_open_card_is_taken_once_and_its_tool_input_outlives_it_while_shared() {
    let db = db();
    let card = |id: &str| store::Card {
        channel: "C1".into(),
        thread_ts: "1.1".into(),
        request_id: id.into(),
        message_ts: "2.2".into(),
        blocks: vec![json!({"type": "card", "id": id})],
        details_ts: Some("1.9".into()),
        requester: "slack:T1:U1".into(),
    };
    store::record_card(&db, &card("a"), 1).unwrap();
    store::record_card(&db, &card("b"), 1).unwrap();
    let requester = store::card_requester(&db, "C1", "1.1", "a").unwrap();
    assert_eq!(requester.as_deref(), Some("slack:T1:U1"));
    assert_eq!(
        store::take_card(&db, "C1", "1.1", "a").unwrap(),
        Some(card("a"))
    );
    assert_eq!(store::take_card(&db, "C1", "1.1", "a").unwrap(), None);
    assert_eq!(store::card_requester(&db, "C1", "1.1", "a").unwrap(), None);
    assert!(store::details_in_use(&db, "C1", "1.9").unwrap());
    store::update_card_blocks(&db, "C1", "2.2", &[json!("settled")]).unwrap();
    let b = store::take_card(&db, "C1", "1.1", "b").unwrap().unwrap();
    assert_eq!(b.blocks, [json!("settled")]);
    assert!(!store::details_in_use(&db, "C1", "1.9").unwrap());
    let t = Thread {
        team: "T1".into(),
        channel: "C1".into(),
        thread_ts: "1.1".into(),
    };
    assert_eq!(store::thread_status(&db, &t).unwrap(), None);
    store::set_thread_status(&db, &t, Some("Get weather")).unwrap();
    assert_eq!(
        store::thread_status(&db, &t).unwrap().as_deref(),
        Some("Get weather")
    );
    store::set_thread_status(&db, &t, None).unwrap();
    assert_eq!(store::thread_status(&db, &t).unwrap(), None);
    let mut none = card("c");
    none.details_ts = None;
    store::record_card(&db, &none, 1).unwrap();
    assert_eq!(
        store::take_card(&db, "C1", "1.1", "c")
            .unwrap()
            .unwrap()
            .details_ts,
        None
    );
}
