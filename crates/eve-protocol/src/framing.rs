//! Stream framing: how stored events go on the wire to readers (NDJSON lines, or SSE frames
//! with `id:` so `Last-Event-ID` resumes), keep-alives, where a read starts, and the decoder of
//! SSE byte streams that the model providers speak.

use eve_api::eve::{NDJSON_CONTENT_TYPE, SSE_CONTENT_TYPE};

/// The wire format of a session stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFormat {
    /// One JSON object per line (the default).
    Ndjson,
    /// Server-sent events: `id: <index>` and `data: <json>` per event.
    Sse,
}

impl StreamFormat {
    /// SSE when the `Accept` header asks for `text/event-stream`, else NDJSON.
    pub fn from_accept(accept: Option<&str>) -> Self {
        let wants_sse = accept.is_some_and(|a| {
            a.split(',').any(|part| {
                part.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .eq_ignore_ascii_case(SSE_CONTENT_TYPE)
            })
        });
        if wants_sse {
            StreamFormat::Sse
        } else {
            StreamFormat::Ndjson
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            StreamFormat::Ndjson => NDJSON_CONTENT_TYPE,
            StreamFormat::Sse => "text/event-stream; charset=utf-8",
        }
    }

    /// Frames one stored event (`body` is its envelope JSON) at `index`.
    pub fn frame(self, index: u64, body: &str) -> String {
        match self {
            StreamFormat::Ndjson => format!("{body}\n"),
            StreamFormat::Sse => format!("id: {index}\ndata: {body}\n\n"),
        }
    }

    /// A keep-alive that readers ignore: a bare newline (eve's NDJSON keep-alive), an SSE
    /// comment.
    pub fn keepalive(self) -> &'static str {
        match self {
            StreamFormat::Ndjson => "\n",
            StreamFormat::Sse => ": keepalive\n\n",
        }
    }

    /// What opens a stream: an empty line, as eve's NDJSON streams begin; SSE tells
    /// `EventSource` to reconnect after 1 s.
    pub fn preamble(self) -> &'static str {
        match self {
            StreamFormat::Ndjson => "\n",
            StreamFormat::Sse => "retry: 1000\n\n",
        }
    }

    /// The control line that ends a leased stream (`streamControlVersion=1`).
    pub fn lease_ended(self) -> String {
        match self {
            StreamFormat::Ndjson => format!("{}\n", eve_api::eve::LEASE_ENDED_CONTROL),
            StreamFormat::Sse => format!(
                "event: control\ndata: {}\n\n",
                eve_api::eve::LEASE_ENDED_CONTROL
            ),
        }
    }

    /// The `x-eve-stream-format` value.
    pub fn name(self) -> &'static str {
        match self {
            StreamFormat::Ndjson => "ndjson",
            StreamFormat::Sse => "sse",
        }
    }
}

/// Where a read of a stream whose tail has `len` events starts: a negative start counts back
/// from the tail (clamped at 0).
pub fn resolve_start(start_index: i64, len: u64) -> u64 {
    if start_index >= 0 {
        start_index as u64
    } else {
        len.saturating_sub(start_index.unsigned_abs())
    }
}

/// The first value of `name` in a query string (no percent-decoding: our parameters are plain).
pub fn query_param<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query
        .trim_start_matches('?')
        .split('&')
        .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// One server-sent event as decoded from a byte stream.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseMessage {
    /// The `event:` field (empty when absent).
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    pub id: Option<String>,
}

/// An incremental SSE decoder (per the WHATWG rules that matter to API streams: `\n`, `\r\n`
/// or `\r` line ends, `:` comments, `data:` lines joined, an event dispatched on a blank line).
/// Bytes may arrive split anywhere, including inside a UTF-8 sequence.
#[derive(Debug, Default)]
pub struct SseDecoder {
    buffer: Vec<u8>,
    current: SseMessage,
    has_data: bool,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the events completed by them.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<SseMessage> {
        self.buffer.extend_from_slice(bytes);
        let mut out = Vec::new();
        while let Some(pos) = self.buffer.iter().position(|b| *b == b'\n' || *b == b'\r') {
            // A '\r' at the very end may be the first half of "\r\n": wait for more.
            if self.buffer[pos] == b'\r' && pos + 1 == self.buffer.len() {
                break;
            }
            let line: Vec<u8> = self.buffer[..pos].to_vec();
            let skip = if self.buffer[pos] == b'\r' && self.buffer.get(pos + 1) == Some(&b'\n') {
                2
            } else {
                1
            };
            self.buffer.drain(..pos + skip);
            let line = String::from_utf8_lossy(&line);
            if let Some(msg) = self.line(&line) {
                out.push(msg);
            }
        }
        out
    }

    /// The stream ended: an event without its terminating blank line is dropped (per spec).
    pub fn finish(&mut self) -> Option<SseMessage> {
        None
    }

    fn line(&mut self, line: &str) -> Option<SseMessage> {
        if line.is_empty() {
            if !self.has_data && self.current.event.is_empty() {
                self.current = SseMessage::default();
                return None;
            }
            self.has_data = false;
            return Some(std::mem::take(&mut self.current));
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.current.event = value.to_string(),
            "data" => {
                if self.has_data {
                    self.current.data.push('\n');
                }
                self.current.data.push_str(value);
                self.has_data = true;
            }
            "id" => self.current.id = Some(value.to_string()),
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ndjson_frames_are_the_envelope_on_one_line_and_sse_frames_carry_the_index() {
        let body = r#"{"type":"turn.started","data":{"sequence":0,"turnId":"turn_0"},"meta":{"at":"x","id":"evt_1"}}"#;
        assert_eq!(StreamFormat::Ndjson.frame(3, body), format!("{body}\n"));
        assert_eq!(
            StreamFormat::Sse.frame(3, body),
            format!("id: 3\ndata: {body}\n\n")
        );
    }

    #[test]
    fn keepalives_are_bare_newlines_or_comments_and_ndjson_opens_with_an_empty_line() {
        assert_eq!(StreamFormat::Ndjson.keepalive(), "\n");
        assert!(StreamFormat::Sse.keepalive().starts_with(':'));
        assert_eq!(StreamFormat::Ndjson.preamble(), "\n");
        assert_eq!(
            StreamFormat::Ndjson.lease_ended(),
            "{\"$eve\":\"stream.lease-ended\",\"version\":1}\n"
        );
    }

    #[test]
    fn accept_selects_sse_only_when_it_names_text_event_stream() {
        assert_eq!(
            StreamFormat::from_accept(Some("text/event-stream")),
            StreamFormat::Sse
        );
        assert_eq!(
            StreamFormat::from_accept(Some("application/json, text/event-stream;q=0.9")),
            StreamFormat::Sse
        );
        assert_eq!(
            StreamFormat::from_accept(Some("application/x-ndjson")),
            StreamFormat::Ndjson
        );
        assert_eq!(StreamFormat::from_accept(None), StreamFormat::Ndjson);
    }

    #[test]
    fn negative_starts_count_back_from_the_tail() {
        assert_eq!(resolve_start(3, 10), 3);
        assert_eq!(resolve_start(-1, 10), 9);
        assert_eq!(resolve_start(-2, 10), 8);
        assert_eq!(resolve_start(-50, 10), 0);
        assert_eq!(resolve_start(50, 10), 50);
    }

    #[test]
    fn sse_decoder_handles_events_split_across_chunks_and_line_endings() {
        let mut d = SseDecoder::new();
        let mut all = Vec::new();
        let text = "event: a\r\ndata: {\"x\":\r\ndata: 1}\r\n\r\n: comment\n\ndata: ü\n\nid: 4\ndata: last\n\n";
        for b in text.as_bytes() {
            all.extend(d.push(std::slice::from_ref(b)));
        }
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].event, "a");
        assert_eq!(all[0].data, "{\"x\":\n1}");
        assert_eq!(all[1].data, "ü");
        assert_eq!(all[2].id.as_deref(), Some("4"));
        assert_eq!(all[2].data, "last");
    }

    #[test]
    fn sse_decoder_drops_an_event_cut_before_its_blank_line() {
        let mut d = SseDecoder::new();
        assert!(d.push(b"data: partial").is_empty());
        assert!(d.finish().is_none());
    }
}
