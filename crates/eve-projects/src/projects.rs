//! A principal's projects and the chats in them. Another principal's project answers 404,
//! exactly like one that does not exist.

use eve_api::chat::{ChatPage, ChatSummary};
use eve_api::projects::Project;
use eve_api::ApiError;
use eve_store::cursor::ChatCursor;
use eve_store::sql::{Sql, SqlRow, SqlValue};
use eve_store::time::{format_iso_ms, Millis};
use eve_store::validate::ListQuery;

use crate::sql::*;
use crate::{exec, int, text};

/// The longest project name, and the longest instructions.
pub const MAX_NAME_CHARS: usize = 200;
pub const MAX_INSTRUCTIONS_CHARS: usize = 8000;
/// The most projects one principal keeps.
pub const MAX_PROJECTS: i64 = 200;

fn not_found() -> ApiError {
    ApiError::not_found("project not found")
}

/// A name as kept: whitespace collapsed, 1 to [`MAX_NAME_CHARS`] characters, no controls.
pub fn name(raw: &str) -> Result<String, ApiError> {
    let n = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    if n.is_empty() || n.chars().count() > MAX_NAME_CHARS || n.chars().any(char::is_control) {
        return Err(ApiError::bad_request(format!(
            "name must be 1 to {MAX_NAME_CHARS} characters"
        )));
    }
    Ok(n)
}

/// Instructions as kept: trimmed, at most [`MAX_INSTRUCTIONS_CHARS`] (empty: none).
pub fn instructions(raw: &str) -> Result<String, ApiError> {
    let t = raw.trim();
    if t.chars().count() > MAX_INSTRUCTIONS_CHARS {
        return Err(ApiError::bad_request(format!(
            "instructions must be at most {MAX_INSTRUCTIONS_CHARS} characters"
        )));
    }
    Ok(t.to_string())
}

fn project(row: &SqlRow) -> Project {
    Project {
        id: text(row, 0),
        name: text(row, 1),
        instructions: text(row, 2),
        created_at: format_iso_ms(int(row, 3)),
        updated_at: format_iso_ms(int(row, 4)),
    }
}

/// Creates a project (`id` fresh and random); 409 past [`MAX_PROJECTS`].
pub fn create<S: Sql>(
    db: &S,
    principal: &str,
    id: &str,
    name: &str,
    instructions: &str,
    now: Millis,
) -> Result<Project, ApiError> {
    let count = exec(db, COUNT_PROJECTS, vec![principal.into()])?;
    if count.first().map_or(0, |r| int(r, 0)) >= MAX_PROJECTS {
        return Err(ApiError::new(
            eve_api::ErrorCode::Conflict,
            format!("at most {MAX_PROJECTS} projects: delete one first"),
        ));
    }
    let params = vec![
        id.into(),
        principal.into(),
        name.into(),
        instructions.into(),
        now.into(),
    ];
    let rows = exec(db, INSERT_PROJECT, params)?;
    rows.first()
        .map(project)
        .ok_or_else(|| ApiError::internal("project not created"))
}

pub fn get<S: Sql>(db: &S, principal: &str, id: &str) -> Result<Project, ApiError> {
    let rows = exec(db, SELECT_PROJECT, vec![id.into(), principal.into()])?;
    rows.first().map(project).ok_or_else(not_found)
}

pub fn list<S: Sql>(db: &S, principal: &str) -> Result<Vec<Project>, ApiError> {
    let rows = exec(
        db,
        LIST_PROJECTS,
        vec![principal.into(), MAX_PROJECTS.into()],
    )?;
    Ok(rows.iter().map(project).collect())
}

/// Renames and/or edits the instructions (`None` keeps each).
pub fn update<S: Sql>(
    db: &S,
    principal: &str,
    id: &str,
    name: Option<&str>,
    instructions: Option<&str>,
    now: Millis,
) -> Result<Project, ApiError> {
    let params = vec![
        id.into(),
        principal.into(),
        SqlValue::opt_text(name),
        SqlValue::opt_text(instructions),
        now.into(),
    ];
    let rows = exec(db, UPDATE_PROJECT, params)?;
    rows.first().map(project).ok_or_else(not_found)
}

/// Deletes the project with its chats (their sessions, events, attachments) and its files,
/// in one statement. A retry of a delete that landed is a 404.
pub fn delete<S: Sql>(db: &S, principal: &str, id: &str) -> Result<(), ApiError> {
    let rows = exec(db, DELETE_PROJECT, vec![id.into(), principal.into()])?;
    if rows.is_empty() {
        return Err(not_found());
    }
    Ok(())
}

/// Puts the principal's chat into the principal's project (`Some`), or takes it out
/// (`None`). 404 when the chat or the project is not the principal's.
pub fn set_chat_project<S: Sql>(
    db: &S,
    principal: &str,
    chat_id: &str,
    project_id: Option<&str>,
) -> Result<(), ApiError> {
    match project_id {
        Some(p) => {
            let rows = exec(
                db,
                SET_CHAT_PROJECT,
                vec![chat_id.into(), principal.into(), p.into()],
            )?;
            if rows.is_empty() {
                return Err(not_found());
            }
        }
        None => {
            exec(
                db,
                CLEAR_CHAT_PROJECT,
                vec![chat_id.into(), principal.into()],
            )?;
        }
    }
    Ok(())
}

/// The project of the principal's chat, if any.
pub fn chat_project<S: Sql>(
    db: &S,
    principal: &str,
    chat_id: &str,
) -> Result<Option<String>, ApiError> {
    let rows = exec(
        db,
        SELECT_CHAT_PROJECT,
        vec![chat_id.into(), principal.into()],
    )?;
    Ok(rows.first().map(|r| text(r, 0)))
}

/// `?projectId=` of `GET /api/chats`: the project whose chats to list (`None`: the whole
/// list). It pages like the list (`cursor`, `limit`); with `q` or `pinned` it is a 400.
pub fn list_filter(raw_query: &str, query: &ListQuery) -> Result<Option<String>, ApiError> {
    let Some((_, id)) =
        form_urlencoded::parse(raw_query.as_bytes()).find(|(k, _)| k == "projectId")
    else {
        return Ok(None);
    };
    if id.is_empty() {
        return Err(ApiError::bad_request("projectId must not be empty"));
    }
    if query.search.is_some() || query.pinned {
        return Err(ApiError::bad_request(
            "projectId lists one project's chats: no q or pinned with it",
        ));
    }
    Ok(Some(id.into_owned()))
}

/// Says of each chat which project it is in (`null`: none), in one statement: the chat
/// list's entries, and what create, get and patch answer.
pub fn with_projects<S: Sql>(
    db: &S,
    principal: &str,
    chats: &mut [ChatSummary],
) -> Result<(), ApiError> {
    if chats.is_empty() {
        return Ok(());
    }
    let ids: Vec<&str> = chats.iter().map(|c| c.id.as_str()).collect();
    let ids = serde_json::to_string(&ids).expect("ids serialize");
    let rows = exec(db, CHATS_PROJECTS, vec![principal.into(), ids.into()])?;
    for chat in chats.iter_mut() {
        let project = rows.iter().find(|r| text(r, 0) == chat.id);
        chat.project_id = Some(project.map(|r| text(r, 1)));
    }
    Ok(())
}

/// One page of a project's chats, in the chat list's order and with its cursor.
pub fn chats<S: Sql>(
    db: &S,
    principal: &str,
    project_id: &str,
    limit: usize,
    cursor: Option<&ChatCursor>,
) -> Result<ChatPage, ApiError> {
    get(db, principal, project_id)?;
    let fetch = i64::try_from(limit).unwrap_or(i64::MAX).saturating_add(1);
    let (at, id) = match cursor {
        Some(c) => (
            SqlValue::Integer(c.updated_at),
            SqlValue::text(c.id.clone()),
        ),
        None => (SqlValue::Null, SqlValue::Null),
    };
    let params = vec![principal.into(), project_id.into(), fetch.into(), at, id];
    let rows = exec(db, LIST_PROJECT_CHATS, params)?;
    let mut chats: Vec<(i64, ChatSummary)> = rows
        .iter()
        .map(|r| {
            let s = ChatSummary {
                id: text(r, 0),
                title: text(r, 1),
                created_at: format_iso_ms(int(r, 2)),
                updated_at: format_iso_ms(int(r, 3)),
                project_id: Some(Some(project_id.to_string())),
            };
            (int(r, 3), s)
        })
        .collect();
    let more = chats.len() > limit;
    chats.truncate(limit);
    let next_cursor = chats
        .last()
        .filter(|_| more)
        .map(|(at, last)| ChatCursor::after(*at, &last.id).encode());
    Ok(ChatPage {
        chats: chats.into_iter().map(|(_, s)| s).collect(),
        next_cursor,
    })
}

/// The project a session works in (through the chat that holds it), with its instructions.
pub fn session_project<S: Sql>(
    db: &S,
    principal: &str,
    session_id: &str,
) -> Result<Option<(String, String)>, String> {
    let rows = db.execute(SESSION_PROJECT, vec![session_id.into(), principal.into()])?;
    Ok(rows.first().map(|r| (text(r, 0), text(r, 1))))
}

/// Records that a new session belongs to the principal's chat (nothing when it is not theirs).
pub fn record_chat_session<S: Sql>(
    db: &S,
    principal: &str,
    chat_id: &str,
    session_id: &str,
) -> Result<(), String> {
    db.execute(
        RECORD_CHAT_SESSION,
        vec![chat_id.into(), session_id.into(), principal.into()],
    )
    .map(|_| ())
}
