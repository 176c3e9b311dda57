//! The local MCP servers of tests/mcp-servers (`scripts/prepare` installs them), started on
//! loopback ports for the suites that call MCP tools, and the browser's part of a sign-in.
//! A server that does not start fails the test: nothing here skips itself.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{repo_root, Host};

/// A node MCP server on a loopback port, stopped when dropped.
pub struct NodeServer {
    child: Child,
    pub port: u16,
}

impl Drop for NodeServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `script args` under node in tests/mcp-servers with `PORT` set and waits until it
/// says `ready` on stderr; panics (with what it printed) if it does not.
pub fn node_server(script: &str, args: &[&str], env: &[(&str, &str)], ready: &str) -> NodeServer {
    let dir = repo_root().join("tests/mcp-servers");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/sdk").exists(),
        "tests/mcp-servers has no node_modules: run scripts/prepare (npm ci there)"
    );
    node_in(&dir, script, args, env, ready)
}

/// Starts `script args` under node in `dir` with `PORT` set and waits until it says `ready`
/// on stderr; panics (with what it printed) if it does not.
pub fn node_in(
    dir: &std::path::Path,
    script: &str,
    args: &[&str],
    env: &[(&str, &str)],
    ready: &str,
) -> NodeServer {
    let port = free_port();
    let mut cmd = Command::new("node");
    cmd.current_dir(dir)
        .arg(script)
        .args(args)
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("node starts");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = String::new();
    loop {
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(line) => {
                seen.push_str(&line);
                seen.push('\n');
                if line.contains(ready) {
                    return NodeServer { child, port };
                }
            }
            Err(_) if Instant::now() > deadline => {
                let _ = child.kill();
                panic!("{script} did not start within 60 s; it printed:\n{seen}");
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                let status = child.wait();
                panic!("{script} exited ({status:?}) before it was ready:\n{seen}");
            }
            Err(_) => {}
        }
    }
}

/// The OAuth-protected server (protected.mjs), issuing tokens good for `ttl_secs`.
pub fn protected(ttl_secs: u64) -> NodeServer {
    node_server(
        "protected.mjs",
        &[],
        &[("TOKEN_TTL_SECS", &ttl_secs.to_string())],
        "protected MCP server listening",
    )
}

/// Follows the sign-in of `required` as a browser would: the agent's connect page (302 to
/// the authorization server), the authorization endpoint (302 back to the agent's callback),
/// the callback. Returns the authorize URL.
pub fn sign_in(h: &Host, required: &Value) -> String {
    sign_in_as(h, required, &[])
}

/// [`sign_in`] by the person whose request `headers` (their cookie) are given.
pub fn sign_in_as(h: &Host, required: &Value, headers: &[(&str, &str)]) -> String {
    let connect = required["data"]["authorization"]["url"].as_str().unwrap();
    let r = h.send("GET", connect, headers, None);
    assert_eq!(r.status, 302, "{}", r.text());
    let authorize = r.header("location").unwrap().to_string();
    let back = match h.client().get(&authorize).call() {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("the authorization endpoint: {e}"),
    };
    assert_eq!(back.status(), 302, "{:?}", back.into_string());
    let callback = back.header("location").unwrap().to_string();
    let path = callback
        .strip_prefix(&h.origin())
        .unwrap_or_else(|| panic!("the callback {callback} is on the app's origin"));
    let done = h.send("GET", path, headers, None);
    assert_eq!(done.status, 200, "{}", done.text());
    authorize
}

/// A `mcp_connections` entry for a local server.
pub fn connection(name: &str, port: u16) -> Value {
    serde_json::json!({ "name": name, "url": format!("http://127.0.0.1:{port}/mcp") })
}
