//! `/api/projects` and `/api/projects/:id`.

use eve_api::projects::{CreateProjectRequest, ProjectList, ProjectResponse, UpdateProjectRequest};
use eve_api::ApiError;
use eve_projects::projects;
use eve_spin::chat_request::{body, no_content};
use eve_spin::db::now_ms;
use eve_spin::json;
use eve_store::ids::{chat_id_from_random, CHAT_ID_LEN};
use eve_store::limits::MAX_SMALL_BODY_BYTES;
use spin_sdk::http::{Request, Response};

use crate::admission::Caller;

/// A fresh random id with `prefix` (`prj_`, `file_`).
pub fn new_id(prefix: &str) -> Result<String, ApiError> {
    let mut bytes = [0u8; CHAT_ID_LEN];
    getrandom::fill(&mut bytes).map_err(|_| ApiError::internal("no randomness available"))?;
    Ok(format!("{prefix}{}", chat_id_from_random(bytes)))
}

/// `GET /api/projects`
pub fn list(c: &Caller) -> Result<Response, ApiError> {
    let projects = projects::list(&c.db, &c.principal)?;
    Ok(json(200, &ProjectList { projects }))
}

/// `POST /api/projects` `{ name, instructions? }` → 201 `{ project }`
pub fn create(c: &Caller, req: &Request) -> Result<Response, ApiError> {
    let input: CreateProjectRequest = body(req, MAX_SMALL_BODY_BYTES)?;
    let name = projects::name(&input.name)?;
    let instructions = projects::instructions(input.instructions.as_deref().unwrap_or(""))?;
    let id = new_id("prj_")?;
    let project = projects::create(&c.db, &c.principal, &id, &name, &instructions, now_ms())?;
    Ok(json(201, &ProjectResponse { project }))
}

/// `GET /api/projects/:id`
pub fn get(c: &Caller, id: &str) -> Result<Response, ApiError> {
    let project = projects::get(&c.db, &c.principal, id)?;
    Ok(json(200, &ProjectResponse { project }))
}

/// `PATCH /api/projects/:id` `{ name?, instructions? }` (absent fields are kept).
pub fn update(c: &Caller, id: &str, req: &Request) -> Result<Response, ApiError> {
    let input: UpdateProjectRequest = body(req, MAX_SMALL_BODY_BYTES)?;
    let name = input.name.as_deref().map(projects::name).transpose()?;
    let instructions = input
        .instructions
        .as_deref()
        .map(projects::instructions)
        .transpose()?;
    let project = projects::update(
        &c.db,
        &c.principal,
        id,
        name.as_deref(),
        instructions.as_deref(),
        now_ms(),
    )?;
    Ok(json(200, &ProjectResponse { project }))
}

/// `DELETE /api/projects/:id` → 204: its chats, their sessions and its files go with it.
pub fn delete(c: &Caller, id: &str) -> Result<Response, ApiError> {
    projects::delete(&c.db, &c.principal, id)?;
    Ok(no_content())
}
