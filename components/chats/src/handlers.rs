//! Request in, response out, for each `chats` route.

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

type Store<'a> = ChatStore<'a, Db>;

/// `GET /api/chats?cursor=&limit=&q=`
pub fn list(store: &Store, req: &Request) -> Result<Response, ApiError> {
    let query = validate::list_query(req.query())?;
    Ok(json(200, &store.list(&query)?))
}

/// `POST /api/chats` `{ pendingUserMessage?, id? }` → 201 `{ chat }` (200 when the id existed).
pub fn create(store: &Store, principal_id: &str, req: &Request) -> Result<Response, ApiError> {
    let input: CreateChatRequest = optional_body(req, MAX_SMALL_BODY_BYTES)?;
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

/// `GET /api/chats/:id`
pub fn get(store: &Store, id: &str) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    Ok(json(200, &store.get(id)?))
}

/// `PATCH /api/chats/:id` `{ title }`
pub fn rename(store: &Store, id: &str, req: &Request) -> Result<Response, ApiError> {
    let id = validate::chat_id(id)?;
    let input: RenameChatRequest = body(req, MAX_SMALL_BODY_BYTES)?;
    let title = eve_store::title::normalize_title(&input.title).map_err(ApiError::bad_request)?;
    Ok(json(
        200,
        &RenameChatResponse {
            chat: store.rename(id, &title)?,
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
