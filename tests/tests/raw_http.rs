//! A tiny HTTP/1.1 client on a plain socket, for requests whose exact bytes matter (raw paths,
//! custom methods, odd headers: a URL library would normalise them away) and for bodies the
//! server may answer before it has read them (an oversized upload's 413): the whole request is
//! written, a write cut short by the server's close is not an error, and whatever answer came
//! back is read.

use eve_chat_tests::Host;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A response read off the socket (`status` 0: the server closed the connection without one).
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

    pub fn all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// `host:port` of the app.
pub fn authority(h: &Host) -> String {
    h.base
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string()
}

/// Sends exactly `method target HTTP/1.1`, the given header lines (a `Host` line is added
/// unless one is given; `Content-Length` whenever there is a body) and `body`.
pub fn raw(h: &Host, method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Raw {
    let mut head = format!("{method} {target} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {}\r\n", authority(h)));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH") {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("Connection: close\r\n\r\n");
    raw_bytes(h, &[head.as_bytes(), body].concat())
}

/// Writes `request` as is and reads the whole response — for at most 60 s in all, so a
/// stream that never ends (a following eve stream sends keep-alives) cannot hang a test.
pub fn raw_bytes(h: &Host, request: &[u8]) -> Raw {
    let mut s = TcpStream::connect(authority(h)).expect("connect");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    // The server may answer (431, 413) and close before reading everything: that is fine.
    let _ = s.write_all(request);
    let _ = s.flush();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            break;
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    parse_response(&buf)
}

fn parse_response(buf: &[u8]) -> Raw {
    let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Raw {
            status: 0,
            headers: vec![],
            body: buf.to_vec(),
        };
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let rest = &buf[end + 4..];
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.to_ascii_lowercase().contains("chunked"));
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    Raw {
        status,
        headers,
        body,
    }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(nl) = data.windows(2).position(|w| w == b"\r\n") {
        let size_text = String::from_utf8_lossy(&data[..nl]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .unwrap_or(0);
        data = &data[nl + 2..];
        if size == 0 || data.len() < size {
            out.extend_from_slice(&data[..size.min(data.len())]);
            break;
        }
        out.extend_from_slice(&data[..size]);
        data = data.get(size + 2..).unwrap_or(&[]);
    }
    out
}
