//! eve stream figures through the local host (a command that prints numbers, not a test of
//! timings). Run:
//!
//! ```sh
//! cargo test -p eve-chat-tests --release --test eve_bench -- --ignored --nocapture --test-threads 1
//! ```
//!
//! - time to first event through `eve-proxy` versus straight to the `agent` (a second host
//!   serves the same `agent.wasm` on a public route, called with a principal assertion signed
//!   with the local-dev key), i.e. the proxy's cost;
//! - events per second through the proxy for a long demo turn (replayed, and live);
//! - 100 concurrent streams tailing one running turn.
//!
//! Results are recorded in `docs/performance.md`.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use eve_chat_tests::{repo_root, Host, HostOptions};
use serde_json::{json, Value};

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

/// The agent's principal assertion in local-dev mode (the public development key of
/// `eve_agent::assertion`).
fn local_dev_assertion() -> String {
    let codec = eve_auth::cookie::SignedValueCodec::new(
        "eve-chat local-dev agent assertion key (public)",
        None,
        "agent-principal",
        "local-dev",
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let payload = json!({ "p": { "id": "local-dev", "mode": "local-dev" }, "exp": now + 300 });
    codec.seal(payload.to_string().as_bytes())
}

struct Target<'a> {
    name: &'static str,
    host: &'a Host,
    headers: Vec<(&'static str, String)>,
}

impl Target<'_> {
    fn start(&self, message: &str) -> String {
        let mut req = self.host.client().post(&self.host.url("/eve/v1/session"));
        req = req
            .set("content-type", "application/json")
            .set("origin", &self.host.origin());
        for (k, v) in &self.headers {
            req = req.set(k, v);
        }
        let r = req
            .send_string(&json!({ "message": message }).to_string())
            .expect("session starts");
        let v: Value = serde_json::from_reader(r.into_reader()).unwrap();
        v["sessionId"].as_str().unwrap().to_string()
    }

    fn stream(&self, agent: &ureq::Agent, sid: &str) -> ureq::Response {
        let mut req = agent.get(
            &self
                .host
                .url(&format!("/eve/v1/session/{sid}/stream?startIndex=0")),
        );
        for (k, v) in &self.headers {
            req = req.set(k, v);
        }
        req.call().expect("stream opens")
    }

    /// Reads a whole stream; returns the number of events.
    fn drain(&self, agent: &ureq::Agent, sid: &str) -> usize {
        let mut body = String::new();
        self.stream(agent, sid)
            .into_reader()
            .read_to_string(&mut body)
            .unwrap();
        body.lines().filter(|l| l.contains("\"index\"")).count()
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
        headers: vec![],
    };
    let direct = Target {
        name: "straight to the agent",
        host: &direct_host,
        headers: vec![("x-eve-principal-assertion", local_dev_assertion())],
    };
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(120))
        .build();

    println!("\n## eve stream figures\n");
    // 1. Time to first event of a finished session's stream.
    let mut first_event = Vec::new();
    for t in [&proxied, &direct] {
        let sid = t.start("count to 50");
        assert!(t.drain(&agent, &sid) > 50);
        for _ in 0..20 {
            t.stream(&agent, &sid)
                .into_reader()
                .read_to_end(&mut Vec::new())
                .unwrap();
        }
        let mut samples = Vec::new();
        for _ in 0..300 {
            let started = Instant::now();
            let resp = t.stream(&agent, &sid);
            let mut reader = BufReader::new(resp.into_reader());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            samples.push(started.elapsed());
            assert!(line.contains("\"index\":0"));
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
        let live = t.drain(&agent, &sid);
        let live_secs = started.elapsed().as_secs_f64();
        let mut rates = Vec::new();
        for _ in 0..5 {
            let started = Instant::now();
            let n = t.drain(&agent, &sid);
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
        headers: vec![],
    };
    let sid = paced_target.start("count to 2000");
    let started = Instant::now();
    let base = paced.base.clone();
    let readers: Vec<_> = (0..100)
        .map(|_| {
            let url = format!("{base}/eve/v1/session/{sid}/stream?startIndex=0");
            std::thread::spawn(move || -> Result<(usize, String), String> {
                let agent = ureq::AgentBuilder::new()
                    .timeout(Duration::from_secs(300))
                    .build();
                let resp = agent.get(&url).call().map_err(|e| e.to_string())?;
                if resp.header("x-eve-session-state") != Some("running") {
                    return Err("the turn was no longer running when the stream opened".into());
                }
                let mut body = String::new();
                resp.into_reader()
                    .read_to_string(&mut body)
                    .map_err(|e| e.to_string())?;
                let last = body
                    .lines()
                    .rfind(|l| l.contains("\"index\""))
                    .unwrap_or("")
                    .to_string();
                Ok((
                    body.lines().filter(|l| l.contains("\"index\"")).count(),
                    last,
                ))
            })
        })
        .collect();
    let results: Vec<_> = readers.into_iter().map(|r| r.join().unwrap()).collect();
    let ok = results
        .iter()
        .filter(|r| matches!(r, Ok((_, last)) if last.contains("session.completed")))
        .count();
    let counts: std::collections::HashSet<usize> = results
        .iter()
        .filter_map(|r| r.as_ref().ok().map(|(n, _)| *n))
        .collect();
    for r in results.iter().filter(|r| r.is_err()) {
        println!("  stream error: {r:?}");
    }
    println!(
        "100 concurrent streams of one running turn: {ok}/100 complete, identical lengths: {}, {:.1} s",
        counts.len() == 1,
        started.elapsed().as_secs_f64()
    );
    assert_eq!(ok, 100);
}
