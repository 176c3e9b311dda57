//! A key-value store on a Redis server (runtime config `type = "redis"`), as Spin's Redis
//! backend: the label owns the whole Redis database, counters are Redis integers (INCRBY,
//! stored as decimal text — one reason counters are only read through `increment(key, 0)`),
//! and compare-and-swap is WATCH/MULTI/EXEC.
//!
//! **Spin 4.0.2's Redis swap reports `cas-failed` every time, also after its SET was applied,
//! and this host does the same on purpose.** Spin's `swap` (`crates/key-value-redis/src/
//! store.rs`) runs MULTI/SET/EXEC and then sends `UNWATCH <key>`; Redis's `UNWATCH` takes no
//! argument and answers "wrong number of arguments", which Spin turns into `CasFailed` whether
//! or not the EXEC applied the SET. An app that trusts a `cas-failed` from Redis loses its own
//! writes (the value was swapped, the guest thinks it was not); this host reproduces it so the
//! suite catches such an app (eve-spin's stream slots read their slot back instead). Checked
//! against Spin 4.0.2's source; see docs/local-host.md.

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
                // Spin's WATCH would make its EXEC a no-op here, and its UNWATCH fails as below:
                // `cas-failed` either way. Clear the watch: the connection goes back to the pool.
                redis::cmd("UNWATCH").query::<()>(c)?;
                return Ok(false);
            }
            let res: Option<(String,)> = redis::pipe()
                .atomic()
                .cmd("SET")
                .arg(key)
                .arg(new)
                .query(c)?;
            // Spin 4.0.2 ends every swap with `UNWATCH <key>` and maps its error to
            // `CasFailed`. The command is sent to the server as Spin sends it, so the answer
            // is the server's: on Redis (and Valkey) an error, so `cas-failed` after a SET
            // that was applied. EXEC has already cleared the watch; the connection is sound.
            match redis::cmd("UNWATCH").arg(key).query::<()>(c) {
                Ok(()) => Ok(res.is_some()),
                Err(e) if e.is_io_error() => Err(e),
                Err(_) => Ok(false),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Child, Command, Stdio};

    /// A throwaway `redis-server` on a free loopback port (scripts/prepare installs it).
    struct Server(Child, u16);
    impl Server {
        fn start() -> Server {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let child = Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"])
                .stdout(Stdio::null())
                .spawn()
                .expect("redis-server (scripts/prepare installs it)");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
                assert!(
                    std::time::Instant::now() < deadline,
                    "redis-server did not start"
                );
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Server(child, port)
        }
    }
    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    #[test]
    fn a_swap_on_redis_reports_failure_after_applying_the_set_as_spin_4_0_2_does() {
        let server = Server::start();
        let kv = RedisKv::open(&format!("redis://127.0.0.1:{}", server.1)).unwrap();
        // Absent → "1": applied, reported as not swapped (Spin's `UNWATCH <key>` error).
        assert!(!kv.compare_and_swap("k", None, b"1").unwrap());
        assert_eq!(kv.get("k").unwrap(), Some(b"1".to_vec()));
        // A stale expectation: not applied, and reported as not swapped.
        assert!(!kv.compare_and_swap("k", None, b"2").unwrap());
        assert_eq!(kv.get("k").unwrap(), Some(b"1".to_vec()));
        assert!(!kv.compare_and_swap("k", Some(b"1"), b"3").unwrap());
        assert_eq!(kv.get("k").unwrap(), Some(b"3".to_vec()));
        // The pooled connection carries no watch afterwards: a plain transaction still runs.
        kv.set("k", b"4").unwrap();
        assert_eq!(kv.increment("n", 2).unwrap(), 2);
        assert_eq!(kv.get("k").unwrap(), Some(b"4".to_vec()));
    }
}
