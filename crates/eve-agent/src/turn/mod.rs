//! One turn of the agent in eve's vocabulary: `step.started` → the model's deltas
//! (`reasoning.appended`, `message.appended`, `action.input.appended`) → the completed blocks
//! (`reasoning.completed`, `message.completed`, `actions.requested`) → the tools
//! (`action.result`) → `step.completed`, step after step, until the model answers without
//! tools (`turn.completed`, `session.waiting`). A question (`ask_user`) or a sign-in the turn
//! needs parks it (`input.requested` / `authorization.required`, then `turn.waiting`); the
//! answer, grant or decline continues the same turn.
//!
//! The turn checks for a cancel at seed 003's five checkpoints — before each model call, while
//! the model streams (and while a failed call waits to be tried again), after a failed call,
//! before each tool call, while a tool runs — and ends
//! a cancelled turn consistently: every call it stopped is answered as cancelled, a question is
//! resolved `cancelled`, a sign-in `declined`, then `turn.cancelled` and `session.waiting`.
//!
//! [`run`] always continues from the log ([`crate::session::transcript::open_turn`]), so a turn whose runner
//! died is resumed the way eve does it: a step whose model call never finished runs again
//! (same `stepIndex`, new events under new ids; what was streamed stays), tool calls with a
//! persisted result are not run again, and `message.completed` carries the authoritative text.
//!
//! Where things are: [`step_loop`] (the state machine and its checkpoints), [`model_call`]
//! (one model call and its stream), [`questions`] (`ask_user`), [`approvals`] (tool calls that
//! wait for a person's approval), [`authorizations`] (sign-ins a
//! call waits for), [`mcp_tools`] (the MCP servers' tools), [`events`] (the events, as plain
//! values), [`prompt`] (the system prompt), [`host`] (the seam to the component). The public
//! items are re-exported here.

mod approval_answers;
pub mod approvals;
pub mod authorizations;
pub mod events;
pub mod host;
mod mcp_tools;
mod model_call;
pub mod prompt;
pub mod questions;
pub mod step_loop;

#[cfg(test)]
mod approval_tests;
#[cfg(test)]
mod retry_tests;
#[cfg(test)]
pub mod testing;
#[cfg(test)]
mod tests;

/// What a cancelled call is answered with (the history reads it back too).
pub use crate::session::transcript::CANCELLED_BY_USER;
pub use authorizations::{
    declined_events, granted_events, pending_authorization, pending_challenge,
};
pub use events::{
    cancel_events, failed_events, received, session_waiting, start_events, unsettled_end,
    MODEL_CALL_FAILED,
};
pub use host::{Fenced, TurnContext, TurnHost, TurnOutcome};
pub use prompt::system_prompt;
pub use questions::{answer_events, pending_question, steer_events, ASK_USER_TOOL};
pub use step_loop::{run, MAX_STEPS};
