//! Runs a turn after its POST answered: the [`TurnHost`] over SQLite, holding the session's
//! lease (renewed every 2 s; a runner that loses it is fenced out of the log), checking the
//! interrupt flag at the checkpoints (at most every 100 ms), releasing the lease at the end.
//!
//! A turn whose runner died (the host was killed; its lease expired) is taken over by the
//! next request that finds it ([`take_over`]): resumed by replay when the provider is
//! deterministic ([`resume`]; see `eve_agent::resume`), else settled. A resumed turn runs in
//! the request that took it over, and its events also go to that request's reader ([`Sink`]).

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use eve_agent::config::{self, ProviderConfig};
use eve_agent::demo::DemoModel;
use eve_agent::model::Model;
use eve_agent::provider::HttpModel;
use eve_agent::resume::{self, Takeover, RUNNER_LOST, RUNNER_LOST_MESSAGE};
use eve_agent::store::{AgentStore, RENEW_EVERY_MS};
use eve_agent::tools::ToolHost;
use eve_agent::turn::{self, Fenced, TurnHost, TurnOutcome};
use eve_api::eve::Event;
use eve_auth::crypto::random_token;
use eve_spin::db::{now_ms, Db};
use eve_spin::streaming::sleep_ms;

use crate::transport::WasiTransport;

/// How often the interrupt flag is read while a turn runs.
const CHECK_EVERY: Duration = Duration::from_millis(100);

/// Where a resumed turn's events also go as they are persisted: the reader whose request took
/// the turn over.
pub trait Sink {
    /// `event` was persisted at `index`.
    fn appended(&mut self, index: u64, event: &Event);
    /// Called at the checkpoints (at most every 100 ms): a chance to send a keep-alive.
    fn idle(&mut self);
}

struct Runner<'a, 's> {
    store: AgentStore<'a, Db>,
    session_id: &'a str,
    principal: &'a str,
    runner_id: &'a str,
    turn: i64,
    last_check: Instant,
    last_renew: Instant,
    stop: bool,
    lost: bool,
    /// Set while a resumed turn replays persisted events: the demo model skips its pacing.
    replaying: Rc<Cell<bool>>,
    sink: Option<&'s mut dyn Sink>,
}

impl Runner<'_, '_> {
    fn check(&mut self) {
        if self.stop || self.lost || self.last_check.elapsed() < CHECK_EVERY {
            return;
        }
        self.last_check = Instant::now();
        if let Some(sink) = self.sink.as_mut() {
            sink.idle();
        }
        let state = if self.last_renew.elapsed() >= Duration::from_millis(RENEW_EVERY_MS as u64) {
            self.last_renew = Instant::now();
            self.store
                .renew(self.session_id, self.runner_id, now_ms())
                .map(|r| r.map(|(interrupt, turn)| (interrupt, turn, true)))
        } else {
            self.store.runner_state(self.session_id).map(|r| {
                r.map(|(interrupt, turn, owner)| {
                    (interrupt, turn, owner.as_deref() == Some(self.runner_id))
                })
            })
        };
        match state {
            Ok(Some((interrupt, turn, owner))) => {
                self.lost = !owner;
                self.stop = interrupt == turn && turn == self.turn;
            }
            Ok(None) => self.lost = true,
            // A passing database error: try again at the next checkpoint.
            Err(e) => eprintln!("agent: checkpoint: {e}"),
        }
    }
}

impl ToolHost for Runner<'_, '_> {
    fn memory(&mut self) -> Result<String, String> {
        self.store.memory(self.principal)
    }

    fn set_memory(&mut self, document: &str) -> Result<(), String> {
        self.store.set_memory(self.principal, document, now_ms())
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
            sleep_ms(left.as_millis().min(50) as u64);
        }
    }
}

impl TurnHost for Runner<'_, '_> {
    fn emit(&mut self, event: &Event) -> Result<(), Fenced> {
        // One retry for a passing error; then this runner gives up the turn (a reader settles it
        // once the lease expires).
        for _ in 0..2 {
            match self
                .store
                .append(self.session_id, self.runner_id, event, now_ms())
            {
                Ok(Some(index)) => {
                    if let Some(sink) = self.sink.as_mut() {
                        sink.appended(index, event);
                    }
                    return Ok(());
                }
                Ok(None) => {
                    self.lost = true;
                    return Err(Fenced);
                }
                Err(e) => {
                    eprintln!("agent: append: {e}");
                    sleep_ms(50);
                }
            }
        }
        Err(Fenced)
    }

    fn stop_requested(&mut self) -> bool {
        self.check();
        self.stop || self.lost
    }

    fn connection_granted(&mut self, connection: &str) -> bool {
        self.store
            .granted(self.principal, connection)
            .unwrap_or(false)
    }

    fn store_output_aside(&mut self, tool_call_id: &str, output: &str) {
        if let Err(e) =
            self.store
                .store_tool_output(self.session_id, tool_call_id, output, now_ms())
        {
            eprintln!("agent: storing a large tool output: {e}");
        }
    }

    fn connect_url(&self, authorization_id: &str) -> String {
        format!(
            "/eve/v1/session/{}/authorizations/{authorization_id}",
            self.session_id
        )
    }

    fn set_replaying(&mut self, replaying: bool) {
        self.replaying.set(replaying);
    }
}

fn variable(name: &str) -> Option<String> {
    spin_sdk::variables::get(name).ok()
}

/// Runs the session's current turn to its end (the caller holds the lease as `runner_id`).
pub fn run(
    db: &Db,
    session_id: &str,
    principal: &str,
    runner_id: &str,
    client_context: Option<&str>,
) {
    let log = match AgentStore::new(db).all_events(session_id) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("agent: reading the log: {e}");
            return;
        }
    };
    drive(
        db,
        session_id,
        principal,
        runner_id,
        client_context,
        log,
        None,
        None,
    );
}

/// A turn taken over from a dead runner, to be resumed by [`resume`].
pub struct Resumable {
    runner_id: String,
    log: Vec<Event>,
    start: usize,
    client_context: Option<String>,
    lease_expired_ms: i64,
}

/// What [`take_over`] did.
pub enum TakenOver {
    /// Another request holds the lease (it took the turn over first, or a runner is alive).
    NotOurs,
    /// The turn is settled now (`true` when events were written to settle it).
    Settled(bool),
    /// This request now owns the turn and must [`resume`] it.
    Resume(Resumable),
}

/// Takes over the orphaned turn of a session (lease expired, log unsettled): fenced, so of
/// two takers only one gets it. A turn the user asked to stop (`stop`, or an interrupt that
/// reached it before its runner died) settles as stopped; a turn of a deterministic provider
/// is handed back to be resumed; any other settles with `session.failed` (`runner_lost`).
pub fn take_over(
    store: &AgentStore<'_, Db>,
    session_id: &str,
    principal: &str,
    stop: bool,
) -> Result<TakenOver, String> {
    let before = store.session(session_id, principal)?;
    let runner_id = random_token();
    let now = now_ms();
    let Some((turn, interrupt_turn)) = store.take_over(session_id, principal, &runner_id, now)?
    else {
        return Ok(TakenOver::NotOurs);
    };
    let log = store.all_events(session_id)?;
    let row = store.session(session_id, principal)?;
    // Every persisted event must have been read back, or the replay would misalign.
    let whole = row
        .as_ref()
        .is_some_and(|r| r.next_index() == log.len() as u64);
    let deterministic = config::from_lookup(variable).is_ok_and(|c| c.replays_deterministically());
    let stopped = stop || interrupt_turn == turn;
    let lease_expired_ms = before.map_or(0, |r| now - r.lease_expires);
    let events = match resume::plan(&log, stopped, deterministic && whole) {
        Takeover::Resume { start } => {
            eprintln!(
                "agent: session {session_id}: its runner died (lease expired {lease_expired_ms} ms ago); \
                 resuming the turn by replay ({} of its events persisted)",
                log.len() - start
            );
            return Ok(TakenOver::Resume(Resumable {
                runner_id,
                log,
                start,
                client_context: row.and_then(|r| r.client_context),
                lease_expired_ms,
            }));
        }
        Takeover::Settle(events) => {
            eprintln!(
                "agent: session {session_id}: its runner died; settling the turn ({})",
                if stopped { "stopped" } else { RUNNER_LOST }
            );
            events
        }
        Takeover::Nothing => Vec::new(),
    };
    let mut wrote = false;
    for e in &events {
        if store.append(session_id, &runner_id, e, now_ms())?.is_none() {
            break;
        }
        wrote = true;
    }
    store.release(session_id, &runner_id, now_ms())?;
    Ok(TakenOver::Settled(wrote))
}

/// Resumes a turn this request took over, to its end; its new events also go to `sink`.
pub fn resume(
    db: &Db,
    session_id: &str,
    principal: &str,
    turn: Resumable,
    sink: Option<&mut dyn Sink>,
) {
    let started = Instant::now();
    let before = turn.log.len();
    let outcome = drive(
        db,
        session_id,
        principal,
        &turn.runner_id,
        turn.client_context.as_deref(),
        turn.log,
        Some(turn.start),
        sink,
    );
    let written = AgentStore::new(db)
        .session(session_id, principal)
        .ok()
        .flatten()
        .map_or(0, |r| r.next_index().saturating_sub(before as u64));
    eprintln!(
        "agent: session {session_id}: resumed turn ended {outcome:?} after {} ms \
         ({written} new events; the lease had expired {} ms before the takeover)",
        started.elapsed().as_millis(),
        turn.lease_expired_ms
    );
}

/// Runs (`resume_at: None`) or resumes (`Some(start)`) the turn over `log`, then releases the
/// lease.
#[allow(clippy::too_many_arguments)]
fn drive(
    db: &Db,
    session_id: &str,
    principal: &str,
    runner_id: &str,
    client_context: Option<&str>,
    log: Vec<Event>,
    resume_at: Option<usize>,
    sink: Option<&mut dyn Sink>,
) -> TurnOutcome {
    let store = AgentStore::new(db);
    let turn_number = store
        .runner_state(session_id)
        .ok()
        .flatten()
        .map_or(0, |(_, turn, _)| turn);
    let replaying = Rc::new(Cell::new(false));
    let mut runner = Runner {
        store: AgentStore::new(db),
        session_id,
        principal,
        runner_id,
        turn: turn_number,
        last_check: Instant::now() - CHECK_EVERY,
        last_renew: Instant::now(),
        stop: false,
        lost: false,
        replaying: replaying.clone(),
        sink,
    };
    let failed = |runner: &mut Runner<'_, '_>, log: &[Event], message: &str, code: &str| {
        let events = turn::failed_events(log, message, code);
        let mut outcome = TurnOutcome::Failed(message.to_string());
        for e in &events {
            if runner.emit(e).is_err() {
                outcome = TurnOutcome::Fenced;
                break;
            }
        }
        outcome
    };
    let outcome = match (config::from_lookup(variable), resume_at) {
        (Ok(ProviderConfig::Demo { pacing_ms }), _) => {
            let mut model = DemoModel {
                pacing_ms,
                // No pacing while the replay reproduces what is already persisted.
                sleep: |ms| {
                    if !replaying.get() {
                        sleep_ms(ms)
                    }
                },
            };
            match resume_at {
                Some(start) => {
                    turn::resume_turn(&mut runner, &mut model, log, start, client_context)
                }
                None => turn::run_turn(&mut runner, &mut model, log, client_context),
            }
        }
        // Only a deterministic provider is resumed (`take_over` checked; the variables may not
        // change under a running instance, but stay safe).
        (Ok(_), Some(_)) => failed(&mut runner, &log, RUNNER_LOST_MESSAGE, RUNNER_LOST),
        (Ok(ProviderConfig::OpenAi(protocol)), None) => {
            let mut model = HttpModel {
                protocol,
                transport: WasiTransport,
            };
            turn::run_turn(
                &mut runner,
                &mut model as &mut dyn Model,
                log,
                client_context,
            )
        }
        (Ok(ProviderConfig::Anthropic(protocol)), None) => {
            let mut model = HttpModel {
                protocol,
                transport: WasiTransport,
            };
            turn::run_turn(&mut runner, &mut model, log, client_context)
        }
        (Err(message), _) => {
            eprintln!("agent: {message}");
            failed(
                &mut runner,
                &log,
                &format!("the model provider is misconfigured: {message}"),
                "not_configured",
            )
        }
    };
    if outcome != TurnOutcome::Fenced {
        if let Err(e) = store.release(session_id, runner_id, now_ms()) {
            eprintln!("agent: releasing the lease: {e} (it expires on its own)");
        }
    }
    outcome
}
