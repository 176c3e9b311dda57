//! Projects (issue 21, docs/projects.md): a principal's projects, the chats in them, their
//! files, and the agent's file tools over those files.
//!
//! - [`projects`]: create, list, rename / edit instructions, delete; a chat's project.
//! - [`files`]: a scope's files — upload, list with previews, download, mark final, delete,
//!   and the agent's one-statement write of a temp file (the write guard).
//! - [`tools`]: `read_file`, `write_file`, `glob`, `grep` with eve 0.80.1's names and shapes.
//! - [`query_table`]: the agent's read-only SQL over its sheets and CSV files (issue 33).
//! - [`names`], [`preview`], [`patterns`]: file names made safe, previews, the tools' glob
//!   and regular-expression patterns.
//! - [`sql`]: every statement.
//!
//! A crate of its own (not `eve-store`) because two components use it — `projects` for the
//! routes and `agent` for the tools — and it keeps eve-store's chat domain as it is.

pub mod files;
pub mod names;
pub mod patterns;
pub mod preview;
pub mod projects;
pub mod query_table;
pub mod routes;
pub mod sql;
pub mod tools;

use eve_api::ApiError;
use eve_store::sql::{Sql, SqlRow, SqlValue};

/// The scope of a project's files.
pub fn project_scope(project_id: &str) -> String {
    format!("project:{project_id}")
}

/// The scope of what the agent writes in a chat outside any project: its session.
pub fn session_scope(session_id: &str) -> String {
    format!("session:{session_id}")
}

/// Runs one statement; the database's words go to the log, never to the client.
pub(crate) fn exec<S: Sql>(
    db: &S,
    sql: &str,
    params: Vec<SqlValue>,
) -> Result<Vec<SqlRow>, ApiError> {
    db.execute(sql, params).map_err(|e| {
        eprintln!("projects: database error: {e}");
        eve_store::sql::database_error(&e)
    })
}

pub(crate) use eve_store::sql::{int_at as int, text_at as text};

#[cfg(test)]
mod tests;
