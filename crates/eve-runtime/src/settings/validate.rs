//! What each setting accepts (docs/runtime.md "Settings"): a value is checked and put in its
//! canonical form (trimmed, lowercased names) before anything is written; the error names the
//! key and says what it expects.

use std::collections::BTreeMap;

use eve_api::settings::{Settings, ToolApproval, ToolDisplay};
use serde_json::Value;

use super::Key;

/// The largest `instructions`, in bytes (eve's `instructions.md` is a few KiB).
pub const MAX_INSTRUCTIONS_BYTES: usize = 32 * 1024;

/// The most entries a list setting holds.
const MAX_LIST: usize = 200;

/// Sets `key` in `into` from `value` (not `null`), or says why it cannot.
pub fn set(into: &mut Settings, key: Key, value: &Value) -> Result<(), String> {
    match key {
        Key::Instructions => into.instructions = Some(instructions(value)?),
        Key::DefaultModel => into.default_model = Some(model_id(value)?),
        Key::ToolDisplay => {
            into.tool_display = Some(typed::<ToolDisplay>(value, "\"collapsed\" or \"full\"")?)
        }
        Key::LogModelRequests => {
            into.log_model_requests = Some(typed::<bool>(value, "true or false")?)
        }
        Key::SignupDomains => into.signup_domains = Some(list(value, domain)?),
        Key::DefaultTokensPerDay => {
            into.default_tokens_per_day =
                Some(typed::<u64>(value, "a whole number, 0 for no limit")?)
        }
        Key::ToolApprovals => into.tool_approvals = Some(approvals(value)?),
        Key::OutboundAllowedHosts => into.outbound_allowed_hosts = Some(list(value, host)?),
    }
    Ok(())
}

fn typed<T: serde::de::DeserializeOwned>(value: &Value, expected: &str) -> Result<T, String> {
    serde_json::from_value(value.clone()).map_err(|_| format!("expected {expected}"))
}

fn instructions(value: &Value) -> Result<String, String> {
    let text: String = typed(value, "a string")?;
    if text.trim().is_empty() {
        return Err("must not be empty (null returns to the built-in instructions)".into());
    }
    if text.len() > MAX_INSTRUCTIONS_BYTES {
        return Err(format!("at most {MAX_INSTRUCTIONS_BYTES} bytes"));
    }
    Ok(text)
}

/// A model id as the agent lists them (`<provider>/<model>`); whether it is offered is
/// checked where the list is known.
fn model_id(value: &Value) -> Result<String, String> {
    let id: String = typed(value, "a model id string")?;
    let id = id.trim().to_string();
    let ok = !id.is_empty()
        && id.len() <= 200
        && !id.chars().any(|c| c.is_whitespace() || c.is_control());
    ok.then_some(id)
        .ok_or_else(|| "expected a model id such as \"openai/gpt-4o\"".into())
}

fn list(value: &Value, item: fn(&str) -> Result<String, String>) -> Result<Vec<String>, String> {
    let items: Vec<String> = typed(value, "a list of strings")?;
    if items.len() > MAX_LIST {
        return Err(format!("at most {MAX_LIST} entries"));
    }
    let mut out: Vec<String> = Vec::new();
    for raw in &items {
        let canonical = item(raw)?;
        if !out.contains(&canonical) {
            out.push(canonical);
        }
    }
    Ok(out)
}

/// `example.com`: dot-separated labels of letters, digits and inner hyphens.
pub fn domain(raw: &str) -> Result<String, String> {
    let d = raw.trim().trim_end_matches('.').to_ascii_lowercase();
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    if d.len() <= 253 && d.contains('.') && d.split('.').all(label_ok) {
        Ok(d)
    } else {
        Err(format!("{raw:?} is not a domain such as example.com"))
    }
}

/// `host` or `host:port`: a name (one label allowed: `localhost`), an IPv4 address or an
/// IPv6 address in brackets, as a URL writes it.
pub fn host(raw: &str) -> Result<String, String> {
    let bad = || format!("{raw:?} is not a host or host:port");
    let h = raw.trim().to_ascii_lowercase();
    let (name, port) = split_port(&h);
    if let Some(p) = port {
        p.parse::<u16>().ok().filter(|n| *n > 0).ok_or_else(bad)?;
    }
    let ok = match name.strip_prefix('[').and_then(|n| n.strip_suffix(']')) {
        Some(v6) => v6.parse::<std::net::Ipv6Addr>().is_ok(),
        None => {
            name.parse::<std::net::Ipv4Addr>().is_ok()
                || (!name.is_empty() && domain(&format!("{name}.x")).is_ok())
        }
    };
    ok.then_some(h.clone()).ok_or_else(bad)
}

/// `[v6]:443` → (`[v6]`, `443`); `name:443` → (`name`, `443`).
fn split_port(h: &str) -> (&str, Option<&str>) {
    if h.starts_with('[') {
        return match h.rsplit_once("]:") {
            Some((n, p)) => (&h[..n.len() + 1], Some(p)),
            None => (h, None),
        };
    }
    match h.rsplit_once(':') {
        Some((n, p)) => (n, Some(p)),
        None => (h, None),
    }
}

fn approvals(value: &Value) -> Result<BTreeMap<String, ToolApproval>, String> {
    let map: BTreeMap<String, Value> = typed(value, "an object of tool name → policy")?;
    let mut out = BTreeMap::new();
    for (tool, policy) in map {
        let name_ok = !tool.is_empty()
            && tool.len() <= 128
            && tool
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.:".contains(c));
        if !name_ok {
            return Err(format!("{tool:?} is not a tool name"));
        }
        let p = typed::<ToolApproval>(&policy, "")
            .map_err(|_| format!("{tool}: expected \"never\", \"once\" or \"always\""))?;
        out.insert(tool, p);
    }
    Ok(out)
}
