//! The request body, read only after the head's checks and capped at what the agent takes.

use eve_agent::protocol::{self, Refusal, Route};
use eve_spin::body::BodyError;
use spin_sdk::http::IncomingRequest;

use crate::env::variable;

/// The body, read only after the head's checks and at most the agent's cap: the agent stops
/// reading past it (a control's body too), so a larger one is refused here rather than
/// breaking mid-forward (502).
pub async fn read_body(incoming: IncomingRequest, route: &Route) -> Result<Vec<u8>, Refusal> {
    // A message may carry a file at the agent's upload cap (the same variable), in base64.
    let max = if route.takes_session_request() {
        eve_agent::protocol::uploads::UploadPolicy::from_vars(
            variable("attachment_max_bytes").as_deref(),
            None,
            None,
        )
        .message_body_cap()
    } else {
        protocol::MAX_BODY_BYTES
    };
    eve_spin::body::read_capped(incoming, max)
        .await
        .map_err(|e| match e {
            BodyError::TooLarge => Refusal::too_large(),
            BodyError::Unreadable => Refusal::bad_request("Could not read the request body."),
        })
}
