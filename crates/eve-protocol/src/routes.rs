//! eve v1's routes (and ours beside them under the same prefix): which route a method and
//! path name, with eve's 404 for anything else.

use crate::ids::{self, is_token};
use crate::refusal::Refusal;

/// The route prefix.
pub const PREFIX: &str = "/eve/v1";
/// A route of eve's HTTP API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `GET|HEAD /health`
    Health,
    /// `GET /info`
    Info,
    /// `POST /session`
    Create,
    /// `POST /session/:id`
    Send(String),
    /// `GET /session/:id/stream`
    Stream(String),
    /// `POST /session/:id/cancel`
    Cancel(String),
    /// `POST /session/:id/clear`
    Clear(String),
    /// `POST /session/:id/compact`
    Compact(String),
    /// `POST /session/:id/reset`
    Reset(String),
    /// `GET /session/:id/authorizations/:attemptId` — our connect page (not eve's): it starts
    /// the sign-in at the connection's MCP server.
    Authorization(String, String),
    /// `GET /connections/callback` — where an OAuth provider sends the browser back (ours).
    ConnectionCallback,
    /// `GET /connections` — the configured MCP connections and whether the caller is signed
    /// in to each (ours, for the connection menu).
    Connections,
    /// `POST /connections/:name/revoke` — signs the caller out of a connection (ours).
    RevokeConnection(String),
    /// `GET /attachments/:id` — the bytes of one of the caller's attachments (ours).
    Attachment(String),
}

impl Route {
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Route::Send(id)
            | Route::Stream(id)
            | Route::Cancel(id)
            | Route::Clear(id)
            | Route::Compact(id)
            | Route::Reset(id)
            | Route::Authorization(id, _) => Some(id),
            _ => None,
        }
    }

    /// Whether the route carries a session request body (`message` / `inputResponses`).
    pub fn takes_session_request(&self) -> bool {
        matches!(self, Route::Create | Route::Send(_))
    }
}

/// Matches `method` and `path` (with or without the `/eve/v1` prefix; no query). A wrong
/// method is a 404 as in eve (its router has no 405).
pub fn route(method: &str, path: &str) -> Result<Route, Refusal> {
    let full = path;
    let path = path.strip_prefix(PREFIX).unwrap_or(path);
    let path = path
        .strip_suffix('/')
        .filter(|p| !p.is_empty())
        .unwrap_or(path);
    let no_route = || Refusal::no_route(method, full);
    let segments: Vec<&str> = path
        .strip_prefix('/')
        .ok_or_else(no_route)?
        .split('/')
        .collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(no_route());
    }
    let sid = |s: &str| s.to_string();
    let (route, allowed): (Route, &[&str]) = match segments.as_slice() {
        ["health"] => (Route::Health, &["GET", "HEAD"]),
        ["info"] => (Route::Info, &["GET"]),
        ["session"] => (Route::Create, &["POST"]),
        ["connections", "callback"] => (Route::ConnectionCallback, &["GET"]),
        ["connections"] => (Route::Connections, &["GET"]),
        ["connections", name, "revoke"] if is_token(name, 32) => {
            (Route::RevokeConnection(name.to_string()), &["POST"])
        }
        ["session", id] => (Route::Send(sid(id)), &["POST"]),
        ["session", id, "stream"] => (Route::Stream(sid(id)), &["GET"]),
        ["session", id, "cancel"] => (Route::Cancel(sid(id)), &["POST"]),
        ["session", id, "clear"] => (Route::Clear(sid(id)), &["POST"]),
        ["session", id, "compact"] => (Route::Compact(sid(id)), &["POST"]),
        ["session", id, "reset"] => (Route::Reset(sid(id)), &["POST"]),
        ["attachments", id] if ids::is_attachment_id(id) => {
            (Route::Attachment(id.to_string()), &["GET"])
        }
        ["session", id, "authorizations", aid] if is_token(aid, 128) => {
            (Route::Authorization(sid(id), aid.to_string()), &["GET"])
        }
        _ => return Err(no_route()),
    };
    if allowed.contains(&method) {
        Ok(route)
    } else {
        Err(no_route())
    }
}

/// Whether `id` can name one of our sessions (anything else is unknown without a lookup).
pub fn is_session_id(id: &str) -> bool {
    ids::is_session_id(id)
}

/// Where the caller reads an attachment back.
pub fn attachment_url(attachment_id: &str) -> String {
    format!("{PREFIX}/attachments/{attachment_id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_eves_and_a_wrong_method_is_not_found() {
        assert_eq!(route("GET", "/eve/v1/health"), Ok(Route::Health));
        assert_eq!(route("HEAD", "/eve/v1/health"), Ok(Route::Health));
        assert_eq!(route("POST", "/eve/v1/session"), Ok(Route::Create));
        assert_eq!(
            route("POST", "/eve/v1/session/x/cancel"),
            Ok(Route::Cancel("x".into()))
        );
        assert_eq!(
            route("POST", "/eve/v1/session/x/reset"),
            Ok(Route::Reset("x".into()))
        );
        assert_eq!(
            route("GET", "/eve/v1/session/x/stream"),
            Ok(Route::Stream("x".into()))
        );
        let e = route("GET", "/eve/v1/session").unwrap_err();
        assert_eq!(e.status, 404);
        assert_eq!(
            e.message,
            "Cannot find any route matching [GET] /eve/v1/session"
        );
        assert_eq!(route("POST", "/eve/v1/nope").unwrap_err().status, 404);
        assert_eq!(route("GET", "/eve/v1/connections"), Ok(Route::Connections));
        assert_eq!(
            route("POST", "/eve/v1/connections/notes/revoke"),
            Ok(Route::RevokeConnection("notes".into()))
        );
        assert_eq!(
            route("GET", "/eve/v1/connections/notes/revoke")
                .unwrap_err()
                .status,
            404
        );
        assert_eq!(route("post", "/eve/v1/session").unwrap_err().status, 404);
        assert_eq!(route("POST", "/eve/v1//session").unwrap_err().status, 404);
    }
}
