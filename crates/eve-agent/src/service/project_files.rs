//! Project files named by a message (eve-chat's `projectFileId` on eve's file part,
//! docs/projects.md): the file is used where it is, never uploaded again. Each reference is
//! checked against the project of the message's chat and the caller before anything is kept;
//! what passes is completed from the stored file (its name, type, size and download URL), and
//! its bytes reach the model as an attachment's do, read just before each model call.

use eve_store::sql::Sql;

use crate::protocol::{Message, Refusal};
use crate::service::env::db_refusal;
use eve_api::eve::MessagePart;

/// Whether the message names a project file (only then is the project looked up).
pub fn names_any(m: &Message) -> bool {
    m.parts.iter().any(|p| {
        matches!(
            p,
            MessagePart::File {
                project_file_id: Some(_),
                ..
            }
        )
    })
}

/// The project of the caller's chat `chat` (a new session's `chatId`), if any.
pub fn chat_project<S: Sql>(
    db: &S,
    principal: &str,
    chat: Option<&str>,
) -> Result<Option<String>, Refusal> {
    let Some(chat) = chat else {
        return Ok(None);
    };
    eve_projects::projects::chat_project(db, principal, chat).map_err(|e| Refusal::from_api(&e))
}

/// The project of session `id` (through the chat that holds it), if any.
pub fn session_project<S: Sql>(
    db: &S,
    principal: &str,
    id: &str,
) -> Result<Option<String>, Refusal> {
    eve_projects::projects::session_project(db, principal, id)
        .map(|p| p.map(|(id, _)| id))
        .map_err(db_refusal)
}

/// Completes the message's project file parts from the files of `project` (the project of
/// the message's chat): 400 when the chat is in no project, 404 for a file that is not one of
/// the project's or not the caller's. Changes nothing stored.
pub fn resolve<S: Sql>(
    db: &S,
    principal: &str,
    project: Option<&str>,
    m: &mut Message,
) -> Result<(), Refusal> {
    for part in m.parts.iter_mut() {
        let MessagePart::File {
            media_type,
            filename,
            url,
            size,
            project_file_id: Some(id),
            ..
        } = part
        else {
            continue;
        };
        let Some(project) = project else {
            return Err(Refusal::bad_request(
                "Project files can be named only in a chat of that project.",
            ));
        };
        let scope = eve_projects::project_scope(project);
        let scope_url = format!("/api/projects/{project}");
        let file =
            eve_projects::files::get(db, principal, &scope, &scope_url, id).map_err(|e| match e
                .status()
            {
                404 => Refusal::new(
                    404,
                    Some("not_found"),
                    format!("No file {id:?} in this chat's project."),
                ),
                _ => Refusal::from_api(&e),
            })?;
        *media_type = file.media_type;
        *filename = Some(file.name);
        *size = Some(file.size);
        *url = Some(file.download_url);
    }
    Ok(())
}

/// The bytes a model call reads for a stored file of a message: a project file (`file_…`) or
/// an attachment (`att_…`), the principal's only.
pub fn stored_bytes<S: Sql>(db: &S, principal: &str, id: &str) -> Option<Vec<u8>> {
    let read = if crate::protocol::uploads::is_project_file_id(id) {
        eve_projects::files::read_by_id(db, principal, id)
    } else {
        crate::session::store::AgentStore::new(db)
            .attachment(id, principal)
            .map(|a| a.map(|a| a.data))
    };
    read.inspect_err(|e| eprintln!("agent: reading stored file {id}: {e}"))
        .ok()
        .flatten()
}
