//! A session's runner: the [`TurnHost`] over the store. It holds the session's lease (renewed
//! every 400 ms; a runner that loses it is fenced out of the log), reads the cancel request at
//! the checkpoints (at most every 100 ms), and writes each event as an envelope, handing it to
//! the reader whose request runs the work ([`Sink`]).

use std::time::{Duration, Instant};

use eve_api::eve::{Envelope, Event, Meta};
use eve_store::sql::Sql;

use crate::connections::mcp::{HttpAnswer, McpHttp};
use crate::protocol::ids;
use crate::service::connection_tokens;
use crate::service::env::{self, AgentEnv};
use crate::session::resume;
use crate::session::store::{AgentStore, Clock, RENEW_EVERY_MS};
use crate::tools::builtin::ToolHost;
use crate::turn::host::{Fenced, TurnHost};

/// How often the cancel request is read while a turn runs.
const CHECK_EVERY: Duration = Duration::from_millis(100);
/// How long a streamed delta may wait to be written with the ones after it. Deltas (text,
/// reasoning, a tool call's input) are written in batches, every other event at once with the
/// deltas before it: a reader sees them at most this much later, and a deployment on a remote
/// database writes one statement per batch instead of one per token (docs/performance.md).
pub const DELTA_BATCH: Duration = Duration::from_millis(50);

/// Whether `event` is a streamed delta, which may wait for its batch.
fn batched(event: &Event) -> bool {
    matches!(
        event,
        Event::MessageAppended(_) | Event::ReasoningAppended(_) | Event::ActionInputAppended(_)
    )
}

/// Where events also go as they are persisted: the reader whose request runs the work.
pub trait Sink {
    /// `envelope` was persisted at `index`.
    fn appended(&mut self, index: u64, envelope: &Envelope);
    /// Called at the checkpoints (at most every 100 ms): a chance to send a keep-alive.
    fn idle(&mut self);
}

/// A fresh envelope for `event` at `now_ms` (its `meta` is minted here, once).
pub fn envelope(event: Event, delivery_ids: &[String], now_ms: i64) -> Envelope {
    Envelope {
        event,
        meta: Meta {
            at: ids::iso8601(now_ms),
            id: ids::event_id(now_ms, eve_auth::crypto::random_bytes::<10>()),
            delivery_ids: delivery_ids.to_vec(),
        },
    }
}

/// The runner of one session while it holds the lease.
pub struct Runner<'a, 's, 'o, S: Sql> {
    pub env: &'a dyn AgentEnv,
    pub store: AgentStore<'a, S>,
    pub session_id: &'a str,
    pub principal: &'a str,
    pub runner_id: String,
    /// The log index of the open turn's `turn.started` (a cancel reaches that turn only).
    pub turn_start: usize,
    pub cancel_at: i64,
    pub delivery_ids: Vec<String>,
    last_check: Instant,
    last_renew: Instant,
    /// When an append last went through: it proved the lease and read the cancel request.
    last_written: Option<Instant>,
    lost: bool,
    sink: Option<&'s mut (dyn Sink + 'o)>,
    /// Deltas not written yet, and when the first of them was made.
    pending: Vec<Envelope>,
    pending_since: Instant,
    /// The session's log as this runner last read it plus what it has appended since. While
    /// the lease is held nobody else appends (a reset fences this runner's next write), so
    /// a turn reads the log from the database once, not at every step of its work.
    known_log: Option<Vec<Envelope>>,
}

impl<'a, 's, 'o, S: Sql> Runner<'a, 's, 'o, S> {
    /// The runner of a lease just claimed (`cancel_at`: the session's cancel request).
    pub fn new(
        env: &'a dyn AgentEnv,
        db: &'a S,
        session_id: &'a str,
        principal: &'a str,
        runner_id: String,
        cancel_at: i64,
        sink: Option<&'s mut (dyn Sink + 'o)>,
    ) -> Self {
        Runner {
            env,
            store: AgentStore::new(db),
            session_id,
            principal,
            runner_id,
            turn_start: usize::MAX,
            cancel_at,
            delivery_ids: Vec::new(),
            last_check: Instant::now(),
            last_renew: Instant::now(),
            last_written: None,
            lost: false,
            sink,
            pending: Vec::new(),
            pending_since: Instant::now(),
            known_log: None,
        }
    }

    /// A checkpoint: renews the lease when due (else reads who holds it) and the cancel
    /// request, at most every [`CHECK_EVERY`]; gives the sink its chance for a keep-alive.
    /// An append within the last [`CHECK_EVERY`] has answered both already: a streaming turn
    /// asks the database only for its batches and the renewals.
    fn check(&mut self) {
        if !self.pending.is_empty() && self.pending_since.elapsed() >= DELTA_BATCH {
            // A failed write fences this runner (`lost`), which the caller sees.
            let _ = self.flush();
        }
        if self.lost || self.last_check.elapsed() < CHECK_EVERY {
            return;
        }
        self.last_check = Instant::now();
        if let Some(sink) = self.sink.as_mut() {
            sink.idle();
        }
        let renew_due = self.last_renew.elapsed() >= Duration::from_millis(RENEW_EVERY_MS as u64);
        if !renew_due
            && self
                .last_written
                .is_some_and(|at| at.elapsed() < CHECK_EVERY)
        {
            return;
        }
        let state = if renew_due {
            self.last_renew = Instant::now();
            self.store
                .renew(self.session_id, &self.runner_id, Clock::Database)
                .map(|r| r.map(|cancel_at| (cancel_at, true)))
        } else {
            self.store.runner_state(self.session_id).map(|r| {
                r.map(|(cancel_at, owner, active)| {
                    (
                        cancel_at,
                        active && owner.as_deref() == Some(self.runner_id.as_str()),
                    )
                })
            })
        };
        match state {
            Ok(Some((cancel_at, owner))) => {
                self.lost = !owner;
                self.cancel_at = cancel_at;
            }
            Ok(None) => self.lost = true,
            // A passing database error: try again at the next checkpoint.
            Err(e) => eprintln!("agent: checkpoint: {e}"),
        }
    }

    /// Appends one event now (outside a turn, or to open one).
    pub fn write(&mut self, event: Event) -> Result<(), Fenced> {
        self.emit(&event)
    }

    /// Appends `events` in order.
    pub fn write_all(&mut self, events: Vec<Event>) -> Result<(), Fenced> {
        for e in events {
            self.write(e)?;
        }
        Ok(())
    }

    /// Writes the events waiting for their batch, in one statement. One retry for a passing
    /// error; then this runner gives up (the next reader or request takes the session over
    /// once the lease expires).
    fn flush(&mut self) -> Result<(), Fenced> {
        if self.pending.is_empty() {
            return Ok(());
        }
        for _ in 0..2 {
            let written = self.store.append_all(
                self.session_id,
                &self.runner_id,
                &self.pending,
                self.env.now_ms(),
            );
            match written {
                Ok(Some(appended)) => {
                    self.cancel_at = appended.cancel_at;
                    self.last_written = Some(Instant::now());
                    let batch = std::mem::take(&mut self.pending);
                    if let Some(sink) = self.sink.as_mut() {
                        for (index, env) in appended.indices.iter().zip(&batch) {
                            sink.appended(*index, env);
                        }
                    }
                    self.known_log = extended(self.known_log.take(), &appended.indices, batch);
                    return Ok(());
                }
                Ok(None) => break,
                Err(e) => {
                    eprintln!("agent: append: {e}");
                    self.env.sleep_ms(50);
                }
            }
        }
        self.pending.clear();
        self.lost = true;
        Err(Fenced)
    }

    /// The session's log as envelopes, the deltas waiting for their batch written first (a
    /// read error stops this runner). Read from the database the first time only
    /// (`known_log`).
    pub fn log(&mut self) -> Result<Vec<Envelope>, Fenced> {
        self.flush()?;
        if let Some(log) = &self.known_log {
            return Ok(log.clone());
        }
        let log = self.store.envelopes(self.session_id).map_err(|e| {
            eprintln!("agent: reading the log: {e}");
            Fenced
        })?;
        self.known_log = Some(log.clone());
        Ok(log)
    }

    /// The session's log as events.
    pub fn events(&mut self) -> Result<Vec<Event>, Fenced> {
        Ok(events_of(&self.log()?))
    }
}

impl<S: Sql> Runner<'_, '_, '_, S> {
    /// The project of the session's chat and its instructions (read on every use: moving a
    /// chat takes effect on its next model call).
    fn project(&self) -> Option<(String, String)> {
        eve_projects::projects::session_project(self.store.db, self.principal, self.session_id)
            .inspect_err(|e| eprintln!("agent: reading the session's project: {e}"))
            .ok()
            .flatten()
    }

    /// Where the file tools work: the project's files, or the session's outside a project.
    fn file_scope(&self) -> String {
        match self.project() {
            Some((id, _)) => eve_projects::project_scope(&id),
            None => eve_projects::session_scope(self.session_id),
        }
    }

    /// Runs `f` over the files of `scope` with this deployment's caps.
    fn with_files<T>(
        &self,
        scope: &str,
        f: impl FnOnce(&eve_projects::tools::FileScope<'_, S>) -> T,
    ) -> T {
        let storage = env::storage_max(self.env);
        let new_id = || crate::protocol::ids::file_id(eve_auth::crypto::random_bytes::<16>());
        let fs = eve_projects::tools::FileScope {
            db: self.store.db,
            principal: self.principal,
            scope,
            now: self.env.now_ms(),
            storage_max: storage,
            file_max: env::upload_policy(self.env).max_bytes,
            new_id: &new_id,
        };
        f(&fs)
    }
}

/// `known` with `batch` appended at `indices`; `None` (read it again) unless they follow on
/// from it exactly.
fn extended(
    known: Option<Vec<Envelope>>,
    indices: &[u64],
    batch: Vec<Envelope>,
) -> Option<Vec<Envelope>> {
    let mut log = known?;
    let follows = indices.len() == batch.len()
        && indices
            .iter()
            .enumerate()
            .all(|(i, index)| *index == (log.len() + i) as u64);
    if !follows {
        return None;
    }
    log.extend(batch);
    Some(log)
}

/// The events of `log`.
pub fn events_of(log: &[Envelope]) -> Vec<Event> {
    log.iter().map(|e| e.event.clone()).collect()
}

impl<S: Sql> ToolHost for Runner<'_, '_, '_, S> {
    fn memory(&mut self) -> Result<String, String> {
        self.store.memory(self.principal)
    }

    fn replace_memory(&mut self, expected: &str, document: &str) -> Result<bool, String> {
        self.store
            .replace_memory(self.principal, expected, document, self.env.now_ms())
    }

    fn now_ms(&mut self) -> i64 {
        self.env.now_ms()
    }

    fn pause(&mut self, ms: u64) -> bool {
        let until = Instant::now() + Duration::from_millis(ms);
        loop {
            if self.stop_requested() {
                return false;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return true;
            }
            self.env.sleep_ms(left.as_millis().min(50) as u64);
        }
    }
}

impl<S: Sql> TurnHost for Runner<'_, '_, '_, S> {
    fn emit(&mut self, event: &Event) -> Result<(), Fenced> {
        if self.lost {
            return Err(Fenced);
        }
        let env = envelope(event.clone(), &self.delivery_ids, self.env.now_ms());
        if self.pending.is_empty() {
            self.pending_since = Instant::now();
        }
        self.pending.push(env);
        if batched(event) && self.pending_since.elapsed() < DELTA_BATCH {
            return Ok(());
        }
        self.flush()
    }

    fn stop_requested(&mut self) -> bool {
        self.check();
        self.lost || resume::cancel_applies(self.cancel_at, self.turn_start)
    }

    fn skills(&mut self) -> Vec<eve_skills::store::Offered> {
        // Read on every use, so a skill added or switched off counts from the next step.
        eve_skills::store::offered(self.store.db, self.principal)
            .inspect_err(|e| eprintln!("agent: reading the skills: {}", e.message))
            .unwrap_or_default()
    }

    fn store_output_aside(&mut self, call_id: &str, output: &str) -> Option<String> {
        let scope = self.file_scope();
        let kept = self.with_files(&scope, |fs| {
            eve_projects::tools::keep_output(fs, call_id, output)
        });
        kept.inspect_err(|e| eprintln!("agent: keeping a large tool output: {e}"))
            .ok()
    }

    fn base_instructions(&mut self) -> Option<String> {
        // Read per model call, so an admin's change counts from the next step; the built-in
        // instructions stand in while the database does not answer.
        eve_runtime::settings::instructions(self.store.db)
            .inspect_err(|e| eprintln!("agent: reading the instructions: {}", e.message))
            .ok()
            .flatten()
    }

    fn project_instructions(&mut self) -> Option<String> {
        self.project().map(|(_, instructions)| instructions)
    }

    fn file_tool(&mut self, name: &str, input: &serde_json::Value) -> (serde_json::Value, bool) {
        let scope = self.file_scope();
        self.with_files(&scope, |fs| eve_projects::tools::run(fs, name, input))
    }

    fn mcp_http(&mut self) -> &mut dyn McpHttp {
        self
    }

    fn attachment(&mut self, id: &str) -> Option<Vec<u8>> {
        crate::service::project_files::stored_bytes(self.store.db, self.principal, id)
    }

    fn mcp_blocked(&mut self, connection: &str) -> Option<String> {
        let now = env::mcp_connections(self.env, self.store.db);
        match now.into_iter().find(|c| c.name == connection) {
            Some(c) => c.blocked,
            None => Some("it is no longer configured".into()),
        }
    }

    fn connection_token(&mut self, connection: &str) -> Option<String> {
        connection_tokens::connection_token(self.env, &self.store, self.principal, connection)
    }

    fn connect_url(&self, attempt_id: &str) -> String {
        format!(
            "/eve/v1/session/{}/authorizations/{attempt_id}",
            self.session_id
        )
    }
}

impl<S: Sql> McpHttp for Runner<'_, '_, '_, S> {
    fn post(
        &mut self,
        url: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<HttpAnswer, String> {
        let platform = self.env;
        let timeout = env::mcp_timeout(platform);
        platform.mcp_post(url, headers, body, timeout, &mut || !self.stop_requested())
    }
}

impl<S: Sql> Drop for Runner<'_, '_, '_, S> {
    /// A runner that ends with deltas waiting (its turn stopped without a closing event)
    /// still writes them: they were streamed by the model and belong to the log.
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use eve_api::eve::TurnRef;

    fn at(i: u64) -> Envelope {
        envelope(Event::TurnStarted(TurnRef::new(i)), &[], 1)
    }

    /// The runner's copy of the log grows by exactly what it appended, and is dropped (read
    /// again from the database) when an append did not follow on from it.
    #[test]
    fn the_known_log_grows_only_by_a_batch_that_follows_on() {
        let grown = extended(Some(vec![at(0)]), &[1, 2], vec![at(1), at(2)]).unwrap();
        assert_eq!(grown.len(), 3);
        assert_eq!(extended(Some(vec![at(0)]), &[2], vec![at(2)]), None);
        assert_eq!(extended(Some(vec![at(0)]), &[1], vec![at(1), at(2)]), None);
        assert_eq!(extended(None, &[0], vec![at(0)]), None);
    }
}
