//! The one rusqlite adapter behind eve-store's one-statement-per-call [`Sql`] seam, so the SQL of
//! every crate (the chat store, the agent's session store) is tested natively against the SQLite
//! version the local host embeds. Test-only: crates take it as a dev-dependency.

use eve_store::{Sql, SqlRow, SqlValue};
use rusqlite::types::{Value as RValue, ValueRef};

/// A rusqlite connection behind the [`Sql`] seam.
pub struct Db(pub rusqlite::Connection);

impl Db {
    /// A fresh in-memory database.
    pub fn memory() -> Self {
        Db(rusqlite::Connection::open_in_memory().expect("in-memory SQLite"))
    }
}

impl Db {
    /// Runs one statement as [`Sql::execute`] does and also says how many SQLite virtual-machine
    /// steps it took: a measure of a statement's work that, unlike time, does not depend on the
    /// machine or its load, so a test can check how a statement's cost grows with the data.
    pub fn execute_counting_steps(
        &self,
        statement: &str,
        params: Vec<SqlValue>,
    ) -> Result<(Vec<SqlRow>, i32), String> {
        let mut stmt = self.0.prepare(statement).map_err(|e| e.to_string())?;
        let columns = stmt.column_count();
        let params = params.into_iter().map(|p| match p {
            SqlValue::Integer(i) => RValue::Integer(i),
            SqlValue::Real(f) => RValue::Real(f),
            SqlValue::Text(s) => RValue::Text(s),
            SqlValue::Blob(b) => RValue::Blob(b),
            SqlValue::Null => RValue::Null,
        });
        let mut out = Vec::new();
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params))
            .map_err(|e| e.to_string())?;
        while let Some(row) = rows.next().map_err(|e| e.to_string())? {
            out.push(
                (0..columns)
                    .map(|i| match row.get_ref(i).expect("column") {
                        ValueRef::Integer(i) => SqlValue::Integer(i),
                        ValueRef::Real(f) => SqlValue::Real(f),
                        ValueRef::Text(t) => {
                            SqlValue::Text(String::from_utf8_lossy(t).into_owned())
                        }
                        ValueRef::Blob(b) => SqlValue::Blob(b.to_vec()),
                        ValueRef::Null => SqlValue::Null,
                    })
                    .collect(),
            );
        }
        drop(rows);
        Ok((out, stmt.get_status(rusqlite::StatementStatus::VmStep)))
    }
}

impl Sql for Db {
    fn execute(&self, statement: &str, params: Vec<SqlValue>) -> Result<Vec<SqlRow>, String> {
        self.execute_counting_steps(statement, params)
            .map(|(rows, _)| rows)
    }

    fn execute_with_columns(
        &self,
        statement: &str,
        params: Vec<SqlValue>,
    ) -> Result<(Vec<String>, Vec<SqlRow>), String> {
        let names = {
            let stmt = self.0.prepare(statement).map_err(|e| e.to_string())?;
            stmt.column_names().into_iter().map(String::from).collect()
        };
        self.execute(statement, params).map(|rows| (names, rows))
    }
}
