//! MCP servers as data (docs/runtime.md "MCP servers"): what an admin adds, edits, enables and
//! removes while the app runs, the tools each listed at its last refresh, and what the agent
//! reads of them on every turn. A bearer token is stored sealed ([`crate::sealed`]) and never
//! answered; a URL passes the outbound guard ([`crate::outbound`]) when it is saved and again
//! whenever the agent reads the list.
//!
//! The names of the `mcp_connections` variable and of the ready-made servers are the agent's
//! (`eve_agent::connections::mcp`); callers pass them in as `reserved`, so this crate does not
//! depend on the agent.

pub mod sql;

#[cfg(test)]
mod tests;

use eve_api::mcp_servers::{CreateMcpServer, McpAuth, McpServer, McpServerPatch, McpServerTool};
use eve_api::providers::Rotation;
use eve_api::{ApiError, ErrorCode};
use eve_store::sql::{int_at, text_at, Sql, SqlRow, SqlValue};
use eve_store::time::{format_iso_ms, Millis};

use crate::outbound;
use crate::sealed::{binding, Keys};
use sql::*;

/// The most servers a deployment keeps as data.
pub const MAX_SERVERS: i64 = 100;
const MAX_URL: usize = 2048;
const MAX_DISPLAY_NAME: usize = 80;
const MAX_DESCRIPTION: usize = 1000;
const MAX_TOKEN: usize = 4096;

/// What a write is checked against: the names taken by the bootstrap (the variable's servers
/// and the presets), the hosts the outbound guard lets through, the sealing keys (`None`:
/// `secrets_key` is unset, no token can be stored).
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    pub reserved: &'a [String],
    pub allowed: &'a [String],
    pub keys: Option<&'a Keys>,
}

/// An enabled server as the agent uses it on this turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentServer {
    pub name: String,
    pub display_name: String,
    pub description: String,
    pub url: String,
    /// The opened bearer token (`auth: "bearer"`).
    pub token: Option<String>,
    /// Why it may not be called now (its URL fails the guard, its token cannot be opened):
    /// its tools are a tool error, not a request.
    pub blocked: Option<String>,
}

/// A fresh random id for a new server.
pub fn fresh_id() -> String {
    let mut bytes = [0u8; eve_store::ids::CHAT_ID_LEN];
    getrandom::fill(&mut bytes).expect("the platform provides randomness");
    format!("mcp_{}", eve_store::ids::chat_id_from_random(bytes))
}

/// Runs one statement; the database's words go to the log, never to the client.
fn exec<S: Sql + ?Sized>(
    db: &S,
    sql: &str,
    params: Vec<SqlValue>,
) -> Result<Vec<SqlRow>, ApiError> {
    db.execute(sql, params).map_err(|e| {
        eprintln!("mcp servers: database error: {e}");
        eve_store::sql::database_error(&e)
    })
}

/// The hosts the outbound guard lets through ([`crate::settings::outbound_allowed_hosts`]:
/// the `outboundAllowedHosts` setting, else the `outbound_allowed_hosts` variable).
pub fn allowed_hosts<S: Sql>(db: &S, variable: Option<&str>) -> Result<Vec<String>, ApiError> {
    crate::settings::outbound_allowed_hosts(db, variable)
}

/// A server row ([`SELECT_SERVERS`]) as the admin sees it.
fn server(row: &SqlRow, keys: Option<&Keys>) -> McpServer {
    let id = text_at(row, 0);
    let sealed = row.get(6).and_then(SqlValue::as_str);
    let unreadable = sealed.is_some_and(|s| open_token(keys, &id, s).is_none());
    let tools: Vec<McpServerTool> = row
        .get(8)
        .and_then(SqlValue::as_str)
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or_default();
    McpServer {
        name: text_at(row, 1),
        display_name: text_at(row, 2),
        description: text_at(row, 3),
        url: text_at(row, 4),
        auth: McpAuth::parse(&text_at(row, 5)).unwrap_or(McpAuth::None),
        has_token: sealed.is_some(),
        key_unreadable: unreadable,
        enabled: int_at(row, 7) == 1,
        tools,
        tools_at: row.get(9).and_then(SqlValue::as_i64).map(format_iso_ms),
        tools_error: row.get(10).and_then(SqlValue::as_str).map(str::to_string),
        read_only: false,
        id,
    }
}

fn open_token(keys: Option<&Keys>, id: &str, sealed: &str) -> Option<String> {
    keys?.open(&binding("mcp_server", id, "bearer"), sealed)
}

fn rows<S: Sql>(db: &S, id: Option<&str>) -> Result<Vec<SqlRow>, ApiError> {
    exec(db, SELECT_SERVERS, vec![SqlValue::opt_text(id)])
}

/// Every server, by name.
pub fn list<S: Sql>(db: &S, keys: Option<&Keys>) -> Result<Vec<McpServer>, ApiError> {
    Ok(rows(db, None)?.iter().map(|r| server(r, keys)).collect())
}

/// Server `id` (404 when there is none).
pub fn get<S: Sql>(db: &S, keys: Option<&Keys>, id: &str) -> Result<McpServer, ApiError> {
    rows(db, Some(id))?
        .first()
        .map(|r| server(r, keys))
        .ok_or_else(not_found)
}

fn not_found() -> ApiError {
    ApiError::not_found("MCP server not found")
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::bad_request(message)
}

/// Checks a name: `[a-z0-9_-]{1,32}`, without `__` or a trailing `_` (either would make
/// `<name>__<tool>` split elsewhere), and none the bootstrap takes (409).
pub fn check_name(name: &str, reserved: &[String]) -> Result<(), ApiError> {
    let shape = !name.is_empty()
        && name.len() <= 32
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && !name.contains("__")
        && !name.ends_with('_');
    if !shape {
        return Err(bad(
            "name: 1-32 of a-z, 0-9, - and _, without __ and not ending in _",
        ));
    }
    if reserved.iter().any(|r| r == name) {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("name {name:?} is taken by a server of the mcp_connections variable or a ready-made one"),
        ));
    }
    Ok(())
}

/// Checks a URL against the outbound guard (400 with the guard's words).
pub fn check_url(url: &str, allowed: &[String]) -> Result<String, ApiError> {
    let url = url.trim();
    if url.len() > MAX_URL {
        return Err(bad(format!("url: at most {MAX_URL} characters")));
    }
    outbound::check(url, allowed).map_err(|e| bad(format!("url: {e}")))?;
    Ok(url.to_string())
}

/// A text field trimmed and bounded, without control characters.
fn check_text(field: &str, value: &str, max: usize) -> Result<String, ApiError> {
    let v = value.trim();
    if v.chars().count() > max {
        return Err(bad(format!("{field}: at most {max} characters")));
    }
    if v.chars()
        .any(|c| c.is_control() && !(field == "description" && c == '\n'))
    {
        return Err(bad(format!("{field}: no control characters")));
    }
    Ok(v.to_string())
}

/// Seals `token` for server `id` (400 for a token that cannot be a header value; 409 while
/// `secrets_key` is unset): the sealed value and its key id.
fn seal_token(keys: Option<&Keys>, id: &str, token: &str) -> Result<(String, String), ApiError> {
    let token = token.trim();
    if token.is_empty()
        || token.len() > MAX_TOKEN
        || token.bytes().any(|b| !(0x21..0x7f).contains(&b))
    {
        return Err(bad(format!(
            "token: 1-{MAX_TOKEN} visible ASCII characters, no spaces"
        )));
    }
    let keys = keys.ok_or_else(|| {
        ApiError::new(
            ErrorCode::Conflict,
            "a token cannot be stored: set the secrets_key variable first (docs/runtime.md)",
        )
    })?;
    let sealed = keys.seal(&binding("mcp_server", id, "bearer"), token);
    Ok((sealed, keys.current.id().to_string()))
}

/// Adds a server (`id` fresh and random). 400 for a field that is wrong (the URL's refusal
/// in the guard's words), 409 for a name in use or past [`MAX_SERVERS`].
pub fn create<S: Sql>(
    db: &S,
    rules: &Rules,
    id: &str,
    new: &CreateMcpServer,
    now: Millis,
) -> Result<McpServer, ApiError> {
    let name = new.name.trim();
    check_name(name, rules.reserved)?;
    let url = check_url(&new.url, rules.allowed)?;
    let display = check_text(
        "displayName",
        new.display_name.as_deref().unwrap_or(name),
        MAX_DISPLAY_NAME,
    )?;
    let description = check_text(
        "description",
        new.description.as_deref().unwrap_or(""),
        MAX_DESCRIPTION,
    )?;
    let sealed = match (new.auth, new.token.as_deref()) {
        (McpAuth::Bearer, Some(t)) => Some(seal_token(rules.keys, id, t)?),
        (McpAuth::Bearer, None) => return Err(bad("token: a bearer server needs one")),
        (_, Some(_)) => return Err(bad("token: only with auth \"bearer\"")),
        (_, None) => None,
    };
    let (sealed, key_id) = sealed.unzip();
    let display = if display.is_empty() {
        name.to_string()
    } else {
        display
    };
    let params = vec![
        id.into(),
        name.into(),
        display.into(),
        description.into(),
        url.into(),
        new.auth.as_str().into(),
        SqlValue::opt_text(sealed),
        SqlValue::opt_text(key_id),
        now.into(),
        MAX_SERVERS.into(),
    ];
    if exec(db, INSERT_SERVER, params)?.is_empty() {
        return Err(refused_insert(db, name)?);
    }
    get(db, rules.keys, id)
}

/// Why an insert that returned nothing was refused.
fn refused_insert<S: Sql>(db: &S, name: &str) -> Result<ApiError, ApiError> {
    let taken = exec(db, NAME_TAKEN, vec![name.into()])?
        .first()
        .is_some_and(|r| int_at(r, 0) == 1);
    Ok(ApiError::new(
        ErrorCode::Conflict,
        if taken {
            format!("an MCP server is already named {name:?}")
        } else {
            format!("at most {MAX_SERVERS} MCP servers")
        },
    ))
}

/// The token a patch leaves: `(sealed, key id)`, or why the patch is refused.
fn patched_token(
    rules: &Rules,
    id: &str,
    auth: McpAuth,
    current: Option<(String, String)>,
    moved: bool,
    patch: &McpServerPatch,
) -> Result<Option<(String, String)>, ApiError> {
    let token = match &patch.token {
        Some(Some(_)) if auth != McpAuth::Bearer => {
            return Err(bad("token: only with auth \"bearer\""));
        }
        Some(Some(t)) => Some(seal_token(rules.keys, id, t)?),
        Some(None) => None,
        None if auth == McpAuth::Bearer && moved => {
            return Err(bad(TOKEN_AFTER_MOVE));
        }
        None if auth == McpAuth::Bearer => current,
        None => None,
    };
    if auth == McpAuth::Bearer && token.is_none() {
        return Err(bad("token: a bearer server needs one"));
    }
    Ok(token)
}

/// The refusal of a URL change to another origin without the token entered again: the stored
/// token was given for the old origin and is never sent to a new one (issue 32).
pub const TOKEN_AFTER_MOVE: &str = "token: the new URL is on another origin (scheme, host or \
    port), so the stored token is not kept; enter the token again";

/// The display name and description a patch leaves (an empty display name is the name).
fn patched_texts(old: &McpServer, patch: &McpServerPatch) -> Result<(String, String), ApiError> {
    let display = match &patch.display_name {
        Some(v) => check_text("displayName", v, MAX_DISPLAY_NAME)?,
        None => old.display_name.clone(),
    };
    let description = match &patch.description {
        Some(v) => check_text("description", v, MAX_DESCRIPTION)?,
        None => old.description.clone(),
    };
    let display = if display.is_empty() {
        old.name.clone()
    } else {
        display
    };
    Ok((display, description))
}

/// Changes server `id` (absent fields kept; a new URL passes the guard; changing the URL, the
/// auth or the token forgets the cached tools).
pub fn patch<S: Sql>(
    db: &S,
    rules: &Rules,
    id: &str,
    patch: &McpServerPatch,
    now: Millis,
) -> Result<McpServer, ApiError> {
    let row = rows(db, Some(id))?
        .into_iter()
        .next()
        .ok_or_else(not_found)?;
    let old = server(&row, rules.keys);
    let url = match &patch.url {
        Some(u) => check_url(u, rules.allowed)?,
        None => old.url.clone(),
    };
    let (display, description) = patched_texts(&old, patch)?;
    let auth = patch.auth.unwrap_or(old.auth);
    let current = row.get(6).and_then(SqlValue::as_str).map(|s| {
        let key_id = s.split('.').nth(1).unwrap_or_default().to_string();
        (s.to_string(), key_id)
    });
    let moved = !outbound::same_origin(&old.url, &url);
    let token = patched_token(rules, id, auth, current, moved, patch)?;
    let endpoint_changed = url != old.url || auth != old.auth || patch.token.is_some();
    let (sealed, key_id) = token.unzip();
    let params = vec![
        id.into(),
        display.into(),
        description.into(),
        url.into(),
        auth.as_str().into(),
        SqlValue::opt_text(sealed),
        SqlValue::opt_text(key_id),
        patch.enabled.unwrap_or(old.enabled).into(),
        endpoint_changed.into(),
        now.into(),
        old.url.as_str().into(),
    ];
    // People's OAuth tokens of this server were issued for the old origin: forgotten before
    // the move (a failed update then only costs a sign-in) and again after it (a sign-in that
    // finished in between).
    if moved {
        exec(db, DELETE_OAUTH_TOKENS, vec![old.name.as_str().into()])?;
    }
    if exec(db, UPDATE_SERVER, params)?.is_empty() {
        rows(db, Some(id))?
            .into_iter()
            .next()
            .ok_or_else(not_found)?;
        return Err(ApiError::new(
            ErrorCode::Conflict,
            "the server's URL changed meanwhile; reload and try again",
        ));
    }
    if moved {
        exec(db, DELETE_OAUTH_TOKENS, vec![old.name.as_str().into()])?;
    }
    get(db, rules.keys, id)
}

/// Removes server `id`; whether there was one.
pub fn delete<S: Sql>(db: &S, id: &str) -> Result<bool, ApiError> {
    Ok(!exec(db, DELETE_SERVER, vec![id.into()])?.is_empty())
}

/// The token a call to `s` sends, or why `s` may not be called: its URL fails the guard
/// with `allowed` (an allow-list that shrank), or its token opens under neither key.
fn usable(
    s: &McpServer,
    keys: Option<&Keys>,
    sealed: Option<&str>,
    allowed: &[String],
) -> Result<Option<String>, String> {
    outbound::check(&s.url, allowed).map_err(|e| e.to_string())?;
    match sealed {
        Some(sealed) => open_token(keys, &s.id, sealed).map(Some).ok_or_else(|| {
            "its token was sealed under a key that is no longer set (secrets_key): an admin \
             must enter it again"
                .to_string()
        }),
        None => Ok(None),
    }
}

/// What a refresh of server `id`'s tools calls: the server, and its token or why it may not
/// be called (which the refresh stores as its error).
pub fn refresh_target<S: Sql>(
    db: &S,
    keys: Option<&Keys>,
    id: &str,
    allowed: &[String],
) -> Result<(McpServer, Result<Option<String>, String>), ApiError> {
    let row = rows(db, Some(id))?
        .into_iter()
        .next()
        .ok_or_else(not_found)?;
    let s = server(&row, keys);
    let token = usable(&s, keys, row.get(6).and_then(SqlValue::as_str), allowed);
    Ok((s, token))
}

/// Stores a refresh of server `id`'s tools made against `url`: the list, or why there is
/// none (the last list is kept and the error shown beside it).
pub fn set_tools<S: Sql>(
    db: &S,
    keys: Option<&Keys>,
    id: &str,
    url: &str,
    tools: Result<Vec<McpServerTool>, String>,
    now: Millis,
) -> Result<McpServer, ApiError> {
    let (json, error) = match tools {
        Ok(t) => (
            Some(serde_json::to_string(&t).unwrap_or_else(|_| "[]".into())),
            None,
        ),
        Err(e) => (None, Some(e.chars().take(1000).collect::<String>())),
    };
    let params = vec![
        id.into(),
        SqlValue::opt_text(json),
        now.into(),
        SqlValue::opt_text(error),
        url.into(),
    ];
    exec(db, SET_TOOLS, params)?;
    get(db, keys, id)
}

/// The enabled servers as the agent uses them on this turn, each URL checked against the
/// guard with today's allow-list and each token opened (`blocked` says why one cannot be).
pub fn for_agent<S: Sql>(
    db: &S,
    keys: Option<&Keys>,
    allowed: &[String],
) -> Result<Vec<AgentServer>, ApiError> {
    let mut out = Vec::new();
    for row in rows(db, None)? {
        let s = server(&row, keys);
        if !s.enabled {
            continue;
        }
        let sealed = row.get(6).and_then(SqlValue::as_str);
        let (token, blocked) = match usable(&s, keys, sealed, allowed) {
            Ok(token) => (token, None),
            Err(why) => (None, Some(why)),
        };
        out.push(AgentServer {
            name: s.name,
            display_name: s.display_name,
            description: s.description,
            url: s.url,
            token,
            blocked,
        });
    }
    Ok(out)
}

/// Re-seals every token not under the current key (the rotation of docs/runtime.md); a token
/// neither key opens stays as it is and is counted in `remaining`.
pub fn reseal<S: Sql + ?Sized>(db: &S, keys: &Keys) -> Result<Rotation, ApiError> {
    let mut done = Rotation::default();
    for row in exec(db, SELECT_SEALED, vec![])? {
        let (id, sealed) = (text_at(&row, 0), text_at(&row, 1));
        if keys.is_current(&sealed) {
            continue;
        }
        let b = binding("mcp_server", &id, "bearer");
        let Some(token) = keys.open(&b, &sealed) else {
            done.remaining += 1;
            continue;
        };
        let params = vec![
            id.into(),
            keys.seal(&b, &token).into(),
            keys.current.id().into(),
            sealed.into(),
        ];
        exec(db, RESEAL, params)?;
        done.resealed += 1;
    }
    Ok(done)
}
