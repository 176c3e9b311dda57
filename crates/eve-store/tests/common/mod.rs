//! What the store's integration tests share: the store's one-statement `Sql` seam over a
//! native rusqlite connection (the SQLite version the local host embeds).

use eve_store::{Sql, SqlRow, SqlValue};
use rusqlite::types::{Value as RValue, ValueRef};

pub struct Db(pub rusqlite::Connection);

impl Sql for Db {
    fn execute(&self, statement: &str, params: Vec<SqlValue>) -> Result<Vec<SqlRow>, String> {
        let mut stmt = self.0.prepare(statement).map_err(|e| e.to_string())?;
        let columns = stmt.column_count();
        let params = params.into_iter().map(|p| match p {
            SqlValue::Integer(i) => RValue::Integer(i),
            SqlValue::Real(f) => RValue::Real(f),
            SqlValue::Text(s) => RValue::Text(s),
            SqlValue::Blob(b) => RValue::Blob(b),
            SqlValue::Null => RValue::Null,
        });
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params))
            .map_err(|e| e.to_string())?;
        let mut out = Vec::new();
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
        Ok(out)
    }
}
