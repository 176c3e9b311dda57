//! The Spin host interfaces: `fermyon:spin/{key-value,sqlite,variables}@2.0.0`,
//! `wasi:keyvalue/{store,atomics,batch}@0.2.0-draft2` and `wasi:config/store`.
//!
//! Every open is checked against the component's grants in the manifest: a label that is not
//! granted answers `access-denied` inside the component, as Spin does, whether or not a store
//! of that name exists. Storage calls run on tokio's blocking pool so a slow disk or a busy
//! SQLite lock never stalls the request executor.

use crate::instance::HostState;
use crate::kv::KvStore;
use crate::sqlite_db;
use crate::variables::{lookup, Lookup};
use std::sync::{Arc, Mutex};
use wasmtime::component::Resource;

mod bindings {
    wasmtime::component::bindgen!({
        path: "wit",
        world: "spin-imports",
        imports: { default: async | trappable },
        with: {
            "fermyon:spin/key-value.store": super::SpinKvStore,
            "fermyon:spin/sqlite.connection": super::SqliteConnection,
            "wasi:keyvalue/store.bucket": super::WasiBucket,
            "wasi:keyvalue/atomics.cas": super::WasiCas,
        },
    });
}

use bindings::fermyon::spin::{key_value, sqlite, variables};
use bindings::wasi::config::store as config;
use bindings::wasi::keyvalue::{atomics, batch, store as wkv};
pub use bindings::SpinImports;

/// An open `fermyon:spin/key-value` store.
pub struct SpinKvStore(Arc<dyn KvStore>);
/// An open `wasi:keyvalue` bucket.
pub struct WasiBucket(Arc<dyn KvStore>);
/// A `wasi:keyvalue/atomics` CAS handle: the value seen when it was created.
pub struct WasiCas {
    store: Arc<dyn KvStore>,
    key: String,
    seen: Option<Vec<u8>>,
}
/// An open `fermyon:spin/sqlite` connection (one per `open`, as in Spin): a connection to a
/// local file, or to a libSQL server.
pub enum SqliteConnection {
    Local(Arc<Mutex<rusqlite::Connection>>),
    Remote(Arc<crate::libsql_db::RemoteConnection>),
}

type WResult<T> = wasmtime::Result<T>;

/// Runs blocking storage work off the async executor.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> WResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| wasmtime::Error::msg(format!("storage task failed: {e}")))
}

enum OpenError {
    AccessDenied,
    NoSuch,
}

impl HostState {
    fn open_kv(&self, label: &str) -> Result<Arc<dyn KvStore>, OpenError> {
        if !self.caps.key_value_stores.contains(label) {
            return Err(OpenError::AccessDenied);
        }
        self.stores.kv.get(label).cloned().ok_or(OpenError::NoSuch)
    }
}

// ---------------- fermyon:spin/key-value ----------------

fn kv_err(e: anyhow::Error) -> key_value::Error {
    key_value::Error::Other(format!("{e:#}"))
}

impl key_value::Host for HostState {}

impl key_value::HostStore for HostState {
    async fn open(
        &mut self,
        label: String,
    ) -> WResult<Result<Resource<SpinKvStore>, key_value::Error>> {
        match self.open_kv(&label) {
            Ok(store) => Ok(Ok(self.table.push(SpinKvStore(store))?)),
            Err(OpenError::AccessDenied) => Ok(Err(key_value::Error::AccessDenied)),
            Err(OpenError::NoSuch) => Ok(Err(key_value::Error::NoSuchStore)),
        }
    }

    async fn get(
        &mut self,
        this: Resource<SpinKvStore>,
        key: String,
    ) -> WResult<Result<Option<Vec<u8>>, key_value::Error>> {
        let s = self.table.get(&this)?.0.clone();
        Ok(blocking(move || s.get(&key)).await?.map_err(kv_err))
    }

    async fn set(
        &mut self,
        this: Resource<SpinKvStore>,
        key: String,
        value: Vec<u8>,
    ) -> WResult<Result<(), key_value::Error>> {
        let s = self.table.get(&this)?.0.clone();
        Ok(blocking(move || s.set(&key, &value)).await?.map_err(kv_err))
    }

    async fn delete(
        &mut self,
        this: Resource<SpinKvStore>,
        key: String,
    ) -> WResult<Result<(), key_value::Error>> {
        let s = self.table.get(&this)?.0.clone();
        Ok(blocking(move || s.delete(&key)).await?.map_err(kv_err))
    }

    async fn exists(
        &mut self,
        this: Resource<SpinKvStore>,
        key: String,
    ) -> WResult<Result<bool, key_value::Error>> {
        let s = self.table.get(&this)?.0.clone();
        Ok(blocking(move || s.exists(&key)).await?.map_err(kv_err))
    }

    async fn get_keys(
        &mut self,
        this: Resource<SpinKvStore>,
    ) -> WResult<Result<Vec<String>, key_value::Error>> {
        let s = self.table.get(&this)?.0.clone();
        Ok(blocking(move || s.keys()).await?.map_err(kv_err))
    }

    async fn drop(&mut self, this: Resource<SpinKvStore>) -> WResult<()> {
        self.table.delete(this)?;
        Ok(())
    }
}

// ---------------- wasi:keyvalue ----------------

fn wkv_err(e: anyhow::Error) -> wkv::Error {
    wkv::Error::Other(format!("{e:#}"))
}

impl wkv::Host for HostState {
    async fn open(
        &mut self,
        identifier: String,
    ) -> WResult<Result<Resource<WasiBucket>, wkv::Error>> {
        match self.open_kv(&identifier) {
            Ok(store) => Ok(Ok(self.table.push(WasiBucket(store))?)),
            Err(OpenError::AccessDenied) => Ok(Err(wkv::Error::AccessDenied)),
            Err(OpenError::NoSuch) => Ok(Err(wkv::Error::NoSuchStore)),
        }
    }
}

impl wkv::HostBucket for HostState {
    async fn get(
        &mut self,
        this: Resource<WasiBucket>,
        key: String,
    ) -> WResult<Result<Option<Vec<u8>>, wkv::Error>> {
        let s = self.table.get(&this)?.0.clone();
        Ok(blocking(move || s.get(&key)).await?.map_err(wkv_err))
    }

    async fn set(
        &mut self,
        this: Resource<WasiBucket>,
        key: String,
        value: Vec<u8>,
    ) -> WResult<Result<(), wkv::Error>> {
        let s = self.table.get(&this)?.0.clone();
        Ok(blocking(move || s.set(&key, &value))
            .await?
            .map_err(wkv_err))
    }

    async fn delete(
        &mut self,
        this: Resource<WasiBucket>,
        key: String,
    ) -> WResult<Result<(), wkv::Error>> {
        let s = self.table.get(&this)?.0.clone();
        Ok(blocking(move || s.delete(&key)).await?.map_err(wkv_err))
    }

    async fn exists(
        &mut self,
        this: Resource<WasiBucket>,
        key: String,
    ) -> WResult<Result<bool, wkv::Error>> {
        let s = self.table.get(&this)?.0.clone();
        Ok(blocking(move || s.exists(&key)).await?.map_err(wkv_err))
    }

    async fn list_keys(
        &mut self,
        this: Resource<WasiBucket>,
        cursor: Option<String>,
    ) -> WResult<Result<wkv::KeyResponse, wkv::Error>> {
        let s = self.table.get(&this)?.0.clone();
        // All keys in one page, as Spin's SQLite store answers; a cursor is therefore unknown.
        if cursor.is_some() {
            return Ok(Err(wkv::Error::Other("unknown cursor".into())));
        }
        Ok(blocking(move || s.keys())
            .await?
            .map(|keys| wkv::KeyResponse { keys, cursor: None })
            .map_err(wkv_err))
    }

    async fn drop(&mut self, this: Resource<WasiBucket>) -> WResult<()> {
        self.table.delete(this)?;
        Ok(())
    }
}

impl atomics::Host for HostState {
    async fn increment(
        &mut self,
        bucket: Resource<WasiBucket>,
        key: String,
        delta: i64,
    ) -> WResult<Result<i64, wkv::Error>> {
        let s = self.table.get(&bucket)?.0.clone();
        Ok(blocking(move || s.increment(&key, delta))
            .await?
            .map_err(wkv_err))
    }

    async fn swap(
        &mut self,
        cas: Resource<WasiCas>,
        value: Vec<u8>,
    ) -> WResult<Result<(), atomics::CasError>> {
        let c = self.table.delete(cas)?;
        let (store, key, seen) = (c.store.clone(), c.key.clone(), c.seen.clone());
        let swapped =
            blocking(move || store.compare_and_swap(&key, seen.as_deref(), &value)).await?;
        match swapped {
            Ok(true) => Ok(Ok(())),
            Ok(false) => {
                // Hand back a fresh handle on the current value so the guest can retry.
                let (store, key) = (c.store.clone(), c.key.clone());
                let current = blocking(move || store.get(&key)).await?;
                match current {
                    Ok(seen) => {
                        let fresh = self.table.push(WasiCas {
                            store: c.store,
                            key: c.key,
                            seen,
                        })?;
                        Ok(Err(atomics::CasError::CasFailed(fresh)))
                    }
                    Err(e) => Ok(Err(atomics::CasError::StoreError(wkv_err(e)))),
                }
            }
            Err(e) => Ok(Err(atomics::CasError::StoreError(wkv_err(e)))),
        }
    }
}

impl atomics::HostCas for HostState {
    async fn new(
        &mut self,
        bucket: Resource<WasiBucket>,
        key: String,
    ) -> WResult<Result<Resource<WasiCas>, wkv::Error>> {
        let s = self.table.get(&bucket)?.0.clone();
        let (s2, k2) = (s.clone(), key.clone());
        match blocking(move || s2.get(&k2)).await? {
            Ok(seen) => Ok(Ok(self.table.push(WasiCas {
                store: s,
                key,
                seen,
            })?)),
            Err(e) => Ok(Err(wkv_err(e))),
        }
    }

    async fn current(
        &mut self,
        this: Resource<WasiCas>,
    ) -> WResult<Result<Option<Vec<u8>>, wkv::Error>> {
        Ok(Ok(self.table.get(&this)?.seen.clone()))
    }

    async fn drop(&mut self, this: Resource<WasiCas>) -> WResult<()> {
        self.table.delete(this)?;
        Ok(())
    }
}

impl batch::Host for HostState {
    async fn get_many(
        &mut self,
        bucket: Resource<WasiBucket>,
        keys: Vec<String>,
    ) -> WResult<Result<Vec<(String, Option<Vec<u8>>)>, wkv::Error>> {
        let s = self.table.get(&bucket)?.0.clone();
        Ok(blocking(move || {
            keys.into_iter()
                .map(|k| s.get(&k).map(|v| (k, v)))
                .collect::<anyhow::Result<Vec<_>>>()
        })
        .await?
        .map_err(wkv_err))
    }

    async fn set_many(
        &mut self,
        bucket: Resource<WasiBucket>,
        key_values: Vec<(String, Vec<u8>)>,
    ) -> WResult<Result<(), wkv::Error>> {
        let s = self.table.get(&bucket)?.0.clone();
        Ok(
            blocking(move || key_values.iter().try_for_each(|(k, v)| s.set(k, v)))
                .await?
                .map_err(wkv_err),
        )
    }

    async fn delete_many(
        &mut self,
        bucket: Resource<WasiBucket>,
        keys: Vec<String>,
    ) -> WResult<Result<(), wkv::Error>> {
        let s = self.table.get(&bucket)?.0.clone();
        Ok(blocking(move || keys.iter().try_for_each(|k| s.delete(k)))
            .await?
            .map_err(wkv_err))
    }
}

// ---------------- fermyon:spin/sqlite ----------------

/// `SPIN_LOCAL_TRACE_SQL=1`: every statement a component runs goes to stderr as one
/// tab-separated line (`sql-trace`, component, microseconds, ok/err, the statement's first 160
/// characters), to count what a request or a turn asks of the database (docs/performance.md).
fn trace_sql() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("SPIN_LOCAL_TRACE_SQL").is_some_and(|v| v == "1"))
}

impl sqlite::Host for HostState {}

impl sqlite::HostConnection for HostState {
    async fn open(
        &mut self,
        database: String,
    ) -> WResult<Result<Resource<SqliteConnection>, sqlite::Error>> {
        if !self.caps.sqlite_databases.contains(&database) {
            return Ok(Err(sqlite::Error::AccessDenied));
        }
        let Some(db) = self.stores.sqlite.get(&database).cloned() else {
            return Ok(Err(sqlite::Error::NoSuchDatabase));
        };
        let conn = match db {
            sqlite_db::Database::Local {
                path,
                allow_attach_file,
            } => match blocking(move || sqlite_db::open(&path, allow_attach_file)).await? {
                Ok(conn) => SqliteConnection::Local(Arc::new(Mutex::new(conn))),
                Err(e) => return Ok(Err(sqlite::Error::Io(format!("{e:#}")))),
            },
            // As Spin's libSQL connection: no I/O until the first statement.
            sqlite_db::Database::Remote(remote) => {
                SqliteConnection::Remote(Arc::new(crate::libsql_db::RemoteConnection::new(remote)))
            }
        };
        Ok(Ok(self.table.push(conn)?))
    }

    async fn execute(
        &mut self,
        this: Resource<SqliteConnection>,
        statement: String,
        parameters: Vec<sqlite::Value>,
    ) -> WResult<Result<sqlite::QueryResult, sqlite::Error>> {
        let params: Vec<sqlite_db::Value> = parameters
            .into_iter()
            .map(|v| match v {
                sqlite::Value::Integer(i) => sqlite_db::Value::Integer(i),
                sqlite::Value::Real(f) => sqlite_db::Value::Real(f),
                sqlite::Value::Text(s) => sqlite_db::Value::Text(s),
                sqlite::Value::Blob(b) => sqlite_db::Value::Blob(b),
                sqlite::Value::Null => sqlite_db::Value::Null,
            })
            .collect();
        let trace = trace_sql().then(|| (std::time::Instant::now(), statement.clone()));
        let result = match self.table.get(&this)? {
            SqliteConnection::Local(conn) => {
                let conn = conn.clone();
                blocking(move || {
                    let conn = conn.lock().unwrap_or_else(|p| p.into_inner());
                    sqlite_db::execute(&conn, &statement, &params)
                })
                .await?
                .map_err(|e| sqlite::Error::Io(e.to_string()))
            }
            SqliteConnection::Remote(conn) => {
                let conn = conn.clone();
                conn.execute(&statement, params).await.map_err(|e| match e {
                    crate::libsql_db::RemoteError::InvalidConnection => {
                        sqlite::Error::InvalidConnection
                    }
                    crate::libsql_db::RemoteError::Io(m) => sqlite::Error::Io(m),
                })
            }
        };
        if let Some((started, statement)) = trace {
            let text: String = statement.split_whitespace().collect::<Vec<_>>().join(" ");
            eprintln!(
                "sql-trace\t{}\t{}\t{}\t{}",
                self.caps.id,
                started.elapsed().as_micros(),
                if result.is_ok() { "ok" } else { "err" },
                text.chars().take(160).collect::<String>()
            );
        }
        Ok(result.map(|r| sqlite::QueryResult {
            columns: r.columns,
            rows: r
                .rows
                .into_iter()
                .map(|row| sqlite::RowResult {
                    values: row
                        .into_iter()
                        .map(|v| match v {
                            sqlite_db::Value::Integer(i) => sqlite::Value::Integer(i),
                            sqlite_db::Value::Real(f) => sqlite::Value::Real(f),
                            sqlite_db::Value::Text(s) => sqlite::Value::Text(s),
                            sqlite_db::Value::Blob(b) => sqlite::Value::Blob(b),
                            sqlite_db::Value::Null => sqlite::Value::Null,
                        })
                        .collect(),
                })
                .collect(),
        }))
    }

    async fn drop(&mut self, this: Resource<SqliteConnection>) -> WResult<()> {
        self.table.delete(this)?;
        Ok(())
    }
}

// ---------------- variables ----------------

impl variables::Host for HostState {
    async fn get(&mut self, name: String) -> WResult<Result<String, variables::Error>> {
        Ok(match lookup(&self.caps.variables, &self.caps.id, &name) {
            Lookup::Value(v) => Ok(v),
            Lookup::InvalidName(m) => Err(variables::Error::InvalidName(m)),
            Lookup::Undefined(m) => Err(variables::Error::Undefined(m)),
        })
    }
}

impl config::Host for HostState {
    async fn get(&mut self, key: String) -> WResult<Result<Option<String>, config::Error>> {
        Ok(match lookup(&self.caps.variables, &self.caps.id, &key) {
            Lookup::Value(v) => Ok(Some(v)),
            Lookup::Undefined(_) => Ok(None),
            Lookup::InvalidName(m) => Err(config::Error::Upstream(m)),
        })
    }

    async fn get_all(&mut self) -> WResult<Result<Vec<(String, String)>, config::Error>> {
        Ok(Ok(self
            .caps
            .variables
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()))
    }
}
