//! Skills (issue 22, docs/skills.md): procedures in eve's `SKILL.md` format that the agent
//! lists in its instructions and loads on demand with `eve__skill`.
//!
//! - [`skill_md`]: a `SKILL.md` parsed and checked exactly by eve 0.80.1's rules (frontmatter,
//!   `description`, `deferred`, names), refusals in eve's words.
//! - [`import`]: from a `SKILL.md` text or a zip of a skill folder, bounded.
//! - [`store`]: personal and global skills, a principal's switch, what the agent offers.
//! - [`sql`]: every statement.
//!
//! A crate of its own because two components use it — `skills` for the routes and `agent`
//! for the instructions and the tool.

pub mod import;
pub mod routes;
pub mod skill_md;
pub mod sql;
pub mod store;

use eve_api::ApiError;
use eve_store::sql::{Sql, SqlRow, SqlValue};

/// Runs one statement; the database's words go to the log, never to the client.
pub(crate) fn exec<S: Sql>(
    db: &S,
    sql: &str,
    params: Vec<SqlValue>,
) -> Result<Vec<SqlRow>, ApiError> {
    db.execute(sql, params).map_err(|e| {
        eprintln!("skills: database error: {e}");
        eve_store::sql::database_error(&e)
    })
}

pub(crate) use eve_store::sql::{int_at as int, text_at as text};

#[cfg(test)]
mod tests;
