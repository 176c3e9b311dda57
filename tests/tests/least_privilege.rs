//! Least privilege in `spin.toml` (issue 19, item 6): every key-value store, SQLite database,
//! variable and outbound host a component is granted must be one its code uses. The test
//! reads `spin.toml` and each component's sources (`components/<id>/src`), and fails naming
//! the component and the grant its code never touches.
//!
//! What counts as "uses":
//! - a variable: its name as a string literal in the component's own sources, or a call there
//!   into a shared library that reads it ([`LIBRARY_READS`]; each of those is checked against
//!   the library's source too, so the table cannot vouch for a variable nobody reads);
//! - the key-value store `default`: a call into code that opens it (rate limits, stream slots,
//!   the logout check of every authenticated request);
//! - the SQLite database `default`: a call into `eve_spin::db`;
//! - an outbound host: a component that sends no request may have none; a named host must be
//!   named in the component's code or the agent library it sends with; wildcard and loopback
//!   grants only where a variable names the destination ([`CONFIGURED_HOSTS`]).
//!
//! No host needed: it reads files only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use eve_chat_tests::repo_root;

/// Calls into shared code, and the variables that code reads: (pattern in the component's
/// sources, the library file that does the reading, the variables).
const LIBRARY_READS: &[(&[&str], &str, &[&str])] = &[
    // Authenticating a request: the mode, the cookie's key and binding, the allowlist, the
    // app's own origin (local-dev and same-origin checks).
    (
        &[
            "::authenticate(",
            "authenticate_session(",
            "authenticate_with(",
            "chat_request::serve",
            "api_component::admit_head(",
        ],
        "crates/eve-auth/src/config.rs",
        &[
            "auth_mode",
            "session_secret",
            "session_secret_previous",
            "chat_password",
            "oidc_issuer",
            "oidc_client_id",
            "oidc_client_secret",
            "app_base_url",
            "oidc_allowed_emails",
            "oidc_allowed_domains",
        ],
    ),
    // The settings page's bootstrap values (issue 22, docs/runtime.md "Settings").
    (
        &["settings::bootstrap("],
        "crates/eve-runtime/src/settings/mod.rs",
        &[
            "signup_allowed_domains",
            "quota_tokens_per_day",
            "tool_approvals",
            "outbound_allowed_hosts",
        ],
    ),
    // Accounts mode's sign-up (the setup token, open domains) and OIDC accounts (admins).
    (
        &["signup::sign_up("],
        "crates/eve-auth/src/config.rs",
        &[
            "admin_setup_token",
            "signup_allowed_domains",
            "oidc_admin_emails",
        ],
    ),
    // The per-address sign-in throttles believe X-Forwarded-For from these proxies only.
    (
        &["client_ip_with(", "client_ip("],
        "crates/eve-auth/src/config.rs",
        &["trusted_proxies"],
    ),
    // The upstream JWT: eve_jwt_secret with its issuer and audience, or local-dev's fixed key
    // (auth_mode, read through the sign-in configuration); /api/setup says when there is none
    // (see `the_agent_holds_no_session_secret_and_its_jwt_key_needs_only_the_mode`).
    (
        &[
            "UpstreamJwt::from_vars(",
            "jwt::missing(",
            "eve_agent_spin::Spin",
        ],
        "crates/eve-connections/src/jwt.rs",
        &["eve_jwt_secret", "eve_jwt_issuer", "eve_jwt_audience"],
    ),
    (
        &[
            "UpstreamJwt::from_vars(",
            "jwt::missing(",
            "eve_agent_spin::Spin",
        ],
        "crates/eve-auth/src/config.rs",
        &["auth_mode"],
    ),
    // The models a chat may choose (the agent runs them; setup reports missing keys).
    (
        &["config::models(", "eve_agent_spin::Spin"],
        "crates/eve-providers/src/config.rs",
        &[
            "llm_provider",
            "llm_base_url",
            "llm_api_key",
            "llm_model",
            "llm_models",
            "llm_openai_api_key",
            "llm_anthropic_api_key",
            "llm_max_tokens",
            "llm_context_tokens",
            "demo_pacing_ms",
        ],
    ),
    // Providers as data (issue 22): the models offered past the outbound guard, their keys
    // opened.
    (
        &["offered::choices(", "eve_agent_spin::Spin"],
        "crates/eve-providers/src/offered.rs",
        &[
            "secrets_key",
            "secrets_key_previous",
            "outbound_allowed_hosts",
        ],
    ),
    // The agent's service reads its own settings through `eve_agent_spin::Spin`'s `AgentEnv`.
    (
        &["eve_agent_spin::Spin"],
        "crates/eve-agent/src/service/env.rs",
        &[
            "mcp_connections",
            "mcp_timeout_secs",
            "attachment_max_bytes",
            "attachment_types",
            "attachment_quota_bytes",
            "outbound_allowed_hosts",
            "secrets_key",
            "secrets_key_previous",
        ],
    ),
    (
        &["eve_agent_spin::Spin"],
        "crates/eve-agent/src/service/stream.rs",
        &["agent_keepalive_secs"],
    ),
    // Tool approval policies (docs/approvals.md), while the setting has no row.
    (
        &["impl AgentEnv for"],
        "crates/eve-agent/src/service/tool_approvals.rs",
        &["tool_approvals"],
    ),
    (
        &["eve_agent_spin::Spin"],
        "crates/eve-agent/src/service/sessions.rs",
        &["principal_max_bytes", "max_sessions_per_user"],
    ),
    // The daily token quota (issue 20), read by the agent's service through `AgentEnv`.
    (
        &["eve_agent_spin::Spin"],
        "crates/eve-usage/src/quota.rs",
        &["quota_tokens_per_day"],
    ),
];

/// Calls into code that opens the key-value store `default` (and the file that opens it).
const KEY_VALUE_USES: &[(&str, &str)] = &[
    ("ratelimit::", "crates/eve-spin/src/ratelimit.rs"),
    ("eve_spin::streams", "crates/eve-spin/src/streams.rs"),
    ("keyvalue", ""),
    // Every authenticated request reads the principal's logout time.
    ("::authenticate(", "crates/eve-spin/src/auth.rs"),
    ("authenticate_session(", "crates/eve-spin/src/auth.rs"),
    ("authenticate_with(", "crates/eve-spin/src/auth.rs"),
    ("chat_request::serve", "crates/eve-spin/src/auth.rs"),
    ("api_component::admit_head(", "crates/eve-spin/src/auth.rs"),
];

/// Calls into code that opens the SQLite database `default`. Authenticating is one: a request
/// may carry an API token (`Authorization: Bearer evc_…`), looked up in `api_token`, which is
/// why eve-proxy, which stores nothing, has the database (eve's CLI calls /eve/v1/* with one).
const SQLITE_USES: &[&str] = &[
    "eve_spin::db",
    "sqlite::",
    "::authenticate(",
    "authenticate_session(",
    "authenticate_with(",
    "api_component::admit_head(",
];

/// Calls that send an outbound request.
const OUTBOUND_CALLS: &[&str] = &[
    "http::send(",
    "streaming::send(",
    "streaming::send_with(",
    "eve_agent_spin::Spin",
];

/// Grants whose destination is configuration, not code: (component, grant, a variable or
/// code its sources must contain that names the destination, why).
const CONFIGURED_HOSTS: &[(&str, &str, &str, &str)] = &[
    (
        "auth",
        "https://*:*",
        "discover(",
        "an OIDC provider's endpoints are whatever its discovery document names (the token \
         and userinfo endpoints are often on other hosts than the issuer, e.g. Google's)",
    ),
    (
        "auth",
        "http://127.0.0.1:*",
        "usable_issuer",
        "a loopback issuer (local test providers)",
    ),
    (
        "auth",
        "http://localhost:*",
        "usable_issuer",
        "a loopback issuer (local test providers)",
    ),
    (
        "eve-proxy",
        "http://127.0.0.1:*",
        "\"eve_upstream_url\"",
        "an eve agent on this machine",
    ),
    (
        "eve-proxy",
        "http://localhost:*",
        "\"eve_upstream_url\"",
        "an eve agent on this machine",
    ),
    (
        "admin",
        "http://127.0.0.1:*",
        "\"outbound_allowed_hosts\"",
        "an MCP server or model server on a loopback host an admin allowed \
         (outbound_allowed_hosts)",
    ),
    (
        "admin",
        "http://localhost:*",
        "\"outbound_allowed_hosts\"",
        "an MCP server or model server on a loopback host an admin allowed \
         (outbound_allowed_hosts)",
    ),
    (
        "agent",
        "http://127.0.0.1:*",
        "\"mcp_connections\"",
        "a local model server (llm_base_url) or MCP server (mcp_connections)",
    ),
    (
        "agent",
        "http://localhost:*",
        "\"mcp_connections\"",
        "a local model server (llm_base_url) or MCP server (mcp_connections)",
    ),
    (
        "slack",
        "http://127.0.0.1:*",
        "\"slack_api_base_url\"",
        "a Slack Web API simulator on this machine (or an eve agent: eve_upstream_url)",
    ),
    (
        "slack",
        "http://localhost:*",
        "\"slack_api_base_url\"",
        "a Slack Web API simulator on this machine (or an eve agent: eve_upstream_url)",
    ),
];

/// Shared code a component sends its requests through, searched for named hosts (the model
/// providers and the ready-made MCP servers live in the agent library).
const HOST_LIBRARIES: &[(&str, &str)] = &[
    ("agent", "crates/eve-agent/src"),
    ("agent", "crates/eve-providers/src"),
    ("agent", "crates/eve-connections/src"),
    ("slack", "crates/eve-slack/src"),
    // An MCP server's tools refresh and a provider's "Test connection" use the agent's clients
    // (the providers and connections crates since the agent's split).
    ("admin", "crates/eve-agent/src"),
    ("admin", "crates/eve-providers/src"),
    ("admin", "crates/eve-connections/src"),
];

/// The agent's platform over Spin (`AgentEnv`, outbound HTTP), a crate of its own since the
/// admin component tests providers and lists MCP tools with it: a component that uses it
/// runs its code as its own.
const PLATFORM: (&str, &str) = ("eve_agent_spin::Spin", "crates/eve-agent-spin/src");

fn rust_sources(dir: &Path) -> String {
    let mut text = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for entry in entries {
            let path: PathBuf = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                text.push_str(&std::fs::read_to_string(&path).unwrap());
                text.push('\n');
            }
        }
    }
    text
}

fn read(root: &Path, file: &str) -> String {
    std::fs::read_to_string(root.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// Whether a library file reads `variable`: its name as a literal, or (the per-provider keys
/// of `llm_models`) the `llm_{provider}_{suffix}` name it builds.
fn library_reads(library: &str, variable: &str) -> bool {
    library.contains(&format!("\"{variable}\""))
        || (variable.starts_with("llm_")
            && variable.ends_with("_api_key")
            && library.contains("format!(\"llm_{p}_{suffix}\")"))
}

fn strings(value: Option<&toml::Value>) -> Vec<String> {
    value
        .and_then(toml::Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| v.as_str().expect("a string").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Every grant of every component its code does not use, as readable lines.
fn excess_grants(manifest: &str, root: &Path) -> Vec<String> {
    let manifest: toml::Table = manifest
        .parse()
        .unwrap_or_else(|e: toml::de::Error| panic!("spin.toml does not parse: {}", e.message()));
    let components = manifest["component"].as_table().expect("[component.*]");
    let mut excess = Vec::new();
    for (id, component) in components {
        let mut code = rust_sources(&root.join("components").join(id).join("src"));
        if code.contains(PLATFORM.0) {
            code.push_str(&rust_sources(&root.join(PLATFORM.1)));
        }
        let calls = |patterns: &[&str]| patterns.iter().any(|p| code.contains(p));

        // Variables.
        let mut used: BTreeMap<&str, String> = BTreeMap::new();
        for (patterns, file, variables) in LIBRARY_READS {
            if !calls(patterns) {
                continue;
            }
            let library = read(root, file);
            for v in *variables {
                assert!(
                    library_reads(&library, v),
                    "the table says {file} reads `{v}`, but it does not: update LIBRARY_READS"
                );
                used.entry(v).or_insert_with(|| format!("through {file}"));
            }
        }
        let granted_vars = component
            .get("variables")
            .and_then(toml::Value::as_table)
            .cloned()
            .unwrap_or_default();
        for name in granted_vars.keys() {
            if !used.contains_key(name.as_str()) && !code.contains(&format!("\"{name}\"")) {
                excess.push(format!("[component.{id}] variable `{name}`"));
            }
        }

        // Stores.
        for store in strings(component.get("key_value_stores")) {
            let opens = KEY_VALUE_USES.iter().any(|(pattern, file)| {
                code.contains(pattern)
                    && (file.is_empty() || read(root, file).contains("keyvalue::"))
            });
            if store != "default" || !opens {
                excess.push(format!("[component.{id}] key_value_stores `{store}`"));
            }
        }
        for db in strings(component.get("sqlite_databases")) {
            if db != "default" || !calls(SQLITE_USES) {
                excess.push(format!("[component.{id}] sqlite_databases `{db}`"));
            }
        }

        // Outbound hosts.
        let hosts = strings(component.get("allowed_outbound_hosts"));
        let sends = calls(OUTBOUND_CALLS);
        let mut host_code = code.clone();
        for (lib_id, dir) in HOST_LIBRARIES {
            if lib_id == id {
                host_code.push_str(&rust_sources(&root.join(dir)));
            }
        }
        for host in hosts {
            let configured = CONFIGURED_HOSTS
                .iter()
                .find(|(c, h, _, _)| c == id && *h == host);
            let ok = sends
                && match configured {
                    Some((_, _, evidence, _)) => host_code.contains(evidence),
                    None => {
                        let name = host
                            .split_once("://")
                            .map_or(host.as_str(), |(_, rest)| rest)
                            .split(':')
                            .next()
                            .unwrap_or_default();
                        !name.contains('*') && !name.contains("{{") && host_code.contains(name)
                    }
                };
            if !ok {
                excess.push(format!("[component.{id}] allowed_outbound_hosts `{host}`"));
            }
        }
    }
    excess
}

#[test]
fn every_component_is_granted_only_the_stores_variables_and_hosts_its_code_uses() {
    let root = repo_root();
    let manifest = read(&root, "spin.toml");
    let excess = excess_grants(&manifest, &root);
    assert!(
        excess.is_empty(),
        "spin.toml grants what the code never touches:\n  {}",
        excess.join("\n  ")
    );
}

/// The check itself catches each kind of excess grant: the agent of before issue 19 (the
/// `default` key-value store, the sign-in secrets), a host no code names, a wildcard where
/// no variable names the destination, and anything at all for the static shell.
#[test]
fn the_check_names_each_kind_of_excess_grant() {
    let root = repo_root();
    let manifest = read(&root, "spin.toml");
    let agent = "[component.agent]\n";
    assert!(manifest.contains(agent), "spin.toml changed shape");
    let widened = manifest
        .replace(
            agent,
            "[component.agent]\nkey_value_stores = [\"default\"]\n",
        )
        .replace(
            "[component.agent.variables]\n",
            "[component.agent.variables]\nchat_password = \"{{ chat_password }}\"\n\
             oidc_client_secret = \"{{ oidc_client_secret }}\"\n\
             session_secret = \"{{ session_secret }}\"\n",
        )
        .replace(
            "[component.shell]\n",
            "[component.shell]\nallowed_outbound_hosts = [\"https://example.com\"]\n\
             sqlite_databases = [\"default\"]\n",
        )
        .replace(
            "[component.chats.variables]\n",
            "[component.chats.variables]\nllm_api_key = \"{{ llm_api_key }}\"\n",
        )
        .replace(
            "\"https://api.anthropic.com\",",
            "\"https://api.anthropic.com\", \"https://*:*\", \"https://evil.example\",",
        );
    let excess = excess_grants(&widened, &root);
    for expected in [
        "[component.agent] key_value_stores `default`",
        "[component.agent] variable `chat_password`",
        "[component.agent] variable `oidc_client_secret`",
        "[component.agent] variable `session_secret`",
        "[component.agent] allowed_outbound_hosts `https://*:*`",
        "[component.agent] allowed_outbound_hosts `https://evil.example`",
        "[component.shell] allowed_outbound_hosts `https://example.com`",
        "[component.shell] sqlite_databases `default`",
        "[component.chats] variable `llm_api_key`",
        // The admin component's list is the agent's (what "Test connection" reaches).
        "[component.admin] allowed_outbound_hosts `https://*:*`",
        "[component.admin] allowed_outbound_hosts `https://evil.example`",
    ] {
        assert!(
            excess.iter().any(|e| e == expected),
            "not caught: {expected}\n{excess:#?}"
        );
    }
    assert_eq!(excess.len(), 11, "{excess:#?}");
}

/// Issue 32 (9): the agent, which runs model output and tools, holds no session secret (nor
/// the previous one, the password or the OIDC client secret), so it cannot mint a session
/// cookie; nor does the Slack channel. Its JWT key is `eve_jwt_secret` alone:
/// `UpstreamJwt::from_vars` reads nothing of sign-in but the mode, and local-dev's fixed key
/// only when `auth_mode` says local-dev, which no other sign-in variable can make it (a
/// derived mode is never local-dev). `attack.rs` checks the agent end to end.
#[test]
fn the_agent_holds_no_session_secret_and_its_jwt_key_needs_only_the_mode() {
    let root = repo_root();
    let manifest: toml::Table = read(&root, "spin.toml").parse().unwrap();
    for id in ["agent", "slack"] {
        let vars = manifest["component"][id]["variables"]
            .as_table()
            .expect("its variables");
        for secret in [
            "session_secret",
            "session_secret_previous",
            "chat_password",
            "oidc_client_secret",
            "admin_setup_token",
        ] {
            assert!(
                !vars.contains_key(secret),
                "[component.{id}] is granted `{secret}`"
            );
        }
        assert!(vars.contains_key("eve_jwt_secret"), "{id}: its JWT key");
    }
    let jwt = read(&root, "crates/eve-connections/src/jwt.rs");
    let from_vars = &jwt[jwt.find("pub fn from_vars(").expect("from_vars")..];
    let from_vars = &from_vars[..from_vars.find("\n    }\n").unwrap()];
    assert!(from_vars.contains("mode: AuthMode,"), "{from_vars}");
    assert!(from_vars.contains("mode == AuthMode::LocalDev"));
    for other in [
        "session_secret",
        "AuthConfig",
        "chat_password",
        "oidc_",
        "allowlist",
    ] {
        assert!(
            !from_vars.contains(other),
            "from_vars now uses {other}: the agent would need what that needs"
        );
    }
    let config = read(&root, "crates/eve-auth/src/config.rs");
    let mode = &config[config.find("pub fn mode(&self)").expect("AuthConfig::mode")..];
    let mode = &mode[..mode.find("\n    }\n").unwrap()];
    assert!(mode.contains("Some(\"local-dev\") => AuthMode::LocalDev"));
    assert_eq!(
        mode.matches("AuthMode::LocalDev").count(),
        1,
        "local-dev comes from auth_mode alone: {mode}"
    );
}
