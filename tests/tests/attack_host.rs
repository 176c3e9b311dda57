//! The local host under attack (issue 12, items 6 and 10): what one client or one component
//! can exhaust (slow clients, a guest in an endless loop, a memory hog, a component that never
//! answers), and what a guest can reach (other files through SQLite, private components
//! through a wildcard outbound grant, files outside the app through `files` mounts).
//!
//! The guest is `tests/components/runaway`, a test-only component mounted several times in a
//! manifest each test writes to a temporary directory. These limits are the project host's
//! own (real Spin has no such defaults), so every test here is `host_only_`.

use eve_chat_tests::{host_binary, is_project_host, repo_root, spin_binary, Host, HostOptions};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Builds the test component once per test process and returns its `.wasm`.
fn runaway_wasm() -> &'static Path {
    static WASM: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    WASM.get_or_init(|| {
        let status = Command::new(env!("CARGO"))
            .args([
                "build",
                "--target",
                "wasm32-wasip2",
                "--release",
                "-p",
                "runaway",
            ])
            .current_dir(repo_root())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building tests/components/runaway failed");
        let wasm = repo_root().join("target/wasm32-wasip2/release/runaway.wasm");
        assert!(wasm.is_file(), "{} was not built", wasm.display());
        wasm
    })
}

/// A manifest mounting the test component as `probe` (`/...`, with the default database),
/// `wild` (`/wild/...`, every outbound host by wildcard), `chain` (`/chain/...`, service
/// chaining by `http://*.spin.internal`) and `private` (no route). `files` is put on `probe`.
fn write_manifest(dir: &Path, files: &str) -> PathBuf {
    let wasm = runaway_wasm().display().to_string();
    let manifest = dir.join("spin.toml");
    std::fs::write(
        &manifest,
        format!(
            r#"spin_manifest_version = 2
[application]
name = "attack-host"
[[trigger.http]]
route = "/..."
component = "probe"
[[trigger.http]]
route = "/wild/..."
component = "wild"
[[trigger.http]]
route = "/chain/..."
component = "chain"
[[trigger.http]]
route = {{ private = true }}
component = "private"
[component.probe]
source = "{wasm}"
sqlite_databases = ["default"]
files = [{files}]
[component.wild]
source = "{wasm}"
allowed_outbound_hosts = ["https://*:*", "*://*:*"]
[component.chain]
source = "{wasm}"
allowed_outbound_hosts = ["http://*.spin.internal"]
[component.private]
source = "{wasm}"
"#
        ),
    )
    .unwrap();
    manifest
}

/// Whether the suite runs the project's own host; these limits are its own, not Spin's.
fn project_host(why: &str) -> bool {
    if is_project_host(&spin_binary()) {
        return true;
    }
    eve_chat_tests::skip(&format!(
        "host_only test ({why}), and another Spin binary is configured"
    ));
    false
}

/// The test app on a fresh host with `env` (the `SPIN_LOCAL_*` limits).
fn start(dir: &Path, env: &[(&str, &str)]) -> Host {
    let manifest = write_manifest(dir, "");
    Host::start_project_host(HostOptions {
        manifest,
        variables: vec![],
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        runtime_config: None,
        state_dir: None,
        binary: None,
    })
    .expect("the project host starts (no EVE_CHAT_BASE_URL for this suite)")
}

fn addr(host: &Host) -> SocketAddr {
    host.base.trim_start_matches("http://").parse().unwrap()
}

/// A connection to the host from `from` (another loopback address than the test's normal
/// client, so a per-address limit on it does not touch the normal client).
fn connect_from(from: &str, to: SocketAddr) -> TcpStream {
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let bind: SocketAddr = format!("{from}:0").parse().unwrap();
    s.bind(&bind.into()).unwrap();
    s.connect(&to.into()).unwrap();
    s.into()
}

/// Reads until the peer closes or `limit` passes; returns what came and whether it closed.
fn read_until_closed(s: &mut TcpStream, limit: Duration) -> (String, bool) {
    let deadline = Instant::now() + limit;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while Instant::now() < deadline {
        s.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        match s.read(&mut buf) {
            Ok(0) => return (String::from_utf8_lossy(&got).into_owned(), true),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            // A reset is the host closing on us too.
            Err(_) => return (String::from_utf8_lossy(&got).into_owned(), true),
        }
    }
    (String::from_utf8_lossy(&got).into_owned(), false)
}

#[test]
fn host_only_slow_bodies_and_an_endless_loop_leave_other_clients_served() {
    if !project_host("it checks the project host's own connection and CPU limits") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // The CPU budget is lowered so the loop's end is seen within the test; every other limit
    // is the default.
    let host = start(dir.path(), &[("SPIN_LOCAL_CPU_LIMIT_SECS", "3")]);
    let to = addr(&host);

    // 1,000 clients from 127.0.0.2 each promise a megabyte of body and send ten bytes. Each
    // one the host admits holds a component instance waiting for the rest.
    let mut slow = Vec::new();
    for _ in 0..1000 {
        let mut s = connect_from("127.0.0.2", to);
        s.write_all(b"POST /ok HTTP/1.1\r\nhost: x\r\ncontent-length: 1000000\r\n\r\n0123456789")
            .unwrap();
        slow.push(s);
    }

    // A guest that spins forever, started while the slow clients hold their places.
    let looping = {
        let url = host.url("/loop");
        let client = host.client();
        std::thread::spawn(move || match client.get(&url).call() {
            Ok(r) => r.status(),
            Err(ureq::Error::Status(code, _)) => code,
            Err(e) => panic!("GET /loop: transport error: {e}"),
        })
    };

    // Other clients are served meanwhile.
    for _ in 0..5 {
        let r = host.get("/ok");
        assert_eq!(
            (r.status, r.text().as_str()),
            (200, "ok"),
            "a normal request under attack; host log:\n{}",
            tail(&host.log())
        );
    }

    // The slow clients beyond the per-address cap were answered 429 and closed.
    let (answer, closed) = read_until_closed(slow.last_mut().unwrap(), Duration::from_secs(60));
    assert!(
        closed && answer.starts_with("HTTP/1.1 429"),
        "the 1000th connection from one address: closed={closed} {answer:?}"
    );

    // The loop is stopped at its CPU budget (500), not left spinning.
    let status = looping.join().unwrap();
    assert_eq!(status, 500, "the endless loop; log:\n{}", tail(&host.log()));
    let log = host.wait_for_log(Duration::from_secs(10), |l| {
        l.contains("used up its CPU time")
    });
    assert!(
        log.contains("[probe] component trapped: used up its CPU time"),
        "{}",
        tail(&log)
    );
    drop(slow);
    let r = host.get("/ok");
    assert_eq!(r.status, 200, "after the attack");
}

#[test]
fn host_only_a_memory_hog_fails_at_its_cap_and_others_are_served() {
    if !project_host("it checks the project host's memory cap") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = start(dir.path(), &[("SPIN_LOCAL_MAX_INSTANCE_MEMORY_MIB", "32")]);
    let r = host.get("/hog");
    assert_eq!(r.status, 500, "the hog; log:\n{}", tail(&host.log()));
    let log = host.wait_for_log(Duration::from_secs(10), |l| l.contains("memory allocation"));
    assert!(
        log.contains("[probe] memory allocation of"),
        "the guest's allocation failed at the cap:\n{}",
        tail(&log)
    );
    // It got close to the 32 MiB cap, and no further.
    assert!(log.contains("[probe] holding 16 MiB"), "{}", tail(&log));
    assert!(
        !log.contains("[probe] holding 32 MiB"),
        "the hog grew past its 32 MiB cap:\n{}",
        tail(&log)
    );
    let r = host.get("/ok");
    assert_eq!((r.status, r.text().as_str()), (200, "ok"));
}

#[test]
fn host_only_a_client_slow_to_send_headers_is_cut_off() {
    if !project_host("it checks the project host's header-read timeout") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = start(dir.path(), &[("SPIN_LOCAL_HEADER_READ_TIMEOUT_SECS", "1")]);
    let mut s = TcpStream::connect(addr(&host)).unwrap();
    s.write_all(b"GET /ok HTTP/1.1\r\nhost: x\r\n").unwrap();
    let (_, closed) = read_until_closed(&mut s, Duration::from_secs(60));
    assert!(
        closed,
        "a connection that never finished its headers is still open"
    );
    let r = host.get("/ok");
    assert_eq!(r.status, 200);
}

#[test]
fn host_only_a_request_without_an_answer_in_time_gets_504() {
    if !project_host("it checks the project host's request deadline") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = start(dir.path(), &[("SPIN_LOCAL_REQUEST_TIMEOUT_SECS", "2")]);
    let mut s = TcpStream::connect(addr(&host)).unwrap();
    // The body never completes, so the component never gets to answer.
    s.write_all(b"POST /ok HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n0123456789")
        .unwrap();
    let (answer, _) = read_until_closed(&mut s, Duration::from_secs(60));
    assert!(
        answer.starts_with("HTTP/1.1 504"),
        "{answer:?}; log:\n{}",
        tail(&host.log())
    );
    let log = host.wait_for_log(Duration::from_secs(10), |l| {
        l.contains("--request-timeout-secs")
    });
    assert!(log.contains("[probe] no response within"), "{}", tail(&log));
    let r = host.get("/ok");
    assert_eq!(r.status, 200);
}

#[test]
fn host_only_a_stream_outlives_the_request_deadline_and_ends_at_its_lifetime() {
    if !project_host("it checks the project host's stream lifetime") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = start(
        dir.path(),
        &[
            ("SPIN_LOCAL_REQUEST_TIMEOUT_SECS", "1"),
            ("SPIN_LOCAL_MAX_INSTANCE_LIFETIME_SECS", "5"),
        ],
    );
    let mut s = TcpStream::connect(addr(&host)).unwrap();
    let sent = Instant::now();
    s.write_all(b"GET /stream HTTP/1.1\r\nhost: x\r\n\r\n")
        .unwrap();
    // The stream never ends by itself: only the lifetime ends it.
    let (got, closed) = read_until_closed(&mut s, Duration::from_secs(120));
    let lived = sent.elapsed();
    assert!(
        got.starts_with("HTTP/1.1 200"),
        "{got:?}; log:\n{}",
        tail(&host.log())
    );
    assert!(closed, "the stream was still open after 120 s");
    // Cut at the 1 s request deadline it would have lived about a second; the bound only
    // grows on a slow machine.
    assert!(
        lived >= Duration::from_secs(4),
        "the stream ended after {lived:?}, before its 5 s lifetime"
    );
    assert!(got.matches("tick").count() > 1, "{got:?}");
    let log = host.wait_for_log(Duration::from_secs(10), |l| l.contains("response body cut"));
    assert!(
        log.contains("[probe] response body cut: the instance reached its lifetime"),
        "{}",
        tail(&log)
    );
    let r = host.get("/ok");
    assert_eq!(r.status, 200);
}

fn sql(host: &Host, statement: &str) -> serde_json::Value {
    let r = host.send("POST", "/sql", &[], Some(statement.as_bytes()));
    assert_eq!(r.status, 200, "{statement}: {}", r.text());
    r.json()
}

#[test]
fn host_only_guest_sql_cannot_reach_other_files_or_load_extensions() {
    if !project_host("it checks the project host's SQLite confinement") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = start(dir.path(), &[]);
    let outside = dir.path().join("outside.db");
    let o = outside.display();
    for statement in [
        format!("ATTACH DATABASE '{o}' AS x"),
        format!("VACUUM INTO '{o}'"),
        "ATTACH DATABASE ':memory:' AS m".to_string(),
        "SELECT load_extension('/tmp/nope.so')".to_string(),
        "PRAGMA trusted_schema = ON".to_string(),
    ] {
        let v = sql(&host, &statement);
        let err = v["error"].as_str().unwrap_or_default();
        assert!(
            err.contains("authoriz") || err.contains("too many attached"),
            "{statement} was not refused: {v}"
        );
    }
    assert!(!outside.exists(), "a refused statement created {o}");
    // The guest keeps a working database.
    assert_eq!(
        sql(&host, "CREATE TABLE t (x)"),
        serde_json::json!({"rows": 0})
    );
    assert_eq!(
        sql(&host, "SELECT x FROM t UNION ALL SELECT 1"),
        serde_json::json!({"rows": 1})
    );
    assert_eq!(sql(&host, "PRAGMA trusted_schema")["rows"], 1);
}

#[test]
fn host_only_a_wildcard_outbound_grant_does_not_reach_private_components() {
    if !project_host("it checks the project host's service chaining grants") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = start(dir.path(), &[]);
    for target in [
        "http://private.spin.internal/ok",
        "https://private.spin.internal/ok",
    ] {
        let v = host.get(&format!("/wild/out?{target}")).json();
        assert!(
            v["error"]
                .as_str()
                .is_some_and(|e| e.contains("HttpRequestDenied")),
            "`*://*:*` reached {target}: {v}"
        );
    }
    // Naming spin.internal grants it.
    let v = host
        .get("/chain/out?http://private.spin.internal/ok")
        .json();
    assert_eq!(v, serde_json::json!({"status": 200}));
}

#[test]
fn host_only_files_outside_the_app_directory_stop_start_up() {
    if !project_host("it checks the project host's manifest errors") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let app = dir.path().join("app");
    std::fs::create_dir_all(&app).unwrap();
    std::fs::write(dir.path().join("secret.txt"), "s3cret").unwrap();
    // Spin 4.0.2's rule and words for what lies outside (`spin-loader`, `local.rs`).
    let outside = "cannot be mapped because it is outside the application directory. Files must be within the application directory.";
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("index.html"), "not the app's").unwrap();
    let absolute_dir = format!(
        r#"{{ source = "{}", destination = "/" }}"#,
        elsewhere.display()
    );
    for (files, want) in [
        (r#""../*.txt""#.to_string(), "`..`".to_string()),
        (r#""/etc/*.conf""#.into(), format!("/etc/*.conf {outside}")),
        (
            absolute_dir,
            format!("{}/**/* {outside}", elsewhere.display()),
        ),
        (
            r#"{ source = "..", destination = "/up" }"#.into(),
            "`..`".into(),
        ),
    ] {
        let manifest = write_manifest(&app, &files);
        let (ok, err) = up_exits(&manifest);
        assert!(
            !ok && err.contains("[component.probe]")
                && err.contains("files")
                && err.contains(&want),
            "{files}: {err}"
        );
    }
}

/// Runs `spin-local up` on `manifest` and waits (bounded) for it to exit: (success, stderr).
/// A host that starts serving instead is killed and reported.
fn up_exits(manifest: &Path) -> (bool, String) {
    let mut child = Command::new(host_binary())
        .args([
            "up",
            "-f",
            manifest.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (status.success(), err);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // The whole group: `up` and the trigger it forked.
    // SAFETY: kill(2) on the process group this function started.
    unsafe {
        libc::kill(-(child.id() as libc::pid_t), libc::SIGKILL);
    }
    let _ = child.wait();
    panic!(
        "{} started serving instead of refusing the manifest",
        manifest.display()
    );
}

/// The end of a long log, for assertion messages.
fn tail(log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}
