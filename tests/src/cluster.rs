//! Two live nodes serving one app at the same time, as docs/deployment.md deploys it: two
//! `spin-local` processes, each with its own state directory, one runtime config pointing both
//! at the same real libSQL server (`sqld`) and the same `redis-server`.

use crate::engines::{runtime_config, Redis, Sqld};
use crate::eve;
use crate::{Host, HostOptions};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// The shared engines and the runtime config both nodes use.
pub struct Backends {
    pub sqld: Sqld,
    pub redis: Redis,
    pub rc: PathBuf,
    _dir: tempfile::TempDir,
}

impl Backends {
    /// sqld and a Redis without persistence.
    pub fn start() -> Backends {
        Backends::with_redis(Redis::start())
    }

    /// sqld and `redis`.
    pub fn with_redis(redis: Redis) -> Backends {
        let sqld = Sqld::start();
        let dir = tempfile::tempdir().unwrap();
        let rc = runtime_config(dir.path(), Some(&sqld), Some(&redis));
        Backends {
            sqld,
            redis,
            rc,
            _dir: dir,
        }
    }

    /// A node on these backends with the app's variables `vars` (local-dev auth).
    pub fn node(&self, vars: &[(&str, &str)]) -> Host {
        let mut opts = HostOptions {
            runtime_config: Some(self.rc.clone()),
            ..HostOptions::default()
        };
        for (k, v) in vars {
            opts = opts.var(k, v);
        }
        Host::start(opts).expect("the multi-node tests start their own hosts")
    }

    /// Two nodes started at the same time.
    pub fn two_nodes(&self, vars: &[(&str, &str)]) -> (Host, Host) {
        std::thread::scope(|s| {
            let a = s.spawn(|| self.node(vars));
            let b = s.spawn(|| self.node(vars));
            (a.join().unwrap(), b.join().unwrap())
        })
    }
}

/// Whether the tests may start their own hosts (not against an outside instance; says so).
pub fn own_hosts() -> bool {
    if crate::external_base_url().is_some() {
        eprintln!("skipped: the multi-node tests start their own hosts");
        return false;
    }
    true
}

/// SIGKILLs a node by its process id (no shutdown at all); it is started again with
/// [`Host::restart`].
pub fn sigkill(node: &Host) {
    let pid = node.pid().expect("own host").to_string();
    let status = Command::new("kill").args(["-KILL", &pid]).status().unwrap();
    assert!(status.success(), "kill -KILL {pid}");
}

/// Every event has its own id, and the log is what a reader got.
pub fn assert_log_is(h: &Host, sid: &str, got: &[Value]) {
    eve::assert_unique_ids(got);
    assert_eq!(
        &eve::snapshot(h, sid, 0),
        got,
        "the log on {} is what the reader got",
        h.base
    );
}

/// `1 2 … n.`, the demo's answer to "count to n".
pub fn counted(n: u64) -> String {
    let numbers: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
    format!("{}.", numbers.join(" "))
}

/// Waits until `node` serves the sidebar again (by itself, after an outage), for at most
/// `within`.
pub fn assert_recovers(node: &Host, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let r = node.get("/api/chats");
        if r.status == 200 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no recovery: {} {}",
            r.status,
            r.text()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}
