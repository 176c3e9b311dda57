//! Model providers over HTTP: the seam to the network ([`Transport`]), a wire protocol
//! ([`WireProtocol`]: request body + SSE stream parser), and the driver that joins them
//! ([`HttpModel`]). The component supplies the transport (wasi:http); tests a scripted one.

use crate::model::{Flow, Model, ModelError, ModelEvent, ModelRequest};
use crate::retry;
use crate::stream::{emit, emit_all};
use eve_protocol::framing::{SseDecoder, SseMessage};

/// An outgoing HTTP request.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpRequest {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// One read of a response body.
#[derive(Debug, Clone, PartialEq)]
pub enum Read {
    Data(Vec<u8>),
    /// Nothing arrived within the transport's poll interval.
    Idle,
    End,
}

/// A response body being received.
pub trait ByteStream {
    fn read(&mut self) -> Result<Read, String>;
}

/// A response as soon as its head arrived.
pub struct HttpResponse {
    pub status: u16,
    /// The response headers (the provider's `Retry-After` among them).
    pub headers: Vec<(String, String)>,
    pub body: Box<dyn ByteStream>,
}

/// Sends requests.
pub trait Transport {
    /// POSTs `request`; answers the status, the headers and the body stream as soon as the
    /// head arrives. While it waits for it it calls `waiting` every poll interval; `false`
    /// abandons the request (answered as [`INTERRUPTED`]).
    fn post(
        &mut self,
        request: HttpRequest,
        waiting: &mut dyn FnMut() -> bool,
    ) -> Result<HttpResponse, String>;
}

/// A boxed transport is one (the component hands out its transport boxed).
impl<T: Transport + ?Sized> Transport for Box<T> {
    fn post(
        &mut self,
        request: HttpRequest,
        waiting: &mut dyn FnMut() -> bool,
    ) -> Result<HttpResponse, String> {
        (**self).post(request, waiting)
    }
}

/// A provider's wire format.
pub trait WireProtocol {
    /// A fresh parser for one response.
    type Parser: StreamParser;
    fn request(&self, request: &ModelRequest) -> HttpRequest;
    fn parser(&self) -> Self::Parser;
    /// The provider's name for messages (`OpenAI-compatible`, `Anthropic`).
    fn name(&self) -> &'static str;
}

/// Turns a provider's SSE messages into model events.
pub trait StreamParser {
    /// One decoded SSE message → events (or a provider error event).
    fn message(&mut self, msg: &SseMessage) -> Result<Vec<ModelEvent>, ModelError>;
    /// The body ended: `Ok` only if the model had finished.
    fn end(&mut self) -> Result<Vec<ModelEvent>, ModelError>;
}

/// A streaming JSON POST to `url`: the content type and `accept: text/event-stream`, then
/// `headers`; the body's `max_tokens` when one is configured (`llm_max_tokens`).
pub fn sse_post(
    url: String,
    headers: Vec<(String, String)>,
    mut body: serde_json::Value,
    max_tokens: Option<u64>,
) -> HttpRequest {
    if let Some(n) = max_tokens {
        body["max_tokens"] = n.into();
    }
    let mut all = vec![
        ("content-type".to_string(), "application/json".to_string()),
        ("accept".to_string(), "text/event-stream".to_string()),
    ];
    all.extend(headers);
    HttpRequest {
        url,
        headers: all,
        body: body.to_string().into_bytes(),
    }
}

/// The API key when one is set (an empty one is none).
pub fn api_key(key: &Option<String>) -> Option<&str> {
    key.as_deref().filter(|k| !k.is_empty())
}

/// The transport's error when `waiting` abandoned a request.
pub const INTERRUPTED: &str = "interrupted";
/// What Spin's refusal of an outbound host says (`allowed_outbound_hosts`): a configuration
/// to fix, not a provider to try again.
pub const REQUEST_DENIED: &str = "HttpRequestDenied";

/// How long a model may stay silent before the call fails (in transport polls: the component's
/// transport polls every 250 ms, so 1200 polls = 5 minutes).
pub const MAX_IDLE_POLLS: u32 = 1200;
/// Error bodies are read up to this size for the message.
const MAX_ERROR_BODY: usize = 4096;

/// A model reached over HTTP.
pub struct HttpModel<P: WireProtocol, T: Transport> {
    pub protocol: P,
    pub transport: T,
}

/// What a reader of the stream is told about a failed model call with the error `code`
/// ([`ModelError::Provider`]): generic on purpose, the details go to the log.
pub fn user_message(code: &str) -> &'static str {
    match code {
        "unreachable" => "The model provider could not be reached.",
        // New words, so in both of the app's languages (the stream has no reader language).
        retry::BROKE_OFF => {
            "The model provider failed partway through the answer. It was not tried again, \
             so that nothing is shown twice: send the message again. \
             模型服务在回答中途出错。为避免内容重复显示，未自动重试：请重新发送消息。"
        }
        _ => "The model provider returned an error.",
    }
}

impl<P: WireProtocol, T: Transport> Model for HttpModel<P, T> {
    fn stream(
        &mut self,
        request: &ModelRequest,
        on: &mut dyn FnMut(ModelEvent) -> Flow,
    ) -> Result<(), ModelError> {
        let name = self.protocol.name();
        let mut waiting = || on(ModelEvent::Waiting) == Flow::Continue;
        let HttpResponse {
            status,
            headers,
            mut body,
        } = match self
            .transport
            .post(self.protocol.request(request), &mut waiting)
        {
            Ok(r) => r,
            Err(e) if e == INTERRUPTED => return Err(ModelError::Interrupted),
            Err(e) => {
                let message = format!("{name} provider unreachable: {e}");
                // A refused connection or a reset is the network's (eve retries it); a host
                // the deployment does not allow stays refused.
                return Err(if e.contains(REQUEST_DENIED) {
                    ModelError::provider("unreachable", message)
                } else {
                    ModelError::transient("unreachable", message)
                });
            }
        };
        if !(200..300).contains(&status) {
            let text = read_error_body(body.as_mut(), on)?;
            // The provider's own message, as eve reports it (`step.failed.message`).
            let summary = summarize_error(&text);
            let message = if summary.trim().is_empty() {
                format!("{name} provider answered HTTP {status}")
            } else {
                summary
            };
            return Err(ModelError::Provider {
                message,
                code: "http_status".into(),
                transient: retry::transient_status(status)
                    || error_type(&text).is_some_and(|t| retry::transient_type(&t)),
                retry_after: retry::retry_after(&headers),
            });
        }
        let mut decoder = SseDecoder::new();
        let mut parser = self.protocol.parser();
        let mut idle = 0u32;
        loop {
            match body.read() {
                Ok(Read::Data(bytes)) => {
                    idle = 0;
                    for msg in decoder.push(&bytes) {
                        emit_all(on, parser.message(&msg)?)?;
                    }
                }
                Ok(Read::Idle) => {
                    idle += 1;
                    emit(on, ModelEvent::Waiting)?;
                    if idle >= MAX_IDLE_POLLS {
                        return Err(ModelError::transient(
                            "timeout",
                            format!("{name} provider sent nothing for too long"),
                        ));
                    }
                }
                Ok(Read::End) => return emit_all(on, parser.end()?),
                Err(e) => {
                    return Err(ModelError::transient(
                        "stream_cut",
                        format!("{name} provider stream broke: {e}"),
                    ))
                }
            }
        }
    }
}

fn read_error_body(
    body: &mut dyn ByteStream,
    on: &mut dyn FnMut(ModelEvent) -> Flow,
) -> Result<String, ModelError> {
    let mut buf = Vec::new();
    let mut idle = 0;
    while buf.len() < MAX_ERROR_BODY && idle < 40 {
        match body.read() {
            Ok(Read::Data(b)) => buf.extend(b),
            Ok(Read::Idle) => {
                idle += 1;
                emit(on, ModelEvent::Waiting)?;
            }
            Ok(Read::End) | Err(_) => break,
        }
    }
    buf.truncate(MAX_ERROR_BODY);
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// The `error.type` of a JSON error body (`overloaded_error`, `rate_limit_error`, ...).
pub fn error_type(body: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    v.pointer("/error/type")
        .and_then(|t| t.as_str())
        .map(str::to_string)
}

/// The `error.message` of a JSON error body, else the body's start.
pub fn summarize_error(body: &str) -> String {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(body) {
        if let Some(m) = v
            .pointer("/error/message")
            .or_else(|| v.get("message"))
            .or_else(|| v.get("error"))
            .and_then(|m| m.as_str())
        {
            return m.chars().take(300).collect();
        }
    }
    body.chars().take(300).collect()
}

#[cfg(test)]
pub mod testing {
    //! A scripted transport for provider tests.
    use super::*;
    use std::collections::VecDeque;

    pub struct Scripted {
        pub status: u16,
        pub headers: Vec<(String, String)>,
        pub chunks: VecDeque<Read>,
        pub sent: Vec<HttpRequest>,
        pub fail: Option<String>,
    }

    impl Scripted {
        pub fn new(status: u16, chunks: &[&str]) -> Self {
            Scripted {
                status,
                headers: Vec::new(),
                chunks: chunks
                    .iter()
                    .map(|c| Read::Data(c.as_bytes().to_vec()))
                    .collect(),
                sent: Vec::new(),
                fail: None,
            }
        }
    }

    struct Body(VecDeque<Read>);
    impl ByteStream for Body {
        fn read(&mut self) -> Result<Read, String> {
            Ok(self.0.pop_front().unwrap_or(Read::End))
        }
    }

    impl Transport for &mut Scripted {
        fn post(
            &mut self,
            request: HttpRequest,
            _waiting: &mut dyn FnMut() -> bool,
        ) -> Result<HttpResponse, String> {
            self.sent.push(request);
            if let Some(e) = &self.fail {
                return Err(e.clone());
            }
            Ok(HttpResponse {
                status: self.status,
                headers: self.headers.clone(),
                body: Box::new(Body(std::mem::take(&mut self.chunks))),
            })
        }
    }

    /// Runs a model to the end, collecting its events.
    pub fn collect(
        model: &mut dyn Model,
        req: &ModelRequest,
    ) -> (Vec<ModelEvent>, Result<(), ModelError>) {
        let mut events = Vec::new();
        let r = model.stream(req, &mut |e| {
            if e != ModelEvent::Waiting {
                events.push(e);
            }
            Flow::Continue
        });
        (events, r)
    }
}
