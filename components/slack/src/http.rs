//! One outbound request read to its end (the agent's small answers, the Slack Web API).

use std::time::Duration;

use eve_spin::streaming::{self, Read};
use spin_sdk::http::Method;

/// How long a call may take to answer, and to go quiet mid-body.
const WAIT: Duration = Duration::from_secs(30);

/// An answer: status, headers, body.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| String::from_utf8(v.clone()).ok())
    }
}

/// Sends the request and reads the whole answer.
pub fn call(
    method: Method,
    url: &str,
    headers: &[(String, Vec<u8>)],
    body: &[u8],
) -> Result<Answer, String> {
    let mut incoming = streaming::send(method, url, headers, body, WAIT)?;
    let mut out = Vec::new();
    loop {
        match incoming.read(WAIT)? {
            Read::Data(bytes) => out.extend_from_slice(&bytes),
            Read::End => break,
            Read::Idle => return Err(format!("{url}: no answer within {WAIT:?}")),
        }
    }
    Ok(Answer {
        status: incoming.status,
        headers: incoming.headers.clone(),
        body: out,
    })
}
