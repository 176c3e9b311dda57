//! What the fault and resume suites share: a host on a state directory of the test's own (so
//! it can be SIGKILLed and restarted on the same data), the weather turn they cut, the
//! transcript two runs of it are compared by, and the database check.

use eve_chat_tests::eve::{self, comparable, without_retried_steps};
use eve_chat_tests::{Host, HostOptions};
use serde_json::Value;

/// The turn the suites cut: reasoning, a `get_weather` call, then the answer (44 events).
pub const MESSAGE: &str = "what is the weather in Paris?";

/// A host on `state` with the demo model paced at 15 ms per token (a weather turn streams for
/// about a second, so a kill lands in the middle of it).
pub fn host_on(state: &std::path::Path) -> Option<Host> {
    Host::start(
        HostOptions {
            state_dir: Some(state.to_path_buf()),
            ..HostOptions::default()
        }
        .var("demo_pacing_ms", "15")
        .var("chat_send_per_hour", "1000")
        // Each kill leaves the killed stream's slot taken until its lease expires
        // (`eve_spin::streams`), and these tests kill many times in a row.
        .var("max_streams_per_user", "1000"),
    )
}

/// A finished weather turn of a fresh session: the transcript an uninterrupted run writes.
pub fn reference_run(h: &Host) -> (String, Vec<Value>) {
    let sid = eve::start(h, MESSAGE);
    let events = eve::read_until_settled(h, &sid, 0);
    assert_eq!(
        eve::types(&events)[events.len() - 2..],
        ["turn.completed", "session.waiting"],
        "{:?}",
        eve::types(&events)
    );
    (sid, events)
}

/// What must be equal between a turn that was cut and resumed and an uninterrupted run of the
/// same conversation: the log without the attempts of steps that ran again, without `meta`
/// and the session id ([`eve::comparable`]), and without token counts — a step whose model
/// call had finished before the kill but whose `step.completed` had not been written ends
/// without the usage of that call (it was never persisted), and the totals follow.
pub fn transcript(events: &[Value], sid: &str) -> Vec<Value> {
    comparable(&without_retried_steps(events), sid)
        .into_iter()
        .map(|mut e| {
            if let Some(d) = e["data"].as_object_mut() {
                d.remove("usage");
            }
            e
        })
        .collect()
}

/// Asserts `PRAGMA integrity_check` of the host's database under `state`.
pub fn integrity_ok(state: &std::path::Path) {
    let conn = rusqlite::Connection::open(state.join("sqlite_db.db")).unwrap();
    let result: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(result, "ok");
}
