//! Bursts that race on the same counters: the fixed-window limits stay exact under
//! concurrency, whether key-value is Spin's SQLite file or a Redis server (the multi-node
//! configuration of docs/deployment.md).

use eve_chat_tests::{Host, HostOptions};
use serde_json::json;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Fires `n` concurrent same-origin `POST path` requests (body `{ field: "burst <i>" }`) and
/// returns (201s, 429s), checking that every 429 carries a sane Retry-After and nothing else
/// answers.
fn burst(host: &Arc<Host>, n: usize, path: &'static str, field: &'static str) -> (usize, usize) {
    let barrier = Arc::new(std::sync::Barrier::new(n));
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let (h, b) = (host.clone(), barrier.clone());
            std::thread::spawn(move || {
                b.wait();
                let r = h.json("POST", path, &json!({ field: format!("burst {i}") }));
                if r.status == 429 {
                    let retry: u64 = r
                        .header("retry-after")
                        .expect("429 without Retry-After")
                        .parse()
                        .unwrap();
                    assert!((1..=3600).contains(&retry), "Retry-After {retry}");
                }
                r.status
            })
        })
        .collect();
    let statuses: Vec<u16> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let accepted = statuses.iter().filter(|s| **s == 201).count();
    let limited = statuses.iter().filter(|s| **s == 429).count();
    assert_eq!(accepted + limited, n, "unexpected statuses: {statuses:?}");
    (accepted, limited)
}

fn burst_of_creates(host: &Arc<Host>, n: usize) -> (usize, usize) {
    burst(host, n, "/api/chats", "pendingUserMessage")
}

fn chats_listed(host: &Host) -> usize {
    host.get("/api/chats?limit=100").json()["chats"]
        .as_array()
        .unwrap()
        .len()
}

#[test]
fn a_burst_of_100_creates_lets_exactly_25_through_with_sqlite_key_value() {
    let Some(host) = Host::start(HostOptions::default()) else {
        return;
    };
    let host = Arc::new(host);
    assert_eq!(burst_of_creates(&host, 100), (25, 75));
    assert_eq!(
        chats_listed(&host),
        25,
        "a refused create must not write a chat"
    );
}

struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    fn start() -> Redis {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .spawn()
            .expect(
                "redis-server is needed for this test: scripts/test installs it (scripts/prepare), or run `apt-get install -y redis-server`",
            );
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Redis { child, port }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_burst_of_100_creates_lets_exactly_25_through_with_redis_key_value() {
    if eve_chat_tests::external_base_url().is_some() {
        eprintln!("skipped: needs its own host configured with a Redis store");
        return;
    }
    let redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let rc = dir.path().join("runtime-config.toml");
    std::fs::write(
        &rc,
        format!(
            "[key_value_store.default]\ntype = \"redis\"\nurl = \"redis://127.0.0.1:{}\"\n",
            redis.port
        ),
    )
    .unwrap();
    let Some(host) = Host::start(HostOptions {
        runtime_config: Some(rc),
        ..HostOptions::default()
    }) else {
        return;
    };
    let host = Arc::new(host);
    assert_eq!(burst_of_creates(&host, 100), (25, 75));
    assert_eq!(chats_listed(&host), 25);
    // The counter really lives in Redis, as a Redis integer.
    let out = Command::new("redis-cli")
        .args([
            "-p",
            &redis.port.to_string(),
            "--scan",
            "--pattern",
            "rate:chat:create:*",
        ])
        .output()
        .expect("redis-cli comes with redis-server");
    let keys = String::from_utf8_lossy(&out.stdout);
    // `rate:chat:create:<principal>:<window id>` (plus the limiter's `:last` bookkeeping key).
    let windows: Vec<&str> = keys
        .lines()
        .filter(|k| {
            k.rsplit(':')
                .next()
                .is_some_and(|w| w.parse::<u64>().is_ok())
        })
        .collect();
    assert_eq!(
        windows.len(),
        1,
        "expected one window key in Redis, got: {keys}"
    );
    let value = Command::new("redis-cli")
        .args(["-p", &redis.port.to_string(), "GET", windows[0]])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&value.stdout).trim(),
        "100",
        "every attempt is counted once"
    );
}

#[test]
fn a_burst_of_100_sends_lets_exactly_25_through() {
    let Some(host) = Host::start(HostOptions::default().var("demo_pacing_ms", "0")) else {
        return;
    };
    let host = Arc::new(host);
    assert_eq!(burst(&host, 100, "/eve/v1/session", "message"), (25, 75));
}
