//! Request in: who is calling (the proxy's signed assertion, nothing else), which route, and
//! the dispatch to [`crate::handlers`] and [`crate::reader`].

use eve_agent::assertion::AssertionCodec;
use eve_agent::request::{self, Route, MAX_BODY_BYTES};
use eve_agent::store::AgentStore;
use eve_api::auth::Principal;
use eve_api::eve::PRINCIPAL_ASSERTION_HEADER;
use eve_api::{ApiError, ErrorCode};
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
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .and_then(|(_, v)| std::str::from_utf8(v).ok())
    }
}

/// The database with the agent's tables in place.
pub fn open_db() -> Result<Db, ApiError> {
    let db = eve_spin::db::open()?;
    AgentStore::new(&db).ensure_schema().map_err(|e| {
        eprintln!("agent: schema: {e}");
        ApiError::new(ErrorCode::NotConfigured, "the database is not available")
    })?;
    Ok(db)
}

/// A database error: logged, answered as 503 without details.
pub fn db_error(e: String) -> ApiError {
    eprintln!("agent: database: {e}");
    ApiError::new(ErrorCode::NotConfigured, "the database is not available")
}

/// Sends a JSON response.
pub fn send_json(
    out: ResponseOutparam,
    status: u16,
    extra: &[(&str, &str)],
    value: &serde_json::Value,
) {
    let mut headers = vec![
        ("content-type".to_string(), b"application/json".to_vec()),
        ("cache-control".to_string(), b"no-store".to_vec()),
    ];
    headers.extend(
        extra
            .iter()
            .map(|(k, v)| (k.to_string(), v.as_bytes().to_vec())),
    );
    streaming::respond(out, status, &headers, value.to_string().as_bytes());
}

/// Sends the error envelope.
pub fn send_error(out: ResponseOutparam, err: &ApiError) {
    let mut headers = vec![
        ("content-type".to_string(), b"application/json".to_vec()),
        ("cache-control".to_string(), b"no-store".to_vec()),
    ];
    if let Some(s) = err.retry_after_secs {
        headers.push(("retry-after".into(), s.to_string().into_bytes()));
    }
    streaming::respond(out, err.status(), &headers, err.to_json().as_bytes());
}

/// The principal of the proxy's assertion; 401 without a valid one.
fn principal(headers: &[(String, Vec<u8>)]) -> Result<Principal, ApiError> {
    let value = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(PRINCIPAL_ASSERTION_HEADER))
        .and_then(|(_, v)| std::str::from_utf8(v).ok())
        .ok_or_else(ApiError::unauthorized)?;
    let codec = AssertionCodec::from_config(&eve_spin::auth::config())
        .ok_or_else(ApiError::unauthorized)?;
    codec
        .verify(value, eve_spin::auth::now_secs())
        .ok_or_else(ApiError::unauthorized)
}

async fn read_body(req: IncomingRequest) -> Result<Vec<u8>, ApiError> {
    let mut stream = req.into_body_stream();
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| ApiError::bad_request("could not read the request body"))?;
        body.extend(chunk);
        if body.len() > MAX_BODY_BYTES {
            return Err(ApiError::new(
                ErrorCode::PayloadTooLarge,
                "request body too large",
            ));
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
    let headers = req.headers().entries();
    let principal = match principal(&headers) {
        Ok(p) => p,
        Err(e) => return send_error(out, &e),
    };
    let route = match request::route(&method, &path) {
        Ok(r) => r,
        Err(e) => return send_error(out, &e),
    };
    let body = if method.eq_ignore_ascii_case("POST") {
        match read_body(req).await {
            Ok(b) => b,
            Err(e) => return send_error(out, &e),
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
    match call.route.clone() {
        Route::Create => crate::handlers::create(call, out),
        Route::Send(id) => crate::handlers::send(call, &id, out),
        Route::Interrupt(id) => crate::handlers::interrupt(call, &id, out),
        Route::Authorization(id, aid) => crate::handlers::authorization(call, &id, &aid, out),
        Route::Stream(id) => crate::reader::stream(call, &id, out),
        Route::ConnectionCallback => crate::handlers::connection_callback(call, out),
    }
}
