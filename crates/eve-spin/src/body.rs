//! Request bodies read with a cap, after the request's headers have been checked: every
//! component authenticates and checks `Content-Length` on the head alone ([`head`]), then
//! streams the body ([`read_capped`]) and stops reading the moment it passes the cap. A body
//! nobody asked for is never read, so a client cannot make a component buffer what it sends.

use futures::StreamExt;
use spin_sdk::http::{IncomingRequest, Request};

/// The cap of a small JSON body (a login, a rename), for components without `eve-store`.
pub use eve_store::limits::MAX_SMALL_BODY_BYTES;

/// Why a body was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyError {
    /// Declared or streamed past the cap: the client gets 413 and nothing more is read.
    TooLarge,
    /// A malformed `Content-Length`, or the stream broke: the client gets 400.
    Unreadable,
}

impl BodyError {
    /// The error in the chat API's envelope (eve's routes map it to their own shape).
    pub fn api_error(self, max: usize) -> eve_api::ApiError {
        match self {
            BodyError::TooLarge => eve_store::validate::body_size(max.saturating_add(1), max)
                .err()
                .unwrap_or_else(|| eve_api::ApiError::bad_request("request body is too large")),
            BodyError::Unreadable => eve_api::ApiError::bad_request("unreadable request body"),
        }
    }
}

/// What a request's `Content-Length` (if any) means for a body capped at `max` bytes:
/// `Ok(Some(n))` a declared length within the cap, `Ok(None)` none declared (chunked: capped
/// while streaming).
pub fn declared_length(value: Option<&[u8]>, max: usize) -> Result<Option<u64>, BodyError> {
    let Some(value) = value else {
        return Ok(None);
    };
    let text = std::str::from_utf8(value).map_err(|_| BodyError::Unreadable)?;
    let text = text.trim();
    // `u64::from_str` takes a leading `+`, which RFC 9110's 1*DIGIT does not.
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(BodyError::Unreadable);
    }
    // More digits than a u64 holds is still a number: too large, not malformed.
    let n = text.parse::<u64>().unwrap_or(u64::MAX);
    if n > max as u64 {
        return Err(BodyError::TooLarge);
    }
    Ok(Some(n))
}

/// Appends `chunk` to `body` unless that takes it past `max` bytes.
pub fn append_capped(body: &mut Vec<u8>, chunk: &[u8], max: usize) -> Result<(), BodyError> {
    if body.len().saturating_add(chunk.len()) > max {
        return Err(BodyError::TooLarge);
    }
    body.extend_from_slice(chunk);
    Ok(())
}

/// The request's method, URI and headers with an empty body: everything the checks before the
/// body need ([`crate::auth`], routing), without reading a byte of it.
pub fn head(req: &IncomingRequest) -> Request {
    Request::builder()
        .method(req.method())
        .uri(req.uri())
        .headers(req.headers())
        .build()
}

/// The body of `req`, at most `max` bytes: refused from `Content-Length` alone when it declares
/// more, and cut off while streaming when a chunked body grows past the cap.
pub async fn read_capped(req: IncomingRequest, max: usize) -> Result<Vec<u8>, BodyError> {
    let declared = {
        let headers = req.headers();
        let values = headers.get("content-length");
        declared_length(values.first().map(Vec::as_slice), max)?
    };
    if declared == Some(0) {
        return Ok(Vec::new());
    }
    let mut stream = req.into_body_stream();
    let mut body = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| BodyError::Unreadable)?;
        append_capped(&mut body, &chunk, max)?;
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declared_length_over_the_cap_is_refused_before_any_byte_is_read() {
        assert_eq!(declared_length(None, 10), Ok(None));
        assert_eq!(declared_length(Some(b"0"), 10), Ok(Some(0)));
        assert_eq!(declared_length(Some(b" 10 "), 10), Ok(Some(10)));
        assert_eq!(declared_length(Some(b"11"), 10), Err(BodyError::TooLarge));
        assert_eq!(
            declared_length(Some(b"99999999999999999999999999"), 10),
            Err(BodyError::TooLarge)
        );
        for bad in [&b""[..], b"+5", b"-1", b"5, 5", b"0x10", b"\xff"] {
            assert_eq!(
                declared_length(Some(bad), 10),
                Err(BodyError::Unreadable),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_streamed_body_stops_at_the_cap() {
        let mut body = Vec::new();
        assert_eq!(append_capped(&mut body, b"12345", 8), Ok(()));
        assert_eq!(append_capped(&mut body, b"678", 8), Ok(()));
        assert_eq!(append_capped(&mut body, b"9", 8), Err(BodyError::TooLarge));
        assert_eq!(body, b"12345678", "the refused chunk is not kept");
    }
}
