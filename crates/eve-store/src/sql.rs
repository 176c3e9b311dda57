//! The seam between the store and a SQLite connection: one statement per call, positional
//! parameters, rows of values. It is exactly what Spin's `sqlite` interface offers (and all it
//! offers: no transactions, one statement per `execute`), implemented over Spin in
//! `eve_spin::db` and over rusqlite in this crate's tests.

use eve_api::{ApiError, ErrorCode};

/// A SQLite value (the same variants as Spin's `sqlite::Value`).
#[derive(Debug, Clone, PartialEq)]
pub enum SqlValue {
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
    Null,
}

/// One result row.
pub type SqlRow = Vec<SqlValue>;

/// A connection that runs ONE statement per call (a second statement in the text would be
/// ignored by Spin, so callers never pass one).
pub trait Sql {
    /// Runs `statement` with `params` bound to `?1, ?2, …`; returns the rows it yields
    /// (`RETURNING` included). The error is the database's message.
    fn execute(&self, statement: &str, params: Vec<SqlValue>) -> Result<Vec<SqlRow>, String>;

    /// As [`Sql::execute`], with the names of the result's columns, for a query whose columns
    /// the caller does not know (the agent's `query_table`). Where the connection does not
    /// report them, the names are empty.
    fn execute_with_columns(
        &self,
        statement: &str,
        params: Vec<SqlValue>,
    ) -> Result<(Vec<String>, Vec<SqlRow>), String> {
        self.execute(statement, params)
            .map(|rows| (Vec::new(), rows))
    }
}

/// What a client is told to wait when the database cannot be reached (a libSQL server that is
/// restarting, say): the app recovers by itself once it answers again.
pub const UNAVAILABLE_RETRY_AFTER_SECS: u64 = 5;

/// SQLite's own verdicts on a statement: the statement (or the schema it expects) is wrong, a
/// bug rather than an outage. Spin passes them as `io` errors with SQLite's text, locally and
/// through a libSQL server (`SQLITE_CONSTRAINT…` codes there, the plain text here).
const STATEMENT_ERRORS: &[&str] = &[
    "constraint failed",
    "SQLITE_CONSTRAINT",
    "syntax error",
    "no such table",
    "no such column",
    "no such function",
    "datatype mismatch",
    "SQLITE_MISMATCH",
    "SQLITE_MISUSE",
    "SQLITE_RANGE",
    "SQLITE_TOOBIG",
    "malformed JSON",
    "wrong number of arguments",
];

/// Whether a failed statement's error says the statement itself is wrong (see
/// [`STATEMENT_ERRORS`]); every other failure — refused or reset connections, a server that
/// does not answer in time, a lock still held after the retries, an expired server stream, a
/// database that cannot be opened — is the database being unavailable, which passes.
pub fn is_statement_error(message: &str) -> bool {
    STATEMENT_ERRORS.iter().any(|t| message.contains(t))
}

/// 503 with `Retry-After`: the database could not be opened or reached.
pub fn unavailable() -> ApiError {
    ApiError {
        retry_after_secs: Some(UNAVAILABLE_RETRY_AFTER_SECS),
        ..ApiError::new(ErrorCode::NotConfigured, "the database is not available")
    }
}

/// Column `i` of `row` as text; empty when absent or not text (a nullable column's NULL).
pub fn text_at(row: &[SqlValue], i: usize) -> String {
    row.get(i)
        .and_then(SqlValue::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Column `i` of `row` as an integer; 0 when absent or not an integer.
pub fn int_at(row: &[SqlValue], i: usize) -> i64 {
    row.get(i).and_then(SqlValue::as_i64).unwrap_or_default()
}

/// The answer to a failed statement: 503 with `Retry-After` while the database is unavailable
/// (the client tries again; nothing was half-written, every write is one statement), 500 for
/// a statement SQLite refused (a bug). The database's text goes to the log, not the client.
pub fn database_error(message: &str) -> ApiError {
    if is_statement_error(message) {
        ApiError::internal("database error")
    } else {
        unavailable()
    }
}

impl SqlValue {
    pub fn text(s: impl Into<String>) -> Self {
        SqlValue::Text(s.into())
    }

    pub fn opt_text(s: Option<impl Into<String>>) -> Self {
        s.map_or(SqlValue::Null, |s| SqlValue::Text(s.into()))
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            SqlValue::Integer(i) => Some(*i),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            SqlValue::Text(s) => Some(s),
            SqlValue::Blob(b) => std::str::from_utf8(b).ok(),
            _ => None,
        }
    }

    /// Takes the text out of the value (no copy).
    pub fn into_string(self) -> Option<String> {
        match self {
            SqlValue::Text(s) => Some(s),
            SqlValue::Blob(b) => String::from_utf8(b).ok(),
            _ => None,
        }
    }
}

impl From<i64> for SqlValue {
    fn from(v: i64) -> Self {
        SqlValue::Integer(v)
    }
}

impl From<u64> for SqlValue {
    fn from(v: u64) -> Self {
        SqlValue::Integer(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<&str> for SqlValue {
    fn from(v: &str) -> Self {
        SqlValue::Text(v.to_string())
    }
}

impl From<String> for SqlValue {
    fn from(v: String) -> Self {
        SqlValue::Text(v)
    }
}

impl From<bool> for SqlValue {
    fn from(v: bool) -> Self {
        SqlValue::Integer(i64::from(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreachable_database_is_503_with_retry_after_and_a_refused_statement_is_500() {
        for outage in [
            "Io(\"Hrana: `http error: `error trying to connect: tcp connect error: Connection refused (os error 111)``\")",
            "Io(\"no answer from the libSQL server at http://127.0.0.1:1 within 30 s\")",
            "Io(\"database is locked\")",
            "InvalidConnection",
        ] {
            let e = database_error(outage);
            assert_eq!(
                (e.code.status(), e.retry_after_secs),
                (503, Some(UNAVAILABLE_RETRY_AFTER_SECS)),
                "{outage}"
            );
        }
        for bug in [
            "Io(\"UNIQUE constraint failed: chat.id\")",
            "Io(\"Hrana: `cursor error: `error at step 0: (error code: SQLITE_CONSTRAINT_PRIMARYKEY)``\")",
            "Io(\"no such table: chat\")",
            "Io(\"near \\\"SELEC\\\": syntax error\")",
        ] {
            let e = database_error(bug);
            assert_eq!((e.code.status(), e.retry_after_secs), (500, None), "{bug}");
        }
    }
}
