//! The turn, driven natively over the demo model and a recording host.

use eve_api::eve::*;

use super::testing::{Host, Scripted};
use super::*;
use crate::providers::demo::DemoModel;
use crate::session::transcript;

fn demo() -> DemoModel<fn(u64)> {
    DemoModel {
        pacing_ms: 0,
        sleep: |_| {},
    }
}

fn ctx() -> TurnContext {
    TurnContext {
        session_id: "wrun_s".into(),
        model_id: "demo/eve-demo".into(),
        client_context: None,
        context_chars: usize::MAX,
        mcp: Vec::new(),
        tool_approvals: Default::default(),
    }
}

fn opened(text: &str) -> Vec<Event> {
    start_events(0, true, text, &[MessagePart::Text { text: text.into() }])
}

fn types(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(Event::type_name).collect()
}

/// Runs the turn of `log` on `h`; the log with the new events.
fn drive(h: &mut Host, log: Vec<Event>) -> (TurnOutcome, Vec<Event>) {
    let out = run(h, &mut demo(), log.clone(), &ctx());
    let mut all = log;
    all.append(&mut h.events);
    (out, all)
}

#[test]
fn a_turn_that_ended_without_its_session_event_is_settled() {
    let (_, log) = drive(&mut Host::default(), opened("hi"));
    assert_eq!(unsettled_end("wrun_s", &log), None, "settled already");
    let ended = &log[..log.len() - 1];
    assert_eq!(
        unsettled_end("wrun_s", ended).map(|e| e.type_name()),
        Some("session.waiting")
    );
    let (_, failed) = drive(&mut Host::default(), opened("please fail"));
    let Some(Event::SessionFailed(want)) = failed.last().cloned() else {
        panic!("{:?}", types(&failed))
    };
    assert_eq!(
        unsettled_end("wrun_s", &failed[..failed.len() - 1]),
        Some(Event::SessionFailed(want))
    );
    assert_eq!(
        unsettled_end("wrun_s", &opened("hi")),
        None,
        "a turn still open"
    );
}

#[test]
fn a_turn_opens_with_session_started_turn_started_and_message_received() {
    assert_eq!(
        types(&opened("hi")),
        vec!["session.started", "turn.started", "message.received"]
    );
    assert_eq!(
        types(&start_events(3, false, "hi", &[])),
        vec!["turn.started", "message.received"]
    );
}

#[test]
fn a_tool_turn_is_eves_step_sequence() {
    let (out, log) = drive(&mut Host::default(), opened("weather in Paris"));
    assert_eq!(out, TurnOutcome::Completed);
    let t = types(&log);
    let pos = |x: &str| t.iter().position(|y| *y == x).unwrap();
    assert!(pos("step.started") < pos("actions.requested"));
    assert!(pos("actions.requested") < pos("action.result"));
    assert!(pos("action.result") < pos("step.completed"), "{t:?}");
    assert_eq!(&t[t.len() - 2..], ["turn.completed", "session.waiting"]);
    let steps: Vec<u64> = log
        .iter()
        .filter_map(|e| match e {
            Event::StepStarted(s) => Some(s.at.step_index),
            _ => None,
        })
        .collect();
    assert_eq!(steps, vec![0, 1]);
    let Some(Event::StepCompleted(first)) =
        log.iter().find(|e| matches!(e, Event::StepCompleted(_)))
    else {
        panic!()
    };
    assert_eq!(first.finish_reason, "tool-calls");
    let text: String = log
        .iter()
        .filter_map(|e| match e {
            Event::MessageAppended(m) => Some(m.message_delta.as_str()),
            _ => None,
        })
        .collect();
    let completed = log.iter().rev().find_map(|e| match e {
        Event::MessageCompleted(m) => Some(m.message.clone()),
        _ => None,
    });
    assert_eq!(
        completed.as_deref(),
        Some(text.as_str()),
        "completed is the deltas joined"
    );
    let Some(Event::SessionWaiting(w)) = log.last() else {
        panic!()
    };
    assert_eq!(w.continuation_token, "wrun_s");
    assert!(w.usage.unwrap().input_tokens > 0);
}

#[test]
fn a_cancel_before_the_model_call_ends_the_turn_cancelled() {
    let mut h = Host {
        stop_at_check: Some(1),
        ..Default::default()
    };
    let (out, log) = drive(&mut h, opened("hello"));
    assert_eq!(out, TurnOutcome::Cancelled);
    assert_eq!(&types(&log)[3..], ["turn.cancelled", "session.waiting"]);
}

#[test]
fn a_cancel_while_streaming_stops_the_step_without_completing_it() {
    let mut h = Host {
        stop_when: Some(|e| {
            e.iter()
                .filter(|e| matches!(e, Event::MessageAppended(_)))
                .count()
                >= 3
        }),
        ..Default::default()
    };
    let (out, log) = drive(&mut h, opened("count to 100"));
    assert_eq!(out, TurnOutcome::Cancelled);
    let t = types(&log);
    assert!(
        !t.contains(&"message.completed") && !t.contains(&"step.completed"),
        "{t:?}"
    );
    assert_eq!(&t[t.len() - 2..], ["turn.cancelled", "session.waiting"]);
}

#[test]
fn a_cancel_while_a_tool_runs_answers_the_call_as_cancelled_in_the_history() {
    let mut h = Host {
        stop_when: Some(|e| e.iter().any(|e| matches!(e, Event::ActionsRequested(_)))),
        ..Default::default()
    };
    let (out, log) = drive(&mut h, opened("wait 5"));
    assert_eq!(out, TurnOutcome::Cancelled);
    assert!(
        !log.iter().any(|e| matches!(e, Event::ActionResult(_))),
        "the stopped call is not answered on the stream, as eve"
    );
    // The model's history stays consistent: the call and a cancelled result both appear.
    let m = transcript::messages(&log);
    let answered = m.iter().any(|m| {
        matches!(m, crate::providers::model::ModelMessage::ToolResult { content, is_error: true, .. }
            if content.contains(CANCELLED_BY_USER))
    });
    assert!(answered, "{m:?}");
}

#[test]
fn a_provider_failure_is_eves_terminal_cascade() {
    let (out, log) = drive(&mut Host::default(), opened("please fail"));
    assert!(matches!(out, TurnOutcome::Failed(_)));
    let t = types(&log);
    assert_eq!(
        &t[t.len() - 3..],
        ["step.failed", "turn.failed", "session.failed"]
    );
    let Some(Event::TurnFailed(f)) = log.iter().find(|e| matches!(e, Event::TurnFailed(_))) else {
        panic!()
    };
    assert_eq!(
        (f.code.as_str(), f.terminal),
        (MODEL_CALL_FAILED, Some(true))
    );
    assert!(transcript::is_terminal(&log));
    // The provider's own text stays in the log; the stream says only that it failed.
    assert_eq!(f.message, "The model provider returned an error.");
    let streamed = serde_json::to_string(&log).unwrap();
    assert!(!streamed.contains("simulated failure"), "{streamed}");
}

#[test]
fn a_question_parks_the_turn_and_its_answer_continues_it() {
    let (out, log) = drive(&mut Host::default(), opened("ask me something"));
    assert_eq!(out, TurnOutcome::Waiting);
    assert_eq!(
        &types(&log)[log.len() - 2..],
        ["input.requested", "turn.waiting"]
    );
    let q = pending_question(&log).expect("a pending question");
    assert_eq!(q.kind, "question");
    let response = InputResponse {
        request_id: q.request_id.clone(),
        option_id: q.options.first().map(|o| o.id.clone()),
        text: None,
    };
    let mut log = log;
    let answer = answer_events(&log, &response, "p").unwrap();
    assert_eq!(types(&answer), ["input.resolved", "action.result"]);
    log.extend(answer);
    let (out, log) = drive(&mut Host::default(), log);
    assert_eq!(out, TurnOutcome::Completed);
    assert_eq!(
        &types(&log)[log.len() - 2..],
        ["turn.completed", "session.waiting"]
    );
    // One turn throughout: every event carries turn_0.
    assert!(log
        .iter()
        .all(|e| !matches!(e, Event::TurnStarted(t) if t.sequence != 0)));
    let wrong = InputResponse {
        request_id: "req_other".into(),
        option_id: None,
        text: Some("x".into()),
    };
    assert_eq!(answer_events(&log, &wrong, "p"), None);
}

#[test]
fn a_parked_question_is_withdrawn_by_a_cancel() {
    let (_, log) = drive(&mut Host::default(), opened("ask me something"));
    let v = cancel_events("wrun_s", &log);
    assert_eq!(
        types(&v),
        ["input.resolved", "turn.cancelled", "session.waiting"]
    );
    let Event::InputResolved(r) = &v[0] else {
        panic!()
    };
    assert_eq!(r.resolutions[0].outcome, "cancelled");
}

#[test]
fn a_turn_whose_runner_died_mid_step_runs_that_step_again() {
    // The runner died after streaming part of step 0 of a plain answer.
    let mut h = Host {
        fence_after: Some(8),
        ..Default::default()
    };
    let (out, log) = drive(&mut h, opened("count to 30"));
    assert_eq!(out, TurnOutcome::Fenced);
    let (out, all) = drive(&mut Host::default(), log.clone());
    assert_eq!(out, TurnOutcome::Completed);
    let restarted: Vec<u64> = all[log.len()..]
        .iter()
        .filter_map(|e| match e {
            Event::StepStarted(s) => Some(s.at.step_index),
            _ => None,
        })
        .collect();
    assert_eq!(
        restarted,
        vec![0],
        "the interrupted step runs again under its index"
    );
    let completed: Vec<&str> = all
        .iter()
        .filter_map(|e| match e {
            Event::MessageCompleted(m) => Some(m.message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(completed.len(), 1);
    assert!(completed[0].starts_with('1'), "{completed:?}");
}

#[test]
fn a_resumed_turn_does_not_run_a_tool_whose_result_is_persisted() {
    // Died right after the first tool result of "weather in Paris and Tokyo".
    let stop_after_result = |e: &[Event]| e.iter().any(|e| matches!(e, Event::ActionResult(_)));
    let mut h = Host::default();
    let log = opened("weather in Paris and Tokyo");
    let _ = run(&mut h, &mut demo(), log.clone(), &ctx());
    let cut = h
        .events
        .iter()
        .position(|e| matches!(e, Event::ActionResult(_)))
        .unwrap()
        + 1;
    let mut partial = log;
    partial.extend(h.events[..cut].iter().cloned());
    assert!(stop_after_result(&partial));
    let mut h2 = Host::default();
    let (out, all) = drive(&mut h2, partial.clone());
    assert_eq!(out, TurnOutcome::Completed);
    let results = all
        .iter()
        .filter(|e| matches!(e, Event::ActionResult(_)))
        .count();
    assert_eq!(results, 2, "one persisted, one run now — not three");
}

#[test]
fn a_turn_whose_runner_died_after_its_answering_step_completed_only_ends() {
    // Died between the last `step.completed` (the model answered, no tool) and
    // `turn.completed`: resuming must not ask the model again.
    let log = opened("what is the weather in Paris?");
    let (_, whole) = drive(&mut Host::default(), log.clone());
    let cut = whole
        .iter()
        .rposition(|e| matches!(e, Event::StepCompleted(_)))
        .unwrap()
        + 1;
    let (out, resumed) = drive(&mut Host::default(), whole[..cut].to_vec());
    assert_eq!(out, TurnOutcome::Completed);
    assert_eq!(types(&resumed), types(&whole));
}

#[test]
fn a_fenced_runner_writes_nothing_more() {
    let mut h = Host {
        fence_after: Some(2),
        ..Default::default()
    };
    let (out, log) = drive(&mut h, opened("hello"));
    assert_eq!(out, TurnOutcome::Fenced);
    assert_eq!(log.len(), 3 + 2);
}

/// The recording host with a project's files on real SQLite (the runner's glue, natively).
struct ProjectHost {
    inner: Host,
    db: crate::session::store::testing::Lite,
}

impl crate::tools::builtin::ToolHost for ProjectHost {
    fn memory(&mut self) -> Result<String, String> {
        Ok(String::new())
    }
    fn replace_memory(&mut self, _: &str, _: &str) -> Result<bool, String> {
        Ok(true)
    }
    fn pause(&mut self, _: u64) -> bool {
        true
    }
    fn now_ms(&mut self) -> i64 {
        1
    }
}

impl ProjectHost {
    fn files<T>(
        &self,
        f: impl FnOnce(&eve_projects::tools::FileScope<'_, crate::session::store::testing::Lite>) -> T,
    ) -> T {
        let n = std::cell::Cell::new(0);
        let new_id = move || {
            n.set(n.get() + 1);
            format!("file_{}_{}", self_count(), n.get())
        };
        f(&eve_projects::tools::FileScope {
            db: &self.db,
            principal: "alice",
            scope: "project:prj_1",
            now: 2,
            storage_max: 1 << 30,
            file_max: 1 << 20,
            new_id: &new_id,
        })
    }
}

fn self_count() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

impl TurnHost for ProjectHost {
    fn emit(&mut self, event: &Event) -> Result<(), Fenced> {
        self.inner.emit(event)
    }
    fn stop_requested(&mut self) -> bool {
        false
    }
    fn store_output_aside(&mut self, call_id: &str, output: &str) -> Option<String> {
        self.files(|fs| eve_projects::tools::keep_output(fs, call_id, output))
            .ok()
    }
    fn project_instructions(&mut self) -> Option<String> {
        Some("Always answer in French.".into())
    }
    fn file_tool(&mut self, name: &str, input: &serde_json::Value) -> (serde_json::Value, bool) {
        self.files(|fs| eve_projects::tools::run(fs, name, input))
    }
    fn connect_url(&self, id: &str) -> String {
        self.inner.connect_url(id)
    }
    fn mcp_http(&mut self) -> &mut dyn crate::connections::mcp::McpHttp {
        &mut self.inner
    }
    fn connection_token(&mut self, _: &str) -> Option<String> {
        None
    }
}

fn call(id: &str, name: &str, input: serde_json::Value) -> crate::tools::spec::ToolCall {
    crate::tools::spec::ToolCall {
        id: id.into(),
        name: name.into(),
        input,
    }
}

#[test]
fn a_project_chat_gets_its_instructions_and_the_file_tools_with_the_write_guard_and_the_results_cap(
) {
    let mut h = project_with_a_large_upload();
    let mut model = file_tool_script();
    let out = run(&mut h, &mut model, opened("clean it"), &ctx());
    assert_eq!(out, TurnOutcome::Completed);
    let first = &model.requests[0];
    assert!(first
        .system
        .contains("Project instructions (from the project's owner):\nAlways answer in French."));
    for tool in ["read_file", "write_file", "glob", "grep"] {
        assert!(first.tools.iter().any(|t| t.name == tool), "{tool}");
    }
    let second = &model.requests[1];
    let results = tool_results(second);
    assert_eq!(results.len(), 7);
    assert!(
        results[0].contains("cannot be overwritten"),
        "{}",
        results[0]
    );
    assert!(results[1].contains("\"existed\":false"), "{}", results[1]);
    // grep answers within its own bound (issue 32: at most MAX_GREP_CHARS), so its answer
    // is handed over as it is, not kept aside as a file.
    assert!(
        results[5].starts_with("{\"content\":\"/workspace/data.csv:1:"),
        "{}",
        &results[5][..200]
    );
    assert!(
        !results[5].contains("tool-output-"),
        "{}",
        &results[5][..200]
    );
    let total: usize = results.iter().map(|r| r.chars().count()).sum();
    assert!(
        total <= transcript::MAX_TOOL_RESULTS_CHARS + 2 * transcript::TOOL_RESULTS_CUT.len(),
        "{total}"
    );
    assert!(
        results[6].contains("[cut: this response's tool results exceed"),
        "{}",
        results[6]
    );
    assert_eq!(
        eve_projects::files::read_by_name(&h.db, "alice", "project:prj_1", "data.csv")
            .unwrap()
            .unwrap()
            .source,
        eve_api::projects::FileSource::UserUpload
    );
}

/// A project of alice's with a 1.8 MB CSV she uploaded (`data.csv`).
fn project_with_a_large_upload() -> ProjectHost {
    use crate::session::store::testing::Lite;
    let db = Lite::memory();
    eve_store::migrations::migrate(&db, 0).unwrap();
    eve_projects::projects::create(&db, "alice", "prj_1", "A", "", 1).unwrap();
    let row = format!("b,2,{}\n", "z".repeat(40));
    let csv = "name,qty\n a ,1\n".to_string() + &row.repeat(40_000);
    let new = eve_projects::files::NewFile {
        principal: "alice",
        scope: "project:prj_1",
        id: "file_up",
        name: "data.csv",
        media_type: "text/csv",
        data: csv.into_bytes(),
        now: 1,
        default_max: 1 << 30,
    };
    eve_projects::files::upload(&db, "/u", new).unwrap();
    ProjectHost {
        inner: Host::default(),
        db,
    }
}

/// One response of file-tool calls: two writes (one onto the upload), reads and a grep whose
/// results together exceed what one response may hand the model.
fn file_tool_script() -> Scripted {
    use serde_json::json;
    Scripted {
        responses: vec![vec![
            call(
                "c1",
                "write_file",
                json!({"filePath": "/workspace/data.csv", "content": "x"}),
            ),
            call(
                "c2",
                "write_file",
                json!({"filePath": "/workspace/clean.csv", "content": "name,qty\na,1\n"}),
            ),
            // Three reads of 50,000 characters and a grep bounded at 50,000: more than the
            // 200,000 characters one response's results may hand the model.
            call("c3", "read_file", json!({"filePath": "data.csv"})),
            call(
                "c4",
                "read_file",
                json!({"filePath": "data.csv", "offset": 10000}),
            ),
            call(
                "c5",
                "read_file",
                json!({"filePath": "data.csv", "offset": 20000}),
            ),
            call(
                "c6",
                "grep",
                json!({"pattern": "b,2", "limit": 1000, "context": 3}),
            ),
            call(
                "c7",
                "read_file",
                json!({"filePath": "data.csv", "offset": 30000}),
            ),
        ]],
        requests: Vec::new(),
    }
}

/// The tool results a model request carries, in order.
fn tool_results(request: &crate::providers::model::ModelRequest) -> Vec<&str> {
    request
        .messages
        .iter()
        .filter_map(|m| match m {
            crate::providers::model::ModelMessage::ToolResult { content, .. } => {
                Some(content.as_str())
            }
            _ => None,
        })
        .collect()
}

/// What the reference eve 0.80.1 did with one skill in its `agent/skills/` (recorded by
/// hand: tests/eve-reference/recordings/skills/, the fake model of tests/eve-client).
mod skills_side_by_side {
    use super::*;
    use crate::providers::model::ModelMessage;
    use crate::tools::skills;
    use serde_json::{json, Value};

    const DIR: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/eve-reference/recordings/skills/"
    );

    fn recorded(file: &str) -> String {
        std::fs::read_to_string(format!("{DIR}{file}")).unwrap()
    }

    /// The reference's skill, read by our SKILL.md reader (named by its folder, as eve does).
    fn the_skill() -> eve_skills::store::Offered {
        let md = eve_skills::skill_md::parse(&recorded("SKILL.md")).unwrap();
        eve_skills::store::Offered {
            name: "release-notes".into(),
            description: md.description,
            deferred: md.deferred,
            body: md.body,
            license: md.license,
        }
    }

    /// The reference's events of `type_name`, `data` without eve's trace context.
    fn reference_events(type_name: &str) -> Vec<Value> {
        recorded("stream.ndjson")
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|e| e["type"] == type_name)
            .map(|e| e["data"].clone())
            .collect()
    }

    fn reference_requests() -> Vec<Value> {
        recorded("model-requests.jsonl")
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["body"].clone())
            .collect()
    }

    fn data(e: &Event) -> Value {
        serde_json::to_value(e).unwrap()["data"].clone()
    }

    #[test]
    fn a_skill_load_is_the_references_load_skill_action_and_result() {
        let mut h = Host {
            skills: vec![the_skill()],
            ..Host::default()
        };
        let input = json!({ "name": "release-notes" });
        // The fake model's call id, as the reference got it.
        let id = reference_events("actions.requested")[0]["actions"][0]["callId"].clone();
        let id = id.as_str().unwrap();
        let mut model = Scripted {
            responses: vec![vec![call(id, "eve__skill", input)]],
            requests: Vec::new(),
        };
        let text = "please use the skill release-notes";
        let out = run(&mut h, &mut model, opened(text), &ctx());
        assert_eq!(out, TurnOutcome::Completed);
        let ours = |name: &str| -> Vec<Value> {
            h.events
                .iter()
                .filter(|e| e.type_name() == name)
                .map(data)
                .collect()
        };
        for name in ["actions.requested", "action.result"] {
            assert_eq!(ours(name), reference_events(name), "{name}");
        }
        assert!(ours("action.input.appended").is_empty());
        assert_eq!(
            types(&h.events)
                .iter()
                .filter(|t| t.starts_with("action"))
                .count(),
            2
        );
        // What the model reads back: eve__skill called, the markdown as the tool's content.
        let reference = reference_requests();
        let second = &reference[1]["messages"];
        let Some(ModelMessage::ToolResult {
            content, tool_name, ..
        }) = model.requests[1].messages.last()
        else {
            panic!("{:?}", model.requests[1].messages)
        };
        assert_eq!(tool_name, "eve__skill");
        assert_eq!(Value::from(content.as_str()), second[3]["content"]);
        assert_eq!(second[2]["tool_calls"][0]["function"]["name"], "eve__skill");
    }

    #[test]
    fn the_instructions_and_the_tool_are_the_references() {
        let reference = &reference_requests()[0];
        let spec = skills::spec();
        let theirs = reference["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == "eve__skill")
            .unwrap();
        assert_eq!(theirs["function"]["description"], spec.description.as_str());
        assert_eq!(theirs["function"]["parameters"], spec.input_schema);
        let system = reference["messages"][0]["content"].as_str().unwrap();
        let section = skills::prompt_section(&[the_skill()]).unwrap();
        let ref_lines: Vec<&str> = system.lines().collect();
        for line in section.lines() {
            let listed = line.starts_with("- release-notes: ");
            let found = ref_lines.iter().any(|r| {
                *r == line
                    || (listed && r.starts_with(line) && r[line.len()..].starts_with(" (path: "))
            });
            assert!(found, "not in the reference's instructions: {line:?}");
        }
        // Every model call of a turn with a skill offers eve__skill with that section.
        let mut h = Host {
            skills: vec![the_skill()],
            ..Host::default()
        };
        let mut model = Scripted {
            responses: Vec::new(),
            requests: Vec::new(),
        };
        run(&mut h, &mut model, opened("hi"), &ctx());
        assert!(model.requests[0].system.ends_with(&section));
        assert!(model.requests[0].tools.contains(&spec));
        // Without skills: neither.
        let mut model = Scripted {
            responses: Vec::new(),
            requests: Vec::new(),
        };
        run(&mut Host::default(), &mut model, opened("hi"), &ctx());
        assert!(!model.requests[0].system.contains("Available skills"));
        assert!(!model.requests[0]
            .tools
            .iter()
            .any(|t| t.name == "eve__skill"));
    }

    #[test]
    fn info_advertises_the_skill_as_the_reference_does() {
        let reference: Value = serde_json::from_str(&recorded("info-skills.json")).unwrap();
        let mut doc = json!({ "skills": { "dynamic": [], "static": [] } });
        crate::service::info::list_skills(&mut doc, &[the_skill()]);
        assert_eq!(doc["skills"], reference["skills"]);
        assert!(!reference["toolNames"]
            .as_array()
            .unwrap()
            .contains(&json!("eve__skill")));
    }

    #[test]
    fn a_deferred_skill_is_loadable_but_not_listed_and_an_unknown_one_fails() {
        let mut deferred = the_skill();
        deferred.deferred = true;
        let section = skills::prompt_section(std::slice::from_ref(&deferred)).unwrap();
        assert!(!section.contains("release-notes"));
        let c = call("c1", "eve__skill", json!({ "name": "release-notes" }));
        assert_eq!(
            skills::load(&c, &[deferred.clone()]).unwrap(),
            deferred.body
        );
        let c = call("c2", "eve__skill", json!({ "name": "nope" }));
        assert_eq!(
            skills::load(&c, &[deferred]).unwrap_err(),
            "No skill named \"nope\"."
        );
        // eve streams no input deltas of a skill load.
        let mut out = super::super::model_call::StepOutput::default();
        let at = TurnRef::new(0).step(0);
        let started = crate::providers::model::ModelEvent::ToolCallStarted {
            id: "c1".into(),
            name: "eve__skill".into(),
        };
        assert!(super::super::model_call::on_model_event(&mut out, &at, started).is_empty());
        let delta = crate::providers::model::ModelEvent::ToolInputDelta {
            id: "c1".into(),
            delta: "{\"name\"".into(),
        };
        assert!(super::super::model_call::on_model_event(&mut out, &at, delta).is_empty());
    }
}
