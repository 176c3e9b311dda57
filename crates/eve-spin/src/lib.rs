//! Glue every component shares so that handlers stay small: building JSON responses and
//! error responses in the one envelope of [`eve_api::error`], and reading JSON bodies with
//! clear errors instead of panics.

pub mod api_component;
pub mod auth;
pub mod body;
pub mod chat_request;
pub mod db;
pub mod ratelimit;
pub mod streaming;
pub mod streams;

use eve_api::ApiError;
use serde::{de::DeserializeOwned, Serialize};
use spin_sdk::http::{Request, Response};

/// A JSON response with the given status.
pub fn json<T: Serialize>(status: u16, value: &T) -> Response {
    let body = serde_json::to_vec(value).unwrap_or_else(|_| b"null".to_vec());
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .header("cache-control", "no-store")
        .body(body)
        .build()
}

/// The error envelope as a response, with `Retry-After` when the error carries one.
pub fn error(err: &ApiError) -> Response {
    let mut b = Response::builder();
    b.status(err.status())
        .header("content-type", "application/json")
        .header("cache-control", "no-store");
    if let Some(secs) = err.retry_after_secs {
        b.header("retry-after", secs.to_string());
    }
    b.body(err.to_json()).build()
}

/// Turns a handler result into a response.
pub fn respond(result: Result<Response, ApiError>) -> Response {
    result.unwrap_or_else(|e| error(&e))
}

/// Parses the request body as JSON of type `T`, answering 415 for a non-JSON content type and
/// 400 for a body that is not valid JSON of the expected shape.
pub fn json_body<T: DeserializeOwned>(req: &Request) -> Result<T, ApiError> {
    let content_type = req
        .header("content-type")
        .and_then(|v| v.as_str())
        .unwrap_or("");
    let media = content_type.split(';').next().unwrap_or("").trim();
    if !media.eq_ignore_ascii_case("application/json") {
        return Err(ApiError::new(
            eve_api::ErrorCode::UnsupportedMediaType,
            "expected a JSON body (content-type: application/json)",
        ));
    }
    // serde_json skips the strings of unknown fields without checking their UTF-8.
    if !is_json_object(req.body()) || std::str::from_utf8(req.body()).is_err() {
        return Err(ApiError::new(
            eve_api::ErrorCode::InvalidJson,
            "invalid JSON body: expected a JSON object",
        ));
    }
    serde_json::from_slice(req.body()).map_err(|e| {
        ApiError::new(
            eve_api::ErrorCode::InvalidJson,
            format!("invalid JSON body: {e}"),
        )
    })
}

/// Whether `body` is (at most) a JSON object: every request body of the API is one. Checked
/// before deserializing because serde reads a JSON array as a struct's fields in order, so
/// `["hi"]` would otherwise pass for `{ "message": "hi" }` and `[]` for `{}`.
pub fn is_json_object(body: &[u8]) -> bool {
    body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// A `spin-*` header set by the host on every request (see Spin's HTTP trigger docs).
pub fn spin_header<'a>(req: &'a Request, name: &str) -> Option<&'a str> {
    req.header(name).and_then(|v| v.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_json_object_is_a_request_body() {
        assert!(is_json_object(b"{}"));
        assert!(is_json_object(b" \n\t{\"message\":\"hi\"}"));
        for not_an_object in [
            &b"[]"[..],
            b"[\"hi\"]",
            b"null",
            b"42",
            b"\"text\"",
            b"",
            b"   ",
            b"\xef\xbb\xbf{}",
        ] {
            assert!(!is_json_object(not_an_object), "{not_an_object:?}");
        }
    }
}
