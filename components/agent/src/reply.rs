//! What every route answers with: the call a handler gets, the database, JSON answers, eve's
//! error body and the connect pages' HTML. Shared by `handlers` and
//! `reader`; `api` routes.

use eve_agent::protocol::{Refusal, Route};
use eve_api::auth::Principal;
use eve_spin::db::Db;
use eve_spin::streaming;
use spin_sdk::http::ResponseOutparam;

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

pub fn header<'a>(headers: &'a [(String, Vec<u8>)], name: &str) -> Option<&'a str> {
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

pub fn json_headers(extra: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
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

pub fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Sends one of the connect pages (the browser's window during a sign-in).
pub fn send_html(out: ResponseOutparam, status: u16, title: &str, body: &str) {
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
