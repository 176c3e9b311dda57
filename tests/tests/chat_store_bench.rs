//! Chat-store figures through the local host (a command that prints numbers, not a test of
//! timings). Run:
//!
//! ```sh
//! cargo test -p eve-chat-tests --release --test chat_store_bench -- --ignored --nocapture
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
