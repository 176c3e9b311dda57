//! The default SQLite database through Spin (`fermyon:spin/sqlite`), with migrations applied
//! on open: every request that touches the database first makes sure the schema is current
//! (one SELECT when it is). The migration logic and the SQL are in [`eve_store`].

use eve_api::ApiError;
use eve_store::migrations::{self, SchemaStatus};
use eve_store::{Sql, SqlRow, SqlValue};
use spin_sdk::sqlite::{Connection, Value};

/// The Spin SQLite database the app uses (`sqlite_databases = ["default"]` in `spin.toml`).
pub const DATABASE: &str = "default";

/// A connection that runs one statement per call (Spin ignores any second statement). It is
/// replaced by a fresh one when the server dropped its session (see [`is_stale_connection`]).
pub struct Db(std::cell::RefCell<Connection>);

/// How often a statement that met a transient lock error runs again, and the first pause
/// (doubled each time: 25 + 50 + 100 + 200 ms at most).
const TRANSIENT_RETRIES: u32 = 4;
const FIRST_PAUSE_MS: u64 = 25;

/// Errors of a statement that lost a race for the write lock and was rolled back, so that
/// running it again is safe: a remote libSQL server (sqld) interrupts a statement that waited
/// too long behind another connection's write (`SQLITE_INTERRUPT`, seen when two nodes migrate
/// a fresh database at once), a local file answers busy past its timeout.
pub fn is_transient(message: &str) -> bool {
    [
        "SQLITE_BUSY",
        "SQLITE_LOCKED",
        "SQLITE_INTERRUPT",
        "database is locked",
        "database table is locked",
    ]
    .iter()
    .any(|t| message.contains(t))
}

/// Errors that say the connection itself is gone on a remote libSQL server, not the
/// statement: the libSQL client Spin uses keeps a server-side stream open between statements
/// (its `baton`), sqld expires a stream idle for about 10 s (`STREAM_EXPIRED`) and forgets all
/// of them when it restarts, and the client then fails every later statement of that
/// connection. The server refused the statement before running it, so it runs again on a new
/// connection. Seen with a turn's runner and readers that hold one connection for a turn.
pub fn is_stale_connection(message: &str) -> bool {
    ["STREAM_EXPIRED", "BATON_", "STREAM_NOT_FOUND"]
        .iter()
        .any(|t| message.contains(t))
}

impl Db {
    fn open_connection() -> Result<Db, ApiError> {
        Connection::open(DATABASE)
            .map(|c| Db(std::cell::RefCell::new(c)))
            .map_err(|e| {
                eprintln!("db: cannot open the {DATABASE:?} database: {e:?}");
                unavailable()
            })
    }
}

impl Sql for Db {
    fn execute(&self, statement: &str, params: Vec<SqlValue>) -> Result<Vec<SqlRow>, String> {
        self.execute_with_columns(statement, params)
            .map(|(_, rows)| rows)
    }

    fn execute_with_columns(
        &self,
        statement: &str,
        params: Vec<SqlValue>,
    ) -> Result<(Vec<String>, Vec<SqlRow>), String> {
        let params: Vec<Value> = params.into_iter().map(to_spin).collect();
        let mut attempt = 0;
        let result = loop {
            let outcome = self.0.borrow().execute(statement, &params);
            match outcome {
                Ok(r) => break r,
                Err(e) => {
                    let message = format!("{e:?}");
                    if attempt == TRANSIENT_RETRIES {
                        return Err(message);
                    }
                    if is_stale_connection(&message) {
                        let fresh = Connection::open(DATABASE).map_err(|e| format!("{e:?}"))?;
                        *self.0.borrow_mut() = fresh;
                    } else if is_transient(&message) {
                        std::thread::sleep(std::time::Duration::from_millis(
                            FIRST_PAUSE_MS << attempt,
                        ));
                    } else {
                        return Err(message);
                    }
                    attempt += 1;
                }
            }
        };
        let rows = result
            .rows
            .into_iter()
            .map(|row| row.values.into_iter().map(from_spin).collect())
            .collect();
        Ok((result.columns, rows))
    }
}

fn to_spin(v: SqlValue) -> Value {
    match v {
        SqlValue::Integer(i) => Value::Integer(i),
        SqlValue::Real(f) => Value::Real(f),
        SqlValue::Text(s) => Value::Text(s),
        SqlValue::Blob(b) => Value::Blob(b),
        SqlValue::Null => Value::Null,
    }
}

fn from_spin(v: Value) -> SqlValue {
    match v {
        Value::Integer(i) => SqlValue::Integer(i),
        Value::Real(f) => SqlValue::Real(f),
        Value::Text(s) => SqlValue::Text(s),
        Value::Blob(b) => SqlValue::Blob(b),
        Value::Null => SqlValue::Null,
    }
}

/// Milliseconds since the Unix epoch (WASI wall clock).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or_default()
}

/// 503 with `Retry-After` (the database could not be opened or reached), and what a failed
/// statement answers: [`eve_store::sql::database_error`].
pub use eve_store::sql::{database_error, unavailable, UNAVAILABLE_RETRY_AFTER_SECS};

/// Opens the default database and applies any missing migration. A database that cannot be
/// opened or migrated is a 503 (the reason goes to the component log).
pub fn open() -> Result<Db, ApiError> {
    let db = Db::open_connection()?;
    migrations::migrate(&db, now_ms()).map_err(|e| {
        eprintln!("db: migrations failed: {e}");
        unavailable()
    })?;
    Ok(db)
}

/// For `/api/setup`: opens the database, applies missing migrations, and reports. When the
/// schema is not ready, report `"database migrations"` in `missing`.
pub fn schema_status() -> SchemaStatus {
    match Connection::open(DATABASE) {
        Ok(conn) => {
            let status =
                migrations::migrate_and_report(&Db(std::cell::RefCell::new(conn)), now_ms());
            if let Some(e) = &status.error {
                eprintln!("db: schema check: {e}");
            }
            status
        }
        Err(e) => SchemaStatus {
            database_ready: false,
            schema_ready: false,
            missing: migrations::MIGRATIONS
                .iter()
                .map(|m| m.name.to_string())
                .collect(),
            error: Some(format!("{e:?}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::is_transient;

    #[test]
    fn lock_races_are_transient_and_other_errors_are_not() {
        assert!(is_transient(
            "Io(\"Hrana: `cursor error: `error at step 0: (error code: SQLITE_INTERRUPT) `SQLite error: interrupted```\")"
        ));
        assert!(is_transient("Io(\"database is locked\")"));
        assert!(!is_transient("Io(\"UNIQUE constraint failed: chat.id\")"));
        assert!(!is_transient(
            "Io(\"no answer from the libSQL server at http://127.0.0.1:1 within 10 s\")"
        ));
    }

    #[test]
    fn an_expired_server_stream_is_a_stale_connection() {
        assert!(super::is_stale_connection(
            "Io(\"Hrana: `api error: `{\\\"message\\\":\\\"The stream has expired due to inactivity\\\",\\\"code\\\":\\\"STREAM_EXPIRED\\\"}``\")"
        ));
        assert!(!super::is_stale_connection(
            "Io(\"UNIQUE constraint failed: chat.id\")"
        ));
    }
}
