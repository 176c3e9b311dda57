//! Every integration suite in one test binary: each file of this folder is a module (its
//! tests are `<file>::<test>`, e.g. `cargo nextest run -p eve-chat-tests -E 'test(/^auth::/)'`
//! or `cargo test -p eve-chat-tests --test suites auth::`). One binary instead of one per file:
//! the suites share the harness, serde and the HTTP client, which 38 binaries each compiled
//! (their generic code) and linked on their own (issue 35, the test command's time). nextest
//! still runs every test in its own process, as before.

mod accounts;
mod admin_usage;
mod api_tokens;
mod approvals;
mod attachments;
mod attack;
mod attack_accounts;
mod attack_data;
mod attack_host;
mod attack_limits;
mod attack_signin;
mod auth;
mod chat_store;
mod chat_store_bench;
mod concurrency;
mod documents;
mod eve_bench;
mod eve_stream;
mod faults;
mod faults_under_load;
mod harness;
mod host;
mod least_privilege;
mod mcp;
mod mcp_servers;
mod models;
mod multi_node;
mod projects;
mod providers;
mod resume;
mod settings;
mod shell;
mod skills;
mod slack;
mod usage_quotas;

// Helpers more than one suite uses: one copy each, named `crate::<helper>` by the suites.
#[path = "eve/llm_server.rs"]
mod llm_server;
#[path = "auth/oidc_provider.rs"]
mod oidc_provider;
mod raw_http;
#[path = "eve/sigkill.rs"]
mod sigkill;
#[path = "auth/support.rs"]
mod support;
