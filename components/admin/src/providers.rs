//! `/api/admin/providers*` and `/api/admin/secrets/rotate` (docs/runtime.md): each parses,
//! calls `eve_runtime` (which decides and holds the SQL) and replies; every change is on the
//! audit record, never with a key. "Test connection" calls the provider with the agent's own
//! Spin platform, so it meets the same `allowed_outbound_hosts` a turn does.

use eve_agent::config::ModelChoice;
use eve_agent::providers::probe;
use eve_agent::service::env::{AgentEnv, Method};
use eve_agent_spin::Spin;
use eve_api::providers::{Provider, ProviderCreate, ProviderList, ProviderPatch};
use eve_api::usage::ModelOption;
use eve_api::{ApiError, ErrorCode};
use eve_runtime::providers;
use eve_runtime::sealed::Keys;
use eve_spin::db::now_ms;
use eve_spin::json;
use serde_json::json as detail;
use spin_sdk::http::{Request, Response};

use crate::admission::Admin;

fn variable(name: &str) -> Option<String> {
    spin_sdk::variables::get(name).ok()
}

/// The sealing keys (`None`: `secrets_key` unset); a malformed one is 503 naming it.
fn keys() -> Result<Option<Keys>, ApiError> {
    let (current, previous) = (variable("secrets_key"), variable("secrets_key_previous"));
    Keys::from_vars(current.as_deref(), previous.as_deref())
        .map_err(|e| ApiError::new(ErrorCode::NotConfigured, e))
}

/// The hosts an admin allowed past the outbound guard.
fn allowed(a: &Admin) -> Result<Vec<String>, ApiError> {
    providers::allowed_hosts(&a.db, variable("outbound_allowed_hosts").as_deref())
        .map_err(|e| eve_store::sql::database_error(&e))
}

/// The variables' models (what the data is listed beside, read-only).
fn bootstrap() -> Result<Vec<ModelChoice>, ApiError> {
    eve_agent::config::models(|name| match name {
        "llm_provider" | "llm_model" | "llm_models" => variable(name),
        _ => None,
    })
    .map_err(|e| ApiError::new(ErrorCode::NotConfigured, e))
}

/// What the record says of a provider: never its key.
fn described(p: &Provider) -> serde_json::Value {
    let models: Vec<&str> = p.models.iter().map(|m| m.model.as_str()).collect();
    detail!({"id": p.id, "name": p.name, "kind": p.kind, "baseUrl": p.base_url,
        "hasKey": p.has_key, "models": models})
}

/// `GET /api/admin/providers`.
pub fn list(a: &Admin) -> Result<Response, ApiError> {
    let keys = keys()?;
    let bootstrap: Vec<ModelOption> = bootstrap()?
        .into_iter()
        .map(|c| ModelOption {
            id: c.id,
            label: c.label,
        })
        .collect();
    let ids: Vec<String> = bootstrap.iter().map(|m| m.id.clone()).collect();
    let providers = providers::list(&a.db, keys.as_ref(), &ids)?;
    Ok(json(
        200,
        &ProviderList {
            bootstrap,
            providers,
            secrets_key_set: keys.is_some(),
        },
    ))
}

/// `POST /api/admin/providers`: 201.
pub fn create(req: &Request, a: &Admin) -> Result<Response, ApiError> {
    let body: ProviderCreate = eve_spin::json_body(req)?;
    let p = providers::create(&a.db, keys()?.as_ref(), &allowed(a)?, &body, now_ms())?;
    a.record("provider_created", None, Some(described(&p)))?;
    Ok(json(201, &p))
}

/// `PATCH /api/admin/providers/:id`.
pub fn patch(req: &Request, a: &Admin, id: &str) -> Result<Response, ApiError> {
    let body: ProviderPatch = eve_spin::json_body(req)?;
    let p = providers::patch(&a.db, keys()?.as_ref(), &allowed(a)?, id, &body, now_ms())?;
    let mut d = described(&p);
    d["keyChanged"] = body.api_key.is_some().into();
    a.record("provider_updated", None, Some(d))?;
    Ok(json(200, &p))
}

/// `DELETE /api/admin/providers/:id`: 204 (deleting twice is fine).
pub fn delete(a: &Admin, id: &str) -> Result<Response, ApiError> {
    if providers::delete(&a.db, id)? {
        a.record("provider_deleted", None, Some(detail!({"id": id})))?;
    }
    Ok(Response::builder()
        .status(204)
        .header("cache-control", "no-store")
        .build())
}

/// `POST /api/admin/providers/:id/test`: one real call to the provider's models endpoint;
/// 200 with what happened (the provider's answer or error), whatever it was.
pub fn test(a: &Admin, id: &str) -> Result<Response, ApiError> {
    let keys = keys()?;
    let (p, key) = providers::with_key(&a.db, keys.as_ref(), id)?;
    if let Err(e) = eve_runtime::outbound::check(&p.base_url, &allowed(a)?) {
        return Err(ApiError::bad_request(format!("baseUrl: {e}")));
    }
    let (url, headers) = probe::models_request(p.kind, &p.base_url, key.as_deref());
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let answer = match Spin.fetch(Method::Get, &url, &headers, b"") {
        Ok((status, body)) => probe::read_answer(status, &body),
        Err(e) => probe::unreachable(&url, &e),
    };
    let d = detail!({"id": p.id, "name": p.name, "ok": answer.ok, "status": answer.status});
    a.record("provider_tested", None, Some(d))?;
    Ok(json(200, &answer))
}

/// `POST /api/admin/secrets/rotate`: every secret re-sealed under `secrets_key`.
pub fn rotate(a: &Admin) -> Result<Response, ApiError> {
    let keys = keys()?.ok_or_else(|| {
        ApiError::new(
            ErrorCode::Conflict,
            "set the secrets_key variable before rotating",
        )
    })?;
    let rotation = eve_runtime::rotate(&a.db, &keys)?;
    let d = serde_json::to_value(rotation).ok();
    a.record("secrets_rotated", None, d)?;
    Ok(json(200, &rotation))
}
