//! eve stream figures through the local host (a command that prints numbers, not a test of
//! timings). Run:
//!
//! ```sh
//! cargo test -p eve-chat-tests --release --test suites -- --ignored --nocapture --test-threads 1 eve_bench::
//! ```
//!
//! - time to first event through `eve-proxy` versus straight to the `agent` (a second host
//!   serves the same `agent.wasm` on a public route, called with the upstream HS256 JWT that
//!   eve-proxy would send, signed with the local-dev key), i.e. the proxy's cost;
//! - events per second through the proxy for a long demo turn (live, and its replay);
//! - 100 concurrent streams tailing one running turn.
//!
//! A finished session is read with `follow=false` (the history, then the response ends); a
//! live turn with a following stream read up to its `session.waiting` (a following stream of
//! eve stays open after it). Results are recorded in `docs/performance.md`.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use eve_agent::jwt::UpstreamJwt;
use eve_api::auth::{AuthMode, Principal, LOCAL_DEV_PRINCIPAL_ID};
use eve_chat_tests::eve::{self, Stream};
use eve_chat_tests::{repo_root, Host, HostOptions};
use serde_json::json;

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// A manifest that serves only the agent, publicly, at `/eve/v1/...`.
fn direct_manifest(dir: &std::path::Path) -> PathBuf {
    let wasm = repo_root().join("target/wasm32-wasip2/release/agent.wasm");
    let manifest = format!(
        r#"spin_manifest_version = 2
[application]
name = "eve-agent-direct"
[variables]
auth_mode = {{ default = "local-dev" }}
demo_pacing_ms = {{ default = "0" }}
[[trigger.http]]
route = "/eve/v1/..."
component = "agent"
[component.agent]
source = "{}"
sqlite_databases = ["default"]
[component.agent.variables]
auth_mode = "{{{{ auth_mode }}}}"
demo_pacing_ms = "{{{{ demo_pacing_ms }}}}"
"#,
        wasm.display()
    );
    let path = dir.join("spin.toml");
    std::fs::write(&path, manifest).unwrap();
    path
}

/// The upstream token codec of a local-dev deployment without secrets (the public
/// development key of `eve_agent::jwt`), as eve-proxy and the agent derive it.
fn local_dev_jwt() -> UpstreamJwt {
    UpstreamJwt::from_vars(eve_api::auth::AuthMode::LocalDev, |_| None)
        .expect("local-dev has a development key")
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Seconds from one `meta.at` (`…THH:MM:SS.mmmZ`) to a later one the same day or the next.
fn seconds_between(from: &serde_json::Value, to: &serde_json::Value) -> f64 {
    let secs = |at: &serde_json::Value| {
        let time = at.as_str().unwrap().split('T').nth(1).unwrap();
        let mut parts = time.trim_end_matches('Z').split(':');
        let h: f64 = parts.next().unwrap().parse().unwrap();
        let m: f64 = parts.next().unwrap().parse().unwrap();
        let s: f64 = parts.next().unwrap().parse().unwrap();
        h * 3600.0 + m * 60.0 + s
    };
    (secs(to) - secs(from)).rem_euclid(86_400.0)
}

struct Target<'a> {
    name: &'static str,
    host: &'a Host,
    /// Straight to the agent: each request carries a fresh upstream token.
    jwt: Option<UpstreamJwt>,
}

impl Target<'_> {
    fn headers(&self) -> Vec<(&'static str, String)> {
        let origin = ("origin", self.host.origin());
        match &self.jwt {
            Some(j) => {
                let principal = Principal {
                    id: LOCAL_DEV_PRINCIPAL_ID.into(),
                    mode: AuthMode::LocalDev,
                    name: None,
                    email: None,
                };
                vec![origin, ("authorization", j.bearer(&principal, now_secs()))]
            }
            None => vec![origin],
        }
    }

    fn start(&self, message: &str) -> String {
        let mut headers = self.headers();
        headers.push(("content-type", "application/json".into()));
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let body = json!({ "message": message }).to_string();
        let r = self
            .host
            .send("POST", "/eve/v1/session", &headers, Some(body.as_bytes()));
        eve::assert_accepted(&r, None)["sessionId"]
            .as_str()
            .unwrap()
            .to_string()
    }

    /// The recorded stream of `sid` (`follow=false`), unread.
    fn history(&self, agent: &ureq::Agent, sid: &str) -> ureq::Response {
        let mut req = agent.get(
            &self
                .host
                .url(&eve::stream_path(sid, "startIndex=0&follow=false")),
        );
        for (k, v) in self.headers() {
            req = req.set(k, &v);
        }
        req.call().expect("stream opens")
    }

    /// Reads a finished session's whole stream; returns the number of events.
    fn drain(&self, agent: &ureq::Agent, sid: &str) -> usize {
        let mut body = String::new();
        self.history(agent, sid)
            .into_reader()
            .read_to_string(&mut body)
            .unwrap();
        eve::parse_ndjson(&body).len()
    }

    /// Reads the following stream of a running turn up to its `session.waiting`; the events.
    fn follow(&self, sid: &str) -> usize {
        let headers = self.headers();
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let events = Stream::open_path(
            self.host,
            &eve::stream_path(sid, "startIndex=0"),
            &headers,
            0,
        )
        .until_type("session.waiting");
        events.len()
    }
}

#[test]
#[ignore]
fn eve_stream_figures() {
    let Some(app) = Host::start(
        HostOptions::default()
            .var("demo_pacing_ms", "0")
            .var("chat_send_per_hour", "100000"),
    ) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let opts = HostOptions {
        manifest: direct_manifest(dir.path()),
        ..HostOptions::default()
    };
    let Some(direct_host) = Host::start(opts) else {
        return;
    };
    let proxied = Target {
        name: "through eve-proxy",
        host: &app,
        jwt: None,
    };
    let direct = Target {
        name: "straight to the agent",
        host: &direct_host,
        jwt: Some(local_dev_jwt()),
    };
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(120))
        .build();

    println!("\n## eve stream figures\n");
    // 1. Time to first event of a finished session's stream.
    let mut first_event = Vec::new();
    for t in [&proxied, &direct] {
        let sid = t.start("count to 50");
        assert!(t.follow(&sid) > 50);
        assert!(t.drain(&agent, &sid) > 50);
        for _ in 0..20 {
            t.history(&agent, &sid)
                .into_reader()
                .read_to_end(&mut Vec::new())
                .unwrap();
        }
        let mut samples = Vec::new();
        for _ in 0..300 {
            let started = Instant::now();
            let resp = t.history(&agent, &sid);
            let mut reader = BufReader::new(resp.into_reader());
            // The stream opens with an empty line; the first event is the next one.
            let mut line = String::new();
            while line.trim().is_empty() {
                line.clear();
                assert!(reader.read_line(&mut line).unwrap() > 0, "the stream ended");
            }
            samples.push(started.elapsed());
            assert!(line.contains("\"type\":\"session.started\""), "{line}");
            reader.read_to_end(&mut Vec::new()).unwrap();
        }
        let (p50, p95) = (
            percentile(&mut samples, 0.5),
            percentile(&mut samples, 0.95),
        );
        println!(
            "time to first event, {:<24} p50 {:>9}  p95 {:>9}  (n = 300)",
            t.name,
            ms(p50),
            ms(p95)
        );
        first_event.push(p50);
    }
    println!(
        "proxy cost (p50 difference)                     {:>9}",
        ms(first_event[0].saturating_sub(first_event[1]))
    );

    // 2. Events per second: a live 10,000-token turn, then its replay.
    for t in [&proxied, &direct] {
        let started = Instant::now();
        let sid = t.start("count to 10000");
        let live = t.follow(&sid);
        let live_secs = started.elapsed().as_secs_f64();
        assert!(live > 10_000, "{live} events");
        let mut rates = Vec::new();
        for _ in 0..5 {
            let started = Instant::now();
            let n = t.drain(&agent, &sid);
            assert_eq!(n, live, "the replay is the live turn");
            rates.push(n as f64 / started.elapsed().as_secs_f64());
        }
        rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
            "events/s {:<24} live turn {:>7.0} /s ({live} events)   replay median {:>8.0} /s",
            t.name,
            live as f64 / live_secs,
            rates[2]
        );
    }

    // 3. 100 concurrent streams tailing one running turn (paced: ~2 ms per token) through the
    //    proxy, all opened while it runs.
    let Some(paced) = Host::start(
        HostOptions::default()
            .var("demo_pacing_ms", "2")
            .var("chat_send_per_hour", "100000"),
    ) else {
        return;
    };
    let paced_target = Target {
        name: "paced",
        host: &paced,
        jwt: None,
    };
    let sid = paced_target.start("count to 2000");
    let started = Instant::now();
    let paced = std::sync::Arc::new(paced);
    let readers: Vec<_> = (0..100)
        .map(|_| {
            let (h, sid) = (paced.clone(), sid.clone());
            std::thread::spawn(move || -> Result<(usize, i64, String), String> {
                // 100 readers share two cores with the turn: give them longer than the
                // usual minute.
                let mut s = Stream::open_path_for(
                    &h,
                    &eve::stream_path(&sid, "startIndex=0&includeTailIndex=1"),
                    &[],
                    0,
                    Duration::from_secs(300),
                );
                let tail: i64 = s
                    .header("x-eve-stream-tail-index")
                    .ok_or("no tail index")?
                    .parse()
                    .map_err(|e| format!("tail index: {e}"))?;
                let mut n = 0;
                while let Some(e) = s.next_event() {
                    n += 1;
                    if e["type"] == "session.waiting" {
                        return Ok((n, tail, "session.waiting".into()));
                    }
                }
                Err(format!("the stream ended after {n} events"))
            })
        })
        .collect();
    let results: Vec<_> = readers.into_iter().map(|r| r.join().unwrap()).collect();
    let ok = results
        .iter()
        .filter(|r| matches!(r, Ok((n, tail, _)) if (*tail + 1) < *n as i64))
        .count();
    let counts: std::collections::HashSet<usize> = results
        .iter()
        .filter_map(|r| r.as_ref().ok().map(|(n, _, _)| *n))
        .collect();
    for r in results.iter().filter(|r| r.is_err()) {
        println!("  stream error: {r:?}");
    }
    let log = eve::snapshot(&paced, &sid, 0);
    let turn_secs = seconds_between(
        &eve::first(&log, "turn.started")["meta"]["at"],
        &eve::first(&log, "session.waiting")["meta"]["at"],
    );
    println!(
        "100 concurrent streams of one running turn: {ok}/100 complete (opened while it ran), identical lengths: {}, {:.1} s (the turn itself ran {turn_secs:.1} s)",
        counts.len() == 1,
        started.elapsed().as_secs_f64()
    );
    assert_eq!(ok, 100);
    assert_eq!(counts.len(), 1);
}
