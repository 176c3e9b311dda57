//! Tool approvals end to end (docs/approvals.md): the real agent in the local host, the
//! official MCP reference server (`@modelcontextprotocol/server-everything`, whose tools carry
//! `readOnlyHint` annotations) and the built-in tools under the `tool_approvals` variable. The
//! demo model's `call tool NAME {json}` and "weather in CITY" make the calls.
//!
//! A server that does not start fails the test: nothing here skips itself.

use eve_chat_tests::eve::{
    self, assert_accepted, error_of, first, of_type, read_until_settled, send, send_message, types,
};
use eve_chat_tests::mcp_servers::{connection, node_server, NodeServer};
use eve_chat_tests::{Host, HostOptions};
use serde_json::{json, Value};

fn everything() -> NodeServer {
    node_server(
        "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        &["streamableHttp"],
        &[],
        "listening on port",
    )
}

fn host(vars: &[(&str, &str)]) -> Host {
    let mut o = HostOptions::default()
        .var("demo_pacing_ms", "1")
        .var("chat_send_per_hour", "1000");
    for (k, v) in vars {
        o = o.var(k, v);
    }
    Host::start(o).expect("a local host")
}

/// The approval the settled `events` wait on.
fn waiting_approval(events: &[Value]) -> Value {
    let t = types(events);
    assert_eq!(
        t[t.len() - 2..],
        ["input.requested", "turn.waiting"],
        "{t:?}"
    );
    let request = events[events.len() - 2]["data"]["requests"][0].clone();
    assert_eq!(request["kind"], "tool-approval", "{request}");
    request
}

/// Answers approval `request` of `sid`; the events up to the next settling one.
fn answer(
    h: &Host,
    sid: &str,
    request: &Value,
    option: &str,
    note: Option<&str>,
    from: usize,
) -> Vec<Value> {
    let mut response = json!({ "requestId": request["requestId"], "optionId": option });
    if let Some(n) = note {
        response["text"] = n.into();
    }
    let r = send(h, sid, &json!({ "inputResponses": [response] }));
    assert_accepted(&r, Some(sid));
    read_until_settled(h, sid, from as u64)
}

#[test]
fn an_mcp_tool_not_marked_read_only_waits_for_approval_and_a_read_only_one_runs() {
    let server = everything();
    let connections = json!([connection("everything", server.port)]).to_string();
    let h = host(&[("mcp_connections", &connections)]);

    // echo is `readOnlyHint: true`: it runs at once.
    let sid = eve::start(&h, r#"call tool everything__echo {"message":"hi"}"#);
    let events = read_until_settled(&h, &sid, 0);
    assert!(
        !types(&events).contains(&"input.requested"),
        "{:?}",
        types(&events)
    );
    assert_eq!(
        first(&events, "action.result")["data"]["status"],
        "completed"
    );

    // toggle-simulated-logging is not: it waits, and runs once approved.
    let tool = "everything__toggle-simulated-logging";
    let sid = eve::start(&h, &format!("call tool {tool} {{}}"));
    let events = read_until_settled(&h, &sid, 0);
    let request = waiting_approval(&events);
    assert_eq!(request["action"]["toolName"], tool);
    assert_eq!(request["prompt"], "Approve Toggle simulated logging?");
    assert_eq!(request["display"], "confirmation");
    // As eve: the step completed before it asked; the approved call runs first in the next.
    let t = types(&events);
    assert_eq!(t[t.len() - 3], "step.completed", "{t:?}");
    let rest = answer(&h, &sid, &request, "approve", None, events.len());
    assert_eq!(
        types(&rest)[..4],
        [
            "approval.settled",
            "input.resolved",
            "step.started",
            "action.result"
        ]
    );
    assert_eq!(rest[0]["data"]["outcome"], "approved");
    assert_eq!(rest[0]["data"]["responderPrincipalId"], "local-dev");
    assert_eq!(rest[1]["data"]["resolutions"][0]["outcome"], "approved");
    assert_eq!(rest[3]["data"]["status"], "completed", "{}", rest[3]);
    assert_eq!(rest[3]["data"]["stepIndex"], 1);
    assert_eq!(rest.last().unwrap()["type"], "session.waiting");
}

#[test]
fn a_denied_call_is_rejected_with_the_note_and_an_answer_after_it_is_refused() {
    let server = everything();
    let connections = json!([connection("everything", server.port)]).to_string();
    let h = host(&[("mcp_connections", &connections)]);
    let sid = eve::start(&h, "call tool everything__toggle-simulated-logging {}");
    let events = read_until_settled(&h, &sid, 0);
    let request = waiting_approval(&events);
    let rest = answer(
        &h,
        &sid,
        &request,
        "cancel",
        Some("not today"),
        events.len(),
    );
    assert_eq!(
        types(&rest)[..3],
        ["approval.settled", "input.resolved", "action.result"]
    );
    assert_eq!(rest[0]["data"]["outcome"], "cancelled");
    assert_eq!(rest[1]["data"]["resolutions"][0]["outcome"], "denied");
    let result = &rest[2]["data"];
    assert_eq!(result["status"], "rejected");
    assert_eq!(result["error"]["code"], "TOOL_EXECUTION_DENIED");
    assert_eq!(
        result["error"]["message"],
        "Tool execution was denied. The person who denied it wrote: \"not today\""
    );
    assert_eq!(result["result"]["output"]["tool"]["result"], "not_run");
    // The turn went on to its end; the request is answered for good.
    assert_eq!(rest.last().unwrap()["type"], "session.waiting");
    let again = send(
        &h,
        &sid,
        &json!({ "inputResponses": [{ "requestId": request["requestId"], "optionId": "approve" }] }),
    );
    assert_eq!(again.status, 409);
    assert_eq!(error_of(&again).0.as_deref(), Some("input_not_pending"));
}

#[test]
fn the_variable_sets_a_built_in_tools_policy_and_once_asks_once_per_session() {
    let h = host(&[("tool_approvals", r#"{"get_weather":"once"}"#)]);
    let sid = eve::start(&h, "weather in Paris");
    let events = read_until_settled(&h, &sid, 0);
    let request = waiting_approval(&events);
    assert_eq!(request["prompt"], "Approve Get weather?");
    let rest = answer(&h, &sid, &request, "approve", None, events.len());
    assert_eq!(rest.last().unwrap()["type"], "session.waiting");
    let seen = events.len() + rest.len();
    send_message(&h, &sid, "weather in Tokyo");
    let next = read_until_settled(&h, &sid, seen as u64);
    assert!(
        !types(&next).contains(&"input.requested"),
        "{:?}",
        types(&next)
    );
    assert_eq!(first(&next, "action.result")["data"]["status"], "completed");
    // Another session asks again.
    let other = eve::start(&h, "weather in Lima");
    waiting_approval(&read_until_settled(&h, &other, 0));
}

#[test]
fn a_message_while_an_approval_waits_goes_past_it_and_a_cancel_withdraws_it() {
    let h = host(&[("tool_approvals", r#"{"get_weather":"always"}"#)]);
    let sid = eve::start(&h, "weather in Paris");
    let events = read_until_settled(&h, &sid, 0);
    waiting_approval(&events);
    send_message(&h, &sid, "forget it, just say hello");
    let rest = read_until_settled(&h, &sid, events.len() as u64);
    assert_eq!(
        types(&rest)[..3],
        ["input.resolved", "action.result", "message.received"]
    );
    assert_eq!(rest[0]["data"]["resolutions"][0]["outcome"], "ignored");
    assert_eq!(rest[1]["data"]["status"], "rejected");
    assert_eq!(rest.last().unwrap()["type"], "session.waiting");
    // Same turn throughout.
    assert_eq!(of_type(&rest, "turn.started").len(), 0);

    let sid = eve::start(&h, "weather in Tokyo");
    let events = read_until_settled(&h, &sid, 0);
    let request = waiting_approval(&events);
    let r = eve::control(&h, &sid, "cancel");
    assert!(r.status == 202 || r.status == 200, "{}", r.status);
    let rest = read_until_settled(&h, &sid, events.len() as u64);
    assert_eq!(
        types(&rest),
        ["input.resolved", "turn.cancelled", "session.waiting"]
    );
    assert_eq!(rest[0]["data"]["resolutions"][0]["outcome"], "cancelled");
    let late = send(
        &h,
        &sid,
        &json!({ "inputResponses": [{ "requestId": request["requestId"], "optionId": "approve" }] }),
    );
    assert_eq!(late.status, 409, "a later answer approves nothing");
}

#[test]
fn a_steps_calls_are_asked_together_and_a_reset_cancels_the_wait() {
    let h = host(&[("tool_approvals", r#"{"get_weather":"always"}"#)]);
    // The demo model calls get_weather once per city, in one step.
    let sid = eve::start(&h, "weather in Paris and Tokyo");
    let events = read_until_settled(&h, &sid, 0);
    waiting_approval(&events);
    let requests = events[events.len() - 2]["data"]["requests"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(requests.len(), 2, "{requests:?}");
    let first = answer(&h, &sid, &requests[0], "approve", None, events.len());
    assert_eq!(types(&first), ["approval.settled", "turn.waiting"]);
    let seen = events.len() + first.len();
    let rest = answer(&h, &sid, &requests[1], "cancel", None, seen);
    assert_eq!(
        types(&rest)[..5],
        [
            "approval.settled",
            "input.resolved",
            "action.result",
            "step.started",
            "action.result"
        ]
    );
    assert_eq!(rest[1]["data"]["resolutions"].as_array().unwrap().len(), 2);
    assert_eq!(rest[2]["data"]["status"], "rejected");
    assert_eq!(rest[4]["data"]["status"], "completed");
    assert_eq!(rest.last().unwrap()["type"], "session.waiting");

    // A reset while an approval waits cancels the turn first, as eve does.
    let sid = eve::start(&h, "weather in Lima");
    let events = read_until_settled(&h, &sid, 0);
    waiting_approval(&events);
    let r = eve::control(&h, &sid, "reset");
    assert_eq!(r.status, 200, "{}", r.text());
    let all = eve::snapshot(&h, &sid, 0);
    let t = types(&all);
    assert_eq!(
        t[t.len() - 4..],
        [
            "input.resolved",
            "turn.cancelled",
            "session.waiting",
            "session.completed"
        ]
    );
    assert_eq!(
        all[all.len() - 4]["data"]["resolutions"][0]["outcome"],
        "cancelled"
    );
}
