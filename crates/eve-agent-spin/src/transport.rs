//! Outbound HTTP for the model providers over `wasi:http`: the response body is read as it
//! arrives, in polls of at most 250 ms so the turn can check for a stop in between.

use std::time::Duration;

use eve_agent::providers::http::{ByteStream, HttpRequest, HttpResponse, Read, Transport};
use eve_spin::streaming::{self, Incoming};
use spin_sdk::http::Method;

/// How long a provider may take to answer with its response head.
const CONNECT_WAIT: Duration = Duration::from_secs(120);
/// One read's wait (see `eve_agent::providers::http::MAX_IDLE_POLLS`).
const POLL: Duration = Duration::from_millis(250);

pub struct WasiTransport;

struct Body(Incoming);

impl ByteStream for Body {
    fn read(&mut self) -> Result<Read, String> {
        Ok(match self.0.read(POLL)? {
            streaming::Read::Data(b) => Read::Data(b),
            streaming::Read::Idle => Read::Idle,
            streaming::Read::End => Read::End,
        })
    }
}

impl Transport for WasiTransport {
    fn post(
        &mut self,
        request: HttpRequest,
        waiting: &mut dyn FnMut() -> bool,
    ) -> Result<HttpResponse, String> {
        let headers: Vec<(String, Vec<u8>)> = request
            .headers
            .into_iter()
            .map(|(k, v)| (k, v.into_bytes()))
            .collect();
        let incoming = streaming::send_with(
            Method::Post,
            &request.url,
            &headers,
            &request.body,
            CONNECT_WAIT,
            waiting,
        )?;
        let headers = incoming
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), String::from_utf8_lossy(v).into_owned()))
            .collect();
        Ok(HttpResponse {
            status: incoming.status,
            headers,
            body: Box::new(Body(incoming)),
        })
    }
}

/// The longest answer an MCP server may send (past it the call fails; what is under it but
/// over the tool output cap is stored aside).
pub const MCP_MAX_ANSWER: usize = 4 * 1024 * 1024;

/// Outbound HTTP to MCP servers: one POST, its answer read whole within `timeout` (head and
/// body together) and [`MCP_MAX_ANSWER`]. `waiting` runs between polls (lease, stop).
pub fn mcp_post(
    url: &str,
    headers: &[(String, String)],
    body: &[u8],
    timeout: Duration,
    waiting: &mut dyn FnMut() -> bool,
) -> Result<eve_agent::connections::mcp::HttpAnswer, String> {
    let deadline = std::time::Instant::now() + timeout;
    let headers: Vec<(String, Vec<u8>)> = headers
        .iter()
        .map(|(k, v)| (k.clone(), v.clone().into_bytes()))
        .collect();
    let mut incoming = streaming::send_with(Method::Post, url, &headers, body, timeout, waiting)
        .map_err(|e| {
            if e.contains("timed out") || e.contains("no answer") {
                format!(
                    "the MCP server did not answer within {}s",
                    timeout.as_secs()
                )
            } else if e.contains("HttpRequestDenied") {
                not_allowed(url)
            } else {
                format!("the MCP server could not be reached: {e}")
            }
        })?;
    let mut answer = Vec::new();
    loop {
        if std::time::Instant::now() >= deadline {
            return Err(format!(
                "the MCP server did not finish its answer within {}s",
                timeout.as_secs()
            ));
        }
        if !waiting() {
            return Err(eve_agent::providers::http::INTERRUPTED.into());
        }
        match incoming.read(POLL)? {
            streaming::Read::Data(b) => {
                answer.extend(b);
                if answer.len() > MCP_MAX_ANSWER {
                    return Err(format!(
                        "the MCP server's answer is over {} MB",
                        MCP_MAX_ANSWER / (1024 * 1024)
                    ));
                }
            }
            streaming::Read::Idle => {}
            streaming::Read::End => break,
        }
    }
    let headers = incoming
        .headers
        .iter()
        .map(|(k, v)| (k.clone(), String::from_utf8_lossy(v).into_owned()))
        .collect();
    Ok(eve_agent::connections::mcp::HttpAnswer {
        status: incoming.status,
        headers,
        body: answer,
    })
}

/// A small request (OAuth metadata, registration, tokens): status and body, read within 20 s
/// and 64 KB.
pub fn fetch(
    method: Method,
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<(u16, Vec<u8>), String> {
    let wait = Duration::from_secs(20);
    let headers: Vec<(String, Vec<u8>)> = headers
        .iter()
        .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec()))
        .collect();
    let mut incoming = streaming::send(method, url, &headers, body, wait)?;
    let mut answer = Vec::new();
    let deadline = std::time::Instant::now() + wait;
    while answer.len() < 64 * 1024 {
        if std::time::Instant::now() >= deadline {
            return Err(format!("{url} did not finish its answer in time"));
        }
        match incoming.read(POLL)? {
            streaming::Read::Data(b) => answer.extend(b),
            streaming::Read::Idle => {}
            streaming::Read::End => break,
        }
    }
    Ok((incoming.status, answer))
}

/// What a request Spin refused says: the deployment's fixed list lacks the host
/// (docs/runtime.md "Outbound access").
pub fn not_allowed(url: &str) -> String {
    format!(
        "{url} is not in allowed_outbound_hosts: add its origin to the agent and admin \
         components in spin.toml and redeploy (docs/runtime.md, \"Outbound access\")"
    )
}
