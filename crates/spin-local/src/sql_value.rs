//! The values a `fermyon:spin/sqlite` statement takes and answers, shared by the local file
//! backend (`sqlite_db`) and the libSQL one (`libsql_db`).

/// A column value, mirroring the WIT `value` variant.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Integer(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
    Null,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct QueryResult {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}
