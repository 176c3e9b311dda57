//! A raw HTTP/1.1 client over a loopback socket, for what ureq cannot do: a body declared and
//! never sent, a chunked body that never ends, a body sent while the answer is read, a
//! following stream held open at its head.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::Host;

/// How long a raw request waits for its answer: generous, so a loaded machine is not a
/// failure; a component that waits for a body that never comes never answers at all.
pub const ANSWER_WAIT: Duration = Duration::from_secs(60);

/// A response as read off the socket (status 0: none came).
#[derive(Debug, Clone)]
pub struct Raw {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Raw {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}), status {}: {}", self.status, self.text()))
    }

    /// `error.code` of the chat API's envelope or `code` of eve's.
    pub fn error_code(&self) -> Option<String> {
        let v = self.json();
        let code = match v.get("error")? {
            Value::String(_) => v.get("code")?,
            e => e.get("code")?,
        };
        code.as_str().map(str::to_string)
    }
}

pub fn authority(h: &Host) -> String {
    h.base.trim_start_matches("http://").to_string()
}

pub fn head_text(h: &Host, method: &str, path: &str, headers: &[(&str, &str)]) -> String {
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", authority(h));
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("Connection: close\r\n");
    head
}

/// A response in `buf` once it is complete (head, and a body by its length, its chunked end,
/// or the connection's end when `closed`).
pub fn parse(buf: &[u8], closed: bool) -> Option<Raw> {
    let (
        Raw {
            status, headers, ..
        },
        rest,
    ) = parse_head(buf)?;
    let get = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let body = if let Some(len) = get("content-length").and_then(|v| v.parse::<usize>().ok()) {
        (rest.len() >= len).then(|| rest[..len].to_vec())?
    } else if get("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        dechunk(rest)?
    } else if closed {
        rest.to_vec()
    } else {
        return None;
    };
    Some(Raw {
        status,
        headers,
        body,
    })
}

/// The status and headers (an empty body) and what follows them, once the head is complete.
pub fn parse_head(buf: &[u8]) -> Option<(Raw, &[u8])> {
    let end = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let head = Raw {
        status,
        headers,
        body: Vec::new(),
    };
    Some((head, &buf[end + 4..]))
}

/// The decoded body once the last chunk has arrived.
pub fn dechunk(mut rest: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = rest.windows(2).position(|w| w == b"\r\n")?;
        let size_text = String::from_utf8_lossy(&rest[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        rest = &rest[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        if rest.len() < size + 2 {
            return None;
        }
        out.extend_from_slice(&rest[..size]);
        rest = &rest[size + 2..];
    }
}

/// Reads the response off `s` (status 0: none came within [`ANSWER_WAIT`]).
pub fn read_response(s: &mut TcpStream) -> Raw {
    let deadline = Instant::now() + ANSWER_WAIT;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            break;
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return parse(&buf, true).unwrap_or_else(|| no_answer(&buf)),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if let Some(r) = parse(&buf, false) {
            return r;
        }
    }
    parse(&buf, true).unwrap_or_else(|| no_answer(&buf))
}

pub fn no_answer(buf: &[u8]) -> Raw {
    Raw {
        status: 0,
        headers: vec![],
        body: buf.to_vec(),
    }
}

/// Sends a request with `body` while reading its answer, as browsers and curl do: the body
/// goes out on another thread, which stops at the first failed write (the server answered
/// and closed the connection). Neither Spin nor the local host drains a body a component
/// refused unread, so a client that writes a large body in full before it reads (ureq)
/// loses the answer to the reset (docs/local-host.md).
pub fn send_while_reading(
    h: &Host,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Raw {
    let mut s = TcpStream::connect(authority(h)).expect("connect");
    let head =
        head_text(h, method, path, headers) + &format!("Content-Length: {}\r\n\r\n", body.len());
    s.write_all(head.as_bytes()).expect("send the head");
    let mut w = s.try_clone().expect("clone the socket");
    let writer = std::thread::spawn(move || {
        for chunk in body.chunks(64 << 10) {
            if w.write_all(chunk).is_err() {
                break;
            }
        }
    });
    let r = read_response(&mut s);
    let _ = s.shutdown(Shutdown::Both);
    writer.join().expect("the writer");
    r
}
