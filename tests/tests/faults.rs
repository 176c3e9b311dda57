//! Faults: the host is SIGKILLed in the middle of streaming turns and of snapshot writes, many
//! times, and restarted on the same data. Every acknowledged event must still be there, each
//! resumed turn must come to the transcript of an uninterrupted run of the deterministic demo
//! model (the step the kill interrupted runs again under the same `stepIndex`), no turn may be
//! left hanging, no event may be delivered twice, and the database must pass `PRAGMA
//! integrity_check`.

use crate::sigkill;

use eve_chat_tests::eve::{self, assert_unique_ids, snapshot, Stream};
use serde_json::{json, Value};
use sigkill::{host_on, integrity_ok, reference_run, transcript, MESSAGE};
use std::time::{Duration, Instant};

#[test]
fn sigkill_mid_stream_loses_no_acknowledged_event_and_every_turn_resumes_to_the_same_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join(".spin");
    let Some(mut host) = host_on(&state) else {
        return;
    };
    let (reference_sid, reference) = reference_run(&host);
    let expected = transcript(&reference, &reference_sid);

    // Cut at different depths: in the reasoning, in the tool call's input, at the call, in
    // the answer, at its end.
    for cut in [2usize, 9, 16, 19, 22, 25, 33, 40] {
        let sid = eve::start(&host, MESSAGE);
        let acknowledged = Stream::open(&host, &sid, 0).take(cut);
        let killed = Instant::now();
        host.kill_and_restart();

        // This reader takes the turn over once the dead runner's lease has expired.
        let all = eve::read_until_settled(&host, &sid, 0);
        assert!(
            killed.elapsed() < Duration::from_secs(30),
            "turn cut at {cut} took {:?} to settle",
            killed.elapsed()
        );
        assert_eq!(
            &all[..cut],
            &acknowledged[..],
            "acknowledged events changed after the kill (cut at {cut})"
        );
        assert_unique_ids(&all);
        assert_eq!(
            transcript(&all, &sid),
            expected,
            "the resumed transcript differs from an uninterrupted run (cut at {cut}): {:?}",
            eve::types(&all)
        );
        assert_eq!(
            eve::completed_text(&all),
            eve::completed_text(&reference),
            "cut at {cut}"
        );

        // The log is what the reader got, and a reader resuming from its own cursor gets
        // exactly the missing suffix.
        assert_eq!(snapshot(&host, &sid, 0), all, "cut at {cut}");
        assert_eq!(
            snapshot(&host, &sid, cut as i64),
            &all[cut..],
            "cut at {cut}"
        );
    }
    host.stop();
    integrity_ok(&state);
}

/// A chat-store event in eve's envelope (what the web app keeps of a stream).
fn stored_event(i: usize, delta: &str) -> Value {
    json!({
        "type": "message.appended",
        "data": { "messageDelta": delta, "sequence": 0, "stepIndex": 0, "turnId": "turn_0" },
        "meta": { "at": "2026-12-01T06:14:56.322Z", "id": format!("evt_{i:026}") }
    })
}

#[test]
fn sigkill_during_snapshot_writes_keeps_the_log_consistent_and_a_retry_repairs_it() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join(".spin");
    let Some(mut host) = host_on(&state) else {
        return;
    };
    let chat = host.json("POST", "/api/chats", &json!({})).json()["chat"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let acknowledged: Vec<Value> = (0..50)
        .map(|i| json!({ "eventIndex": i, "event": stored_event(i, &format!("a{i} ")) }))
        .collect();
    assert_eq!(
        host.json(
            "POST",
            &format!("/api/chats/{chat}/events"),
            &json!({ "events": acknowledged })
        )
        .status,
        200
    );

    let snapshot: Vec<Value> = (0..2000)
        .map(|i| stored_event(i, &format!("s{i} ")))
        .collect();
    let body =
        json!({ "events": snapshot, "session": { "sessionId": "s-1", "streamIndex": 2000 } });
    for delay_ms in [1u64, 3, 6, 10, 20] {
        // The real write, racing the kill.
        let (base, b, id) = (host.base.clone(), body.clone(), chat.clone());
        let racing = std::thread::spawn(move || {
            ureq::put(&format!("{base}/api/chats/{id}/snapshot"))
                .set("content-type", "application/json")
                .set("origin", &base)
                .set("sec-fetch-site", "same-origin")
                .send_string(&b.to_string())
                .map(|r| r.status())
                .unwrap_or(0)
        });
        std::thread::sleep(Duration::from_millis(delay_ms));
        host.kill_and_restart();
        let status = racing.join().unwrap();

        // Whatever the kill interrupted, the log is one of the two consistent states or a
        // prefix-repairable mix; never lost acknowledged rows unless the snapshot replaced them.
        // One window of 5,000 events (the most one answer holds) is the whole 2,000-event log.
        let events = host.get(&format!("/api/chats/{chat}?limit=5000")).json()["events"]
            .as_array()
            .unwrap()
            .clone();
        if status == 200 {
            assert_eq!(
                events.len(),
                2000,
                "an acknowledged snapshot is not all there (kill after {delay_ms} ms)"
            );
        } else {
            assert!(
                events.len() >= 50,
                "acknowledged appends lost (kill after {delay_ms} ms): {}",
                events.len()
            );
        }
        // The client retries the same snapshot: the log is exactly the snapshot.
        let r = host.json("PUT", &format!("/api/chats/{chat}/snapshot"), &body);
        assert_eq!(r.status, 200, "{}", r.text());
        let chat_now = host.get(&format!("/api/chats/{chat}?limit=5000")).json();
        let events = chat_now["events"].as_array().unwrap();
        assert_eq!(events.len(), 2000);
        assert_eq!(events[1999], snapshot[1999]);
        assert_eq!(chat_now["session"]["streamIndex"], 2000);
    }
    host.stop();
    integrity_ok(&state);
}
