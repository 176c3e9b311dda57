//! The seam between the store and a SQLite connection: one statement per call, positional
//! parameters, rows of values. It is exactly what Spin's `sqlite` interface offers (and all it
//! offers: no transactions, one statement per `execute`), implemented over Spin in
//! `eve_spin::db` and over rusqlite in this crate's tests.

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
