//! The agent's platform over Spin ([`AgentEnv`]): the clock, sleeping, variables, the proxy's
//! token codec, and outbound HTTP ([`transport`]). Everything the agent decides is in
//! `eve_agent::service`, which runs over this. The `agent` component runs its routes and work
//! over it; the `admin` component tests a provider and lists an MCP server's tools with the
//! agent's own clients over it, so both speak to the outside world the same way.

pub mod transport;

use std::time::Duration;

use eve_agent::connections::jwt::UpstreamJwt;
use eve_agent::connections::mcp::HttpAnswer;
use eve_agent::providers::http::Transport;
use eve_agent::service::env::{AgentEnv, Method};

use transport::{fetch, mcp_post, WasiTransport};

/// The Spin platform the component runs on.
pub struct Spin;

impl AgentEnv for Spin {
    fn now_ms(&self) -> i64 {
        eve_spin::db::now_ms()
    }

    fn sleep_ms(&self, ms: u64) {
        eve_spin::streaming::sleep_ms(ms)
    }

    fn variable(&self, name: &str) -> Option<String> {
        spin_sdk::variables::get(name).ok()
    }

    fn upstream_jwt(&self) -> Option<UpstreamJwt> {
        // Of sign-in, only the mode: the agent holds no session secret (issue 32).
        UpstreamJwt::from_vars(eve_spin::auth::config().mode(), |n| self.variable(n))
    }

    fn model_transport(&self) -> Box<dyn Transport> {
        Box::new(WasiTransport)
    }

    fn mcp_post(
        &self,
        url: &str,
        headers: &[(String, String)],
        body: &[u8],
        timeout: Duration,
        waiting: &mut dyn FnMut() -> bool,
    ) -> Result<HttpAnswer, String> {
        mcp_post(url, headers, body, timeout, waiting)
    }

    fn fetch(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> Result<(u16, Vec<u8>), String> {
        let method = match method {
            Method::Get => spin_sdk::http::Method::Get,
            Method::Post => spin_sdk::http::Method::Post,
        };
        fetch(method, url, headers, body)
    }
}
