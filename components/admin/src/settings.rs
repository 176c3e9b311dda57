//! `GET /api/admin/settings` and `PATCH /api/admin/settings` (docs/runtime.md "Settings"):
//! each parses, calls `eve_runtime::settings` (which checks and holds the SQL) and replies.
//! A change is on the record before it is answered.

use eve_api::settings::SettingsView;
use eve_api::ApiError;
use eve_runtime::settings;
use eve_spin::db::now_ms;
use eve_spin::json;
use serde_json::{Map, Value};
use spin_sdk::http::{Request, Response};

use crate::admission::Admin;

fn variable(name: &str) -> Option<String> {
    spin_sdk::variables::get(name)
        .ok()
        .filter(|v| !v.trim().is_empty())
}

/// The ids of the models the agent offers (`None`: the list cannot be read, so a
/// `defaultModel` is checked for its form only).
fn offered(a: &Admin) -> Option<Vec<String>> {
    crate::usage::configured(a)
        .ok()
        .map(|choices| choices.into_iter().map(|c| c.id).collect())
}

fn view(a: &Admin) -> Result<SettingsView, ApiError> {
    let first = offered(a).and_then(|ids| ids.into_iter().next());
    Ok(SettingsView {
        settings: settings::stored(&a.db)?,
        bootstrap: settings::bootstrap(variable, eve_agent::turn::prompt::BASE_INSTRUCTIONS, first),
    })
}

/// `GET /api/admin/settings` → `{settings, bootstrap}`.
pub fn get(a: &Admin) -> Result<Response, ApiError> {
    Ok(json(200, &view(a)?))
}

/// `PATCH /api/admin/settings` with any of the keys (`null`: back to the bootstrap): all or
/// nothing; the answer is the new `{settings, bootstrap}`.
pub fn patch(req: &Request, a: &Admin) -> Result<Response, ApiError> {
    let body: Map<String, Value> = eve_spin::json_body(req)?;
    let patch = settings::check_patch(&body, offered(a).as_deref())?;
    if patch == settings::Patch::default() {
        return get(a);
    }
    settings::apply(&a.db, &patch, &a.principal, now_ms())?;
    let names = |keys: Vec<settings::Key>| -> Vec<&'static str> {
        keys.into_iter().map(|k| k.as_str()).collect()
    };
    let detail = serde_json::json!({
        "set": names(patch.set.iter().map(|(k, _)| *k).collect()),
        "reset": names(patch.reset.clone()),
    });
    a.record("settings_updated", None, Some(detail))?;
    Ok(json(200, &view(a)?))
}
