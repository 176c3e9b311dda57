//! The session routes. A POST that starts a turn records what starts it, answers (the
//! response is complete), and then runs the turn in the same invocation: a reader that goes
//! away never stops it.

use std::time::Duration;

use eve_agent::assertion::AssertionCodec;
use eve_agent::oauth::{self, FlowState, OAuthClient};
use eve_agent::request::{self, Validated};
use eve_agent::resume::{RUNNER_LOST, RUNNER_LOST_MESSAGE};
use eve_agent::store::{AgentStore, SessionRow, SessionState};
use eve_agent::transcript;
use eve_agent::turn;
use eve_api::eve::{AuthorizationOutcome, Event, APP_ORIGIN_HEADER, SESSION_ID_HEADER};
use eve_api::{ApiError, ErrorCode};
use eve_auth::crypto::random_token;
use eve_spin::db::{now_ms, Db};
use eve_spin::streaming;
use serde_json::json;
use spin_sdk::http::ResponseOutparam;

use crate::api::{db_error, open_db, send_error, send_json, Call};
use crate::runner::{self, Resumable, TakenOver};

fn conflict(message: &str) -> ApiError {
    ApiError::new(ErrorCode::Conflict, message)
}

fn session_not_found() -> ApiError {
    ApiError::not_found("session not found")
}

/// The session of this principal, or 404 (another principal's session is "not found" too).
fn load(store: &AgentStore<'_, Db>, id: &str, principal: &str) -> Result<SessionRow, ApiError> {
    store
        .session(id, principal)
        .map_err(db_error)?
        .ok_or_else(session_not_found)
}

fn append(
    store: &AgentStore<'_, Db>,
    id: &str,
    runner: &str,
    event: &Event,
) -> Result<u64, ApiError> {
    store
        .append(id, runner, event, now_ms())
        .map_err(db_error)?
        .ok_or_else(|| conflict("the session changed hands; try again"))
}

fn state_body(id: &str, stream_index: u64) -> serde_json::Value {
    json!({ "sessionId": id, "streamIndex": stream_index })
}

/// `POST /eve/v1/session`: a new session with its first message.
pub fn create(call: Call, out: ResponseOutparam) {
    let prepared = (|| {
        let Validated::Message {
            text,
            client_context,
        } = request::validate(&call.body, true)?
        else {
            return Err(ApiError::bad_request("a new session starts with a message"));
        };
        let db = open_db()?;
        let id = request::new_session_id(&random_token());
        let runner_id = random_token();
        let store = AgentStore::new(&db);
        store
            .create_session(
                &id,
                &call.principal.id,
                &runner_id,
                now_ms(),
                client_context.as_deref(),
            )
            .map_err(db_error)?;
        let index = append(&store, &id, &runner_id, &Event::UserMessage { text })?;
        Ok((db, id, runner_id, index, client_context))
    })();
    match prepared {
        Ok((db, id, runner_id, index, client_context)) => {
            send_json(
                out,
                201,
                &[(SESSION_ID_HEADER, &id)],
                &state_body(&id, index),
            );
            runner::run(
                &db,
                &id,
                &call.principal.id,
                &runner_id,
                client_context.as_deref(),
            );
        }
        Err(e) => send_error(out, &e),
    }
}

/// Settles what a dead runner or a pending authorization left open, under our lease, before a
/// new message starts the next turn.
fn settle_leftovers(store: &AgentStore<'_, Db>, id: &str, runner_id: &str) -> Result<(), ApiError> {
    let log = store.all_events(id).map_err(db_error)?;
    let events = if turn::pending_authorization(&log).is_some() {
        turn::declined_events(&log)
    } else if !transcript::is_settled(&log) {
        turn::failed_events(&log, RUNNER_LOST_MESSAGE, RUNNER_LOST)
    } else {
        // An unanswered question (or anything else left open) is closed.
        turn::unanswered_events(&log)
    };
    for e in &events {
        append(store, id, runner_id, e)?;
    }
    Ok(())
}

/// What a `POST /eve/v1/session/:id` leads to.
enum Sent {
    /// A turn to run after answering: `(db, runner id, streamIndex, client context)`.
    Turn(Db, String, u64, Option<String>),
    /// Nothing to run (a declined authorization): the `streamIndex`.
    Settled(u64),
    /// The session's turn had lost its runner and this request took it over: answer 409 (a
    /// turn is running) and resume it.
    Resume(Db, Resumable),
}

const STILL_RUNNING: &str =
    "a turn is still running in this session; interrupt it or wait for it to settle";

/// `POST /eve/v1/session/:id`: the next message, or responses to what the session waits for.
pub fn send(call: Call, id: &str, out: ResponseOutparam) {
    let prepared = (|| {
        let validated = request::validate(&call.body, false)?;
        let db = open_db()?;
        let store = AgentStore::new(&db);
        let row = load(&store, id, &call.principal.id)?;
        match row.state(now_ms()) {
            SessionState::Running => return Err(conflict(STILL_RUNNING)),
            // The runner died mid-turn: resume the turn (as if it had never stopped, this
            // message finds it running), or settle it and go on.
            SessionState::Orphaned => {
                match runner::take_over(&store, id, &call.principal.id, false).map_err(db_error)? {
                    TakenOver::Resume(turn) => return Ok(Sent::Resume(db, turn)),
                    TakenOver::NotOurs => return Err(conflict(STILL_RUNNING)),
                    TakenOver::Settled(_) => {}
                }
            }
            SessionState::Idle | SessionState::AwaitingAuthorization => {}
        }
        let runner_id = random_token();
        match validated {
            Validated::Message {
                text,
                client_context,
            } => {
                store
                    .claim(
                        id,
                        &call.principal.id,
                        &runner_id,
                        now_ms(),
                        Some(client_context.as_deref()),
                    )
                    .map_err(db_error)?
                    .ok_or_else(|| conflict("a turn is still running in this session"))?;
                settle_leftovers(&store, id, &runner_id)?;
                let index = append(&store, id, &runner_id, &Event::UserMessage { text })?;
                Ok(Sent::Turn(db, runner_id, index, client_context))
            }
            Validated::InputResponses(responses) => {
                let log = store.all_events(id).map_err(db_error)?;
                if let Some((request_id, question)) = turn::pending_input(&log) {
                    let value = responses
                        .iter()
                        .find(|r| r.request_id == request_id)
                        .and_then(|r| r.value.as_deref())
                        .map(str::trim)
                        .filter(|v| !v.is_empty())
                        .ok_or_else(|| {
                            conflict("this session is waiting for an answer to another request")
                        })?;
                    store
                        .claim(id, &call.principal.id, &runner_id, now_ms(), None)
                        .map_err(db_error)?
                        .ok_or_else(|| conflict("a turn is still running in this session"))?;
                    let index = append(
                        &store,
                        id,
                        &runner_id,
                        &turn::answer_event(&question, value),
                    )?;
                    return Ok(Sent::Turn(db, runner_id, index, row.client_context.clone()));
                }
                let (pending, _) = turn::pending_authorization(&log)
                    .ok_or_else(|| conflict("this session is not waiting for a response"))?;
                let response = responses
                    .iter()
                    .find(|r| r.request_id == pending)
                    .ok_or_else(|| conflict("this session is not waiting for that request"))?;
                if response.outcome != Some(AuthorizationOutcome::Declined) {
                    return Err(ApiError::bad_request(
                        "an authorization is granted through its connectUrl; here it can only be declined",
                    ));
                }
                store
                    .claim(id, &call.principal.id, &runner_id, now_ms(), None)
                    .map_err(db_error)?
                    .ok_or_else(|| conflict("a turn is still running in this session"))?;
                let mut first = None;
                for e in turn::declined_events(&log) {
                    let i = append(&store, id, &runner_id, &e)?;
                    first.get_or_insert(i);
                }
                // Best effort: an unreleased lease expires on its own.
                let _ = store.release(id, &runner_id, now_ms());
                Ok(Sent::Settled(first.unwrap_or(row.next_index())))
            }
        }
    })();
    match prepared {
        Ok(Sent::Turn(db, runner_id, index, client_context)) => {
            send_json(out, 200, &[(SESSION_ID_HEADER, id)], &state_body(id, index));
            runner::run(
                &db,
                id,
                &call.principal.id,
                &runner_id,
                client_context.as_deref(),
            );
        }
        Ok(Sent::Settled(index)) => {
            send_json(out, 200, &[(SESSION_ID_HEADER, id)], &state_body(id, index))
        }
        Ok(Sent::Resume(db, turn)) => {
            send_error(out, &conflict(STILL_RUNNING));
            runner::resume(&db, id, &call.principal.id, turn, None);
        }
        Err(e) => send_error(out, &e),
    }
}

/// `POST /eve/v1/session/:id/interrupt`: asks the running turn to stop at its next checkpoint.
pub fn interrupt(call: Call, id: &str, out: ResponseOutparam) {
    let result = (|| {
        let db = open_db()?;
        let store = AgentStore::new(&db);
        let row = load(&store, id, &call.principal.id)?;
        let interrupted = match row.state(now_ms()) {
            SessionState::Running => store
                .request_interrupt(id, &call.principal.id, now_ms())
                .map_err(db_error)?,
            // The runner died mid-turn: a stopped turn is never resumed, it settles as stopped.
            SessionState::Orphaned => {
                match runner::take_over(&store, id, &call.principal.id, true).map_err(db_error)? {
                    TakenOver::Settled(wrote) => wrote,
                    // Another request took it over a moment ago (to resume it): ask it to stop.
                    TakenOver::NotOurs => store
                        .request_interrupt(id, &call.principal.id, now_ms())
                        .map_err(db_error)?,
                    // Not with a stop (it settles); the lease expires on its own.
                    TakenOver::Resume(_) => false,
                }
            }
            _ => false,
        };
        Ok(interrupted)
    })();
    match result {
        Ok(interrupted) => send_json(
            out,
            if interrupted { 202 } else { 200 },
            &[],
            &json!({ "interrupted": interrupted }),
        ),
        Err(e) => send_error(out, &e),
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
            b"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; form-action 'self'".to_vec(),
        ),
    ];
    streaming::respond(out, status, &headers, page.as_bytes());
}

fn variable(name: &str) -> Option<String> {
    spin_sdk::variables::get(name).ok()
}

/// The OAuth client of a connection, when its variables are set.
fn oauth_client(connection: &str) -> Option<OAuthClient> {
    OAuthClient::from_lookup(connection, variable)
}

/// The pending authorization `authorization_id` of the session, with the session's log.
fn pending(
    store: &AgentStore<'_, Db>,
    id: &str,
    principal: &str,
    authorization_id: &str,
) -> Result<Option<(Vec<Event>, String)>, ApiError> {
    load(store, id, principal)?;
    let log = store.all_events(id).map_err(db_error)?;
    let connection = turn::pending_authorization(&log)
        .filter(|(aid, _)| aid == authorization_id)
        .map(|(_, c)| c);
    Ok(connection.map(|c| (log, c)))
}

fn no_longer_pending(out: ResponseOutparam) {
    send_html(
        out,
        409,
        "Nothing to authorize",
        "<p>This authorization is no longer pending. You can close this window.</p>",
    );
}

fn display_name(connection: &str) -> &str {
    eve_agent::connections::by_id(connection).map_or(connection, |c| c.display_name)
}

/// Grants `connection`, records `authorization.completed` (granted), answers with a page, and
/// continues the turn.
fn grant_and_continue(
    db: &Db,
    principal: &str,
    id: &str,
    log: &[Event],
    connection: &str,
    out: ResponseOutparam,
) {
    let store = AgentStore::new(db);
    let runner_id = random_token();
    match store.claim(id, principal, &runner_id, now_ms(), None) {
        Ok(Some(_)) => {}
        Ok(None) => return send_error(out, &conflict("a turn is running in this session")),
        Err(e) => return send_error(out, &db_error(e)),
    }
    let granted = turn::granted_event(log).expect("the caller checked that it is pending");
    let written = store
        .grant(principal, connection, now_ms())
        .and_then(|_| store.append(id, &runner_id, &granted, now_ms()));
    if let Err(e) = written {
        // Best effort: an unreleased lease expires on its own.
        let _ = store.release(id, &runner_id, now_ms());
        return send_error(out, &db_error(e));
    }
    let context = store
        .session(id, principal)
        .ok()
        .flatten()
        .and_then(|r| r.client_context);
    send_html(
        out,
        200,
        &format!("{} connected", display_name(connection)),
        "<p>You can close this window; the chat continues.</p>",
    );
    runner::run(db, id, principal, &runner_id, context.as_deref());
}

/// Declines the pending authorization and settles the turn.
fn decline(
    store: &AgentStore<'_, Db>,
    principal: &str,
    id: &str,
    log: &[Event],
) -> Result<(), ApiError> {
    let runner_id = random_token();
    store
        .claim(id, principal, &runner_id, now_ms(), None)
        .map_err(db_error)?
        .ok_or_else(|| conflict("a turn is running in this session"))?;
    for e in turn::declined_events(log) {
        if store
            .append(id, &runner_id, &e, now_ms())
            .map_err(db_error)?
            .is_none()
        {
            break;
        }
    }
    // Best effort: an unreleased lease expires on its own.
    let _ = store.release(id, &runner_id, now_ms());
    Ok(())
}

/// The connect page. With OAuth variables for the connection, `GET` redirects to the
/// provider (the callback completes it); otherwise it is the local connector flow: `GET` shows
/// what is asked with Allow / Deny, and `POST` (a form, `decision=allow|deny`) grants the
/// connection for this principal and continues the turn, or declines and settles it.
pub fn authorization(call: Call, id: &str, authorization_id: &str, out: ResponseOutparam) {
    let db = match open_db() {
        Ok(db) => db,
        Err(e) => return send_error(out, &e),
    };
    let store = AgentStore::new(&db);
    let principal = call.principal.id.as_str();
    let (log, connection) = match pending(&store, id, principal, authorization_id) {
        Ok(Some(p)) => p,
        Ok(None) => return no_longer_pending(out),
        Err(e) => return send_error(out, &e),
    };
    let name = display_name(&connection).to_string();
    let description = eve_agent::connections::by_id(&connection).map_or("", |c| c.description);
    let client = oauth_client(&connection);
    if call.body.is_empty() {
        if let Some(client) = client {
            return redirect_to_provider(&call, &client, id, authorization_id, out);
        }
        return send_html(
            out,
            200,
            &format!("Connect {name}?"),
            &format!(
                "<p>eve-chat asks to use <b>{n}</b>: {d}</p><p>This is the local connector flow: allowing grants \
                 the connection to your account on this deployment.</p>\
                 <form method=\"post\"><button class=\"primary\" name=\"decision\" value=\"allow\">Allow</button>\
                 <button name=\"decision\" value=\"deny\">Deny</button></form>",
                n = html_escape(&name),
                d = html_escape(description)
            ),
        );
    }
    let form = String::from_utf8_lossy(&call.body).to_string();
    match oauth::query_value(&form, "decision").as_deref() {
        Some("allow") if client.is_some() => send_error(
            out,
            &ApiError::forbidden(format!(
                "{name} is connected through its provider; open the connect link"
            )),
        ),
        Some("allow") => grant_and_continue(&db, principal, id, &log, &connection, out),
        Some("deny") => match decline(&store, principal, id, &log) {
            Ok(()) => send_html(
                out,
                200,
                &format!("{name} not connected"),
                "<p>You can close this window.</p>",
            ),
            Err(e) => send_error(out, &e),
        },
        _ => send_error(
            out,
            &ApiError::bad_request("decision must be allow or deny"),
        ),
    }
}

fn callback_uri(call: &Call) -> Result<String, ApiError> {
    let origin = call
        .header(APP_ORIGIN_HEADER)
        .ok_or_else(|| ApiError::bad_request("the app's origin is unknown; set app_base_url"))?;
    Ok(format!(
        "{}{}",
        origin.trim_end_matches('/'),
        oauth::CALLBACK_PATH
    ))
}

fn redirect_to_provider(
    call: &Call,
    client: &OAuthClient,
    id: &str,
    authorization_id: &str,
    out: ResponseOutparam,
) {
    let result = (|| {
        let codec = AssertionCodec::state_codec(&eve_spin::auth::config())
            .ok_or_else(ApiError::unauthorized)?;
        let state = codec.seal(&FlowState {
            session_id: id.to_string(),
            authorization_id: authorization_id.to_string(),
            principal: call.principal.id.clone(),
            exp: eve_spin::auth::now_secs() + oauth::STATE_TTL_SECS,
        });
        Ok(client.authorize_redirect(&callback_uri(call)?, &state))
    })();
    match result {
        Ok(location) => {
            let headers = vec![
                ("location".to_string(), location.into_bytes()),
                ("cache-control".to_string(), b"no-store".to_vec()),
            ];
            streaming::respond(out, 302, &headers, b"");
        }
        Err(e) => send_error(out, &e),
    }
}

/// `GET /eve/v1/connections/callback?code=&state=` (or `?error=&state=`): the provider sent the
/// browser back. The code is exchanged for a token; the connection is granted and the turn
/// continues. A provider error (the user refused) declines the authorization.
pub fn connection_callback(call: Call, out: ResponseOutparam) {
    let state = oauth::query_value(&call.query, "state").unwrap_or_default();
    let flow = AssertionCodec::state_codec(&eve_spin::auth::config())
        .and_then(|codec| codec.open(&state, eve_spin::auth::now_secs()))
        .filter(|f| f.principal == call.principal.id);
    let Some(flow) = flow else {
        return send_error(
            out,
            &ApiError::bad_request("invalid or expired authorization state"),
        );
    };
    let db = match open_db() {
        Ok(db) => db,
        Err(e) => return send_error(out, &e),
    };
    let store = AgentStore::new(&db);
    let principal = call.principal.id.as_str();
    let id = flow.session_id.as_str();
    let (log, connection) = match pending(&store, id, principal, &flow.authorization_id) {
        Ok(Some(p)) => p,
        Ok(None) => return no_longer_pending(out),
        Err(e) => return send_error(out, &e),
    };
    let name = display_name(&connection).to_string();
    if oauth::query_value(&call.query, "error").is_some() {
        return match decline(&store, principal, id, &log) {
            Ok(()) => send_html(
                out,
                200,
                &format!("{name} not connected"),
                "<p>You can close this window.</p>",
            ),
            Err(e) => send_error(out, &e),
        };
    }
    let (Some(client), Some(code)) = (
        oauth_client(&connection),
        oauth::query_value(&call.query, "code"),
    ) else {
        return send_error(
            out,
            &ApiError::bad_request("missing code, or the connection has no OAuth client"),
        );
    };
    let token = callback_uri(&call).and_then(|redirect_uri| {
        exchange_code(&client, &code, &redirect_uri).map_err(|e| {
            eprintln!("agent: {name} token exchange failed: {e}");
            ApiError::new(
                ErrorCode::Upstream,
                format!("{name} did not accept the authorization: {e}"),
            )
        })
    });
    match token.and_then(|t| {
        store
            .save_token(principal, &connection, &t, now_ms())
            .map_err(db_error)
    }) {
        Ok(()) => grant_and_continue(&db, principal, id, &log, &connection, out),
        Err(e) => send_html(
            out,
            e.status(),
            &format!("{name} could not be connected"),
            &format!(
                "<p>{}</p><p>Close this window and try Connect again, or Skip.</p>",
                html_escape(&e.message)
            ),
        ),
    }
}

/// POSTs the authorization-code grant to the token URL; the access token.
fn exchange_code(client: &OAuthClient, code: &str, redirect_uri: &str) -> Result<String, String> {
    let headers = vec![
        (
            "content-type".to_string(),
            b"application/x-www-form-urlencoded".to_vec(),
        ),
        ("accept".to_string(), b"application/json".to_vec()),
    ];
    let body = client.token_request_body(code, redirect_uri);
    let mut incoming = streaming::send(
        spin_sdk::http::Method::Post,
        &client.token_url,
        &headers,
        body.as_bytes(),
        Duration::from_secs(20),
    )?;
    let mut response = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while response.len() < 64 * 1024 && std::time::Instant::now() < deadline {
        match incoming.read(Duration::from_millis(500))? {
            streaming::Read::Data(b) => response.extend(b),
            streaming::Read::Idle => {}
            streaming::Read::End => break,
        }
    }
    oauth::parse_token_response(incoming.status, &response)
}
