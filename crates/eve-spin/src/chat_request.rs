//! The steps every chat-store request takes before its handler runs, shared by the `chats`
//! and `events` components: find the resource (404 JSON for an unknown path), check the method
//! (405 JSON with `Allow`), refuse cross-site state changes (403), authenticate (401), open the
//! database (migrating it when needed), and only then read the body, capped for the route
//! ([`serve`]). The route table is [`eve_store::routes`].

use crate::{auth, body, db, error, json_body};
use eve_api::ApiError;
use eve_store::limits::{MAX_EVENTS_BODY_BYTES, MAX_EVENT_BODY_BYTES, MAX_SMALL_BODY_BYTES};
use eve_store::routes::{self, Component, Resource};
use serde::de::DeserializeOwned;
use spin_sdk::http::{IncomingRequest, Request, Response, ResponseOutparam};

/// A request that passed the checks: the resource, the caller, and an open database.
pub struct ChatRequest<'a> {
    pub resource: Resource<'a>,
    pub method: String,
    pub principal: eve_api::auth::Principal,
    /// `Set-Cookie` to attach when the session cookie should be reissued.
    pub refreshed_cookie: Option<String>,
    pub db: db::Db,
}

/// Runs the checks for a request to `component`; the `Err` is the response to send.
pub fn begin(req: &Request, component: Component) -> Result<ChatRequest<'_>, Response> {
    let resource = routes::resource(req.path())
        .filter(|r| r.component() == component)
        .ok_or_else(|| error(&ApiError::not_found("no such route")))?;
    let method = req.method().to_string();
    if !resource.methods().contains(&method.as_str()) {
        let mut response = error(&ApiError::method_not_allowed());
        response.set_header("allow", resource.methods().join(", "));
        return Err(response);
    }
    if routes::is_state_changing(&method) {
        auth::require_same_origin(req).map_err(|e| error(&e))?;
    }
    let session = auth::authenticate_session(req).map_err(|e| error(&e))?;
    let db = db::open().map_err(|e| error(&e))?;
    Ok(ChatRequest {
        resource,
        method,
        principal: session.principal,
        refreshed_cookie: session.refreshed_cookie,
        db,
    })
}

/// The most body bytes a route reads: the cap its handler applies (a route without a body
/// gets the small cap, so a stray body is still bounded).
pub fn body_cap(resource: &Resource<'_>) -> usize {
    match resource {
        Resource::Event(..) => MAX_EVENT_BODY_BYTES,
        Resource::Events(_) | Resource::Snapshot(_) | Resource::AuthorizationSkip(_) => {
            MAX_EVENTS_BODY_BYTES
        }
        _ => MAX_SMALL_BODY_BYTES,
    }
}

/// A component's whole request: [`begin`]'s checks on the head alone (so a refused or
/// unauthenticated request is answered without its body being read), then the body, read with
/// the route's [`body_cap`] (413 from `Content-Length` alone, or as soon as a chunked body
/// passes it), then `route` with the full request.
pub async fn serve(
    incoming: IncomingRequest,
    out: ResponseOutparam,
    component: Component,
    route: impl FnOnce(&Request, ChatRequest<'_>) -> Response,
) {
    let mut req = body::head(&incoming);
    let checked = match begin(&req, component) {
        Ok(ctx) => Ok((
            body_cap(&ctx.resource),
            ctx.principal,
            ctx.refreshed_cookie,
            ctx.db,
        )),
        Err(response) => Err(response),
    };
    let response = match checked {
        Err(response) => response,
        Ok((cap, principal, refreshed_cookie, db)) => {
            match body::read_capped(incoming, cap).await {
                Err(e) => finish(Err(e.api_error(cap)), refreshed_cookie),
                Ok(bytes) => {
                    *req.body_mut() = bytes;
                    // `begin` matched this path already; the borrow of the head ended with it.
                    match routes::resource(req.path()) {
                        Some(resource) => {
                            let ctx = ChatRequest {
                                resource,
                                method: req.method().to_string(),
                                principal,
                                refreshed_cookie,
                                db,
                            };
                            route(&req, ctx)
                        }
                        None => error(&ApiError::not_found("no such route")),
                    }
                }
            }
        }
    };
    auth::send_with_cookies(out, response, &[]).await;
}

/// The response for a handler's result, with the refreshed session cookie when there is one.
pub fn finish(result: Result<Response, ApiError>, refreshed_cookie: Option<String>) -> Response {
    let mut response = crate::respond(result);
    if let Some(cookie) = refreshed_cookie {
        response.set_header("set-cookie", cookie);
    }
    response
}

/// The JSON body of `req` as `T`: 413 over `max_bytes`, 415 when not JSON, 400 when malformed.
pub fn body<T: DeserializeOwned>(req: &Request, max_bytes: usize) -> Result<T, ApiError> {
    eve_store::validate::body_size(req.body().len(), max_bytes)?;
    json_body(req)
}

/// Like [`body`], but an empty body (no content at all) reads as `T::default()`.
pub fn optional_body<T: DeserializeOwned + Default>(
    req: &Request,
    max_bytes: usize,
) -> Result<T, ApiError> {
    if req.body().iter().all(u8::is_ascii_whitespace) {
        return Ok(T::default());
    }
    body(req, max_bytes)
}

/// A response with no body.
pub fn no_content() -> Response {
    Response::builder()
        .status(204)
        .header("cache-control", "no-store")
        .build()
}
