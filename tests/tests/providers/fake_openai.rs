//! A small OpenAI-compatible server for the provider tests, speaking the real wire format:
//! `GET /v1/models` (the model list, or OpenAI's 401 error body for a wrong key) and
//! `POST /v1/chat/completions` (a streamed answer). It checks `Authorization: Bearer <key>`
//! and records every request's method, path and authorization.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// What the provider says to a wrong key (OpenAI's own text and shape).
pub const WRONG_KEY: &str = "Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.";

/// One request: method, path, `authorization` header.
pub type Seen = (String, String, Option<String>);

pub struct FakeOpenAi {
    /// `http://127.0.0.1:<port>/v1`.
    pub base: String,
    /// `127.0.0.1:<port>`, as the outbound allow-list names it.
    pub host: String,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

impl FakeOpenAi {
    /// A server that accepts `key` and answers every chat with `answer`.
    pub fn start(key: &str, answer: &str) -> FakeOpenAi {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let host = listener.local_addr().unwrap().to_string();
        let seen: Arc<Mutex<Vec<Seen>>> = Default::default();
        let (key, answer, recorded) = (key.to_string(), answer.to_string(), seen.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let (key, answer, recorded) = (key.clone(), answer.clone(), recorded.clone());
                std::thread::spawn(move || serve(conn, &key, &answer, &recorded));
            }
        });
        FakeOpenAi {
            base: format!("http://{host}/v1"),
            host,
            seen,
        }
    }

    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve(conn: TcpStream, key: &str, answer: &str, seen: &Mutex<Vec<Seen>>) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        return;
    }
    let mut parts = line.split_whitespace();
    let (method, path) = (
        parts.next().unwrap_or_default().to_string(),
        parts.next().unwrap_or_default().to_string(),
    );
    let (mut length, mut auth) = (0usize, None);
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            match k.trim().to_ascii_lowercase().as_str() {
                "content-length" => length = v.trim().parse().unwrap_or(0),
                "authorization" => auth = Some(v.trim().to_string()),
                _ => {}
            }
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    seen.lock()
        .unwrap()
        .push((method.clone(), path.clone(), auth.clone()));
    let authorized = auth.as_deref() == Some(&format!("Bearer {key}"));
    let (status, kind, body) = match (method.as_str(), path.as_str(), authorized) {
        (_, _, false) => (
            "401 Unauthorized",
            "application/json",
            serde_json::json!({"error": {"message": WRONG_KEY, "type": "invalid_request_error",
                "param": null, "code": "invalid_api_key"}})
            .to_string(),
        ),
        ("GET", "/v1/models", true) => (
            "200 OK",
            "application/json",
            serde_json::json!({"object": "list", "data": [
                {"id": "fake-1", "object": "model", "created": 1, "owned_by": "fake"},
                {"id": "fake-2", "object": "model", "created": 1, "owned_by": "fake"}]})
            .to_string(),
        ),
        ("POST", "/v1/chat/completions", true) => ("200 OK", "text/event-stream", chat(answer)),
        _ => (
            "404 Not Found",
            "application/json",
            r#"{"error":{"message":"no such route"}}"#.to_string(),
        ),
    };
    let mut conn = conn;
    let _ = write!(
        conn,
        "HTTP/1.1 {status}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = conn.flush();
}

/// A chat-completions stream answering `text`.
fn chat(text: &str) -> String {
    let chunk = |delta: serde_json::Value, finish: Option<&str>| {
        format!(
            "data: {}\n\n",
            serde_json::json!({"id": "c", "object": "chat.completion.chunk", "created": 1,
                "model": "fake-1", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    [
        chunk(
            serde_json::json!({"role": "assistant", "content": text}),
            None,
        ),
        chunk(serde_json::json!({}), Some("stop")),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat()
}
