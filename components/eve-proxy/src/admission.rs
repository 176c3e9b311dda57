//! Who may pass, checked before anything is forwarded: the route and eve's validation, the
//! session cookie (401), a same-origin POST (403) on the head; then on the body the media
//! type (415), eve's checks of a session request (400), the `chat:send` rate limit (429) for
//! requests that start model work, and the principal's token for the agent.

use eve_agent::connections::jwt::UpstreamJwt;
use eve_agent::protocol::{self, Refusal, Route, SessionRequest};
use eve_agent::service::sign_in;
use eve_store::limits::{RatePolicy, CHAT_CONTROL, CHAT_SEND};
use spin_sdk::http::Request;

use crate::env::{api, header, variable};

/// The `chat:send` policy: `chat_send_per_hour` or the seed's 25.
fn send_policy() -> RatePolicy {
    CHAT_SEND.from_variable(
        "chat_send_per_hour",
        variable("chat_send_per_hour").as_deref(),
    )
}

/// The `chat:control` policy (clear, compact, a create without a message):
/// `chat_control_per_hour` or 120.
fn control_policy() -> RatePolicy {
    let raw = variable("chat_control_per_hour");
    CHAT_CONTROL.from_variable("chat_control_per_hour", raw.as_deref())
}

/// A refusal, with the refreshed session cookie to set on it (if any).
pub type Refused = (Refusal, Option<String>);

/// What the head's checks found: the route and the session (`None` for the open health
/// route).
pub struct Admitted {
    pub route: Route,
    pub session: Option<eve_spin::auth::Session>,
}

/// The checks on the request's head, before any body byte is read: the route, the session
/// cookie (401), a same-origin POST (403).
pub fn admit_head(req: &Request) -> Result<Admitted, Refused> {
    let method = req.method().to_string();
    let route = protocol::route(&method, req.path()).map_err(|e| (e, None))?;
    if route == Route::Health {
        return Ok(Admitted {
            route,
            session: None,
        });
    }
    let session = eve_spin::auth::authenticate_session(req).map_err(|e| (api(e), None))?;
    if method == "POST" {
        eve_spin::auth::require_same_origin(req)
            .map_err(|e| (api(e), session.refreshed_cookie.clone()))?;
    }
    Ok(Admitted {
        route,
        session: Some(session),
    })
}

/// The checks on the body, and the principal's token for the upstream call.
pub fn admit_body(req: &Request, admitted: &Admitted) -> Result<Option<String>, Refused> {
    let Some(session) = &admitted.session else {
        return Ok(None);
    };
    let route = &admitted.route;
    let fail = |e: Refusal| (e, session.refreshed_cookie.clone());
    let mode = eve_spin::auth::config().mode();
    let jwt = UpstreamJwt::from_vars(mode, variable).ok_or_else(|| {
        fail(Refusal::new(
            503,
            Some("not_configured"),
            eve_agent::connections::jwt::MISSING,
        ))
    })?;
    // The provider's callback resumes a parked turn: the model runs again, so it counts as a
    // send too — but only when its `state` is authentic and the caller's (a cross-site page's
    // navigations with a made-up state would otherwise spend the victim's budget; the agent
    // refuses those without running anything).
    let mut starts_turn = matches!(route, Route::ConnectionCallback)
        && sign_in::callback_flow(
            &jwt,
            &session.principal.id,
            req.query(),
            eve_spin::auth::now_secs(),
        )
        .is_some();
    // Writes that start no model work are metered on their own budget (issue 19 item 2): a
    // loop of clears, compacts or empty creates is refused with 429 like sends are.
    let mut controls = matches!(route, Route::Clear(_) | Route::Compact(_));
    if route.takes_session_request() {
        let media = header(req, "content-type")
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        // eve reads the body as JSON whatever it is labelled (a missing type and `text/plain`
        // too); cross-site requests are already refused above. A body declared as a form or
        // anything else that is not JSON-like is refused.
        if !media.is_empty() && media != "application/json" && media != "text/plain" {
            return Err(fail(Refusal::new(
                415,
                Some("unsupported_media_type"),
                "Expected a JSON body (content-type: application/json).",
            )));
        }
        let request =
            protocol::session_request(req.body(), *route == Route::Create).map_err(fail)?;
        starts_turn |= matches!(
            request,
            SessionRequest::Message(_) | SessionRequest::InputResponses(_)
        );
        controls |= *route == Route::Create && matches!(request, SessionRequest::Empty);
    }
    if controls {
        eve_spin::ratelimit::check_policy(control_policy(), &session.principal.id)
            .map_err(|e| fail(api(e)))?;
    }
    if starts_turn {
        eve_spin::ratelimit::check_policy(send_policy(), &session.principal.id)
            .map_err(|e| fail(api(e)))?;
    }
    Ok(Some(
        jwt.bearer(&session.principal, eve_spin::auth::now_secs()),
    ))
}
