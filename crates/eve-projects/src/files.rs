//! A scope's files ('project:<id>' or 'session:<id>'): the user's uploads, the agent's temp
//! files, and the files marked final. Every write is one statement with its checks inside it
//! (the owner, the name free, the principal's storage), so a refusal changes nothing and a
//! cut-off write leaves the old file or the new one, never a torn one.

use eve_api::projects::{FilePreview, FileSource, ProjectFile};
use eve_api::{ApiError, ErrorCode};
use eve_store::sql::{Sql, SqlRow, SqlValue};
use eve_store::time::{format_iso_ms, Millis};

use crate::sql::*;
use crate::{exec, int, preview, text};

/// A file's bytes as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub name: String,
    pub media_type: String,
    pub source: FileSource,
    pub data: Vec<u8>,
}

/// A file about to be stored: the user's upload or the agent's write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewFile<'a> {
    pub principal: &'a str,
    /// `project:<id>` or `session:<id>`.
    pub scope: &'a str,
    /// Its id if it is new (a replaced temp file keeps its own).
    pub id: &'a str,
    /// Clean already ([`crate::names::clean`]).
    pub name: &'a str,
    pub media_type: &'a str,
    pub data: Vec<u8>,
    pub now: Millis,
    /// The principal's storage cap unless its account overrides it (`principal_max_bytes`).
    pub default_max: u64,
}

impl NewFile<'_> {
    /// The parameters of [`INSERT_UPLOAD`] and [`UPSERT_TEMP`], in their order.
    fn into_params(self) -> Vec<SqlValue> {
        let preview = preview_json(self.media_type, &self.data);
        vec![
            self.id.into(),
            self.principal.into(),
            self.scope.into(),
            self.name.into(),
            self.media_type.into(),
            SqlValue::Blob(self.data),
            self.now.into(),
            self.default_max.into(),
            preview.into(),
        ]
    }
}

/// A blob column's bytes (a text value's too; NULL is empty).
fn bytes(value: Option<SqlValue>) -> Vec<u8> {
    match value {
        Some(SqlValue::Blob(b)) => b,
        Some(SqlValue::Text(t)) => t.into_bytes(),
        _ => Vec::new(),
    }
}

fn not_found() -> ApiError {
    ApiError::not_found("file not found")
}

fn storage_full() -> ApiError {
    ApiError::new(
        ErrorCode::PayloadTooLarge,
        "your storage is full: delete chats or files to free space",
    )
}

/// Where a file's bytes are served (`scope_url`: `/api/projects/<id>`).
pub fn download_url(scope_url: &str, file_id: &str) -> String {
    format!("{scope_url}/files/{file_id}/download")
}

/// A row of [`crate::sql::LIST_FILES`]'s columns as the list shows it.
fn file(row: &SqlRow, scope_url: &str) -> ProjectFile {
    let id = text(row, 0);
    let url = download_url(scope_url, &id);
    let size = int(row, 3).max(0) as u64;
    let mut preview: FilePreview =
        serde_json::from_str(&text(row, 5)).unwrap_or(FilePreview::Other);
    if let FilePreview::Image { thumbnail_url } = &mut preview {
        *thumbnail_url = (size as usize <= preview::MAX_THUMBNAIL_BYTES).then(|| url.clone());
    }
    ProjectFile {
        name: text(row, 1),
        media_type: text(row, 2),
        size,
        source: FileSource::parse(&text(row, 4)).unwrap_or(FileSource::Temp),
        preview,
        download_url: url,
        created_at: format_iso_ms(int(row, 6)),
        updated_at: format_iso_ms(int(row, 7)),
        id,
    }
}

fn preview_json(media_type: &str, data: &[u8]) -> String {
    serde_json::to_string(&preview::preview(media_type, data)).expect("previews serialize")
}

/// What a principal may store in all (`default_max`: `principal_max_bytes`; an account's
/// override wins) and what it stores now.
pub fn storage<S: Sql>(db: &S, principal: &str, default_max: u64) -> Result<(u64, u64), ApiError> {
    let rows = exec(db, STORAGE_USED, vec![principal.into(), default_max.into()])?;
    let r = rows
        .first()
        .ok_or_else(|| ApiError::internal("no storage row"))?;
    Ok((int(r, 0).max(0) as u64, int(r, 1).max(0) as u64))
}

/// The user's upload (its type checked by the policy already), listed under `scope_url`.
pub fn upload<S: Sql>(db: &S, scope_url: &str, new: NewFile<'_>) -> Result<ProjectFile, ApiError> {
    let (principal, name, default_max) = (new.principal, new.name, new.default_max);
    let size = new.data.len() as u64;
    let rows = exec(db, INSERT_UPLOAD, new.into_params())?;
    if let Some(row) = rows.first() {
        return Ok(file(row, scope_url));
    }
    let (used, max) = storage(db, principal, default_max)?;
    if used + size > max {
        return Err(storage_full());
    }
    Err(ApiError::new(
        ErrorCode::Conflict,
        format!("a file named {name:?} exists already: delete it or rename yours"),
    ))
}

pub fn list<S: Sql>(
    db: &S,
    principal: &str,
    scope: &str,
    scope_url: &str,
) -> Result<Vec<ProjectFile>, ApiError> {
    let rows = exec(db, LIST_FILES, vec![scope.into(), principal.into()])?;
    Ok(rows.iter().map(|r| file(r, scope_url)).collect())
}

pub fn get<S: Sql>(
    db: &S,
    principal: &str,
    scope: &str,
    scope_url: &str,
    id: &str,
) -> Result<ProjectFile, ApiError> {
    let rows = exec(
        db,
        SELECT_FILE,
        vec![id.into(), scope.into(), principal.into()],
    )?;
    rows.first()
        .map(|r| file(r, scope_url))
        .ok_or_else(not_found)
}

/// The bytes of a file, with its name and type.
pub fn download<S: Sql>(
    db: &S,
    principal: &str,
    scope: &str,
    id: &str,
) -> Result<(String, String, Vec<u8>), ApiError> {
    let rows = exec(
        db,
        DOWNLOAD_FILE,
        vec![id.into(), scope.into(), principal.into()],
    )?;
    let mut row = rows.into_iter().next().ok_or_else(not_found)?;
    let data = bytes(row.pop());
    Ok((text(&row, 0), text(&row, 1), data))
}

/// How a download is served: (`content-type`, `content-disposition`). Only an image whose
/// bytes match its type is shown as itself (inline); anything else is an attachment of
/// `application/octet-stream`, so no stored file is ever rendered as a page of this origin.
pub fn served_as(name: &str, media_type: &str, data: &[u8]) -> (String, String) {
    let m = media_type.trim().to_ascii_lowercase();
    if preview::is_image(&m, data) {
        return (m, crate::names::content_disposition(name, true));
    }
    (
        "application/octet-stream".to_string(),
        crate::names::content_disposition(name, false),
    )
}

/// Marks a temp file final: the agent can no longer write it. 409 for the user's upload.
pub fn mark_final<S: Sql>(
    db: &S,
    principal: &str,
    scope: &str,
    scope_url: &str,
    id: &str,
    now: Millis,
) -> Result<ProjectFile, ApiError> {
    let rows = exec(
        db,
        MARK_FINAL,
        vec![id.into(), scope.into(), principal.into(), now.into()],
    )?;
    if let Some(row) = rows.first() {
        return Ok(file(row, scope_url));
    }
    exists(db, principal, scope, id)?;
    Err(ApiError::new(
        ErrorCode::Conflict,
        "only a file the agent wrote (temp) can be marked final",
    ))
}

fn exists<S: Sql>(db: &S, principal: &str, scope: &str, id: &str) -> Result<(), ApiError> {
    let rows = exec(
        db,
        FILE_EXISTS,
        vec![id.into(), scope.into(), principal.into()],
    )?;
    if rows.is_empty() {
        return Err(not_found());
    }
    Ok(())
}

/// Deletes a file; 409 while a turn runs in a session that can use it.
pub fn delete<S: Sql>(
    db: &S,
    principal: &str,
    scope: &str,
    id: &str,
    now: Millis,
) -> Result<(), ApiError> {
    let rows = exec(
        db,
        DELETE_FILE,
        vec![id.into(), scope.into(), principal.into(), now.into()],
    )?;
    if !rows.is_empty() {
        return Ok(());
    }
    exists(db, principal, scope, id)?;
    Err(ApiError::new(
        ErrorCode::Conflict,
        "a running turn may be using this file: delete it when the turn has finished",
    ))
}

/// The file named `name` in `scope`, if the principal has one.
pub fn read_by_name<S: Sql>(
    db: &S,
    principal: &str,
    scope: &str,
    name: &str,
) -> Result<Option<Stored>, String> {
    let rows = db.execute(
        READ_FILE_BY_NAME,
        vec![scope.into(), principal.into(), name.into()],
    )?;
    Ok(rows.into_iter().next().map(|mut row| {
        let data = bytes(row.pop());
        Stored {
            name: name.to_string(),
            media_type: text(&row, 1),
            source: FileSource::parse(&text(&row, 0)).unwrap_or(FileSource::Temp),
            data,
        }
    }))
}

/// The bytes of the principal's file `id`, in whichever scope (`None`: gone, or not theirs).
pub fn read_by_id<S: Sql>(db: &S, principal: &str, id: &str) -> Result<Option<Vec<u8>>, String> {
    let rows = db.execute(READ_FILE_BY_ID, vec![id.into(), principal.into()])?;
    Ok(rows.into_iter().next().map(|mut row| bytes(row.pop())))
}

/// Why the agent's write was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteRefused {
    /// The file is the user's upload or marked final (the write guard).
    Protected(FileSource),
    StorageFull,
    Database(String),
}

/// The agent's write of a temp file, one statement: created (`Ok(false)`) or replaced
/// (`Ok(true)`: it existed). A `user_upload` or `final_output` of that name is never touched.
pub fn write_temp<S: Sql>(db: &S, new: NewFile<'_>) -> Result<bool, WriteRefused> {
    let (principal, scope, id, name) = (new.principal, new.scope, new.id, new.name);
    let rows = db
        .execute(UPSERT_TEMP, new.into_params())
        .map_err(WriteRefused::Database)?;
    if let Some(row) = rows.first() {
        return Ok(text(row, 0) != id);
    }
    match read_by_name(db, principal, scope, name).map_err(WriteRefused::Database)? {
        Some(f) if f.source != FileSource::Temp => Err(WriteRefused::Protected(f.source)),
        _ => Err(WriteRefused::StorageFull),
    }
}

/// Names, sizes and sources of a scope's files, by name.
pub fn names<S: Sql>(
    db: &S,
    principal: &str,
    scope: &str,
) -> Result<Vec<(String, u64, FileSource)>, String> {
    let rows = db.execute(FILE_NAMES, vec![scope.into(), principal.into()])?;
    Ok(rows
        .iter()
        .map(|r| {
            let source = FileSource::parse(&text(r, 2)).unwrap_or(FileSource::Temp);
            (text(r, 0), int(r, 1).max(0) as u64, source)
        })
        .collect())
}

/// The first `max_bytes` of the file named `name` (for `grep`); `None`: no such file.
pub fn head<S: Sql>(
    db: &S,
    principal: &str,
    scope: &str,
    name: &str,
    max_bytes: usize,
) -> Result<Option<Vec<u8>>, String> {
    let params = vec![
        scope.into(),
        principal.into(),
        name.into(),
        (max_bytes as i64).into(),
    ];
    let rows = db.execute(FILE_HEAD, params)?;
    Ok(rows.into_iter().next().map(|mut row| bytes(row.pop())))
}
