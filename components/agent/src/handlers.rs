//! One function per route (but the stream, [`crate::reader`]): each parses what the route
//! takes, calls the one `eve_agent::service` function that decides, writes the reply, and —
//! for a request that brings work — runs that work after answering ([`crate::env::drain`]):
//! a reader that goes away never stops it.

use eve_agent::protocol::{self, Refusal};
use eve_agent::service::sessions::{self, Cancel};
use eve_agent::service::sign_in::{self, Callback, ConnectPage};
use eve_agent::service::work::First;
use eve_agent::service::{info, uploads};
use eve_api::eve::{status, Accepted, APP_ORIGIN_HEADER, SESSION_ID_HEADER};
use eve_spin::streaming;
use spin_sdk::http::ResponseOutparam;

use crate::env::drain;
use crate::reply::{html_escape, open_db, send_html, send_json, send_refusal, Call};
use eve_agent_spin::Spin;

/// Sends an answer; `with_header`: create and send name the session in `x-eve-session-id` too
/// (the controls do not, as the reference).
fn accepted(out: ResponseOutparam, status: u16, body: &Accepted, with_header: bool) {
    let value = serde_json::to_value(body).expect("answers serialize");
    match (&body.session_id, with_header) {
        (Some(id), true) => send_json(out, status, &[(SESSION_ID_HEADER, id)], &value),
        _ => send_json(out, status, &[], &value),
    }
}

/// `GET /eve/v1/info`.
pub fn info(call: Call, out: ResponseOutparam) {
    match info::document_for(&Spin, open_db, &call.principal.id) {
        Ok(doc) => send_json(out, 200, &[], &doc),
        Err(e) => send_refusal(out, &e),
    }
}

/// `POST /eve/v1/session`: a new session, with its first message or parked without one.
pub fn create(call: Call, out: ResponseOutparam) {
    let principal = call.principal.id.as_str();
    let chat = protocol::chat_id(&call.body);
    let created = protocol::session_request(&call.body, true)
        .and_then(|request| sessions::create(&Spin, open_db, principal, request, chat.as_deref()));
    match created {
        Ok((db, id)) => {
            if let Some(chat) = chat {
                if let Err(e) =
                    eve_projects::projects::record_chat_session(&db, principal, &chat, &id)
                {
                    eprintln!("agent: recording the session's chat: {e}");
                }
            }
            accepted(out, 202, &Accepted::new(Some(&id), status::ACCEPTED), true);
            drain(&db, &id, principal, First::Nothing);
        }
        Err(e) => send_refusal(out, &e),
    }
}

/// `POST /eve/v1/session/:id`: the next message, or answers to what the session asks.
pub fn send(call: Call, id: &str, out: ResponseOutparam) {
    let principal = call.principal.id.as_str();
    let sent = protocol::session_request(&call.body, false)
        .and_then(|request| sessions::send(&Spin, open_db, principal, id, request));
    match sent {
        Ok((db, delivery, first)) => {
            let mut a = Accepted::new(Some(id), status::ACCEPTED);
            a.delivery_id = Some(delivery);
            accepted(out, 202, &a, true);
            drain(&db, id, principal, first);
        }
        Err(e) => send_refusal(out, &e),
    }
}

/// `POST /eve/v1/session/:id/cancel` (optional `turnId`): `202 accepted` for a live session
/// (also when nothing runs), `200 no_active_turn` otherwise.
pub fn cancel(call: Call, id: &str, out: ResponseOutparam) {
    let principal = call.principal.id.as_str();
    let result = protocol::cancel_request(&call.body).and_then(|turn_id| {
        let db = open_db()?;
        let cancel = sessions::cancel(&Spin, &db, principal, id, turn_id.as_deref())?;
        Ok((db, cancel))
    });
    match result {
        Ok((db, Cancel::Accepted { stopping })) => {
            accepted(out, 202, &Accepted::new(Some(id), status::ACCEPTED), false);
            if stopping {
                // A parked turn (or one whose runner died) ends here; a running one at its
                // next checkpoint.
                drain(&db, id, principal, First::Nothing);
            }
        }
        Ok((_, Cancel::NoSession)) => no_active(out, status::NO_ACTIVE_TURN),
        Err(e) => send_refusal(out, &e),
    }
}

/// `200` with `status` and no session: what a route of no live session answers.
fn no_active(out: ResponseOutparam, status: &str) {
    accepted(out, 200, &Accepted::new(None, status), false)
}

/// `POST /eve/v1/session/:id/clear` and `/compact`: queued until the open turn settles.
pub fn control(call: Call, id: &str, kind: &str, out: ResponseOutparam) {
    let principal = call.principal.id.as_str();
    let result = protocol::control_request(&call.body).and_then(|()| {
        let db = open_db()?;
        let live = sessions::control(&Spin, &db, principal, id, kind)?;
        Ok((db, live))
    });
    match result {
        Ok((db, true)) => {
            accepted(out, 202, &Accepted::new(Some(id), status::ACCEPTED), false);
            drain(&db, id, principal, First::Nothing);
        }
        Ok((_, false)) => no_active(out, status::NO_ACTIVE_SESSION),
        Err(e) => send_refusal(out, &e),
    }
}

/// `POST /eve/v1/session/:id/reset` (optional `reason`): retires the session for good.
pub fn reset(call: Call, id: &str, out: ResponseOutparam) {
    let principal = call.principal.id.as_str();
    let result = protocol::reset_request(&call.body)
        .and_then(|_| sessions::reset(&Spin, &open_db()?, principal, id));
    match result {
        Ok(true) => {
            let mut a = Accepted::new(None, status::RESET);
            a.previous_session_id = Some(id.to_string());
            accepted(out, 200, &a, false)
        }
        Ok(false) => no_active(out, status::NO_ACTIVE_SESSION),
        Err(e) => send_refusal(out, &e),
    }
}

fn no_longer_pending(out: ResponseOutparam) {
    send_html(
        out,
        409,
        "Nothing to authorize",
        "<p>This authorization is no longer pending. You can close this window.</p>",
    );
}

/// The connect page: starts the sign-in at the connection's MCP server (a redirect to its
/// authorization endpoint; the callback completes it).
pub fn authorization(call: Call, id: &str, authorization_id: &str, out: ResponseOutparam) {
    let principal = call.principal.id.as_str();
    let origin = call.header(APP_ORIGIN_HEADER);
    let page = open_db()
        .and_then(|db| sign_in::connect_page(&Spin, &db, principal, id, authorization_id, origin));
    match page {
        Ok(ConnectPage::Redirect(location)) => {
            let headers = vec![
                ("location".to_string(), location.into_bytes()),
                ("cache-control".to_string(), b"no-store".to_vec()),
            ];
            streaming::respond(out, 302, &headers, b"");
        }
        Ok(ConnectPage::Failed(e)) => send_html(
            out,
            e.status,
            "Sign-in could not start · 无法开始登录",
            &format!("<p>{}</p>", html_escape(&e.message)),
        ),
        Ok(ConnectPage::NotPending) => no_longer_pending(out),
        Ok(ConnectPage::NotConfigured(connection)) => send_html(
            out,
            409,
            "Nothing to sign in to",
            &format!(
                "<p>{} is no longer configured. Skip it in the chat.</p>",
                html_escape(&connection)
            ),
        ),
        Err(e) => send_refusal(out, &e),
    }
}

/// `GET /eve/v1/connections/callback`: the provider sent the browser back; the sign-in is
/// granted (or declined) and the turn continues.
pub fn connection_callback(call: Call, out: ResponseOutparam) {
    let principal = call.principal.id.as_str();
    let origin = call.header(APP_ORIGIN_HEADER);
    match sign_in::callback(&Spin, open_db, principal, &call.query, origin) {
        Ok(Callback::Granted {
            db,
            session_id,
            name,
        }) => {
            send_html(
                out,
                200,
                &format!("{name} connected"),
                "<p>You can close this window; the chat continues.</p>",
            );
            drain(&db, &session_id, principal, First::Authorize(true));
        }
        Ok(Callback::Declined {
            db,
            session_id,
            name,
        }) => {
            send_html(
                out,
                200,
                &format!("{name} not connected"),
                "<p>You can close this window.</p>",
            );
            drain(&db, &session_id, principal, First::Authorize(false));
        }
        Ok(Callback::NotPending) => no_longer_pending(out),
        Ok(Callback::Failed { name, refusal }) => send_html(
            out,
            refusal.status,
            &format!("{name} could not be connected"),
            &format!(
                "<p>{}</p><p>Close this window and try Connect again, or Skip.</p>",
                html_escape(&refusal.message)
            ),
        ),
        Err(e) => send_refusal(out, &e),
    }
}

/// `GET /eve/v1/connections`: the configured connections and whether the caller is signed in.
pub fn connections(call: Call, out: ResponseOutparam) {
    match open_db() {
        Ok(db) => send_json(
            out,
            200,
            &[],
            &sign_in::list(&Spin, &db, &call.principal.id),
        ),
        Err(e) => send_refusal(out, &e),
    }
}

/// `POST /eve/v1/connections/:name/revoke`: signs the caller out of a connection.
pub fn revoke_connection(call: Call, name: &str, out: ResponseOutparam) {
    let Some(conn) = sign_in::mcp_connection(&Spin, name) else {
        return send_refusal(
            out,
            &Refusal::new(404, Some("not_found"), format!("no connection {name:?}")),
        );
    };
    let revoked = open_db().and_then(|db| sign_in::revoke(&Spin, &db, &call.principal.id, &conn));
    match revoked {
        Ok(body) => send_json(out, 200, &[], &body),
        Err(e) => send_refusal(out, &e),
    }
}

/// `GET /eve/v1/attachments/:id`: the bytes of one of the caller's attachments (404 for
/// anyone else's, as for an unknown one), under a sandbox CSP.
pub fn attachment(call: Call, id: &str, out: ResponseOutparam) {
    let found = open_db().and_then(|db| uploads::read(&db, &call.principal.id, id));
    match found {
        Ok(Some(a)) => {
            let headers: Vec<(String, Vec<u8>)> = vec![
                ("content-type".into(), a.media_type.as_bytes().to_vec()),
                ("content-disposition".into(), a.disposition.into_bytes()),
                (
                    "cache-control".into(),
                    uploads::CACHE_CONTROL.as_bytes().to_vec(),
                ),
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
