//! HTTP client helpers for the auth tests (no redirects followed, cookies handled by hand so
//! every Set-Cookie can be inspected), and starting a host with chosen variables.

#![allow(dead_code)]

use serde::de::DeserializeOwned;

use eve_chat_tests::{Host, HostOptions};

/// Starts a local host with exactly these Spin variables and a fresh state directory; `None`
/// when the suite runs against an outside instance (`EVE_CHAT_BASE_URL`), whose configuration
/// a test cannot choose — the caller skips.
pub fn start_host(vars: &[(&'static str, String)]) -> Option<Host> {
    let variables = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    Host::start(HostOptions {
        variables,
        ..HostOptions::default()
    })
}

pub struct Client {
    agent: ureq::Agent,
    pub base: String,
}

#[derive(Debug)]
pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The `Set-Cookie` header for cookie `name`, if the response sets it.
    pub fn set_cookie(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("set-cookie"))
            .map(|(_, v)| v.as_str())
            .find(|v| v.starts_with(&format!("{name}=")))
    }

    /// The value the response sets for cookie `name` (not a clearing one).
    pub fn cookie_value(&self, name: &str) -> Option<String> {
        let c = self.set_cookie(name)?;
        if c.contains("Max-Age=0") {
            return None;
        }
        let first = c.split(';').next()?;
        Some(first.split_once('=')?.1.to_string())
    }

    pub fn json<T: DeserializeOwned>(&self) -> T {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {} {}", self.status, self.body))
    }
}

impl Client {
    /// A client for `host` that follows no redirects and keeps no cookies.
    pub fn of(host: &Host) -> Client {
        Client {
            agent: host.client(),
            base: host.base.trim_end_matches('/').to_string(),
        }
    }

    pub fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, String)],
        body: Option<&str>,
    ) -> Resp {
        self.request_url(method, &format!("{}{path}", self.base), headers, body)
    }

    pub fn request_url(
        &self,
        method: &str,
        url: &str,
        headers: &[(&str, String)],
        body: Option<&str>,
    ) -> Resp {
        let mut req = self.agent.request(method, url);
        for (k, v) in headers {
            req = req.set(k, v);
        }
        let result = match body {
            Some(b) => req.send_string(b),
            None => req.call(),
        };
        let resp = match result {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => panic!("{method} {url}: {e}"),
        };
        let status = resp.status();
        let mut headers = Vec::new();
        for name in resp.headers_names() {
            for value in resp.all(&name) {
                headers.push((name.clone(), value.to_string()));
            }
        }
        let body = resp.into_string().unwrap_or_default();
        Resp {
            status,
            headers,
            body,
        }
    }

    pub fn get(&self, path: &str, headers: &[(&str, String)]) -> Resp {
        self.request("GET", path, headers, None)
    }

    pub fn get_url(&self, url: &str, headers: &[(&str, String)]) -> Resp {
        self.request_url("GET", url, headers, None)
    }

    pub fn post_json(
        &self,
        path: &str,
        body: &serde_json::Value,
        headers: &[(&str, String)],
    ) -> Resp {
        let mut all: Vec<(&str, String)> = vec![("content-type", "application/json".into())];
        all.extend(headers.iter().cloned());
        self.request("POST", path, &all, Some(&body.to_string()))
    }
}
