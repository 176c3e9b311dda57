//! Anthropic's Messages API: `POST {base}/v1/messages` with `stream: true`; the SSE stream of
//! `message_start`, `content_block_start` / `content_block_delta` (`text_delta`,
//! `thinking_delta`, `input_json_delta`) / `content_block_stop`, `message_delta` (stop reason,
//! output tokens), `message_stop`, `ping`, `error`.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::files::FileContent;
use crate::http::{api_key, sse_post, HttpRequest, StreamParser, WireProtocol};
use crate::model::{ModelError, ModelEvent, ModelMessage, ModelRequest, ToolCall};
use crate::stream::{error_event, finished, json, text, PendingCall};
use eve_protocol::framing::SseMessage;

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";
pub const API_VERSION: &str = "2023-06-01";
pub const MAX_TOKENS: u64 = 4096;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anthropic {
    pub base_url: String,
    pub api_key: Option<String>,
    pub model: String,
    /// `llm_max_tokens`; unset: [`MAX_TOKENS`] (Anthropic requires a value).
    pub max_tokens: Option<u64>,
}

impl WireProtocol for Anthropic {
    type Parser = AnthropicParser;

    fn request(&self, request: &ModelRequest) -> HttpRequest {
        let mut headers = vec![("anthropic-version".to_string(), API_VERSION.to_string())];
        if let Some(key) = api_key(&self.api_key) {
            headers.push(("x-api-key".into(), key.to_string()));
        }
        let base = self.base_url.trim_end_matches('/');
        let url = if base.ends_with("/v1") {
            format!("{base}/messages")
        } else {
            format!("{base}/v1/messages")
        };
        sse_post(
            url,
            headers,
            request_body(&self.model, request),
            self.max_tokens,
        )
    }

    fn parser(&self) -> AnthropicParser {
        AnthropicParser::default()
    }

    fn name(&self) -> &'static str {
        "Anthropic"
    }
}

/// The Messages request body. Consecutive messages of one role are merged (tool results
/// all go in one user message after the assistant's `tool_use` blocks).
pub fn request_body(model: &str, request: &ModelRequest) -> Value {
    let mut messages: Vec<(String, Vec<Value>)> = Vec::new();
    let mut push = |role: &str, block: Value| match messages.last_mut() {
        Some((r, blocks)) if r == role => blocks.push(block),
        _ => messages.push((role.to_string(), vec![block])),
    };
    for m in &request.messages {
        match m {
            // Anthropic refuses an empty text block (a message of files only has one).
            ModelMessage::User(text) if text.is_empty() => {}
            ModelMessage::User(text) => push("user", json!({ "type": "text", "text": text })),
            ModelMessage::File(f) => {
                push("user", json!({ "type": "text", "text": f.as_text() }));
                match &f.content {
                    FileContent::Image { media_type, base64 } => push(
                        "user",
                        json!({ "type": "image", "source": { "type": "base64", "media_type": media_type, "data": base64 } }),
                    ),
                    FileContent::Pdf { base64 } => push(
                        "user",
                        json!({ "type": "document", "source": { "type": "base64", "media_type": "application/pdf", "data": base64 } }),
                    ),
                    _ => {}
                }
            }
            ModelMessage::Assistant { text, tool_calls } => {
                if !text.is_empty() {
                    push("assistant", json!({ "type": "text", "text": text }));
                }
                for ToolCall { id, name, input } in tool_calls {
                    push(
                        "assistant",
                        json!({ "type": "tool_use", "id": id, "name": name, "input": input }),
                    );
                }
            }
            ModelMessage::ToolResult {
                tool_call_id,
                content,
                is_error,
                ..
            } => push(
                "user",
                json!({ "type": "tool_result", "tool_use_id": tool_call_id, "content": content, "is_error": is_error }),
            ),
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({ "role": role, "content": content }))
        .collect();
    let mut body = json!({
        "model": model,
        "max_tokens": MAX_TOKENS,
        "stream": true,
        "system": request.system,
        "messages": messages,
    });
    if !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({ "name": t.name, "description": t.description, "input_schema": t.input_schema }))
            .collect();
    }
    body
}

/// Parser state for one response.
#[derive(Debug, Default)]
pub struct AnthropicParser {
    tools: HashMap<u64, PendingCall>,
    input_tokens: u64,
    output_tokens: u64,
    stop_reason: Option<String>,
    stopped: bool,
}

impl StreamParser for AnthropicParser {
    fn message(&mut self, msg: &SseMessage) -> Result<Vec<ModelEvent>, ModelError> {
        let Some(v) = json("Anthropic", &msg.data)? else {
            return Ok(vec![]);
        };
        let kind = v.get("type").and_then(Value::as_str).unwrap_or(&msg.event);
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        let mut out = Vec::new();
        match kind {
            "message_start" => {
                if let Some(n) = v
                    .pointer("/message/usage/input_tokens")
                    .and_then(Value::as_u64)
                {
                    self.input_tokens = n;
                }
            }
            "content_block_start" => self.block_start(&v, index, &mut out),
            "content_block_delta" => self.block_delta(&v, index, &mut out),
            "content_block_stop" => {
                if let Some(tool) = self.tools.remove(&index) {
                    out.push(tool.ready());
                }
            }
            "message_delta" => self.message_delta(&v),
            "message_stop" => self.message_stop(&mut out),
            "error" => {
                let message = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("Anthropic stream error")
                    .to_string();
                let kind = v.pointer("/error/type").and_then(Value::as_str);
                return Err(error_event(message, kind));
            }
            _ => {} // ping and future event types
        }
        Ok(out)
    }

    fn end(&mut self) -> Result<Vec<ModelEvent>, ModelError> {
        if self.stopped {
            Ok(vec![])
        } else {
            // A body that ended early is a broken connection, as one cut mid-read.
            Err(ModelError::transient(
                "stream_cut",
                "Anthropic stream ended before message_stop",
            ))
        }
    }
}

/// The pieces of an Anthropic stream, one event type each.
impl AnthropicParser {
    /// `content_block_start`: a tool call begins (its input follows in deltas), or a text
    /// block begins with text.
    fn block_start(&mut self, v: &Value, index: u64, out: &mut Vec<ModelEvent>) {
        let block = v.get("content_block").cloned().unwrap_or(Value::Null);
        let field = |name: &str| text(&block, name).unwrap_or_default();
        match block.get("type").and_then(Value::as_str) {
            Some("tool_use") => {
                let call = PendingCall::new(field("id"), field("name"));
                out.push(call.started());
                self.tools.insert(index, call);
            }
            Some("text") => out.extend(text(&block, "text").map(ModelEvent::TextDelta)),
            _ => {}
        }
    }

    /// `content_block_delta`: text, thinking, or a piece of a tool call's input JSON.
    fn block_delta(&mut self, v: &Value, index: u64, out: &mut Vec<ModelEvent>) {
        let delta = v.get("delta").cloned().unwrap_or(Value::Null);
        match delta.get("type").and_then(Value::as_str) {
            Some("text_delta") => out.extend(text(&delta, "text").map(ModelEvent::TextDelta)),
            Some("thinking_delta") => {
                out.extend(text(&delta, "thinking").map(ModelEvent::ReasoningDelta))
            }
            Some("input_json_delta") => {
                let part = text(&delta, "partial_json").unwrap_or_default();
                if let Some(tool) = self.tools.get_mut(&index) {
                    out.extend(tool.push(&part));
                }
            }
            _ => {}
        }
    }

    /// `message_delta`: the stop reason and the token counts so far.
    fn message_delta(&mut self, v: &Value) {
        if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
            self.stop_reason = Some(r.to_string());
        }
        if let Some(n) = v.pointer("/usage/output_tokens").and_then(Value::as_u64) {
            self.output_tokens = n;
        }
        if let Some(n) = v.pointer("/usage/input_tokens").and_then(Value::as_u64) {
            self.input_tokens = n;
        }
    }

    /// `message_stop`: the usage, then the finish reason (`end_turn` when none was sent).
    fn message_stop(&mut self, out: &mut Vec<ModelEvent>) {
        self.stopped = true;
        let reason = self
            .stop_reason
            .clone()
            .unwrap_or_else(|| "end_turn".into());
        out.extend(finished(self.input_tokens, self.output_tokens, reason));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolSpec;
    use crate::testing::stream_through;

    fn provider() -> Anthropic {
        Anthropic {
            base_url: "http://127.0.0.1:9".into(),
            api_key: Some("key".into()),
            model: "claude".into(),
            max_tokens: None,
        }
    }

    fn request() -> ModelRequest {
        ModelRequest {
            system: "sys".into(),
            messages: vec![
                ModelMessage::User("two cities".into()),
                ModelMessage::Assistant {
                    text: "Checking.".into(),
                    tool_calls: vec![
                        ToolCall {
                            id: "t1".into(),
                            name: "get_weather".into(),
                            input: json!({"city":"A"}),
                        },
                        ToolCall {
                            id: "t2".into(),
                            name: "get_weather".into(),
                            input: json!({"city":"B"}),
                        },
                    ],
                },
                ModelMessage::ToolResult {
                    tool_call_id: "t1".into(),
                    tool_name: "get_weather".into(),
                    content: "1".into(),
                    is_error: false,
                },
                ModelMessage::ToolResult {
                    tool_call_id: "t2".into(),
                    tool_name: "get_weather".into(),
                    content: "2".into(),
                    is_error: true,
                },
            ],
            tools: vec![ToolSpec {
                name: "get_weather".into(),
                description: "w".into(),
                input_schema: json!({"type":"object"}),
            }],
        }
    }

    #[test]
    fn files_become_image_document_and_text_blocks_of_the_user_message() {
        let body = request_body("m", &crate::testing::mixed_files_request());
        let msgs = body["messages"].as_array().unwrap();
        // Consecutive user content is one message; the empty text block is left out.
        assert_eq!(msgs.len(), 1, "{body}");
        let c = msgs[0]["content"].as_array().unwrap();
        assert_eq!(c[0]["text"], "what is in these?");
        assert_eq!(c[1]["text"], "Attached file p.png (image/png)");
        let b64 = crate::files::base64(b"\x89PNG\r\n\x1a\n\0\0");
        assert_eq!(
            c[2],
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64}})
        );
        assert_eq!(
            c[4],
            json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQ="}})
        );
        assert_eq!(c[5]["text"], "Attached file a.csv (text/csv):\n\na,b");
        assert!(c
            .iter()
            .all(|b| b["type"] != "text" || !b["text"].as_str().unwrap().is_empty()));
        assert_eq!(c.len(), 7);
    }

    #[test]
    fn the_request_has_system_tools_version_header_and_merged_tool_results() {
        let r = provider().request(&request());
        assert_eq!(r.url, "http://127.0.0.1:9/v1/messages");
        assert!(r.headers.contains(&("x-api-key".into(), "key".into())));
        assert!(r
            .headers
            .contains(&("anthropic-version".into(), API_VERSION.into())));
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(body["system"], "sys");
        assert_eq!(body["stream"], true);
        let msgs = body["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 3);
        assert_eq!(msgs[1]["content"][1]["type"], "tool_use");
        assert_eq!(msgs[2]["role"], "user");
        assert_eq!(msgs[2]["content"].as_array().unwrap().len(), 2);
        assert_eq!(msgs[2]["content"][1]["is_error"], true);
        assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    }

    fn ev(name: &str, data: Value) -> String {
        format!("event: {name}\ndata: {data}\n\n")
    }

    fn full_stream() -> String {
        [
            ev("message_start", json!({"type":"message_start","message":{"id":"m","usage":{"input_tokens":12,"output_tokens":1}}})),
            ev("content_block_start", json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}})),
            ev("content_block_delta", json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me see"}})),
            ev("content_block_stop", json!({"type":"content_block_stop","index":0})),
            ev("content_block_start", json!({"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}})),
            ev("ping", json!({"type":"ping"})),
            ev("content_block_delta", json!({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Okay."}})),
            ev("content_block_stop", json!({"type":"content_block_stop","index":1})),
            ev("content_block_start", json!({"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}})),
            ev("content_block_delta", json!({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}})),
            ev("content_block_delta", json!({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Li"}})),
            ev("content_block_delta", json!({"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"ma\"}"}})),
            ev("content_block_stop", json!({"type":"content_block_stop","index":2})),
            ev("message_delta", json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}})),
            ev("message_stop", json!({"type":"message_stop"})),
        ]
        .concat()
    }

    #[test]
    fn thinking_text_and_a_tool_use_split_across_chunks_stream_as_events() {
        let all = full_stream();
        let pieces: Vec<String> = all
            .as_bytes()
            .chunks(5)
            .map(|c| String::from_utf8(c.to_vec()).unwrap())
            .collect();
        let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
        let (events, r) = stream_through(provider(), 200, &refs, &request());
        assert_eq!(r, Ok(()));
        assert_eq!(events[0], ModelEvent::ReasoningDelta("Let me see".into()));
        assert_eq!(events[1], ModelEvent::TextDelta("Okay.".into()));
        assert_eq!(
            events[2],
            ModelEvent::ToolCallStarted {
                id: "toolu_1".into(),
                name: "get_weather".into()
            }
        );
        assert!(events.contains(&ModelEvent::ToolCallReady(ToolCall {
            id: "toolu_1".into(),
            name: "get_weather".into(),
            input: json!({"city": "Lima"}),
        })));
        assert!(events.contains(&ModelEvent::Usage {
            input_tokens: 12,
            output_tokens: 30
        }));
        assert_eq!(
            events.last(),
            Some(&ModelEvent::Finished {
                reason: "tool_use".into()
            })
        );
    }

    #[test]
    fn a_stream_cut_before_message_stop_fails_and_the_open_tool_use_never_becomes_ready() {
        let all = full_stream();
        let cut = &all[..all.find("ma\\\"}").unwrap()];
        let (events, r) = stream_through(provider(), 200, &[cut], &request());
        assert!(
            matches!(r, Err(ModelError::Provider { ref code, transient, .. }) if code == "stream_cut" && transient)
        );
        assert!(!events
            .iter()
            .any(|e| matches!(e, ModelEvent::ToolCallReady(_))));
    }

    #[test]
    fn an_error_event_fails_the_call_with_its_message() {
        let s = ev(
            "error",
            json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}),
        );
        let (_, r) = stream_through(provider(), 200, &[&s], &request());
        assert!(
            matches!(r, Err(ModelError::Provider { message, transient, .. }) if message == "Overloaded" && transient),
            "Anthropic's overloaded_error mid-stream is worth another try"
        );
    }
}
