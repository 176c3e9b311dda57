//! Request in: who is calling (the proxy's HS256 bearer token, nothing else), which route, and
//! the dispatch to [`crate::handlers`] and [`crate::reader`]. Every refusal is eve's error body.

use eve_agent::jwt::UpstreamJwt;
use eve_agent::protocol::{self, Refusal, Route, MAX_BODY_BYTES};
use eve_api::auth::Principal;
use eve_spin::db::Db;
use eve_spin::streaming;
use futures::StreamExt;
use spin_sdk::http::{IncomingRequest, ResponseOutparam};

/// What a handler gets.
pub struct Call {
    pub principal: Principal,
    pub route: Route,
    pub query: String,
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
}

impl Call {
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }
}

fn header<'a>(headers: &'a [(String, Vec<u8>)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .and_then(|(_, v)| std::str::from_utf8(v).ok())
}

/// The database with every migration applied (the agent's tables among them).
pub fn open_db() -> Result<Db, Refusal> {
    let db = eve_spin::db::open().map_err(|e| Refusal::from_api(&e))?;
    eve_store::migrations::migrate(&db, eve_spin::db::now_ms()).map_err(|e| {
        eprintln!("agent: migrations: {e}");
        Refusal::unavailable()
    })?;
    Ok(db)
}

/// A database error: logged, answered as 503 without details.
pub fn db_refusal(e: String) -> Refusal {
    eprintln!("agent: database: {e}");
    Refusal::unavailable()
}

fn json_headers(extra: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
    let mut headers = vec![
        ("content-type".to_string(), b"application/json".to_vec()),
        ("cache-control".to_string(), b"no-store".to_vec()),
    ];
    headers.extend(
        extra
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec())),
    );
    headers
}

/// Sends a JSON response.
pub fn send_json(
    out: ResponseOutparam,
    status: u16,
    extra: &[(&str, &str)],
    value: &serde_json::Value,
) {
    streaming::respond(
        out,
        status,
        &json_headers(extra),
        value.to_string().as_bytes(),
    );
}

/// Sends eve's error body.
pub fn send_refusal(out: ResponseOutparam, r: &Refusal) {
    let retry = r.retry_after_secs.map(|s| s.to_string());
    let mut extra = Vec::new();
    if let Some(s) = &retry {
        extra.push(("retry-after", s.as_str()));
    }
    if r.status == 401 {
        extra.push(("www-authenticate", "Bearer"));
    }
    streaming::respond(out, r.status, &json_headers(&extra), r.to_json().as_bytes());
}

fn variable(name: &str) -> Option<String> {
    spin_sdk::variables::get(name).ok()
}

/// The codec of the proxy's tokens for this configuration.
pub fn upstream_jwt() -> Option<UpstreamJwt> {
    UpstreamJwt::from_config(&eve_spin::auth::config(), variable)
}

/// The principal of the proxy's bearer token; 401 without a valid one.
fn principal(headers: &[(String, Vec<u8>)]) -> Result<Principal, Refusal> {
    let token = header(headers, "authorization")
        .and_then(UpstreamJwt::from_bearer)
        .ok_or_else(Refusal::unauthorized)?;
    upstream_jwt()
        .and_then(|j| j.verify(token, eve_spin::auth::now_secs()))
        .ok_or_else(Refusal::unauthorized)
}

async fn read_body(req: IncomingRequest) -> Result<Vec<u8>, Refusal> {
    let mut stream = req.into_body_stream();
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| Refusal::bad_request("Could not read the request body."))?;
        body.extend(chunk);
        if body.len() > MAX_BODY_BYTES {
            return Err(Refusal::too_large());
        }
    }
    Ok(body)
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
        match read_body(req).await {
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
    }
}
