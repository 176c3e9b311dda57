//! What one client or one component may use up: header and request deadlines, a bounded
//! lifetime for streamed responses, guest CPU time, guest memory, and connections per client
//! address. Real Spin sets none of these by default (it leaves them to the proxy in front of
//! it); this host serves development and test machines directly, so it bounds them itself.

use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// How often the epoch ticker advances: a running guest is checked (and yields to other
/// requests) at this interval.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

const DEFAULT_HEADER_READ_TIMEOUT_SECS: f64 = 30.0;
const DEFAULT_REQUEST_TIMEOUT_SECS: f64 = 120.0;
const DEFAULT_MAX_INSTANCE_LIFETIME_SECS: f64 = 2400.0;
const DEFAULT_CPU_LIMIT_SECS: f64 = 60.0;
const DEFAULT_MAX_INSTANCE_MEMORY_MIB: u32 = 256;
const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS: u32 = 256;

/// The host's limits, from `spin-local up` flags or `SPIN_LOCAL_*` environment variables.
#[derive(clap::Args, Debug, Clone)]
pub struct Limits {
    /// Seconds a client gets to send a request's headers before the connection is closed.
    #[arg(
        long = "header-read-timeout-secs",
        env = "SPIN_LOCAL_HEADER_READ_TIMEOUT_SECS",
        default_value_t = DEFAULT_HEADER_READ_TIMEOUT_SECS,
        value_parser = positive_secs
    )]
    pub header_read_timeout_secs: f64,
    /// Seconds a component gets to start its response (reading the request body included);
    /// past it the instance is stopped and the client gets 504.
    #[arg(
        long = "request-timeout-secs",
        env = "SPIN_LOCAL_REQUEST_TIMEOUT_SECS",
        default_value_t = DEFAULT_REQUEST_TIMEOUT_SECS,
        value_parser = positive_secs
    )]
    pub request_timeout_secs: f64,
    /// Seconds an instance may live in all, a streamed response body included; past it the
    /// instance is stopped and the body ends. Longer than the agent's 30-minute streams.
    #[arg(
        long = "max-instance-lifetime-secs",
        env = "SPIN_LOCAL_MAX_INSTANCE_LIFETIME_SECS",
        default_value_t = DEFAULT_MAX_INSTANCE_LIFETIME_SECS,
        value_parser = positive_secs
    )]
    pub max_instance_lifetime_secs: f64,
    /// Seconds of CPU time one instance's guest code may use (time spent waiting on I/O or
    /// the host's storage threads does not count); past it the instance traps.
    #[arg(
        long = "cpu-limit-secs",
        env = "SPIN_LOCAL_CPU_LIMIT_SECS",
        default_value_t = DEFAULT_CPU_LIMIT_SECS,
        value_parser = positive_secs
    )]
    pub cpu_limit_secs: f64,
    /// Linear memory one instance may grow to, in MiB; a larger `memory.grow` fails (a Rust
    /// guest then aborts: 500).
    #[arg(
        long = "max-instance-memory-mib",
        env = "SPIN_LOCAL_MAX_INSTANCE_MEMORY_MIB",
        default_value_t = DEFAULT_MAX_INSTANCE_MEMORY_MIB,
        value_parser = clap::value_parser!(u32).range(1..=4096)
    )]
    pub max_instance_memory_mib: u32,
    /// Open connections one client address may hold; more are answered 429 and closed.
    #[arg(
        long = "max-connections-per-address",
        env = "SPIN_LOCAL_MAX_CONNECTIONS_PER_ADDRESS",
        default_value_t = DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub max_connections_per_address: u32,
}

fn positive_secs(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !(v > 0.0 && v.is_finite() && Duration::try_from_secs_f64(v).is_ok()) {
        return Err(format!("`{s}`: give a positive number of seconds"));
    }
    Ok(v)
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read_timeout_secs: DEFAULT_HEADER_READ_TIMEOUT_SECS,
            request_timeout_secs: DEFAULT_REQUEST_TIMEOUT_SECS,
            max_instance_lifetime_secs: DEFAULT_MAX_INSTANCE_LIFETIME_SECS,
            cpu_limit_secs: DEFAULT_CPU_LIMIT_SECS,
            max_instance_memory_mib: DEFAULT_MAX_INSTANCE_MEMORY_MIB,
            max_connections_per_address: DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
        }
    }
}

impl Limits {
    pub fn header_read_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.header_read_timeout_secs)
    }
    pub fn request_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.request_timeout_secs)
    }
    pub fn max_instance_lifetime(&self) -> Duration {
        Duration::from_secs_f64(self.max_instance_lifetime_secs)
    }
    pub fn cpu_limit(&self) -> Duration {
        Duration::from_secs_f64(self.cpu_limit_secs)
    }
    pub fn max_instance_memory(&self) -> usize {
        (self.max_instance_memory_mib as usize) << 20
    }
}

/// Advances the engine's epoch every [`EPOCH_TICK`] for as long as the process runs, so
/// every running guest reaches its deadline callback at that interval.
pub fn start_epoch_ticker(engine: &wasmtime::Engine) {
    let engine = engine.weak();
    std::thread::Builder::new()
        .name("spin-local-epoch".into())
        .spawn(move || loop {
            std::thread::sleep(EPOCH_TICK);
            match engine.upgrade() {
                Some(e) => e.increment_epoch(),
                None => return,
            }
        })
        .expect("cannot start the epoch ticker thread");
}

/// The CPU time one instance's guest code has used: the time its task spends inside
/// `poll` (wasm runs there; waiting on I/O returns `Pending` and is not counted).
#[derive(Debug)]
pub struct CpuMeter {
    limit: Duration,
    state: Mutex<MeterState>,
}

#[derive(Debug, Default)]
struct MeterState {
    used: Duration,
    running_since: Option<Instant>,
    exceeded: bool,
}

impl CpuMeter {
    pub fn new(limit: Duration) -> Arc<Self> {
        Arc::new(CpuMeter {
            limit,
            state: Mutex::default(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MeterState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn enter(&self, now: Instant) {
        self.lock().running_since = Some(now);
    }

    fn leave(&self, now: Instant) {
        let mut s = self.lock();
        if let Some(since) = s.running_since.take() {
            s.used += now.saturating_duration_since(since);
        }
    }

    /// CPU time used up to `now`, the current run included.
    pub fn used(&self, now: Instant) -> Duration {
        let s = self.lock();
        s.used
            + s.running_since
                .map(|since| now.saturating_duration_since(since))
                .unwrap_or_default()
    }

    /// Whether the instance is past its limit at `now`; remembers it for the log line.
    pub fn check(&self, now: Instant) -> bool {
        let over = self.used(now) > self.limit;
        if over {
            self.lock().exceeded = true;
        }
        over
    }

    pub fn exceeded(&self) -> bool {
        self.lock().exceeded
    }

    pub fn limit(&self) -> Duration {
        self.limit
    }
}

/// A future whose time inside `poll` is charged to a [`CpuMeter`].
pub struct Metered<F> {
    inner: Pin<Box<F>>,
    meter: Arc<CpuMeter>,
}

impl<F> Metered<F> {
    pub fn new(meter: Arc<CpuMeter>, inner: F) -> Self {
        Metered {
            inner: Box::pin(inner),
            meter,
        }
    }
}

impl<F: Future> Future for Metered<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.meter.enter(Instant::now());
        let r = self.inner.as_mut().poll(cx);
        self.meter.leave(Instant::now());
        r
    }
}

/// Open connections per client address, capped.
#[derive(Debug, Clone)]
pub struct ConnectionCounter {
    cap: usize,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

/// One admitted connection; dropping it frees its place.
#[derive(Debug)]
pub struct ConnectionPermit {
    addr: IpAddr,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl ConnectionCounter {
    pub fn new(cap: u32) -> Self {
        ConnectionCounter {
            cap: cap as usize,
            open: Arc::default(),
        }
    }

    /// A place for one more connection from `addr`, or `None` when it has `cap` open.
    pub fn admit(&self, addr: IpAddr) -> Option<ConnectionPermit> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let n = open.entry(addr).or_insert(0);
        if *n >= self.cap {
            return None;
        }
        *n += 1;
        Some(ConnectionPermit {
            addr,
            open: self.open.clone(),
        })
    }

    #[cfg(test)]
    fn open_from(&self, addr: IpAddr) -> usize {
        self.open.lock().unwrap().get(&addr).copied().unwrap_or(0)
    }
}

impl Drop for ConnectionPermit {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = open.get_mut(&self.addr) {
            *n -= 1;
            // An address with nothing open leaves no entry behind, so the map stays small.
            if *n == 0 {
                open.remove(&self.addr);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_meter_counts_time_inside_runs_only() {
        let m = CpuMeter::new(Duration::from_secs(1));
        let t0 = Instant::now();
        m.enter(t0);
        m.leave(t0 + Duration::from_millis(300));
        // Waiting between runs is free.
        m.enter(t0 + Duration::from_secs(100));
        assert_eq!(
            m.used(t0 + Duration::from_secs(100) + Duration::from_millis(200)),
            Duration::from_millis(500)
        );
        assert!(!m.check(t0 + Duration::from_secs(100) + Duration::from_millis(600)));
        assert!(!m.exceeded());
        assert!(m.check(t0 + Duration::from_secs(100) + Duration::from_millis(800)));
        assert!(m.exceeded());
    }

    #[test]
    fn metered_futures_charge_their_polls() {
        let m = CpuMeter::new(Duration::from_secs(1));
        let mut f = Metered::new(m.clone(), async {
            std::thread::sleep(Duration::from_millis(20));
            7
        });
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        assert_eq!(Pin::new(&mut f).poll(&mut cx), Poll::Ready(7));
        let used = m.used(Instant::now());
        assert!(used >= Duration::from_millis(20), "{used:?}");
    }

    #[test]
    fn connections_are_capped_per_address_and_freed_on_drop() {
        let c = ConnectionCounter::new(2);
        let a: IpAddr = "127.0.0.2".parse().unwrap();
        let b: IpAddr = "127.0.0.1".parse().unwrap();
        let p1 = c.admit(a).unwrap();
        let _p2 = c.admit(a).unwrap();
        assert!(c.admit(a).is_none(), "a third connection from one address");
        let _q = c.admit(b).expect("another address is not affected");
        drop(p1);
        assert_eq!(c.open_from(a), 1);
        let _p3 = c.admit(a).expect("a freed place is reusable");
        drop(_p3);
        drop(_p2);
        assert_eq!(c.open_from(a), 0);
        assert!(!c.open.lock().unwrap().contains_key(&a));
    }

    #[test]
    fn durations_must_be_positive_numbers() {
        assert_eq!(positive_secs("2.5"), Ok(2.5));
        for bad in ["0", "-1", "abc", "inf", "NaN", "1e30"] {
            assert!(positive_secs(bad).is_err(), "{bad}");
        }
        let d = Limits::default();
        assert_eq!(d.max_instance_memory(), 256 << 20);
        assert!(d.max_instance_lifetime() > Duration::from_secs(30 * 60));
    }
}
