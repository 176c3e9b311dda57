//! The stream slots: a following stream read holds one of its principal's slots while it is
//! open (`eve_spin::streams`).

use eve_agent::protocol::{self, Refusal, Route};
use eve_spin::streams::{self, StreamLease};
use spin_sdk::http::Request;

use crate::admission::Admitted;
use crate::env::{api, header, variable};

/// A following stream read holds one of its principal's stream slots while it is open
/// (variable `max_streams_per_user`); when all are taken it is refused with 429 and
/// `Retry-After`. A `follow=false` read ends at the tail, and every other route answers at
/// once: they hold none.
pub fn stream_lease(req: &Request, admitted: &Admitted) -> Result<Option<StreamLease>, Refusal> {
    let (Route::Stream(_), Some(session)) = (&admitted.route, &admitted.session) else {
        return Ok(None);
    };
    let follows =
        protocol::stream_query(req.query(), header(req, "last-event-id")).is_ok_and(|q| q.follow);
    if !follows {
        return Ok(None);
    }
    let max = streams::max_streams(variable("max_streams_per_user").as_deref());
    match streams::acquire(&session.principal.id, max) {
        Ok(Some(lease)) => Ok(Some(lease)),
        Ok(None) => Err(Refusal {
            retry_after_secs: Some(streams::RETRY_AFTER_SECS),
            ..Refusal::new(
                429,
                Some("too_many_streams"),
                streams::too_many_message(max),
            )
        }),
        Err(e) => Err(api(e)),
    }
}
