//! Streaming HTTP over `wasi:http` without buffering, for the eve stream: a response body
//! written as it is produced ([`BodyWriter`]), an outgoing request whose response body is read
//! as it arrives with a bounded wait per read ([`send`], [`Incoming`]), and a sleep.
//!
//! These are synchronous on purpose: the agent's turn runner and stream tailer are plain loops
//! (persist, write, sleep), and the proxy pumps bytes from one stream to the other. Each read
//! waits on the body's pollable and a timer together, so a quiet upstream never blocks a loop
//! for longer than the caller allows.

use std::time::Duration;

use spin_sdk::http::{
    Fields, IncomingResponse, Method, OutgoingBody, OutgoingRequest, OutgoingResponse,
    ResponseOutparam, Scheme,
};
use spin_sdk::wit::wasi::http0_2_0::outgoing_handler;
use wasi::io::poll;
use wasi::io::streams::{InputStream, OutputStream, StreamError};

/// The most bytes written per call (wasi streams accept at most 4096 per blocking write).
const WRITE_CHUNK: usize = 4096;
/// The most bytes taken per read.
const READ_CHUNK: u64 = 64 * 1024;

/// Sleeps (the instance's clock; std's sleep is wasi's monotonic clock underneath).
pub fn sleep_ms(ms: u64) {
    if ms > 0 {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

/// A response whose body is written piece by piece.
pub struct BodyWriter {
    stream: Option<OutputStream>,
    body: Option<OutgoingBody>,
    /// The reader went away (a write failed): later writes are skipped.
    pub closed: bool,
}

impl BodyWriter {
    /// Sends the status and headers now (the outparam is set before any body byte).
    pub fn start(out: ResponseOutparam, status: u16, headers: &[(String, Vec<u8>)]) -> BodyWriter {
        let fields = Fields::from_list(headers).unwrap_or_else(|_| Fields::new());
        let response = OutgoingResponse::new(fields);
        // Our own statuses are valid; the error case cannot happen.
        let _ = response.set_status_code(status);
        let body = response.body().ok();
        let stream = body.as_ref().and_then(|b| b.write().ok());
        out.set(response);
        BodyWriter {
            closed: stream.is_none(),
            stream,
            body,
        }
    }

    /// Writes and flushes `bytes`; `false` once the reader has gone away.
    pub fn write(&mut self, bytes: &[u8]) -> bool {
        if self.closed {
            return false;
        }
        let Some(stream) = &self.stream else {
            return false;
        };
        for chunk in bytes.chunks(WRITE_CHUNK) {
            if stream.blocking_write_and_flush(chunk).is_err() {
                self.closed = true;
                return false;
            }
        }
        true
    }

    /// Ends the body (the reader sees the end of the response).
    pub fn finish(mut self) {
        drop(self.stream.take());
        if let Some(body) = self.body.take() {
            // A reader that went away cannot be told anything more.
            let _ = OutgoingBody::finish(body, None);
        }
    }
}

/// A complete small response: status, headers, body, finished at once.
pub fn respond(out: ResponseOutparam, status: u16, headers: &[(String, Vec<u8>)], body: &[u8]) {
    let mut w = BodyWriter::start(out, status, headers);
    w.write(body);
    w.finish();
}

/// One read of an incoming body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    Data(Vec<u8>),
    /// Nothing arrived within the wait.
    Idle,
    End,
}

/// A response being received.
pub struct Incoming {
    pub status: u16,
    pub headers: Vec<(String, Vec<u8>)>,
    // Field order is drop order: the stream before its body before its response.
    stream: InputStream,
    _body: spin_sdk::wit::wasi::http0_2_0::types::IncomingBody,
    _response: IncomingResponse,
}

impl Incoming {
    /// Waits up to `wait` for bytes.
    pub fn read(&mut self, wait: Duration) -> Result<Read, String> {
        loop {
            match self.stream.read(READ_CHUNK) {
                Ok(bytes) if !bytes.is_empty() => return Ok(Read::Data(bytes)),
                Ok(_) => {}
                Err(StreamError::Closed) => return Ok(Read::End),
                Err(StreamError::LastOperationFailed(e)) => return Err(e.to_debug_string()),
            }
            let ready = self.stream.subscribe();
            let timer = wasi::clocks::monotonic_clock::subscribe_duration(duration_ns(wait));
            let which = poll::poll(&[&ready, &timer]);
            if !which.contains(&0) {
                return Ok(Read::Idle);
            }
        }
    }

    /// The first value of a response header.
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }
}

fn duration_ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Splits an absolute `http(s)://authority/path?query` URL.
pub fn split_url(url: &str) -> Option<(Scheme, String, String)> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        _ => return None,
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => match rest.find('?') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        },
    };
    if authority.is_empty() {
        return None;
    }
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    Some((scheme, authority.to_string(), path))
}

/// Sends a request and waits up to `connect_wait` for the response head.
pub fn send(
    method: Method,
    url: &str,
    headers: &[(String, Vec<u8>)],
    body: &[u8],
    connect_wait: Duration,
) -> Result<Incoming, String> {
    send_with(method, url, headers, body, connect_wait, &mut || true)
}

/// How often [`send_with`] calls its `waiting` callback while the response head is pending.
pub const HEAD_POLL: Duration = Duration::from_millis(250);

/// Why a request whose body could not be written failed: the host's refusal when it refused
/// it (a host outside `allowed_outbound_hosts` is `HttpRequestDenied`, which closes the body
/// stream before the response says so), else `otherwise`. Waits a moment for that answer.
fn refused_or(
    future: &spin_sdk::wit::wasi::http0_2_0::types::FutureIncomingResponse,
    otherwise: String,
) -> String {
    let timer = wasi::clocks::monotonic_clock::subscribe_duration(duration_ns(HEAD_POLL));
    poll::poll(&[&future.subscribe(), &timer]);
    match future.get() {
        Some(Ok(Err(code))) => format!("{code:?}"),
        _ => otherwise,
    }
}

/// [`send`] that calls `waiting` every [`HEAD_POLL`] while the response head is pending (to
/// renew a lease, to notice a stop); `false` abandons the request with the error
/// `"interrupted"`.
pub fn send_with(
    method: Method,
    url: &str,
    headers: &[(String, Vec<u8>)],
    body: &[u8],
    connect_wait: Duration,
    waiting: &mut dyn FnMut() -> bool,
) -> Result<Incoming, String> {
    let (scheme, authority, path) = split_url(url).ok_or_else(|| format!("bad URL {url:?}"))?;
    let mut headers = headers.to_vec();
    // A declared length: some servers (llama.cpp, proxies) refuse chunked request bodies.
    if !body.is_empty()
        && !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-length"))
    {
        headers.push(("content-length".into(), body.len().to_string().into_bytes()));
    }
    let fields = Fields::from_list(&headers).map_err(|e| format!("bad header: {e:?}"))?;
    let request = OutgoingRequest::new(fields);
    request
        .set_method(&method)
        .map_err(|_| "bad method".to_string())?;
    request
        .set_scheme(Some(&scheme))
        .map_err(|_| "bad scheme".to_string())?;
    request
        .set_authority(Some(&authority))
        .map_err(|_| "bad authority".to_string())?;
    request
        .set_path_with_query(Some(&path))
        .map_err(|_| "bad path".to_string())?;
    let outgoing_body = request
        .body()
        .map_err(|_| "request body taken".to_string())?;
    let future = outgoing_handler::handle(request, None).map_err(|e| format!("{e:?}"))?;
    {
        let stream = outgoing_body
            .write()
            .map_err(|_| "request body stream taken".to_string())?;
        for chunk in body.chunks(WRITE_CHUNK) {
            if let Err(e) = stream.blocking_write_and_flush(chunk) {
                return Err(refused_or(
                    &future,
                    format!("writing the request body: {e:?}"),
                ));
            }
        }
    }
    OutgoingBody::finish(outgoing_body, None).map_err(|e| format!("{e:?}"))?;
    let deadline = std::time::Instant::now() + connect_wait;
    let response = loop {
        if let Some(result) = future.get() {
            break result
                .map_err(|_| "response already taken".to_string())?
                .map_err(|e| format!("{e:?}"))?;
        }
        let now = std::time::Instant::now();
        if now >= deadline {
            return Err("timed out waiting for the response".into());
        }
        let ready = future.subscribe();
        let timer = wasi::clocks::monotonic_clock::subscribe_duration(duration_ns(
            (deadline - now).min(HEAD_POLL),
        ));
        if !poll::poll(&[&ready, &timer]).contains(&0) && !waiting() {
            return Err("interrupted".into());
        }
    };
    let status = response.status();
    let headers = response.headers().entries();
    let body = response
        .consume()
        .map_err(|_| "response body taken".to_string())?;
    let stream = body
        .stream()
        .map_err(|_| "response body stream taken".to_string())?;
    Ok(Incoming {
        status,
        headers,
        stream,
        _body: body,
        _response: response,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_scheme_authority_and_path() {
        let (s, a, p) = split_url("http://agent.spin.internal/eve/v1/session?x=1").unwrap();
        assert!(matches!(s, Scheme::Http));
        assert_eq!(
            (a.as_str(), p.as_str()),
            ("agent.spin.internal", "/eve/v1/session?x=1")
        );
        let (_, a, p) = split_url("https://api.openai.com").unwrap();
        assert_eq!((a.as_str(), p.as_str()), ("api.openai.com", "/"));
        assert!(split_url("ftp://x/").is_none());
        assert!(split_url("http:///x").is_none());
    }
}
