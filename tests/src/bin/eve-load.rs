//! `eve-load`: a load run of the whole app (a benchmark, not a test).
//!
//! Phase 1 drives a realistic mix at rising concurrency, each worker looping over one user's
//! visit: list the sidebar, create a chat, open it, append a batch of events, save a snapshot,
//! and run a full turn with the demo model (create an eve session with the message — 202 —
//! then read its following NDJSON stream up to the settling event, e.g. `session.waiting`).
//! Phase 2 holds many eve streams open at once. Bounded in count and time; prints
//! requests/s, p50/p99/max per route and every error.
//!
//! ```text
//! cargo run --release -p eve-chat-tests --bin eve-load -- [--levels 1,4,16,64] [--seconds 10]
//!     [--streams 200] [--pacing-ms 30] [--base http://127.0.0.1:3000]
//! ```
//! Without `--base` it starts the local host with a fresh state directory, local-dev sign-in
//! and the per-hour limits raised (a load run is not a rate-limit test).
//!
//! `--scale-out` runs the same mix (phase 1 only, at each level) on three deployments in one
//! run and prints them side by side: one node on its local SQLite file (Spin's default), one
//! node on a real libSQL server (`sqld` on loopback), and two nodes on that `sqld` plus a
//! `redis-server` with the client alternating between them request by request (a turn is
//! started on one node and read from the other). docs/performance.md records its output.
//!
//! ```text
//! cargo run --release -p eve-chat-tests --bin eve-load -- --scale-out [--levels 16] [--seconds 20]
//!     [--setups sqlite,sqld,sqld+redis]
//! ```
//! `--soak SECONDS` runs the mix on two nodes on sqld + Redis at the first of `--levels` for that
//! long, printing every 30 s the visits and errors so far, each host's memory and the TCP
//! connections to sqld (established, `TIME_WAIT`):
//!
//! ```text
//! cargo run --release -p eve-chat-tests --bin eve-load -- --soak 600 --levels 16
//! ```
//!
//! `--setups` runs only the named deployments (all three by default); `EVE_LOAD_DUMP=<dir>`
//! writes every host's and sqld's log there after each run (to diagnose a slow deployment).

use eve_chat_tests::engines::{runtime_config, Redis, Sqld};
use eve_chat_tests::{Host, HostOptions};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Default)]
struct Stats {
    latencies: BTreeMap<&'static str, Vec<Duration>>,
    errors: BTreeMap<String, usize>,
}

struct Target {
    /// The nodes, used in turn request by request (one node: always the same).
    bases: Vec<String>,
    next: AtomicUsize,
    agent: ureq::Agent,
}

impl Target {
    fn new(bases: Vec<String>) -> Target {
        Target {
            bases,
            next: AtomicUsize::new(0),
            agent: ureq::AgentBuilder::new()
                .timeout(Duration::from_secs(120))
                .max_idle_connections_per_host(512)
                .build(),
        }
    }

    /// The node for the next request (its own origin goes with it).
    fn pick(&self) -> &str {
        &self.bases[self.next.fetch_add(1, Ordering::Relaxed) % self.bases.len()]
    }

    fn call(
        &self,
        stats: &Mutex<Stats>,
        route: &'static str,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Option<Value> {
        let started = Instant::now();
        let base = self.pick();
        let mut req = self.agent.request(method, &format!("{base}{path}"));
        req = req.set("origin", base).set("sec-fetch-site", "same-origin");
        let result = match body {
            Some(b) => req
                .set("content-type", "application/json")
                .send_string(&b.to_string()),
            None => req.call(),
        };
        let elapsed = started.elapsed();
        let mut s = stats.lock().unwrap();
        match result {
            Ok(resp) => {
                s.latencies.entry(route).or_default().push(elapsed);
                drop(s);
                let text = resp.into_string().unwrap_or_default();
                Some(serde_json::from_str(&text).unwrap_or(Value::Null))
            }
            Err(ureq::Error::Status(code, resp)) => {
                let body = resp.into_string().unwrap_or_default();
                *s.errors
                    .entry(format!(
                        "{route}: {code} {}",
                        body.chars().take(120).collect::<String>()
                    ))
                    .or_default() += 1;
                None
            }
            Err(e) => {
                *s.errors.entry(format!("{route}: {e}")).or_default() += 1;
                None
            }
        }
    }

    /// Sends a message to a new session and reads its stream to the settling event; records
    /// the send and the whole turn.
    fn turn(&self, stats: &Mutex<Stats>, message: &str) -> bool {
        let started = Instant::now();
        let Some(created) = self.call(
            stats,
            "POST /eve/v1/session",
            "POST",
            "/eve/v1/session",
            Some(&json!({ "message": message })),
        ) else {
            return false;
        };
        let Some(id) = created["sessionId"].as_str() else {
            return false;
        };
        let ok = self.read_stream(stats, id, 0);
        if ok {
            stats
                .lock()
                .unwrap()
                .latencies
                .entry("turn (send → settled)")
                .or_default()
                .push(started.elapsed());
        }
        ok
    }

    fn read_stream(&self, stats: &Mutex<Stats>, session: &str, from: u64) -> bool {
        let base = self.pick();
        let url = format!("{base}/eve/v1/session/{session}/stream?startIndex={from}");
        let resp = match self.agent.get(&url).set("origin", base).call() {
            Ok(r) => r,
            Err(e) => {
                *stats
                    .lock()
                    .unwrap()
                    .errors
                    .entry(format!("stream open: {e}"))
                    .or_default() += 1;
                return false;
            }
        };
        for line in BufReader::new(resp.into_reader()).lines() {
            let Ok(line) = line else {
                *stats
                    .lock()
                    .unwrap()
                    .errors
                    .entry("stream: read error before settling".into())
                    .or_default() += 1;
                return false;
            };
            let Ok(ev) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            // A following stream of eve stays open after the turn settles; the reader stops
            // there and drops it, as a client done with the turn does.
            let t = ev["type"].as_str().unwrap_or("");
            if eve_api::eve::is_settling_type(t) {
                if t == "session.failed" {
                    *stats
                        .lock()
                        .unwrap()
                        .errors
                        .entry(format!("turn failed: {ev}"))
                        .or_default() += 1;
                    return false;
                }
                return true;
            }
        }
        *stats
            .lock()
            .unwrap()
            .errors
            .entry("stream ended before settling".into())
            .or_default() += 1;
        false
    }
}

fn visit(t: &Target, stats: &Mutex<Stats>, n: usize) {
    t.call(stats, "GET /api/chats", "GET", "/api/chats", None);
    let Some(created) = t.call(
        stats,
        "POST /api/chats",
        "POST",
        "/api/chats",
        Some(&json!({ "pendingUserMessage": format!("load visit {n}") })),
    ) else {
        return;
    };
    let Some(id) = created["chat"]["id"].as_str().map(str::to_string) else {
        return;
    };
    t.call(
        stats,
        "GET /api/chats/:id",
        "GET",
        &format!("/api/chats/{id}"),
        None,
    );
    let events: Vec<Value> = (0..10)
        .map(|i| json!({ "eventIndex": i, "event": { "type": "assistant.text.delta", "index": i, "delta": format!("token {i} ") } }))
        .collect();
    t.call(
        stats,
        "POST /api/chats/:id/events",
        "POST",
        &format!("/api/chats/{id}/events"),
        Some(&json!({ "events": events })),
    );
    let snapshot: Vec<Value> = (0..12)
        .map(|i| json!({ "type": "assistant.text.delta", "index": i, "delta": "x " }))
        .collect();
    t.call(
        stats,
        "PUT /api/chats/:id/snapshot",
        "PUT",
        &format!("/api/chats/{id}/snapshot"),
        Some(&json!({ "events": snapshot, "session": null })),
    );
    t.turn(stats, "hello");
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

fn report(title: &str, stats: &Stats, elapsed: Duration) {
    println!("\n{title} ({:.1} s)", elapsed.as_secs_f64());
    println!("| route | count | req/s | p50 ms | p99 ms | max ms |");
    println!("|---|---|---|---|---|---|");
    for (route, lat) in &stats.latencies {
        let mut v = lat.clone();
        v.sort();
        println!(
            "| {route} | {} | {:.1} | {} | {} | {} |",
            v.len(),
            v.len() as f64 / elapsed.as_secs_f64(),
            ms(percentile(&v, 0.5)),
            ms(percentile(&v, 0.99)),
            ms(*v.last().unwrap_or(&Duration::ZERO))
        );
    }
    let total: usize = stats.errors.values().sum();
    println!("errors: {total}");
    for (e, n) in &stats.errors {
        println!("  {n} × {e}");
    }
}

fn memory(pid: Option<u32>) -> String {
    let Some(pid) = pid else {
        return "n/a (outside instance)".into();
    };
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map(|kb| format!("{:.0} MiB", kb / 1024.0))
            .unwrap_or_else(|| "?".into())
    };
    format!("rss {}, peak {}", field("VmRSS:"), field("VmHWM:"))
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// Runs the mix at `level` for `seconds` against `target`: (visits, stats, elapsed).
fn run_mix(target: &Arc<Target>, level: usize, seconds: u64) -> (usize, Stats, Duration) {
    run_mix_sampled(target, level, seconds, &mut |_, _, _| {})
}

/// [`run_mix`], calling `sample(elapsed, visits, stats)` every [`SAMPLE_EVERY`] while it runs.
fn run_mix_sampled(
    target: &Arc<Target>,
    level: usize,
    seconds: u64,
    sample: &mut dyn FnMut(Duration, usize, &Stats),
) -> (usize, Stats, Duration) {
    let stats = Arc::new(Mutex::new(Stats::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let counter = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..level)
        .map(|_| {
            let (t, s, stop, c) = (target.clone(), stats.clone(), stop.clone(), counter.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    visit(&t, &s, c.fetch_add(1, Ordering::Relaxed));
                }
            })
        })
        .collect();
    let until = started + Duration::from_secs(seconds);
    let mut next_sample = started + SAMPLE_EVERY;
    while Instant::now() < until {
        std::thread::sleep(
            until
                .min(next_sample)
                .saturating_duration_since(Instant::now()),
        );
        if Instant::now() >= next_sample {
            next_sample += SAMPLE_EVERY;
            let visits = counter.load(Ordering::Relaxed);
            sample(started.elapsed(), visits, &stats.lock().unwrap());
        }
    }
    stop.store(true, Ordering::Relaxed);
    // Finish the visits in flight (bounded: a visit is a few requests and one turn).
    workers.into_iter().for_each(|w| w.join().unwrap());
    let elapsed = started.elapsed();
    let stats = std::mem::take(&mut *stats.lock().unwrap());
    (counter.load(Ordering::Relaxed), stats, elapsed)
}

/// How often a soak samples memory and connections.
const SAMPLE_EVERY: Duration = Duration::from_secs(30);

/// TCP connections to `port` on loopback by state (`/proc/net/tcp`): (established, time-wait).
fn connections_to(port: u16) -> (usize, usize) {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    let (mut established, mut time_wait) = (0, 0);
    for line in table.lines().skip(1) {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let (Some(remote), Some(state)) = (cols.get(2), cols.get(3)) else {
            continue;
        };
        let to_port = remote
            .rsplit(':')
            .next()
            .and_then(|p| u16::from_str_radix(p, 16).ok());
        if to_port != Some(port) {
            continue;
        }
        match *state {
            "01" => established += 1,
            "06" => time_wait += 1,
            _ => {}
        }
    }
    (established, time_wait)
}

/// A resident set size in MiB (`/proc/<pid>/status`).
fn rss_mib(pid: Option<u32>) -> f64 {
    let status = pid
        .and_then(|p| std::fs::read_to_string(format!("/proc/{p}/status")).ok())
        .unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

/// Two nodes on sqld + Redis at `level` users for `seconds`: a row every [`SAMPLE_EVERY`] with
/// the visits and errors so far, each host's memory and the connections to sqld.
fn soak(level: usize, seconds: u64, pacing: &str) {
    let sqld = Sqld::start();
    let redis = Redis::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let rc = runtime_config(dir.path(), Some(&sqld), Some(&redis));
    let hosts: Vec<Host> = (0..2)
        .map(|_| load_node(Some(rc.clone()), pacing))
        .collect();
    let target = Arc::new(Target::new(hosts.iter().map(|h| h.base.clone()).collect()));
    let pids: Vec<Option<u32>> = hosts.iter().map(|h| h.pid()).collect();
    println!("eve-load --soak: 2 nodes on sqld + Redis, {level} users, {seconds} s, demo pacing {pacing} ms");
    println!("\n| at | visits | errors | host A rss | host B rss | to sqld: established | to sqld: TIME_WAIT |");
    println!("|---|---|---|---|---|---|---|");
    let (visits, stats, elapsed) =
        run_mix_sampled(&target, level, seconds, &mut |at, visits, s| {
            let errors: usize = s.errors.values().sum();
            let (est, tw) = connections_to(sqld.port);
            println!(
                "| {:.0} s | {visits} | {errors} | {:.0} MiB | {:.0} MiB | {est} | {tw} |",
                at.as_secs_f64(),
                rss_mib(pids[0]),
                rss_mib(pids[1])
            );
        });
    report(&format!("soak: {visits} visits"), &stats, elapsed);
}

/// A host for a load run: the hourly limits and the stream cap raised (one principal plays
/// every client), the demo model paced at `pacing` ms a token.
fn load_node(runtime_config: Option<std::path::PathBuf>, pacing: &str) -> Host {
    Host::start(HostOptions {
        runtime_config,
        ..HostOptions::default()
            .var("chat_create_per_hour", "100000000")
            .var("chat_send_per_hour", "100000000")
            .var("max_streams_per_user", "1000")
            // Every visit makes a session of the one principal: a soak makes thousands.
            .var("max_sessions_per_user", "10000000")
            .var("demo_pacing_ms", pacing)
    })
    .expect("a local host (unset EVE_CHAT_BASE_URL)")
}

/// One node on SQLite, one on sqld, two on sqld + Redis: the same mix, side by side.
fn scale_out(levels: &[usize], seconds: u64, pacing: &str, setups: &[String]) {
    let node = |rc: Option<std::path::PathBuf>| load_node(rc, pacing);
    println!(
        "eve-load --scale-out: levels {levels:?}, {seconds} s each, demo pacing {pacing} ms; {} cores",
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)
    );
    let mut rows = Vec::new();
    for (short, setup) in [
        ("sqlite", "1 node, local SQLite"),
        ("sqld", "1 node, sqld"),
        ("sqld+redis", "2 nodes, sqld + Redis"),
    ] {
        if !setups.iter().any(|s| s == short) {
            continue;
        }
        for &level in levels {
            let dir = tempfile::tempdir().expect("temp dir");
            let (sqld, redis) = match setup {
                "1 node, local SQLite" => (None, None),
                "1 node, sqld" => (Some(Sqld::start()), None),
                _ => (Some(Sqld::start()), Some(Redis::start())),
            };
            let rc = sqld
                .as_ref()
                .map(|s| runtime_config(dir.path(), Some(s), redis.as_ref()));
            let hosts: Vec<Host> = (0..if redis.is_some() { 2 } else { 1 })
                .map(|_| node(rc.clone()))
                .collect();
            let target = Arc::new(Target::new(hosts.iter().map(|h| h.base.clone()).collect()));
            let (visits, stats, elapsed) = run_mix(&target, level, seconds);
            report(
                &format!("{setup}, concurrency {level}: {visits} visits"),
                &stats,
                elapsed,
            );
            let mut turns = stats
                .latencies
                .get("turn (send → settled)")
                .cloned()
                .unwrap_or_default();
            turns.sort();
            let errors: usize = stats.errors.values().sum();
            let rss: Vec<String> = hosts.iter().map(|h| memory(h.pid())).collect();
            if let Ok(dir) = std::env::var("EVE_LOAD_DUMP") {
                for (i, h) in hosts.iter().enumerate() {
                    let _ = std::fs::write(format!("{dir}/host-{short}-{level}-{i}.log"), h.log());
                }
                if let Some(s) = &sqld {
                    let _ = std::fs::write(format!("{dir}/sqld-{short}-{level}.log"), s.log());
                }
            }
            // What the hosts logged about failures (first of each kind).
            let mut seen = std::collections::BTreeSet::new();
            for line in hosts.iter().flat_map(|h| {
                h.log()
                    .lines()
                    .filter(|l| l.contains("error") || l.contains("failed"))
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            }) {
                let kind: String = line.chars().take(60).collect();
                if seen.insert(kind) && seen.len() <= 12 {
                    println!("  host: {}", line.chars().take(300).collect::<String>());
                }
            }
            rows.push(format!(
                "| {setup} | {level} | {:.1} | {} / {} ms | {errors} | {} |",
                visits as f64 / elapsed.as_secs_f64(),
                ms(percentile(&turns, 0.5)),
                ms(percentile(&turns, 0.99)),
                rss.join("; ")
            ));
            drop(hosts);
        }
    }
    println!(
        "\n| deployment | concurrency | visits/s | turn p50 / p99 | errors | each host's memory |"
    );
    println!("|---|---|---|---|---|---|");
    for r in rows {
        println!("{r}");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let levels: Vec<usize> = arg(&args, "--levels")
        .unwrap_or_else(|| "1,4,16,64".into())
        .split(',')
        .map(|s| s.trim().parse().expect("--levels: numbers"))
        .collect();
    let seconds: u64 = arg(&args, "--seconds")
        .map(|s| s.parse().expect("--seconds"))
        .unwrap_or(10);
    let streams: usize = arg(&args, "--streams")
        .map(|s| s.parse().expect("--streams"))
        .unwrap_or(200);
    let pacing = arg(&args, "--pacing-ms").unwrap_or_else(|| "30".into());
    if let Some(secs) = arg(&args, "--soak") {
        let secs = secs.parse().expect("--soak: seconds");
        soak(levels[0], secs, &pacing);
        return;
    }
    if args.iter().any(|a| a == "--scale-out") {
        let setups: Vec<String> = arg(&args, "--setups")
            .unwrap_or_else(|| "sqlite,sqld,sqld+redis".into())
            .split(',')
            .map(|s| s.trim().to_string())
            .collect();
        scale_out(&levels, seconds, &pacing, &setups);
        return;
    }

    let host = match arg(&args, "--base") {
        Some(_) => None,
        None => Some(
            Host::start(
                HostOptions::default()
                    .var("chat_create_per_hour", "100000000")
                    .var("chat_send_per_hour", "100000000")
                    // One principal plays every client: its stream cap would refuse them.
                    .var("max_streams_per_user", "1000")
                    .var("demo_pacing_ms", &pacing),
            )
            .expect("a local host (unset EVE_CHAT_BASE_URL or pass --base)"),
        ),
    };
    let base = arg(&args, "--base").unwrap_or_else(|| host.as_ref().unwrap().base.clone());
    let pid = host.as_ref().and_then(|h| h.pid());
    let target = Arc::new(Target::new(vec![base.clone()]));
    println!("eve-load against {base}: levels {levels:?}, {seconds} s each, demo pacing {pacing} ms; {} cores", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0));
    println!("host memory at start: {}", memory(pid));

    for &level in &levels {
        let (visits, stats, elapsed) = run_mix(&target, level, seconds);
        report(
            &format!("mix at concurrency {level}: {visits} visits"),
            &stats,
            elapsed,
        );
        println!("host memory: {}", memory(pid));
    }

    if streams > 0 {
        // Start the turns, then hold one reader per turn open at once.
        let stats = Arc::new(Mutex::new(Stats::default()));
        let started = Instant::now();
        let sessions: Vec<String> = (0..streams)
            .filter_map(|i| {
                let v = target.call(
                    &stats,
                    "POST /eve/v1/session",
                    "POST",
                    "/eve/v1/session",
                    Some(&json!({ "message": format!("tell me a story {i}") })),
                )?;
                v["sessionId"].as_str().map(str::to_string)
            })
            .collect();
        let open = Arc::new(AtomicUsize::new(0));
        let peak_open = Arc::new(AtomicUsize::new(0));
        let readers: Vec<_> = sessions
            .into_iter()
            .map(|id| {
                let (t, s, open, peak) = (
                    target.clone(),
                    stats.clone(),
                    open.clone(),
                    peak_open.clone(),
                );
                std::thread::spawn(move || {
                    let n = open.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(n, Ordering::SeqCst);
                    let t0 = Instant::now();
                    let ok = t.read_stream(&s, &id, 0);
                    open.fetch_sub(1, Ordering::SeqCst);
                    if ok {
                        s.lock()
                            .unwrap()
                            .latencies
                            .entry("stream held to settling")
                            .or_default()
                            .push(t0.elapsed());
                    }
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(500));
        let mem_during = memory(pid);
        readers.into_iter().for_each(|r| r.join().unwrap());
        report(
            &format!(
                "{streams} concurrent eve streams (peak open readers {})",
                peak_open.load(Ordering::SeqCst)
            ),
            &stats.lock().unwrap(),
            started.elapsed(),
        );
        println!("host memory while streams were open: {mem_during}");
    }
    println!("host memory at end: {}", memory(pid));
}
