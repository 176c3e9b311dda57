//! Turns whose runner died (the host was SIGKILLed mid-turn) and the requests that find them.
//! Once the dead runner's lease (2 s) has expired, the next reader or request takes the turn
//! over and continues it from its log, as eve resumes a durable step: the interrupted step runs
//! again under the same `stepIndex`, what was streamed stays, and the turn comes to the
//! transcript of an uninterrupted run. A message sent meanwhile waits and starts the next
//! turn; a cancel ends the turn cancelled instead, and it is never resumed; two readers racing
//! to take it over get the same events, written once; a resumed turn runs to its end when the
//! reader that resumed it goes away. `tests/faults.rs` cuts the turn at many depths;
//! `measure_resume_after_sigkill_at_every_depth` (ignored; run it with `--ignored
//! --nocapture`) prints the figures of `docs/reliability.md`.

use crate::sigkill;

use eve_chat_tests::eve::{
    self, assert_control_accepted, assert_unique_ids, of_type, read_until, read_until_settled,
    snapshot, types, Stream,
};
use eve_chat_tests::Host;
use serde_json::Value;
use sigkill::{host_on, integrity_ok, reference_run, transcript, MESSAGE};
use std::time::{Duration, Instant};

/// The log line of a taker that continues a dead runner's turn.
const RESUMING: &str = "resuming its open turn";

/// How many times the host logged that it resumed `sid`.
fn resumptions(h: &Host, sid: &str) -> usize {
    h.log()
        .lines()
        .filter(|l| l.contains(sid) && l.contains(RESUMING))
        .count()
}

/// A host (on its own state directory), the transcript of an uninterrupted run, and a turn
/// whose host was SIGKILLed after a reader acknowledged `cut` events.
struct Killed {
    _dir: tempfile::TempDir,
    host: Host,
    /// The uninterrupted run's [`transcript`].
    reference: Vec<Value>,
    sid: String,
    acknowledged: Vec<Value>,
    killed_at: Instant,
}

fn killed_turn(message: &str, cut: impl Fn(&Value) -> bool) -> Option<Killed> {
    let dir = tempfile::tempdir().unwrap();
    let mut host = host_on(&dir.path().join(".spin"))?;
    let (reference_sid, reference) = reference_run(&host);
    let sid = eve::start(&host, message);
    let acknowledged = read_until(&host, &sid, 0, cut);
    let killed_at = Instant::now();
    host.kill_and_restart();
    Some(Killed {
        _dir: dir,
        host,
        reference: transcript(&reference, &reference_sid),
        sid,
        acknowledged,
        killed_at,
    })
}

/// A weather turn killed after `n` acknowledged events.
fn killed_weather_turn(n: usize) -> Option<Killed> {
    let count = std::cell::Cell::new(0);
    killed_turn(MESSAGE, |_| {
        count.set(count.get() + 1);
        count.get() >= n
    })
}

#[test]
fn a_message_to_a_turn_whose_runner_died_waits_and_starts_the_next_turn_after_the_resumed_one() {
    let Some(k) = killed_weather_turn(9) else {
        return;
    };
    let (h, sid) = (&k.host, k.sid.as_str());
    // Within the dead runner's lease the message is accepted (not refused as busy); it waits
    // in the inbox behind the open turn.
    let delivery = eve::send_message(h, sid, "hello after the crash");
    let all = read_until(h, sid, 0, |e| {
        e["type"] == "session.waiting" && eve::has_delivery(e, &delivery)
    });
    assert!(k.killed_at.elapsed() < Duration::from_secs(30));
    assert_eq!(&all[..k.acknowledged.len()], &k.acknowledged[..]);
    assert_unique_ids(&all);
    // The open turn was resumed to the transcript of an uninterrupted run, then the message
    // started turn 1.
    let end0 = eve::position(&all, "session.waiting");
    assert_eq!(transcript(&all[..=end0], sid), k.reference);
    let turn1 = &all[end0 + 1..];
    assert_eq!(types(turn1)[..2], ["turn.started", "message.received"]);
    assert_eq!(turn1[0]["data"]["turnId"], "turn_1");
    assert_eq!(turn1[1]["data"]["message"], "hello after the crash");
    assert!(eve::completed_text(turn1).contains("hello after the crash"));
    assert_eq!(snapshot(h, sid, 0), all);
    let log = h.wait_for_log(Duration::from_secs(10), |_| resumptions(h, sid) > 0);
    assert_eq!(resumptions(h, sid), 1, "{log}");
}

#[test]
fn a_cancel_of_a_turn_whose_runner_died_ends_it_cancelled_and_it_is_never_resumed() {
    // Killed while the `wait` tool runs: the call is open.
    let Some(k) = killed_turn("wait 30", |e| e["type"] == "actions.requested") else {
        return;
    };
    let (h, sid) = (&k.host, k.sid.as_str());
    let call = k.acknowledged.last().unwrap()["data"]["actions"][0].clone();
    assert_eq!(call["toolName"], "wait");
    assert_control_accepted(&eve::control(h, sid, "cancel"), sid);
    let all = read_until_settled(h, sid, 0);
    assert!(k.killed_at.elapsed() < Duration::from_secs(30));
    assert_eq!(&all[..k.acknowledged.len()], &k.acknowledged[..]);
    assert_unique_ids(&all);
    let after = &all[k.acknowledged.len()..];
    // As eve: the open call is answered as cancelled in the history, not on the stream.
    assert_eq!(types(after), ["turn.cancelled", "session.waiting"]);
    assert!(call["callId"].is_string());
    assert_eq!(resumptions(h, sid), 0, "a cancelled turn is not resumed");
    // The session goes on.
    let n = all.len() as u64;
    eve::send_message(h, sid, "hello");
    let turn = read_until_settled(h, sid, n);
    assert_eq!(turn[0]["data"]["turnId"], "turn_1");
    assert_eq!(of_type(&turn, "turn.completed").len(), 1);
}

#[test]
fn two_readers_racing_to_take_over_a_dead_runners_turn_get_the_same_events_written_once() {
    let Some(k) = killed_weather_turn(16) else {
        return;
    };
    let (h, sid) = (&k.host, k.sid.as_str());
    let got: Vec<Vec<Value>> = std::thread::scope(|s| {
        let readers: Vec<_> = (0..2)
            .map(|_| s.spawn(|| read_until_settled(h, sid, 0)))
            .collect();
        readers.into_iter().map(|r| r.join().unwrap()).collect()
    });
    for all in &got {
        assert_eq!(&all[..k.acknowledged.len()], &k.acknowledged[..]);
        assert_unique_ids(all);
        assert_eq!(transcript(all, sid), k.reference);
    }
    assert_eq!(got[0], got[1], "the same events, with the same ids");
    assert_eq!(snapshot(h, sid, 0), got[0]);
    let log = h.wait_for_log(Duration::from_secs(10), |_| resumptions(h, sid) > 0);
    assert_eq!(resumptions(h, sid), 1, "exactly one taker: {log}");
}

#[test]
fn a_resumed_turn_runs_to_its_end_after_the_reader_that_resumed_it_goes_away() {
    let Some(k) = killed_weather_turn(2) else {
        return;
    };
    let (h, sid) = (&k.host, k.sid.as_str());
    // What the dead runner had written (a bounded read takes nothing over).
    let persisted = snapshot(h, sid, 0).len();
    assert!(
        persisted < 10,
        "the kill landed early in the turn ({persisted} events)"
    );
    // This reader takes the turn over once the lease expires: it gets the persisted events,
    // then the first one the resumed runner writes, and leaves.
    let mut reader = Stream::open(h, sid, 0);
    let seen = reader.take(persisted + 1);
    drop(reader);
    assert!(seen.iter().all(|e| !eve::is_settling(e)));
    // The resumed runner finishes on its own and releases the lease.
    std::thread::sleep(Duration::from_secs(3));
    let all = snapshot(h, sid, 0);
    assert_eq!(all.last().unwrap()["type"], "session.waiting");
    assert_eq!(&all[..seen.len()], &seen[..]);
    assert_unique_ids(&all);
    assert_eq!(transcript(&all, sid), k.reference);
    // Nothing holds the session: the resumed runner released its lease (one left behind
    // would hold the next message back until it expired). Read in the database rather than
    // timed, so a slow machine cannot fail it; the deadline below only catches a hang.
    let lease = || -> (Option<String>, i64) {
        let path = h.state_dir().expect("own host").join("sqlite_db.db");
        rusqlite::Connection::open(path)
            .expect("the host's database")
            .query_row(
                "SELECT lease_owner, lease_expires FROM eve_session WHERE id = ?1",
                [sid],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("the session row")
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while lease() != (None, 0) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(lease(), (None, 0), "the resumed runner released its lease");
    let sent = Instant::now();
    eve::send_message(h, sid, "hello");
    let first = Stream::open(h, sid, all.len() as u64).take(1);
    assert_eq!(first[0]["type"], "turn.started");
    assert!(
        sent.elapsed() < Duration::from_secs(30),
        "{:?}",
        sent.elapsed()
    );
}

/// Kills the host at every depth of a weather turn (or every `EVE_FAULTS_STEP`-th), and prints
/// per kill: restart time, time from the kill to the first event written by the resumed turn,
/// and time to the settled turn.
#[test]
#[ignore = "a measurement (about 4 s per kill): cargo test -p eve-chat-tests --test suites -- --ignored --nocapture resume::"]
fn measure_resume_after_sigkill_at_every_depth() {
    let step: usize = std::env::var("EVE_FAULTS_STEP")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join(".spin");
    let Some(mut host) = host_on(&state) else {
        return;
    };
    let (reference_sid, reference) = reference_run(&host);
    let expected = transcript(&reference, &reference_sid);
    println!(
        "reference: {} events\ncut | persisted | restart ms | kill→first new event ms | kill→settled ms",
        reference.len()
    );
    let (mut firsts, mut totals) = (Vec::new(), Vec::new());
    for cut in (1..reference.len() - 1).step_by(step) {
        let sid = eve::start(&host, MESSAGE);
        let acknowledged = Stream::open(&host, &sid, 0).take(cut);
        let killed = Instant::now();
        host.kill_and_restart();
        let restart = killed.elapsed();
        // What the dead runner had written (a bounded read takes nothing over).
        let persisted = snapshot(&host, &sid, 0).len();
        let mut reader = Stream::open(&host, &sid, 0);
        let mut arrivals = Vec::new();
        let mut all = Vec::new();
        while let Some(e) = reader.next_event() {
            arrivals.push(killed.elapsed());
            let done = eve::is_settling(&e);
            all.push(e);
            if done {
                break;
            }
        }
        assert!(all.last().is_some_and(eve::is_settling), "cut {cut}");
        assert_eq!(&all[..cut], &acknowledged[..]);
        assert_unique_ids(&all);
        assert_eq!(transcript(&all, &sid), expected, "cut {cut}");
        let Some(first) = arrivals.get(persisted).copied() else {
            // The dead runner had already written the settling event: nothing to resume.
            println!("{cut:>3} | settled before the kill landed");
            continue;
        };
        let total = *arrivals.last().unwrap();
        println!(
            "{cut:>3} | {persisted:>3} | {:>5} | {:>6} | {:>6}",
            restart.as_millis(),
            first.as_millis(),
            total.as_millis()
        );
        firsts.push(first.as_millis());
        totals.push(total.as_millis());
    }
    host.stop();
    firsts.sort();
    totals.sort();
    println!(
        "{} kills; kill→first new event ms: min {} median {} max {}; kill→settled ms: min {} median {} max {}",
        firsts.len(),
        firsts[0],
        firsts[firsts.len() / 2],
        firsts[firsts.len() - 1],
        totals[0],
        totals[totals.len() / 2],
        totals[totals.len() - 1]
    );
    integrity_ok(&state);
}
