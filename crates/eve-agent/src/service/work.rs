//! Runs a session's work after a request has answered. [`drain`] is the one way work runs: it
//! takes the lease (or leaves, when a live runner has it — that runner will see the new work),
//! resumes a turn whose runner died ([`crate::session::resume`]), applies what the request
//! brought for a parked turn ([`First`]), then takes the inbox in order (each message starts a
//! turn, or steers a parked one; a clear or compact waits its turn), and releases. After
//! releasing it looks once more, so a message that arrived while it was finishing is never
//! left waiting.

use eve_api::eve::{Compaction, ContextCleared, Event, InputResponse, MessagePart, TurnRef};
use eve_store::sql::Sql;
use serde::{Deserialize, Serialize};

use crate::providers::config::{self, ProviderConfig};
use crate::providers::demo::{on_schedule, DemoModel};
use crate::providers::http::HttpModel;
use crate::providers::logged;
use crate::providers::model::Model;
use crate::service::env::{self, AgentEnv};
use crate::service::runner::{events_of, Runner, Sink};
use crate::service::tool_approvals;
use crate::session::resume::{self, Takeover};
use crate::session::store::{AgentStore, Clock, InboxItem};
use crate::session::transcript;
use crate::turn::{self, Fenced, TurnContext, TurnOutcome};

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

/// What [`drain`] does first, before the inbox.
#[derive(Debug, Clone, PartialEq)]
pub enum First {
    Nothing,
    /// Answer the parked question (the turn then continues).
    Answer(Vec<InputResponse>),
    /// Grant (`true`) or decline the parked sign-in.
    Authorize(bool),
}

/// Runs whatever the session has to do, as described in the module documentation.
pub fn drain<S: Sql>(
    env: &dyn AgentEnv,
    db: &S,
    session_id: &str,
    principal: &str,
    mut first: First,
    mut sink: Option<&mut dyn Sink>,
) {
    loop {
        let store = AgentStore::new(db);
        let runner_id = eve_auth::crypto::random_token();
        let cancel_at = match store.claim(session_id, principal, &runner_id, Clock::Database) {
            Ok(Some(c)) => c,
            Ok(None) => return,
            Err(e) => {
                eprintln!("agent: claiming the session: {e}");
                return;
            }
        };
        let mut r = Runner::new(
            env,
            db,
            session_id,
            principal,
            runner_id.clone(),
            cancel_at,
            sink.as_deref_mut(),
        );
        let work = std::mem::replace(&mut first, First::Nothing);
        if work_through(&mut r, work).is_err() {
            return;
        }
        if let Err(e) = store.release(session_id, &runner_id, env.now_ms()) {
            eprintln!("agent: releasing the lease: {e} (it expires on its own)");
        }
        if !more_work(&store, session_id, principal) {
            return;
        }
    }
}

/// Work that arrived while the runner was finishing: an inbox with something to act on
/// (a parked turn waits unless the inbox's head steers it; an ended session takes nothing).
/// The head, not the row count, decides: a disabled account's rows have none, and counting
/// them would claim and release forever.
fn more_work<S: Sql>(store: &AgentStore<'_, S>, session_id: &str, principal: &str) -> bool {
    match store.session(session_id, principal) {
        Ok(Some(row)) if row.inbox > 0 && row.active => {
            let ended = matches!(
                row.last_type.as_deref(),
                Some("session.failed" | "session.completed")
            );
            !ended && inbox_steers(store, session_id)
        }
        _ => false,
    }
}

/// Whether the inbox has a head to take (a message steers a parked turn; a clear cancels it
/// first).
fn inbox_steers<S: Sql>(store: &AgentStore<'_, S>, session_id: &str) -> bool {
    store.inbox_head(session_id).ok().flatten().is_some()
}

/// The work of one lease: the takeover, what the request brought, the inbox.
fn work_through<S: Sql>(r: &mut Runner<'_, '_, '_, S>, first: First) -> Result<(), Fenced> {
    take_over(r)?;
    apply_first(r, first)?;
    loop {
        let item = match r.store.inbox_head(r.session_id) {
            Ok(Some(i)) => i,
            Ok(None) => return Ok(()),
            Err(e) => {
                eprintln!("agent: reading the inbox: {e}");
                return Ok(());
            }
        };
        let log = r.events()?;
        if transcript::is_terminal(&log) {
            return Ok(());
        }
        let delivered = r
            .store
            .delivered(r.session_id, &item.delivery_id)
            .unwrap_or(false);
        if !delivered {
            match take_inbox_item(r, &item, &log)? {
                Taken::Next => {}
                // Removed already (or to be tried again): the next item.
                Taken::Skip => continue,
                Taken::Parked => return Ok(()),
            }
        }
        let _ = r.store.delete_inbox(r.session_id, item.seq);
    }
}

/// A turn left open by a runner that died, or parked and asked to stop: cancelled,
/// continued, or (ended without its session event) settled.
fn take_over<S: Sql>(r: &mut Runner<'_, '_, '_, S>) -> Result<(), Fenced> {
    let envelopes = r.log()?;
    let log = events_of(&envelopes);
    if let Some(open) = transcript::open_turn(&log) {
        r.turn_start = open.start;
        // What ends the turn belongs to its deliveries, as in eve (a cancel of a parked turn
        // too: no request of the turn is running to lend them).
        if r.delivery_ids.is_empty() {
            r.delivery_ids = envelopes[open.start].meta.delivery_ids.clone();
        }
    }
    match resume::plan(&log, r.cancel_at) {
        Takeover::Cancel => r.write_all(turn::cancel_events(r.session_id, &log)),
        Takeover::Continue => {
            eprintln!("agent: session {}: resuming its open turn", r.session_id);
            match run_turn(r, None) {
                TurnOutcome::Fenced => Err(Fenced),
                _ => Ok(()),
            }
        }
        // A turn that ended, its runner dead before the session event that follows.
        Takeover::Nothing => match turn::unsettled_end(r.session_id, &log) {
            Some(e) => r.write(e),
            None => Ok(()),
        },
    }
}

/// What the request that called us brought for a parked turn (an answer, a grant or a
/// decline): its events belong to the turn's deliveries, and the turn continues.
fn apply_first<S: Sql>(r: &mut Runner<'_, '_, '_, S>, first: First) -> Result<(), Fenced> {
    let envelopes = r.log()?;
    let log = events_of(&envelopes);
    if let Some(open) = transcript::open_turn(&log) {
        r.delivery_ids = envelopes[open.start].meta.delivery_ids.clone();
    }
    let events = match first {
        First::Nothing => None,
        First::Answer(responses) => responses
            .iter()
            .find_map(|resp| turn::answer_events(&log, resp, r.principal)),
        First::Authorize(true) => turn::granted_events(&log),
        First::Authorize(false) => turn::declined_events(&log),
    };
    if let Some(events) = events {
        r.write_all(events)?;
        if run_turn(r, None) == TurnOutcome::Fenced {
            return Err(Fenced);
        }
    }
    Ok(())
}

/// What taking an inbox item came to.
enum Taken {
    /// Done: the item is removed and the next one taken.
    Next,
    /// The item is dealt with already: take the next one.
    Skip,
    /// The turn waits (a question or a sign-in): the rest of the inbox waits with it.
    Parked,
}

/// Takes one inbox item (`log`: the session's events).
fn take_inbox_item<S: Sql>(
    r: &mut Runner<'_, '_, '_, S>,
    item: &InboxItem,
    log: &[Event],
) -> Result<Taken, Fenced> {
    let parked = matches!(log.last(), Some(Event::TurnWaiting(_)));
    match item.kind.as_str() {
        "message" => take_message(r, item, log, parked),
        "clear" | "compact" => {
            take_control(r, &item.kind, log, parked)?;
            Ok(Taken::Next)
        }
        other => {
            eprintln!("agent: dropping an inbox item of kind {other}");
            Ok(Taken::Next)
        }
    }
}

/// A message: it steers a parked turn, or opens the next one; then the turn runs.
fn take_message<S: Sql>(
    r: &mut Runner<'_, '_, '_, S>,
    item: &InboxItem,
    log: &[Event],
    parked: bool,
) -> Result<Taken, Fenced> {
    let Ok(q) = serde_json::from_str::<Queued>(&item.body) else {
        eprintln!("agent: dropping an unreadable inbox message");
        let _ = r.store.delete_inbox(r.session_id, item.seq);
        return Ok(Taken::Skip);
    };
    if q.client_context.is_some() {
        let _ = r
            .store
            .set_client_context(r.session_id, r.principal, q.client_context.as_deref());
    }
    if parked {
        if let Some(events) = turn::steer_events(log, &q.text, &q.parts, r.principal) {
            r.delivery_ids.push(item.delivery_id.clone());
            r.write_all(events)?;
        }
    } else {
        let first = !log.iter().any(|e| matches!(e, Event::SessionStarted(_)));
        r.delivery_ids = vec![item.delivery_id.clone()];
        r.turn_start = log.len() + usize::from(first);
        let sequence = transcript::turns_used(log);
        r.write_all(turn::start_events(sequence, first, &q.text, &q.parts))?;
    }
    let _ = r.store.delete_inbox(r.session_id, item.seq);
    match run_turn(r, q.model.as_deref()) {
        TurnOutcome::Fenced => Err(Fenced),
        TurnOutcome::Waiting => Ok(Taken::Parked),
        _ => Ok(Taken::Skip),
    }
}

/// A clear or a compact: a parked turn is cancelled first; then `context.cleared` or the
/// compaction pair, and `session.waiting`.
fn take_control<S: Sql>(
    r: &mut Runner<'_, '_, '_, S>,
    kind: &str,
    log: &[Event],
    parked: bool,
) -> Result<(), Fenced> {
    if parked {
        r.write_all(turn::cancel_events(r.session_id, log))?;
    }
    let envelopes = r.log()?;
    // A control belongs to no delivery of its own: its events carry the latest turn's, as
    // eve's do.
    r.delivery_ids = envelopes
        .last()
        .map(|e| e.meta.delivery_ids.clone())
        .unwrap_or_default();
    let log = events_of(&envelopes);
    let sequence = transcript::turns_used(&log);
    let turn_id = format!("turn_{sequence}");
    if kind == "clear" {
        r.write(Event::ContextCleared(ContextCleared {
            sequence,
            session_id: r.session_id.into(),
            turn_id,
        }))?;
    } else {
        let model_id = model(r.env, r.store.db, None, transcript::last_model_id(&log))
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
    let log = r.events()?;
    r.write(turn::session_waiting(r.session_id, &log))
}

/// The model a turn runs on (`requested` by its message, else the session's earlier one
/// `fallback`, else the default), its id and how many characters of history fit, or why
/// there is none (also: `requested` is no longer offered).
pub fn model<'e, S: Sql>(
    env: &'e dyn AgentEnv,
    db: &S,
    requested: Option<&str>,
    fallback: Option<&str>,
) -> Result<(Box<dyn Model + 'e>, String, usize), String> {
    let choices = env::model_choices(env, db).map_err(String::from)?;
    // A model its message asked for that is no longer offered (an admin disabled or removed
    // it since the message was accepted) fails the turn rather than running on another.
    if let Some(id) = requested.filter(|id| !choices.iter().any(|c| c.id == *id)) {
        return Err(format!("The model {id:?} is no longer offered."));
    }
    let choice = config::choose(&choices, requested, fallback)
        .or_else(|| choices.first())
        .ok_or("no model is configured")?;
    let id = choice.id.clone();
    let context_chars = choice.context_chars();
    let model: Box<dyn Model + 'e> = match choice.provider.clone() {
        ProviderConfig::Demo { pacing_ms } => {
            let sleep = on_schedule(move || env.now_ms(), move |ms| env.sleep_ms(ms));
            Box::new(DemoModel { pacing_ms, sleep })
        }
        ProviderConfig::OpenAi(protocol) => Box::new(HttpModel {
            protocol,
            transport: env.model_transport(),
        }),
        ProviderConfig::Anthropic(protocol) => Box::new(HttpModel {
            protocol,
            transport: env.model_transport(),
        }),
    };
    Ok((model, id, context_chars))
}

/// The session's client context (set by its latest message that had one).
fn client_context<S: Sql>(r: &Runner<'_, '_, '_, S>) -> Option<String> {
    r.store
        .session(r.session_id, r.principal)
        .ok()
        .flatten()
        .and_then(|s| s.client_context)
}

/// Runs the open turn of the log to its end or its next wait (`requested`: the model its
/// message asked for).
fn run_turn<S: Sql>(r: &mut Runner<'_, '_, '_, S>, requested: Option<&str>) -> TurnOutcome {
    let client_context = client_context(r);
    let Ok(log) = r.log() else {
        return TurnOutcome::Fenced;
    };
    let events = events_of(&log);
    if let Some(open) = transcript::open_turn(&events) {
        r.turn_start = open.start;
        if r.delivery_ids.is_empty() {
            r.delivery_ids = log[open.start].meta.delivery_ids.clone();
        }
    }
    let (model, model_id, context_chars) = match model(
        r.env,
        r.store.db,
        requested,
        transcript::last_model_id(&events),
    ) {
        Ok(m) => m,
        Err(message) => return misconfigured(r, &events, message),
    };
    let mut model = logged_if_asked(r, model, &model_id);
    let ctx = TurnContext {
        session_id: r.session_id.to_string(),
        model_id,
        client_context,
        context_chars,
        mcp: env::mcp_connections(r.env, r.store.db),
        tool_approvals: tool_approvals::policies(r.store.db, r.env),
    };
    turn::run(r, model.as_mut(), events, &ctx)
}

/// `model`, logging each of its requests while the `logModelRequests` setting is on (read
/// per turn; a database that does not answer logs nothing).
fn logged_if_asked<'e, S: Sql>(
    r: &Runner<'e, '_, '_, S>,
    model: Box<dyn Model + 'e>,
    model_id: &str,
) -> Box<dyn Model + 'e> {
    if !eve_runtime::settings::log_model_requests(r.store.db).unwrap_or(false) {
        return model;
    }
    let choices = env::model_choices(r.env, r.store.db).unwrap_or_default();
    let what = choices
        .iter()
        .find(|c| c.id == model_id)
        .map(logged::describe)
        .unwrap_or_else(|| format!("model={model_id}"));
    Box::new(logged::Logged::new(model, what))
}

/// Fails the open turn for good: no model is configured as the turn needs.
fn misconfigured<S: Sql>(
    r: &mut Runner<'_, '_, '_, S>,
    events: &[Event],
    message: String,
) -> TurnOutcome {
    eprintln!("agent: {message}");
    let at = transcript::open_turn(events).map_or(TurnRef::new(0).step(0), |o| o.turn.step(o.step));
    let failed = turn::failed_events(
        r.session_id,
        events,
        &at,
        "not_configured",
        &format!("the model provider is misconfigured: {message}"),
    );
    match r.write_all(failed) {
        Ok(()) => TurnOutcome::Failed(message),
        Err(Fenced) => TurnOutcome::Fenced,
    }
}
