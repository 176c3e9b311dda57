//! Chat-store figures through the local host (a command that prints numbers, not a test of
//! timings). Run:
//!
//! ```sh
//! cargo test -p eve-chat-tests --release --test suites -- --ignored --nocapture chat_store_bench::
//! ```
//!
//! Results are recorded in `docs/performance.md`.

use eve_chat_tests::{Host, HostOptions};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn report(name: &str, samples: &mut [Duration]) {
    let (p50, p95) = (percentile(samples, 0.5), percentile(samples, 0.95));
    println!(
        "{name:<44} p50 {:>10}  p95 {:>10}  (n = {})",
        ms(p50),
        ms(p95),
        samples.len()
    );
}

fn time<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let start = Instant::now();
    let out = f();
    (start.elapsed(), out)
}

fn delta(i: u64) -> Value {
    json!({ "type": "assistant.text.delta", "index": i, "delta": format!("token {i} of a streamed answer, ") })
}

#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn chat_store_figures() {
    let Some(h) = Host::start(HostOptions::default().var("chat_create_per_hour", "1000000")) else {
        return;
    };
    println!("\nchat store through the local host ({})", h.base);

    // 10,000 chats for one principal (4 clients in parallel).
    let (took, _) = time(|| {
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..2500 {
                        assert_eq!(h.json("POST", "/api/chats", &json!({})).status, 201);
                    }
                });
            }
        })
    });
    println!(
        "{:<44} {:.0} chats/s (4 clients)",
        "create 10,000 chats",
        10_000.0 / took.as_secs_f64()
    );

    // Walk all 500 pages once to find page 500's cursor.
    let mut cursor: Option<String> = None;
    let mut page500: Option<String> = None;
    let mut walk = Vec::new();
    for page in 1..=500 {
        if page == 500 {
            page500 = cursor.clone();
        }
        let path = match &cursor {
            Some(c) => format!("/api/chats?cursor={}", c.replace(':', "%3A")),
            None => "/api/chats".to_string(),
        };
        let (d, r) = time(|| h.get(&path));
        walk.push(d);
        assert_eq!(r.status, 200);
        let body = r.json();
        assert_eq!(body["chats"].as_array().unwrap().len(), 20);
        cursor = body["nextCursor"].as_str().map(str::to_string);
    }
    assert_eq!(cursor, None, "page 500 is the last page of 10,000 chats");
    report("list: every page 1..500, one walk", &mut walk);
    let mut first: Vec<Duration> = (0..300).map(|_| time(|| h.get("/api/chats")).0).collect();
    report("list: page 1 (10,000 chats)", &mut first);
    let path500 = format!("/api/chats?cursor={}", page500.unwrap().replace(':', "%3A"));
    let mut last: Vec<Duration> = (0..300).map(|_| time(|| h.get(&path500)).0).collect();
    report("list: page 500 (10,000 chats)", &mut last);
    let mut search: Vec<Duration> = (0..50)
        .map(|_| time(|| h.get("/api/chats?q=zzz")).0)
        .collect();
    report("search: no match over 10,000 chats", &mut search);

    // Single appends, one client and four.
    let id = h.json("POST", "/api/chats", &json!({})).json()["chat"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut single = Vec::new();
    let (took, _) = time(|| {
        for i in 0..2000u64 {
            let (d, r) = time(|| h.json("PUT", &format!("/api/chats/{id}/events/{i}"), &delta(i)));
            assert_eq!(r.status, 200);
            single.push(d);
        }
    });
    println!(
        "{:<44} {:.0} appends/s",
        "single appends, 1 client",
        2000.0 / took.as_secs_f64()
    );
    report("single append latency", &mut single);
    let (took, _) = time(|| {
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let (h, id) = (&h, &id);
                s.spawn(move || {
                    for i in 0..500u64 {
                        let index = 2000 + t * 500 + i;
                        assert_eq!(
                            h.json(
                                "PUT",
                                &format!("/api/chats/{id}/events/{index}"),
                                &delta(index)
                            )
                            .status,
                            200
                        );
                    }
                });
            }
        })
    });
    println!(
        "{:<44} {:.0} appends/s",
        "single appends, 4 clients",
        2000.0 / took.as_secs_f64()
    );

    // A 1,000-event batch.
    let batch_chat = h.json("POST", "/api/chats", &json!({})).json()["chat"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let events: Vec<Value> = (0..1000u64)
        .map(|i| json!({ "eventIndex": i, "event": delta(i) }))
        .collect();
    let body = json!({ "events": events });
    let mut batch: Vec<Duration> = (0..30)
        .map(|_| {
            let (d, r) = time(|| h.json("POST", &format!("/api/chats/{batch_chat}/events"), &body));
            assert_eq!(r.status, 200);
            d
        })
        .collect();
    report("batch of 1,000 events", &mut batch);

    // A 2,000-event snapshot, and loading a 2,000-event chat.
    let snap_chat = h
        .json("POST", "/api/chats", &json!({ "pendingUserMessage": "hi" }))
        .json()["chat"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let log: Vec<Value> = (0..2000u64).map(delta).collect();
    let body = json!({ "events": log, "session": { "sessionId": "s", "streamIndex": 2000 } });
    let mut snaps: Vec<Duration> = (0..20)
        .map(|_| {
            let (d, r) = time(|| h.json("PUT", &format!("/api/chats/{snap_chat}/snapshot"), &body));
            assert_eq!(r.status, 200);
            d
        })
        .collect();
    report("snapshot of 2,000 events", &mut snaps);
    let mut loads: Vec<Duration> = (0..50)
        .map(|_| {
            let (d, r) = time(|| h.get(&format!("/api/chats/{snap_chat}")));
            assert_eq!(r.status, 200);
            d
        })
        .collect();
    report("load a chat with 2,000 events", &mut loads);
}

/// An eve `message.appended` event as a streamed answer stores it (~170 bytes).
fn appended(i: u64) -> Value {
    json!({
        "type": "message.appended",
        "data": { "messageDelta": format!("token {i} "), "sequence": i / 500, "stepIndex": 0, "turnId": format!("turn_{}", i / 500) },
        "meta": { "at": "2026-12-07T09:00:00.000Z", "id": format!("evt_{i:08}") }
    })
}

/// A chat of `n` events on `h`, written 1,000 per request.
fn long_chat(h: &Host, n: u64) -> String {
    let id = h.json("POST", "/api/chats", &json!({})).json()["chat"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    for start in (0..n).step_by(1000) {
        let events: Vec<Value> = (start..n.min(start + 1000))
            .map(|i| json!({ "eventIndex": i, "event": appended(i) }))
            .collect();
        let r = h.json(
            "POST",
            &format!("/api/chats/{id}/events"),
            &json!({ "events": events }),
        );
        assert_eq!(r.status, 200, "{}", r.text());
    }
    id
}

/// p50 / p95 of `n` GETs of `path`, and the bytes of one answer.
fn open(h: &Host, path: &str, n: usize) -> (Duration, Duration, usize) {
    let mut bytes = 0;
    let mut samples: Vec<Duration> = (0..n)
        .map(|_| {
            let (d, r) = time(|| h.get(path));
            assert_eq!(r.status, 200, "{}", r.text());
            bytes = r.body.len();
            d
        })
        .collect();
    (
        percentile(&mut samples, 0.5),
        percentile(&mut samples, 0.95),
        bytes,
    )
}

fn kib(bytes: usize) -> String {
    format!("{:.1} KiB", bytes as f64 / 1024.0)
}

/// The long-chat rows of one engine: opening (the latest window), one page further back, and
/// the whole log through the export (the one full read left) for scale.
fn long_chat_rows(engine: &str, h: &Host) {
    for n in [1_000u64, 20_000, 100_000] {
        let id = long_chat(h, n);
        let (p50, p95, bytes) = open(h, &format!("/api/chats/{id}"), 30);
        let window = h.get(&format!("/api/chats/{id}")).json();
        let older = match window["beforeCursor"].as_str() {
            Some(c) => {
                let (p50, _, _) = open(
                    h,
                    &format!("/api/chats/{id}?before={}", c.replace(':', "%3A")),
                    30,
                );
                ms(p50)
            }
            None => "—".to_string(),
        };
        let (full, _, full_bytes) = open(h, &format!("/api/chats/{id}/export?format=json"), 3);
        println!(
            "| {engine} | {n} | {} / {} | {} | {} | {} / {} |",
            ms(p50),
            ms(p95),
            kib(bytes),
            older,
            ms(full),
            kib(full_bytes)
        );
    }
}

/// Opening long chats (issue 31): run with
/// `cargo test -p eve-chat-tests --release --test suites -- --ignored --nocapture chat_store_bench::long_chat`.
#[test]
#[ignore = "benchmark: run with --ignored --nocapture"]
fn long_chat_open_figures() {
    let opts = HostOptions::default().var("chat_event_writes_per_minute", "100000");
    let Some(h) = Host::start(opts.clone()) else {
        return;
    };
    println!("\n| database | events | open p50 / p95 | open bytes | one page back p50 | whole log (export) p50 / bytes |");
    println!("|---|---|---|---|---|---|");
    long_chat_rows("SQLite", &h);
    drop(h);
    let sqld = eve_chat_tests::engines::Sqld::start();
    let dir = tempfile::tempdir().unwrap();
    let rc = eve_chat_tests::engines::runtime_config(dir.path(), Some(&sqld), None);
    let Some(h) = Host::start(HostOptions {
        runtime_config: Some(rc),
        ..opts
    }) else {
        return;
    };
    long_chat_rows("sqld", &h);
}
