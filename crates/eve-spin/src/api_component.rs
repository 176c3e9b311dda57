//! The frame of a JSON API component with a route table of its own (`projects`, `skills`):
//! the checks every request passes on its head alone — the route (404), the method (405 with
//! `Allow`), a same-origin request for a state change (403), a signed-in principal, cookie or
//! API token (401) — then its body, read with the cap the component chose, then the handler.

use eve_api::ApiError;
use eve_store::routes::is_state_changing;
use spin_sdk::http::{IncomingRequest, Request, Response, ResponseOutparam};

use crate::auth::{self, Session};
use crate::error;

/// What a component's admission hands back: the cap its body is read with, and the cookie to
/// reissue.
pub trait Admitted {
    fn body_cap(&self) -> usize;
    fn refreshed_cookie(&self) -> Option<String>;
}

/// The head checks above, on `route` (`None`: no such route) and its `methods`; the route and
/// the caller's session.
pub fn admit_head<R>(
    req: &Request,
    route: Option<R>,
    methods: fn(&R) -> &'static [&'static str],
) -> Result<(R, Session), Response> {
    let route = route.ok_or_else(|| error(&ApiError::not_found("no such route")))?;
    let allowed = methods(&route);
    let method = req.method().to_string();
    if !allowed.contains(&method.as_str()) {
        let mut response = error(&ApiError::method_not_allowed());
        response.set_header("allow", allowed.join(", "));
        return Err(response);
    }
    if is_state_changing(&method) {
        auth::require_same_origin(req).map_err(|e| error(&e))?;
    }
    let session = auth::authenticate_session(req).map_err(|e| error(&e))?;
    Ok((route, session))
}

/// Admits the request on its head, reads its body with the admitted cap (413 from
/// `Content-Length` alone), routes, and sends the answer.
pub async fn serve<C: Admitted>(
    incoming: IncomingRequest,
    out: ResponseOutparam,
    admit: fn(&Request) -> Result<C, Response>,
    route: fn(&Request, &C) -> Response,
) {
    let mut req = crate::body::head(&incoming);
    let response = match admit(&req) {
        Err(response) => response,
        Ok(caller) => match crate::body::read_capped(incoming, caller.body_cap()).await {
            Err(e) => crate::chat_request::finish(
                Err(e.api_error(caller.body_cap())),
                caller.refreshed_cookie(),
            ),
            Ok(bytes) => {
                *req.body_mut() = bytes;
                route(&req, &caller)
            }
        },
    };
    auth::send_with_cookies(out, response, &[]).await;
}
