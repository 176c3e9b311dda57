//! Runs a session's work after a request has answered: the [`TurnHost`] over SQLite, holding
//! the session's lease (renewed every 400 ms; a runner that loses it is fenced out of the log),
//! checking the cancel request at the checkpoints (at most every 100 ms), releasing the lease
//! at the end.
//!
//! [`drain`] is the one way work runs: it takes the lease (or leaves, when a live runner has
//! it — that runner will see the new work), resumes a turn whose runner died
//! (`eve_agent::session::resume`), then takes the inbox in order (each message starts a turn, or steers
//! a parked one; a clear or compact waits its turn), and releases. After releasing it looks
//! once more, so a message that arrived while it was finishing is never left waiting.

use std::time::{Duration, Instant};

use eve_agent::protocol::ids;
use eve_agent::providers::config::{self, ProviderConfig};
use eve_agent::providers::demo::DemoModel;
use eve_agent::providers::http::HttpModel;
use eve_agent::providers::model::Model;
use eve_agent::session::resume::{self, Takeover};
use eve_agent::session::store::{AgentStore, RENEW_EVERY_MS};
use eve_agent::session::transcript;
use eve_agent::tools::builtin::ToolHost;
use eve_agent::turn::{self, Fenced, TurnContext, TurnHost, TurnOutcome};
use eve_api::eve::{Compaction, ContextCleared, Envelope, Event, InputResponse, MessagePart, Meta};
use eve_auth::crypto::{random_bytes, random_token};
use eve_spin::db::{now_ms, Db};
use eve_spin::streaming::sleep_ms;
use serde::{Deserialize, Serialize};

use crate::transport::{mcp_post, WasiTransport};
use eve_agent::connections::mcp::{self, HttpAnswer, McpConnection, McpHttp};
use eve_agent::connections::mcp_oauth;

/// How often the cancel request is read while a turn runs.
const CHECK_EVERY: Duration = Duration::from_millis(100);

/// A message waiting in the inbox (its JSON body).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Queued {
    pub text: String,
    #[serde(default)]
    pub parts: Vec<MessagePart>,
    #[serde(default)]
    pub client_context: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// Where events also go as they are persisted: the reader whose request runs the work.
pub trait Sink {
    /// `envelope` was persisted at `index`.
    fn appended(&mut self, index: u64, envelope: &Envelope);
    /// Called at the checkpoints (at most every 100 ms): a chance to send a keep-alive.
    fn idle(&mut self);
}

/// A fresh envelope for `event` (its `meta` is minted here, once).
pub fn envelope(event: Event, delivery_ids: &[String]) -> Envelope {
    let now = now_ms();
    Envelope {
        event,
        meta: Meta {
            at: ids::iso8601(now),
            id: ids::event_id(now, random_bytes::<10>()),
            delivery_ids: delivery_ids.to_vec(),
        },
    }
}

struct Runner<'a, 's, 'o> {
    store: AgentStore<'a, Db>,
    session_id: &'a str,
    principal: &'a str,
    runner_id: String,
    /// The log index of the open turn's `turn.started` (a cancel reaches that turn only).
    turn_start: usize,
    cancel_at: i64,
    delivery_ids: Vec<String>,
    last_check: Instant,
    last_renew: Instant,
    lost: bool,
    sink: Option<&'s mut (dyn Sink + 'o)>,
}

impl Runner<'_, '_, '_> {
    fn check(&mut self) {
        if self.lost || self.last_check.elapsed() < CHECK_EVERY {
            return;
        }
        self.last_check = Instant::now();
        if let Some(sink) = self.sink.as_mut() {
            sink.idle();
        }
        let state = if self.last_renew.elapsed() >= Duration::from_millis(RENEW_EVERY_MS as u64) {
            self.last_renew = Instant::now();
            self.store
                .renew(self.session_id, &self.runner_id, now_ms())
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
    fn write(&mut self, event: Event) -> Result<(), Fenced> {
        self.emit(&event)
    }

    fn log(&self) -> Result<Vec<Envelope>, Fenced> {
        self.store.envelopes(self.session_id).map_err(|e| {
            eprintln!("agent: reading the log: {e}");
            Fenced
        })
    }
}

impl ToolHost for Runner<'_, '_, '_> {
    fn memory(&mut self) -> Result<String, String> {
        self.store.memory(self.principal)
    }

    fn replace_memory(&mut self, expected: &str, document: &str) -> Result<bool, String> {
        self.store
            .replace_memory(self.principal, expected, document, now_ms())
    }

    fn now_ms(&mut self) -> i64 {
        now_ms()
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

impl TurnHost for Runner<'_, '_, '_> {
    fn emit(&mut self, event: &Event) -> Result<(), Fenced> {
        let env = envelope(event.clone(), &self.delivery_ids);
        // One retry for a passing error; then this runner gives up (the next reader or request
        // takes the session over once the lease expires).
        for _ in 0..2 {
            match self
                .store
                .append(self.session_id, Some(&self.runner_id), &env, now_ms())
            {
                Ok(Some(index)) => {
                    if let Some(sink) = self.sink.as_mut() {
                        sink.appended(index, &env);
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
        self.lost || resume::cancel_applies(self.cancel_at, self.turn_start)
    }

    fn store_output_aside(&mut self, call_id: &str, output: &str) {
        if let Err(e) = self
            .store
            .store_tool_output(self.session_id, call_id, output, now_ms())
        {
            eprintln!("agent: storing a large tool output: {e}");
        }
    }

    fn mcp_http(&mut self) -> &mut dyn McpHttp {
        self
    }

    fn attachment(&mut self, id: &str) -> Option<Vec<u8>> {
        match self.store.attachment(id, self.principal) {
            Ok(a) => a.map(|a| a.data),
            Err(e) => {
                eprintln!("agent: reading attachment {id}: {e}");
                None
            }
        }
    }

    fn connection_token(&mut self, connection: &str) -> Option<String> {
        let sealed = self
            .store
            .token(self.principal, connection)
            .unwrap_or_else(|e| {
                eprintln!("agent: reading the {connection} token: {e}");
                None
            })?;
        let (key, binding) = crate::handlers::token_seal(self.principal, connection)?;
        let token = mcp_oauth::open(&key, &binding, &sealed)?;
        if !token.needs_refresh(now_ms()) {
            return Some(token.access_token);
        }
        // Refreshed before it expires; a refused refresh leaves the old token, and the
        // server's 401 then asks for a new sign-in.
        let flow = token.flow.clone()?;
        let refresh = token.refresh_token.clone()?;
        let fresh =
            crate::handlers::token_request(&flow.token_endpoint, &flow.refresh_body(&refresh))
                .and_then(|(status, body)| {
                    mcp_oauth::parse_token_answer(
                        status,
                        &body,
                        now_ms(),
                        Some(flow),
                        Some(refresh),
                    )
                });
        match fresh {
            Ok(fresh) => {
                if let Err(e) =
                    crate::handlers::save_sealed(&self.store, self.principal, connection, &fresh)
                {
                    eprintln!(
                        "agent: keeping the refreshed {connection} token: {}",
                        e.message
                    );
                }
                Some(fresh.access_token)
            }
            Err(e) => {
                eprintln!("agent: refreshing the {connection} token: {e}");
                Some(token.access_token)
            }
        }
    }

    fn connect_url(&self, attempt_id: &str) -> String {
        format!(
            "/eve/v1/session/{}/authorizations/{attempt_id}",
            self.session_id
        )
    }
}

impl McpHttp for Runner<'_, '_, '_> {
    fn post(
        &mut self,
        url: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Result<HttpAnswer, String> {
        let timeout = variable("mcp_timeout_secs")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|s| *s > 0)
            .unwrap_or(30);
        mcp_post(
            url,
            headers,
            body,
            Duration::from_secs(timeout),
            &mut || !self.stop_requested(),
        )
    }
}

/// The configured MCP servers; a broken `mcp_connections` is logged and gives none.
pub fn mcp_connections() -> Vec<McpConnection> {
    mcp::parse_connections(variable("mcp_connections").as_deref()).unwrap_or_else(|e| {
        eprintln!("agent: {e}");
        Vec::new()
    })
}

fn variable(name: &str) -> Option<String> {
    spin_sdk::variables::get(name).ok()
}

/// The models the owner allows (`llm_models`), the default first.
pub fn model_choices() -> Result<Vec<config::ModelChoice>, String> {
    config::models(variable)
}

/// The model a turn runs on (`requested` by its message, else the session's earlier one
/// `fallback`, else the default) and its id, or why there is none.
fn model(
    requested: Option<&str>,
    fallback: Option<&str>,
) -> Result<(Box<dyn Model>, String, usize), String> {
    let choices = model_choices()?;
    let choice = config::choose(&choices, requested, fallback)
        .or_else(|| choices.first())
        .ok_or("no model is configured")?;
    let id = choice.id.clone();
    let context_chars = choice.context_chars();
    let model: Box<dyn Model> = match choice.provider.clone() {
        ProviderConfig::Demo { pacing_ms } => Box::new(DemoModel {
            pacing_ms,
            sleep: sleep_ms,
        }),
        ProviderConfig::OpenAi(protocol) => Box::new(HttpModel {
            protocol,
            transport: WasiTransport,
        }),
        ProviderConfig::Anthropic(protocol) => Box::new(HttpModel {
            protocol,
            transport: WasiTransport,
        }),
    };
    Ok((model, id, context_chars))
}

/// Runs the open turn of the log to its end or its next wait.
fn run_turn(
    r: &mut Runner<'_, '_, '_>,
    client_context: Option<String>,
    requested: Option<&str>,
) -> TurnOutcome {
    let Ok(log) = r.log() else {
        return TurnOutcome::Fenced;
    };
    let events: Vec<Event> = log.iter().map(|e| e.event.clone()).collect();
    if let Some(open) = transcript::open_turn(&events) {
        r.turn_start = open.start;
        if r.delivery_ids.is_empty() {
            r.delivery_ids = log[open.start].meta.delivery_ids.clone();
        }
    }
    let (mut model, model_id, context_chars) =
        match model(requested, transcript::last_model_id(&events)) {
            Ok(m) => m,
            Err(message) => {
                eprintln!("agent: {message}");
                let at = transcript::open_turn(&events)
                    .map_or(eve_api::eve::TurnRef::new(0).step(0), |o| {
                        o.turn.step(o.step)
                    });
                for e in turn::failed_events(
                    r.session_id,
                    &events,
                    &at,
                    "not_configured",
                    &format!("the model provider is misconfigured: {message}"),
                ) {
                    if r.write(e).is_err() {
                        return TurnOutcome::Fenced;
                    }
                }
                return TurnOutcome::Failed(message);
            }
        };
    let ctx = TurnContext {
        session_id: r.session_id.to_string(),
        model_id,
        client_context,
        context_chars,
        mcp: mcp_connections(),
    };
    turn::run(r, model.as_mut(), events, &ctx)
}

/// What [`drain`] does first, before the inbox.
pub enum First {
    Nothing,
    /// Answer the parked question (the turn then continues).
    Answer(Vec<InputResponse>),
    /// Grant (`true`) or decline the parked sign-in.
    Authorize(bool),
}

/// Runs whatever the session has to do, as described in the module documentation.
pub fn drain(
    db: &Db,
    session_id: &str,
    principal: &str,
    mut first: First,
    mut sink: Option<&mut dyn Sink>,
) {
    loop {
        let store = AgentStore::new(db);
        let runner_id = random_token();
        let cancel_at = match store.claim(session_id, principal, &runner_id, now_ms()) {
            Ok(Some(c)) => c,
            Ok(None) => return,
            Err(e) => {
                eprintln!("agent: claiming the session: {e}");
                return;
            }
        };
        let mut r = Runner {
            store: AgentStore::new(db),
            session_id,
            principal,
            runner_id: runner_id.clone(),
            turn_start: usize::MAX,
            cancel_at,
            delivery_ids: Vec::new(),
            last_check: Instant::now(),
            last_renew: Instant::now(),
            lost: false,
            sink: sink.as_deref_mut(),
        };
        let work = std::mem::replace(&mut first, First::Nothing);
        let fenced = work_through(&mut r, work).is_err();
        if fenced {
            return;
        }
        if let Err(e) = store.release(session_id, &runner_id, now_ms()) {
            eprintln!("agent: releasing the lease: {e} (it expires on its own)");
        }
        // Work that arrived while this runner was finishing.
        match store.session(session_id, principal) {
            Ok(Some(row)) if row.inbox > 0 && row.active => {
                let parked = row.last_type.as_deref() == Some("turn.waiting");
                let ended = matches!(
                    row.last_type.as_deref(),
                    Some("session.failed" | "session.completed")
                );
                if ended || (parked && !inbox_steers(&store, session_id)) {
                    return;
                }
            }
            _ => return,
        }
    }
}

/// Whether the inbox's head can act on a parked turn (a message steers it; a clear cancels
/// it first).
fn inbox_steers(store: &AgentStore<'_, Db>, session_id: &str) -> bool {
    store.inbox_head(session_id).ok().flatten().is_some()
}

fn client_context(r: &Runner<'_, '_, '_>) -> Option<String> {
    r.store
        .session(r.session_id, r.principal)
        .ok()
        .flatten()
        .and_then(|s| s.client_context)
}

fn events_of(log: &[Envelope]) -> Vec<Event> {
    log.iter().map(|e| e.event.clone()).collect()
}

fn work_through(r: &mut Runner<'_, '_, '_>, first: First) -> Result<(), Fenced> {
    let log = events_of(&r.log()?);
    // A turn left open by a runner that died, or parked and asked to stop.
    if let Some(open) = transcript::open_turn(&log) {
        r.turn_start = open.start;
    }
    match resume::plan(&log, r.cancel_at) {
        Takeover::Cancel => {
            for e in turn::cancel_events(r.session_id, &log) {
                r.write(e)?;
            }
        }
        Takeover::Continue => {
            eprintln!("agent: session {}: resuming its open turn", r.session_id);
            if run_turn(r, client_context(r), None) == TurnOutcome::Fenced {
                return Err(Fenced);
            }
        }
        // A turn that ended, its runner dead before the session event that follows.
        Takeover::Nothing => {
            if let Some(e) = turn::unsettled_end(r.session_id, &log) {
                r.write(e)?;
            }
        }
    }
    // What the request that called us brought for a parked turn: its events belong to the
    // turn's deliveries.
    let envelopes = r.log()?;
    let log = events_of(&envelopes);
    if let Some(open) = transcript::open_turn(&log) {
        r.delivery_ids = envelopes[open.start].meta.delivery_ids.clone();
    }
    let events = match first {
        First::Nothing => None,
        First::Answer(responses) => responses
            .iter()
            .find_map(|resp| turn::answer_events(&log, resp)),
        First::Authorize(true) => turn::granted_events(&log),
        First::Authorize(false) => turn::declined_events(&log),
    };
    if let Some(events) = events {
        for e in events {
            r.write(e)?;
        }
        if run_turn(r, client_context(r), None) == TurnOutcome::Fenced {
            return Err(Fenced);
        }
    }
    // The inbox, in order.
    loop {
        let item = match r.store.inbox_head(r.session_id) {
            Ok(Some(i)) => i,
            Ok(None) => return Ok(()),
            Err(e) => {
                eprintln!("agent: reading the inbox: {e}");
                return Ok(());
            }
        };
        let log = events_of(&r.log()?);
        if transcript::is_terminal(&log) {
            return Ok(());
        }
        let delivered = r
            .store
            .delivered(r.session_id, &item.delivery_id)
            .unwrap_or(false);
        if !delivered {
            let parked = matches!(log.last(), Some(Event::TurnWaiting(_)));
            match item.kind.as_str() {
                "message" => {
                    let Ok(q) = serde_json::from_str::<Queued>(&item.body) else {
                        eprintln!("agent: dropping an unreadable inbox message");
                        let _ = r.store.delete_inbox(r.session_id, item.seq);
                        continue;
                    };
                    if q.client_context.is_some() {
                        let _ = r.store.set_client_context(
                            r.session_id,
                            r.principal,
                            q.client_context.as_deref(),
                        );
                    }
                    if parked {
                        if let Some(events) = turn::steer_events(&log, &q.text, &q.parts) {
                            r.delivery_ids.push(item.delivery_id.clone());
                            for e in events {
                                r.write(e)?;
                            }
                        }
                    } else {
                        let first = !log.iter().any(|e| matches!(e, Event::SessionStarted(_)));
                        r.delivery_ids = vec![item.delivery_id.clone()];
                        r.turn_start = log.len() + usize::from(first);
                        for e in turn::start_events(
                            transcript::turns_used(&log),
                            first,
                            &q.text,
                            &q.parts,
                        ) {
                            r.write(e)?;
                        }
                    }
                    let _ = r.store.delete_inbox(r.session_id, item.seq);
                    match run_turn(r, client_context(r), q.model.as_deref()) {
                        TurnOutcome::Fenced => return Err(Fenced),
                        TurnOutcome::Waiting => return Ok(()),
                        _ => {}
                    }
                    continue;
                }
                "clear" | "compact" => {
                    if parked {
                        for e in turn::cancel_events(r.session_id, &log) {
                            r.write(e)?;
                        }
                    }
                    let envelopes = r.log()?;
                    // A control belongs to no delivery of its own: its events carry the
                    // latest turn's, as eve's do.
                    r.delivery_ids = envelopes
                        .last()
                        .map(|e| e.meta.delivery_ids.clone())
                        .unwrap_or_default();
                    let log = events_of(&envelopes);
                    let sequence = transcript::turns_used(&log);
                    let turn_id = format!("turn_{sequence}");
                    if item.kind == "clear" {
                        r.write(Event::ContextCleared(ContextCleared {
                            sequence,
                            session_id: r.session_id.into(),
                            turn_id,
                        }))?;
                    } else {
                        let model_id = model(None, transcript::last_model_id(&log))
                            .map(|(_, id, _)| id)
                            .unwrap_or_default();
                        let c = Compaction {
                            model_id,
                            sequence,
                            session_id: r.session_id.into(),
                            step_index: 0,
                            turn_id,
                            usage_input_tokens: Some(transcript::usage(&log).input_tokens as f64),
                        };
                        r.write(Event::CompactionRequested(c.clone()))?;
                        r.write(Event::CompactionCompleted(Compaction {
                            usage_input_tokens: None,
                            ..c
                        }))?;
                    }
                    let log = events_of(&r.log()?);
                    r.write(turn::session_waiting(r.session_id, &log))?;
                }
                other => eprintln!("agent: dropping an inbox item of kind {other}"),
            }
        }
        let _ = r.store.delete_inbox(r.session_id, item.seq);
    }
}
