//! Model providers as data (docs/runtime.md, "Model providers"): an admin's OpenAI-compatible
//! or Anthropic endpoints, their models and API keys. The key is stored only sealed
//! ([`crate::sealed`], bound to the row), never answered; a base URL passes the outbound
//! guard ([`crate::outbound`]) when saved and again when the agent offers its models.
//!
//! The agent reads [`offered`] on every turn, so a change answers the next turn on every node.

pub mod sql;

use eve_api::providers::{
    Provider, ProviderCreate, ProviderKind, ProviderModel, ProviderPatch, Rotation,
};
use eve_api::{ApiError, ErrorCode};
use eve_store::sql::{database_error, int_at, text_at, Sql, SqlRow, SqlValue};
use eve_store::time::{format_iso_ms, Millis};

use crate::outbound;
use crate::sealed::{binding, Keys};

/// The public APIs a provider of each kind calls when no base URL is given (the same as the
/// agent's defaults for the variables).
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";

/// Most models one provider lists.
pub const MAX_MODELS: usize = 200;
/// Longest model id, label or API key accepted.
const MAX_MODEL_CHARS: usize = 200;
const MAX_KEY_CHARS: usize = 4096;

fn db_error(e: String) -> ApiError {
    eprintln!("runtime: database: {e}");
    database_error(&e)
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::bad_request(message)
}

/// The binding of provider `id`'s sealed key.
fn key_binding(id: &str) -> String {
    binding("provider", id, "api_key")
}

/// A provider name: `[a-z0-9][a-z0-9_-]{0,31}` (the prefix of its model ids).
pub fn check_name(name: &str) -> Result<(), ApiError> {
    let ok = (1..=32).contains(&name.len())
        && name.bytes().enumerate().all(|(i, b)| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || (i > 0 && (b == b'_' || b == b'-'))
        });
    if ok {
        Ok(())
    } else {
        Err(bad(
            "name: 1 to 32 of a-z, 0-9, _ and -, starting with a letter or digit",
        ))
    }
}

/// The base URL to store: the kind's public API when none is given, else one the outbound
/// guard lets through (`allowed`: the admin-allowed hosts), without a trailing `/`.
pub fn check_base_url(
    kind: ProviderKind,
    raw: Option<&str>,
    allowed: &[String],
) -> Result<String, ApiError> {
    let raw = raw.map(str::trim).filter(|s| !s.is_empty());
    let Some(raw) = raw else {
        return Ok(match kind {
            ProviderKind::Openai => OPENAI_BASE_URL,
            ProviderKind::Anthropic => ANTHROPIC_BASE_URL,
        }
        .to_string());
    };
    outbound::check(raw, allowed).map_err(|e| bad(format!("baseUrl: {e}")))?;
    Ok(raw.trim_end_matches('/').to_string())
}

fn check_key(key: &str) -> Result<(), ApiError> {
    if key.trim().is_empty() || key.len() > MAX_KEY_CHARS || key.chars().any(char::is_control) {
        return Err(bad("apiKey: a non-empty key without control characters"));
    }
    Ok(())
}

fn check_max_tokens(n: Option<u64>) -> Result<(), ApiError> {
    match n {
        Some(0) => Err(bad("maxTokens: a positive integer")),
        Some(n) if n > 10_000_000 => Err(bad("maxTokens: at most 10000000")),
        _ => Ok(()),
    }
}

fn text_ok(s: &str) -> bool {
    !s.trim().is_empty() && s.chars().count() <= MAX_MODEL_CHARS && !s.chars().any(char::is_control)
}

/// A model list: at most [`MAX_MODELS`], each id non-empty, once, ≤ 200 characters.
pub fn check_models(models: &[ProviderModel]) -> Result<(), ApiError> {
    if models.len() > MAX_MODELS {
        return Err(bad(format!("models: at most {MAX_MODELS}")));
    }
    for (i, m) in models.iter().enumerate() {
        if !text_ok(&m.model) || m.model != m.model.trim() {
            return Err(bad(format!(
                "models[{i}].model: 1 to 200 characters, no control characters or edge spaces"
            )));
        }
        if m.label.as_deref().is_some_and(|l| !text_ok(l)) {
            return Err(bad(format!("models[{i}].label: 1 to 200 characters")));
        }
        if m.context_tokens == Some(0) {
            return Err(bad(format!(
                "models[{i}].contextTokens: a positive integer"
            )));
        }
        if models[..i].iter().any(|o| o.model == m.model) {
            return Err(bad(format!("models: {} is listed twice", m.model)));
        }
    }
    Ok(())
}

/// The keys, or 409 when a secret is to be stored without `secrets_key`.
fn sealing_keys(keys: Option<&Keys>) -> Result<&Keys, ApiError> {
    keys.ok_or_else(|| {
        ApiError::new(
            ErrorCode::Conflict,
            "set the secrets_key variable before storing an API key",
        )
    })
}

fn new_id() -> String {
    let mut bytes = [0u8; eve_store::ids::CHAT_ID_LEN];
    getrandom::fill(&mut bytes).expect("the platform provides randomness");
    eve_store::ids::chat_id_from_random(bytes)
}

/// One provider row and its secret as stored.
struct Row {
    provider: Provider,
    sealed: Option<String>,
}

fn row_provider(row: &SqlRow, keys: Option<&Keys>) -> Row {
    let id = text_at(row, 0);
    let sealed = row.get(4).and_then(SqlValue::as_str).map(str::to_string);
    let readable = sealed
        .as_deref()
        .map(|s| keys.and_then(|k| k.open(&key_binding(&id), s)).is_some());
    let provider = Provider {
        name: text_at(row, 1),
        kind: ProviderKind::parse(&text_at(row, 2)).unwrap_or(ProviderKind::Openai),
        base_url: text_at(row, 3),
        has_key: sealed.is_some(),
        key_unreadable: readable == Some(false),
        max_tokens: row.get(6).and_then(SqlValue::as_i64).map(|n| n as u64),
        models: Vec::new(),
        created_at: format_iso_ms(int_at(row, 7)),
        updated_at: format_iso_ms(int_at(row, 8)),
        id,
    };
    Row { provider, sealed }
}

/// Every provider with its models, or only provider `only`.
fn read<S: Sql + ?Sized>(
    db: &S,
    keys: Option<&Keys>,
    only: Option<&str>,
) -> Result<Vec<Row>, ApiError> {
    let rows = match only {
        Some(id) => db.execute(sql::SELECT_PROVIDER, vec![id.into()]),
        None => db.execute(sql::SELECT_PROVIDERS, vec![]),
    }
    .map_err(db_error)?;
    let mut out: Vec<Row> = rows.iter().map(|r| row_provider(r, keys)).collect();
    if out.is_empty() {
        return Ok(out);
    }
    for m in db.execute(sql::SELECT_MODELS, vec![]).map_err(db_error)? {
        let pid = text_at(&m, 0);
        if let Some(p) = out.iter_mut().find(|p| p.provider.id == pid) {
            p.provider.models.push(ProviderModel {
                model: text_at(&m, 1),
                label: m.get(2).and_then(SqlValue::as_str).map(str::to_string),
                enabled: int_at(&m, 3) == 1,
                context_tokens: m.get(4).and_then(SqlValue::as_i64).map(|n| n as u64),
                shadowed: false,
            });
        }
    }
    Ok(out)
}

/// Every provider, by name; `bootstrap` (the variables' model ids) marks the models they
/// shadow.
pub fn list<S: Sql + ?Sized>(
    db: &S,
    keys: Option<&Keys>,
    bootstrap: &[String],
) -> Result<Vec<Provider>, ApiError> {
    let mut out: Vec<Provider> = read(db, keys, None)?
        .into_iter()
        .map(|r| r.provider)
        .collect();
    for p in &mut out {
        for m in &mut p.models {
            m.shadowed = bootstrap.contains(&format!("{}/{}", p.name, m.model));
        }
    }
    Ok(out)
}

/// Provider `id`, or 404.
pub fn get<S: Sql + ?Sized>(db: &S, keys: Option<&Keys>, id: &str) -> Result<Provider, ApiError> {
    read(db, keys, Some(id))?
        .pop()
        .map(|r| r.provider)
        .ok_or_else(|| ApiError::not_found("no such provider"))
}

/// Provider `id` (or 404) and its opened key (`None`: none, or one no configured key opens).
pub fn with_key<S: Sql + ?Sized>(
    db: &S,
    keys: Option<&Keys>,
    id: &str,
) -> Result<(Provider, Option<String>), ApiError> {
    let row = read(db, keys, Some(id))?
        .pop()
        .ok_or_else(|| ApiError::not_found("no such provider"))?;
    let key = row
        .sealed
        .and_then(|s| keys.and_then(|k| k.open(&key_binding(id), &s)));
    Ok((row.provider, key))
}

fn models_json(models: &[ProviderModel]) -> (String, String) {
    let rows: Vec<serde_json::Value> = models
        .iter()
        .map(|m| {
            serde_json::json!({"model": m.model.trim(), "label": m.label.as_deref().map(str::trim),
                "enabled": m.enabled, "contextTokens": m.context_tokens})
        })
        .collect();
    let names: Vec<&str> = models.iter().map(|m| m.model.trim()).collect();
    (
        serde_json::Value::Array(rows).to_string(),
        serde_json::to_string(&names).expect("names serialize"),
    )
}

/// Replaces provider `id`'s models: upsert the list, then drop what it does not name (each
/// step leaves a usable list).
fn set_models<S: Sql + ?Sized>(db: &S, id: &str, models: &[ProviderModel]) -> Result<(), ApiError> {
    let (rows, names) = models_json(models);
    db.execute(sql::UPSERT_MODELS, vec![id.into(), rows.into()])
        .map_err(db_error)?;
    db.execute(sql::DELETE_OTHER_MODELS, vec![id.into(), names.into()])
        .map_err(db_error)?;
    Ok(())
}

/// Adds a provider (201's body): everything is checked before anything is written; a taken
/// name is 409.
pub fn create<S: Sql + ?Sized>(
    db: &S,
    keys: Option<&Keys>,
    allowed: &[String],
    body: &ProviderCreate,
    now: Millis,
) -> Result<Provider, ApiError> {
    check_name(&body.name)?;
    let base_url = check_base_url(body.kind, body.base_url.as_deref(), allowed)?;
    check_max_tokens(body.max_tokens)?;
    check_models(&body.models)?;
    let id = new_id();
    let (sealed, key_id) = match body.api_key.as_deref() {
        Some(key) => {
            check_key(key)?;
            let keys = sealing_keys(keys)?;
            let sealed = keys.seal(&key_binding(&id), key.trim());
            (Some(sealed), Some(keys.current.id().to_string()))
        }
        None => (None, None),
    };
    let params = vec![
        id.as_str().into(),
        body.name.as_str().into(),
        body.kind.as_str().into(),
        base_url.into(),
        SqlValue::opt_text(sealed),
        SqlValue::opt_text(key_id),
        body.max_tokens.map_or(SqlValue::Null, SqlValue::from),
        now.into(),
    ];
    let inserted = db.execute(sql::INSERT_PROVIDER, params).map_err(db_error)?;
    if inserted.is_empty() {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("a provider is already named {}", body.name),
        ));
    }
    if let Err(e) = set_models(db, &id, &body.models) {
        // Not half-added: without its models the provider goes again.
        let _ = db.execute(sql::DELETE_PROVIDER, vec![id.as_str().into()]);
        return Err(e);
    }
    get(db, keys, &id)
}

/// Changes provider `id` (404 when there is none); everything is checked before anything
/// is written. A base URL on another origin (scheme, host, port) drops the stored key unless
/// the same patch enters one: the key was given for the old origin, and "Test connection"
/// and every turn would send it to the new one.
pub fn patch<S: Sql + ?Sized>(
    db: &S,
    keys: Option<&Keys>,
    allowed: &[String],
    id: &str,
    body: &ProviderPatch,
    now: Millis,
) -> Result<Provider, ApiError> {
    let current = get(db, keys, id)?;
    let base_url = match body.base_url.as_deref() {
        Some(raw) => Some(check_base_url(current.kind, Some(raw), allowed)?),
        None => None,
    };
    if let Some(max) = body.max_tokens {
        check_max_tokens(max)?;
    }
    if let Some(models) = &body.models {
        check_models(models)?;
    }
    let moves = base_url
        .as_deref()
        .is_some_and(|new| !outbound::same_origin(&current.base_url, new));
    let (set_key, sealed, key_id) = match &body.api_key {
        None if moves => (true, None, None),
        None => (false, None, None),
        Some(None) => (true, None, None),
        Some(Some(key)) => {
            check_key(key)?;
            let keys = sealing_keys(keys)?;
            let sealed = keys.seal(&key_binding(id), key.trim());
            (true, Some(sealed), Some(keys.current.id().to_string()))
        }
    };
    let params = vec![
        id.into(),
        SqlValue::opt_text(base_url),
        set_key.into(),
        SqlValue::opt_text(sealed),
        SqlValue::opt_text(key_id),
        body.max_tokens.is_some().into(),
        body.max_tokens
            .flatten()
            .map_or(SqlValue::Null, SqlValue::from),
        now.into(),
        current.base_url.as_str().into(),
    ];
    if db
        .execute(sql::UPDATE_PROVIDER, params)
        .map_err(db_error)?
        .is_empty()
    {
        // Still there: another admin changed its base URL meanwhile.
        get(db, keys, id)?;
        return Err(ApiError::new(
            ErrorCode::Conflict,
            "the provider's base URL changed meanwhile; reload and try again",
        ));
    }
    if let Some(models) = &body.models {
        set_models(db, id, models)?;
    }
    get(db, keys, id)
}

/// Removes provider `id` and its models; whether there was one.
pub fn delete<S: Sql + ?Sized>(db: &S, id: &str) -> Result<bool, ApiError> {
    let rows = db
        .execute(sql::DELETE_PROVIDER, vec![id.into()])
        .map_err(db_error)?;
    Ok(!rows.is_empty())
}

/// Re-seals every provider key not under the current key ([`crate::rotate`] joins it with
/// the other domains'). A key that opens under neither key stays and counts as remaining.
pub fn reseal<S: Sql + ?Sized>(db: &S, keys: &Keys) -> Result<Rotation, ApiError> {
    let mut out = Rotation::default();
    for row in db.execute(sql::SELECT_SEALED, vec![]).map_err(db_error)? {
        let (id, sealed) = (text_at(&row, 0), text_at(&row, 1));
        if keys.is_current(&sealed) {
            continue;
        }
        let Some(plain) = keys.open(&key_binding(&id), &sealed) else {
            out.remaining += 1;
            continue;
        };
        let fresh = keys.seal(&key_binding(&id), &plain);
        let params = vec![
            id.into(),
            sealed.into(),
            fresh.into(),
            keys.current.id().into(),
        ];
        // Nothing returned: changed meanwhile, so already sealed under the current key.
        if !db
            .execute(sql::RESEAL, params)
            .map_err(db_error)?
            .is_empty()
        {
            out.resealed += 1;
        }
    }
    Ok(out)
}

/// A data model the agent may run: its provider's connection and the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferedModel {
    /// `<provider name>/<model>`.
    pub id: String,
    pub label: String,
    pub kind: ProviderKind,
    pub base_url: String,
    /// The opened key (`None`: no key, or one no configured key opens).
    pub api_key: Option<String>,
    pub max_tokens: Option<u64>,
    pub context_tokens: Option<u64>,
}

/// Every enabled model of every provider whose base URL still passes the guard (`allowed`
/// may have changed since it was saved), by provider name and the models' order.
pub fn offered<S: Sql + ?Sized>(
    db: &S,
    keys: Option<&Keys>,
    allowed: &[String],
) -> Result<Vec<OfferedModel>, String> {
    let rows = read(db, keys, None).map_err(|e| e.message)?;
    let mut out = Vec::new();
    for Row {
        provider: p,
        sealed,
    } in rows
    {
        if let Err(e) = outbound::check(&p.base_url, allowed) {
            eprintln!("runtime: provider {} is not offered: {e}", p.name);
            continue;
        }
        let api_key = sealed.and_then(|s| keys.and_then(|k| k.open(&key_binding(&p.id), &s)));
        for m in p.models.iter().filter(|m| m.enabled) {
            out.push(OfferedModel {
                id: format!("{}/{}", p.name, m.model),
                label: m.label.clone().unwrap_or_else(|| m.model.clone()),
                kind: p.kind,
                base_url: p.base_url.clone(),
                api_key: api_key.clone(),
                max_tokens: p.max_tokens,
                context_tokens: m.context_tokens,
            });
        }
    }
    Ok(out)
}

/// Whether model id `id` names a data provider (`<name>/…`): one it does not offer is
/// disabled or removed there, which the agent answers `model_not_allowed`.
pub fn names_provider<S: Sql + ?Sized>(db: &S, id: &str) -> Result<bool, String> {
    let Some((name, _)) = id.split_once('/') else {
        return Ok(false);
    };
    Ok(!db.execute(sql::NAME_EXISTS, vec![name.into()])?.is_empty())
}

/// The hosts an admin allowed past the outbound guard
/// ([`crate::settings::outbound_allowed_hosts`]).
pub fn allowed_hosts<S: Sql + ?Sized>(
    db: &S,
    variable: Option<&str>,
) -> Result<Vec<String>, String> {
    crate::settings::outbound_allowed_hosts(db, variable).map_err(|e| e.message)
}

/// The `defaultModel` setting, if set ([`crate::settings::default_model`]).
pub fn default_model<S: Sql + ?Sized>(db: &S) -> Result<Option<String>, String> {
    crate::settings::default_model(db).map_err(|e| e.message)
}

#[cfg(test)]
mod tests;
