//! Key-value backends behind both `fermyon:spin/key-value` and `wasi:keyvalue`.
//!
//! The SQLite backend uses Spin's own file layout (`spin_key_value (store, key, value)`), and
//! `increment` stores counters as 8 little-endian bytes of an i64 as Spin's SQLite store does,
//! so a `.spin/sqlite_key_value.db` moves between this host and `spin up` unchanged.

use anyhow::{Context, Result};
use rusqlite::{params, OptionalExtension, TransactionBehavior};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// One open key-value store (a label's backend).
pub trait KvStore: Send + Sync {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>>;
    fn set(&self, key: &str, value: &[u8]) -> Result<()>;
    fn delete(&self, key: &str) -> Result<()>;
    fn exists(&self, key: &str) -> Result<bool>;
    fn keys(&self) -> Result<Vec<String>>;
    /// Atomically adds `delta` to the counter at `key` (absent = 0) and returns the new value.
    fn increment(&self, key: &str, delta: i64) -> Result<i64>;
    /// Atomically replaces `key`'s value with `new` if it still equals `expected`
    /// (`None` = absent). Returns whether the swap happened.
    fn compare_and_swap(&self, key: &str, expected: Option<&[u8]>, new: &[u8]) -> Result<bool>;
}

/// Spin's SQLite-backed store.
pub struct SqliteKv {
    conn: Mutex<rusqlite::Connection>,
    store: String,
}

const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS spin_key_value (
    store TEXT NOT NULL,
    key   TEXT NOT NULL,
    value BLOB NOT NULL,
    PRIMARY KEY (store, key)
)";

/// Decodes a counter as written by `increment`. A value of another shape is not a counter.
fn decode_counter(bytes: &[u8]) -> Result<i64> {
    let arr: [u8; 8] = bytes.try_into().map_err(|_| {
        anyhow::anyhow!(
            "value is not a counter (expected 8 bytes, found {})",
            bytes.len()
        )
    })?;
    Ok(i64::from_le_bytes(arr))
}

impl SqliteKv {
    pub fn open(path: &Path, store: &str) -> Result<Arc<Self>> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let conn = rusqlite::Connection::open(path)
            .with_context(|| format!("cannot open key-value file {}", path.display()))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.execute(CREATE_TABLE, [])
            .with_context(|| format!("cannot initialise key-value file {}", path.display()))?;
        Ok(Arc::new(SqliteKv {
            conn: Mutex::new(conn),
            store: store.to_string(),
        }))
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, rusqlite::Connection> {
        // A panic while holding the lock cannot leave SQLite half-written (statements are
        // atomic), so a poisoned lock is still safe to use.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl KvStore for SqliteKv {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        Ok(self
            .conn()
            .prepare_cached("SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2")?
            .query_row(params![self.store, key], |r| r.get(0))
            .optional()?)
    }

    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.conn()
            .prepare_cached(
                "INSERT INTO spin_key_value (store, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT(store, key) DO UPDATE SET value = excluded.value",
            )?
            .execute(params![self.store, key, value])?;
        Ok(())
    }

    fn delete(&self, key: &str) -> Result<()> {
        self.conn()
            .prepare_cached("DELETE FROM spin_key_value WHERE store = ?1 AND key = ?2")?
            .execute(params![self.store, key])?;
        Ok(())
    }

    fn exists(&self, key: &str) -> Result<bool> {
        Ok(self.get(key)?.is_some())
    }

    fn keys(&self) -> Result<Vec<String>> {
        let conn = self.conn();
        let mut stmt =
            conn.prepare_cached("SELECT key FROM spin_key_value WHERE store = ?1 ORDER BY key")?;
        let rows = stmt.query_map(params![self.store], |r| r.get::<_, String>(0))?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    fn increment(&self, key: &str, delta: i64) -> Result<i64> {
        let mut conn = self.conn();
        // IMMEDIATE takes the write lock up front: another process incrementing the same file
        // waits instead of both reading the old value.
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current: Option<Vec<u8>> = tx
            .query_row(
                "SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2",
                params![self.store, key],
                |r| r.get(0),
            )
            .optional()?;
        let old = match current {
            Some(bytes) => decode_counter(&bytes)?,
            None => 0,
        };
        let new = old
            .checked_add(delta)
            .ok_or_else(|| anyhow::anyhow!("counter overflow"))?;
        tx.execute(
            "INSERT INTO spin_key_value (store, key, value) VALUES (?1, ?2, ?3)
             ON CONFLICT(store, key) DO UPDATE SET value = excluded.value",
            params![self.store, key, new.to_le_bytes().to_vec()],
        )?;
        tx.commit()?;
        Ok(new)
    }

    fn compare_and_swap(&self, key: &str, expected: Option<&[u8]>, new: &[u8]) -> Result<bool> {
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let current: Option<Vec<u8>> = tx
            .query_row(
                "SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2",
                params![self.store, key],
                |r| r.get(0),
            )
            .optional()?;
        if current.as_deref() != expected {
            return Ok(false);
        }
        tx.execute(
            "INSERT INTO spin_key_value (store, key, value) VALUES (?1, ?2, ?3)
             ON CONFLICT(store, key) DO UPDATE SET value = excluded.value",
            params![self.store, key, new],
        )?;
        tx.commit()?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_store(store: &str) -> (tempdir::Dir, Arc<SqliteKv>) {
        let dir = tempdir::Dir::new();
        let kv = SqliteKv::open(&dir.path().join("kv.db"), store).unwrap();
        (dir, kv)
    }

    /// A tiny self-cleaning temporary directory (no extra dependency for two tests).
    mod tempdir {
        pub struct Dir(std::path::PathBuf);
        impl Dir {
            pub fn new() -> Self {
                let p = std::env::temp_dir().join(format!(
                    "spin-local-kv-{}-{}",
                    std::process::id(),
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap()
                        .as_nanos()
                ));
                std::fs::create_dir_all(&p).unwrap();
                Dir(p)
            }
            pub fn path(&self) -> &std::path::Path {
                &self.0
            }
        }
        impl Drop for Dir {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(&self.0);
            }
        }
    }

    #[test]
    fn set_get_delete_and_keys_are_scoped_to_the_store() {
        let (dir, a) = temp_store("a");
        let b = SqliteKv::open(&dir.path().join("kv.db"), "b").unwrap();
        a.set("k", b"v").unwrap();
        assert_eq!(a.get("k").unwrap(), Some(b"v".to_vec()));
        assert_eq!(b.get("k").unwrap(), None);
        assert_eq!(a.keys().unwrap(), vec!["k".to_string()]);
        a.delete("k").unwrap();
        assert!(!a.exists("k").unwrap());
    }

    #[test]
    fn increment_stores_eight_little_endian_bytes_like_spin() {
        let (_dir, kv) = temp_store("default");
        assert_eq!(kv.increment("c", 1).unwrap(), 1);
        assert_eq!(kv.increment("c", 1).unwrap(), 2);
        assert_eq!(kv.get("c").unwrap(), Some(vec![2, 0, 0, 0, 0, 0, 0, 0]));
        assert_eq!(kv.increment("c", 0).unwrap(), 2);
        assert_eq!(kv.increment("c", -5).unwrap(), -3);
    }

    #[test]
    fn increment_refuses_a_value_that_is_not_a_counter() {
        let (_dir, kv) = temp_store("default");
        kv.set("s", b"hello").unwrap();
        assert!(kv.increment("s", 1).is_err());
        assert_eq!(kv.get("s").unwrap(), Some(b"hello".to_vec()));
    }

    #[test]
    fn concurrent_increments_from_two_connections_lose_no_update() {
        let (dir, kv) = temp_store("default");
        let other = SqliteKv::open(&dir.path().join("kv.db"), "default").unwrap();
        let handles: Vec<_> = [kv.clone(), other]
            .into_iter()
            .map(|s| {
                std::thread::spawn(move || {
                    (0..200).for_each(|_| {
                        s.increment("n", 1).unwrap();
                    })
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
        assert_eq!(kv.increment("n", 0).unwrap(), 400);
    }

    #[test]
    fn compare_and_swap_only_swaps_the_expected_value() {
        let (_dir, kv) = temp_store("default");
        assert!(kv.compare_and_swap("k", None, b"1").unwrap());
        assert!(!kv.compare_and_swap("k", None, b"2").unwrap());
        assert!(kv.compare_and_swap("k", Some(b"1"), b"3").unwrap());
        assert_eq!(kv.get("k").unwrap(), Some(b"3".to_vec()));
    }
}
