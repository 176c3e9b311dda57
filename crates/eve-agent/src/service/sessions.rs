//! The session routes, as eve answers them. A request that brings work (a message, an
//! answer, a control) is checked, recorded durably, and answered `202`; the component then
//! runs the work in the same invocation ([`crate::service::work::drain`]): a reader that goes
//! away never stops it, and a message sent while a turn runs waits in the inbox for the next
//! turn instead of being refused.
//!
//! Each function here is one route's decision over the store; what it returns says what the
//! component answers and whether work runs after.

use eve_api::eve::{Event, InputResponse};
use eve_store::sql::Sql;
use eve_usage::{access, quota, standing};

use crate::protocol::uploads::{Upload, UploadPolicy};
use crate::protocol::{ids, Message, Refusal, SessionRequest};
use crate::providers::{config, offered};
use crate::service::env::{self, db_refusal, AgentEnv};
use crate::service::runner::envelope;
use crate::service::work::{First, Queued};
use crate::service::{project_files, uploads};
use crate::session::store::{AgentStore, Clock, SessionState};
use crate::session::transcript;
use crate::turn;
use eve_api::{ApiError, ErrorCode};

/// A new delivery id.
fn delivery_id() -> String {
    ids::delivery_id(eve_auth::crypto::random_bytes::<16>())
}

/// A message's `model` must be one offered, before anything is kept: one an admin's provider
/// disabled or removed is 403 `model_not_allowed`, any other unknown one 400.
pub fn check_model<S: Sql>(env: &dyn AgentEnv, db: &S, m: &Message) -> Result<(), Refusal> {
    let Some(id) = m.model.as_deref() else {
        return Ok(());
    };
    let choices = env::offered_models(env, db)?;
    if config::choose(&choices, Some(id), None).is_some() {
        return Ok(());
    }
    if offered::is_withdrawn(db, id).map_err(db_refusal)? {
        return Err(Refusal::from_api(&ApiError::new(
            ErrorCode::ModelNotAllowed,
            format!("The model {id:?} is not enabled in this deployment."),
        )));
    }
    Err(Refusal::bad_request(format!(
        "Unknown model {id:?}: expected one that /eve/v1/info lists."
    )))
}

/// A message may start a turn only while its principal is below its daily model tokens (429
/// `quota_exceeded`) and on a model it may use (403 `model_not_allowed`), checked before
/// anything is kept (issue 20). A member's message that names no model runs on the model
/// the turn would take (`fallback`: the session's earlier one, else the default) when that
/// one is allowed, else on the first allowed one, which the message is then pinned to.
pub fn check_turn<S: Sql>(
    env: &dyn AgentEnv,
    db: &S,
    principal: &str,
    m: &mut Message,
    fallback: Option<&str>,
) -> Result<(), Refusal> {
    let standing = standing::read(db, principal).map_err(db_refusal)?;
    // The `defaultTokensPerDay` setting, else the variable: read per turn.
    let variable = env.variable(quota::TOKENS_PER_DAY_VARIABLE);
    let daily = eve_runtime::settings::default_tokens_per_day(db, variable.as_deref())
        .map_err(|e| Refusal::from_api(&e))?;
    quota::check_tokens_over(&standing, daily, env.now_ms()).map_err(|e| Refusal::from_api(&e))?;
    if !access::is_member(&standing) {
        return Ok(());
    }
    if let Some(id) = m.model.as_deref() {
        return access::check_model(&standing, id).map_err(|e| Refusal::from_api(&e));
    }
    let choices = env::offered_models(env, db)?;
    let would = config::choose(&choices, None, fallback).map(|c| c.id.as_str());
    if would.is_some_and(|id| access::may_use(&standing, id)) {
        return Ok(());
    }
    let ids: Vec<String> = choices.iter().map(|c| c.id.clone()).collect();
    match access::allowed(&standing, &ids).first() {
        Some(first) => {
            m.model = Some(first.to_string());
            Ok(())
        }
        None => access::check_model(&standing, would.unwrap_or_default())
            .map_err(|e| Refusal::from_api(&e)),
    }
}

/// New work (a message, an answer) is refused while the principal's storage is full
/// (`principal_max_bytes`), before anything is kept. A turn already running is not cut: it
/// finishes, and may end somewhat past the cap.
/// An account's storage override (`principal_quota`) replaces the variable.
pub fn check_room<S: Sql>(
    env: &dyn AgentEnv,
    store: &AgentStore<'_, S>,
    principal: &str,
) -> Result<(), Refusal> {
    let max = env.variable("principal_max_bytes");
    let own = quota::storage_override(store.db, principal).map_err(db_refusal)?;
    let quota =
        quota::with_storage_override(eve_store::limits::storage_quota(None, max.as_deref()), own);
    if store.has_room(principal, &quota).map_err(db_refusal)? {
        Ok(())
    } else {
        Err(Refusal::storage_full())
    }
}

/// The sessions one principal may hold (`max_sessions_per_user`, default 1000).
pub fn max_sessions(env: &dyn AgentEnv) -> u64 {
    MAX_SESSIONS_PER_USER.read(env.variable(MAX_SESSIONS_PER_USER.name).as_deref())
}

/// Default of [`max_sessions`].
pub const DEFAULT_MAX_SESSIONS: u64 = 1000;

/// The variable of [`max_sessions`] (a value past its range is clamped and logged).
pub const MAX_SESSIONS_PER_USER: eve_api::variables::Bounded = eve_api::variables::Bounded {
    name: "max_sessions_per_user",
    default: DEFAULT_MAX_SESSIONS,
    min: 1,
    max: 10_000_000,
};

/// How long a session that never held anything (an empty create) lives when no chat refers
/// to it: it is freed at the principal's next create after this (issue 19 item 2).
pub const UNUSED_SESSION_LIFETIME_MS: i64 = 60 * 60 * 1000;

/// The refusal of a create past [`max_sessions`].
pub fn too_many_sessions(max: u64) -> Refusal {
    Refusal::new(
        429,
        Some("too_many_sessions"),
        format!("Too many conversations: at most {max} per user. Delete chats to start new ones."),
    )
}

/// Keeps the message's files (checked already) and queues it; nothing stays behind when
/// either fails. Its delivery id.
fn keep_message<S: Sql>(
    env: &dyn AgentEnv,
    store: &AgentStore<'_, S>,
    id: &str,
    principal: &str,
    mut m: Message,
    files: Vec<Upload>,
    policy: &UploadPolicy,
) -> Result<String, Refusal> {
    let kept = uploads::keep(store, id, principal, &mut m, files, policy, env.now_ms())?;
    queue_message(env, store, id, &m).inspect_err(|_| uploads::forget(store, principal, &kept))
}

fn queue_message<S: Sql>(
    env: &dyn AgentEnv,
    store: &AgentStore<'_, S>,
    id: &str,
    m: &Message,
) -> Result<String, Refusal> {
    let delivery = delivery_id();
    let body = serde_json::to_string(&Queued {
        text: m.text.clone(),
        parts: m.parts.clone(),
        client_context: m.client_context.clone(),
        model: m.model.clone(),
    })
    .expect("messages serialize");
    store
        .push_inbox(id, "message", &delivery, &body, env.now_ms())
        .map_err(db_refusal)?;
    Ok(delivery)
}

/// `POST /eve/v1/session` (its body parsed already): a new session, with its first message or
/// parked without one. The database (`open`ed once the request is known to be valid) and the
/// new session's id. `chat`: eve-chat's `chatId`, whose project the message's project files
/// must be in.
pub fn create<S: Sql>(
    env: &dyn AgentEnv,
    open: impl FnOnce() -> Result<S, Refusal>,
    principal: &str,
    mut request: SessionRequest,
    chat: Option<&str>,
) -> Result<(S, String), Refusal> {
    let db = open()?;
    if let SessionRequest::Message(m) = &request {
        check_model(env, &db, m)?;
    }
    let now = env.now_ms();
    let id = ids::session_id(now, eve_auth::crypto::random_bytes::<10>());
    let store = AgentStore::new(&db);
    let policy = env::upload_policy(env);
    // Every create writes a row: a full storage refuses an empty one too (issue 19 item 2).
    check_room(env, &store, principal)?;
    if let SessionRequest::Message(m) = &mut request {
        check_turn(env, &db, principal, m, None)?;
    }
    let files = match &mut request {
        SessionRequest::Message(m) => {
            let files = uploads::check(&store, principal, m, &policy)?;
            if project_files::names_any(m) {
                let project = project_files::chat_project(&db, principal, chat)?;
                project_files::resolve(&db, principal, project.as_deref(), m)?;
            }
            files
        }
        _ => Vec::new(),
    };
    store
        .free_unused_sessions(principal, Clock::Database, UNUSED_SESSION_LIFETIME_MS)
        .map_err(db_refusal)?;
    let max = max_sessions(env);
    if !store
        .create_session_capped(&id, principal, Clock::Database, max)
        .map_err(db_refusal)?
    {
        return Err(too_many_sessions(max));
    }
    if let SessionRequest::Message(m) = request {
        keep_message(env, &store, &id, principal, m, files, &policy)?;
    }
    Ok((db, id))
}

/// The active session of this principal; eve's 409 `session_not_active` for anything else
/// (unknown, another principal's, reset, failed).
fn active<S: Sql>(
    store: &AgentStore<'_, S>,
    id: &str,
    principal: &str,
) -> Result<Vec<Event>, Refusal> {
    store
        .session(id, principal)
        .map_err(db_refusal)?
        .filter(|r| r.state() != SessionState::Ended)
        .ok_or_else(Refusal::session_not_active)?;
    store.all_events(id).map_err(db_refusal)
}

/// `POST /eve/v1/session/:id`: the next message (it starts the next turn, or steers a parked
/// one), or answers to what the session asks (its body parsed already). The database, the
/// delivery id, and what the work does first.
pub fn send<S: Sql>(
    env: &dyn AgentEnv,
    open: impl FnOnce() -> Result<S, Refusal>,
    principal: &str,
    id: &str,
    request: SessionRequest,
) -> Result<(S, String, First), Refusal> {
    let db = open()?;
    let store = AgentStore::new(&db);
    let log = active(&store, id, principal)?;
    if !matches!(request, SessionRequest::Empty) {
        check_room(env, &store, principal)?;
    }
    match request {
        SessionRequest::Message(mut m) => {
            check_model(env, &db, &m)?;
            check_turn(env, &db, principal, &mut m, transcript::last_model_id(&log))?;
            let policy = env::upload_policy(env);
            let files = uploads::check(&store, principal, &m, &policy)?;
            if project_files::names_any(&m) {
                let project = project_files::session_project(&db, principal, id)?;
                project_files::resolve(&db, principal, project.as_deref(), &mut m)?;
            }
            let delivery = keep_message(env, &store, id, principal, m, files, &policy)?;
            Ok((db, delivery, First::Nothing))
        }
        SessionRequest::InputResponses(responses) => {
            check_answers(&log, &responses, principal)?;
            Ok((db, delivery_id(), First::Answer(responses)))
        }
        SessionRequest::Empty => Err(Refusal::bad_request(
            "Expected a non-empty 'message' or a non-empty 'inputResponses' array.",
        )),
    }
}

/// Answers must answer what the session asks: eve's 409 `input_not_pending` otherwise.
pub fn check_answers(
    log: &[Event],
    responses: &[InputResponse],
    principal: &str,
) -> Result<(), Refusal> {
    if responses
        .iter()
        .any(|r| turn::answer_events(log, r, principal).is_some())
    {
        return Ok(());
    }
    Err(Refusal::new(
        409,
        Some("input_not_pending"),
        "No pending input request matches these responses.",
    ))
}

/// What a cancel came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancel {
    /// No live session: eve's `200 no_active_turn`.
    NoSession,
    /// A live session: `202`; `stopping` when the open turn (or the named one) was asked to
    /// stop, and its work then runs.
    Accepted { stopping: bool },
}

/// `POST /eve/v1/session/:id/cancel` (its optional `turnId` parsed already): asks the open
/// turn to stop.
pub fn cancel<S: Sql>(
    env: &dyn AgentEnv,
    db: &S,
    principal: &str,
    id: &str,
    turn_id: Option<&str>,
) -> Result<Cancel, Refusal> {
    let store = AgentStore::new(db);
    let Some(row) = store.session(id, principal).map_err(db_refusal)? else {
        return Ok(Cancel::NoSession);
    };
    if row.state() == SessionState::Ended {
        return Ok(Cancel::NoSession);
    }
    let log = store.all_events(id).map_err(db_refusal)?;
    let stopping = cancels_open_turn(&log, turn_id);
    if stopping {
        store
            .request_cancel(id, principal, log.len() as u64, env.now_ms())
            .map_err(db_refusal)?;
    }
    Ok(Cancel::Accepted { stopping })
}

/// Whether a cancel (of `turn_id`, or of whatever runs) reaches the open turn of `log`.
pub fn cancels_open_turn(log: &[Event], turn_id: Option<&str>) -> bool {
    match (transcript::open_turn(log), turn_id) {
        (Some(o), Some(t)) => o.turn.turn_id == t,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// `POST /eve/v1/session/:id/clear` and `/compact`: queued until the open turn settles.
/// `false`: no live session. Each writes events, so a full storage refuses it (413).
pub fn control<S: Sql>(
    env: &dyn AgentEnv,
    db: &S,
    principal: &str,
    id: &str,
    kind: &str,
) -> Result<bool, Refusal> {
    let store = AgentStore::new(db);
    let live = store
        .session(id, principal)
        .map_err(db_refusal)?
        .is_some_and(|r| r.state() != SessionState::Ended);
    if !live {
        return Ok(false);
    }
    check_room(env, &store, principal)?;
    store
        .push_inbox(id, kind, &delivery_id(), "{}", env.now_ms())
        .map_err(db_refusal)?;
    Ok(true)
}

/// `POST /eve/v1/session/:id/reset` (optional `reason`): retires the session for good; its
/// stream ends with `session.completed`. `false`: no live session.
pub fn reset<S: Sql>(
    env: &dyn AgentEnv,
    db: &S,
    principal: &str,
    id: &str,
) -> Result<bool, Refusal> {
    let store = AgentStore::new(db);
    if !store
        .mark_reset(id, principal, env.now_ms())
        .map_err(db_refusal)?
    {
        return Ok(false);
    }
    let log = store.envelopes(id).map_err(db_refusal)?;
    let events: Vec<Event> = log.iter().map(|e| e.event.clone()).collect();
    // The session's end belongs to its latest turn's deliveries, as the reference's.
    let deliveries = log
        .last()
        .map(|e| e.meta.delivery_ids.clone())
        .unwrap_or_default();
    // A turn parked on a person (a question, an approval, a sign-in) is cancelled first, as
    // eve does: what it waits for resolves `cancelled`, `turn.cancelled`, `session.waiting`.
    let mut end = Vec::new();
    if matches!(events.last(), Some(Event::TurnWaiting(_))) {
        end = turn::cancel_events(id, &events);
    }
    let mut all = events;
    all.extend(end.iter().cloned());
    let usage = transcript::usage(&all);
    end.push(Event::SessionCompleted(
        serde_json::json!({ "usage": usage }),
    ));
    for e in end {
        let e = envelope(e, &deliveries, env.now_ms());
        store
            .append(id, None, &e, env.now_ms())
            .map_err(db_refusal)?;
    }
    Ok(true)
}
