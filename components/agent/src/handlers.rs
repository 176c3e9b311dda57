//! The session routes, as eve answers them. A request that brings work (a message, an
//! answer, a control) records it durably, answers `202`, and then runs the work in the same
//! invocation ([`runner::drain`]): a reader that goes away never stops it, and a message sent
//! while a turn runs waits in the inbox for the next turn instead of being refused.

use eve_agent::connections::flow_state::FlowState;
use eve_agent::connections::mcp_oauth::{self, McpFlow, StoredToken};
use eve_agent::connections::oauth;
use eve_agent::protocol::ids;
use eve_agent::protocol::uploads::{self as attachments, Upload, UploadPolicy};
use eve_agent::protocol::{self, Refusal, SessionRequest};
use eve_agent::service::info;
use eve_agent::session::store::{AgentStore, SessionState};
use eve_agent::session::transcript;
use eve_agent::tools::builtin as tools;
use eve_agent::turn;
use eve_api::eve::{status, Accepted, Event, APP_ORIGIN_HEADER, SESSION_ID_HEADER};
use eve_auth::crypto::random_bytes;
use eve_spin::db::{now_ms, Db};
use eve_spin::streaming;
use spin_sdk::http::ResponseOutparam;

use crate::reply::{db_refusal, open_db, send_json, send_refusal, upstream_jwt, variable, Call};
use crate::runner::{self, First, Queued};
use crate::transport::fetch;
use spin_sdk::http::Method;

/// Sends an answer; `with_header`: create and send name the session in `x-eve-session-id` too
/// (the controls do not, as the reference).
fn accepted(out: ResponseOutparam, status: u16, body: &Accepted, with_header: bool) {
    let value = serde_json::to_value(body).expect("answers serialize");
    match (&body.session_id, with_header) {
        (Some(id), true) => send_json(out, status, &[(SESSION_ID_HEADER, id)], &value),
        _ => send_json(out, status, &[], &value),
    }
}

fn delivery_id() -> String {
    ids::delivery_id(random_bytes::<16>())
}

/// `GET /eve/v1/info`.
pub fn info(_call: Call, out: ResponseOutparam) {
    let choices = runner::model_choices().unwrap_or_default();
    let model_id = choices.first().map(|c| c.id.clone()).unwrap_or_default();
    let mut doc = info::agent_info(&model_id, &tools::specs(), &runner::mcp_connections());
    info::list_models(&mut doc, &choices);
    info::list_upload_policy(&mut doc, &upload_policy());
    send_json(out, 200, &[], &doc);
}

/// A message's `model` must be one the owner allows (400 otherwise, before anything is kept).
fn check_model(m: &protocol::Message) -> Result<(), Refusal> {
    let Some(id) = m.model.as_deref() else {
        return Ok(());
    };
    let choices = runner::model_choices().map_err(|e| {
        eprintln!("agent: {e}");
        Refusal::bad_request("The model list is misconfigured.")
    })?;
    if eve_agent::providers::config::choose(&choices, Some(id), None).is_none() {
        return Err(Refusal::bad_request(format!(
            "Unknown model {id:?}: expected one that /eve/v1/info lists."
        )));
    }
    Ok(())
}

/// New work (a message, an answer) is refused while the principal's storage is full
/// (`principal_max_bytes`), before anything is kept. A turn already running is not cut: it
/// finishes, and may end somewhat past the cap.
fn check_room(store: &AgentStore<'_, Db>, principal: &str) -> Result<(), Refusal> {
    let quota = eve_store::limits::storage_quota(None, variable("principal_max_bytes").as_deref());
    if store.has_room(principal, &quota).map_err(db_refusal)? {
        Ok(())
    } else {
        Err(Refusal::storage_full())
    }
}

/// The owner's upload policy (`attachment_max_bytes`, `attachment_types`,
/// `attachment_quota_bytes`).
pub fn upload_policy() -> UploadPolicy {
    UploadPolicy::from_vars(
        variable("attachment_max_bytes").as_deref(),
        variable("attachment_types").as_deref(),
        variable("attachment_quota_bytes").as_deref(),
    )
}

/// The refusal of files that would take the principal past its attachment quota.
fn quota_exceeded(policy: &UploadPolicy) -> Refusal {
    Refusal::new(
        413,
        Some("attachment_quota_exceeded"),
        format!(
            "Your attachments would exceed the {}-byte limit: delete chats with files to free space.",
            policy.quota_bytes
        ),
    )
}

/// A message's files checked against the policy and the quota, before anything is kept.
fn check_uploads(
    store: &AgentStore<'_, Db>,
    principal: &str,
    m: &protocol::Message,
    policy: &UploadPolicy,
) -> Result<Vec<Upload>, Refusal> {
    let uploads = attachments::check(&m.parts, policy)?;
    let adding: u64 = uploads.iter().map(|u| u.bytes.len() as u64).sum();
    if adding > 0 {
        let used = store.attachment_usage(principal).map_err(db_refusal)?;
        if used.saturating_add(adding) > policy.quota_bytes {
            return Err(quota_exceeded(policy));
        }
    }
    Ok(uploads)
}

/// Keeps the files of session `id` and puts their ids in the message's parts in place of
/// their bytes. On any failure the ones kept so far are deleted again: all or nothing.
fn store_uploads(
    store: &AgentStore<'_, Db>,
    id: &str,
    principal: &str,
    m: &mut protocol::Message,
    uploads: Vec<Upload>,
    policy: &UploadPolicy,
) -> Result<Vec<String>, Refusal> {
    let mut kept: Vec<String> = Vec::new();
    for u in uploads {
        let aid = ids::attachment_id(random_bytes::<16>());
        let result = store.insert_attachment(
            &aid,
            principal,
            id,
            &u.media_type,
            u.filename.as_deref(),
            &u.bytes,
            policy.quota_bytes,
            now_ms(),
        );
        match result {
            Ok(true) => {
                m.parts[u.part] = attachments::stored_part(&u, &aid);
                kept.push(aid);
            }
            other => {
                forget_uploads(store, principal, &kept);
                return Err(match other {
                    Err(e) => db_refusal(e),
                    _ => quota_exceeded(policy),
                });
            }
        }
    }
    Ok(kept)
}

fn forget_uploads(store: &AgentStore<'_, Db>, principal: &str, ids: &[String]) {
    for aid in ids {
        if let Err(e) = store.delete_attachment(aid, principal) {
            eprintln!("agent: deleting attachment {aid}: {e}");
        }
    }
}

/// Keeps the message's files and queues it; nothing stays behind when either fails.
fn keep_message(
    store: &AgentStore<'_, Db>,
    id: &str,
    principal: &str,
    mut m: protocol::Message,
    uploads: Vec<Upload>,
    policy: &UploadPolicy,
) -> Result<String, Refusal> {
    let kept = store_uploads(store, id, principal, &mut m, uploads, policy)?;
    queue_message(store, id, &m).inspect_err(|_| forget_uploads(store, principal, &kept))
}

fn queue_message(
    store: &AgentStore<'_, Db>,
    id: &str,
    m: &protocol::Message,
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
        .push_inbox(id, "message", &delivery, &body, now_ms())
        .map_err(db_refusal)?;
    Ok(delivery)
}

/// `POST /eve/v1/session`: a new session, with its first message or parked without one.
pub fn create(call: Call, out: ResponseOutparam) {
    let prepared = (|| {
        let request = protocol::session_request(&call.body, true)?;
        if let SessionRequest::Message(m) = &request {
            check_model(m)?;
        }
        let db = open_db()?;
        let now = now_ms();
        let id = ids::session_id(now, random_bytes::<10>());
        let store = AgentStore::new(&db);
        let policy = upload_policy();
        let uploads = match &request {
            SessionRequest::Message(m) => {
                check_room(&store, &call.principal.id)?;
                check_uploads(&store, &call.principal.id, m, &policy)?
            }
            _ => Vec::new(),
        };
        store
            .create_session(&id, &call.principal.id, now)
            .map_err(db_refusal)?;
        if let SessionRequest::Message(m) = request {
            keep_message(&store, &id, &call.principal.id, m, uploads, &policy)?;
        }
        Ok((db, id))
    })();
    match prepared {
        Ok((db, id)) => {
            accepted(out, 202, &Accepted::new(Some(&id), status::ACCEPTED), true);
            runner::drain(&db, &id, &call.principal.id, First::Nothing, None);
        }
        Err(e) => send_refusal(out, &e),
    }
}

/// The active session of this principal; eve's 409 `session_not_active` for anything else
/// (unknown, another principal's, reset, failed).
fn active(store: &AgentStore<'_, Db>, id: &str, principal: &str) -> Result<Vec<Event>, Refusal> {
    let row = store
        .session(id, principal)
        .map_err(db_refusal)?
        .filter(|r| r.state(now_ms()) != SessionState::Ended)
        .ok_or_else(Refusal::session_not_active)?;
    let _ = row;
    store.all_events(id).map_err(db_refusal)
}

/// `POST /eve/v1/session/:id`: the next message (it starts the next turn, or steers a parked
/// one), or answers to what the session asks.
pub fn send(call: Call, id: &str, out: ResponseOutparam) {
    let prepared = (|| {
        let request = protocol::session_request(&call.body, false)?;
        let db = open_db()?;
        let store = AgentStore::new(&db);
        let log = active(&store, id, &call.principal.id)?;
        if !matches!(request, SessionRequest::Empty) {
            check_room(&store, &call.principal.id)?;
        }
        match request {
            SessionRequest::Message(m) => {
                check_model(&m)?;
                let policy = upload_policy();
                let uploads = check_uploads(&store, &call.principal.id, &m, &policy)?;
                let delivery = keep_message(&store, id, &call.principal.id, m, uploads, &policy)?;
                Ok((db, delivery, First::Nothing))
            }
            SessionRequest::InputResponses(responses) => {
                if !responses
                    .iter()
                    .any(|r| turn::answer_events(&log, r).is_some())
                {
                    return Err(Refusal::new(
                        409,
                        Some("input_not_pending"),
                        "No pending input request matches these responses.",
                    ));
                }
                Ok((db, delivery_id(), First::Answer(responses)))
            }
            SessionRequest::Empty => Err(Refusal::bad_request(
                "Expected a non-empty 'message' or a non-empty 'inputResponses' array.",
            )),
        }
    })();
    match prepared {
        Ok((db, delivery, first)) => {
            let mut a = Accepted::new(Some(id), status::ACCEPTED);
            a.delivery_id = Some(delivery);
            accepted(out, 202, &a, true);
            runner::drain(&db, id, &call.principal.id, first, None);
        }
        Err(e) => send_refusal(out, &e),
    }
}

/// `POST /eve/v1/session/:id/cancel` (optional `turnId`): asks the open turn to stop; `202
/// accepted` for a live session (also when nothing runs), `200 no_active_turn` otherwise.
pub fn cancel(call: Call, id: &str, out: ResponseOutparam) {
    let result = (|| {
        let turn_id = protocol::cancel_request(&call.body)?;
        let db = open_db()?;
        let store = AgentStore::new(&db);
        let Some(row) = store.session(id, &call.principal.id).map_err(db_refusal)? else {
            return Ok(None);
        };
        if row.state(now_ms()) == SessionState::Ended {
            return Ok(None);
        }
        let log = store.all_events(id).map_err(db_refusal)?;
        let open = transcript::open_turn(&log);
        let matches = match (&open, &turn_id) {
            (Some(o), Some(t)) => &o.turn.turn_id == t,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if matches {
            store
                .request_cancel(id, &call.principal.id, log.len() as u64, now_ms())
                .map_err(db_refusal)?;
        }
        Ok(Some((db, matches)))
    })();
    match result {
        Ok(Some((db, matches))) => {
            accepted(out, 202, &Accepted::new(Some(id), status::ACCEPTED), false);
            if matches {
                // A parked turn (or one whose runner died) ends here; a running one at its
                // next checkpoint.
                runner::drain(&db, id, &call.principal.id, First::Nothing, None);
            }
        }
        Ok(None) => accepted(
            out,
            200,
            &Accepted::new(None, status::NO_ACTIVE_TURN),
            false,
        ),
        Err(e) => send_refusal(out, &e),
    }
}

/// `POST /eve/v1/session/:id/clear` and `/compact`: queued until the open turn settles.
pub fn control(call: Call, id: &str, kind: &str, out: ResponseOutparam) {
    let result = (|| {
        protocol::control_request(&call.body)?;
        let db = open_db()?;
        let store = AgentStore::new(&db);
        let live = store
            .session(id, &call.principal.id)
            .map_err(db_refusal)?
            .is_some_and(|r| r.state(now_ms()) != SessionState::Ended);
        if !live {
            return Ok(None);
        }
        store
            .push_inbox(id, kind, &delivery_id(), "{}", now_ms())
            .map_err(db_refusal)?;
        Ok(Some(db))
    })();
    match result {
        Ok(Some(db)) => {
            accepted(out, 202, &Accepted::new(Some(id), status::ACCEPTED), false);
            runner::drain(&db, id, &call.principal.id, First::Nothing, None);
        }
        Ok(None) => accepted(
            out,
            200,
            &Accepted::new(None, status::NO_ACTIVE_SESSION),
            false,
        ),
        Err(e) => send_refusal(out, &e),
    }
}

/// `POST /eve/v1/session/:id/reset` (optional `reason`): retires the session for good; its
/// stream ends with `session.completed`.
pub fn reset(call: Call, id: &str, out: ResponseOutparam) {
    let result = (|| {
        protocol::reset_request(&call.body)?;
        let db = open_db()?;
        let store = AgentStore::new(&db);
        if !store
            .mark_reset(id, &call.principal.id, now_ms())
            .map_err(db_refusal)?
        {
            return Ok(false);
        }
        let log = store.envelopes(id).map_err(db_refusal)?;
        let events: Vec<Event> = log.iter().map(|e| e.event.clone()).collect();
        let usage = transcript::usage(&events);
        // The session's end belongs to its latest turn's deliveries, as the reference's.
        let deliveries = log
            .last()
            .map(|e| e.meta.delivery_ids.clone())
            .unwrap_or_default();
        let end = runner::envelope(
            Event::SessionCompleted(serde_json::json!({ "usage": usage })),
            &deliveries,
        );
        store.append(id, None, &end, now_ms()).map_err(db_refusal)?;
        Ok(true)
    })();
    match result {
        Ok(true) => {
            let mut a = Accepted::new(None, status::RESET);
            a.previous_session_id = Some(id.to_string());
            accepted(out, 200, &a, false)
        }
        Ok(false) => accepted(
            out,
            200,
            &Accepted::new(None, status::NO_ACTIVE_SESSION),
            false,
        ),
        Err(e) => send_refusal(out, &e),
    }
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn send_html(out: ResponseOutparam, status: u16, title: &str, body: &str) {
    let page = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">\
         <title>{t}</title><style>body{{font:16px system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#111}}\
         button{{font:inherit;padding:.5rem 1rem;margin-right:.5rem;border-radius:.5rem;border:1px solid #999;background:#fff;cursor:pointer}}\
         button.primary{{background:#111;color:#fff;border-color:#111}}</style></head><body><h1>{t}</h1>{body}</body></html>",
        t = html_escape(title)
    );
    let headers = vec![
        ("content-type".to_string(), b"text/html; charset=utf-8".to_vec()),
        ("cache-control".to_string(), b"no-store".to_vec()),
        (
            "content-security-policy".to_string(),
            b"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'".to_vec(),
        ),
    ];
    streaming::respond(out, status, &headers, page.as_bytes());
}

/// The connection of the pending sign-in `attempt_id` of the session.
fn pending(
    store: &AgentStore<'_, Db>,
    id: &str,
    principal: &str,
    attempt_id: &str,
) -> Result<Option<String>, Refusal> {
    if store.session(id, principal).map_err(db_refusal)?.is_none() {
        return Err(Refusal::session_not_found());
    }
    let log = store.all_events(id).map_err(db_refusal)?;
    Ok(turn::pending_authorization(&log)
        .filter(|(aid, _)| aid == attempt_id)
        .map(|(_, c)| c))
}

fn no_longer_pending(out: ResponseOutparam) {
    send_html(
        out,
        409,
        "Nothing to authorize",
        "<p>This authorization is no longer pending. You can close this window.</p>",
    );
}

fn display_name(connection: &str) -> String {
    mcp_connection(connection).map_or_else(|| connection.to_string(), |c| c.display_name)
}

fn mcp_connection(name: &str) -> Option<eve_agent::connections::mcp::McpConnection> {
    runner::mcp_connections()
        .into_iter()
        .find(|c| c.name == name)
}

/// The key tokens are sealed with, and the binding of `principal`'s `connection` row.
pub fn token_seal(principal: &str, connection: &str) -> Option<([u8; 32], String)> {
    upstream_jwt().map(|j| (j.token_key(), format!("{principal}\0{connection}")))
}

/// Seals `token` and keeps it for `principal`.
pub fn save_sealed(
    store: &AgentStore<'_, Db>,
    principal: &str,
    connection: &str,
    token: &StoredToken,
) -> Result<(), Refusal> {
    let (key, binding) = token_seal(principal, connection).ok_or_else(Refusal::unauthorized)?;
    let sealed = mcp_oauth::seal(&key, random_bytes::<12>(), &binding, token);
    store
        .save_token(principal, connection, &sealed, now_ms())
        .map_err(db_refusal)
}

/// The sign-in of an MCP server, discovered from its challenge: protected-resource metadata →
/// authorization-server metadata → dynamic client registration. The client and its token
/// endpoint travel in the signed state; the browser goes to the authorization endpoint.
fn redirect_to_mcp_server(
    call: &Call,
    conn: &eve_agent::connections::mcp::McpConnection,
    challenge: Option<String>,
    id: &str,
    authorization_id: &str,
    out: ResponseOutparam,
) {
    let result = (|| -> Result<String, Refusal> {
        let jwt = upstream_jwt().ok_or_else(Refusal::unauthorized)?;
        let redirect_uri = callback_uri(call)?;
        let upstream = |what: &str, e: String| {
            eprintln!("agent: {} sign-in: {what}: {e}", conn.name);
            Refusal::new(
                502,
                Some("upstream"),
                format!("{} sign-in could not start: {what}: {e}", conn.display_name),
            )
        };
        let get = |url: &str| {
            fetch(Method::Get, url, &[("accept", "application/json")], b"").and_then(
                |(status, body)| {
                    if (200..300).contains(&status) {
                        Ok(body)
                    } else {
                        Err(format!("{url} answered {status}"))
                    }
                },
            )
        };
        let prm_url = mcp_oauth::resource_metadata_url(&conn.url, challenge.as_deref())
            .ok_or_else(|| upstream("discovery", "bad server URL".into()))?;
        let (resource, issuer) = get(&prm_url)
            .and_then(|b| mcp_oauth::parse_resource_metadata(&b))
            .map_err(|e| upstream("protected-resource metadata", e))?;
        let as_url = mcp_oauth::authorization_server_metadata_url(&issuer)
            .ok_or_else(|| upstream("discovery", format!("bad issuer {issuer:?}")))?;
        let meta = get(&as_url)
            .and_then(|b| mcp_oauth::parse_server_metadata(&b))
            .map_err(|e| upstream("authorization-server metadata", e))?;
        let registration = meta.registration_endpoint.clone().ok_or_else(|| {
            upstream(
                "registration",
                "the server offers no dynamic client registration (RFC 7591), which eve-chat needs"
                    .to_string(),
            )
        })?;
        let body = mcp_oauth::registration_body(&redirect_uri).to_string();
        let (client_id, client_secret) = fetch(
            Method::Post,
            &registration,
            &[
                ("content-type", "application/json"),
                ("accept", "application/json"),
            ],
            body.as_bytes(),
        )
        .and_then(|(status, b)| mcp_oauth::parse_registration(status, &b))
        .map_err(|e| upstream("registration", e))?;
        let flow = McpFlow {
            client_id,
            client_secret,
            token_endpoint: meta.token_endpoint.clone(),
            revocation_endpoint: meta.revocation_endpoint.clone(),
            resource: if resource.is_empty() {
                conn.url.clone()
            } else {
                resource
            },
        };
        let state = jwt.state_codec().seal(&FlowState {
            session_id: id.to_string(),
            authorization_id: authorization_id.to_string(),
            principal: call.principal.id.clone(),
            exp: eve_spin::auth::now_secs() + oauth::STATE_TTL_SECS,
            mcp: Some(flow.clone()),
        });
        let verifier = jwt.pkce_verifier(&state);
        Ok(flow.authorize_url(&meta, &redirect_uri, &state, &verifier))
    })();
    match result {
        Ok(location) => {
            let headers = vec![
                ("location".to_string(), location.into_bytes()),
                ("cache-control".to_string(), b"no-store".to_vec()),
            ];
            streaming::respond(out, 302, &headers, b"");
        }
        Err(e) => send_html(
            out,
            e.status,
            "Sign-in could not start",
            &format!("<p>{}</p>", html_escape(&e.message)),
        ),
    }
}

/// Records the sign-in, answers with a page, and continues the turn (`authorization.completed`
/// authorized, then the call it waited for).
fn grant_and_continue(db: &Db, principal: &str, id: &str, connection: &str, out: ResponseOutparam) {
    if let Err(e) = AgentStore::new(db).grant(principal, connection, now_ms()) {
        return send_refusal(out, &db_refusal(e));
    }
    send_html(
        out,
        200,
        &format!("{} connected", display_name(connection)),
        "<p>You can close this window; the chat continues.</p>",
    );
    runner::drain(db, id, principal, First::Authorize(true), None);
}

/// Declines the pending sign-in and continues the turn without the call.
fn decline_and_continue(db: &Db, principal: &str, id: &str, name: &str, out: ResponseOutparam) {
    send_html(
        out,
        200,
        &format!("{name} not connected"),
        "<p>You can close this window.</p>",
    );
    runner::drain(db, id, principal, First::Authorize(false), None);
}

/// The connect page: `GET` starts the sign-in at the connection's MCP server (discovery,
/// registration, then a redirect to its authorization endpoint; the callback completes it).
/// A connection that is no longer configured has nothing to sign in to.
pub fn authorization(call: Call, id: &str, authorization_id: &str, out: ResponseOutparam) {
    let db = match open_db() {
        Ok(db) => db,
        Err(e) => return send_refusal(out, &e),
    };
    let store = AgentStore::new(&db);
    let principal = call.principal.id.as_str();
    let connection = match pending(&store, id, principal, authorization_id) {
        Ok(Some(c)) => c,
        Ok(None) => return no_longer_pending(out),
        Err(e) => return send_refusal(out, &e),
    };
    match mcp_connection(&connection) {
        Some(conn) => {
            let log = store.all_events(id).unwrap_or_default();
            let challenge = turn::pending_challenge(&log, authorization_id);
            redirect_to_mcp_server(&call, &conn, challenge, id, authorization_id, out)
        }
        None => send_html(
            out,
            409,
            "Nothing to sign in to",
            &format!(
                "<p>{} is no longer configured. Skip it in the chat.</p>",
                html_escape(&connection)
            ),
        ),
    }
}

fn callback_uri(call: &Call) -> Result<String, Refusal> {
    let origin = call
        .header(APP_ORIGIN_HEADER)
        .ok_or_else(|| Refusal::bad_request("the app's origin is unknown; set app_base_url"))?;
    Ok(format!(
        "{}{}",
        origin.trim_end_matches('/'),
        oauth::CALLBACK_PATH
    ))
}

/// `GET /eve/v1/connections/callback?code=&state=` (or `?error=&state=`): the provider sent the
/// browser back. The code is exchanged for a token; the connection is granted and the turn
/// continues. A provider error (the user refused) declines the authorization.
pub fn connection_callback(call: Call, out: ResponseOutparam) {
    let state = oauth::query_value(&call.query, "state").unwrap_or_default();
    let flow = upstream_jwt()
        .and_then(|j| j.state_codec().open(&state, eve_spin::auth::now_secs()))
        .filter(|f| f.principal == call.principal.id);
    let Some(flow) = flow else {
        return send_refusal(
            out,
            &Refusal::bad_request("invalid or expired authorization state"),
        );
    };
    let db = match open_db() {
        Ok(db) => db,
        Err(e) => return send_refusal(out, &e),
    };
    let store = AgentStore::new(&db);
    let principal = call.principal.id.as_str();
    let id = flow.session_id.as_str();
    let connection = match pending(&store, id, principal, &flow.authorization_id) {
        Ok(Some(c)) => c,
        Ok(None) => return no_longer_pending(out),
        Err(e) => return send_refusal(out, &e),
    };
    let name = display_name(&connection);
    if oauth::query_value(&call.query, "error").is_some() {
        return decline_and_continue(&db, principal, id, &name, out);
    }
    let Some(code) = oauth::query_value(&call.query, "code") else {
        return send_refusal(out, &Refusal::bad_request("missing code"));
    };
    let token = callback_uri(&call).and_then(|redirect_uri| {
        let Some(mcp) = &flow.mcp else {
            return Err(Refusal::bad_request("the connection has no OAuth client"));
        };
        let verifier = upstream_jwt()
            .map(|j| j.pkce_verifier(&state))
            .unwrap_or_default();
        let body = mcp.code_body(&code, &redirect_uri, &verifier);
        let exchanged = token_request(&mcp.token_endpoint, &body).and_then(|(status, b)| {
            mcp_oauth::parse_token_answer(status, &b, now_ms(), Some(mcp.clone()), None)
        });
        exchanged.map_err(|e| {
            eprintln!("agent: {name} token exchange failed: {e}");
            Refusal::new(
                502,
                Some("upstream"),
                format!("{name} did not accept the authorization: {e}"),
            )
        })
    });
    match token.and_then(|t| save_sealed(&store, principal, &connection, &t)) {
        Ok(()) => grant_and_continue(&db, principal, id, &connection, out),
        Err(e) => send_html(
            out,
            e.status,
            &format!("{name} could not be connected"),
            &format!(
                "<p>{}</p><p>Close this window and try Connect again, or Skip.</p>",
                html_escape(&e.message)
            ),
        ),
    }
}

/// POSTs a form to a token endpoint: its status and body.
pub fn token_request(url: &str, body: &str) -> Result<(u16, Vec<u8>), String> {
    fetch(
        Method::Post,
        url,
        &[
            ("content-type", "application/x-www-form-urlencoded"),
            ("accept", "application/json"),
        ],
        body.as_bytes(),
    )
}

/// `GET /eve/v1/connections`: the configured MCP connections, each with whether the caller
/// holds a token for it (the connection menu's list and its Disconnect buttons).
pub fn connections(call: Call, out: ResponseOutparam) {
    let db = match open_db() {
        Ok(db) => db,
        Err(e) => return send_refusal(out, &e),
    };
    let store = AgentStore::new(&db);
    let list: Vec<serde_json::Value> = runner::mcp_connections()
        .iter()
        .map(|c| {
            let connected = store
                .token(&call.principal.id, &c.name)
                .ok()
                .flatten()
                .is_some();
            serde_json::json!({
                "name": c.name,
                "displayName": c.display_name,
                "description": c.description,
                "url": c.url,
                "connected": connected || c.token.is_some(),
                "revocable": connected,
            })
        })
        .collect();
    send_json(out, 200, &[], &serde_json::json!({ "connections": list }));
}

/// `POST /eve/v1/connections/:name/revoke`: revokes the caller's token at the server's
/// revocation endpoint when it has one (best effort: the token is forgotten either way) and
/// deletes it and the grant; the next call that needs it asks for a sign-in again.
pub fn revoke_connection(call: Call, name: &str, out: ResponseOutparam) {
    let Some(conn) = mcp_connection(name) else {
        return send_refusal(
            out,
            &Refusal::new(404, Some("not_found"), format!("no connection {name:?}")),
        );
    };
    let db = match open_db() {
        Ok(db) => db,
        Err(e) => return send_refusal(out, &e),
    };
    let store = AgentStore::new(&db);
    let principal = call.principal.id.as_str();
    let sealed = store.token(principal, name).ok().flatten();
    let token = sealed
        .zip(token_seal(principal, name))
        .and_then(|(s, (key, binding))| mcp_oauth::open(&key, &binding, &s));
    if let Some(t) = &token {
        if let Some(flow) = &t.flow {
            if let Some(url) = &flow.revocation_endpoint {
                for secret in [Some(&t.access_token), t.refresh_token.as_ref()]
                    .into_iter()
                    .flatten()
                {
                    if let Err(e) = token_request(url, &flow.revoke_body(secret)) {
                        eprintln!("agent: revoking the {name} token: {e}");
                    }
                }
            }
        }
    }
    match store.forget_connection(principal, name) {
        Ok(()) => send_json(
            out,
            200,
            &[],
            &serde_json::json!({ "name": conn.name, "connected": false, "revoked": token.is_some() }),
        ),
        Err(e) => send_refusal(out, &db_refusal(e)),
    }
}

/// `GET /eve/v1/attachments/:id`: the bytes of one of the caller's attachments (404 for
/// anyone else's, as for an unknown one). Served so that nothing of it runs on our origin:
/// an image as itself (the thumbnails), anything else as a download, under a sandbox CSP.
pub fn attachment(call: Call, id: &str, out: ResponseOutparam) {
    let found = open_db().and_then(|db| {
        AgentStore::new(&db)
            .attachment(id, &call.principal.id)
            .map_err(db_refusal)
    });
    match found {
        Ok(Some(a)) => {
            let media = attachments::served_media_type(&a.media_type, &a.data);
            let name: String = a
                .filename
                .as_deref()
                .unwrap_or("attachment")
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || ".-_ ".contains(c) {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            let disposition = if media.starts_with("image/") {
                format!("inline; filename=\"{name}\"")
            } else {
                format!("attachment; filename=\"{name}\"")
            };
            let headers: Vec<(String, Vec<u8>)> = vec![
                ("content-type".into(), media.as_bytes().to_vec()),
                ("content-disposition".into(), disposition.into_bytes()),
                ("cache-control".into(), b"private, max-age=86400".to_vec()),
                (
                    "content-security-policy".into(),
                    b"default-src 'none'; sandbox".to_vec(),
                ),
                ("x-content-type-options".into(), b"nosniff".to_vec()),
            ];
            streaming::respond(out, 200, &headers, &a.data);
        }
        Ok(None) => send_refusal(out, &Refusal::new(404, None, "Attachment not found.")),
        Err(e) => send_refusal(out, &e),
    }
}
