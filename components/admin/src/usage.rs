//! `/api/admin/usage`, `/api/admin/users/:id/usage`, `/api/admin/users/:id/quota` and
//! `/api/admin/models`: each parses, calls `eve_usage` (which decides and holds the SQL) and
//! replies. How much people store and use, never what.

use eve_api::usage::{MemberModelsRequest, ModelOption, Quota};
use eve_api::{ApiError, ErrorCode};
use eve_spin::db::now_ms;
use eve_spin::json;
use eve_store::limits::storage_quota;
use eve_usage::{access, quota, report};
use spin_sdk::http::{Request, Response};

use crate::admission::{query_param, Admin};

fn variable(name: &str) -> Option<String> {
    spin_sdk::variables::get(name).ok()
}

/// The deployment's defaults, as the agent and the chat log apply them: the
/// `defaultTokensPerDay` setting, else `quota_tokens_per_day` when a positive integer, else
/// no token limit; `principal_max_bytes` else 1 GiB.
fn defaults(a: &Admin) -> Result<Quota, ApiError> {
    let storage = storage_quota(None, variable("principal_max_bytes").as_deref());
    let variable = variable(quota::TOKENS_PER_DAY_VARIABLE);
    Ok(Quota {
        tokens_per_day: eve_runtime::settings::default_tokens_per_day(&a.db, variable.as_deref())?,
        storage_bytes: Some(storage.principal_bytes),
    })
}

/// The models the agent offers now (`llm_provider`, `llm_model`, `llm_models`, then the
/// admins' providers; the ids the agent runs), default first. A list the agent could not read
/// either is 503.
pub(crate) fn configured(a: &Admin) -> Result<Vec<ModelOption>, ApiError> {
    let lookup = |name: &str| match name {
        "llm_provider" | "llm_model" | "llm_models" | "outbound_allowed_hosts" => variable(name),
        _ => None,
    };
    let choices = eve_agent::offered::choices(lookup, &a.db)
        .map_err(|e| ApiError::new(ErrorCode::NotConfigured, e.to_string()))?;
    Ok(choices
        .into_iter()
        .map(|c| ModelOption {
            id: c.id,
            label: c.label,
        })
        .collect())
}

/// `GET /api/admin/usage?days=` (1–366, default 30).
pub fn overview(req: &Request, a: &Admin) -> Result<Response, ApiError> {
    let days = report::parse_days(query_param(req, "days").as_deref())?;
    Ok(json(200, &report::overview(&a.db, days, defaults(a)?)?))
}

/// `GET /api/admin/users/:id/usage?days=`: tokens per day and model.
pub fn user_days(req: &Request, a: &Admin, id: &str) -> Result<Response, ApiError> {
    let days = report::parse_days(query_param(req, "days").as_deref())?;
    Ok(json(200, &report::user_days(&a.db, id, days)?))
}

/// `PUT /api/admin/users/:id/quota` `{tokensPerDay, storageBytes}` (null: the default). The
/// change applies to the account's next request; it is on the record before it is answered.
pub fn set_quota(req: &Request, a: &Admin, id: &str) -> Result<Response, ApiError> {
    let body: Quota = eve_spin::json_body(req)?;
    let stored = report::set_quota(&a.db, id, &body)?;
    let detail = serde_json::to_value(stored).ok();
    a.record(
        "quota_updated",
        Some(&eve_api::auth::account_principal_id(id)),
        detail,
    )?;
    Ok(json(200, &stored))
}

/// `GET /api/admin/models`.
pub fn models(a: &Admin) -> Result<Response, ApiError> {
    Ok(json(200, &access::member_models(&a.db, &configured(a)?)?))
}

/// `PUT /api/admin/models` `{memberModels: [id…] | null}`.
pub fn set_models(req: &Request, a: &Admin) -> Result<Response, ApiError> {
    let body: MemberModelsRequest = eve_spin::json_body(req)?;
    let configured = configured(a)?;
    let set = access::set_member_models(&a.db, &body, &configured, &a.principal, now_ms())?;
    let detail = serde_json::json!({ "memberModels": set.member_models });
    a.record("models_updated", None, Some(detail))?;
    Ok(json(200, &set))
}
