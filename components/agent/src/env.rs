//! Running a session's work after the request has answered, over the agent's Spin platform
//! ([`eve_agent_spin::Spin`]).

use eve_agent::service::work::{self, First};
use eve_agent_spin::Spin;
use eve_spin::db::Db;

/// Runs whatever the session has to do ([`work::drain`]) in this invocation, after the
/// request has answered.
pub fn drain(db: &Db, session_id: &str, principal: &str, first: First) {
    work::drain(&Spin, db, session_id, principal, first, None);
}
