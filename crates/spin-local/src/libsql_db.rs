//! SQLite databases on a libSQL server (runtime config `type = "libsql"`: sqld, Turso),
//! through the client Spin 4.0.2 itself uses: the `libsql` crate with only its `remote`
//! feature, at the version Spin locks (0.5.0).
//!
//! As in Spin (`crates/sqlite-libsql`): `open` does no I/O, each opened connection is its own
//! libSQL connection (so a transaction across `execute` calls stays on it), every statement is
//! a request to the server, and a failed statement is an `io` error with the client's text.
//! Where this host differs: the HTTP client is built once per database label rather than once
//! per opened connection (the same server, the same requests; it saves loading the TLS roots on
//! every request), and a statement that has no answer within [`STATEMENT_TIMEOUT`] fails with
//! an `io` error instead of waiting forever on a server that stopped answering.

use crate::sql_value::{QueryResult, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::OnceCell;

/// How long one statement may wait for the server: a healthy server answers the app's
/// statements in milliseconds, and a request whose database stopped answering must get its 503
/// before eve-proxy's 30 s wait for the agent's answer runs out (it would be a 502 then).
pub const STATEMENT_TIMEOUT: Duration = Duration::from_secs(10);

/// One `[sqlite_database.<label>]` of type `libsql`: the server and its client.
pub struct RemoteDb {
    url: String,
    token: String,
    db: OnceCell<libsql::Database>,
}

/// Why a statement failed, mapped to the WIT error by the caller.
#[derive(Debug)]
pub enum RemoteError {
    /// The client could not be created (Spin: `invalid-connection`).
    InvalidConnection,
    /// The statement failed or the server did not answer (Spin: `io` with this text).
    Io(String),
}

impl RemoteDb {
    pub fn new(url: String, token: String) -> Arc<Self> {
        Arc::new(RemoteDb {
            url,
            token,
            db: OnceCell::new(),
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// A new connection (no I/O yet).
    pub async fn connect(&self) -> Result<libsql::Connection, RemoteError> {
        let db = self
            .db
            .get_or_try_init(|| async {
                libsql::Builder::new_remote(self.url.clone(), self.token.clone())
                    .build()
                    .await
            })
            .await
            .map_err(|e| {
                eprintln!("libsql: cannot create a client for {}: {e}", self.url);
                RemoteError::InvalidConnection
            })?;
        db.connect().map_err(|e| {
            eprintln!("libsql: cannot connect to {}: {e}", self.url);
            RemoteError::InvalidConnection
        })
    }
}

/// A guest's connection: created on its first statement, as Spin's `LazyLibSqlConnection`.
pub struct RemoteConnection {
    db: Arc<RemoteDb>,
    conn: OnceCell<libsql::Connection>,
}

impl RemoteConnection {
    pub fn new(db: Arc<RemoteDb>) -> Self {
        RemoteConnection {
            db,
            conn: OnceCell::new(),
        }
    }

    /// Runs one statement with positional parameters.
    pub async fn execute(&self, sql: &str, params: Vec<Value>) -> Result<QueryResult, RemoteError> {
        let conn = self.conn.get_or_try_init(|| self.db.connect()).await?;
        match tokio::time::timeout(STATEMENT_TIMEOUT, run(conn, sql, params)).await {
            Ok(r) => r.map_err(|e| RemoteError::Io(e.to_string())),
            Err(_) => Err(RemoteError::Io(format!(
                "no answer from the libSQL server at {} within {} s",
                self.db.url(),
                STATEMENT_TIMEOUT.as_secs()
            ))),
        }
    }
}

async fn run(
    conn: &libsql::Connection,
    sql: &str,
    params: Vec<Value>,
) -> Result<QueryResult, libsql::Error> {
    let params: Vec<libsql::Value> = params
        .into_iter()
        .map(|v| match v {
            Value::Integer(i) => libsql::Value::Integer(i),
            Value::Real(f) => libsql::Value::Real(f),
            Value::Text(s) => libsql::Value::Text(s),
            Value::Blob(b) => libsql::Value::Blob(b),
            Value::Null => libsql::Value::Null,
        })
        .collect();
    let mut rows = conn.query(sql, params).await?;
    let ncols = rows.column_count();
    let columns = (0..ncols)
        .map(|i| rows.column_name(i).unwrap_or("").to_owned())
        .collect();
    let mut out = Vec::new();
    while let Some(row) = rows.next().await? {
        let mut values = Vec::with_capacity(usize::try_from(ncols).unwrap_or_default());
        for i in 0..ncols {
            values.push(match row.get_value(i)? {
                libsql::Value::Null => Value::Null,
                libsql::Value::Integer(i) => Value::Integer(i),
                libsql::Value::Real(f) => Value::Real(f),
                libsql::Value::Text(s) => Value::Text(s),
                libsql::Value::Blob(b) => Value::Blob(b),
            });
        }
        out.push(values);
    }
    Ok(QueryResult { columns, rows: out })
}
