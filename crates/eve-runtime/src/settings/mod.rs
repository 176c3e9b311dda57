//! System-wide settings as data (docs/runtime.md "Settings"): one `system_setting` row per
//! key, the value JSON. What applies is the row, else the bootstrap (a Spin variable), else
//! the built-in default; every reader here reads the database on each call, so a change takes
//! effect on the next turn, on every node.
//!
//! A `PATCH` is checked whole before anything is written: one bad key is a 400 naming it and
//! nothing changes.

mod sql;
mod validate;

use std::collections::BTreeMap;

use eve_api::settings::{Settings, ToolApproval, ToolDisplay};
use eve_api::ApiError;
use eve_store::sql::{database_error, text_at, Sql, SqlValue};
use serde_json::{Map, Value};

pub use validate::{domain, host, MAX_INSTRUCTIONS_BYTES};

/// A setting's key, as stored and on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Instructions,
    DefaultModel,
    ToolDisplay,
    LogModelRequests,
    SignupDomains,
    DefaultTokensPerDay,
    ToolApprovals,
    OutboundAllowedHosts,
}

impl Key {
    pub const ALL: [Key; 8] = [
        Key::Instructions,
        Key::DefaultModel,
        Key::ToolDisplay,
        Key::LogModelRequests,
        Key::SignupDomains,
        Key::DefaultTokensPerDay,
        Key::ToolApprovals,
        Key::OutboundAllowedHosts,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Key::Instructions => "instructions",
            Key::DefaultModel => "defaultModel",
            Key::ToolDisplay => "toolDisplay",
            Key::LogModelRequests => "logModelRequests",
            Key::SignupDomains => "signupDomains",
            Key::DefaultTokensPerDay => "defaultTokensPerDay",
            Key::ToolApprovals => "toolApprovals",
            Key::OutboundAllowedHosts => "outboundAllowedHosts",
        }
    }

    pub fn parse(name: &str) -> Option<Key> {
        Key::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

fn db_failed(e: String) -> ApiError {
    eprintln!("settings: {e}");
    database_error(&e)
}

/// The stored settings (`None` where a key has no row). A row that no longer parses (written
/// by hand) counts as unset, and is logged.
pub fn stored<S: Sql + ?Sized>(db: &S) -> Result<Settings, ApiError> {
    let rows = db.execute(sql::SELECT_ALL, vec![]).map_err(db_failed)?;
    let mut out = Settings::default();
    for row in rows {
        if let Some(key) = Key::parse(&text_at(&row, 0)) {
            read_row(&mut out, key, &text_at(&row, 1));
        }
    }
    Ok(out)
}

/// One stored setting, or `None` (no row, or one that no longer parses).
fn one<S: Sql + ?Sized>(db: &S, key: Key) -> Result<Settings, ApiError> {
    let rows = db
        .execute(sql::SELECT_ONE, vec![SqlValue::text(key.as_str())])
        .map_err(db_failed)?;
    let mut out = Settings::default();
    if let Some(row) = rows.first() {
        read_row(&mut out, key, &text_at(row, 0));
    }
    Ok(out)
}

/// Sets `key` in `out` from a row's JSON text, checked as a PATCH is; else logs and leaves it
/// unset.
fn read_row(out: &mut Settings, key: Key, text: &str) {
    read_value(out, key, text, "the stored");
}

/// Sets `key` in `out` from JSON text (`what`: where it comes from, for the log).
fn read_value(out: &mut Settings, key: Key, text: &str, what: &str) {
    let parsed = serde_json::from_str::<Value>(text)
        .map_err(|e| e.to_string())
        .and_then(|v| validate::set(out, key, &v));
    if let Err(e) = parsed {
        eprintln!("settings: {what} {} is ignored: {e}", key.as_str());
    }
}

/// The agent's base instructions, when an admin set them (else the built-in ones apply).
pub fn instructions<S: Sql + ?Sized>(db: &S) -> Result<Option<String>, ApiError> {
    Ok(one(db, Key::Instructions)?.instructions)
}

/// The model a chat starts on, when an admin chose one (the agent uses it when it is offered,
/// else its first model).
pub fn default_model<S: Sql + ?Sized>(db: &S) -> Result<Option<String>, ApiError> {
    Ok(one(db, Key::DefaultModel)?.default_model)
}

/// How the chat shows tool calls (built in: collapsed).
pub fn tool_display<S: Sql + ?Sized>(db: &S) -> Result<ToolDisplay, ApiError> {
    Ok(one(db, Key::ToolDisplay)?.tool_display.unwrap_or_default())
}

/// Whether the agent logs each model request (built in: no).
pub fn log_model_requests<S: Sql + ?Sized>(db: &S) -> Result<bool, ApiError> {
    Ok(one(db, Key::LogModelRequests)?
        .log_model_requests
        .unwrap_or(false))
}

/// The email domains that may sign up uninvited: the setting, else `variable`
/// (`signup_allowed_domains`, comma-separated).
pub fn signup_domains<S: Sql + ?Sized>(
    db: &S,
    variable: Option<&str>,
) -> Result<Vec<String>, ApiError> {
    Ok(one(db, Key::SignupDomains)?
        .signup_domains
        .unwrap_or_else(|| bootstrap_list(variable, validate::domain)))
}

/// The daily model tokens of a principal without an override (`None`: no limit): the
/// setting (`0`: no limit), else `variable` (`quota_tokens_per_day`).
pub fn default_tokens_per_day<S: Sql + ?Sized>(
    db: &S,
    variable: Option<&str>,
) -> Result<Option<u64>, ApiError> {
    Ok(
        match one(db, Key::DefaultTokensPerDay)?.default_tokens_per_day {
            Some(n) => Some(n).filter(|n| *n > 0),
            None => eve_usage::quota::default_tokens_per_day(variable),
        },
    )
}

/// Which tools wait for approval: the setting, else `variable` (`tool_approvals`, the same
/// JSON object; a broken one is logged and gives none).
pub fn tool_approvals<S: Sql + ?Sized>(
    db: &S,
    variable: Option<&str>,
) -> Result<BTreeMap<String, ToolApproval>, ApiError> {
    Ok(one(db, Key::ToolApprovals)?
        .tool_approvals
        .unwrap_or_else(|| bootstrap_approvals(variable)))
}

/// The hosts the outbound guard lets through: the setting, else `variable`
/// (`outbound_allowed_hosts`, comma-separated).
pub fn outbound_allowed_hosts<S: Sql + ?Sized>(
    db: &S,
    variable: Option<&str>,
) -> Result<Vec<String>, ApiError> {
    Ok(one(db, Key::OutboundAllowedHosts)?
        .outbound_allowed_hosts
        .unwrap_or_else(|| bootstrap_list(variable, validate::host)))
}

/// A comma- or space-separated variable's valid entries (an invalid one is logged and left
/// out: an operator's typo must not stop the app).
pub fn bootstrap_list(
    variable: Option<&str>,
    item: fn(&str) -> Result<String, String>,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for raw in variable
        .unwrap_or_default()
        .split([',', ' ', '\n'])
        .filter(|s| !s.trim().is_empty())
    {
        match item(raw) {
            Ok(v) if !out.contains(&v) => out.push(v),
            Ok(_) => {}
            Err(e) => eprintln!("settings: a variable's entry is ignored: {e}"),
        }
    }
    out
}

/// The `tool_approvals` variable: a JSON object of tool → policy.
pub fn bootstrap_approvals(variable: Option<&str>) -> BTreeMap<String, ToolApproval> {
    let Some(text) = variable.filter(|v| !v.trim().is_empty()) else {
        return BTreeMap::new();
    };
    let mut s = Settings::default();
    read_value(
        &mut s,
        Key::ToolApprovals,
        text,
        "the variable tool_approvals, as",
    );
    s.tool_approvals.unwrap_or_default()
}

/// What applies without a row, given the deployment's variables by name and what the code
/// builds in: `instructions` (the agent's own) and `default_model` (its first model).
pub fn bootstrap(
    variable: impl Fn(&str) -> Option<String>,
    instructions: &str,
    first_model: Option<String>,
) -> Settings {
    Settings {
        instructions: Some(instructions.to_string()),
        default_model: first_model,
        tool_display: Some(ToolDisplay::Collapsed),
        log_model_requests: Some(false),
        signup_domains: Some(bootstrap_list(
            variable("signup_allowed_domains").as_deref(),
            validate::domain,
        )),
        default_tokens_per_day: Some(
            eve_usage::quota::default_tokens_per_day(variable("quota_tokens_per_day").as_deref())
                .unwrap_or(0),
        ),
        tool_approvals: Some(bootstrap_approvals(variable("tool_approvals").as_deref())),
        outbound_allowed_hosts: Some(bootstrap_list(
            variable("outbound_allowed_hosts").as_deref(),
            validate::host,
        )),
    }
}

/// A checked `PATCH` body: the values to store (canonical JSON text) and the keys to return
/// to their bootstrap (`null`).
#[derive(Debug, Default, PartialEq)]
pub struct Patch {
    pub set: Vec<(Key, String)>,
    pub reset: Vec<Key>,
}

/// Checks a `PATCH` body whole: an object of known keys; each value valid for its key, or
/// `null`; `defaultModel` one of `offered` when the list is known. The first bad key is a
/// 400 that names it.
pub fn check_patch(
    body: &Map<String, Value>,
    offered: Option<&[String]>,
) -> Result<Patch, ApiError> {
    let mut patch = Patch::default();
    for (name, value) in body {
        let bad = |why: &str| ApiError::bad_request(format!("{name}: {why}"));
        let key = Key::parse(name).ok_or_else(|| bad("not a setting"))?;
        if value.is_null() {
            patch.reset.push(key);
            continue;
        }
        let mut one = Settings::default();
        validate::set(&mut one, key, value).map_err(|e| bad(&e))?;
        if let (Some(id), Some(list)) = (one.default_model.as_ref(), offered) {
            if !list.contains(id) {
                return Err(bad(&format!("{id} is not one of the offered models")));
            }
        }
        patch.set.push((key, canonical(&one, key)));
    }
    Ok(patch)
}

/// The stored JSON of `key` in `one` (its canonical, checked form).
fn canonical(one: &Settings, key: Key) -> String {
    let all = serde_json::to_value(one).unwrap_or_default();
    all.get(key.as_str())
        .cloned()
        .unwrap_or_default()
        .to_string()
}

/// Writes a checked patch: the resets first, then every value in one statement; a retry of
/// the same request repairs a write cut between the two.
pub fn apply<S: Sql + ?Sized>(
    db: &S,
    patch: &Patch,
    by: &str,
    now_ms: i64,
) -> Result<(), ApiError> {
    if !patch.reset.is_empty() {
        let keys: Vec<&str> = patch.reset.iter().map(|k| k.as_str()).collect();
        let keys = serde_json::to_string(&keys).unwrap_or_default();
        db.execute(sql::DELETE_MANY, vec![SqlValue::text(keys)])
            .map_err(db_failed)?;
    }
    if !patch.set.is_empty() {
        let pairs: Vec<(&str, &str)> = patch
            .set
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let pairs = serde_json::to_string(&pairs).unwrap_or_default();
        let params = vec![
            SqlValue::text(pairs),
            SqlValue::Integer(now_ms),
            SqlValue::text(by),
        ];
        db.execute(sql::UPSERT_MANY, params).map_err(db_failed)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
