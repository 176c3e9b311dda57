//! The local host against real Spin's recorded behaviour, and the foundation guarantees:
//! routing to the right component, private components, persistence across restarts,
//! atomic counters under concurrency, outbound denial, and clear start-up errors.

use eve_chat_tests::{
    ensure_built, host_binary, is_project_host, repo_root, spin_binary, Host, HostOptions,
    SPIN_BIN_ENV,
};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The conformance probe app, copied under `target/` and built once per test process (a
/// fixed path, so repeated runs reuse the compiled probe). Returns its manifest. Test
/// processes may run side by side (`cargo nextest` runs each test in a process of its own):
/// one at a time copies and builds, under a file lock, and a file is rewritten only when it
/// changed, so a probe host another process is running keeps its files.
fn probe_app() -> &'static Path {
    static APP: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    APP.get_or_init(|| {
        let src = repo_root().join("tests/spin-conformance");
        let dir = repo_root().join("target/spin-conformance/app");
        std::fs::create_dir_all(&dir).unwrap();
        let lock = std::fs::File::create(dir.with_file_name("build.lock")).unwrap();
        lock.lock().unwrap();
        for entry in [
            "Cargo.toml",
            "Cargo.lock",
            "spin.toml",
            "run.py",
            "expected-spin-4.0.2.jsonl",
        ] {
            copy_if_changed(&src.join(entry), &dir.join(entry));
        }
        copy_dir(&src.join("src"), &dir.join("src"));
        copy_dir(&src.join("static"), &dir.join("static"));
        let status = Command::new(env!("CARGO"))
            .args(["build", "--target", "wasm32-wasip2", "--release"])
            .current_dir(&dir)
            .status()
            .unwrap();
        assert!(status.success(), "building the probe failed");
        drop(lock);
        dir.join("spin.toml")
    })
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.path().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            copy_if_changed(&e.path(), &to.join(e.file_name()));
        }
    }
}

fn copy_if_changed(from: &Path, to: &Path) {
    let bytes = std::fs::read(from).unwrap();
    if std::fs::read(to).ok().as_deref() != Some(&bytes[..]) {
        std::fs::write(to, bytes).unwrap();
    }
}

fn probe_host(manifest: &Path) -> Option<Host> {
    Host::start(HostOptions {
        manifest: manifest.to_path_buf(),
        variables: vec![],
        env: vec![("SPIN_VARIABLE_SECRET_THING".into(), "s3cret".into())],
        runtime_config: None,
        state_dir: None,
        binary: None,
    })
}

#[test]
fn host_only_answers_the_conformance_requests_exactly_as_spin_4_0_2() {
    if !own_binary_is_the_project_host("the conformance replay checks the project's host itself") {
        return;
    }
    let manifest = probe_app();
    let dir = manifest.parent().unwrap();
    let Some(host) = probe_host(manifest) else {
        return;
    };
    let got = dir.join("got.jsonl");
    let status = Command::new("python3")
        .arg(dir.join("run.py"))
        .arg(&host.base)
        .arg(&got)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("python3 runs the recorded request list");
    assert!(status.success());
    let expected = std::fs::read_to_string(dir.join("expected-spin-4.0.2.jsonl")).unwrap();
    let got = std::fs::read_to_string(&got).unwrap();
    let (e, g): (Vec<_>, Vec<_>) = (expected.lines().collect(), got.lines().collect());
    assert_eq!(e.len(), g.len(), "a different number of cases");
    let diffs: Vec<String> = e
        .iter()
        .zip(&g)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| format!("spin: {a}\nours: {b}"))
        .collect();
    assert!(
        diffs.is_empty(),
        "{} of {} cases differ from Spin 4.0.2:\n{}",
        diffs.len(),
        e.len(),
        diffs.join("\n\n")
    );
}

#[test]
fn key_value_and_sqlite_data_survive_a_restart() {
    let manifest = probe_app();
    let Some(mut host) = probe_host(manifest) else {
        return;
    };
    assert_eq!(
        host.get("/api/kv").json()["before"],
        serde_json::Value::Null
    );
    let sql = host.get("/api/sql").json();
    assert!(
        sql["count"].as_str().unwrap().contains("Integer(1)"),
        "{sql}"
    );
    host.restart();
    assert_eq!(host.get("/api/kv").json()["before"], "1");
    let sql = host.get("/api/sql").json();
    assert!(
        sql["count"].as_str().unwrap().contains("Integer(2)"),
        "rows written before the restart are gone: {sql}"
    );
    host.kill_and_restart();
    let sql = host.get("/api/sql").json();
    assert!(
        sql["count"].as_str().unwrap().contains("Integer(3)"),
        "rows lost after SIGKILL: {sql}"
    );
}

#[test]
fn concurrent_wasi_keyvalue_increments_on_one_key_lose_no_update() {
    let manifest = probe_app();
    let Some(host) = probe_host(manifest) else {
        return;
    };
    let host = std::sync::Arc::new(host);
    let threads: Vec<_> = (0..16)
        .map(|_| {
            let h = host.clone();
            std::thread::spawn(move || {
                for _ in 0..25 {
                    assert_eq!(h.get("/api/incr?burst").status, 200);
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    let last = host.get("/api/incr?burst").json();
    assert_eq!(last["value"], "Ok(401)", "{last}");
}

#[test]
fn outbound_request_to_a_host_not_allowed_fails_inside_the_component() {
    let manifest = probe_app();
    let Some(host) = probe_host(manifest) else {
        return;
    };
    let r = host.get("/out?http://example.com/");
    assert_eq!(r.status, 200, "the host must not fail the request itself");
    assert_eq!(
        r.json()["error"]["error"],
        "Http(ErrorCode::HttpRequestDenied)"
    );
    // Allowed, and really sent: the probe may call any 127.0.0.1 port, here its own host.
    let own = format!(
        "/out?{}/api/var",
        host.base.replace("/", "%2F").replace(":", "%3A")
    );
    let r = host.get(&own).json();
    assert_eq!(r["status"], 200, "{r}");
}

#[test]
fn host_only_every_route_answers_from_its_own_component_per_the_request_log() {
    let Some(host) = Host::start_project_host(HostOptions::default()) else {
        return;
    };
    let cases = [
        ("/", "shell"),
        ("/chat/abc", "shell"),
        ("/api/setup", "auth"),
        ("/api/auth/session", "auth"),
        ("/api/chats", "chats"),
        ("/api/chats/abc", "chats"),
        ("/api/chats/abc/export", "chats"),
        ("/api/chats/abc/events", "events"),
        ("/eve/v1/session/abc/stream", "eve-proxy"),
        ("/eve/v1/slack", "slack"),
    ];
    for (path, _) in &cases {
        host.get(path);
    }
    let lines: Vec<String> = cases
        .iter()
        .map(|(path, component)| format!("GET {path} -> {component} "))
        .collect();
    let log = host.wait_for_log(Duration::from_secs(10), |log| {
        lines.iter().all(|l| log.contains(l.as_str()))
    });
    for (path, component) in cases {
        let line = format!("GET {path} -> {component} ");
        assert!(
            log.contains(&line),
            "expected `{line}` in the host log:\n{log}"
        );
    }
}

#[test]
fn host_only_private_agent_is_unreachable_from_outside_but_reachable_through_eve_proxy() {
    let Some(host) = Host::start_project_host(HostOptions::default()) else {
        return;
    };
    // No public route leads to the agent, whatever the path or Host header says.
    for path in ["/agent", "/agent/eve/v1/session"] {
        host.send("GET", path, &[("host", "agent.spin.internal")], None);
    }
    // Through eve-proxy it answers: a new session is created by the agent (eve's 202, the
    // session named in the body and in `x-eve-session-id`).
    let r = host.json(
        "POST",
        "/eve/v1/session",
        &serde_json::json!({ "message": "hello" }),
    );
    eve_chat_tests::eve::assert_accepted(&r, None);
    let log = host.wait_for_log(Duration::from_secs(10), |log| {
        log.contains("POST /eve/v1/session -> eve-proxy ")
    });
    assert!(
        !log.contains(" -> agent ")
            || log
                .lines()
                .filter(|l| l.contains(" -> agent "))
                .all(|l| l.contains("(chained)")),
        "{log}"
    );
    assert!(
        log.contains("POST /eve/v1/session -> agent (chained)"),
        "eve-proxy did not reach the agent through service chaining:\n{log}"
    );
}

/// Whether the suite starts the project's own host; says why the test skips when not.
fn own_binary_is_the_project_host(why: &str) -> bool {
    let bin = spin_binary();
    if is_project_host(&bin) {
        return true;
    }
    eve_chat_tests::skip(&format!(
        "host_only test ({why}), and {SPIN_BIN_ENV} names {}",
        bin.display()
    ));
    false
}

fn host_cli(args: &[&str], dir: &Path) -> (bool, String) {
    ensure_built();
    let out = Command::new(host_binary())
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn host_only_start_up_errors_name_the_file_and_the_problem() {
    if !own_binary_is_the_project_host("it checks the project host's own error messages") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("spin.toml");
    std::fs::write(
        &manifest,
        "spin_manifest_version = 2\n[application]\nname = \"t\"\n[variables]\ntoken = { required = true }\n[[trigger.http]]\nroute = \"/...\"\ncomponent = \"web\"\n[component.web]\nsource = \"missing.wasm\"\n[component.web.build]\ncommand = \"echo build me\"\n",
    )
    .unwrap();
    let m = manifest.to_str().unwrap();

    let (ok, err) = host_cli(&["up", "-f", m, "--listen", "127.0.0.1:0"], dir.path());
    assert!(
        !ok && err.contains("`token` is required") && err.contains("SPIN_VARIABLE_TOKEN"),
        "{err}"
    );

    let (ok, err) = host_cli(
        &[
            "up",
            "-f",
            m,
            "--listen",
            "127.0.0.1:0",
            "--variable",
            "token=x",
        ],
        dir.path(),
    );
    assert!(
        !ok && err.contains("missing.wasm")
            && err.contains("spin-local build")
            && err.contains("echo build me"),
        "{err}"
    );

    let (ok, err) = host_cli(&["up", "-f", m, "--variable", "nope=1"], dir.path());
    assert!(!ok && err.contains("no variable `nope`"), "{err}");

    std::fs::write(
        &manifest,
        "spin_manifest_version = 2\n[application]\nname = \"t\"\nbogus = 1\n",
    )
    .unwrap();
    let (ok, err) = host_cli(&["up", "-f", m], dir.path());
    assert!(
        !ok && err.contains("spin.toml") && err.contains("bogus"),
        "{err}"
    );
}

#[test]
fn host_only_a_listen_address_in_use_is_reported_clearly() {
    let Some(host) = Host::start_project_host(HostOptions::default()) else {
        return;
    };
    let addr = host.base.trim_start_matches("http://").to_string();
    let (ok, err) = host_cli(
        &[
            "up",
            "--listen",
            &addr,
            "--variable",
            "auth_mode=local-dev",
            "--state-dir",
            "/tmp/spin-local-inuse",
        ],
        &repo_root(),
    );
    assert!(!ok && err.contains("already in use"), "{err}");
}
