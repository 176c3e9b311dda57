//! Request in: who is calling (the proxy's HS256 bearer token, nothing else), which route, and
//! the dispatch to [`crate::handlers`] and [`crate::reader`]. Every refusal is eve's error body.

use eve_agent::connections::jwt::UpstreamJwt;
use eve_agent::protocol::{self, Refusal, Route, MAX_BODY_BYTES};
use eve_agent::service::env::{self, AgentEnv};
use eve_api::auth::Principal;
use eve_spin::body::BodyError;
use eve_spin::streaming;
use spin_sdk::http::{IncomingRequest, ResponseOutparam};

use crate::reply::{header, json_headers, send_refusal, Call};
use eve_agent_spin::Spin;

/// The principal of the proxy's bearer token; 401 without a valid one.
fn principal(headers: &[(String, Vec<u8>)]) -> Result<Principal, Refusal> {
    let token = header(headers, "authorization")
        .and_then(UpstreamJwt::from_bearer)
        .ok_or_else(Refusal::unauthorized)?;
    Spin.upstream_jwt()
        .and_then(|j| j.verify(token, eve_spin::auth::now_secs()))
        .ok_or_else(Refusal::unauthorized)
}

async fn read_body(req: IncomingRequest, max: usize) -> Result<Vec<u8>, Refusal> {
    eve_spin::body::read_capped(req, max)
        .await
        .map_err(|e| match e {
            BodyError::TooLarge => Refusal::too_large(),
            BodyError::Unreadable => Refusal::bad_request("Could not read the request body."),
        })
}

pub async fn serve(req: IncomingRequest, out: ResponseOutparam) {
    let method = req.method().to_string();
    let path_and_query = req.path_with_query().unwrap_or_default();
    let (path, query) = match path_and_query.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (path_and_query.clone(), String::new()),
    };
    let route = match protocol::route(&method, &path) {
        Ok(r) => r,
        Err(e) => return send_refusal(out, &e),
    };
    if route == Route::Health {
        // HEAD answers the same status and headers with no body.
        let body: &[u8] = if method == "HEAD" {
            b""
        } else {
            br#"{"ok":true,"status":"ready","workflowId":"eve-chat/agent"}"#
        };
        return streaming::respond(out, 200, &json_headers(&[]), body);
    }
    let headers = req.headers().entries();
    let principal = match principal(&headers) {
        Ok(p) => p,
        Err(e) => return send_refusal(out, &e),
    };
    let body = if method == "POST" {
        // A message may carry a file at the upload cap (in base64).
        let max = if route.takes_session_request() {
            env::upload_policy(&Spin).message_body_cap()
        } else {
            MAX_BODY_BYTES
        };
        match read_body(req, max).await {
            Ok(b) => b,
            Err(e) => return send_refusal(out, &e),
        }
    } else {
        Vec::new()
    };
    let call = Call {
        principal,
        route,
        query,
        headers,
        body,
    };
    use crate::handlers as h;
    match call.route.clone() {
        Route::Health => unreachable!("answered above"),
        Route::Info => h::info(call, out),
        Route::Create => h::create(call, out),
        Route::Send(id) => h::send(call, &id, out),
        Route::Cancel(id) => h::cancel(call, &id, out),
        Route::Clear(id) => h::control(call, &id, "clear", out),
        Route::Compact(id) => h::control(call, &id, "compact", out),
        Route::Reset(id) => h::reset(call, &id, out),
        Route::Stream(id) => crate::reader::stream(call, &id, out),
        Route::Authorization(id, aid) => h::authorization(call, &id, &aid, out),
        Route::ConnectionCallback => h::connection_callback(call, out),
        Route::Connections => h::connections(call, out),
        Route::RevokeConnection(name) => h::revoke_connection(call, &name, out),
        Route::Attachment(id) => h::attachment(call, &id, out),
    }
}
