//! Runs a turn after its POST answered: the [`TurnHost`] over SQLite, holding the session's
//! lease (renewed every 2 s; a runner that loses it is fenced out of the log), checking the
//! interrupt flag at the checkpoints (at most every 100 ms), releasing the lease at the end.

use std::time::{Duration, Instant};

use eve_agent::config::{self, ProviderConfig};
use eve_agent::demo::DemoModel;
use eve_agent::model::Model;
use eve_agent::provider::HttpModel;
use eve_agent::store::{AgentStore, RENEW_EVERY_MS};
use eve_agent::tools::ToolHost;
use eve_agent::turn::{self, Fenced, TurnHost, TurnOutcome};
use eve_api::eve::Event;
use eve_spin::db::{now_ms, Db};
use eve_spin::streaming::sleep_ms;

use crate::transport::WasiTransport;

/// How often the interrupt flag is read while a turn runs.
const CHECK_EVERY: Duration = Duration::from_millis(100);

struct Runner<'a> {
    store: AgentStore<'a, Db>,
    session_id: &'a str,
    principal: &'a str,
    runner_id: &'a str,
    turn: i64,
    last_check: Instant,
    last_renew: Instant,
    stop: bool,
    lost: bool,
}

impl Runner<'_> {
    fn check(&mut self) {
        if self.stop || self.lost || self.last_check.elapsed() < CHECK_EVERY {
            return;
        }
        self.last_check = Instant::now();
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

impl ToolHost for Runner<'_> {
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

impl TurnHost for Runner<'_> {
    fn emit(&mut self, event: &Event) -> Result<(), Fenced> {
        // One retry for a passing error; then this runner gives up the turn (a reader settles it
        // once the lease expires).
        for _ in 0..2 {
            match self
                .store
                .append(self.session_id, self.runner_id, event, now_ms())
            {
                Ok(Some(_)) => return Ok(()),
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
    let store = AgentStore::new(db);
    let turn_number = store
        .runner_state(session_id)
        .ok()
        .flatten()
        .map_or(0, |(_, turn, _)| turn);
    let log = match store.all_events(session_id) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("agent: reading the log: {e}");
            return;
        }
    };
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
    };
    let outcome = match config::from_lookup(variable) {
        Ok(ProviderConfig::Demo { pacing_ms }) => {
            let mut model = DemoModel {
                pacing_ms,
                sleep: sleep_ms,
            };
            turn::run_turn(&mut runner, &mut model, log, client_context)
        }
        Ok(ProviderConfig::OpenAi(protocol)) => {
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
        Ok(ProviderConfig::Anthropic(protocol)) => {
            let mut model = HttpModel {
                protocol,
                transport: WasiTransport,
            };
            turn::run_turn(&mut runner, &mut model, log, client_context)
        }
        Err(message) => {
            eprintln!("agent: {message}");
            let events = turn::failed_events(
                &log,
                &format!("the model provider is misconfigured: {message}"),
                "not_configured",
            );
            let mut outcome = TurnOutcome::Failed(message);
            for e in &events {
                if runner.emit(e).is_err() {
                    outcome = TurnOutcome::Fenced;
                    break;
                }
            }
            outcome
        }
    };
    if outcome != TurnOutcome::Fenced {
        if let Err(e) = store.release(session_id, runner_id, now_ms()) {
            eprintln!("agent: releasing the lease: {e} (it expires on its own)");
        }
    }
}
