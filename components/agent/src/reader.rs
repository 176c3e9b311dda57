//! `GET /eve/v1/session/:id/stream?startIndex=n`: the session's events from index n, exactly
//! once each, in order — NDJSON by default, SSE (`id:` = index, `Last-Event-ID` resumes) when
//! asked for `text/event-stream`. Only persisted events are read, so whatever a reader sees is
//! durable. A running turn is tailed (short polls) until it settles; a quiet stream gets a
//! keep-alive well inside Spin's 600 s outbound idle limit. A turn whose runner died (lease
//! expired, log not settled) is taken over here: resumed in this request (its new events are
//! written to this reader as they are persisted, and it runs to its end even if this reader
//! goes away), or settled (see [`crate::runner::take_over`]).

use std::time::{Duration, Instant};

use eve_agent::framing::{start_index, StreamFormat};
use eve_agent::store::{AgentStore, SessionState};
use eve_api::eve::{Event, SESSION_ID_HEADER, SESSION_STATE_HEADER};
use eve_api::ApiError;
use eve_spin::db::{now_ms, Db};
use eve_spin::streaming::{sleep_ms, BodyWriter};
use spin_sdk::http::ResponseOutparam;

use crate::api::{db_error, open_db, send_error, Call};
use crate::runner::{self, Sink, TakenOver};

/// Events read per query.
const PAGE: u32 = 256;
/// Poll interval while tailing: short after activity, backing off to this when quiet.
const MIN_POLL_MS: u64 = 5;
const MAX_POLL_MS: u64 = 100;
/// A stream ends after this long (the client reconnects from its last index).
const MAX_STREAM: Duration = Duration::from_secs(30 * 60);
/// Default keep-alive interval (variable `agent_keepalive_secs`).
const DEFAULT_KEEPALIVE_SECS: u64 = 15;

fn keepalive_interval() -> Duration {
    let secs = spin_sdk::variables::get("agent_keepalive_secs")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| (1..=300).contains(s))
        .unwrap_or(DEFAULT_KEEPALIVE_SECS);
    Duration::from_secs(secs)
}

/// The reader of a request that resumed a turn: each event is written as soon as it is
/// persisted (from the table when it is not the next one this reader expects).
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
        // A reader that went away is not written to again; the turn runs on.
        if self.w.write(bytes) {
            self.last_write = Instant::now();
        }
    }
}

impl Sink for ReaderSink<'_> {
    fn appended(&mut self, index: u64, event: &Event) {
        if self.w.closed || index < self.pos {
            return;
        }
        if index == self.pos {
            let frame = self.format.frame(index, &event.to_json());
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
    let start = match start_index(&call.query, call.header("last-event-id")) {
        Ok(s) => s,
        Err(m) => return send_error(out, &ApiError::bad_request(m)),
    };
    let db = match open_db() {
        Ok(db) => db,
        Err(e) => return send_error(out, &e),
    };
    let store = AgentStore::new(&db);
    let principal = call.principal.id.as_str();
    let row = match store.session(id, principal) {
        Ok(Some(row)) => row,
        Ok(None) => return send_error(out, &ApiError::not_found("session not found")),
        Err(e) => return send_error(out, &db_error(e)),
    };
    let state = row.state(now_ms());
    let headers = vec![
        (
            "content-type".to_string(),
            format.content_type().as_bytes().to_vec(),
        ),
        ("cache-control".to_string(), b"no-store".to_vec()),
        ("x-accel-buffering".to_string(), b"no".to_vec()),
        (SESSION_ID_HEADER.to_string(), id.as_bytes().to_vec()),
        (
            SESSION_STATE_HEADER.to_string(),
            state.as_str().as_bytes().to_vec(),
        ),
    ];
    let mut w = BodyWriter::start(out, 200, &headers);
    w.write(format.preamble().as_bytes());

    // A reader that starts after a still-pending `authorization.required` gets that event (with
    // its own index) first, so it can always rebuild the Connect / Skip state.
    if state == SessionState::AwaitingAuthorization {
        if let Some(last) = row.last_index.filter(|i| *i < start) {
            if let Ok(Some(e)) = store.event_at(id, last) {
                w.write(format.frame(e.index, &e.body).as_bytes());
            }
        }
    }

    let keepalive = keepalive_interval();
    let opened = Instant::now();
    let mut last_write = Instant::now();
    let mut pos = start;
    let mut poll_ms = MIN_POLL_MS;
    let mut final_check = false;
    while opened.elapsed() < MAX_STREAM {
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
            }
            if !w.write(chunk.as_bytes()) {
                return; // The reader went away; the turn (if any) runs on regardless.
            }
            last_write = Instant::now();
            poll_ms = MIN_POLL_MS;
            final_check = false;
            continue;
        }
        if final_check {
            break;
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
            SessionState::Running => {}
            SessionState::Orphaned => {
                match runner::take_over(&store, id, principal, false) {
                    Ok(TakenOver::Resume(turn)) => {
                        // This reader has every persisted event (it reads until none is
                        // left before it looks at the state); the sink writes the new ones.
                        let mut sink = ReaderSink {
                            w: &mut w,
                            store: &store,
                            id,
                            format,
                            pos,
                            last_write,
                            keepalive,
                        };
                        runner::resume(&db, id, principal, turn, Some(&mut sink));
                        (pos, last_write) = (sink.pos, sink.last_write);
                        if w.closed {
                            return;
                        }
                    }
                    Ok(TakenOver::NotOurs | TakenOver::Settled(_)) => {}
                    Err(e) => eprintln!("agent: taking over an orphaned turn: {e}"),
                }
                continue;
            }
            // Nothing runs: one more read closes the race with the last append, then the end.
            SessionState::Idle | SessionState::AwaitingAuthorization => {
                final_check = true;
                continue;
            }
        }
        if last_write.elapsed() >= keepalive {
            if !w.write(format.keepalive().as_bytes()) {
                return;
            }
            last_write = Instant::now();
        }
        sleep_ms(poll_ms);
        poll_ms = (poll_ms * 2).min(MAX_POLL_MS);
    }
    w.finish();
}
