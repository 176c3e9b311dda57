//! Talking to eve v1 sessions (`/eve/v1/*`) in tests: creating sessions and sending to them
//! with eve's answers checked, and reading their streams — bounded snapshots (`follow=false`)
//! and following streams read until the event a test needs — plus small views of the events
//! (types, text, the log as an uninterrupted run would have written it).
//!
//! An event is the envelope as it arrived (`{"type", "data", "meta"}`), a `serde_json::Value`.
//! Its index is its position in the stream (eve's envelopes carry none): the `n`-th event of
//! a read from `startIndex=k` is event `k + n`.
//!
//! A following stream of eve stays open after `session.waiting` (it only ends at
//! `session.completed` / `session.failed`), so a test either reads with `follow=false` once
//! the turn has settled ([`snapshot`]) or reads a following stream until it sees what it needs
//! and then drops it ([`read_until_settled`], [`Stream::until`]). Every read is bounded in
//! time ([`STREAM_TIMEOUT`]).

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read};
use std::time::Duration;

use serde_json::{json, Value};

use crate::{Host, HostOptions, Response};

/// The longest a test reads one stream (the request's overall timeout, body included).
pub const STREAM_TIMEOUT: Duration = Duration::from_secs(60);

/// A local-dev host whose model is `provider` (`openai` or `anthropic`) at the local model
/// server on `server_base` (`http://127.0.0.1:<port>`), with `extra` variables; `None` when
/// the test cannot start its own host.
pub fn provider_host(provider: &str, server_base: &str, extra: &[(&str, &str)]) -> Option<Host> {
    let base = if provider == "openai" {
        format!("{server_base}/v1")
    } else {
        server_base.to_string()
    };
    let mut vars = vec![
        ("llm_provider", provider),
        ("llm_api_key", "test-key"),
        ("llm_model", "test-model"),
    ];
    vars.extend_from_slice(extra);
    let mut o = HostOptions::default()
        .var("llm_base_url", &base)
        .var("chat_send_per_hour", "1000");
    for (k, v) in vars {
        o = o.var(k, v);
    }
    Host::start(o)
}

/// Whether `e` settles a turn: the session waits for a message (`session.waiting`), waits on
/// a person (`turn.waiting`), or has ended (`session.completed`, `session.failed`).
pub fn is_settling(e: &Value) -> bool {
    eve_api::eve::is_settling_type(e["type"].as_str().unwrap_or(""))
}

/// Whether `e` ends the session (a following stream closes after it).
pub fn is_terminal(e: &Value) -> bool {
    matches!(
        e["type"].as_str(),
        Some("session.completed" | "session.failed")
    )
}

// ------------------------------------------------------------------------------- requests

/// Checks eve's accepted answer (`202 {"ok":true,"sessionId","status":"accepted"}` with
/// `x-eve-session-id`) and returns it.
pub fn assert_accepted(r: &Response, sid: Option<&str>) -> Value {
    assert_eq!(r.status, 202, "{}", r.text());
    let v = r.json();
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["status"], "accepted", "{v}");
    let id = v["sessionId"].as_str().expect("a sessionId");
    assert!(id.starts_with("wrun_"), "{id}");
    if let Some(sid) = sid {
        assert_eq!(id, sid);
    }
    assert_eq!(r.header("x-eve-session-id"), Some(id));
    v
}

/// Checks eve's answer to an accepted control (`cancel`, `clear`, `compact`): `202
/// {"ok":true,"sessionId","status":"accepted"}`, without `x-eve-session-id` (only create and
/// send name the session in a header).
pub fn assert_control_accepted(r: &Response, sid: &str) {
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(
        r.json(),
        json!({"ok": true, "sessionId": sid, "status": "accepted"})
    );
    assert_eq!(r.header("x-eve-session-id"), None);
}

/// `POST /eve/v1/session` with `body`; asserts eve's 202 and returns the session id.
pub fn create(h: &Host, body: &Value) -> String {
    let r = h.json("POST", "/eve/v1/session", body);
    assert_accepted(&r, None)["sessionId"]
        .as_str()
        .unwrap()
        .to_string()
}

/// A new session whose first turn answers `message`; its id.
pub fn start(h: &Host, message: &str) -> String {
    create(h, &json!({ "message": message }))
}

/// `POST /eve/v1/session/:id` with `body` (any answer).
pub fn send(h: &Host, sid: &str, body: &Value) -> Response {
    h.json("POST", &format!("/eve/v1/session/{sid}"), body)
}

/// Sends `message` to the session; asserts eve's 202 and returns its `deliveryId` (the
/// `meta.deliveryIds` of the events of the turn it starts).
pub fn send_message(h: &Host, sid: &str, message: &str) -> String {
    let r = send(h, sid, &json!({ "message": message }));
    let v = assert_accepted(&r, Some(sid));
    v["deliveryId"].as_str().expect("a deliveryId").to_string()
}

/// `POST /eve/v1/session/:id/<control>` (`cancel`, `clear`, `compact`, `reset`) with `{}`.
pub fn control(h: &Host, sid: &str, control: &str) -> Response {
    h.json(
        "POST",
        &format!("/eve/v1/session/{sid}/{control}"),
        &json!({}),
    )
}

/// eve's error body `{"ok":false,"code"?,"error"}` of `r`: `(code, error)`.
pub fn error_of(r: &Response) -> (Option<String>, String) {
    let v = r.json();
    assert_eq!(v["ok"], false, "not an eve error: {v}");
    let error = v["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error text: {v}"));
    (v["code"].as_str().map(str::to_string), error.to_string())
}

/// An eve refusal: `status` with the error `code`; its message.
pub fn refused(r: &Response, status: u16, code: &str) -> String {
    assert_eq!(r.status, status, "{}", r.text());
    let (got, message) = error_of(r);
    assert_eq!(got.as_deref(), Some(code), "{message}");
    message
}

/// The model ids an `/eve/v1/info` answer offers.
pub fn offered_models(r: &Response) -> Vec<String> {
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["agent"]["model"]["providerOptions"]["models"]
        .as_array()
        .expect("a model list")
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect()
}

// -------------------------------------------------------------------------------- streams

/// The path of a session's stream with `query` (e.g. `startIndex=3&follow=false`).
pub fn stream_path(sid: &str, query: &str) -> String {
    format!("/eve/v1/session/{sid}/stream?{query}")
}

/// The events of an NDJSON body: every non-empty line must be an envelope (`type`, `data`,
/// `meta.id`); blank lines (the opening one, keep-alives) and eve's `{"$eve": …}` control
/// lines are not events.
pub fn parse_ndjson(body: &str) -> Vec<Value> {
    body.lines().filter_map(parse_line).collect()
}

fn parse_line(line: &str) -> Option<Value> {
    if line.trim().is_empty() {
        return None;
    }
    let v: Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("bad NDJSON line {line:?}: {e}"));
    if v.get("$eve").is_some() {
        return None;
    }
    assert!(
        v["type"].is_string() && v.get("data").is_some() && v["meta"]["id"].is_string(),
        "not an eve envelope: {line}"
    );
    Some(v)
}

/// The `(id, data)` frames of an SSE body (comments and `retry:` are not frames).
pub fn parse_sse(text: &str) -> Vec<(u64, Value)> {
    text.split("\n\n")
        .filter_map(|frame| {
            let mut id = None;
            let mut data = None;
            for line in frame.lines() {
                if let Some(v) = line.strip_prefix("id: ") {
                    id = Some(v.parse().expect("a numeric SSE id"));
                } else if let Some(v) = line.strip_prefix("data: ") {
                    data = Some(serde_json::from_str(v).expect("SSE data is JSON"));
                }
            }
            Some((id?, data?))
        })
        .collect()
}

/// The session's durable events from `start` (negative: from the tail) up to the tail when
/// the request arrives (`follow=false`): what a reader gets once the turn has settled.
pub fn snapshot(h: &Host, sid: &str, start: i64) -> Vec<Value> {
    let r = h.get(&stream_path(
        sid,
        &format!("startIndex={start}&follow=false"),
    ));
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        r.text().starts_with('\n'),
        "a stream opens with an empty line"
    );
    parse_ndjson(&r.text())
}

/// How many durable events the session has (`x-eve-stream-tail-index` + 1).
pub fn len(h: &Host, sid: &str) -> u64 {
    let r = h.get(&stream_path(sid, "startIndex=-1&follow=false"));
    assert_eq!(r.status, 200, "{}", r.text());
    let tail: i64 = r
        .header("x-eve-stream-tail-index")
        .expect("follow=false names the tail")
        .parse()
        .expect("a numeric tail index");
    (tail + 1) as u64
}

/// `startIndex=0&follow=false` of `sid` as the caller that `headers` name (a cookie; a bearer
/// token straight to the agent): the answer as it came.
pub fn history_as(h: &Host, sid: &str, headers: &[(&str, &str)]) -> Response {
    h.send(
        "GET",
        &stream_path(sid, "startIndex=0&follow=false"),
        headers,
        None,
    )
}

/// Reads [`history_as`] (every 50 ms, for at most `timeout`) until its last event settles the
/// turn ([`is_settling`]), and returns its events; panics with what it read when the turn
/// never settles. Unlike [`read_until_settled`], it holds no following stream open.
pub fn settled_as(h: &Host, sid: &str, headers: &[(&str, &str)], timeout: Duration) -> Vec<Value> {
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let r = history_as(h, sid, headers);
        assert_eq!(r.status, 200, "the stream of {sid}: {}", r.text());
        let events = parse_ndjson(&r.text());
        if events.last().is_some_and(is_settling) {
            return events;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the turn of {sid} did not settle within {timeout:?}; read: {:?}",
            types(&events)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A following stream, read line by line. Dropping it closes the connection (the session's
/// work runs on regardless).
pub struct Stream {
    lines: std::io::Lines<BufReader<Box<dyn Read + Send + Sync>>>,
    /// The response's headers.
    pub headers: Vec<(String, String)>,
    /// The index of the next event (when the stream opened at an absolute index).
    pub next_index: u64,
    /// Whether the read stopped because the request's time was up (the stream was still
    /// open), rather than because the stream ended.
    pub timed_out: bool,
}

impl Stream {
    /// Opens the following NDJSON stream of `sid` from the absolute index `start`.
    pub fn open(h: &Host, sid: &str, start: u64) -> Stream {
        Stream::open_path(
            h,
            &stream_path(sid, &format!("startIndex={start}")),
            &[],
            start,
        )
    }

    /// Opens `path` (a stream URL) with `headers`; `start` is the index its first event has.
    pub fn open_path(h: &Host, path: &str, headers: &[(&str, &str)], start: u64) -> Stream {
        Stream::open_path_for(h, path, headers, start, STREAM_TIMEOUT)
    }

    /// [`Stream::open_path`], read for at most `timeout` (to see that a stream stays open).
    pub fn open_path_for(
        h: &Host,
        path: &str,
        headers: &[(&str, &str)],
        start: u64,
        timeout: Duration,
    ) -> Stream {
        let mut req = ureq::AgentBuilder::new()
            .redirects(0)
            .timeout(timeout)
            .build()
            .get(&h.url(path));
        for (k, v) in headers {
            req = req.set(k, v);
        }
        match req.call() {
            Ok(r) => Stream::of_response(r, start),
            Err(ureq::Error::Status(s, r)) => {
                panic!("GET {path}: {s} {}", r.into_string().unwrap_or_default())
            }
            Err(e) => panic!("GET {path}: {e}"),
        }
    }

    /// [`Stream::open`], or why it could not be opened (a node that is down, a refusal):
    /// for readers that reconnect, as eve's client does.
    pub fn try_open(h: &Host, sid: &str, start: u64) -> Result<Stream, String> {
        let path = stream_path(sid, &format!("startIndex={start}"));
        let req = ureq::AgentBuilder::new()
            .redirects(0)
            .timeout(STREAM_TIMEOUT)
            .timeout_connect(Duration::from_secs(5))
            .build()
            .get(&h.url(&path));
        match req.call() {
            Ok(r) => Ok(Stream::of_response(r, start)),
            Err(ureq::Error::Status(s, r)) => {
                Err(format!("{s} {}", r.into_string().unwrap_or_default()))
            }
            Err(e) => Err(e.to_string()),
        }
    }

    fn of_response(resp: ureq::Response, start: u64) -> Stream {
        let headers = resp
            .headers_names()
            .into_iter()
            .filter_map(|n| resp.header(&n).map(|v| (n.clone(), v.to_string())))
            .collect();
        Stream {
            lines: BufReader::new(resp.into_reader()).lines(),
            headers,
            next_index: start,
            timed_out: false,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The next raw line (blank ones included); `None` at the end of the stream or when its
    /// time is up.
    pub fn next_line(&mut self) -> Option<String> {
        match self.lines.next()? {
            Ok(line) => Some(line),
            Err(_) => {
                self.timed_out = true;
                None
            }
        }
    }

    /// The next event (blank lines and controls skipped); `None` at the end of the stream or
    /// when its time is up.
    pub fn next_event(&mut self) -> Option<Value> {
        while let Some(line) = self.next_line() {
            if let Some(e) = parse_line(&line) {
                self.next_index += 1;
                return Some(e);
            }
        }
        None
    }

    /// The next `n` events; panics if the stream ends before.
    pub fn take(&mut self, n: usize) -> Vec<Value> {
        (0..n)
            .map(|i| {
                self.next_event()
                    .unwrap_or_else(|| panic!("the stream ended after {i} of {n} events"))
            })
            .collect()
    }

    /// The events up to and including the first for which `pred` holds; panics (with what
    /// was read) if the stream ends or times out before.
    pub fn until(&mut self, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let Some(e) = self.next_event() else {
                panic!(
                    "the stream ended before the awaited event; read: {:?}",
                    types(&out)
                );
            };
            let stop = pred(&e);
            out.push(e);
            if stop {
                return out;
            }
        }
    }

    /// The events up to and including the first of type `t`.
    pub fn until_type(&mut self, t: &str) -> Vec<Value> {
        self.until(|e| e["type"] == t)
    }

    /// Everything until the stream ends (for streams that end: `follow=false`, or a session
    /// that ends).
    pub fn rest(&mut self) -> Vec<Value> {
        std::iter::from_fn(|| self.next_event()).collect()
    }
}

/// Reads the following stream of `sid` from `start` until `pred` holds (that event
/// included), then drops it.
pub fn read_until(h: &Host, sid: &str, start: u64, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
    Stream::open(h, sid, start).until(pred)
}

/// Reads the following stream of `sid` from `start` up to the first settling event
/// ([`is_settling`]), then drops it: from the first event of a turn, the whole turn. A turn
/// whose runner died is taken over by this reader once its lease has expired, so this also
/// waits for a resumed turn.
pub fn read_until_settled(h: &Host, sid: &str, start: u64) -> Vec<Value> {
    read_until(h, sid, start, is_settling)
}

// --------------------------------------------------------------------------------- views

/// Whether `e` belongs to the delivery `delivery` (a send's `deliveryId`): its
/// `meta.deliveryIds` name it.
pub fn has_delivery(e: &Value, delivery: &str) -> bool {
    e["meta"]["deliveryIds"]
        .as_array()
        .is_some_and(|d| d.iter().any(|x| x == delivery))
}

/// The `type` of each event.
pub fn types(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("?"))
        .collect()
}

/// The events of type `t`.
pub fn of_type<'a>(events: &'a [Value], t: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == t).collect()
}

/// The first event of type `t`; panics (listing the types) when there is none.
pub fn first<'a>(events: &'a [Value], t: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["type"] == t)
        .unwrap_or_else(|| panic!("no {t} in {:?}", types(events)))
}

/// The position of the first event of type `t`; panics when there is none.
pub fn position(events: &[Value], t: &str) -> usize {
    events
        .iter()
        .position(|e| e["type"] == t)
        .unwrap_or_else(|| panic!("no {t} in {:?}", types(events)))
}

/// The text as it was streamed: every `message.appended` delta, in order (a step that ran
/// again after its runner died streams its text again).
pub fn streamed_text(events: &[Value]) -> String {
    of_type(events, "message.appended")
        .iter()
        .map(|e| e["data"]["messageDelta"].as_str().unwrap())
        .collect()
}

/// The authoritative text: every `message.completed` message, in order.
pub fn completed_text(events: &[Value]) -> String {
    of_type(events, "message.completed")
        .iter()
        .map(|e| e["data"]["message"].as_str().unwrap())
        .collect()
}

/// Asserts that every event has its own `meta.id` (`evt_…`): nothing was delivered twice.
pub fn assert_unique_ids(events: &[Value]) {
    let mut seen = HashSet::new();
    for (i, e) in events.iter().enumerate() {
        let id = e["meta"]["id"].as_str().expect("meta.id");
        assert!(id.starts_with("evt_"), "{id}");
        assert!(
            seen.insert(id),
            "event {i} ({}) appears twice: {id}",
            e["type"]
        );
    }
}

fn step_key(e: &Value) -> (Value, Value) {
    (e["data"]["turnId"].clone(), e["data"]["stepIndex"].clone())
}

/// The log as an uninterrupted run would have written it: an attempt of a step that was
/// started again under the same `stepIndex` (its runner died before the step finished, and the
/// step ran again) is left out — from its `step.started` up to the next `step.started`.
pub fn without_retried_steps(events: &[Value]) -> Vec<Value> {
    let starts: Vec<usize> = (0..events.len())
        .filter(|&i| events[i]["type"] == "step.started")
        .collect();
    let mut dropped = vec![false; events.len()];
    for (n, &s) in starts.iter().enumerate() {
        let retried = starts[n + 1..]
            .iter()
            .any(|&later| step_key(&events[later]) == step_key(&events[s]));
        if retried {
            let end = starts.get(n + 1).copied().unwrap_or(events.len());
            dropped[s..end].iter_mut().for_each(|d| *d = true);
        }
    }
    events
        .iter()
        .zip(dropped)
        .filter(|(_, d)| !d)
        .map(|(e, _)| e.clone())
        .collect()
}

/// The events without what differs between two runs of the same conversation in two
/// sessions: `meta` (ids, times, deliveries), and the session id itself.
pub fn comparable(events: &[Value], sid: &str) -> Vec<Value> {
    events
        .iter()
        .map(|e| {
            let text = json!({ "type": e["type"], "data": e["data"] })
                .to_string()
                .replace(sid, "<session>");
            serde_json::from_str(&text).unwrap()
        })
        .collect()
}

/// A `message.received` envelope of turn 0 (for chat-store tests that need eve-shaped events).
pub fn user_event(text: &str, id: &str) -> Value {
    serde_json::json!({
        "type": "message.received",
        "data": { "message": text, "parts": [{ "type": "text", "text": text }], "sequence": 0, "turnId": "turn_0" },
        "meta": { "at": "2026-12-01T00:00:00.000Z", "id": id },
    })
}

/// A `message.appended` envelope of turn 0, step 0.
pub fn delta_event(text: &str, id: &str) -> Value {
    serde_json::json!({
        "type": "message.appended",
        "data": { "messageDelta": text, "sequence": 0, "stepIndex": 0, "turnId": "turn_0" },
        "meta": { "at": "2026-12-01T00:00:00.000Z", "id": id },
    })
}
