//! The agent's tools: `get_weather` (deterministic offline data), `wait` (a long-running task
//! that honours interrupts), `get_time`, `ask_user`, and memory (`remember`, `recall`,
//! `forget`); connections' tools come from their MCP servers ([`crate::connections::mcp`]). Outputs are structured JSON; an output over [`MAX_OUTPUT_BYTES`] is stored aside
//! and the model gets a preview (seed 003).

use serde_json::{json, Value};

use crate::tools::memory;
use crate::tools::spec::{ToolCall, ToolSpec};
/// The demo model and `get_weather` share the one offline hash; the demo asks `wait` for no
/// more than it runs.
pub use eve_providers::demo::stable_hash;
pub use eve_providers::tool::MAX_WAIT_SECS;

/// Outputs larger than this are stored aside (seed 003: 100 KB).
pub const MAX_OUTPUT_BYTES: usize = 100 * 1024;
/// The preview the model gets of a stored-aside output.
pub const PREVIEW_BYTES: usize = 2000;

/// What tools may touch.
pub trait ToolHost {
    /// The caller's memory document.
    fn memory(&mut self) -> Result<String, String>;
    /// Writes `document` only if the memory still is `expected` (what [`ToolHost::memory`]
    /// read); `Ok(false)` when another turn wrote in between.
    fn replace_memory(&mut self, expected: &str, document: &str) -> Result<bool, String>;
    /// Sleeps up to `ms`, checking for a stop; false when the user interrupted.
    fn pause(&mut self, ms: u64) -> bool;
    /// The current time, milliseconds since the epoch (UTC).
    fn now_ms(&mut self) -> i64;
}

/// A tool's result.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    Done {
        output: Value,
        is_error: bool,
    },
    /// The user stopped the turn while the tool ran (checkpoint 5).
    Interrupted,
}

fn done(output: Value) -> ToolOutcome {
    ToolOutcome::Done {
        output,
        is_error: false,
    }
}

fn error(message: impl Into<String>) -> ToolOutcome {
    ToolOutcome::Done {
        output: json!({ "error": message.into() }),
        is_error: true,
    }
}

/// The built-in tools, offered every turn.
pub fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "get_weather".into(),
            description: "Current weather for a city: temperature (°C), conditions, humidity, wind.".into(),
            input_schema: json!({
                "type": "object",
                "properties": { "city": { "type": "string", "description": "City name, e.g. Paris" } },
                "required": ["city"],
            }),
        },
        ToolSpec {
            name: "wait".into(),
            description: "Waits for the given number of seconds (a stand-in for a long-running task).".into(),
            input_schema: json!({
                "type": "object",
                "properties": { "seconds": { "type": "integer", "minimum": 1, "maximum": MAX_WAIT_SECS } },
                "required": ["seconds"],
            }),
        },
        ToolSpec {
            name: "ask_user".into(),
            description: "Asks the user a question and waits for the answer; give options for a choice.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "prompt": { "type": "string" },
                    "options": { "type": "array", "items": { "type": "string" }, "maxItems": 10 },
                },
                "required": ["prompt"],
            }),
        },
        ToolSpec {
            name: "get_time".into(),
            description: "The current date and time (ISO-8601) in UTC or at a fixed offset such as +02:00.".into(),
            input_schema: json!({
                "type": "object",
                "properties": { "timezone": { "type": "string", "description": "UTC (default) or an offset like +05:30" } },
            }),
        },
        ToolSpec {
            name: "remember".into(),
            description: "Saves a stable fact or preference about the user to long-term memory. Never passwords, tokens, payment data, keys or one-time codes.".into(),
            input_schema: json!({
                "type": "object",
                "properties": { "fact": { "type": "string" } },
                "required": ["fact"],
            }),
        },
        ToolSpec {
            name: "recall".into(),
            description: "Reads everything remembered about the user.".into(),
            input_schema: json!({ "type": "object", "properties": {} }),
        },
        ToolSpec {
            name: "forget".into(),
            description: "Removes remembered facts that contain the given text.".into(),
            input_schema: json!({
                "type": "object",
                "properties": { "text": { "type": "string" } },
                "required": ["text"],
            }),
        },
    ]
}

/// Minutes east of UTC of `UTC`, `Z`, `GMT`, or `[UTC]±HH:MM`.
fn utc_offset_minutes(zone: &str) -> Option<i64> {
    let z = zone.trim();
    if ["utc", "z", "gmt"].contains(&z.to_ascii_lowercase().as_str()) {
        return Some(0);
    }
    let rest = z
        .strip_prefix("UTC")
        .or_else(|| z.strip_prefix("GMT"))
        .unwrap_or(z);
    let (sign, hm) = match rest.as_bytes().first()? {
        b'+' => (1, &rest[1..]),
        b'-' => (-1, &rest[1..]),
        _ => return None,
    };
    let (h, m) = hm.split_once(':')?;
    let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    (h <= 14 && m < 60 && hm.len() == 5).then_some(sign * (h * 60 + m))
}

/// Runs a call.
pub fn run(call: &ToolCall, host: &mut dyn ToolHost) -> ToolOutcome {
    if let Some(raw) = call.input.get("_invalidInput") {
        return error(format!("the tool input is not a JSON object: {raw}"));
    }
    let str_arg = |name: &str| call.input.get(name).and_then(Value::as_str).map(str::trim);
    match call.name.as_str() {
        "get_weather" => match str_arg("city").filter(|c| !c.is_empty()) {
            Some(city) => get_weather(host, city),
            None => error("get_weather needs a city"),
        },
        "get_time" => {
            let zone = str_arg("timezone")
                .filter(|z| !z.is_empty())
                .unwrap_or("UTC");
            get_time(host, zone)
        }
        "wait" => {
            let secs = call
                .input
                .get("seconds")
                .and_then(Value::as_u64)
                .unwrap_or(5);
            wait(host, secs.clamp(1, MAX_WAIT_SECS))
        }
        "remember" => remember(host, str_arg("fact").unwrap_or("")),
        // Questions are asked by the turn itself (input.requested), never run as a tool.
        "ask_user" => error("ask_user is answered by the user, not run"),
        "recall" => match host.memory() {
            Ok(doc) => done(json!({ "facts": memory::facts(&doc) })),
            Err(e) => error(format!("memory is unavailable: {e}")),
        },
        "forget" => forget(host, str_arg("text").unwrap_or("")),
        name => error(format!("unknown tool {name:?}")),
    }
}

/// `get_weather`: the demo's weather for `city`, after a short pause a stop interrupts.
fn get_weather(host: &mut dyn ToolHost, city: &str) -> ToolOutcome {
    if !host.pause(300) {
        return ToolOutcome::Interrupted;
    }
    done(weather(city))
}

/// `get_time`: the time now in `zone` (`UTC` or an offset like `+02:00`).
fn get_time(host: &mut dyn ToolHost, zone: &str) -> ToolOutcome {
    let Some(offset) = utc_offset_minutes(zone) else {
        return error(format!(
            "unknown timezone {zone:?}: use UTC or an offset like +02:00"
        ));
    };
    let local = host.now_ms() + offset * 60_000;
    let stamp = eve_store::time::format_iso_ms(local);
    let time = if offset == 0 {
        stamp
    } else {
        format!("{}{}", stamp.trim_end_matches('Z'), &zone[zone.len() - 6..])
    };
    done(json!({ "time": time, "timezone": zone }))
}

/// `wait`: `secs` seconds in slices of 100 ms, each a chance to stop.
fn wait(host: &mut dyn ToolHost, secs: u64) -> ToolOutcome {
    for _ in 0..secs * 10 {
        if !host.pause(100) {
            return ToolOutcome::Interrupted;
        }
    }
    done(json!({ "waitedSeconds": secs }))
}

/// `remember`: adds `fact` to the user's memory (the memory's own checks may refuse it).
fn remember(host: &mut dyn ToolHost, fact: &str) -> ToolOutcome {
    match update_memory(host, |doc| {
        memory::remember(doc, fact).map(|next| (next, ()))
    }) {
        Ok(Ok((next, ()))) => {
            done(json!({ "remembered": fact, "facts": memory::facts(&next).len() }))
        }
        Ok(Err(e)) => error(e.to_string()),
        Err(e) => error(format!("memory is unavailable: {e}")),
    }
}

/// `forget`: removes the facts that mention `text`.
fn forget(host: &mut dyn ToolHost, text: &str) -> ToolOutcome {
    match update_memory(host, |doc| {
        Ok::<_, std::convert::Infallible>(memory::forget(doc, text))
    }) {
        Ok(Ok((_, removed))) => done(json!({ "forgotten": removed })),
        Ok(Err(never)) => match never {},
        Err(e) => error(format!("memory is unavailable: {e}")),
    }
}

/// How often a memory change is redone after losing a race before the tool gives up.
const MEMORY_ATTEMPTS: usize = 8;

/// Applies `change` to the memory document as a compare-and-swap: read, change, write only
/// if nobody wrote in between, else read again and redo the change. Two turns that remember
/// at once therefore both keep their fact. The outer `Err` is the store's; the inner one the
/// change's own refusal (nothing is written then).
fn update_memory<T, E>(
    host: &mut dyn ToolHost,
    change: impl Fn(&str) -> Result<(String, T), E>,
) -> Result<Result<(String, T), E>, String> {
    for _ in 0..MEMORY_ATTEMPTS {
        let doc = host.memory()?;
        let (next, out) = match change(&doc) {
            Ok(changed) => changed,
            Err(e) => return Ok(Err(e)),
        };
        if next == doc || host.replace_memory(&doc, &next)? {
            return Ok(Ok((next, out)));
        }
    }
    Err("memory is busy (other turns keep changing it); try again".into())
}

/// Deterministic offline weather for a city (same city, same answer).
pub fn weather(city: &str) -> Value {
    const CONDITIONS: &[&str] = &[
        "sunny",
        "partly cloudy",
        "cloudy",
        "light rain",
        "showers",
        "windy",
        "foggy",
        "clear",
    ];
    let h = stable_hash(&city.to_lowercase());
    let temp = (h % 35) as i64 - 5;
    json!({
        "city": city,
        "temperatureC": temp,
        "condition": CONDITIONS[(h / 35 % CONDITIONS.len() as u64) as usize],
        "humidityPct": 30 + (h / 7 % 60),
        "windKph": 2 + (h / 11 % 40),
        "source": "offline demo data",
    })
}

/// An output bounded for the event log and the model: `(shown, stored_aside)`. Over
/// [`MAX_OUTPUT_BYTES`], `shown` is a preview object and `stored_aside` the whole JSON text.
pub fn bound_output(output: Value) -> (Value, Option<String>) {
    let text = output.to_string();
    if text.len() <= MAX_OUTPUT_BYTES {
        return (output, None);
    }
    let mut cut = PREVIEW_BYTES;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    (
        json!({
            "preview": &text[..cut],
            "truncated": true,
            "totalBytes": text.len(),
            "note": "the full output could not be kept; only this preview is shown",
        }),
        Some(text),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::store::{testing::Lite, AgentStore};

    struct Host {
        memory: String,
        stop_after: Option<u32>,
        pauses: u32,
    }

    impl ToolHost for Host {
        fn memory(&mut self) -> Result<String, String> {
            Ok(self.memory.clone())
        }
        fn replace_memory(&mut self, expected: &str, document: &str) -> Result<bool, String> {
            if self.memory != expected {
                return Ok(false);
            }
            self.memory = document.to_string();
            Ok(true)
        }
        fn now_ms(&mut self) -> i64 {
            1_796_105_696_230
        }
        fn pause(&mut self, _ms: u64) -> bool {
            self.pauses += 1;
            self.stop_after.is_none_or(|n| self.pauses <= n)
        }
    }

    fn host() -> Host {
        Host {
            memory: String::new(),
            stop_after: None,
            pauses: 0,
        }
    }

    fn call(name: &str, input: Value) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: name.into(),
            input,
        }
    }

    #[test]
    fn get_weather_is_deterministic_structured_json() {
        let a = run(&call("get_weather", json!({"city": "Paris"})), &mut host());
        let b = run(&call("get_weather", json!({"city": "Paris"})), &mut host());
        assert_eq!(a, b);
        match a {
            ToolOutcome::Done { output, is_error } => {
                assert!(!is_error);
                assert_eq!(output["city"], "Paris");
                assert!(output["temperatureC"].is_i64());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_tool_stops_when_the_user_interrupts_it() {
        let mut h = Host {
            stop_after: Some(3),
            ..host()
        };
        assert_eq!(
            run(&call("wait", json!({"seconds": 5})), &mut h),
            ToolOutcome::Interrupted
        );
    }

    /// A turn's tools on the real agent store (SQLite), whose first read of the memory lets
    /// `meanwhile` run before it returns: another turn writing between this one's read and
    /// its write.
    struct StoreHost<'a> {
        store: &'a AgentStore<'a, Lite>,
        meanwhile: Option<Box<dyn FnOnce() + 'a>>,
    }

    impl ToolHost for StoreHost<'_> {
        fn memory(&mut self) -> Result<String, String> {
            let doc = self.store.memory("alice");
            if let Some(other_turn) = self.meanwhile.take() {
                other_turn();
            }
            doc
        }
        fn replace_memory(&mut self, expected: &str, document: &str) -> Result<bool, String> {
            self.store.replace_memory("alice", expected, document, 1)
        }
        fn now_ms(&mut self) -> i64 {
            1
        }
        fn pause(&mut self, _ms: u64) -> bool {
            true
        }
    }

    fn store_host<'a>(
        store: &'a AgentStore<'a, Lite>,
        meanwhile: Option<Box<dyn FnOnce() + 'a>>,
    ) -> StoreHost<'a> {
        StoreHost { store, meanwhile }
    }

    #[test]
    fn two_turns_remembering_at_once_both_keep_their_fact() {
        let db = Lite::memory();
        eve_store::migrations::migrate(&db, 1).unwrap();
        let store = AgentStore::new(&db);
        let remember = |fact: &str| call("remember", json!({ "fact": fact }));
        run(&remember("lives in Lyon"), &mut store_host(&store, None));
        // Both turns read "lives in Lyon"; the other one writes first.
        let other_turn = Box::new(|| {
            let r = run(&remember("prefers tea"), &mut store_host(&store, None));
            assert!(
                matches!(
                    r,
                    ToolOutcome::Done {
                        is_error: false,
                        ..
                    }
                ),
                "{r:?}"
            );
        });
        let r = run(
            &remember("works nights"),
            &mut store_host(&store, Some(other_turn)),
        );
        assert!(
            matches!(
                r,
                ToolOutcome::Done {
                    is_error: false,
                    ..
                }
            ),
            "{r:?}"
        );
        assert_eq!(
            memory::facts(&store.memory("alice").unwrap()),
            ["lives in Lyon", "prefers tea", "works nights"]
        );
        // A forget racing a remember loses neither's change either.
        let other_turn = Box::new(|| {
            run(&remember("has a cat"), &mut store_host(&store, None));
        });
        run(
            &call("forget", json!({ "text": "tea" })),
            &mut store_host(&store, Some(other_turn)),
        );
        assert_eq!(
            memory::facts(&store.memory("alice").unwrap()),
            ["lives in Lyon", "works nights", "has a cat"]
        );
    }

    #[test]
    fn remember_refuses_secrets_and_keeps_the_document_unchanged() {
        let mut h = host();
        let r = run(
            &call("remember", json!({"fact": "my password is hunter2"})),
            &mut h,
        );
        assert!(matches!(r, ToolOutcome::Done { is_error: true, .. }));
        assert_eq!(h.memory, "");
        run(&call("remember", json!({"fact": "prefers tea"})), &mut h);
        match run(&call("recall", json!({})), &mut h) {
            ToolOutcome::Done { output, .. } => assert_eq!(output["facts"], json!(["prefers tea"])),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn outputs_over_100_kb_are_stored_aside_and_the_model_gets_a_preview() {
        let big = json!({ "data": "x".repeat(MAX_OUTPUT_BYTES + 1) });
        let (shown, stored) = bound_output(big.clone());
        assert_eq!(stored, Some(big.to_string()));
        assert_eq!(shown["truncated"], true);
        assert!(shown["preview"].as_str().unwrap().len() <= PREVIEW_BYTES);
        let small = json!({"a": 1});
        assert_eq!(bound_output(small.clone()), (small, None));
    }

    #[test]
    fn invalid_or_unknown_calls_answer_a_tool_error() {
        assert!(matches!(
            run(&call("nope", json!({})), &mut host()),
            ToolOutcome::Done { is_error: true, .. }
        ));
        // The seed's offline demo connections are gone: connections are MCP servers.
        assert!(matches!(
            run(&call("notion_search", json!({"query": "x"})), &mut host()),
            ToolOutcome::Done { is_error: true, .. }
        ));
        assert!(!specs().iter().any(|s| s.name.ends_with("_search")));
        assert!(matches!(
            run(
                &call("get_weather", json!({"_invalidInput": "{"})),
                &mut host()
            ),
            ToolOutcome::Done { is_error: true, .. }
        ));
    }

    #[test]
    fn get_time_answers_utc_or_a_fixed_offset_and_refuses_a_zone_it_does_not_know() {
        let mut h = Host {
            memory: String::new(),
            stop_after: None,
            pauses: 0,
        };
        let call = |tz: Value| ToolCall {
            id: "c".into(),
            name: "get_time".into(),
            input: json!({ "timezone": tz }),
        };
        let out = |o: ToolOutcome| match o {
            ToolOutcome::Done { output, is_error } => (output, is_error),
            ToolOutcome::Interrupted => panic!(),
        };
        let (v, err) = out(run(&call(json!("UTC")), &mut h));
        assert!(!err);
        assert_eq!(v["time"], "2026-12-01T06:14:56.230Z");
        let (v, _) = out(run(&call(json!("+02:00")), &mut h));
        assert_eq!(v["time"], "2026-12-01T08:14:56.230+02:00");
        let (_, err) = out(run(&call(json!("Mars/Olympus")), &mut h));
        assert!(err);
    }

    /// Moved from the demo provider's tests: the demo reads what the real tool returns.
    #[test]
    fn after_tool_results_the_demo_summarises_them() {
        use eve_providers::demo::DemoModel;
        use eve_providers::model::{Flow, Model, ModelEvent, ModelMessage, ModelRequest};
        let r = ModelRequest {
            system: String::new(),
            messages: vec![
                ModelMessage::User("weather in Oslo".into()),
                ModelMessage::Assistant {
                    text: String::new(),
                    tool_calls: vec![],
                },
                ModelMessage::ToolResult {
                    tool_call_id: "c".into(),
                    tool_name: "get_weather".into(),
                    content: weather("Oslo").to_string(),
                    is_error: false,
                },
            ],
            tools: vec![],
        };
        let mut demo = DemoModel {
            pacing_ms: 0,
            sleep: |_| {},
        };
        let mut text = String::new();
        let streamed = demo.stream(&r, &mut |e| {
            if let ModelEvent::TextDelta(t) = e {
                text.push_str(&t);
            }
            Flow::Continue
        });
        assert_eq!(streamed, Ok(()));
        assert!(text.contains("**Oslo**"), "{text}");
    }
}
