//! Sign-ins a tool call waits for (`authorization.required`): the events that park the turn on
//! one, the sign-in it waits for, and the grant or decline that continues it.

use eve_api::eve::*;

use crate::connections::mcp::McpConnection;
use crate::session::transcript::{self, StepState, Waiting};
use crate::tools::spec::ToolCall;
use crate::turn::events::{failed_result, withdraw};

/// Where a sign-in's instructions quote the server's challenge ([`pending_challenge`]).
const CHALLENGE_PREFIX: &str = " The server asked: WWW-Authenticate: ";

/// The `WWW-Authenticate` challenge of the pending sign-in `attempt_id`, if its server sent one.
pub fn pending_challenge(log: &[Event], attempt_id: &str) -> Option<String> {
    log.iter().rev().find_map(|e| match e {
        Event::AuthorizationRequired(a) if a.attempt_id == attempt_id => a
            .authorization
            .instructions
            .as_deref()
            .and_then(|i| i.split_once(CHALLENGE_PREFIX))
            .map(|(_, c)| c.to_string()),
        _ => None,
    })
}

/// The attempt id of the sign-in a call asks for.
pub(crate) fn attempt_id(call: &ToolCall) -> String {
    format!("auth_{}", call.id)
}

/// Whether sign-in `attempt_id` was completed authorized.
pub(crate) fn authorized_in_log(log: &[Event], attempt_id: &str) -> bool {
    log.iter().any(|e| {
        matches!(e, Event::AuthorizationCompleted(c)
            if c.attempt_id == attempt_id && c.outcome == AuthorizationOutcome::Authorized)
    })
}

/// The events that park turn `turn` on the sign-in `conn`'s server asked for (its challenge
/// quoted): `authorization.required` with the connect page `url`, then `turn.waiting`.
pub(crate) fn sign_in_events(
    at: &StepRef,
    turn: &TurnRef,
    call: &ToolCall,
    conn: &McpConnection,
    challenge: Option<String>,
    url: String,
) -> Vec<Event> {
    let mut instructions = format!("Connect {} to continue.", conn.display_name);
    if let Some(c) = challenge {
        instructions.push_str(CHALLENGE_PREFIX);
        instructions.push_str(&c);
    }
    vec![
        Event::AuthorizationRequired(AuthorizationRequired {
            attempt_id: attempt_id(call),
            authorization: AuthorizationChallenge {
                url: Some(url),
                display_name: Some(conn.display_name.clone()),
                instructions: Some(instructions),
            },
            call_id: Some(call.id.clone()),
            description: conn.description.clone(),
            name: conn.name.clone(),
            at: at.clone(),
        }),
        Event::TurnWaiting(TurnWaiting {
            on: "input".into(),
            at: turn.clone(),
            usage: None,
        }),
    ]
}

/// The sign-in the parked turn waits for: `(attemptId, connection name)`.
pub fn pending_authorization(log: &[Event]) -> Option<(String, String)> {
    match transcript::open_turn(log)?.waiting? {
        Waiting::Authorization {
            attempt_id, name, ..
        } => Some((attempt_id, name)),
        Waiting::Input { .. } => None,
    }
}

/// The event that grants the parked sign-in (the turn then continues and makes the call).
pub fn granted_events(log: &[Event]) -> Option<Vec<Event>> {
    let open = transcript::open_turn(log)?;
    let Some(Waiting::Authorization { .. }) = &open.waiting else {
        return None;
    };
    Some(withdraw(
        &open,
        "answered",
        AuthorizationOutcome::Authorized,
    ))
}

/// The events that decline the parked sign-in: `authorization.completed` (declined) and the
/// waiting call answered as failed (the turn then continues without it).
pub fn declined_events(log: &[Event]) -> Option<Vec<Event>> {
    let open = transcript::open_turn(log)?;
    let Some(Waiting::Authorization {
        name, call_id, at, ..
    }) = &open.waiting
    else {
        return None;
    };
    let mut v = withdraw(&open, "cancelled", AuthorizationOutcome::Declined);
    if let (Some(call_id), StepState::Calls(calls)) = (call_id, &open.step_state) {
        if let Some(c) = calls.iter().find(|c| &c.call_id == call_id) {
            v.push(failed_result(
                at,
                &transcript::tool_call(c),
                "authorization_declined",
                format!("the user declined to connect {name}"),
            ));
        }
    }
    Some(v)
}
