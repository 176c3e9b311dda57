//! Property tests of the stream framing: every stored event framed as NDJSON or SSE reads back
//! as the same event at the same index, whatever the chunking of the bytes on the wire; the SSE
//! decoder never panics and does not depend on where a byte stream is split; and no
//! `Accept`, `Last-Event-ID` or query string makes the framing code panic.

use eve_agent::framing::{query_param, start_index, with_index, SseDecoder, StreamFormat};
use eve_api::eve::{AuthorizationOutcome, Event, StreamEvent};
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

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        text().prop_map(|text| Event::UserMessage { text }),
        text().prop_map(|delta| Event::TextDelta { delta }),
        text().prop_map(|delta| Event::ReasoningDelta { delta }),
        (text(), text()).prop_map(|(tool_call_id, tool_name)| Event::ToolCallStarted {
            tool_call_id,
            tool_name
        }),
        (text(), text()).prop_map(|(tool_call_id, delta)| Event::ToolInputDelta {
            tool_call_id,
            delta
        }),
        (text(), text(), any::<bool>(), any::<bool>()).prop_map(
            |(id, out, is_error, synthetic)| {
                Event::ToolResult {
                    tool_call_id: id,
                    tool_name: "t".into(),
                    output: Value::String(out),
                    is_error,
                    synthetic,
                    discarded: false,
                    truncated: false,
                }
            }
        ),
        (text(), any::<bool>()).prop_map(|(id, granted)| Event::AuthorizationCompleted {
            authorization_id: id,
            connection: "notion".into(),
            outcome: if granted {
                AuthorizationOutcome::Granted
            } else {
                AuthorizationOutcome::Declined
            },
        }),
        (any::<u64>(), any::<u64>()).prop_map(|(input_tokens, output_tokens)| Event::Usage {
            input_tokens,
            output_tokens
        }),
        proptest::option::of(text()).prop_map(|reason| Event::SessionWaiting { reason }),
        (text(), proptest::option::of(text()))
            .prop_map(|(message, code)| Event::SessionFailed { message, code }),
    ]
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

fn decode(parts: &[Vec<u8>]) -> Vec<eve_agent::framing::SseMessage> {
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
    fn an_ndjson_frame_is_one_line_holding_the_event_and_its_index(index in any::<u64>(), e in event()) {
        let frame = StreamFormat::Ndjson.frame(index, &e.to_json());
        prop_assert!(frame.ends_with('\n'));
        prop_assert_eq!(frame.matches('\n').count(), 1, "one line: {:?}", frame);
        let back: StreamEvent = serde_json::from_str(frame.trim_end()).expect("a JSON line");
        prop_assert_eq!(back, StreamEvent { index, event: e });
    }

    #[test]
    fn sse_frames_decode_to_the_same_events_however_the_bytes_are_split(
        events in proptest::collection::vec((any::<u32>(), event()), 1..8),
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
            let back: StreamEvent = serde_json::from_str(&msg.data).expect("JSON data");
            prop_assert_eq!(back, StreamEvent { index: u64::from(*index), event: e.clone() });
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
        for line in StreamFormat::Ndjson.keepalive().repeat(n).lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            prop_assert!(v.get("index").is_none());
        }
    }

    #[test]
    fn with_index_never_panics_and_puts_the_index_first_in_any_object(
        index in any::<u64>(),
        body in any::<String>(),
        fields in proptest::collection::btree_map("[a-z]{1,6}", any::<i32>(), 0..5),
    ) {
        let _ = with_index(index, &body);
        prop_assume!(!fields.contains_key("index"));
        let object = serde_json::to_string(&fields).unwrap();
        let framed: Value = serde_json::from_str(&with_index(index, &object)).expect("JSON");
        prop_assert_eq!(&framed["index"], &Value::from(index));
        prop_assert_eq!(framed.as_object().unwrap().len(), fields.len() + 1);
    }

    #[test]
    fn the_start_index_comes_from_last_event_id_then_start_index_and_never_panics(
        query in any::<String>(),
        last in proptest::option::of(any::<String>()),
        n in any::<u64>(),
    ) {
        let _ = start_index(&query, last.as_deref());
        let _ = query_param(&query, "startIndex");
        let _ = StreamFormat::from_accept(last.as_deref());
        let with_n = format!("startIndex={n}");
        prop_assert_eq!(start_index(&with_n, None), Ok(n));
        let id = n.to_string();
        prop_assert_eq!(start_index(&with_n, Some(&id)), Ok(n.saturating_add(1)));
        let negative = format!("startIndex=-{n}");
        prop_assert!(start_index(&negative, None).is_err());
    }
}
