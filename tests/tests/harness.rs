//! The harness starts any Spin-compatible binary (`EVE_CHAT_SPIN_BIN`) with the flags that
//! real Spin 4.x documents for `spin up` and `spin build`, and nothing else.

use eve_chat_tests::{
    ensure_built, host_binary, spin_build_args, spin_up_args, Host, HostOptions, SPIN_UP_FLAGS,
};
use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::Path;

/// Every long flag of `spin up --help` in Spin 4.x: the up command's own, the options every
/// trigger takes, the HTTP trigger's and the runtime factors' (spinframework/spin
/// `src/commands/up.rs`, `crates/trigger/src/cli.rs`, `crates/trigger-http`,
/// `crates/runtime-factors`).
const SPIN_4_UP_HELP: &[&str] = &[
    "--from",
    "--profile",
    "--insecure",
    "--env",
    "--temp",
    "--cache-dir",
    "--direct-mounts",
    "--build",
    "--component-id",
    "--log-dir",
    "--truncate-logs",
    "--disable-cache",
    "--cache",
    "--disable-pooling",
    "--follow",
    "--quiet",
    "--runtime-config-file",
    "--state-dir",
    "--listen",
    "--tls-cert",
    "--tls-key",
    "--find-free-port",
    "--variable",
    "--key-value",
    "--sqlite",
    "--max-instance-memory",
    "--help",
];

/// Every long flag of `spin build --help` in Spin 4.x.
const SPIN_4_BUILD_HELP: &[&str] = &["--from", "--component-id", "--up", "--skip-target-checks"];

fn flags(args: &[OsString]) -> Vec<String> {
    args.iter()
        .filter_map(|a| a.to_str())
        .filter(|a| a.starts_with('-'))
        .map(str::to_string)
        .collect()
}

fn everything_configured() -> HostOptions {
    HostOptions {
        runtime_config: Some("/tmp/rc.toml".into()),
        ..HostOptions::default()
            .var("auth_mode", "password")
            .var("chat_password", "a long shared passphrase")
    }
}

#[test]
fn spin_up_is_given_only_flags_that_spin_4_documents() {
    let args = spin_up_args(
        &everything_configured(),
        "127.0.0.1:4321".parse::<SocketAddr>().unwrap(),
        Path::new("/tmp/state"),
    );
    assert_eq!(args[0], "up");
    let used = flags(&args);
    for f in &used {
        assert!(
            SPIN_4_UP_HELP.contains(&f.as_str()),
            "`{f}` is not a `spin up` flag"
        );
        assert!(SPIN_UP_FLAGS.contains(&f.as_str()), "`{f}` is not declared");
    }
    // Each value follows its flag, so the command line parses the same on real Spin.
    let listen = args.iter().position(|a| a == "--listen").unwrap();
    assert_eq!(args[listen + 1], "127.0.0.1:4321");
    let vars: Vec<_> = args
        .windows(2)
        .filter(|w| w[0] == "--variable")
        .map(|w| w[1].to_string_lossy().into_owned())
        .collect();
    assert!(vars.contains(&"auth_mode=password".to_string()), "{vars:?}");
    assert!(used.contains(&"--runtime-config-file".to_string()));
    assert!(used.contains(&"--state-dir".to_string()));
}

#[test]
fn spin_build_is_given_only_flags_that_spin_4_documents() {
    let args = spin_build_args(Path::new("/app/spin.toml"));
    assert_eq!(args[0], "build");
    for f in flags(&args) {
        assert!(
            SPIN_4_BUILD_HELP.contains(&f.as_str()),
            "`{f}` is not a `spin build` flag"
        );
    }
}

/// A stand-in for a Spin binary: records its command line, then runs the project's host with
/// it unchanged. If the harness passed anything the host does not take, the host would not
/// start; the recording shows exactly what was passed.
#[test]
fn a_binary_named_like_eve_chat_spin_bin_is_started_with_exactly_those_flags() {
    ensure_built();
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("argv");
    let fake = dir.path().join("spin");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" >> '{}'\nexec '{}' \"$@\"\n",
            record.display(),
            host_binary().display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();

    let opts = HostOptions {
        binary: Some(fake.clone()),
        ..HostOptions::default().var("chat_create_per_hour", "7")
    };
    let Some(mut host) = Host::start(opts) else {
        return;
    };
    assert!(
        !host.is_project_host(),
        "a binary of another name is not ours"
    );
    let setup = host.get("/api/setup");
    assert_eq!(setup.status, 200, "{}", setup.text());
    assert_eq!(setup.json()["authMode"], "local-dev");
    // A restart starts the same binary again, on the same address.
    let base = host.base.clone();
    host.restart();
    assert_eq!(host.base, base);
    assert_eq!(host.get("/api/setup").status, 200);

    let recorded = std::fs::read_to_string(&record).unwrap();
    let argv: Vec<&str> = recorded.lines().collect();
    let ups = argv.iter().filter(|a| **a == "up").count();
    assert_eq!(ups, 2, "{argv:?}");
    for a in argv.iter().filter(|a| a.starts_with('-')) {
        assert!(SPIN_4_UP_HELP.contains(a), "`{a}` is not a `spin up` flag");
    }
    assert!(argv.contains(&"chat_create_per_hour=7"), "{argv:?}");
    assert!(argv.contains(&"auth_mode=local-dev"), "{argv:?}");
}

/// Whether process `pid` has ended (gone, or a zombie waiting to be reaped).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
    }
}

/// `spin up` forks `spin trigger http`, and the project's host does the same: SIGKILL of the
/// process the harness started leaves its child serving (and finishing the turns a test meant
/// to kill). So the harness kills the host's whole process group, checks that the port is
/// free before a restart, and leaves nothing running when a host is dropped.
#[test]
fn killing_only_spin_up_leaves_its_trigger_serving_so_the_harness_kills_the_group() {
    let Some(mut host) = Host::start(HostOptions::default()) else {
        return;
    };
    let parent = host.parent_pid().expect("own host");
    let server = host.pid().expect("own host");
    assert_ne!(
        parent, server,
        "`up` serves from a child process, as `spin up` does"
    );
    // SAFETY: kill(2) of a process this test's host started.
    unsafe {
        libc::kill(parent as libc::pid_t, libc::SIGKILL);
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!ended(server), "the trigger died with its parent");
    assert_eq!(
        host.get("/api/setup").status,
        200,
        "the orphaned trigger still serves"
    );
    // The harness's kill takes the group: the orphan goes, the port is free, the restart
    // serves on the same address.
    let base = host.base.clone();
    host.kill_and_restart();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !ended(server) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        ended(server),
        "the orphaned trigger survived the group kill"
    );
    assert_eq!(host.base, base);
    assert_eq!(host.get("/api/setup").status, 200);
    // Dropping a host stops its whole group: nothing listens on its address afterwards.
    let server = host.pid().expect("own host");
    let listen = host.listen_addr().expect("own host");
    drop(host);
    assert!(ended(server), "a dropped host left its trigger running");
    assert!(eve_chat_tests::wait_until_free(
        listen,
        std::time::Duration::from_secs(1)
    ));
}

/// SIGTERM (or Ctrl-C) of `spin up` alone stops the trigger it forked, and `up` exits once
/// the trigger has: Spin passes the signal on (`ctrlc` with its `termination` feature), and so
/// does the project's host.
#[test]
fn sigterm_of_spin_up_alone_stops_its_trigger_too() {
    let Some(host) = Host::start(HostOptions::default()) else {
        return;
    };
    let parent = host.parent_pid().expect("own host");
    let server = host.pid().expect("own host");
    let listen = host.listen_addr().expect("own host");
    // SAFETY: kill(2) of a process this test's host started.
    unsafe {
        libc::kill(parent as libc::pid_t, libc::SIGTERM);
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while !(ended(parent) && ended(server)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(ended(server), "the trigger outlived a SIGTERM of `up`");
    assert!(ended(parent), "`up` did not exit after its trigger");
    assert!(eve_chat_tests::wait_until_free(
        listen,
        std::time::Duration::from_secs(1)
    ));
}
