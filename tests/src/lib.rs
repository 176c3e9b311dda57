//! The integration-test harness.
//!
//! [`Host::shared`] gives a running eve-chat to test against: the instance at
//! `EVE_CHAT_BASE_URL` when that is set (a real `spin up`, say), otherwise the project's
//! local host started on a free loopback port with a fresh state directory. Tests that must
//! configure, restart or kill the host use [`Host::start`], which answers `None` (and the test
//! skips, saying so) when the suite runs against an outside instance.
//!
//! The harness builds what it runs once per test binary: the host (`cargo build --profile
//! host -p spin-local`) and the components (`spin-local build`). Set `EVE_CHAT_SKIP_BUILD=1`
//! when a script has already built them.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

pub use ureq;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The local host binary.
pub fn host_binary() -> PathBuf {
    repo_root().join("target/host/spin-local")
}

static BUILD: Once = Once::new();

/// Builds the host and the app's components, once per test process.
pub fn ensure_built() {
    BUILD.call_once(|| {
        if std::env::var_os("EVE_CHAT_SKIP_BUILD").is_some() && host_binary().exists() {
            return;
        }
        run(Command::new(env!("CARGO"))
            .args(["build", "--profile", "host", "-p", "spin-local"])
            .current_dir(repo_root()));
        run(Command::new(host_binary())
            .args(["build"])
            .current_dir(repo_root()));
    });
}

fn run(cmd: &mut Command) {
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(status.success(), "{cmd:?} failed: {status}");
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

/// A running host (or an outside instance).
pub struct Host {
    pub base: String,
    child: Option<Child>,
    opts: HostOptions,
    state_dir: Option<PathBuf>,
    _temp: Option<tempfile::TempDir>,
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
                opts: HostOptions::default(),
                state_dir: None,
                _temp: None,
                log: Default::default(),
            };
        }
        Host::start(HostOptions::default()).expect("local host")
    }

    /// A host of our own with `opts`; `None` when testing an outside instance (the caller
    /// skips: configuring or restarting someone else's server is not possible).
    pub fn start(opts: HostOptions) -> Option<Host> {
        if external_base_url().is_some() {
            eprintln!(
                "skipped: this test needs its own configurable host, and EVE_CHAT_BASE_URL is set"
            );
            return None;
        }
        ensure_built();
        let (temp, state_dir) = match &opts.state_dir {
            Some(d) => (None, d.clone()),
            None => {
                let t = tempfile::tempdir().expect("temp dir");
                let d = t.path().join(".spin");
                (Some(t), d)
            }
        };
        let mut host = Host {
            base: String::new(),
            child: None,
            opts,
            state_dir: Some(state_dir),
            _temp: temp,
            log: Default::default(),
        };
        host.spawn();
        Some(host)
    }

    fn spawn(&mut self) {
        let mut cmd = Command::new(host_binary());
        cmd.arg("up")
            .arg("--skip-build")
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--from")
            .arg(&self.opts.manifest)
            .arg("--state-dir")
            .arg(self.state_dir.as_ref().expect("own host has a state dir"));
        for (k, v) in &self.opts.variables {
            cmd.arg("--variable").arg(format!("{k}={v}"));
        }
        if let Some(rc) = &self.opts.runtime_config {
            cmd.arg("--runtime-config-file").arg(rc);
        }
        for (k, v) in &self.opts.env {
            cmd.env(k, v);
        }
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(Stdio::null());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", host_binary().display()));
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let log = self.log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut l = log.lock().unwrap_or_else(|p| p.into_inner());
                l.push_str(&line);
                l.push('\n');
            }
        });
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if !sent {
                    if let Some(url) = line.strip_prefix("Serving http://") {
                        let _ = tx.send(format!("http://{}", url.trim()));
                        sent = true;
                    }
                }
            }
        });
        match rx.recv_timeout(Duration::from_secs(120)) {
            Ok(base) => {
                self.base = base;
                self.child = Some(child);
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the host did not start; its log:\n{}", self.log());
            }
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
        self.spawn();
    }

    /// SIGKILLs the host (no cleanup at all), then starts it again on the same state.
    pub fn kill_and_restart(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.spawn();
    }

    /// Stops the host: SIGTERM, then SIGKILL if it has not exited within 10 s.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(c.id().to_string())
                .status();
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = c.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// The host's process id (own hosts only), e.g. to read its memory use.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// The state directory (own hosts only).
    pub fn state_dir(&self) -> Option<&Path> {
        self.state_dir.as_deref()
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
    fn drop(&mut self) {
        self.stop();
    }
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

    /// The error envelope's code, if this is one.
    pub fn error_code(&self) -> Option<String> {
        self.json()
            .get("error")?
            .get("code")?
            .as_str()
            .map(str::to_string)
    }
}
