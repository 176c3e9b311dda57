//! Request in, response out, for each `chats` route. A chat's project (issue 21) is
//! `eve_projects::projects`' to decide: these handlers pass `projectId` on.

use eve_api::chat::{CreateChatRequest, CreateChatResponse, RenameChatRequest, RenameChatResponse};
use eve_api::ApiError;
use eve_spin::chat_request::{body, no_content, optional_body};
use eve_spin::db::{now_ms, Db};
use eve_spin::{json, ratelimit};
use eve_store::ids::{chat_id_from_random, is_valid_chat_id, CHAT_ID_LEN};
use eve_store::limits::{chat_create_policy, MAX_SMALL_BODY_BYTES};
use eve_store::transcript::{content_disposition, export_file_name, markdown};
use eve_store::validate::{self, ExportFormat};
use eve_store::ChatStore;
use spin_sdk::http::{Request, Response};

use eve_api::chat::ChatSummary;
use eve_projects::projects;

type Store<'a> = ChatStore<'a, Db>;

/// `GET /api/chats?cursor=&limit=&q=&pinned=` or `?projectId=&cursor=&limit=` (one project's).
pub fn list(store: &Store, req: &Request) -> Result<Response, ApiError> {
    let query = validate::list_query(req.query())?;
    let mut page = match projects::list_filter(req.query(), &query)? {
        Some(project) => projects::chats(
            store.db(),
            store.owner(),
            &project,
            query.limit,
            query.cursor.as_ref(),
        )?,
        None => store.list(&query)?,
    };
    projects::with_projects(store.db(), store.owner(), &mut page.chats)?;
    Ok(json(200, &page))
}

fn with_project(store: &Store, mut chat: ChatSummary) -> Result<ChatSummary, ApiError> {
    projects::with_projects(store.db(), store.owner(), std::slice::from_mut(&mut chat))?;
    Ok(chat)
}

/// `POST /api/chats` `{ pendingUserMessage?, id?, projectId? }` → 201 `{ chat }` (200 when
/// the id existed).
pub fn create(store: &Store, req: &Request) -> Result<Response, ApiError> {
    let principal_id = store.owner();
    let input: CreateChatRequest = optional_body(req, MAX_SMALL_BODY_BYTES)?;
    if let Some(project) = &input.project_id {
        // Before anything is written: another principal's project creates nothing.
        projects::get(store.db(), principal_id, project)?;
    }
    let pending = input
        .pending_user_message
        .as_deref()
        .map(validate::message)
        .transpose()?;
    // A client's id is a key of its principal (see `ChatStore::chat_id_for`).
    let id = match input.id {
        Some(id) if is_valid_chat_id(&id) => store.chat_id_for(&id),
        Some(_) => {
            return Err(ApiError::bad_request(
                "id must be 1 to 64 of A-Z a-z 0-9 _ -",
            ))
        }
        None => new_chat_id()?,
    };
    let per_hour = spin_sdk::variables::get("chat_create_per_hour").ok();
    ratelimit::check_policy(chat_create_policy(per_hour.as_deref()), principal_id)?;
    let (chat, created) = store.create(&id, pending.as_deref(), now_ms())?;
    if let Some(project) = &input.project_id {
        if let Err(e) = projects::set_chat_project(store.db(), principal_id, &id, Some(project)) {
            // The project went away in between: the new chat goes with it.
            if created {
                store.delete(&id).ok();
            }
            return Err(e);
        }
    }
    let chat = with_project(store, chat)?;
    Ok(json(
        if created { 201 } else { 200 },
        &CreateChatResponse { chat },
    ))
}

fn new_chat_id() -> Result<String, ApiError> {
    let mut bytes = [0u8; CHAT_ID_LEN];
    getrandom::fill(&mut bytes).map_err(|_| ApiError::internal("no randomness available"))?;
    Ok(chat_id_from_random(bytes))
}

/// `GET /api/chats/:id?before=&limit=`: one window of the log (the latest by default).
pub fn get(store: &Store, id: &str, req: &Request) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let query = validate::window_query(req.query(), id)?;
    let mut detail = store.get_window(id, &query)?;
    detail.chat = with_project(store, detail.chat)?;
    Ok(json(200, &detail))
}

/// `PATCH /api/chats/:id` `{ title?, projectId? }`: renames, and/or moves the chat into the
/// caller's project (`"<id>"`) or out of any (`null`).
pub fn update(store: &Store, id: &str, req: &Request) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let input: RenameChatRequest = body(req, MAX_SMALL_BODY_BYTES)?;
    let title = input
        .title
        .as_deref()
        .map(eve_store::title::normalize_title)
        .transpose()
        .map_err(ApiError::bad_request)?;
    if title.is_none() && input.project_id.is_none() {
        return Err(ApiError::bad_request("give a title, a projectId or both"));
    }
    // The chat must be the caller's whatever the move (a move out writes nothing otherwise).
    let chat = store.summary(id)?;
    if let Some(project) = &input.project_id {
        projects::set_chat_project(store.db(), store.owner(), id, project.as_deref())?;
    }
    let chat = match title {
        Some(title) => store.rename(id, &title)?,
        None => chat,
    };
    Ok(json(
        200,
        &RenameChatResponse {
            chat: with_project(store, chat)?,
        },
    ))
}

/// `DELETE /api/chats/:id` → 204
pub fn delete(store: &Store, id: &str) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    store.delete(id)?;
    Ok(no_content())
}

/// `GET /api/chats/:id/export?format=md|json` → a download.
pub fn export(store: &Store, id: &str, req: &Request) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let format = validate::export_format(req.query())?;
    let export = store.export(id, now_ms())?;
    let (content_type, extension, body) = match format {
        ExportFormat::Markdown => (
            "text/markdown; charset=utf-8",
            "md",
            markdown(&export.chat, &export.events).into_bytes(),
        ),
        ExportFormat::Json => (
            "application/json",
            "json",
            serde_json::to_vec_pretty(&export).map_err(|_| ApiError::internal("export failed"))?,
        ),
    };
    Ok(Response::builder()
        .status(200)
        .header("content-type", content_type)
        .header(
            "content-disposition",
            content_disposition(&export_file_name(&export.chat.title, extension)),
        )
        .header("cache-control", "no-store")
        .body(body)
        .build())
}
