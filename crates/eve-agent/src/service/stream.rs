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
//! to this reader as they are persisted. The response body is behind [`StreamOut`].

use std::time::{Duration, Instant};

use eve_api::eve::{
    Envelope, SESSION_ID_HEADER, STREAM_FORMAT_HEADER, STREAM_VERSION, STREAM_VERSION_HEADER,
    TAIL_INDEX_HEADER,
};
use eve_store::sql::Sql;

use crate::protocol::framing::{resolve_start, StreamFormat};
use crate::protocol::{Refusal, StreamQuery};
use crate::service::env::{db_refusal, AgentEnv};
use crate::service::runner::{Sink, DELTA_BATCH};
use crate::service::work::{drain, First};
use crate::session::store::{AgentStore, SessionState};

/// Events read per query.
const PAGE: u32 = 256;
/// Poll interval while tailing: short after activity, backing off to this when quiet. On a
/// remote database every poll is a request to the server, so a turn's reader polls about once
/// per batch of the runner's deltas ([`DELTA_BATCH`]), not several times.
const MIN_POLL_MS: u64 = DELTA_BATCH.as_millis() as u64;
const MAX_POLL_MS: u64 = 100;
/// The longest poll interval while the session is idle.
const IDLE_POLL_MS: u64 = 250;
/// A stream without lease control ends after this long (the client reconnects).
const MAX_STREAM: Duration = Duration::from_secs(30 * 60);
/// A leased stream (`streamControlVersion=1`) lasts this long, as eve's.
const LEASED_STREAM: Duration = Duration::from_secs(60);
/// Default keep-alive interval (variable `agent_keepalive_secs`), as eve's heartbeat.
const DEFAULT_KEEPALIVE_SECS: u64 = 10;
/// The keep-alive interval once the session has settled (idle, waiting for its next message):
/// short, so that a reader that closed its stream once the turn settled (eve's CLI, any script)
/// is noticed at once — a write to a closed reader fails — and its slot in eve-proxy and this
/// instance are freed within about a second rather than at the next 10 s keep-alive
/// (issue 19 item 9). A bare newline: a few bytes a second per idle stream.
const SETTLED_KEEPALIVE: Duration = Duration::from_millis(400);

/// The response body of a stream.
pub trait StreamOut {
    /// Writes `bytes` now; `false` when the reader went away (it is not written to again).
    fn write(&mut self, bytes: &[u8]) -> bool;
    /// Whether the reader went away.
    fn closed(&self) -> bool;
}

/// The keep-alive interval (`agent_keepalive_secs`, 1–300, default 10 s).
pub fn keepalive_interval(env: &dyn AgentEnv) -> Duration {
    let raw = env.variable(AGENT_KEEPALIVE_SECS.name);
    Duration::from_secs(AGENT_KEEPALIVE_SECS.read(raw.as_deref()))
}

/// The variable of [`keepalive_interval`] (a value past its range is clamped and logged).
pub const AGENT_KEEPALIVE_SECS: eve_api::variables::Bounded = eve_api::variables::Bounded {
    name: "agent_keepalive_secs",
    default: DEFAULT_KEEPALIVE_SECS,
    min: 1,
    max: 300,
};

/// A stream about to be served: whose, how, its headers, and where it starts and ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    pub session_id: String,
    pub principal: String,
    pub format: StreamFormat,
    pub query: StreamQuery,
    pub headers: Vec<(String, Vec<u8>)>,
    /// The first index it sends.
    pub start: u64,
    /// The log's length when it opened.
    pub tail: u64,
}

/// Opens the stream of session `id` for `principal`: eve's 404 for an unknown session
/// (another principal's too).
pub fn open<S: Sql>(
    db: &S,
    principal: &str,
    id: &str,
    format: StreamFormat,
    query: &StreamQuery,
) -> Result<Opened, Refusal> {
    let row = AgentStore::new(db)
        .session(id, principal)
        .map_err(db_refusal)?
        .ok_or_else(Refusal::session_not_found)?;
    let tail = row.len;
    Ok(Opened {
        session_id: id.to_string(),
        principal: principal.to_string(),
        format,
        query: *query,
        headers: headers(id, format, query, tail),
        start: resolve_start(query.start_index, tail),
        tail,
    })
}

/// eve's stream headers (the tail index when asked for, or when the stream ends there).
pub fn headers(
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

/// What serving a stream came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// The stream ends: the body is finished.
    Finish,
    /// The reader went away: nothing more is written.
    Gone,
}

/// Serves the body of an [`Opened`] stream into `out`: the preamble, then the events up to
/// the tail (`follow=false`) or followed until the session ends, the reader goes away or the
/// lifetime passes.
pub fn serve<S: Sql>(
    env: &dyn AgentEnv,
    db: &S,
    opened: &Opened,
    out: &mut dyn StreamOut,
) -> Served {
    let (id, principal) = (opened.session_id.as_str(), opened.principal.as_str());
    let (format, query) = (opened.format, &opened.query);
    out.write(format.preamble().as_bytes());
    let store = AgentStore::new(db);
    if !query.follow {
        return read_to(&store, id, format, out, opened.start, opened.tail);
    }
    let mut reader = Follow {
        env,
        db,
        store: &store,
        id,
        principal,
        format,
        out,
        pos: opened.start,
        last_write: Instant::now(),
        keepalive: keepalive_interval(env),
        ended: false,
    };
    reader.follow(query)
}

/// A `follow=false` read: the events from `pos` up to the tail as it was, then the end.
fn read_to<S: Sql>(
    store: &AgentStore<'_, S>,
    id: &str,
    format: StreamFormat,
    out: &mut dyn StreamOut,
    mut pos: u64,
    tail: u64,
) -> Served {
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
        if !out.write(chunk.as_bytes()) {
            return Served::Gone;
        }
    }
    Served::Finish
}

/// What one read of new events found.
enum Got {
    /// This many events, written to the reader.
    Events(usize),
    /// Nothing new.
    Nothing,
    /// The log could not be read: the stream ends.
    Broken,
    /// The reader went away: nothing more is written.
    Gone,
}

/// A following read: new events as they are persisted, keep-alives while quiet.
struct Follow<'a, S: Sql> {
    env: &'a dyn AgentEnv,
    db: &'a S,
    store: &'a AgentStore<'a, S>,
    id: &'a str,
    principal: &'a str,
    format: StreamFormat,
    out: &'a mut dyn StreamOut,
    pos: u64,
    last_write: Instant,
    keepalive: Duration,
    ended: bool,
}

impl<S: Sql> Follow<'_, S> {
    /// Follows until the session ends, the reader goes away or the lifetime passes (a leased
    /// stream then ends with eve's lease-ended control line).
    fn follow(&mut self, query: &StreamQuery) -> Served {
        let lifetime = if query.stream_control {
            LEASED_STREAM
        } else {
            MAX_STREAM
        };
        let opened = Instant::now();
        let mut poll_ms = MIN_POLL_MS;
        while opened.elapsed() < lifetime {
            let (state, got) = self.poll();
            match got {
                // A full page: more are waiting, read them at once.
                Got::Events(n) if n == PAGE as usize => continue,
                // The writer has just written: the next event comes later, so wait first.
                Got::Events(_) => poll_ms = MIN_POLL_MS,
                Got::Nothing => {}
                Got::Broken => break,
                Got::Gone => return Served::Gone,
            }
            if self.ended {
                return Served::Finish;
            }
            match state {
                SessionState::Orphaned => {
                    if !self.take_over() {
                        return Served::Gone;
                    }
                    continue;
                }
                // A reset session's last event is its `session.completed`: read it, then end.
                SessionState::Ended => {
                    self.ended = true;
                    continue;
                }
                SessionState::Idle | SessionState::Running => {}
            }
            let keepalive = if state == SessionState::Idle {
                self.keepalive.min(SETTLED_KEEPALIVE)
            } else {
                self.keepalive
            };
            if !self.keep_alive(keepalive) {
                return Served::Gone;
            }
            self.env.sleep_ms(poll_ms);
            let cap = if state == SessionState::Running {
                MAX_POLL_MS
            } else {
                IDLE_POLL_MS
            };
            poll_ms = (poll_ms * 2).min(cap);
        }
        if query.stream_control && !self.ended {
            self.out.write(self.format.lease_ended().as_bytes());
        }
        Served::Finish
    }

    /// One read of the session's row and the events persisted since the last read, in one
    /// statement ([`AgentStore::follow_page`]); the events are written to the reader. A session
    /// that is gone or cannot be read ends the stream ([`Got::Broken`]).
    fn poll(&mut self) -> (SessionState, Got) {
        let (row, events) = match self
            .store
            .follow_page(self.id, self.principal, self.pos, PAGE)
        {
            Ok(Some(page)) => page,
            Ok(None) => return (SessionState::Ended, Got::Broken),
            Err(e) => {
                eprintln!("agent: stream read: {e}");
                return (SessionState::Ended, Got::Broken);
            }
        };
        let state = row.state();
        if events.is_empty() {
            return (state, Got::Nothing);
        }
        let mut chunk = String::new();
        for e in &events {
            chunk.push_str(&self.format.frame(e.index, &e.body));
            self.pos = e.index + 1;
            self.ended |= matches!(e.kind.as_str(), "session.completed" | "session.failed");
        }
        if !self.out.write(chunk.as_bytes()) {
            return (state, Got::Gone); // The reader went away; the work (if any) runs on.
        }
        self.last_write = Instant::now();
        (state, Got::Events(events.len()))
    }

    /// Runs the work of a session nobody runs, writing its events to this reader as they are
    /// persisted. `false`: the reader went away.
    fn take_over(&mut self) -> bool {
        let mut sink = ReaderSink {
            out: &mut *self.out,
            store: self.store,
            id: self.id,
            format: self.format,
            pos: self.pos,
            last_write: self.last_write,
            keepalive: self.keepalive,
        };
        let (env, db) = (self.env, self.db);
        drain(
            env,
            db,
            self.id,
            self.principal,
            First::Nothing,
            Some(&mut sink),
        );
        (self.pos, self.last_write) = (sink.pos, sink.last_write);
        !self.out.closed()
    }

    /// A keep-alive when the stream was quiet for `interval`. `false`: the reader went away.
    fn keep_alive(&mut self, interval: Duration) -> bool {
        if self.last_write.elapsed() >= interval {
            if !self.out.write(self.format.keepalive().as_bytes()) {
                return false;
            }
            self.last_write = Instant::now();
        }
        true
    }
}

/// The reader of a request that runs the session's work: each event is written as soon as it
/// is persisted (from the table when it is not the next one this reader expects).
struct ReaderSink<'a, S: Sql> {
    out: &'a mut dyn StreamOut,
    store: &'a AgentStore<'a, S>,
    id: &'a str,
    format: StreamFormat,
    pos: u64,
    last_write: Instant,
    keepalive: Duration,
}

impl<S: Sql> ReaderSink<'_, S> {
    fn write(&mut self, bytes: &[u8]) {
        // A reader that went away is not written to again; the work runs on.
        if self.out.write(bytes) {
            self.last_write = Instant::now();
        }
    }
}

impl<S: Sql> Sink for ReaderSink<'_, S> {
    fn appended(&mut self, index: u64, envelope: &Envelope) {
        if self.out.closed() || index < self.pos {
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
            if self.out.closed() {
                return;
            }
        }
    }

    fn idle(&mut self) {
        if !self.out.closed() && self.last_write.elapsed() >= self.keepalive {
            let k = self.format.keepalive();
            self.write(k.as_bytes());
        }
    }
}
