//! A tiny local model server for the provider tests: it speaks HTTP/1.1 and answers each
//! request with the next scripted SSE body, exactly as OpenAI's chat-completions or
//! Anthropic's Messages API stream it (chunks written separately, with pauses, so events and
//! even JSON documents arrive split), or with a scripted error answer (a 429 with
//! `Retry-After`, Anthropic's 529 overloaded, a 500). It records every request body.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One scripted response.
#[derive(Clone, Debug)]
pub struct Script {
    /// Wait before the response head (a model server that is slow to answer at all).
    pub head_delay: Duration,
    /// Wait before the first body byte (a slow model).
    pub delay: Duration,
    pub chunks: Vec<String>,
    /// Close the connection without finishing (the stream is cut).
    pub cut: bool,
    /// The status (200: the chunks are an SSE stream; else they are a JSON error body).
    pub status: u16,
    /// More response headers (`Retry-After`).
    pub headers: Vec<(String, String)>,
}

impl Script {
    pub fn new(chunks: Vec<String>) -> Self {
        Script {
            head_delay: Duration::ZERO,
            delay: Duration::ZERO,
            chunks,
            cut: false,
            status: 200,
            headers: Vec::new(),
        }
    }

    /// An error answer: `status`, `headers` and the JSON `body`, as a provider sends it.
    pub fn error(status: u16, headers: &[(&str, &str)], body: serde_json::Value) -> Self {
        Script {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Script::new(vec![body.to_string()])
        }
    }

    /// An OpenAI chat-completions stream that answers `text` in one chunk.
    pub fn openai_text(text: &str) -> Self {
        let chunk = |delta: serde_json::Value, finish: Option<&str>| {
            format!(
                "data: {}\n\n",
                serde_json::json!({"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
            )
        };
        Script::new(vec![
            chunk(serde_json::json!({"content": text}), None),
            chunk(serde_json::json!({}), Some("stop")),
            "data: [DONE]\n\n".into(),
        ])
    }

    /// An Anthropic Messages stream that answers `text` in one text block.
    pub fn anthropic_text(text: &str) -> Self {
        use serde_json::json;
        let ev = |name: &str, data: serde_json::Value| format!("event: {name}\ndata: {data}\n\n");
        Script::new(vec![
            ev(
                "message_start",
                json!({"type":"message_start","message":{"id":"m","usage":{"input_tokens":5,"output_tokens":1}}}),
            ),
            ev(
                "content_block_start",
                json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
            ),
            ev(
                "content_block_delta",
                json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":text}}),
            ),
            ev(
                "content_block_stop",
                json!({"type":"content_block_stop","index":0}),
            ),
            ev(
                "message_delta",
                json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}),
            ),
            ev("message_stop", json!({"type":"message_stop"})),
        ])
    }
}

pub struct LlmServer {
    pub base: String,
    pub requests: Arc<Mutex<Vec<(String, serde_json::Value)>>>,
}

impl LlmServer {
    pub fn start(scripts: Vec<Script>) -> LlmServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests: Arc<Mutex<Vec<(String, serde_json::Value)>>> = Default::default();
        let scripts = Arc::new(Mutex::new(scripts.into_iter()));
        let recorded = requests.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let script = scripts.lock().unwrap().next();
                let recorded = recorded.clone();
                std::thread::spawn(move || serve(conn, script, recorded));
            }
        });
        LlmServer { base, requests }
    }

    pub fn bodies(&self) -> Vec<serde_json::Value> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .map(|(_, b)| b.clone())
            .collect()
    }
}

fn serve(
    mut conn: TcpStream,
    script: Option<Script>,
    recorded: Arc<Mutex<Vec<(String, serde_json::Value)>>>,
) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut length = 0usize;
    let mut head = request_line.clone();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        head.push_str(&line);
        if line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let mut body = vec![0; length];
    if chunked {
        body.clear();
        loop {
            let mut size = String::new();
            if reader.read_line(&mut size).unwrap_or(0) == 0 {
                break;
            }
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            if reader.read_exact(&mut chunk).is_err() || n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else {
        let _ = reader.read_exact(&mut body);
    }
    let json = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    recorded.lock().unwrap().push((head, json));
    let Some(script) = script else {
        let _ = conn.write_all(b"HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\ncontent-length: 40\r\nconnection: close\r\n\r\n{\"error\":{\"message\":\"no more scripts\"}}");
        return;
    };
    std::thread::sleep(script.head_delay);
    if script.status != 200 {
        let body = script.chunks.concat();
        let mut head = format!(
            "HTTP/1.1 {} Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
            script.status,
            body.len()
        );
        for (k, v) in &script.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        let _ = conn.write_all(format!("{head}\r\n{body}").as_bytes());
        let _ = conn.flush();
        return;
    }
    let _ = conn.write_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
    );
    let _ = conn.flush();
    std::thread::sleep(script.delay);
    for chunk in &script.chunks {
        let _ = write!(conn, "{:x}\r\n{chunk}\r\n", chunk.len());
        let _ = conn.flush();
        std::thread::sleep(Duration::from_millis(15));
    }
    if script.cut {
        // Abrupt end: no terminating chunk.
        let _ = conn.shutdown(std::net::Shutdown::Both);
        return;
    }
    let _ = conn.write_all(b"0\r\n\r\n");
    let _ = conn.flush();
}

/// Splits `text` into pieces of `n` bytes (on char boundaries).
pub fn pieces(text: &str, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        cur.push(c);
        if cur.len() >= n {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}
