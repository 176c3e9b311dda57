//! Property tests of the stream framing: every stored envelope framed as NDJSON or SSE reads
//! back as the same envelope (SSE at the same index), whatever the chunking of the bytes on
//! the wire; the SSE decoder never panics and does not depend on where a byte stream is split;
//! and no `Accept`, `Last-Event-ID` or query string makes the cursor code panic.

use eve_api::eve::*;
use eve_protocol::framing::{query_param, resolve_start, SseDecoder, StreamFormat};
use eve_protocol::stream_query;
use proptest::prelude::*;
use serde_json::Value;

/// `cases` runs per property; failures are reported, not saved to files next to the source.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn text() -> impl Strategy<Value = String> {
    // Any text, including newlines, carriage returns, quotes and "data:" look-alikes.
    prop_oneof![any::<String>(), "(\n|\r|data: |id: |\"|\\\\|[a-z ]){0,30}"]
}

fn step() -> impl Strategy<Value = StepRef> {
    (0u64..50, 0u64..8).prop_map(|(n, i)| TurnRef::new(n).step(i))
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        (text(), 0u64..50).prop_map(|(message, n)| Event::MessageReceived(MessageReceived {
            message,
            parts: vec![],
            at: TurnRef::new(n),
        })),
        (text(), step()).prop_map(
            |(message_delta, at)| Event::MessageAppended(MessageAppended { message_delta, at })
        ),
        (text(), step()).prop_map(|(reasoning_delta, at)| Event::ReasoningAppended(
            ReasoningAppended {
                reasoning_delta,
                at
            }
        )),
        (text(), text(), text(), step()).prop_map(|(call_id, input_text_delta, tool_name, at)| {
            Event::ActionInputAppended(ActionInputAppended {
                call_id,
                input_text_delta,
                tool_name,
                at,
            })
        }),
        (text(), text(), step()).prop_map(|(call_id, out, at)| Event::ActionResult(ActionResult {
            error: None,
            presentation: None,
            result: ActionOutput {
                call_id,
                is_error: None,
                kind: "tool-result".into(),
                output: Value::String(out),
                tool_name: "t".into(),
                name: None,
            },
            status: "completed".into(),
            at,
        })),
        (text(), any::<bool>(), step()).prop_map(|(attempt_id, ok, at)| {
            Event::AuthorizationCompleted(AuthorizationCompleted {
                attempt_id,
                name: "notion".into(),
                outcome: if ok {
                    AuthorizationOutcome::Authorized
                } else {
                    AuthorizationOutcome::Declined
                },
                reason: None,
                at,
            })
        }),
        (any::<u32>(), any::<u32>(), step()).prop_map(|(i, o, at)| Event::StepCompleted(
            StepCompleted {
                finish_reason: "stop".into(),
                at,
                usage: Some(StepUsage {
                    input_tokens: i.into(),
                    output_tokens: o.into(),
                    cache_read_tokens: 0
                }),
            }
        )),
        text().prop_map(|t| Event::SessionWaiting(SessionWaiting {
            continuation_token: t,
            usage: None,
            wait: "next-user-message".into(),
        })),
        (text(), text()).prop_map(|(code, message)| Event::SessionFailed(SessionFailed {
            code,
            details: None,
            message,
            session_id: "s".into(),
            usage: None,
        })),
    ]
}

fn envelope() -> impl Strategy<Value = Envelope> {
    (event(), any::<u64>(), proptest::option::of(text())).prop_map(|(event, n, d)| Envelope {
        event,
        meta: Meta {
            at: "2026-12-01T00:00:00.000Z".into(),
            id: format!("evt_{n}"),
            delivery_ids: d.into_iter().collect(),
        },
    })
}

/// Splits `bytes` at the given cut points (any byte offsets, inside UTF-8 sequences included).
fn chunks(bytes: &[u8], cuts: &[prop::sample::Index]) -> Vec<Vec<u8>> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut out = Vec::new();
    let mut from = 0;
    for p in points {
        out.push(bytes[from..p].to_vec());
        from = p;
    }
    out.push(bytes[from..].to_vec());
    out
}

fn decode(parts: &[Vec<u8>]) -> Vec<eve_protocol::framing::SseMessage> {
    let mut d = SseDecoder::new();
    let mut all = Vec::new();
    for part in parts {
        all.extend(d.push(part));
    }
    all.extend(d.finish());
    all
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn an_ndjson_frame_is_one_line_holding_the_envelope(index in any::<u64>(), e in envelope()) {
        let frame = StreamFormat::Ndjson.frame(index, &e.to_json());
        prop_assert!(frame.ends_with('\n'));
        prop_assert_eq!(frame.matches('\n').count(), 1, "one line: {:?}", frame);
        let back: Envelope = serde_json::from_str(frame.trim_end()).expect("a JSON line");
        prop_assert_eq!(back, e);
    }

    #[test]
    fn sse_frames_decode_to_the_same_envelopes_however_the_bytes_are_split(
        events in proptest::collection::vec((any::<u32>(), envelope()), 1..8),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
        keepalives in any::<bool>(),
    ) {
        let mut wire = StreamFormat::Sse.preamble().to_string();
        for (index, e) in &events {
            wire.push_str(&StreamFormat::Sse.frame(u64::from(*index), &e.to_json()));
            if keepalives {
                wire.push_str(StreamFormat::Sse.keepalive());
            }
        }
        let decoded = decode(&chunks(wire.as_bytes(), &cuts));
        prop_assert_eq!(decoded.len(), events.len());
        for (msg, (index, e)) in decoded.iter().zip(&events) {
            prop_assert_eq!(msg.id.clone(), Some(index.to_string()));
            let back: Envelope = serde_json::from_str(&msg.data).expect("JSON data");
            prop_assert_eq!(&back, e);
        }
    }

    #[test]
    fn the_sse_decoder_never_panics_and_ignores_where_bytes_are_split(
        bytes in prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..300),
            "((data|id|event|retry|:)(: ?)?[a-z0-9 ]{0,8}(\r\n|\n|\r){1,2}){0,20}".prop_map(String::into_bytes),
        ],
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..16),
    ) {
        let whole = decode(std::slice::from_ref(&bytes));
        let split = decode(&chunks(&bytes, &cuts));
        prop_assert_eq!(whole, split);
    }

    #[test]
    fn keepalives_are_never_mistaken_for_events(n in 1usize..20) {
        let wire = StreamFormat::Sse.keepalive().repeat(n);
        prop_assert!(decode(&[wire.into_bytes()]).is_empty());
        prop_assert!(StreamFormat::Ndjson.keepalive().repeat(n).trim().is_empty());
    }

    #[test]
    fn stream_queries_never_panic_and_negative_starts_count_from_the_tail(
        query in any::<String>(),
        last in proptest::option::of(any::<String>()),
        n in 0i64..1_000_000,
        len in 0u64..1_000_000,
    ) {
        let _ = stream_query(&query, last.as_deref());
        let _ = query_param(&query, "startIndex");
        let _ = StreamFormat::from_accept(last.as_deref());
        let q = stream_query(&format!("startIndex={n}"), None).unwrap();
        prop_assert_eq!(q.start_index, n);
        let q = stream_query(&format!("startIndex=-{n}"), None).unwrap();
        prop_assert_eq!(resolve_start(q.start_index, len), len.saturating_sub(n as u64));
        prop_assert_eq!(stream_query("", Some(&n.to_string())).unwrap().start_index, n + 1);
    }
}
