//! `GET /eve/v1/session/:id/stream`: the session's durable stream from a cursor, as eve serves
//! it — NDJSON envelopes (SSE with `id:` = index when asked for `text/event-stream`, our
//! addition), eve's headers, negative cursors from the tail, `follow=false` bounded at the tail
//! (with `x-eve-stream-tail-index`), and a following stream that stays open after
//! `session.waiting` until the session ends. Only persisted events are read, so whatever a
//! reader sees is durable. Quiet streams get a bare-newline keep-alive; with
//! `streamControlVersion=1` the stream ends after a bounded lifetime with eve's lease-ended
//! control line, and the client reconnects from its cursor.
//!
//! A session whose runner died (lease expired, log unsettled) or whose inbox waits with nobody
//! to run it is taken over here: its work runs in this request, and its new events are written
//! to this reader as they are persisted.

use std::time::{Duration, Instant};

use eve_agent::protocol::framing::{resolve_start, StreamFormat};
use eve_agent::protocol::{self, Refusal, StreamQuery};
use eve_agent::service::env::db_refusal;
use eve_agent::service::runner::Sink;
use eve_agent::service::work::First;
use eve_agent::session::store::{AgentStore, SessionState};
use eve_api::eve::{
    Envelope, SESSION_ID_HEADER, STREAM_FORMAT_HEADER, STREAM_VERSION, STREAM_VERSION_HEADER,
    TAIL_INDEX_HEADER,
};
use eve_spin::db::{now_ms, Db};
use eve_spin::streaming::{sleep_ms, BodyWriter};
use spin_sdk::http::ResponseOutparam;

use crate::env::drain;
use crate::reply::{open_db, send_refusal, Call};

/// Events read per query.
const PAGE: u32 = 256;
/// Poll interval while tailing: short after activity, backing off to this when quiet.
const MIN_POLL_MS: u64 = 5;
const MAX_POLL_MS: u64 = 100;
/// The longest poll interval while the session is idle.
const IDLE_POLL_MS: u64 = 250;
/// A stream without lease control ends after this long (the client reconnects).
const MAX_STREAM: Duration = Duration::from_secs(30 * 60);
/// A leased stream (`streamControlVersion=1`) lasts this long, as eve's.
const LEASED_STREAM: Duration = Duration::from_secs(60);
/// Default keep-alive interval (variable `agent_keepalive_secs`), as eve's heartbeat.
const DEFAULT_KEEPALIVE_SECS: u64 = 10;

fn keepalive_interval() -> Duration {
    let secs = spin_sdk::variables::get("agent_keepalive_secs")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| (1..=300).contains(s))
        .unwrap_or(DEFAULT_KEEPALIVE_SECS);
    Duration::from_secs(secs)
}

/// The reader of a request that runs the session's work: each event is written as soon as it
/// is persisted (from the table when it is not the next one this reader expects).
struct ReaderSink<'a> {
    w: &'a mut BodyWriter,
    store: &'a AgentStore<'a, Db>,
    id: &'a str,
    format: StreamFormat,
    pos: u64,
    last_write: Instant,
    keepalive: Duration,
}

impl ReaderSink<'_> {
    fn write(&mut self, bytes: &[u8]) {
        // A reader that went away is not written to again; the work runs on.
        if self.w.write(bytes) {
            self.last_write = Instant::now();
        }
    }
}

impl Sink for ReaderSink<'_> {
    fn appended(&mut self, index: u64, envelope: &Envelope) {
        if self.w.closed || index < self.pos {
            return;
        }
        if index == self.pos {
            let frame = self.format.frame(index, &envelope.to_json());
            self.pos = index + 1;
            return self.write(frame.as_bytes());
        }
        // Catch up from the table (never a gap).
        while self.pos <= index {
            let events = match self.store.events_from(self.id, self.pos, PAGE) {
                Ok(e) if !e.is_empty() => e,
                _ => return,
            };
            let mut chunk = String::new();
            for e in events.iter().take_while(|e| e.index <= index) {
                chunk.push_str(&self.format.frame(e.index, &e.body));
                self.pos = e.index + 1;
            }
            self.write(chunk.as_bytes());
            if self.w.closed {
                return;
            }
        }
    }

    fn idle(&mut self) {
        if !self.w.closed && self.last_write.elapsed() >= self.keepalive {
            let k = self.format.keepalive();
            self.write(k.as_bytes());
        }
    }
}

/// eve's stream headers (the tail index when asked for, or when the stream ends there).
fn headers(
    id: &str,
    format: StreamFormat,
    query: &StreamQuery,
    tail: u64,
) -> Vec<(String, Vec<u8>)> {
    let mut headers = vec![
        (
            "cache-control".to_string(),
            b"no-store, no-transform".to_vec(),
        ),
        (
            "content-type".to_string(),
            format.content_type().as_bytes().to_vec(),
        ),
        ("x-accel-buffering".to_string(), b"no".to_vec()),
        (SESSION_ID_HEADER.to_string(), id.as_bytes().to_vec()),
        (
            STREAM_FORMAT_HEADER.to_string(),
            format.name().as_bytes().to_vec(),
        ),
        (
            STREAM_VERSION_HEADER.to_string(),
            STREAM_VERSION.to_string().into_bytes(),
        ),
    ];
    if query.include_tail_index {
        let t = tail as i64 - 1;
        headers.push((TAIL_INDEX_HEADER.to_string(), t.to_string().into_bytes()));
    }
    headers
}

pub fn stream(call: Call, id: &str, out: ResponseOutparam) {
    let format = StreamFormat::from_accept(call.header("accept"));
    let query = match protocol::stream_query(&call.query, call.header("last-event-id")) {
        Ok(q) => q,
        Err(r) => return send_refusal(out, &r),
    };
    let db = match open_db() {
        Ok(db) => db,
        Err(r) => return send_refusal(out, &r),
    };
    let store = AgentStore::new(&db);
    let principal = call.principal.id.as_str();
    let row = match store.session(id, principal) {
        Ok(Some(row)) => row,
        Ok(None) => return send_refusal(out, &Refusal::session_not_found()),
        Err(e) => return send_refusal(out, &db_refusal(e)),
    };
    let tail = row.len;
    let mut w = BodyWriter::start(out, 200, &headers(id, format, &query, tail));
    w.write(format.preamble().as_bytes());
    let pos = resolve_start(query.start_index, tail);
    if !query.follow {
        return read_to(&store, id, format, w, pos, tail);
    }
    let mut reader = Follow {
        db: &db,
        store: &store,
        id,
        principal,
        format,
        w: &mut w,
        pos,
        last_write: Instant::now(),
        keepalive: keepalive_interval(),
        ended: false,
    };
    match reader.follow(&query) {
        Ending::Gone => {}
        Ending::Ended => w.finish(),
        Ending::Over { ended } => {
            if query.stream_control && !ended {
                w.write(format.lease_ended().as_bytes());
            }
            w.finish();
        }
    }
}

/// A `follow=false` read: the events from `pos` up to the tail as it was, then the end.
fn read_to(
    store: &AgentStore<'_, Db>,
    id: &str,
    format: StreamFormat,
    mut w: BodyWriter,
    mut pos: u64,
    tail: u64,
) {
    while pos < tail {
        let events = match store.events_from(id, pos, PAGE) {
            Ok(e) if !e.is_empty() => e,
            _ => break,
        };
        let mut chunk = String::new();
        for e in events.iter().take_while(|e| e.index < tail) {
            chunk.push_str(&format.frame(e.index, &e.body));
            pos = e.index + 1;
        }
        if !w.write(chunk.as_bytes()) {
            return;
        }
    }
    w.finish();
}

/// How a following read ends.
enum Ending {
    /// The reader went away: nothing more is written.
    Gone,
    /// The session ended: the stream ends with it.
    Ended,
    /// The lifetime passed (or the log could not be read); `ended`: the session ended too.
    Over { ended: bool },
}

/// What one read of new events found.
enum Got {
    /// Events, written to the reader.
    Events,
    /// Nothing new.
    Nothing,
    /// The log could not be read: the stream ends.
    Broken,
    /// The reader went away: nothing more is written.
    Gone,
}

/// A following read: new events as they are persisted, keep-alives while quiet.
struct Follow<'a> {
    db: &'a Db,
    store: &'a AgentStore<'a, Db>,
    id: &'a str,
    principal: &'a str,
    format: StreamFormat,
    w: &'a mut BodyWriter,
    pos: u64,
    last_write: Instant,
    keepalive: Duration,
    ended: bool,
}

impl Follow<'_> {
    /// Follows until the session ends, the reader goes away or the lifetime passes (a leased
    /// stream then ends with eve's lease-ended control line).
    fn follow(&mut self, query: &StreamQuery) -> Ending {
        let lifetime = if query.stream_control {
            LEASED_STREAM
        } else {
            MAX_STREAM
        };
        let opened = Instant::now();
        let mut poll_ms = MIN_POLL_MS;
        while opened.elapsed() < lifetime {
            match self.read_new() {
                Got::Events => {
                    poll_ms = MIN_POLL_MS;
                    continue;
                }
                Got::Nothing => {}
                Got::Broken => break,
                Got::Gone => return Ending::Gone,
            }
            if self.ended {
                return Ending::Ended;
            }
            let state = match self.store.session(self.id, self.principal) {
                Ok(Some(row)) => row.state(now_ms()),
                Ok(None) => break,
                Err(e) => {
                    eprintln!("agent: stream state: {e}");
                    break;
                }
            };
            match state {
                SessionState::Orphaned => {
                    if !self.take_over() {
                        return Ending::Gone;
                    }
                    continue;
                }
                // A reset session's last event is its `session.completed`: read it, then end.
                SessionState::Ended => {
                    self.ended = true;
                    continue;
                }
                SessionState::Running | SessionState::Idle => {}
            }
            if !self.keep_alive() {
                return Ending::Gone;
            }
            sleep_ms(poll_ms);
            let cap = if state == SessionState::Running {
                MAX_POLL_MS
            } else {
                IDLE_POLL_MS
            };
            poll_ms = (poll_ms * 2).min(cap);
        }
        Ending::Over { ended: self.ended }
    }

    /// Writes the events persisted since the last read.
    fn read_new(&mut self) -> Got {
        let events = match self.store.events_from(self.id, self.pos, PAGE) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("agent: stream read: {e}");
                return Got::Broken;
            }
        };
        if events.is_empty() {
            return Got::Nothing;
        }
        let mut chunk = String::new();
        for e in &events {
            chunk.push_str(&self.format.frame(e.index, &e.body));
            self.pos = e.index + 1;
            self.ended |= matches!(e.kind.as_str(), "session.completed" | "session.failed");
        }
        if !self.w.write(chunk.as_bytes()) {
            return Got::Gone; // The reader went away; the work (if any) runs on regardless.
        }
        self.last_write = Instant::now();
        Got::Events
    }

    /// Runs the work of a session nobody runs, writing its events to this reader as they are
    /// persisted. `false`: the reader went away.
    fn take_over(&mut self) -> bool {
        let mut sink = ReaderSink {
            w: &mut *self.w,
            store: self.store,
            id: self.id,
            format: self.format,
            pos: self.pos,
            last_write: self.last_write,
            keepalive: self.keepalive,
        };
        drain(
            self.db,
            self.id,
            self.principal,
            First::Nothing,
            Some(&mut sink),
        );
        (self.pos, self.last_write) = (sink.pos, sink.last_write);
        !self.w.closed
    }

    /// A keep-alive when the stream was quiet for the interval. `false`: the reader went away.
    fn keep_alive(&mut self) -> bool {
        if self.last_write.elapsed() >= self.keepalive {
            if !self.w.write(self.format.keepalive().as_bytes()) {
                return false;
            }
            self.last_write = Instant::now();
        }
        true
    }
}
