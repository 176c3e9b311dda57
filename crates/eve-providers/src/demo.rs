//! The demo provider: offline and deterministic, so the app works with no key. It streams its
//! replies token by token with realistic pacing, shows reasoning and calls tools (an MCP
//! server's tool through `call tool`, which asks for sign-in when the server wants it). What each prompt triggers (case-insensitive; documented in
//! `docs/eve-protocol.md`):
//!
//! | prompt contains | the demo model |
//! |---|---|
//! | `weather` (`… in Paris and Tokyo`) | reasons, calls `get_weather` once per city, then summarises |
//! | starts with `call tool NAME {json}` | calls tool NAME (e.g. an MCP server's `everything__echo`) with that input, offered or not, then summarises the result |
//! | `remember …` / `what do you remember` / `forget …` | calls `remember` / `recall` / `forget` |
//! | `ask me` / `choose` / `quiz` | asks a question with options (`input.requested`); the answer continues the turn |
//! | `wait N` / `long task` | calls `wait` for N (default 8) seconds — a tool call to interrupt |
//! | `count to N` | streams `1 2 … N` (N ≤ 10000), one token per number |
//! | `think` | reasons at length before answering |
//! | `markdown` | answers with headings, a list, a table and code |
//! | `fail` | streams a few words, then the provider fails (`session.failed`) |
//! | anything else | a short answer explaining the demo |

use serde_json::{json, Value};

use crate::model::{Flow, Model, ModelError, ModelEvent, ModelMessage, ModelRequest, ToolCall};
use crate::stream::{emit, emit_all, finished, PendingCall};
use crate::tool::MAX_WAIT_SECS;

/// Default delay between tokens.
pub const DEFAULT_PACING_MS: u64 = 30;
/// Largest `count to N`.
pub const MAX_COUNT: u64 = 10_000;

/// The demo model. `sleep` waits between tokens (the component passes a real sleep; tests a
/// no-op).
pub struct DemoModel<S: FnMut(u64)> {
    pub pacing_ms: u64,
    pub sleep: S,
}

/// One piece of a scripted reply.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Reasoning(String),
    Text(String),
    Tool { name: String, input: Value },
    Fail(String),
}

impl<S: FnMut(u64)> Model for DemoModel<S> {
    fn stream(
        &mut self,
        request: &ModelRequest,
        on: &mut dyn FnMut(ModelEvent) -> Flow,
    ) -> Result<(), ModelError> {
        let steps = plan(request);
        let mut player = Player {
            pacing: self.pacing_ms,
            sleep: &mut self.sleep,
            on,
            output_tokens: 0,
            tool_calls: 0,
            salt: format!(
                "{}:{}",
                request.messages.len(),
                request.last_user_text().unwrap_or("")
            ),
        };
        // Time to first token.
        (player.sleep)(player.pacing * 3);
        for step in steps {
            player.play(step)?;
        }
        let reason = if player.tool_calls > 0 {
            "tool_calls"
        } else {
            "stop"
        };
        let end = finished(input_tokens(request), player.output_tokens, reason.into());
        emit_all(player.on, end)
    }
}

/// Plays a plan as a model streams it: token by token, paced.
struct Player<'a, S: FnMut(u64)> {
    pacing: u64,
    sleep: &'a mut S,
    on: &'a mut dyn FnMut(ModelEvent) -> Flow,
    output_tokens: u64,
    tool_calls: usize,
    /// Makes the call ids of one request distinct from another's.
    salt: String,
}

impl<S: FnMut(u64)> Player<'_, S> {
    /// Sends `ev` after `delay` ms; a stop is [`ModelError::Interrupted`].
    fn emit(&mut self, ev: ModelEvent, delay: u64) -> Result<(), ModelError> {
        if delay > 0 {
            (self.sleep)(delay);
        }
        emit(self.on, ev)
    }

    fn play(&mut self, step: Step) -> Result<(), ModelError> {
        match step {
            Step::Reasoning(text) => {
                for t in tokens(&text) {
                    self.output_tokens += 1;
                    self.emit(ModelEvent::ReasoningDelta(t), self.pacing / 2)?;
                }
            }
            Step::Text(text) => {
                for t in tokens(&text) {
                    self.output_tokens += 1;
                    let delay = jittered(self.pacing, &t);
                    self.emit(ModelEvent::TextDelta(t), delay)?;
                }
            }
            Step::Tool { name, input } => self.tool_call(name, input)?,
            Step::Fail(message) => {
                return Err(ModelError::provider("demo_failure", message));
            }
        }
        Ok(())
    }

    /// A tool call: started, its input in three pieces, ready.
    fn tool_call(&mut self, name: String, input: Value) -> Result<(), ModelError> {
        let id = format!(
            "call_{:012x}",
            stable_hash(&format!("{}:{}", self.salt, self.tool_calls)) & 0xffff_ffff_ffff
        );
        self.tool_calls += 1;
        let mut call = PendingCall::new(id, name);
        self.emit(call.started(), self.pacing)?;
        for piece in split_even(&input.to_string(), 3) {
            self.output_tokens += 1;
            if let Some(delta) = call.push(&piece) {
                self.emit(delta, self.pacing)?;
            }
        }
        // The input as scripted, not as parsed back: `call tool` may pass a non-object on.
        let PendingCall { id, name, .. } = call;
        self.emit(ModelEvent::ToolCallReady(ToolCall { id, name, input }), 0)
    }
}

/// A rough count of a request's input tokens (four characters each).
fn input_tokens(request: &ModelRequest) -> u64 {
    request
        .messages
        .iter()
        .map(|m| match m {
            ModelMessage::User(t) => t.len(),
            ModelMessage::Assistant { text, .. } => text.len(),
            ModelMessage::ToolResult { content, .. } => content.len(),
            ModelMessage::File(f) => f.as_text().len(),
        })
        .sum::<usize>() as u64
        / 4
        + request.system.len() as u64 / 4
}

/// A small stable hash (FNV-1a) for deterministic demo data: the demo's call ids and pacing,
/// and the built-in `get_weather`'s offline weather.
pub fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A token's delay: `pacing` scaled by 0.5–1.5 depending on the token (deterministic), so the
/// stream has the uneven rhythm of a real model.
pub fn jittered(pacing: u64, token: &str) -> u64 {
    pacing * (50 + stable_hash(token) % 101) / 100
}

/// The demo's clock as a real model's stream has it: a token is due `delay` ms after the one
/// before it, whatever the receiver did in between. A real provider keeps sending while the
/// app writes what it got (the bytes wait in the socket); a plain sleep after each token would
/// instead add every write's time to the turn, and a remote database's write latency would
/// read as a slower model. Returns the `sleep` a [`DemoModel`] takes: it sleeps only for what
/// is left until the next token is due, and not at all once the receiver is behind.
pub fn on_schedule(mut now_ms: impl FnMut() -> i64, mut sleep: impl FnMut(u64)) -> impl FnMut(u64) {
    let mut due: Option<i64> = None;
    move |delay| {
        let now = now_ms();
        let next = due.unwrap_or(now).saturating_add_unsigned(delay);
        due = Some(next);
        if next > now {
            sleep((next - now) as u64);
        }
    }
}

/// Splits text into word tokens, each keeping its trailing whitespace (so they concatenate
/// back to the text).
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut in_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            in_space = true;
            current.push(c);
        } else {
            if in_space && !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            in_space = false;
            current.push(c);
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

fn split_even(text: &str, parts: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(parts).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// The scripted reply to a request: a summary of the tool results it ends with, else the
/// first script whose words the user's message has, else the general answer.
pub fn plan(request: &ModelRequest) -> Vec<Step> {
    if let Some(steps) = follow_up(request) {
        return steps;
    }
    let original = request.last_user_text().unwrap_or("").trim().to_string();
    let text = original.to_lowercase();
    SCRIPTS
        .iter()
        .find_map(|script| script(&original, &text))
        .unwrap_or_else(|| general(&original, &text, &connection_tool(request)))
}

/// A connection's tool this request offers (`<connection>__<tool>`), to show how to call one;
/// `None` when no connection is configured (the default: nothing to promise then).
fn connection_tool(request: &ModelRequest) -> Option<String> {
    request
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .find(|n| n.contains("__"))
        .map(str::to_string)
}

/// A script: the steps for a message (as sent, and lower-cased), if it is this script's.
type Script = fn(&str, &str) -> Option<Vec<Step>>;

/// The scripts, in the order they are tried.
const SCRIPTS: &[Script] = &[
    call_tool,
    fail,
    count,
    weather_script,
    ask_script,
    recall_script,
    forget_script,
    remember_script,
    wait_script,
    markdown_script,
];

/// Follow-up after tool results: summarise them.
fn follow_up(request: &ModelRequest) -> Option<Vec<Step>> {
    let trailing_results: Vec<&ModelMessage> = request
        .messages
        .iter()
        .rev()
        .take_while(|m| matches!(m, ModelMessage::ToolResult { .. }))
        .collect();
    if trailing_results.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = trailing_results
        .iter()
        .rev()
        .map(|m| summarize(m))
        .collect();
    parts.retain(|p| !p.is_empty());
    Some(vec![Step::Text(parts.join("\n\n"))])
}

/// `call tool NAME {json}`: calls any tool with that input.
fn call_tool(original: &str, _: &str) -> Option<Vec<Step>> {
    let rest = original.strip_prefix("call tool ")?;
    let (name, args) = rest.trim().split_once(' ').unwrap_or((rest.trim(), "{}"));
    let input = serde_json::from_str::<Value>(args.trim())
        .unwrap_or_else(|_| json!({ "_invalidInput": args.trim() }));
    Some(vec![Step::Tool {
        name: name.to_string(),
        input,
    }])
}

/// "fail": a provider failure after some text.
fn fail(_: &str, text: &str) -> Option<Vec<Step>> {
    contains_word(text, "fail").then(|| {
        vec![
            Step::Text("Let me try that… ".into()),
            Step::Fail("demo provider: simulated failure (the prompt asked for one)".into()),
        ]
    })
}

/// "count to N": a long answer (up to [`MAX_COUNT`]).
fn count(_: &str, text: &str) -> Option<Vec<Step>> {
    let n = number_after(text, "count to")?.clamp(1, MAX_COUNT);
    let numbers: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
    Some(vec![Step::Text(format!("{}.", numbers.join(" ")))])
}

/// "weather": reasoning, then `get_weather` once per city.
fn weather_script(original: &str, text: &str) -> Option<Vec<Step>> {
    if !text.contains("weather") {
        return None;
    }
    let cities = cities(original);
    let list = cities.join(" and ");
    let mut steps = vec![Step::Reasoning(format!(
        "The user wants the weather for {list}. I'll look it up with get_weather{}.",
        if cities.len() > 1 {
            ", once per city"
        } else {
            ""
        }
    ))];
    steps.extend(cities.into_iter().map(|city| Step::Tool {
        name: "get_weather".into(),
        input: json!({ "city": city }),
    }));
    Some(steps)
}

/// "ask me", "choose", "quiz": a question to the user (`ask_user`).
fn ask_script(_: &str, text: &str) -> Option<Vec<Step>> {
    (text.contains("ask me") || contains_word(text, "choose") || contains_word(text, "quiz")).then(
        || {
            vec![
                Step::Text("Let me ask you first. ".into()),
                Step::Tool {
                    name: "ask_user".into(),
                    input: json!({ "prompt": "Which city should I check the weather for?", "options": ["Paris", "Tokyo", "Lima"] }),
                },
            ]
        },
    )
}

/// "what do you remember": `recall`.
fn recall_script(_: &str, text: &str) -> Option<Vec<Step>> {
    (text.contains("what do you remember")
        || text.contains("what do you know about me")
        || contains_word(text, "recall"))
    .then(|| {
        vec![Step::Tool {
            name: "recall".into(),
            input: json!({}),
        }]
    })
}

/// "forget X": `forget`.
fn forget_script(original: &str, _: &str) -> Option<Vec<Step>> {
    let rest = after(original, "forget ")?;
    Some(vec![Step::Tool {
        name: "forget".into(),
        input: json!({ "text": rest }),
    }])
}

/// "remember (that) X": `remember`.
fn remember_script(original: &str, _: &str) -> Option<Vec<Step>> {
    let rest = after(original, "remember that ").or_else(|| after(original, "remember "))?;
    Some(vec![
        Step::Text("I'll keep that in mind. ".into()),
        Step::Tool {
            name: "remember".into(),
            input: json!({ "fact": rest.trim_end_matches('.') }),
        },
    ])
}

/// "long task", "wait N": the `wait` tool (a stop interrupts it).
fn wait_script(_: &str, text: &str) -> Option<Vec<Step>> {
    if !(text.contains("long task")
        || number_after(text, "wait").is_some()
        || contains_word(text, "wait"))
    {
        return None;
    }
    let secs = number_after(text, "wait")
        .unwrap_or(8)
        .clamp(1, MAX_WAIT_SECS);
    Some(vec![
        Step::Text(format!(
            "Starting a task that takes {secs} seconds. You can stop it at any time. "
        )),
        Step::Tool {
            name: "wait".into(),
            input: json!({ "seconds": secs }),
        },
    ])
}

/// "markdown": a sample of every block the app renders.
fn markdown_script(_: &str, text: &str) -> Option<Vec<Step>> {
    text.contains("markdown")
        .then(|| vec![Step::Text(MARKDOWN_SAMPLE.into())])
}

/// Anything else: reasoning (longer for "think"), then what the demo can do.
fn general(original: &str, text: &str, connection_tool: &Option<String>) -> Vec<Step> {
    let mut steps = Vec::new();
    if contains_word(text, "think") {
        steps.push(Step::Reasoning(
            "Let me think this through step by step. First, what is being asked? The user wants a considered answer, \
             so I should weigh a few options before replying. Option one is the simple reading of the question; option \
             two considers the context of the conversation so far. Weighing both, a short, direct answer with the \
             reasoning summarised is best."
                .into(),
        ));
    } else {
        steps.push(Step::Reasoning(
            "A general question: I'll answer directly and mention what the demo can do.".into(),
        ));
    }
    // Connections are promised only when one is configured (issue 19 item 10): out of the box
    // there is none, and nothing would ask to connect.
    let connections = match connection_tool {
        Some(tool) => format!(
            ", or to use a connection: `call tool {tool} {{}}` (a server that wants a sign-in \
             asks you to **Connect** or **Skip** first)"
        ),
        None => String::new(),
    };
    steps.push(Step::Text(format!(
        "This is the offline **demo model** — no API key needed. You said: “{}”.\n\n\
         Try asking about the **weather in Paris**, to **remember** something about you, to **count to 50**, \
         or to **wait 10** seconds (then press stop){connections}.",
        truncate(original, 200)
    )));
    steps
}

const MARKDOWN_SAMPLE: &str = "## Markdown sample\n\nA list:\n\n- **bold** and *italic*\n- `inline code`\n- a [link](https://spinframework.dev)\n\n| city | °C |\n|---|---|\n| Paris | 18 |\n| Oslo | 7 |\n\n```rust\nfn main() {\n    println!(\"hello from the demo\");\n}\n```\n";

fn summarize(m: &ModelMessage) -> String {
    let ModelMessage::ToolResult {
        tool_name,
        content,
        is_error,
        ..
    } = m
    else {
        return String::new();
    };
    let v: Value = serde_json::from_str(content).unwrap_or(Value::String(content.clone()));
    if *is_error {
        let why = v.get("error").and_then(Value::as_str).unwrap_or(content);
        return format!("I couldn't complete `{tool_name}`: {why}.");
    }
    match tool_name.as_str() {
        "get_weather" => format!(
            "In **{}** it's {}°C and {}, with {}% humidity and wind at {} km/h.",
            v["city"].as_str().unwrap_or("?"),
            v["temperatureC"],
            v["condition"].as_str().unwrap_or("?"),
            v["humidityPct"],
            v["windKph"]
        ),
        "remember" => format!(
            "Got it — I'll remember that {}.",
            v["remembered"].as_str().unwrap_or("")
        ),
        "recall" => {
            let facts: Vec<String> = v["facts"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|f| f.as_str().map(|s| format!("- {s}")))
                        .collect()
                })
                .unwrap_or_default();
            if facts.is_empty() {
                "I don't have anything remembered about you yet.".into()
            } else {
                format!("Here's what I remember about you:\n\n{}", facts.join("\n"))
            }
        }
        "forget" => format!("Done — I forgot {} fact(s).", v["forgotten"]),
        "ask_user" => {
            let answer = v["answer"].as_str().unwrap_or("");
            format!(
                "You chose **{answer}**. Ask me about the weather in {answer} to see a tool call."
            )
        }
        "wait" => format!(
            "Done — the task finished after {} seconds.",
            v["waitedSeconds"]
        ),
        // An MCP server's result (`mcp::call_result`): its text.
        _ if v["text"].is_string() => {
            format!(
                "`{tool_name}` answered:\n\n{}",
                v["text"].as_str().unwrap_or("")
            )
        }
        _ => {
            let titles: Vec<String> = v["results"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .enumerate()
                        .filter_map(|(i, r)| r["title"].as_str().map(|t| format!("{}. {t}", i + 1)))
                        .collect()
                })
                .unwrap_or_default();
            format!("Here's what I found:\n\n{}", titles.join("\n"))
        }
    }
}

fn contains_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric())
        .any(|w| w == word)
}

fn number_after(text: &str, phrase: &str) -> Option<u64> {
    let i = text.find(phrase)?;
    text[i + phrase.len()..]
        .split_whitespace()
        .next()?
        .trim_matches(|c: char| !c.is_ascii_digit())
        .parse()
        .ok()
}

/// The text after `phrase` (case-insensitive), trimmed, if any.
fn after(original: &str, phrase: &str) -> Option<String> {
    let i = original.to_lowercase().find(phrase)?;
    let rest = original.get(i + phrase.len()..)?.trim();
    (!rest.is_empty()).then(|| rest.to_string())
}

/// Cities named after " in " (split on "and" / commas), else San Francisco.
fn cities(original: &str) -> Vec<String> {
    let lower = original.to_lowercase();
    let Some(i) = lower.rfind(" in ") else {
        return vec!["San Francisco".into()];
    };
    let rest = &original[i + 4..];
    let rest = rest.split(['?', '!', '.', ';']).next().unwrap_or("");
    let mut out: Vec<String> = rest
        .split(',')
        .flat_map(|part| part.split(" and "))
        .map(|c| c.trim().trim_start_matches("and ").trim())
        .filter(|c| !c.is_empty())
        .map(|c| truncate(c, 60))
        .take(5)
        .collect();
    if out.is_empty() {
        out.push("San Francisco".into());
    }
    out
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let t: String = text.chars().take(max).collect();
        format!("{t}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ToolSpec;

    /// Issue 19 item 10: the general answer promises a sign-in only when a connection is
    /// offered (out of the box none is configured).
    #[test]
    fn the_general_answer_promises_connections_only_when_one_is_configured() {
        let text = |tools: &[&str]| -> String {
            plan(&req(vec![ModelMessage::User("hello there".into())], tools))
                .into_iter()
                .filter_map(|s| match s {
                    Step::Text(t) => Some(t),
                    _ => None,
                })
                .collect()
        };
        let plain = text(&["get_weather", "remember"]);
        assert!(
            !plain.contains("Notion") && !plain.contains("onnect"),
            "{plain}"
        );
        let with = text(&["get_weather", "notes__read_notes"]);
        assert!(with.contains("call tool notes__read_notes"), "{with}");
        assert!(with.contains("Connect"), "{with}");
    }

    fn req(messages: Vec<ModelMessage>, tools: &[&str]) -> ModelRequest {
        ModelRequest {
            system: String::new(),
            messages,
            tools: tools
                .iter()
                .map(|n| ToolSpec {
                    name: n.to_string(),
                    description: String::new(),
                    input_schema: json!({}),
                })
                .collect(),
        }
    }

    fn run(r: &ModelRequest) -> (Vec<ModelEvent>, Result<(), ModelError>) {
        let mut m = DemoModel {
            pacing_ms: 0,
            sleep: |_| {},
        };
        let mut v = Vec::new();
        let res = m.stream(r, &mut |e| {
            v.push(e);
            Flow::Continue
        });
        (v, res)
    }

    #[test]
    fn on_schedule_absorbs_the_receivers_time_into_the_next_delay() {
        use std::cell::Cell;
        let clock = Cell::new(1_000_i64);
        let slept = Cell::new(Vec::<u64>::new());
        let mut sleep = on_schedule(
            || clock.get(),
            |ms| {
                let mut v = slept.take();
                v.push(ms);
                slept.set(v);
                clock.set(clock.get() + ms as i64);
            },
        );
        // First token due in 30 ms: nothing else happened, so all of it is slept.
        sleep(30);
        // The receiver then spends 20 ms (a database write): 10 ms are left of the next 30.
        clock.set(clock.get() + 20);
        sleep(30);
        // A receiver 50 ms behind: no sleep, and the token after it is due on the old clock.
        clock.set(clock.get() + 50);
        sleep(30);
        sleep(30);
        assert_eq!(slept.take(), vec![30, 10, 10]);
        assert_eq!(clock.get(), 1_000 + 120);
    }

    #[test]
    fn pacing_varies_per_token_within_half_to_one_and_a_half_times() {
        let delays: Vec<u64> = tokens("the quick brown fox jumps over the lazy dog")
            .iter()
            .map(|t| jittered(100, t))
            .collect();
        assert!(delays.iter().all(|d| (50..=150).contains(d)));
        assert!(
            delays
                .iter()
                .collect::<std::collections::HashSet<_>>()
                .len()
                > 3
        );
        assert_eq!(jittered(0, "x"), 0);
    }

    #[test]
    fn tokens_concatenate_back_to_the_text() {
        let t = "Hello,  world!\nNew line. ";
        assert_eq!(tokens(t).concat(), t);
        assert_eq!(tokens("a b c").len(), 3);
    }

    #[test]
    fn the_demo_is_deterministic() {
        let r = req(vec![ModelMessage::User("hello there".into())], &[]);
        assert_eq!(run(&r), run(&r));
    }

    #[test]
    fn a_weather_prompt_reasons_then_calls_get_weather_once_per_city() {
        let r = req(
            vec![ModelMessage::User(
                "What's the weather in Paris and Tokyo?".into(),
            )],
            &["get_weather"],
        );
        let (events, res) = run(&r);
        assert_eq!(res, Ok(()));
        assert!(matches!(events[0], ModelEvent::ReasoningDelta(_)));
        let ready: Vec<Value> = events
            .iter()
            .filter_map(|e| match e {
                ModelEvent::ToolCallReady(c) => Some(c.input.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(
            ready,
            vec![json!({"city": "Paris"}), json!({"city": "Tokyo"})]
        );
        assert_eq!(
            events.last(),
            Some(&ModelEvent::Finished {
                reason: "tool_calls".into()
            })
        );
    }

    #[test]
    fn count_to_n_streams_one_token_per_number() {
        let r = req(vec![ModelMessage::User("count to 5".into())], &[]);
        let (events, _) = run(&r);
        let text: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                ModelEvent::TextDelta(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, vec!["1 ", "2 ", "3 ", "4 ", "5."]);
    }

    #[test]
    fn call_tool_calls_the_named_tool_with_its_json_input() {
        let r = req(
            vec![ModelMessage::User(
                "call tool everything__echo {\"message\":\"hi\"}".into(),
            )],
            &[],
        );
        match plan(&r).as_slice() {
            [Step::Tool { name, input }] => {
                assert_eq!(name, "everything__echo");
                assert_eq!(input, &json!({"message": "hi"}));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn fail_makes_the_provider_fail_after_some_text() {
        let r = req(vec![ModelMessage::User("please fail now".into())], &[]);
        let (events, res) = run(&r);
        assert!(matches!(events[0], ModelEvent::TextDelta(_)));
        assert!(matches!(res, Err(ModelError::Provider { .. })));
    }

    #[test]
    fn remember_and_wait_prompts_call_their_tools() {
        let r = req(
            vec![ModelMessage::User("Remember that I prefer tea.".into())],
            &[],
        );
        let (events, _) = run(&r);
        assert!(events.iter().any(|e| matches!(e, ModelEvent::ToolCallReady(c) if c.name == "remember" && c.input["fact"] == "I prefer tea")));
        let r = req(vec![ModelMessage::User("wait 3".into())], &[]);
        let (events, _) = run(&r);
        assert!(events.iter().any(|e| matches!(e, ModelEvent::ToolCallReady(c) if c.name == "wait" && c.input["seconds"] == 3)));
    }

    #[test]
    fn the_demo_stops_when_the_callback_says_stop() {
        let r = req(vec![ModelMessage::User("count to 100".into())], &[]);
        let mut m = DemoModel {
            pacing_ms: 0,
            sleep: |_| {},
        };
        let mut n = 0;
        let res = m.stream(&r, &mut |_| {
            n += 1;
            if n == 10 {
                Flow::Stop
            } else {
                Flow::Continue
            }
        });
        assert_eq!(res, Err(ModelError::Interrupted));
        assert_eq!(n, 10);
    }
}
