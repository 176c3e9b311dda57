//! The agent, reached as the eve proxy reaches it: over service chaining
//! (`eve_upstream_url`, default `http://agent.spin.internal`) with the principal in the
//! short-lived HS256 token the proxy mints (`eve_agent::connections::jwt::UpstreamJwt`, the
//! same key: `eve_jwt_secret`, or local-dev's fixed one).

use std::time::Duration;

use eve_agent::connections::jwt::UpstreamJwt;
use eve_api::auth::Principal;
use eve_spin::streaming::{self, Incoming};
use serde_json::{json, Value};
use spin_sdk::http::Method;

use crate::http;
use crate::variable;

const DEFAULT_UPSTREAM: &str = "http://agent.spin.internal";

/// Why a call to the agent did not do what was asked.
#[derive(Debug)]
pub enum Failure {
    /// The session is gone (404): the thread starts a new one.
    Gone,
    /// The agent refused (its status and eve's error text).
    Refused(u16, String),
    Unreachable(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Gone => write!(f, "the session is gone"),
            Failure::Refused(status, why) => write!(f, "the agent answered {status}: {why}"),
            Failure::Unreachable(why) => write!(f, "the agent is unreachable: {why}"),
        }
    }
}

/// The agent as one principal.
pub struct Agent {
    base: String,
    bearer: String,
}

impl Agent {
    /// The agent as `principal` (a Slack user: `slack:<team>:<user>`).
    pub fn as_principal(principal: &str) -> Result<Agent, Failure> {
        let config = eve_spin::auth::config();
        let jwt = UpstreamJwt::from_vars(config.mode(), |n| spin_sdk::variables::get(n).ok())
            .ok_or_else(|| {
                Failure::Unreachable("no key for the agent's token: set eve_jwt_secret".into())
            })?;
        let p = Principal {
            id: principal.to_string(),
            mode: config.mode(),
            name: None,
            email: None,
        };
        Ok(Agent {
            base: variable("eve_upstream_url").unwrap_or_else(|| DEFAULT_UPSTREAM.into()),
            bearer: jwt.bearer(&p, eve_spin::auth::now_secs()),
        })
    }

    fn headers(&self) -> Vec<(String, Vec<u8>)> {
        vec![
            ("authorization".into(), self.bearer.clone().into_bytes()),
            ("content-type".into(), b"application/json".to_vec()),
        ]
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base.trim_end_matches('/'))
    }

    fn post(&self, path: &str, body: &Value) -> Result<Value, Failure> {
        let a = http::call(
            Method::Post,
            &self.url(path),
            &self.headers(),
            body.to_string().as_bytes(),
        )
        .map_err(Failure::Unreachable)?;
        let v: Value = serde_json::from_slice(&a.body).unwrap_or(Value::Null);
        match a.status {
            200..=299 => Ok(v),
            404 => Err(Failure::Gone),
            s => Err(Failure::Refused(
                s,
                v["error"].as_str().unwrap_or("").to_string(),
            )),
        }
    }

    /// A new session whose first turn answers `message`; its id.
    pub fn create(&self, message: &str) -> Result<String, Failure> {
        let v = self.post("/eve/v1/session", &json!({ "message": message }))?;
        v["sessionId"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| Failure::Unreachable("no sessionId in the agent's answer".into()))
    }

    /// Sends `body` (`message` or `inputResponses`) to the session; its `deliveryId`.
    pub fn send(&self, session: &str, body: &Value) -> Result<Option<String>, Failure> {
        let v = self.post(&format!("/eve/v1/session/{session}"), body)?;
        Ok(v["deliveryId"].as_str().map(str::to_string))
    }

    /// The index of the session's last event (-1 when it has none).
    pub fn tail(&self, session: &str) -> Result<i64, Failure> {
        let path = format!("/eve/v1/session/{session}/stream?startIndex=-1&follow=false");
        let a = http::call(Method::Get, &self.url(&path), &self.headers(), b"")
            .map_err(Failure::Unreachable)?;
        match a.status {
            200 => Ok(a
                .header("x-eve-stream-tail-index")
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(-1)),
            404 => Err(Failure::Gone),
            s => Err(Failure::Refused(s, String::from_utf8_lossy(&a.body).into())),
        }
    }

    /// The session's following NDJSON stream from `start`.
    pub fn follow(&self, session: &str, start: i64) -> Result<Incoming, Failure> {
        let path = format!("/eve/v1/session/{session}/stream?startIndex={start}");
        let incoming = streaming::send(
            Method::Get,
            &self.url(&path),
            &self.headers(),
            b"",
            Duration::from_secs(30),
        )
        .map_err(Failure::Unreachable)?;
        match incoming.status {
            200 => Ok(incoming),
            404 => Err(Failure::Gone),
            s => Err(Failure::Refused(s, String::new())),
        }
    }
}
