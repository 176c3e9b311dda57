//! Tool approvals in a turn (docs/approvals.md): asked, approved, denied with a note, granted
//! once per session, steered past by a message, withdrawn by a cancel — and what the model
//! reads after each.

use eve_api::eve::*;
use serde_json::json;

use super::approvals::{parse_policies, DENIED, IGNORED};
use super::testing::{Host, Scripted};
use super::*;
use crate::providers::model::ModelMessage;
use crate::tools::spec::ToolCall;

fn ctx(policies: &str) -> TurnContext {
    TurnContext {
        session_id: "wrun_s".into(),
        model_id: "fake/fake-model".into(),
        client_context: None,
        context_chars: usize::MAX,
        mcp: Vec::new(),
        tool_approvals: parse_policies(policies).unwrap(),
    }
}

fn get_time(id: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "get_time".into(),
        input: json!({ "timezone": "UTC" }),
    }
}

fn model(steps: Vec<Vec<ToolCall>>) -> Scripted {
    Scripted {
        responses: steps,
        requests: Vec::new(),
    }
}

fn types(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(Event::type_name).collect()
}

/// Runs the open turn of `log`; the log with the new events.
fn drive(m: &mut Scripted, ctx: &TurnContext, log: Vec<Event>) -> (TurnOutcome, Vec<Event>) {
    let mut h = Host::default();
    let out = run(&mut h, m, log.clone(), ctx);
    let mut all = log;
    all.append(&mut h.events);
    (out, all)
}

fn opened() -> Vec<Event> {
    start_events(0, true, "tool please", &[])
}

fn respond(log: &[Event], option: &str, text: Option<&str>) -> Vec<Event> {
    let q = pending_question(log).expect("a pending approval");
    let response = InputResponse {
        request_id: q.request_id,
        option_id: Some(option.into()),
        text: text.map(str::to_string),
    };
    answer_events(log, &response, "local-dev").expect("an answer to it")
}

/// The tool results the model read in its last request.
fn last_results(m: &Scripted) -> Vec<(String, bool)> {
    m.requests
        .last()
        .unwrap()
        .messages
        .iter()
        .filter_map(|x| match x {
            ModelMessage::ToolResult {
                content, is_error, ..
            } => Some((content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

#[test]
fn an_always_tool_waits_for_approval_in_eves_words_then_runs() {
    let ctx = ctx(r#"{"get_time":"always"}"#);
    let mut m = model(vec![vec![get_time("c1")]]);
    let (out, log) = drive(&mut m, &ctx, opened());
    assert_eq!(out, TurnOutcome::Waiting);
    assert_eq!(
        &types(&log)[log.len() - 4..],
        [
            "actions.requested",
            "step.completed",
            "input.requested",
            "turn.waiting"
        ]
    );
    let q = pending_question(&log).unwrap();
    assert_eq!(
        serde_json::to_value(&q).unwrap(),
        json!({
            "action": { "callId": "c1", "input": { "timezone": "UTC" }, "kind": "tool-call", "toolName": "get_time" },
            "allowFreeform": false, "display": "confirmation", "kind": "tool-approval",
            "options": [{ "id": "approve", "label": "Approve" }, { "id": "cancel", "label": "Cancel" }],
            "prompt": "Approve Get time?", "requestId": "approval_c1",
        })
    );
    let answer = respond(&log, "approve", None);
    assert_eq!(types(&answer), ["approval.settled", "input.resolved"]);
    let Event::ApprovalSettled(s) = &answer[0] else {
        panic!()
    };
    assert_eq!(
        (s.outcome.as_str(), s.responder_principal_id.as_str()),
        ("approved", "local-dev")
    );
    let (out, log) = drive(&mut m, &ctx, [log, answer].concat());
    assert_eq!(out, TurnOutcome::Completed);
    let Some(Event::ActionResult(r)) = log.iter().find(|e| matches!(e, Event::ActionResult(_)))
    else {
        panic!("{:?}", types(&log))
    };
    assert_eq!(r.status, "completed");
    assert!(
        last_results(&m)[0].0.contains("time"),
        "{:?}",
        last_results(&m)
    );
}

#[test]
fn a_denial_with_a_note_is_a_rejected_result_the_model_reads_in_eves_words() {
    let ctx = ctx(r#"{"get_time":"always"}"#);
    let mut m = model(vec![vec![get_time("c1")]]);
    let (_, log) = drive(&mut m, &ctx, opened());
    let answer = respond(&log, "cancel", Some(" not now "));
    assert_eq!(
        types(&answer),
        ["approval.settled", "input.resolved", "action.result"]
    );
    let (Event::ApprovalSettled(s), Event::InputResolved(r), Event::ActionResult(a)) =
        (&answer[0], &answer[1], &answer[2])
    else {
        panic!()
    };
    assert_eq!(s.outcome, "cancelled");
    assert_eq!(r.resolutions[0].outcome, "denied");
    assert_eq!(a.status, "rejected");
    let said = format!("{DENIED} The person who denied it wrote: \"not now\"");
    assert_eq!(a.error.as_ref().unwrap().code, "TOOL_EXECUTION_DENIED");
    assert_eq!(a.result.output["tool"]["result"], "not_run");
    let (out, _) = drive(&mut m, &ctx, [log, answer].concat());
    assert_eq!(out, TurnOutcome::Completed);
    assert_eq!(last_results(&m), vec![(said, true)]);
}

#[test]
fn a_once_tool_asks_the_first_time_in_a_session_only() {
    let ctx = ctx(r#"{"get_time":"once"}"#);
    let mut m = model(vec![vec![get_time("c1")], vec![get_time("c2")]]);
    let (out, log) = drive(&mut m, &ctx, opened());
    assert_eq!(out, TurnOutcome::Waiting);
    let answer = respond(&log, "approve", None);
    let (out, log) = drive(&mut m, &ctx, [log, answer].concat());
    assert_eq!(out, TurnOutcome::Completed, "{:?}", types(&log));
    let asked = log
        .iter()
        .filter(|e| matches!(e, Event::InputRequested(_)))
        .count();
    assert_eq!(asked, 1);
    assert_eq!(last_results(&m).len(), 2);
}

#[test]
fn a_never_tool_and_the_built_in_default_run_without_asking() {
    for policies in ["", r#"{"get_time":"never"}"#] {
        let mut m = model(vec![vec![get_time("c1")]]);
        let (out, log) = drive(&mut m, &ctx(policies), opened());
        assert_eq!(out, TurnOutcome::Completed);
        assert!(!types(&log).contains(&"input.requested"));
    }
}

#[test]
fn a_message_past_a_waiting_approval_leaves_it_unanswered_and_the_model_reads_both() {
    let ctx = ctx(r#"{"get_time":"always"}"#);
    let mut m = model(vec![vec![get_time("c1")]]);
    let (_, log) = drive(&mut m, &ctx, opened());
    let steer = steer_events(&log, "never mind, say hi", &[], "alice").unwrap();
    assert_eq!(
        types(&steer),
        ["input.resolved", "action.result", "message.received"]
    );
    let Event::InputResolved(r) = &steer[0] else {
        panic!()
    };
    assert_eq!(r.resolutions[0].outcome, "ignored");
    let (out, _) = drive(&mut m, &ctx, [log, steer].concat());
    assert_eq!(out, TurnOutcome::Completed);
    assert_eq!(last_results(&m), vec![(IGNORED.to_string(), true)]);
    // The call, its refusal, then the message: a history every provider accepts.
    let read = &m.requests.last().unwrap().messages;
    let n = read.len();
    assert!(
        matches!(&read[n - 2], ModelMessage::ToolResult { .. }),
        "{read:?}"
    );
    assert!(matches!(&read[n - 1], ModelMessage::User(t) if t == "never mind, say hi"));
}

#[test]
fn a_message_naming_an_option_answers_the_approval() {
    let ctx = ctx(r#"{"get_time":"always"}"#);
    let mut m = model(vec![vec![get_time("c1")]]);
    let (_, log) = drive(&mut m, &ctx, opened());
    for (said, outcome) in [
        ("approve", "approved"),
        ("Cancel", "cancelled"),
        ("1", "approved"),
    ] {
        let steer = steer_events(&log, said, &[], "alice").unwrap();
        let Event::ApprovalSettled(s) = &steer[0] else {
            panic!("{said}: {:?}", types(&steer))
        };
        assert_eq!(s.outcome, outcome, "{said}");
    }
}

#[test]
fn a_cancel_withdraws_the_approval_and_the_history_stays_consistent() {
    let ctx = ctx(r#"{"get_time":"always"}"#);
    let mut m = model(vec![vec![get_time("c1")]]);
    let (_, log) = drive(&mut m, &ctx, opened());
    let v = cancel_events("wrun_s", &log);
    assert_eq!(
        types(&v),
        ["input.resolved", "turn.cancelled", "session.waiting"]
    );
    let Event::InputResolved(r) = &v[0] else {
        panic!()
    };
    assert_eq!(r.resolutions[0].outcome, "cancelled");
    let log = [log, v].concat();
    assert_eq!(
        pending_question(&log),
        None,
        "a later answer approves nothing"
    );
    let history = crate::session::transcript::messages(&log);
    assert!(history.iter().any(|x| matches!(x,
        ModelMessage::ToolResult { tool_call_id, is_error: true, .. } if tool_call_id == "c1")));
}

#[test]
fn an_answer_that_chooses_no_option_is_not_an_answer() {
    let ctx = ctx(r#"{"get_time":"always"}"#);
    let mut m = model(vec![vec![get_time("c1")]]);
    let (_, log) = drive(&mut m, &ctx, opened());
    let q = pending_question(&log).unwrap();
    for option in [None, Some("maybe")] {
        let response = InputResponse {
            request_id: q.request_id.clone(),
            option_id: option.map(str::to_string),
            text: Some("x".into()),
        };
        assert_eq!(answer_events(&log, &response, "alice"), None);
    }
}

/// What the reference eve 0.80.1 did (recorded by hand: tests/eve-reference/recordings/approvals/,
/// its README says what was sent): our events for the same requests, normalised — ids of
/// requests and calls, the model's text, tool outputs that differ, trace and usage left out —
/// are the reference's, event for event.
mod approvals_side_by_side {
    use super::*;
    use serde_json::Value;

    const DIR: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/eve-reference/recordings/approvals/"
    );

    /// The recorded stream `file`, normalised, from its first `turn.started`.
    fn reference(file: &str) -> Vec<Value> {
        let text = std::fs::read_to_string(format!("{DIR}{file}")).unwrap();
        let events: Vec<Value> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        normalised(&events)
    }

    fn ours(log: &[Event]) -> Vec<Value> {
        let events: Vec<Value> = log
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect();
        normalised(&events)
    }

    /// Type, coordinates, and what approvals decide; streamed text, tool outputs of calls
    /// that ran, usage, trace and session ids left out; request and call ids made stable.
    fn normalised(events: &[Value]) -> Vec<Value> {
        let skip = [
            "session.started",
            "message.appended",
            "action.input.appended",
            "reasoning.appended",
        ];
        events
            .iter()
            .filter(|e| !skip.contains(&e["type"].as_str().unwrap_or("")))
            .map(|e| {
                let t = e["type"].as_str().unwrap();
                let d = &e["data"];
                let mut out =
                    json!({ "type": t, "sequence": d["sequence"], "stepIndex": d["stepIndex"] });
                match t {
                    "input.requested" => out["requests"] = d["requests"].clone(),
                    "approval.settled" | "input.resolved" => {
                        out["decided"] = d.clone();
                        out["decided"].as_object_mut().unwrap().remove("sequence");
                    }
                    "action.result" if d["status"] == "rejected" => out["result"] = d.clone(),
                    "action.result" => out["status"] = d["status"].clone(),
                    "message.received" => out["message"] = d["message"].clone(),
                    _ => {}
                }
                stable_ids(&mut out);
                out
            })
            .collect()
    }

    fn stable_ids(v: &mut Value) {
        match v {
            Value::String(s) if s.starts_with("aitxt-") || s.starts_with("approval_") => {
                *s = "<request>".into()
            }
            Value::String(s) if s.starts_with("call_") || s == "c1" || s == "c2" => {
                *s = "<call>".into()
            }
            Value::Array(a) => a.iter_mut().for_each(stable_ids),
            Value::Object(o) => o.values_mut().for_each(stable_ids),
            _ => {}
        }
    }

    fn weather(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "get_weather".into(),
            input: json!({ "city": "Paris" }),
        }
    }

    /// "approval always please" on get_weather (`always`), waiting for approval.
    fn parked() -> (Scripted, TurnContext, Vec<Event>) {
        let ctx = ctx(r#"{"get_weather":"always","recall":"once"}"#);
        let mut m = model(vec![vec![weather("c1")]]);
        let (out, log) = drive(
            &mut m,
            &ctx,
            start_events(0, true, "approval always please", &[]),
        );
        assert_eq!(out, TurnOutcome::Waiting);
        (m, ctx, log)
    }

    #[test]
    fn approve_is_the_references() {
        let (mut m, ctx, log) = parked();
        let answer = respond(&log, "approve", None);
        let (_, log) = drive(&mut m, &ctx, [log, answer].concat());
        assert_eq!(ours(&log), reference("approve.ndjson"));
    }

    #[test]
    fn deny_with_a_note_is_the_references() {
        let (mut m, ctx, log) = parked();
        let answer = respond(&log, "cancel", Some(" not today "));
        let (_, log) = drive(&mut m, &ctx, [log, answer].concat());
        assert_eq!(ours(&log), reference("deny.ndjson"));
        // What the model read after it: the reference's tool message, word for word.
        let recorded = std::fs::read_to_string(format!("{DIR}model-requests.jsonl")).unwrap();
        let said = format!("{DENIED} The person who denied it wrote: \"not today\"");
        assert!(recorded.contains(&serde_json::to_string(&said).unwrap()));
        assert_eq!(last_results(&m), vec![(said, true)]);
    }

    #[test]
    fn a_message_past_it_and_a_message_naming_an_option_are_the_references() {
        for (said, file) in [
            ("forget it, hello", "steer.ndjson"),
            ("approve", "txt.ndjson"),
        ] {
            let (mut m, ctx, log) = parked();
            let steer = steer_events(&log, said, &[], "local-dev").unwrap();
            let (_, log) = drive(&mut m, &ctx, [log, steer].concat());
            assert_eq!(ours(&log), reference(file), "{said}");
        }
    }

    #[test]
    fn a_cancel_is_the_references() {
        let (_, _, log) = parked();
        let v = cancel_events("wrun_s", &log);
        let ended = [log, v].concat();
        // The recording goes on with eve's late answer taken as a new message (ours: 409).
        let recorded = reference("canc.ndjson");
        assert_eq!(ours(&ended), recorded[..ours(&ended).len()]);
    }

    /// "approval both please": get_weather and recall in one step, both gated.
    fn parked_batch() -> (Scripted, TurnContext, Vec<Event>) {
        let ctx = ctx(r#"{"get_weather":"always","recall":"once"}"#);
        let recall = ToolCall {
            id: "c2".into(),
            name: "recall".into(),
            input: json!({}),
        };
        let mut m = model(vec![vec![weather("c1"), recall]]);
        let (out, log) = drive(
            &mut m,
            &ctx,
            start_events(0, true, "approval both please", &[]),
        );
        assert_eq!(out, TurnOutcome::Waiting);
        (m, ctx, log)
    }

    /// Answers request `index` of the batch; the log after it.
    fn answer_batch(log: Vec<Event>, index: usize, option: &str, text: Option<&str>) -> Vec<Event> {
        let Some(Event::InputRequested(r)) = log
            .iter()
            .rev()
            .find(|e| matches!(e, Event::InputRequested(_)))
        else {
            panic!()
        };
        let response = InputResponse {
            request_id: r.requests[index].request_id.clone(),
            option_id: Some(option.into()),
            text: text.map(str::to_string),
        };
        let v = answer_events(&log, &response, "local-dev").expect("an open request");
        [log, v].concat()
    }

    /// eve streams one `actions.requested` per call of a step; ours is one for the step.
    fn one_actions_requested(mut events: Vec<Value>) -> Vec<Value> {
        if let Some(i) = events.iter().position(|e| e["type"] == "actions.requested") {
            while events
                .get(i + 1)
                .is_some_and(|e| e["type"] == "actions.requested")
            {
                events.remove(i + 1);
            }
        }
        events
    }

    #[test]
    fn a_batch_is_asked_at_once_and_resolved_when_its_last_request_is_settled() {
        let (mut m, ctx, log) = parked_batch();
        let log = answer_batch(log, 0, "approve", None);
        assert_eq!(
            types(&log[log.len() - 2..]),
            ["approval.settled", "turn.waiting"]
        );
        assert_eq!(pending_question(&log).unwrap().action.tool_name, "recall");
        let log = answer_batch(log, 1, "cancel", None);
        let (out, log) = drive(&mut m, &ctx, log);
        assert_eq!(out, TurnOutcome::Completed);
        assert_eq!(
            one_actions_requested(ours(&log)),
            one_actions_requested(reference("batch-approve-deny.ndjson"))
        );
    }

    #[test]
    fn a_message_past_a_batch_ignores_every_request_as_the_reference() {
        let (mut m, ctx, log) = parked_batch();
        let steer = steer_events(&log, "never mind", &[], "local-dev").unwrap();
        let (_, log) = drive(&mut m, &ctx, [log, steer].concat());
        assert_eq!(
            one_actions_requested(ours(&log)),
            one_actions_requested(reference("batch-steer.ndjson"))
        );
    }

    #[test]
    fn a_note_denied_early_in_a_batch_reaches_the_model_and_input_resolved() {
        let (mut m, ctx, log) = parked_batch();
        let log = answer_batch(log, 0, "cancel", Some("not today"));
        // Deliberate difference: the refusal is written when it is settled (eve writes it after
        // the batch's input.resolved), so that its note is kept until then.
        assert_eq!(
            types(&log[log.len() - 3..]),
            ["approval.settled", "action.result", "turn.waiting"]
        );
        let log = answer_batch(log, 1, "approve", None);
        let Some(Event::InputResolved(r)) = log
            .iter()
            .rev()
            .find(|e| matches!(e, Event::InputResolved(_)))
        else {
            panic!()
        };
        let recorded = reference("batch-deny-approve.ndjson");
        let want = recorded
            .iter()
            .find(|e| e["type"] == "input.resolved")
            .unwrap();
        let mut got = json!({ "resolutions": r.resolutions });
        stable_ids(&mut got);
        assert_eq!(got["resolutions"], want["decided"]["resolutions"]);
        let (out, _) = drive(&mut m, &ctx, log);
        assert_eq!(out, TurnOutcome::Completed);
        let said = format!("{DENIED} The person who denied it wrote: \"not today\"");
        assert_eq!(last_results(&m)[0], (said, true));
    }

    #[test]
    fn once_is_the_references() {
        let ctx = ctx(r#"{"get_weather":"always","recall":"once"}"#);
        let recall = |id: &str| ToolCall {
            id: id.into(),
            name: "recall".into(),
            input: json!({}),
        };
        let mut m = model(vec![vec![recall("c1")], vec![], vec![recall("c2")]]);
        let (_, log) = drive(
            &mut m,
            &ctx,
            start_events(0, true, "approval once please", &[]),
        );
        let answer = respond(&log, "approve", None);
        let (_, log) = drive(&mut m, &ctx, [log, answer].concat());
        let next = start_events(1, false, "approval once again", &[]);
        let (out, log) = drive(&mut m, &ctx, [log, next].concat());
        assert_eq!(out, TurnOutcome::Completed);
        assert_eq!(ours(&log), reference("once.ndjson"));
    }
}
