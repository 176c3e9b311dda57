//! The caller's tokens for their connections: sealed at rest with a key derived from the
//! proxy's secret and bound to the principal and the connection, refreshed before they expire.

use crate::connections::mcp_oauth::{self, StoredToken};
use crate::protocol::Refusal;
use crate::service::env::{db_refusal, AgentEnv, Method};
use crate::session::store::AgentStore;
use eve_store::sql::Sql;

/// The key tokens are sealed with, and the binding of `principal`'s `connection` row.
pub fn token_seal(
    env: &dyn AgentEnv,
    principal: &str,
    connection: &str,
) -> Option<([u8; 32], String)> {
    env.upstream_jwt()
        .map(|j| (j.token_key(), format!("{principal}\0{connection}")))
}

/// Seals `token` and keeps it for `principal`.
pub fn save_sealed<S: Sql>(
    env: &dyn AgentEnv,
    store: &AgentStore<'_, S>,
    principal: &str,
    connection: &str,
    token: &StoredToken,
) -> Result<(), Refusal> {
    let (key, binding) =
        token_seal(env, principal, connection).ok_or_else(Refusal::unauthorized)?;
    let nonce = eve_auth::crypto::random_bytes::<12>();
    let sealed = mcp_oauth::seal(&key, nonce, &binding, token);
    store
        .save_token(principal, connection, &sealed, env.now_ms())
        .map_err(db_refusal)
}

/// POSTs a form to a token endpoint: its status and body.
pub fn token_request(env: &dyn AgentEnv, url: &str, body: &str) -> Result<(u16, Vec<u8>), String> {
    env.fetch(
        Method::Post,
        url,
        &[
            ("content-type", "application/x-www-form-urlencoded"),
            ("accept", "application/json"),
        ],
        body.as_bytes(),
    )
}

/// The caller's token for `connection`, from its sign-in: refreshed first when it is about to
/// expire (a refused refresh leaves the old token, and the server's 401 then asks for a new
/// sign-in).
pub fn connection_token<S: Sql>(
    env: &dyn AgentEnv,
    store: &AgentStore<'_, S>,
    principal: &str,
    connection: &str,
) -> Option<String> {
    let sealed = store.token(principal, connection).unwrap_or_else(|e| {
        eprintln!("agent: reading the {connection} token: {e}");
        None
    })?;
    let (key, binding) = token_seal(env, principal, connection)?;
    let token = mcp_oauth::open(&key, &binding, &sealed)?;
    if !token.needs_refresh(env.now_ms()) {
        return Some(token.access_token);
    }
    let flow = token.flow.clone()?;
    let refresh = token.refresh_token.clone()?;
    let fresh = token_request(env, &flow.token_endpoint, &flow.refresh_body(&refresh)).and_then(
        |(status, body)| {
            mcp_oauth::parse_token_answer(status, &body, env.now_ms(), Some(flow), Some(refresh))
        },
    );
    match fresh {
        Ok(fresh) => {
            if let Err(e) = save_sealed(env, store, principal, connection, &fresh) {
                eprintln!(
                    "agent: keeping the refreshed {connection} token: {}",
                    e.message
                );
            }
            Some(fresh.access_token)
        }
        Err(e) => {
            eprintln!("agent: refreshing the {connection} token: {e}");
            Some(token.access_token)
        }
    }
}
