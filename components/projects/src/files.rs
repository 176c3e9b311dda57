//! `/api/projects/:id/files` and each file: upload (the raw bytes), list, read, download,
//! mark final, delete. Every route first asks for the project, so another principal's is a
//! 404 before anything else is looked at.

use eve_api::projects::{FileList, FileResponse, FILE_NAME_HEADER};
use eve_api::{ApiError, ErrorCode};
use eve_projects::files::{self, NewFile};
use eve_projects::{names, project_scope, projects};
use eve_spin::chat_request::no_content;
use eve_spin::db::now_ms;
use eve_spin::json;
use spin_sdk::http::{Request, Response};

use crate::admission::{self, Caller};
use crate::projects::new_id;

/// The project's scope and the URL its files are served under (404: not the caller's).
fn scope(c: &Caller, project: &str) -> Result<(String, String), ApiError> {
    projects::get(&c.db, &c.principal, project)?;
    Ok((
        project_scope(project),
        format!("{}/{project}", eve_projects::routes::PREFIX),
    ))
}

/// `GET /api/projects/:id/files`, by name.
pub fn list(c: &Caller, project: &str) -> Result<Response, ApiError> {
    let (scope, url) = scope(c, project)?;
    let files = files::list(&c.db, &c.principal, &scope, &url)?;
    Ok(json(200, &FileList { files }))
}

/// The uploaded file's name: `x-file-name`, percent-encoded UTF-8, made safe (400 when
/// missing or nothing usable is left).
fn file_name(req: &Request) -> Result<String, ApiError> {
    req.header(FILE_NAME_HEADER)
        .and_then(|v| v.as_str())
        .and_then(names::percent_decode)
        .and_then(|n| names::clean(&n))
        .ok_or_else(|| {
            ApiError::bad_request(format!(
                "{FILE_NAME_HEADER} must name the file (percent-encoded UTF-8)"
            ))
        })
}

/// `POST /api/projects/:id/files`: the body is the file, `content-type` its type,
/// `x-file-name` its name → 201 `{ file }`.
pub fn upload(c: &Caller, project: &str, req: &Request) -> Result<Response, ApiError> {
    let (scope, url) = scope(c, project)?;
    let policy = admission::policy();
    let media_type = admission::upload_type(req, &policy)?;
    let name = file_name(req)?;
    let data = req.body().to_vec();
    if data.is_empty() {
        return Err(ApiError::bad_request("the file is empty"));
    }
    if data.len() as u64 > policy.max_bytes {
        return Err(ApiError::new(
            ErrorCode::PayloadTooLarge,
            format!("a file may be at most {} bytes", policy.max_bytes),
        ));
    }
    let new = NewFile {
        principal: &c.principal,
        scope: &scope,
        id: &new_id("file_")?,
        name: &name,
        media_type: &media_type,
        data,
        now: now_ms(),
        default_max: admission::storage_cap(),
    };
    let file = files::upload(&c.db, &url, new)?;
    Ok(json(201, &FileResponse { file }))
}

/// `GET /api/projects/:id/files/:fileId`
pub fn get(c: &Caller, project: &str, id: &str) -> Result<Response, ApiError> {
    let (scope, url) = scope(c, project)?;
    let file = files::get(&c.db, &c.principal, &scope, &url, id)?;
    Ok(json(200, &FileResponse { file }))
}

/// `GET /api/projects/:id/files/:fileId/download`: the bytes, never rendered as a page of
/// this origin (see `files::served_as`).
pub fn download(c: &Caller, project: &str, id: &str) -> Result<Response, ApiError> {
    let (scope, _) = scope(c, project)?;
    let (name, media_type, data) = files::download(&c.db, &c.principal, &scope, id)?;
    let (content_type, disposition) = files::served_as(&name, &media_type, &data);
    Ok(Response::builder()
        .status(200)
        .header("content-type", content_type)
        .header("content-disposition", disposition)
        .header("x-content-type-options", "nosniff")
        .header("content-security-policy", "default-src 'none'; sandbox")
        .header("cache-control", "no-store")
        .body(data)
        .build())
}

/// `POST /api/projects/:id/files/:fileId/final` → `{ file }` marked final.
pub fn mark_final(c: &Caller, project: &str, id: &str) -> Result<Response, ApiError> {
    let (scope, url) = scope(c, project)?;
    let file = files::mark_final(&c.db, &c.principal, &scope, &url, id, now_ms())?;
    Ok(json(200, &FileResponse { file }))
}

/// `DELETE /api/projects/:id/files/:fileId` → 204 (409 while a turn may be using it).
pub fn delete(c: &Caller, project: &str, id: &str) -> Result<Response, ApiError> {
    let (scope, _) = scope(c, project)?;
    files::delete(&c.db, &c.principal, &scope, id, now_ms())?;
    Ok(no_content())
}
