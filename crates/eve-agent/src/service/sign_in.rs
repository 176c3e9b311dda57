//! Signing the caller in to a connection's MCP server, from the turn's `authorization.required`
//! to the provider's callback: the connect page discovers the server's authorization server
//! (protected-resource metadata → authorization-server metadata → dynamic client
//! registration) and sends the browser there with a signed `state`; the callback exchanges the
//! code for a token, keeps it sealed, and grants (or, when the user refused, declines) the
//! sign-in the turn waits for. Also the connection menu: the list, and signing out.

use eve_store::sql::Sql;
use serde_json::{json, Value};

use crate::connections::flow_state::FlowState;
use crate::connections::jwt::UpstreamJwt;
use crate::connections::mcp::McpConnection;
use crate::connections::mcp_oauth::{self, McpFlow, ServerMetadata, StoredToken};
use crate::connections::oauth;
use crate::protocol::Refusal;
use crate::service::connection_tokens::{save_sealed, token_request, token_seal};
use crate::service::env::{self, db_refusal, AgentEnv, Method};
use crate::session::store::AgentStore;
use crate::turn;

/// The configured connection `name` (a server added as data that the outbound guard now
/// refuses is not one: nothing is sent to it).
pub fn mcp_connection<S: Sql>(env: &dyn AgentEnv, db: &S, name: &str) -> Option<McpConnection> {
    env::mcp_connections(env, db)
        .into_iter()
        .find(|c| c.name == name && c.blocked.is_none())
}

/// The name a connection is shown with (its own name when it is no longer configured).
pub fn display_name<S: Sql>(env: &dyn AgentEnv, db: &S, connection: &str) -> String {
    mcp_connection(env, db, connection).map_or_else(|| connection.to_string(), |c| c.display_name)
}

/// The connection of the pending sign-in `attempt_id` of the session (`None`: not pending).
fn pending<S: Sql>(
    store: &AgentStore<'_, S>,
    id: &str,
    principal: &str,
    attempt_id: &str,
) -> Result<Option<String>, Refusal> {
    if store.session(id, principal).map_err(db_refusal)?.is_none() {
        return Err(Refusal::session_not_found());
    }
    let log = store.all_events(id).map_err(db_refusal)?;
    Ok(turn::pending_authorization(&log)
        .filter(|(aid, _)| aid == attempt_id)
        .map(|(_, c)| c))
}

/// Where the provider sends the browser back: the callback route under the app's origin.
fn callback_uri(app_origin: Option<&str>) -> Result<String, Refusal> {
    let origin = app_origin
        .ok_or_else(|| Refusal::bad_request("the app's origin is unknown; set app_base_url"))?;
    Ok(format!(
        "{}{}",
        origin.trim_end_matches('/'),
        oauth::CALLBACK_PATH
    ))
}

/// What the connect page does.
#[derive(Debug, Clone, PartialEq)]
pub enum ConnectPage {
    /// To the server's authorization endpoint.
    Redirect(String),
    /// The sign-in is no longer pending.
    NotPending,
    /// The connection is no longer configured: nothing to sign in to.
    NotConfigured(String),
    /// The sign-in could not start (discovery or registration failed).
    Failed(Refusal),
}

/// The connect page of sign-in `attempt_id` of session `id`: `GET` starts the sign-in at the
/// connection's MCP server (the callback completes it).
pub fn connect_page<S: Sql>(
    env: &dyn AgentEnv,
    db: &S,
    principal: &str,
    id: &str,
    attempt_id: &str,
    app_origin: Option<&str>,
) -> Result<ConnectPage, Refusal> {
    let store = AgentStore::new(db);
    let Some(connection) = pending(&store, id, principal, attempt_id)? else {
        return Ok(ConnectPage::NotPending);
    };
    let Some(conn) = mcp_connection(env, db, &connection) else {
        return Ok(ConnectPage::NotConfigured(connection));
    };
    let log = store.all_events(id).unwrap_or_default();
    let challenge = turn::pending_challenge(&log, attempt_id);
    let at = SignInAt {
        principal,
        session_id: id,
        attempt_id,
        app_origin,
    };
    Ok(match authorize_url(env, &store, &conn, challenge, &at) {
        Ok(location) => ConnectPage::Redirect(location),
        Err(e) => ConnectPage::Failed(e),
    })
}

/// Whose sign-in, for which wait, from which app.
struct SignInAt<'a> {
    principal: &'a str,
    session_id: &'a str,
    attempt_id: &'a str,
    app_origin: Option<&'a str>,
}

/// The sign-in of an MCP server, discovered from its challenge: protected-resource metadata
/// → authorization-server metadata → dynamic client registration. The client and its token
/// endpoint travel in the signed state; the browser goes to the authorization endpoint.
fn authorize_url<S: Sql>(
    env: &dyn AgentEnv,
    store: &AgentStore<'_, S>,
    conn: &McpConnection,
    challenge: Option<String>,
    at: &SignInAt,
) -> Result<String, Refusal> {
    let jwt = env.upstream_jwt().ok_or_else(Refusal::unauthorized)?;
    let redirect_uri = callback_uri(at.app_origin)?;
    let (meta, flow) = match cached_client(env, store, conn, &redirect_uri) {
        Some(found) => found,
        None => {
            let (meta, flow) = discover_and_register(env, conn, challenge, &redirect_uri)?;
            let (m, f) = (json!(meta).to_string(), json!(flow).to_string());
            let saved = store.save_mcp_oauth_client(
                &conn.name,
                &conn.url,
                &redirect_uri,
                &m,
                &f,
                env.now_ms(),
            );
            if let Err(e) = saved {
                eprintln!("agent: {} sign-in not cached: {e}", conn.name);
            }
            (meta, flow)
        }
    };
    let state = jwt.state_codec().seal(&FlowState {
        session_id: at.session_id.to_string(),
        authorization_id: at.attempt_id.to_string(),
        principal: at.principal.to_string(),
        exp: (env.now_ms() / 1000) as u64 + oauth::STATE_TTL_SECS,
        mcp: Some(flow.clone()),
    });
    let verifier = jwt.pkce_verifier(&state);
    Ok(flow.authorize_url(&meta, &redirect_uri, &state, &verifier))
}

/// How long a connection's discovered and registered sign-in is used again (issue 19 item 2:
/// the connect page no longer repeats discovery and registration at the provider on every
/// visit). A token exchange the server refuses forgets it sooner.
pub const CLIENT_CACHE_MS: i64 = 24 * 60 * 60 * 1000;

/// The connection's sign-in found on an earlier visit, if still fresh and still for this URL.
fn cached_client<S: Sql>(
    env: &dyn AgentEnv,
    store: &AgentStore<'_, S>,
    conn: &McpConnection,
    redirect_uri: &str,
) -> Option<(ServerMetadata, McpFlow)> {
    let after = env.now_ms() - CLIENT_CACHE_MS;
    let (m, f) = store
        .mcp_oauth_client(&conn.name, &conn.url, redirect_uri, after)
        .ok()??;
    let meta: ServerMetadata = serde_json::from_str(&m).ok()?;
    let flow: McpFlow = serde_json::from_str(&f).ok()?;
    (flow.resource == conn.url).then_some((meta, flow))
}

/// Discovery from the server's challenge and dynamic client registration.
fn discover_and_register(
    env: &dyn AgentEnv,
    conn: &McpConnection,
    challenge: Option<String>,
    redirect_uri: &str,
) -> Result<(ServerMetadata, McpFlow), Refusal> {
    let upstream = |what: &str, e: String| {
        eprintln!("agent: {} sign-in: {what}: {e}", conn.name);
        Refusal::new(
            502,
            Some("upstream"),
            format!("{} sign-in could not start: {what}: {e}", conn.display_name),
        )
    };
    let get = |url: &str| {
        env.fetch(Method::Get, url, &[("accept", "application/json")], b"")
            .and_then(|(status, body)| {
                if (200..300).contains(&status) {
                    Ok(body)
                } else {
                    Err(format!("{url} answered {status}"))
                }
            })
    };
    // Trust (issue 19 item 1): every URL the server's metadata points to must be https on a
    // public host (a loopback test connection aside); the protected-resource metadata must be
    // the connection's (RFC 9728 §3.3) and the authorization server's metadata its issuer's
    // (RFC 8414 §3.3). Anything else is refused before registration: nothing is kept.
    let untrusted = |e: String| {
        eprintln!("agent: {} sign-in refused: {e}", conn.name);
        untrusted_sign_in(&conn.display_name, &e)
    };
    let prm_url = mcp_oauth::resource_metadata_url(&conn.url, challenge.as_deref())
        .ok_or_else(|| upstream("discovery", "bad server URL".into()))?;
    mcp_oauth::endpoint_allowed(&prm_url, &conn.url).map_err(untrusted)?;
    let (resource, issuer) = get(&prm_url)
        .and_then(|b| mcp_oauth::parse_resource_metadata(&b))
        .map_err(|e| upstream("protected-resource metadata", e))?;
    mcp_oauth::resource_matches(&resource, &conn.url).map_err(untrusted)?;
    mcp_oauth::endpoint_allowed(&issuer, &conn.url).map_err(untrusted)?;
    let as_url = mcp_oauth::authorization_server_metadata_url(&issuer)
        .ok_or_else(|| upstream("discovery", format!("bad issuer {issuer:?}")))?;
    let meta = get(&as_url)
        .and_then(|b| mcp_oauth::parse_server_metadata(&b))
        .map_err(|e| upstream("authorization-server metadata", e))?;
    mcp_oauth::issuer_matches(&meta, &issuer).map_err(untrusted)?;
    mcp_oauth::server_endpoints_allowed(&meta, &conn.url).map_err(untrusted)?;
    let registration = meta.registration_endpoint.clone().ok_or_else(|| {
        upstream(
            "registration",
            "the server offers no dynamic client registration (RFC 7591), which eve-chat needs"
                .to_string(),
        )
    })?;
    let (client_id, client_secret) =
        register(env, &registration, redirect_uri).map_err(|e| upstream("registration", e))?;
    let flow = McpFlow {
        client_id,
        client_secret,
        token_endpoint: meta.token_endpoint.clone(),
        revocation_endpoint: meta.revocation_endpoint.clone(),
        // RFC 8707: always the connection itself, never what the metadata says.
        resource: conn.url.clone(),
    };
    Ok((meta, flow))
}

/// The refusal of a sign-in whose metadata cannot be trusted: a page in English and
/// Simplified Chinese (the app's two languages), with the reason for the owner.
pub fn untrusted_sign_in(display_name: &str, reason: &str) -> Refusal {
    Refusal::new(
        403,
        Some("untrusted_sign_in"),
        format!(
            "{display_name} sign-in was refused: the server's sign-in details point somewhere \
             eve-chat does not trust ({reason}). Nothing was sent there and nothing was kept. \
             Skip it in the chat, or ask the owner to check the connection. \
             已拒绝 {display_name} 的登录：该服务器的登录信息指向 eve-chat 不信任的地址。\
             未向其发送任何内容，也未保存任何内容。请在聊天中跳过，或请管理员检查此连接。"
        ),
    )
}

/// RFC 7591 dynamic client registration: the client id (and secret, if any).
fn register(
    env: &dyn AgentEnv,
    registration: &str,
    redirect_uri: &str,
) -> Result<(String, Option<String>), String> {
    let body = mcp_oauth::registration_body(redirect_uri).to_string();
    env.fetch(
        Method::Post,
        registration,
        &[
            ("content-type", "application/json"),
            ("accept", "application/json"),
        ],
        body.as_bytes(),
    )
    .and_then(|(status, b)| mcp_oauth::parse_registration(status, &b))
}

/// What the provider's callback came to.
#[derive(Debug)]
pub enum Callback<S> {
    /// Signed in: the connection is granted; the turn continues with the call.
    Granted {
        db: S,
        session_id: String,
        name: String,
    },
    /// The user refused at the provider: the turn continues without the call.
    Declined {
        db: S,
        session_id: String,
        name: String,
    },
    /// The sign-in is no longer pending.
    NotPending,
    /// The code could not be turned into a kept token.
    Failed { name: String, refusal: Refusal },
}

/// The sign-in a callback's `state` names, when that state is authentic, unexpired and the
/// caller's (`query` is the callback's query string). eve-proxy counts a callback against
/// `chat:send` only then, so a cross-site page cannot spend a victim's budget with navigations
/// that carry a made-up state (issue 19 item 4); the agent refuses the same callbacks.
pub fn callback_flow(
    jwt: &UpstreamJwt,
    principal: &str,
    query: &str,
    now_secs: u64,
) -> Option<FlowState> {
    let state = oauth::query_value(query, "state")?;
    jwt.state_codec()
        .open(&state, now_secs)
        .filter(|f| f.principal == principal)
}

/// `GET /eve/v1/connections/callback?code=&state=` (or `?error=&state=`): the provider sent the
/// browser back. The code is exchanged for a token; the connection is granted. A provider
/// error (the user refused) declines the authorization. The database is `open`ed once the
/// state is known to be authentic and the caller's.
pub fn callback<S: Sql>(
    env: &dyn AgentEnv,
    open: impl FnOnce() -> Result<S, Refusal>,
    principal: &str,
    query: &str,
    app_origin: Option<&str>,
) -> Result<Callback<S>, Refusal> {
    let state = oauth::query_value(query, "state").unwrap_or_default();
    let flow = env
        .upstream_jwt()
        .and_then(|j| callback_flow(&j, principal, query, (env.now_ms() / 1000) as u64))
        .ok_or_else(|| Refusal::bad_request("invalid or expired authorization state"))?;
    let db = open()?;
    let store = AgentStore::new(&db);
    let id = flow.session_id.as_str();
    let Some(connection) = pending(&store, id, principal, &flow.authorization_id)? else {
        return Ok(Callback::NotPending);
    };
    let name = display_name(env, &db, &connection);
    if oauth::query_value(query, "error").is_some() {
        let session_id = id.to_string();
        return Ok(Callback::Declined {
            db,
            session_id,
            name,
        });
    }
    let code =
        oauth::query_value(query, "code").ok_or_else(|| Refusal::bad_request("missing code"))?;
    let token = callback_uri(app_origin)
        .and_then(|redirect_uri| exchange(env, &flow, &state, &code, &redirect_uri, &name));
    if let Err(refusal) = token.and_then(|t| save_sealed(env, &store, principal, &connection, &t)) {
        // The next Connect discovers and registers afresh (the server may have forgotten us).
        if let Some(conn) = mcp_connection(env, &db, &connection) {
            let _ = store.forget_mcp_oauth_client(&conn.name, &conn.url);
        }
        return Ok(Callback::Failed { name, refusal });
    }
    store
        .grant(principal, &connection, env.now_ms())
        .map_err(db_refusal)?;
    let session_id = id.to_string();
    Ok(Callback::Granted {
        db,
        session_id,
        name,
    })
}

/// Exchanges the authorization code for a token at the flow's token endpoint (PKCE).
fn exchange(
    env: &dyn AgentEnv,
    flow: &FlowState,
    state: &str,
    code: &str,
    redirect_uri: &str,
    name: &str,
) -> Result<StoredToken, Refusal> {
    let Some(mcp) = &flow.mcp else {
        return Err(Refusal::bad_request("the connection has no OAuth client"));
    };
    let verifier = env
        .upstream_jwt()
        .map(|j| j.pkce_verifier(state))
        .unwrap_or_default();
    let body = mcp.code_body(code, redirect_uri, &verifier);
    let exchanged = token_request(env, &mcp.token_endpoint, &body).and_then(|(status, b)| {
        mcp_oauth::parse_token_answer(status, &b, env.now_ms(), Some(mcp.clone()), None)
    });
    exchanged.map_err(|e| {
        eprintln!("agent: {name} token exchange failed: {e}");
        Refusal::new(
            502,
            Some("upstream"),
            format!("{name} did not accept the authorization: {e}"),
        )
    })
}

/// `GET /eve/v1/connections`: the configured MCP connections, each with whether the caller
/// holds a token for it (the connection menu's list and its Disconnect buttons).
pub fn list<S: Sql>(env: &dyn AgentEnv, db: &S, principal: &str) -> Value {
    let store = AgentStore::new(db);
    let list: Vec<Value> = env::mcp_connections(env, db)
        .iter()
        .map(|c| {
            let connected = store.token(principal, &c.name).ok().flatten().is_some();
            json!({
                "name": c.name,
                "displayName": c.display_name,
                "description": c.description,
                "url": c.url,
                "connected": connected || c.token.is_some(),
                "revocable": connected,
            })
        })
        .collect();
    json!({ "connections": list })
}

/// `POST /eve/v1/connections/:name/revoke`: revokes the caller's token at the server's
/// revocation endpoint when it has one (best effort: the token is forgotten either way) and
/// deletes it and the grant; the next call that needs it asks for a sign-in again. The
/// answer's body.
pub fn revoke<S: Sql>(
    env: &dyn AgentEnv,
    db: &S,
    principal: &str,
    conn: &McpConnection,
) -> Result<Value, Refusal> {
    let store = AgentStore::new(db);
    let name = conn.name.as_str();
    let sealed = store.token(principal, name).ok().flatten();
    let token = sealed
        .zip(token_seal(env, principal, name))
        .and_then(|(s, (key, binding))| mcp_oauth::open(&key, &binding, &s));
    if let Some(t) = &token {
        revoke_at_server(env, name, t);
    }
    store
        .forget_connection(principal, name)
        .map_err(db_refusal)?;
    Ok(json!({ "name": conn.name, "connected": false, "revoked": token.is_some() }))
}

/// Revokes a token's access and refresh secrets at its server's revocation endpoint, if it
/// has one (failures are logged).
fn revoke_at_server(env: &dyn AgentEnv, name: &str, t: &StoredToken) {
    let Some(flow) = &t.flow else { return };
    let Some(url) = &flow.revocation_endpoint else {
        return;
    };
    for secret in [Some(&t.access_token), t.refresh_token.as_ref()]
        .into_iter()
        .flatten()
    {
        if let Err(e) = token_request(env, url, &flow.revoke_body(secret)) {
            eprintln!("agent: revoking the {name} token: {e}");
        }
    }
}
