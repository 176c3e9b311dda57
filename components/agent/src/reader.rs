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
use eve_agent::protocol::{self, Refusal};
use eve_agent::session::store::{AgentStore, SessionState};
use eve_api::eve::{
    Envelope, SESSION_ID_HEADER, STREAM_FORMAT_HEADER, STREAM_VERSION, STREAM_VERSION_HEADER,
    TAIL_INDEX_HEADER,
};
use eve_spin::db::{now_ms, Db};
use eve_spin::streaming::{sleep_ms, BodyWriter};
use spin_sdk::http::ResponseOutparam;

use crate::reply::{db_refusal, open_db, send_refusal, Call};
use crate::runner::{self, First, Sink};

/// Events read per query.
const PAGE: u32 = 256;
/// Poll interval while tailing: short after activity, backing off to this when quiet.
const MIN_POLL_MS: u64 = 5;
const MAX_POLL_MS: u64 = 100;
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
    let mut w = BodyWriter::start(out, 200, &headers);
    w.write(format.preamble().as_bytes());
    let mut pos = resolve_start(query.start_index, tail);

    if !query.follow {
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
        return w.finish();
    }

    let keepalive = keepalive_interval();
    let lifetime = if query.stream_control {
        LEASED_STREAM
    } else {
        MAX_STREAM
    };
    let opened = Instant::now();
    let mut last_write = Instant::now();
    let mut poll_ms = MIN_POLL_MS;
    let mut ended = false;
    while opened.elapsed() < lifetime {
        let events = match store.events_from(id, pos, PAGE) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("agent: stream read: {e}");
                break;
            }
        };
        if !events.is_empty() {
            let mut chunk = String::new();
            for e in &events {
                chunk.push_str(&format.frame(e.index, &e.body));
                pos = e.index + 1;
                ended |= matches!(e.kind.as_str(), "session.completed" | "session.failed");
            }
            if !w.write(chunk.as_bytes()) {
                return; // The reader went away; the work (if any) runs on regardless.
            }
            last_write = Instant::now();
            poll_ms = MIN_POLL_MS;
            continue;
        }
        if ended {
            return w.finish();
        }
        let state = match store.session(id, principal) {
            Ok(Some(row)) => row.state(now_ms()),
            Ok(None) => break,
            Err(e) => {
                eprintln!("agent: stream state: {e}");
                break;
            }
        };
        match state {
            SessionState::Orphaned => {
                let mut sink = ReaderSink {
                    w: &mut w,
                    store: &store,
                    id,
                    format,
                    pos,
                    last_write,
                    keepalive,
                };
                runner::drain(&db, id, principal, First::Nothing, Some(&mut sink));
                (pos, last_write) = (sink.pos, sink.last_write);
                if w.closed {
                    return;
                }
                continue;
            }
            // A reset session's last event is its `session.completed`: read it, then end.
            SessionState::Ended => {
                ended = true;
                continue;
            }
            SessionState::Running | SessionState::Idle => {}
        }
        if last_write.elapsed() >= keepalive {
            if !w.write(format.keepalive().as_bytes()) {
                return;
            }
            last_write = Instant::now();
        }
        sleep_ms(poll_ms);
        poll_ms = (poll_ms * 2).min(if state == SessionState::Running {
            MAX_POLL_MS
        } else {
            250
        });
    }
    if query.stream_control && !ended {
        w.write(format.lease_ended().as_bytes());
    }
    w.finish();
}
