//! Fixed-window rate limiting over Spin key-value (`wasi:keyvalue` atomics), shared by every
//! component: `chat:create` in `chats`, `chat:send` in `eve-proxy`, login throttling in `auth`.
//!
//! The counter of the current window (`rate:<prefix>:<subject>:<window id>`, see
//! [`eve_store::ratelimit`]) is incremented with the atomic `increment` and read only through
//! it (`increment(key, 0)`): backends store counters in different byte formats, so a counter is
//! never read with `get`. Key-value has no TTL: the first hit of a window deletes the subject's
//! previous window. Failures of the store fail closed (503), never open.

use eve_api::{ApiError, ErrorCode};
use eve_store::limits::RatePolicy;
use eve_store::ratelimit::{allowed, stale_key, window};
use spin_sdk::wit::wasi::keyvalue::{atomics, store};

/// The key-value store that holds the counters (`key_value_stores = ["default"]`).
pub const STORE: &str = "default";

fn unavailable(e: store::Error) -> ApiError {
    eprintln!("ratelimit: key-value store error: {e:?}");
    ApiError::new(ErrorCode::NotConfigured, "rate limiting is not available")
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// Counts one action of `subject` under `prefix`; 429 with `Retry-After` (seconds until the
/// window ends) once more than `limit` happened in the current `window_secs` window.
pub fn check(prefix: &str, subject: &str, limit: u64, window_secs: u64) -> Result<(), ApiError> {
    check_at(prefix, subject, limit, window_secs, now_secs())
}

/// [`check`] with a [`RatePolicy`] (e.g. [`eve_store::limits::CHAT_CREATE`]).
pub fn check_policy(policy: RatePolicy, subject: &str) -> Result<(), ApiError> {
    check(policy.prefix, subject, policy.limit, policy.window_secs)
}

/// [`check`] at a given time (Unix seconds).
pub fn check_at(
    prefix: &str,
    subject: &str,
    limit: u64,
    window_secs: u64,
    now_secs: u64,
) -> Result<(), ApiError> {
    let bucket = store::open(STORE).map_err(unavailable)?;
    let w = window(prefix, subject, window_secs, now_secs);
    let count = atomics::increment(&bucket, &w.key, 1).map_err(unavailable)?;
    if count == 1 {
        // First hit of this window: forget the previous one. Best effort: a failure here
        // leaves one stale key behind and must not refuse the action.
        let remembered = bucket.get(&w.last_key).ok().flatten();
        if let Some(stale) = stale_key(prefix, subject, remembered.as_deref(), w.id) {
            let _ = bucket.delete(&stale);
        }
        let _ = bucket.set(&w.last_key, w.id.to_string().as_bytes());
    }
    if allowed(count, limit) {
        Ok(())
    } else {
        Err(ApiError::rate_limited(w.retry_after_secs))
    }
}

/// How many actions `subject` has used in the current window, without counting one (read as
/// `increment(key, 0)`).
pub fn used(prefix: &str, subject: &str, window_secs: u64) -> Result<i64, ApiError> {
    let bucket = store::open(STORE).map_err(unavailable)?;
    let w = window(prefix, subject, window_secs, now_secs());
    atomics::increment(&bucket, &w.key, 0).map_err(unavailable)
}

/// Clears `subject`'s current window (e.g. after a successful login).
pub fn reset(prefix: &str, subject: &str, window_secs: u64) -> Result<(), ApiError> {
    let bucket = store::open(STORE).map_err(unavailable)?;
    let w = window(prefix, subject, window_secs, now_secs());
    bucket.delete(&w.key).map_err(unavailable)
}

/// For `/api/setup`'s `rateLimitReady`: the store opens and atomics work.
pub fn ready() -> bool {
    store::open(STORE)
        .and_then(|bucket| atomics::increment(&bucket, "rate:setup-probe", 0))
        .is_ok()
}
