//! The OpenAI-compatible chat-completions provider (OpenAI, Ollama, vLLM, llama.cpp servers):
//! `POST {base}/chat/completions` with `stream: true`; the SSE stream of `chat.completion.chunk`
//! objects, tool calls streamed as `delta.tool_calls[{index, id, function{name, arguments}}]`
//! fragments, `finish_reason`, a final usage chunk, `data: [DONE]`.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::files::{FileContent, ModelFile};
use crate::http::{api_key, sse_post, HttpRequest, StreamParser, WireProtocol};
use crate::model::{ModelError, ModelEvent, ModelMessage, ModelRequest};
use crate::stream::{error_event, json, text, PendingCall};
use eve_protocol::framing::SseMessage;

/// Default base URL and model.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
pub const DEFAULT_MODEL: &str = "gpt-4o-mini";

/// Configuration of the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenAi {
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    /// `llm_max_tokens`; unset: the server's own default.
    pub max_tokens: Option<u64>,
}

impl WireProtocol for OpenAi {
    type Parser = OpenAiParser;

    fn request(&self, request: &ModelRequest) -> HttpRequest {
        let headers = api_key(&self.api_key)
            .map(|key| ("authorization".to_string(), format!("Bearer {key}")))
            .into_iter()
            .collect();
        let url = format!("{}/chat/completions", self.base_url.trim_end_matches('/'));
        sse_post(
            url,
            headers,
            request_body(&self.model, request),
            self.max_tokens,
        )
    }

    fn parser(&self) -> OpenAiParser {
        OpenAiParser::default()
    }

    fn name(&self) -> &'static str {
        "OpenAI-compatible"
    }
}

/// A file as content parts: the label (with a text file's contents), then an image as an
/// `image_url` data URL or a PDF as a `file` part with `file_data`.
fn file_parts(f: &ModelFile) -> Vec<Value> {
    let text = json!({ "type": "text", "text": f.as_text() });
    match &f.content {
        FileContent::Image { media_type, base64 } => vec![
            text,
            json!({ "type": "image_url", "image_url": { "url": format!("data:{media_type};base64,{base64}") } }),
        ],
        FileContent::Pdf { base64 } => vec![
            text,
            json!({ "type": "file", "file": {
                "filename": f.filename.as_deref().unwrap_or("document.pdf"),
                "file_data": format!("data:application/pdf;base64,{base64}"),
            } }),
        ],
        _ => vec![text],
    }
}

/// Appends `parts` to the user message just before (its text becomes a text part; an empty
/// one is dropped), or opens a user message with them.
fn join_user_parts(messages: &mut Vec<Value>, parts: Vec<Value>) {
    if let Some(last) = messages.last_mut().filter(|m| m["role"] == "user") {
        if let Value::String(text) = &last["content"] {
            last["content"] = if text.is_empty() {
                json!([])
            } else {
                json!([{ "type": "text", "text": text }])
            };
        }
        if let Some(content) = last["content"].as_array_mut() {
            content.extend(parts);
            return;
        }
    }
    messages.push(json!({ "role": "user", "content": parts }));
}

/// The chat-completions request body.
pub fn request_body(model: &str, request: &ModelRequest) -> Value {
    let mut messages = vec![json!({ "role": "system", "content": request.system })];
    for m in &request.messages {
        messages.push(match m {
            ModelMessage::File(f) => {
                join_user_parts(&mut messages, file_parts(f));
                continue;
            }
            ModelMessage::User(text) => json!({ "role": "user", "content": text }),
            ModelMessage::Assistant { text, tool_calls } => {
                let mut msg = json!({
                    "role": "assistant",
                    "content": if text.is_empty() { Value::Null } else { Value::String(text.clone()) },
                });
                if !tool_calls.is_empty() {
                    msg["tool_calls"] = tool_calls
                        .iter()
                        .map(|c| {
                            json!({
                                "id": c.id,
                                "type": "function",
                                "function": { "name": c.name, "arguments": c.input.to_string() },
                            })
                        })
                        .collect();
                }
                msg
            }
            ModelMessage::ToolResult {
                tool_call_id,
                content,
                ..
            } => json!({ "role": "tool", "tool_call_id": tool_call_id, "content": content }),
        });
    }
    let mut body = json!({
        "model": model,
        "stream": true,
        "stream_options": { "include_usage": true },
        "messages": messages,
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": { "name": t.name, "description": t.description, "parameters": t.input_schema },
                })
            })
            .collect();
    }
    body
}

/// A streamed tool call before it can be announced: its id and name may come in pieces, and
/// argument fragments may come before either.
#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: Option<String>,
    early_arguments: String,
    announced: Option<PendingCall>,
}

impl PartialCall {
    /// Announces the call as `id` `name`, with the argument fragments that came before.
    fn announce(
        &mut self,
        id: String,
        name: String,
        out: &mut Vec<ModelEvent>,
    ) -> &mut PendingCall {
        let mut call = PendingCall::new(id, name);
        out.push(call.started());
        out.extend(call.push(&std::mem::take(&mut self.early_arguments)));
        self.announced.insert(call)
    }
}

/// Parser state for one response.
#[derive(Debug, Default)]
pub struct OpenAiParser {
    calls: BTreeMap<u64, PartialCall>,
    finish_reason: Option<String>,
    done: bool,
    usage_sent: bool,
}

impl OpenAiParser {
    fn finish(&mut self, reason: &str) -> Vec<ModelEvent> {
        let mut out = Vec::new();
        for (index, mut call) in std::mem::take(&mut self.calls) {
            if call.announced.is_none() {
                let id = call.id.take().unwrap_or_else(|| format!("call_{index}"));
                let name = call.name.take().unwrap_or_default();
                call.announce(id, name, &mut out);
            }
            out.extend(call.announced.map(PendingCall::ready));
        }
        self.finish_reason = Some(reason.to_string());
        out
    }
}

impl StreamParser for OpenAiParser {
    fn message(&mut self, msg: &SseMessage) -> Result<Vec<ModelEvent>, ModelError> {
        if msg.data.trim() == "[DONE]" {
            self.done = true;
            return Ok(vec![]);
        }
        let Some(chunk) = json("OpenAI-compatible", &msg.data)? else {
            return Ok(vec![]);
        };
        if let Some(err) = chunk.get("error") {
            let message = err
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| err.to_string());
            let kind = err.get("type").or_else(|| err.get("code"));
            return Err(error_event(message, kind.and_then(Value::as_str)));
        }
        let mut out = Vec::new();
        if let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) {
            self.choice(choice, &mut out);
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage_sent = true;
            out.push(ModelEvent::Usage {
                input_tokens: usage
                    .get("prompt_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                output_tokens: usage
                    .get("completion_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
            });
        }
        Ok(out)
    }

    fn end(&mut self) -> Result<Vec<ModelEvent>, ModelError> {
        match self.finish_reason.take() {
            Some(reason) => Ok(vec![ModelEvent::Finished { reason }]),
            // A body that ended early is a broken connection, as one cut mid-read.
            None => Err(ModelError::transient(
                "stream_cut",
                "OpenAI-compatible stream ended before the model finished",
            )),
        }
    }
}

/// The pieces of an OpenAI-compatible chunk.
impl OpenAiParser {
    /// The first choice of a chunk: reasoning, text, tool call fragments, the finish reason.
    fn choice(&mut self, choice: &Value, out: &mut Vec<ModelEvent>) {
        let delta = choice.get("delta").cloned().unwrap_or(Value::Null);
        for key in ["reasoning_content", "reasoning"] {
            out.extend(text(&delta, key).map(ModelEvent::ReasoningDelta));
        }
        out.extend(text(&delta, "content").map(ModelEvent::TextDelta));
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for (pos, c) in calls.iter().enumerate() {
                self.tool_call_fragment(pos, c, out);
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            out.extend(self.finish(reason));
        }
    }

    /// One fragment of a streamed tool call (at `pos` in its chunk): its id and name, which
    /// may come in pieces, and a piece of its arguments. The call is announced once both id
    /// and name are known, with the argument fragments that came before.
    fn tool_call_fragment(&mut self, pos: usize, c: &Value, out: &mut Vec<ModelEvent>) {
        let index = c.get("index").and_then(Value::as_u64).unwrap_or(pos as u64);
        let call = self.calls.entry(index).or_default();
        let f = c.get("function").cloned().unwrap_or(Value::Null);
        if let Some(id) = text(c, "id") {
            call.id.get_or_insert(id);
        }
        if let Some(n) = text(&f, "name") {
            match &mut call.name {
                // Some servers stream the name in pieces.
                Some(existing) if call.announced.is_none() => existing.push_str(&n),
                Some(_) => {}
                None => call.name = Some(n),
            }
        }
        let args = text(&f, "arguments").unwrap_or_default();
        if call.announced.is_none() {
            if let (Some(id), Some(name)) = (&call.id, &call.name) {
                let (id, name) = (id.clone(), name.clone());
                call.announce(id, name, out);
            }
        }
        match &mut call.announced {
            Some(announced) => out.extend(announced.push(&args)),
            None => call.early_arguments.push_str(&args),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ToolCall, ToolSpec};
    use crate::testing::stream_through;

    fn provider() -> OpenAi {
        OpenAi {
            base_url: "http://127.0.0.1:9/v1/".into(),
            api_key: Some("sk-test".into()),
            model: "m".into(),
            max_tokens: None,
        }
    }

    fn request() -> ModelRequest {
        ModelRequest {
            system: "sys".into(),
            messages: vec![
                ModelMessage::User("weather?".into()),
                ModelMessage::Assistant {
                    text: String::new(),
                    tool_calls: vec![ToolCall {
                        id: "c0".into(),
                        name: "get_weather".into(),
                        input: json!({"city": "Oslo"}),
                    }],
                },
                ModelMessage::ToolResult {
                    tool_call_id: "c0".into(),
                    tool_name: "get_weather".into(),
                    content: "{\"t\":1}".into(),
                    is_error: false,
                },
            ],
            tools: vec![ToolSpec {
                name: "get_weather".into(),
                description: "w".into(),
                input_schema: json!({"type": "object"}),
            }],
        }
    }

    #[test]
    fn files_join_their_user_message_as_image_url_file_and_text_parts() {
        let body = request_body("m", &crate::testing::mixed_files_request());
        let msgs = body["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 3, "{body}");
        let c = msgs[1]["content"].as_array().unwrap();
        assert_eq!(c[0], json!({"type": "text", "text": "what is in these?"}));
        assert_eq!(c[1]["text"], "Attached file p.png (image/png)");
        let b64 = crate::files::base64(b"\x89PNG\r\n\x1a\n\0\0");
        assert_eq!(
            c[2],
            json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{b64}")}})
        );
        assert_eq!(c[4]["type"], "file");
        assert_eq!(c[4]["file"]["filename"], "r.pdf");
        assert_eq!(
            c[4]["file"]["file_data"],
            "data:application/pdf;base64,JVBERi0xLjQ="
        );
        assert_eq!(c[5]["text"], "Attached file a.csv (text/csv):\n\na,b");
        // A message of a file only: no empty text part; an unreadable kind is a note.
        let only = msgs[2]["content"].as_array().unwrap();
        assert_eq!(only.len(), 1);
        assert_eq!(
            only[0]["text"],
            format!(
                "Attached file z.zip (application/zip). {}",
                crate::files::NOT_READABLE
            )
        );
    }

    #[test]
    fn the_request_is_a_streaming_chat_completion_with_tools_and_bearer_auth() {
        let r = provider().request(&request());
        assert_eq!(r.url, "http://127.0.0.1:9/v1/chat/completions");
        assert!(r
            .headers
            .contains(&("authorization".into(), "Bearer sk-test".into())));
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(body["stream"], true);
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{\"city\":\"Oslo\"}"
        );
        assert_eq!(body["messages"][2]["content"], Value::Null);
        assert_eq!(body["messages"][3]["role"], "tool");
        assert_eq!(body["messages"][3]["tool_call_id"], "c0");
        assert_eq!(body["tools"][0]["function"]["name"], "get_weather");
    }

    fn chunk(delta: Value, finish: Option<&str>) -> String {
        format!(
            "data: {}\n\n",
            json!({"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
        )
    }

    #[test]
    fn text_reasoning_and_usage_stream_as_events_then_finish() {
        let chunks = [
            chunk(json!({"role":"assistant","content":""}), None),
            chunk(json!({"reasoning_content":"think"}), None),
            chunk(json!({"content":"Hel"}), None),
            chunk(json!({"content":"lo"}), None),
            chunk(json!({}), Some("stop")),
            "data: {\"id\":\"x\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\n".into(),
            "data: [DONE]\n\n".into(),
        ];
        let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
        let (events, r) = stream_through(provider(), 200, &refs, &request());
        assert_eq!(r, Ok(()));
        assert_eq!(
            events,
            vec![
                ModelEvent::ReasoningDelta("think".into()),
                ModelEvent::TextDelta("Hel".into()),
                ModelEvent::TextDelta("lo".into()),
                ModelEvent::Usage {
                    input_tokens: 5,
                    output_tokens: 2
                },
                ModelEvent::Finished {
                    reason: "stop".into()
                },
            ]
        );
    }

    #[test]
    fn tool_calls_split_across_chunks_become_started_deltas_and_ready_with_parsed_input() {
        let all = [
            chunk(json!({"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]}), None),
            chunk(json!({"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]}), None),
            chunk(json!({"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_weather","arguments":"{\"city\":"}}]}), None),
            chunk(json!({"tool_calls":[{"index":0,"function":{"arguments":"ty\":\"Paris\"}"}}]}), None),
            chunk(json!({"tool_calls":[{"index":1,"function":{"arguments":"\"Rome\"}"}}]}), None),
            chunk(json!({}), Some("tool_calls")),
            "data: [DONE]\n\n".into(),
        ]
        .concat();
        // Deliver the whole stream in 7-byte pieces: SSE lines are split too.
        let pieces: Vec<String> = all
            .as_bytes()
            .chunks(7)
            .map(|c| String::from_utf8_lossy(c).into_owned())
            .collect();
        let mut bytes_ok = String::new();
        for p in &pieces {
            bytes_ok.push_str(p);
        }
        assert_eq!(bytes_ok, all);
        let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
        let (events, r) = stream_through(provider(), 200, &refs, &request());
        assert_eq!(r, Ok(()));
        let ready: Vec<&ToolCall> = events
            .iter()
            .filter_map(|e| match e {
                ModelEvent::ToolCallReady(c) => Some(c),
                _ => None,
            })
            .collect();
        assert_eq!(ready.len(), 2);
        assert_eq!(ready[0].id, "call_a");
        assert_eq!(ready[0].input, json!({"city": "Paris"}));
        assert_eq!(ready[1].input, json!({"city": "Rome"}));
        let deltas: String = events
            .iter()
            .filter_map(|e| match e {
                ModelEvent::ToolInputDelta { id, delta } if id == "call_a" => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(deltas, "{\"city\":\"Paris\"}");
        assert_eq!(
            events.last(),
            Some(&ModelEvent::Finished {
                reason: "tool_calls".into()
            })
        );
    }

    #[test]
    fn a_stream_cut_in_the_middle_is_an_error_and_no_tool_call_becomes_ready() {
        let chunks = [
            chunk(json!({"content":"Hi"}), None),
            chunk(
                json!({"tool_calls":[{"index":0,"id":"call_a","function":{"name":"get_weather","arguments":"{\"ci"}}]}),
                None,
            ),
        ];
        let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
        let (events, r) = stream_through(provider(), 200, &refs, &request());
        assert!(matches!(r, Err(ModelError::Provider { ref code, .. }) if code == "stream_cut"));
        assert!(!events
            .iter()
            .any(|e| matches!(e, ModelEvent::ToolCallReady(_))));
        assert!(events
            .iter()
            .any(|e| matches!(e, ModelEvent::ToolCallStarted { .. })));
    }

    #[test]
    fn an_http_error_reports_the_providers_message() {
        let (_, r) = stream_through(
            provider(),
            401,
            &["{\"error\":{\"message\":\"Incorrect API key provided\"}}"],
            &request(),
        );
        match r {
            Err(ModelError::Provider { message, .. }) => {
                assert_eq!(
                    message, "Incorrect API key provided",
                    "the provider's own words"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_error_object_in_the_stream_fails_the_call() {
        let (_, r) = stream_through(
            provider(),
            200,
            &["data: {\"error\":{\"message\":\"overloaded\"}}\n\n"],
            &request(),
        );
        assert!(matches!(r, Err(ModelError::Provider { message, .. }) if message == "overloaded"));
    }

    #[test]
    fn an_error_object_in_the_stream_is_transient_only_when_the_provider_is_busy() {
        let is_transient = |data: &str| {
            let (_, r) = stream_through(provider(), 200, &[data], &request());
            matches!(r, Err(ModelError::Provider { transient, .. }) if transient)
        };
        assert!(is_transient(
            "data: {\"error\":{\"message\":\"busy\",\"type\":\"rate_limit_exceeded\"}}\n\n"
        ));
        assert!(!is_transient(
            "data: {\"error\":{\"message\":\"no\",\"type\":\"invalid_request_error\"}}\n\n"
        ));
    }
}

/// How [`HttpModel`] tells transient failures from final ones, through this protocol (the
/// transport is the shared one: `crate::http`; these tests live here so that `http` needs no
/// provider of its own).
#[cfg(test)]
mod http_failures {
    use crate::http::testing::{collect, Scripted};
    use crate::http::HttpModel;
    use crate::model::{ModelError, ModelRequest, RetryAfter};
    use crate::openai::OpenAi;

    fn call(transport: &mut Scripted) -> Result<(), ModelError> {
        let mut model = HttpModel {
            protocol: OpenAi {
                base_url: "http://127.0.0.1:9/v1".into(),
                api_key: Some("sk-test".into()),
                model: "m".into(),
                max_tokens: None,
            },
            transport,
        };
        let request = ModelRequest {
            system: String::new(),
            messages: vec![],
            tools: vec![],
        };
        collect(&mut model, &request).1
    }

    fn failure(r: Result<(), ModelError>) -> (String, bool, Option<RetryAfter>) {
        match r {
            Err(ModelError::Provider {
                code,
                transient,
                retry_after,
                ..
            }) => (code, transient, retry_after),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_429_is_transient_and_carries_the_providers_retry_after() {
        let mut t = Scripted::new(429, &[r#"{"error":{"message":"Rate limit reached"}}"#]);
        t.headers = vec![("retry-after".into(), "3".into())];
        assert_eq!(
            failure(call(&mut t)),
            ("http_status".into(), true, Some(RetryAfter::Delay(3000)))
        );
    }

    #[test]
    fn server_errors_and_an_overloaded_body_are_transient_a_refused_request_is_not() {
        let overloaded =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        for (status, body, transient) in [
            (500, "oops", true),
            (529, overloaded, true),
            (400, overloaded, true),
            (401, r#"{"error":{"message":"Incorrect API key"}}"#, false),
            (400, r#"{"error":{"type":"invalid_request_error"}}"#, false),
        ] {
            let (_, got, _) = failure(call(&mut Scripted::new(status, &[body])));
            assert_eq!(got, transient, "{status} {body}");
        }
    }

    #[test]
    fn an_unreachable_provider_is_transient_unless_spin_denied_the_host() {
        let mut t = Scripted::new(200, &[]);
        t.fail = Some("connection refused".into());
        assert!(failure(call(&mut t)).1);
        t.fail = Some("ErrorCode::HttpRequestDenied".into());
        assert!(!failure(call(&mut t)).1);
    }

    #[test]
    fn a_body_that_ends_before_the_model_finished_is_a_transient_cut() {
        let mut t = Scripted::new(
            200,
            &["data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n"],
        );
        assert_eq!(failure(call(&mut t)), ("stream_cut".into(), true, None));
    }
}
