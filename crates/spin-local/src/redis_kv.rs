//! A key-value store on a Redis server (runtime config `type = "redis"`), as Spin's Redis
//! backend: the label owns the whole Redis database, counters are Redis integers (INCRBY,
//! stored as decimal text — one reason counters are only read through `increment(key, 0)`),
//! and compare-and-swap is WATCH/MULTI/EXEC.

use crate::kv::KvStore;
use anyhow::{Context, Result};
use std::sync::{Arc, Mutex};

pub struct RedisKv {
    client: redis::Client,
    /// A small pool: connections are reused, and a fresh one is made when all are busy.
    idle: Mutex<Vec<redis::Connection>>,
}

impl RedisKv {
    pub fn open(url: &str) -> Result<Arc<Self>> {
        let client = redis::Client::open(url).context("invalid redis url")?;
        let mut conn = client.get_connection().context("cannot connect")?;
        redis::cmd("PING")
            .query::<String>(&mut conn)
            .context("PING failed")?;
        Ok(Arc::new(RedisKv {
            client,
            idle: Mutex::new(vec![conn]),
        }))
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T> {
        let pooled = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut conn = match pooled {
            Some(c) => c,
            None => self.client.get_connection()?,
        };
        let out = f(&mut conn);
        // A connection that failed may be broken: only healthy ones go back to the pool.
        if out.is_ok() {
            self.idle
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(conn);
        }
        Ok(out?)
    }
}

impl KvStore for RedisKv {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.with(|c| redis::cmd("GET").arg(key).query(c))
    }
    fn set(&self, key: &str, value: &[u8]) -> Result<()> {
        self.with(|c| redis::cmd("SET").arg(key).arg(value).query(c))
    }
    fn delete(&self, key: &str) -> Result<()> {
        self.with(|c| redis::cmd("DEL").arg(key).query::<i64>(c))
            .map(|_| ())
    }
    fn exists(&self, key: &str) -> Result<bool> {
        self.with(|c| redis::cmd("EXISTS").arg(key).query::<i64>(c))
            .map(|n| n > 0)
    }
    fn keys(&self) -> Result<Vec<String>> {
        self.with(|c| redis::cmd("KEYS").arg("*").query(c))
    }
    fn increment(&self, key: &str, delta: i64) -> Result<i64> {
        self.with(|c| redis::cmd("INCRBY").arg(key).arg(delta).query(c))
    }
    fn compare_and_swap(&self, key: &str, expected: Option<&[u8]>, new: &[u8]) -> Result<bool> {
        self.with(|c| {
            redis::cmd("WATCH").arg(key).query::<()>(c)?;
            let current: Option<Vec<u8>> = redis::cmd("GET").arg(key).query(c)?;
            if current.as_deref() != expected {
                redis::cmd("UNWATCH").query::<()>(c)?;
                return Ok(false);
            }
            let res: Option<(String,)> = redis::pipe()
                .atomic()
                .cmd("SET")
                .arg(key)
                .arg(new)
                .query(c)?;
            Ok(res.is_some())
        })
    }
}
