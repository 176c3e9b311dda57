//! The integration-test harness.
//!
//! [`Host::shared`] gives a running eve-chat to test against: the instance at
//! `EVE_CHAT_BASE_URL` when that is set (a real `spin up`, say), otherwise a host started on a
//! free loopback port with a fresh state directory. Tests that must configure, restart or kill
//! the host use [`Host::start`], which answers `None` (and the test skips, saying so) only when
//! the suite runs against an outside instance.
//!
//! The host binary is any Spin-compatible one: `EVE_CHAT_SPIN_BIN` (a real `spin`, say), or by
//! default the project's own `target/host/spin-local`. It is started with flags real Spin 4.x
//! documents for `spin up` and nothing else ([`spin_up_args`]), so every test that starts its
//! own host — restarts and SIGKILLs included — runs unchanged on real Spin. Tests that rely on
//! something only the project's host does (its request log, its conformance replay) say
//! `host_only` in their name: `scripts/test` filters them out under another binary (the runner
//! reports them as skipped), and run anyway they return early through [`skip`], which records
//! them in `EVE_CHAT_SKIP_LOG` so they are counted as skipped, not passed.
//!
//! Each host runs in a process group of its own: `spin up` forks `spin trigger http` (the
//! project's host too), so the harness signals the group on kill, stop and drop, and checks
//! that the port is free before a restart.
//!
//! The harness builds what it runs once per test binary: the project's host (`cargo build
//! --profile host -p spin-local`, unless another binary is used) and the components (`<bin>
//! build --from spin.toml`). Set `EVE_CHAT_SKIP_BUILD=1` when a script has already built them.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

pub use ureq;

/// Accounts mode: its host, signed-in people and the requests the app's pages send.
pub mod accounts;
/// Two nodes on one sqld and one Redis, and what the multi-node tests check of them.
pub mod cluster;
/// Real storage engines on loopback: `redis-server` and the libSQL server `sqld`.
pub mod engines;
/// Talking to eve v1 sessions and reading their streams (bounded snapshots, following
/// streams read until the event a test needs, views of the events).
pub mod eve;
pub mod mcp_servers;
pub mod raw;
/// The local Slack Web API simulator (tests/slack/slack-sim.mjs) and Slack-signed events.
pub mod slack_sim;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The app's manifest with `/eve/v1/...` routed to the agent directly (as where it must be
/// reachable by URL), so requests reach it without the proxy. It lives in a temporary
/// application directory laid out the way Spin accepts: the components' `.wasm` files by
/// absolute path (Spin takes any `source` path), and a copy of `static/dist` inside the
/// directory, because Spin refuses `files` outside the application directory.
pub fn public_agent_manifest() -> (tempfile::TempDir, PathBuf) {
    ensure_built();
    let root = repo_root();
    let text = std::fs::read_to_string(root.join("spin.toml")).unwrap();
    let proxied = "route = \"/eve/v1/...\"\ncomponent = \"eve-proxy\"";
    let private = "route = { private = true }\ncomponent = \"agent\"";
    assert!(
        text.contains(proxied) && text.contains(private),
        "spin.toml changed shape"
    );
    let text = text
        .replace(proxied, "route = \"/eve/v1/...\"\ncomponent = \"agent\"")
        .replace(
            private,
            "route = { private = true }\ncomponent = \"eve-proxy\"",
        )
        .replace(
            "source = \"target/",
            &format!("source = \"{}/target/", root.display()),
        );
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root.join("static/dist"), &dir.path().join("static/dist"));
    let path = dir.path().join("spin.toml");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

/// Copies the directory tree `from` to `to` (files and folders; what the shell serves).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("create {}: {e}", to.display()));
    let entries =
        std::fs::read_dir(from).unwrap_or_else(|e| panic!("read {}: {e}", from.display()));
    for entry in entries {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst)
                .unwrap_or_else(|e| panic!("copy {} to {}: {e}", src.display(), dst.display()));
        }
    }
}

/// Names a file the harness appends a line to for each test that skips at run time
/// (`<test binary> <test name>\t<why>`): such a test returns early and its runner counts it
/// as passed, so `scripts/test` reads this file and reports it as skipped.
pub const SKIP_LOG_ENV: &str = "EVE_CHAT_SKIP_LOG";

/// Says that the running test skips, and why: on stderr, and in [`SKIP_LOG_ENV`]'s file. The
/// caller returns right after. (A test that cannot run under the configured binary is better
/// filtered out by name, as `host_only_` tests are, so the runner itself shows it skipped.)
pub fn skip(why: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("(unnamed)")
        .to_string();
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|stem| match stem.rsplit_once('-') {
            Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_string(),
            _ => stem,
        })
        .unwrap_or_default();
    eprintln!("skipped: {binary} {test}: {why}");
    if let Some(path) = std::env::var_os(SKIP_LOG_ENV).filter(|p| !p.is_empty()) {
        use std::io::Write;
        let line = format!("{binary} {test}\t{why}\n");
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = f.write_all(line.as_bytes());
        }
    }
}

/// The project's local host binary.
pub fn host_binary() -> PathBuf {
    repo_root().join("target/host/spin-local")
}

/// Names the Spin-compatible binary the harness starts instead of the project's host.
pub const SPIN_BIN_ENV: &str = "EVE_CHAT_SPIN_BIN";

/// The Spin-compatible binary to start: `EVE_CHAT_SPIN_BIN`, or the project's host.
pub fn spin_binary() -> PathBuf {
    std::env::var_os(SPIN_BIN_ENV)
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(host_binary)
}

/// Whether the harness starts the project's own host (not another Spin binary).
pub fn is_project_host(binary: &Path) -> bool {
    binary == host_binary()
}

/// The flags the harness passes to `spin up`. Each is documented by `spin up --help` of
/// Spin 4.x (`--from` of the up command; `--state-dir` and `--runtime-config-file` of every
/// trigger; `--listen` of the HTTP trigger; `--variable` of the runtime factors), so the
/// same command line starts real Spin and the project's host.
pub const SPIN_UP_FLAGS: &[&str] = &[
    "--from",
    "--listen",
    "--state-dir",
    "--variable",
    "--runtime-config-file",
];

/// The command line (after the binary) that serves `opts` on `listen` from `state_dir`.
pub fn spin_up_args(opts: &HostOptions, listen: SocketAddr, state_dir: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "up".into(),
        "--from".into(),
        opts.manifest.clone().into(),
        "--listen".into(),
        listen.to_string().into(),
        "--state-dir".into(),
        state_dir.into(),
    ];
    for (k, v) in &opts.variables {
        args.push("--variable".into());
        args.push(format!("{k}={v}").into());
    }
    if let Some(rc) = &opts.runtime_config {
        args.push("--runtime-config-file".into());
        args.push(rc.into());
    }
    args
}

/// The command line (after the binary) that builds the components of `manifest`, as
/// `spin build --from` does.
pub fn spin_build_args(manifest: &Path) -> Vec<OsString> {
    vec!["build".into(), "--from".into(), manifest.into()]
}

static BUILD: Once = Once::new();

/// Builds the host (when it is the project's) and the app's components, once per test
/// process.
pub fn ensure_built() {
    BUILD.call_once(|| {
        let bin = spin_binary();
        let project = is_project_host(&bin);
        if std::env::var_os("EVE_CHAT_SKIP_BUILD").is_some() && (!project || bin.exists()) {
            return;
        }
        if project {
            run(Command::new(env!("CARGO"))
                .args(["build", "--profile", "host", "-p", "spin-local"])
                .current_dir(repo_root()));
        }
        run(Command::new(&bin)
            .args(spin_build_args(&repo_root().join("spin.toml")))
            .current_dir(repo_root()));
    });
}

fn run(cmd: &mut Command) {
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(status.success(), "{cmd:?} failed: {status}");
}

/// A loopback port nobody listens on right now. The harness picks the port itself rather
/// than passing port 0, because real Spin prints the address it was given, not the one the
/// kernel chose.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// How to start a host.
#[derive(Clone, Debug)]
pub struct HostOptions {
    /// The manifest to serve (default: the app's spin.toml).
    pub manifest: PathBuf,
    /// Application variables (`--variable`).
    pub variables: Vec<(String, String)>,
    /// Extra environment (e.g. `SPIN_VARIABLE_*`).
    pub env: Vec<(String, String)>,
    /// A runtime-config file.
    pub runtime_config: Option<PathBuf>,
    /// The state directory; a fresh temporary one when `None`.
    pub state_dir: Option<PathBuf>,
    /// The Spin-compatible binary; [`spin_binary`] when `None`.
    pub binary: Option<PathBuf>,
}

impl Default for HostOptions {
    /// The app in local-dev auth mode, as the README's run command starts it.
    fn default() -> Self {
        HostOptions {
            manifest: repo_root().join("spin.toml"),
            variables: vec![("auth_mode".into(), "local-dev".into())],
            env: Vec::new(),
            runtime_config: None,
            state_dir: None,
            binary: None,
        }
    }
}

impl HostOptions {
    pub fn var(mut self, name: &str, value: &str) -> Self {
        self.variables.retain(|(k, _)| k != name);
        self.variables.push((name.into(), value.into()));
        self
    }
}

/// What `scripts/run` does for a deployment that sets a session secret and no
/// `eve_jwt_secret` (required outside local-dev since issue 32, when the agent stopped getting
/// the session secret): passes the key the app used to derive from it. A test that wants no
/// key at all sets `eve_jwt_secret` to "" (an empty variable is unset for the app).
fn with_derived_jwt_secret(opts: HostOptions) -> HostOptions {
    let value = |name: &str| {
        opts.variables
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    match (value("session_secret"), value("eve_jwt_secret")) {
        (Some(secret), None) if !secret.trim().is_empty() => {
            let key = eve_connections::jwt::key_derived_from(&secret);
            opts.var("eve_jwt_secret", &key)
        }
        _ => opts,
    }
}

/// A running host (or an outside instance).
pub struct Host {
    pub base: String,
    child: Option<Child>,
    binary: PathBuf,
    listen: Option<SocketAddr>,
    opts: HostOptions,
    state_dir: Option<PathBuf>,
    _temp: Option<tempfile::TempDir>,
    /// The sqld behind the default database (`EVE_CHAT_TEST_DATABASE=sqld`), stopped after
    /// the host.
    _database: Option<Arc<engines::StateDatabase>>,
    log: Arc<Mutex<String>>,
}

/// Whether the suite runs against an outside instance.
pub fn external_base_url() -> Option<String> {
    std::env::var("EVE_CHAT_BASE_URL")
        .ok()
        .filter(|s| !s.is_empty())
        .map(|s| s.trim_end_matches('/').to_string())
}

impl Host {
    /// The app to test: `EVE_CHAT_BASE_URL`, or a fresh local host in local-dev mode.
    pub fn shared() -> Host {
        if let Some(base) = external_base_url() {
            return Host {
                base,
                child: None,
                binary: spin_binary(),
                listen: None,
                opts: HostOptions::default(),
                state_dir: None,
                _temp: None,
                _database: None,
                log: Default::default(),
            };
        }
        Host::start(HostOptions::default()).expect("local host")
    }

    /// A host of our own with `opts`; `None` when testing an outside instance (the caller
    /// skips: configuring or restarting someone else's server is not possible).
    pub fn start(opts: HostOptions) -> Option<Host> {
        if external_base_url().is_some() {
            skip("this test needs its own configurable host, and EVE_CHAT_BASE_URL is set");
            return None;
        }
        let binary = opts.binary.clone().unwrap_or_else(spin_binary);
        if opts.binary.is_none() {
            ensure_built();
        }
        let (temp, state_dir) = match &opts.state_dir {
            Some(d) => (None, d.clone()),
            None => {
                let t = tempfile::tempdir().expect("temp dir");
                let d = t.path().join(".spin");
                (Some(t), d)
            }
        };
        // EVE_CHAT_TEST_DATABASE=sqld: the default database on a real libSQL server.
        let mut opts = with_derived_jwt_secret(opts);
        let database = (opts.runtime_config.is_none() && engines::default_database_on_sqld())
            .then(|| engines::state_database(&state_dir));
        if let Some(db) = &database {
            opts.runtime_config = Some(db.runtime_config.clone());
        }
        let mut host = Host {
            base: String::new(),
            child: None,
            binary,
            listen: None,
            opts,
            state_dir: Some(state_dir),
            _temp: temp,
            _database: database,
            log: Default::default(),
        };
        host.spawn();
        Some(host)
    }

    /// A host for a test that relies on what only the project's host does (its request log,
    /// say): `None`, with a message, under another Spin binary or an outside instance.
    pub fn start_project_host(opts: HostOptions) -> Option<Host> {
        let binary = opts.binary.clone().unwrap_or_else(spin_binary);
        if !is_project_host(&binary) {
            skip(&format!(
                "host_only test (it reads the project host's own request log), and {SPIN_BIN_ENV} names {}",
                binary.display()
            ));
            return None;
        }
        Host::start(opts)
    }

    /// Whether this is the project's own host (whose request log tests may read).
    pub fn is_project_host(&self) -> bool {
        self.child.is_some() && is_project_host(&self.binary)
    }

    fn spawn(&mut self) {
        // The same address across restarts, as a browser would reconnect to; a new one only
        // when that one is taken.
        for attempt in 0..5 {
            let listen = match self.listen {
                Some(l) if attempt == 0 => l,
                _ => SocketAddr::from(([127, 0, 0, 1], free_port())),
            };
            match self.spawn_on(listen) {
                Ok(()) => {
                    self.listen = Some(listen);
                    return;
                }
                Err(exited) if exited && attempt < 4 => continue,
                Err(_) => break,
            }
        }
        panic!(
            "the host ({}) did not start; its log:\n{}",
            self.binary.display(),
            self.log()
        );
    }

    /// Starts the binary on `listen` and waits until it answers HTTP. `Err(true)`: it exited
    /// (e.g. the port was taken); `Err(false)`: it never answered.
    fn spawn_on(&mut self, listen: SocketAddr) -> Result<(), bool> {
        let state_dir = self.state_dir.clone().expect("own host has a state dir");
        let mut cmd = Command::new(&self.binary);
        cmd.args(spin_up_args(&self.opts, listen, &state_dir));
        for (k, v) in &self.opts.env {
            cmd.env(k, v);
        }
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(Stdio::null());
        // A process group of its own: `spin up` forks `spin trigger http`, which serves; the
        // harness signals the whole group, never only the parent it started.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.binary.display()));
        for pipe in [
            Box::new(child.stdout.take().expect("piped")) as Box<dyn Read + Send>,
            Box::new(child.stderr.take().expect("piped")),
        ] {
            let log = self.log.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    let mut l = log.lock().unwrap_or_else(|p| p.into_inner());
                    l.push_str(&line);
                    l.push('\n');
                }
            });
        }
        let base = format!("http://{listen}");
        let probe = ureq::AgentBuilder::new()
            .timeout(Duration::from_secs(2))
            .redirects(0)
            .build();
        let deadline = Instant::now() + Duration::from_secs(120);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return Err(true);
            }
            // Any HTTP answer (even an error status) means the host is serving.
            match probe.get(&format!("{base}/")).call() {
                Ok(_) | Err(ureq::Error::Status(..)) => {
                    self.base = base;
                    self.child = Some(child);
                    return Ok(());
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
        signal_group(&child, libc::SIGKILL);
        let _ = child.wait();
        Err(false)
    }

    /// Waits (at most `timeout`) until the log satisfies `ready`, and returns it. The host
    /// writes a request's line before it sends the answer, but the harness reads the host's
    /// output on another thread: a test that reads the log right after a response must wait.
    pub fn wait_for_log(&self, timeout: Duration, ready: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let log = self.log();
            if ready(&log) || Instant::now() >= deadline {
                return log;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything the host printed on stderr so far (request log, component output).
    pub fn log(&self) -> String {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether this is a host the test controls.
    pub fn is_own(&self) -> bool {
        self.child.is_some()
    }

    /// Stops the host gracefully and starts it again on the same state directory.
    pub fn restart(&mut self) {
        self.stop();
        self.assert_port_free();
        self.spawn();
    }

    /// Stops the host and starts it again on the same state with these variables changed (a
    /// deployment whose configuration changed).
    pub fn restart_with_vars(&mut self, vars: &[(&str, &str)]) {
        for (name, value) in vars {
            self.opts = std::mem::take(&mut self.opts).var(name, value);
        }
        self.restart();
    }

    /// SIGKILLs the host's whole process group (no cleanup at all: `spin up` and the
    /// `spin trigger http` it forked), then starts it again on the same state.
    pub fn kill_and_restart(&mut self) {
        if let Some(mut c) = self.child.take() {
            signal_group(&c, libc::SIGKILL);
            let _ = c.wait();
        }
        self.assert_port_free();
        self.spawn();
    }

    /// Stops the host: SIGTERM to its process group, then SIGKILL to the group if `spin up`
    /// has not exited within 10 s (and in any case, for a straggler it left behind).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            signal_group(&c, libc::SIGTERM);
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = c.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            signal_group(&c, libc::SIGKILL);
            let _ = c.wait();
        }
    }

    /// Panics unless nothing listens on the host's address any more (within 10 s): a
    /// restart must not find the old server still there (an orphaned `spin trigger http`
    /// would go on serving, and finishing, the turns a test meant to kill).
    fn assert_port_free(&self) {
        let Some(listen) = self.listen else {
            return;
        };
        assert!(
            wait_until_free(listen, Duration::from_secs(10)),
            "{listen} is still in use after the host's process group was stopped: something of the old host still serves it"
        );
    }

    /// The process that serves: the child `spin up` forked (`spin trigger http`), or the
    /// started process itself when it forked none (own hosts only), e.g. to read its
    /// memory use.
    pub fn pid(&self) -> Option<u32> {
        let leader = self.child.as_ref()?.id();
        Some(
            children_in_group(leader)
                .into_iter()
                .next()
                .unwrap_or(leader),
        )
    }

    /// The id of the process the harness started (`spin up`), which leads the host's
    /// process group (own hosts only).
    pub fn parent_pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// The address the host listens on (own hosts only).
    pub fn listen_addr(&self) -> Option<SocketAddr> {
        self.listen
    }

    /// The state directory (own hosts only).
    pub fn state_dir(&self) -> Option<&Path> {
        self.state_dir.as_deref()
    }

    /// Another host on this (stopped) host's database, in password mode: its one principal is
    /// not local-dev's, so tests can check that one principal's data stays its own.
    pub fn on_same_state_in_password_mode(&self, secret: &str, password: &str) -> Host {
        let opts = HostOptions {
            state_dir: self.state_dir().map(Path::to_path_buf),
            ..HostOptions::default()
        }
        .var("auth_mode", "password")
        .var("session_secret", secret)
        .var("chat_password", password);
        Host::start(opts).expect("own host")
    }

    /// Signs in with the shared password: the `Cookie` header value of the new session.
    pub fn password_login(&self, password: &str) -> String {
        let login = self.json(
            "POST",
            "/api/auth/login",
            &serde_json::json!({ "password": password }),
        );
        assert!(
            login.status == 200 || login.status == 204,
            "login: {} {}",
            login.status,
            login.text()
        );
        let set_cookie = login.header("set-cookie").expect("a session cookie");
        set_cookie.split(';').next().unwrap().to_string()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// The `Origin` a browser on this app would send (for state-changing requests).
    pub fn origin(&self) -> String {
        self.base.clone()
    }

    /// A client that never follows redirects and never treats a status as an error.
    pub fn client(&self) -> ureq::Agent {
        ureq::AgentBuilder::new()
            .redirects(0)
            .timeout(Duration::from_secs(60))
            .build()
    }

    /// Sends a request and returns (status, headers, body) — any status is a value, not an error.
    pub fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
    ) -> Response {
        let mut req = self.client().request(method, &self.url(path));
        for (k, v) in headers {
            req = req.set(k, v);
        }
        let result = match body {
            Some(b) => req.send_bytes(b),
            None => req.call(),
        };
        let resp = match result {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => panic!("{method} {path}: transport error: {e}"),
        };
        Response::from_ureq(resp)
    }

    pub fn get(&self, path: &str) -> Response {
        self.send("GET", path, &[], None)
    }

    /// A same-origin JSON request, as the app's own pages send it.
    pub fn json(&self, method: &str, path: &str, body: &serde_json::Value) -> Response {
        let origin = self.origin();
        let b = serde_json::to_vec(body).expect("json");
        self.send(
            method,
            path,
            &[
                ("content-type", "application/json"),
                ("origin", &origin),
                ("sec-fetch-site", "same-origin"),
            ],
            Some(&b),
        )
    }
}

impl Drop for Host {
    /// Stops the whole process group, so no server of a finished test is left listening.
    fn drop(&mut self) {
        self.stop();
    }
}

/// Sends `signal` to the process group `child` leads (the harness starts each host in a group
/// of its own).
fn signal_group(child: &Child, signal: libc::c_int) {
    // SAFETY: kill(2) on a process group id the harness created; no memory is involved.
    unsafe {
        libc::kill(-(child.id() as libc::pid_t), signal);
    }
}

/// Whether `addr` can be bound again within `timeout` (nothing listens on it).
pub fn wait_until_free(addr: SocketAddr, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if TcpListener::bind(addr).is_ok() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The processes whose parent is `leader` and that are in its process group.
fn children_in_group(leader: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found: Vec<u32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            // /proc/<pid>/stat: "pid (comm) state ppid pgrp ..."; comm may contain spaces.
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
                return false;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            fields.get(1) == Some(&leader.to_string().as_str())
                && fields.get(2) == Some(&leader.to_string().as_str())
        })
        .collect();
    found.sort_unstable();
    found
}

/// A fully read response.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    fn from_ureq(r: ureq::Response) -> Self {
        let status = r.status();
        let headers = r
            .headers_names()
            .into_iter()
            .flat_map(|n| {
                r.all(&n)
                    .into_iter()
                    .map(|v| (n.clone(), v.to_string()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut body = Vec::new();
        let _ = r.into_reader().take(64 << 20).read_to_end(&mut body);
        Response {
            status,
            headers,
            body,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body as JSON; panics with the body when it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}), status {}: {}", self.status, self.text()))
    }

    /// The error's code, if this is an error body: `error.code` of the app's envelope
    /// (`{"error":{"code","message"}}`), or `code` of eve's (`{"ok":false,"code","error"}`).
    pub fn error_code(&self) -> Option<String> {
        let v = self.json();
        let code = match v.get("error")? {
            serde_json::Value::String(_) => v.get("code")?,
            error => error.get("code")?,
        };
        code.as_str().map(str::to_string)
    }
}
