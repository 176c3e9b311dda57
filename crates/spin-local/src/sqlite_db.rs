//! SQLite databases behind `fermyon:spin/sqlite`.
//!
//! Each `connection.open` in a component gets its own connection to the database file, so
//! `BEGIN`/`COMMIT` across `execute` calls behave as on Spin's local database and never mix
//! with another request's statements. As in Spin, `execute` runs only the first statement of
//! its text; the rest is ignored.

use anyhow::{Context, Result};
use rusqlite::fallible_iterator::FallibleIterator;
use rusqlite::types::{Value as SqlValue, ValueRef};
use std::path::{Path, PathBuf};

pub use crate::sql_value::{QueryResult, Value};

/// Opens a connection to the database file, creating it (and its directory) on first use.
/// `allow_attach_file` is the runtime config's key of that name (Spin's): off, the guest
/// cannot `ATTACH` anything (see [`confine`]).
pub fn open(path: &Path, allow_attach_file: bool) -> Result<rusqlite::Connection> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let conn = rusqlite::Connection::open(path)
        .with_context(|| format!("cannot open database {}", path.display()))?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    // WAL lets readers proceed while a writer commits; the setting lives in the file and is
    // understood by any SQLite, Spin's included.
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // In WAL mode NORMAL never corrupts and loses nothing when the process dies (the fault
    // model the tests exercise: SIGKILL mid-write); only an OS crash or power cut can drop the
    // last commits. It is SQLite's recommended setting for WAL and triples write throughput.
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // Foreign keys stay at SQLite's default (off), as on Spin: the app must not depend on a
    // cascade that a Spin database would not run.
    confine(&conn, allow_attach_file)?;
    Ok(conn)
}

/// Keeps a guest's SQL inside its one database file: no `ATTACH` (which would open or create
/// any file the host process can reach, `VACUUM INTO` included), no extension loading, and no
/// SQL functions run from a schema (triggers, views) the guest may have planted. A denied
/// statement fails with SQLite's "not authorized" error, which the guest sees as an `io`
/// error; the connection stays usable. A plain `VACUUM` attaches a temporary database
/// internally, so it is refused too. With `allow_attach_file` (runtime config), `ATTACH` and
/// `DETACH` are allowed, as Spin allows them then; the rest stays refused.
pub fn confine(conn: &rusqlite::Connection, allow_attach_file: bool) -> Result<()> {
    use rusqlite::hooks::{AuthAction, Authorization};
    use rusqlite::limits::Limit;
    if !allow_attach_file {
        conn.set_limit(Limit::SQLITE_LIMIT_ATTACHED, 0)?;
    }
    conn.pragma_update(None, "trusted_schema", "OFF")?;
    conn.authorizer(Some(move |ctx: rusqlite::hooks::AuthContext<'_>| {
        match ctx.action {
            AuthAction::Attach { .. } | AuthAction::Detach { .. } if !allow_attach_file => {
                Authorization::Deny
            }
            AuthAction::Function { function_name }
                if function_name.eq_ignore_ascii_case("load_extension") =>
            {
                Authorization::Deny
            }
            // Reading the pragma is harmless; turning it back on is not.
            AuthAction::Pragma {
                pragma_name,
                pragma_value: Some(_),
            } if pragma_name.eq_ignore_ascii_case("trusted_schema") => Authorization::Deny,
            _ => Authorization::Allow,
        }
    }));
    Ok(())
}

/// Runs the first statement of `sql` with positional parameters.
pub fn execute(
    conn: &rusqlite::Connection,
    sql: &str,
    params: &[Value],
) -> rusqlite::Result<QueryResult> {
    let mut batch = rusqlite::Batch::new(conn, sql);
    let Some(mut stmt) = batch.next()? else {
        return Ok(QueryResult::default());
    };
    let columns: Vec<String> = stmt.column_names().into_iter().map(String::from).collect();
    let sql_params: Vec<SqlValue> = params
        .iter()
        .map(|p| match p {
            Value::Integer(i) => SqlValue::Integer(*i),
            Value::Real(f) => SqlValue::Real(*f),
            Value::Text(s) => SqlValue::Text(s.clone()),
            Value::Blob(b) => SqlValue::Blob(b.clone()),
            Value::Null => SqlValue::Null,
        })
        .collect();
    let ncols = columns.len();
    let mut rows = Vec::new();
    let mut q = stmt.query(rusqlite::params_from_iter(sql_params.iter()))?;
    while let Some(row) = q.next()? {
        let mut values = Vec::with_capacity(ncols);
        for i in 0..ncols {
            values.push(match row.get_ref(i)? {
                ValueRef::Integer(i) => Value::Integer(i),
                ValueRef::Real(f) => Value::Real(f),
                ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(b) => Value::Blob(b.to_vec()),
                ValueRef::Null => Value::Null,
            });
        }
        rows.push(values);
    }
    Ok(QueryResult { columns, rows })
}

/// A configured database, which the host grants by label.
#[derive(Clone)]
pub enum Database {
    /// A local file.
    Local {
        path: PathBuf,
        allow_attach_file: bool,
    },
    /// A libSQL server.
    Remote(std::sync::Arc<crate::libsql_db::RemoteDb>),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem() -> rusqlite::Connection {
        rusqlite::Connection::open_in_memory().unwrap()
    }

    fn confined_file() -> (tempfile::TempDir, rusqlite::Connection) {
        let dir = tempfile::tempdir().unwrap();
        let c = open(&dir.path().join("db.sqlite"), false).unwrap();
        (dir, c)
    }

    /// SQLite's wording for the authorizer's and the attach limit's refusals.
    fn refused(e: &str) -> bool {
        e.contains("not authorized")
            || e.contains("authorization denied")
            || e.contains("too many attached")
    }

    #[test]
    fn attach_and_vacuum_into_cannot_reach_another_file() {
        let (dir, c) = confined_file();
        let other = dir.path().join("other.db");
        let other_s = other.to_string_lossy().into_owned();
        for sql in [
            format!("ATTACH DATABASE '{other_s}' AS x"),
            format!("VACUUM INTO '{other_s}'"),
            "ATTACH DATABASE ':memory:' AS m".to_string(),
            "ATTACH DATABASE '' AS t".to_string(),
        ] {
            let e = execute(&c, &sql, &[]).expect_err(&sql).to_string();
            assert!(refused(&e), "{sql}: {e}");
        }
        assert!(!other.exists(), "a denied statement created {other_s}");
        let e = execute(&c, "DETACH DATABASE main", &[]).unwrap_err();
        assert!(refused(&e.to_string()), "{e}");
        let e = execute(&c, "VACUUM", &[]).unwrap_err();
        assert!(refused(&e.to_string()), "{e}");
        // The connection still works after the refusals.
        execute(&c, "CREATE TABLE t (x)", &[]).unwrap();
        execute(&c, "INSERT INTO t VALUES (1)", &[]).unwrap();
    }

    #[test]
    fn allow_attach_file_lets_attach_through_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let c = open(&dir.path().join("db.sqlite"), true).unwrap();
        let other = dir.path().join("other.db").to_string_lossy().into_owned();
        execute(&c, &format!("ATTACH DATABASE '{other}' AS x"), &[]).unwrap();
        execute(&c, "CREATE TABLE x.t (a)", &[]).unwrap();
        execute(&c, "DETACH DATABASE x", &[]).unwrap();
        let e = execute(&c, "SELECT load_extension('/tmp/evil.so')", &[]).unwrap_err();
        assert!(refused(&e.to_string()), "{e}");
    }

    #[test]
    fn extensions_cannot_be_loaded_and_the_schema_is_not_trusted() {
        let (_dir, c) = confined_file();
        let e = execute(&c, "SELECT load_extension('/tmp/evil.so')", &[]).unwrap_err();
        assert!(refused(&e.to_string()), "{e}");
        let r = execute(&c, "PRAGMA trusted_schema", &[]).unwrap();
        assert_eq!(r.rows, vec![vec![Value::Integer(0)]]);
        assert!(execute(&c, "PRAGMA trusted_schema = ON", &[]).is_err());
        let r = execute(&c, "PRAGMA trusted_schema", &[]).unwrap();
        assert_eq!(r.rows, vec![vec![Value::Integer(0)]]);
    }

    #[test]
    fn only_the_first_statement_runs_as_in_spin() {
        let c = mem();
        let r = execute(&c, "SELECT 1 AS a; SELECT 2", &[]).unwrap();
        assert_eq!(r.columns, vec!["a"]);
        assert_eq!(r.rows, vec![vec![Value::Integer(1)]]);
        execute(&c, "CREATE TABLE t (x); DROP TABLE t", &[]).unwrap();
        assert!(execute(&c, "SELECT * FROM t", &[]).is_ok());
    }

    #[test]
    fn parameters_and_all_value_types_round_trip() {
        let c = mem();
        let r = execute(
            &c,
            "SELECT ?1, ?2, ?3, ?4, ?5",
            &[
                Value::Integer(7),
                Value::Real(1.5),
                Value::Text("t".into()),
                Value::Blob(vec![1, 2]),
                Value::Null,
            ],
        )
        .unwrap();
        assert_eq!(
            r.rows[0],
            vec![
                Value::Integer(7),
                Value::Real(1.5),
                Value::Text("t".into()),
                Value::Blob(vec![1, 2]),
                Value::Null
            ]
        );
    }

    #[test]
    fn transactions_span_execute_calls_on_one_connection() {
        let c = mem();
        execute(&c, "CREATE TABLE t (x INTEGER)", &[]).unwrap();
        execute(&c, "BEGIN", &[]).unwrap();
        execute(&c, "INSERT INTO t VALUES (?)", &[Value::Integer(1)]).unwrap();
        execute(&c, "ROLLBACK", &[]).unwrap();
        assert!(execute(&c, "SELECT * FROM t", &[]).unwrap().rows.is_empty());
    }

    #[test]
    fn errors_are_reported_not_panicked() {
        let c = mem();
        assert!(execute(&c, "SELEC 1", &[]).is_err());
        assert!(
            execute(&c, "SELECT ?1", &[]).is_err(),
            "a missing parameter is an error"
        );
        assert_eq!(
            execute(&c, "-- only a comment", &[]).unwrap(),
            QueryResult::default()
        );
    }

    #[test]
    fn bundled_sqlite_matches_spin_4_0_2() {
        let c = mem();
        let r = execute(&c, "SELECT sqlite_version()", &[]).unwrap();
        assert_eq!(r.rows[0][0], Value::Text("3.49.1".into()));
        let fts = execute(
            &c,
            "SELECT * FROM pragma_compile_options WHERE compile_options LIKE '%FTS%'",
            &[],
        )
        .unwrap();
        let opts: Vec<_> = fts.rows.into_iter().map(|r| r[0].clone()).collect();
        assert!(
            opts.contains(&Value::Text("ENABLE_FTS5".into())),
            "{opts:?}"
        );
    }
}
