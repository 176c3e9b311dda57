//! The session routes. A POST that starts a turn records what starts it, answers (the
//! response is complete), and then runs the turn in the same invocation: a reader that goes
//! away never stops it.

use eve_agent::request::{self, Validated};
use eve_agent::store::{AgentStore, SessionRow, SessionState};
use eve_agent::transcript;
use eve_agent::turn;
use eve_api::eve::{AuthorizationOutcome, Event, SESSION_ID_HEADER};
use eve_api::{ApiError, ErrorCode};
use eve_auth::crypto::random_token;
use eve_spin::db::{now_ms, Db};
use eve_spin::streaming;
use serde_json::json;
use spin_sdk::http::ResponseOutparam;

use crate::api::{db_error, open_db, send_error, send_json, Call};
use crate::runner;

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
        turn::failed_events(
            &log,
            "the agent stopped before finishing this turn",
            "runner_lost",
        )
    } else {
        // An unanswered question (or anything else left open) is closed.
        turn::unanswered_events(&log)
    };
    for e in &events {
        append(store, id, runner_id, e)?;
    }
    Ok(())
}

/// `POST /eve/v1/session/:id`: the next message, or responses to what the session waits for.
pub fn send(call: Call, id: &str, out: ResponseOutparam) {
    let prepared = (|| {
        let validated = request::validate(&call.body, false)?;
        let db = open_db()?;
        let store = AgentStore::new(&db);
        let row = load(&store, id, &call.principal.id)?;
        if row.state(now_ms()) == SessionState::Running {
            return Err(conflict(
                "a turn is still running in this session; interrupt it or wait for it to settle",
            ));
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
                Ok((db, runner_id, index, Some(client_context)))
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
                    return Ok((db, runner_id, index, Some(row.client_context.clone())));
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
                Ok((db, runner_id, first.unwrap_or(row.next_index()), None))
            }
        }
    })();
    match prepared {
        Ok((db, runner_id, index, Some(client_context))) => {
            send_json(out, 200, &[(SESSION_ID_HEADER, id)], &state_body(id, index));
            runner::run(
                &db,
                id,
                &call.principal.id,
                &runner_id,
                client_context.as_deref(),
            );
        }
        Ok((_, _, index, None)) => {
            send_json(out, 200, &[(SESSION_ID_HEADER, id)], &state_body(id, index))
        }
        Err(e) => send_error(out, &e),
    }
}

/// Settles a turn whose runner died with `events(log)`; false when someone else did (or it
/// was not orphaned).
pub fn settle_orphan(
    store: &AgentStore<'_, Db>,
    id: &str,
    principal: &str,
    events: impl Fn(&[Event]) -> Vec<Event>,
) -> Result<bool, String> {
    let runner_id = random_token();
    if store
        .claim(id, principal, &runner_id, now_ms(), None)?
        .is_none()
    {
        return Ok(false);
    }
    let log = store.all_events(id)?;
    let mut wrote = false;
    if !transcript::is_settled(&log) {
        for e in events(&log) {
            if store.append(id, &runner_id, &e, now_ms())?.is_none() {
                break;
            }
            wrote = true;
        }
    }
    store.release(id, &runner_id, now_ms())?;
    Ok(wrote)
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
            SessionState::Orphaned => {
                settle_orphan(&store, id, &call.principal.id, turn::interrupted_events)
                    .map_err(db_error)?
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

/// The local connector flow: `GET` shows what is asked with Allow / Deny; `POST` (a form,
/// `decision=allow|deny`) grants the connection for this principal and continues the turn, or
/// declines and settles it.
pub fn authorization(call: Call, id: &str, authorization_id: &str, out: ResponseOutparam) {
    let db = match open_db() {
        Ok(db) => db,
        Err(e) => return send_error(out, &e),
    };
    let store = AgentStore::new(&db);
    if let Err(e) = load(&store, id, &call.principal.id) {
        return send_error(out, &e);
    }
    let log = match store.all_events(id) {
        Ok(l) => l,
        Err(e) => return send_error(out, &db_error(e)),
    };
    let pending = turn::pending_authorization(&log).filter(|(aid, _)| aid == authorization_id);
    let Some((_, connection_id)) = pending else {
        return send_html(
            out,
            409,
            "Nothing to authorize",
            "<p>This authorization is no longer pending. You can close this window.</p>",
        );
    };
    let connection = eve_agent::connections::by_id(&connection_id);
    let name = connection.map_or(connection_id.as_str(), |c| c.display_name);
    let description = connection.map_or("", |c| c.description);
    if call.body.is_empty() {
        return send_html(
            out,
            200,
            &format!("Connect {name}?"),
            &format!(
                "<p>eve-chat asks to use <b>{n}</b>: {d}</p><p>This is the local connector flow: allowing grants \
                 the connection to your account on this deployment.</p>\
                 <form method=\"post\"><button class=\"primary\" name=\"decision\" value=\"allow\">Allow</button>\
                 <button name=\"decision\" value=\"deny\">Deny</button></form>",
                n = html_escape(name),
                d = html_escape(description)
            ),
        );
    }
    let form = String::from_utf8_lossy(&call.body).to_string();
    let decision = form
        .split('&')
        .find_map(|kv| kv.strip_prefix("decision="))
        .unwrap_or("");
    let allow = match decision {
        "allow" => true,
        "deny" => false,
        _ => {
            return send_error(
                out,
                &ApiError::bad_request("decision must be allow or deny"),
            )
        }
    };
    let runner_id = random_token();
    match store.claim(id, &call.principal.id, &runner_id, now_ms(), None) {
        Ok(Some(_)) => {}
        Ok(None) => return send_error(out, &conflict("a turn is running in this session")),
        Err(e) => return send_error(out, &db_error(e)),
    }
    if allow {
        let granted = turn::granted_event(&log).expect("pending was checked");
        let written = store
            .grant(&call.principal.id, &connection_id, now_ms())
            .and_then(|_| store.append(id, &runner_id, &granted, now_ms()));
        if let Err(e) = written {
            let _ = store.release(id, &runner_id, now_ms());
            return send_error(out, &db_error(e));
        }
        let context = store
            .session(id, &call.principal.id)
            .ok()
            .flatten()
            .and_then(|r| r.client_context);
        send_html(
            out,
            200,
            &format!("{name} connected"),
            "<p>You can close this window; the chat continues.</p><script>setTimeout(()=>window.close(),800)</script>",
        );
        runner::run(&db, id, &call.principal.id, &runner_id, context.as_deref());
    } else {
        for e in turn::declined_events(&log) {
            if store
                .append(id, &runner_id, &e, now_ms())
                .ok()
                .flatten()
                .is_none()
            {
                break;
            }
        }
        // Best effort: an unreleased lease expires on its own.
        let _ = store.release(id, &runner_id, now_ms());
        send_html(
            out,
            200,
            &format!("{name} not connected"),
            "<p>You can close this window.</p>",
        );
    }
}
