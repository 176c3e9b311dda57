//! Fixed-window rate limiting over Spin key-value (`wasi:keyvalue` atomics), shared by every
//! component: `chat:create` in `chats`, `chat:send` in `eve-proxy`, login throttling in `auth`.
//!
//! The counter of the current window (`rate:<prefix>:<subject>:<window id>`, see
//! [`eve_store::ratelimit`]) is incremented with the atomic `increment` and read only through
//! it (`increment(key, 0)`): backends store counters in different byte formats, so a counter is
//! never read with `get`. Key-value has no TTL: the first hit of a window deletes the subject's
//! previous window. Failures of the store fail closed (503), never open.
//!
//! Sign-in throttling ([`login_begin`]) is not a fixed window but a per-address failure count
//! with a growing delay (arithmetic in [`eve_auth::throttle`]).

use eve_api::{ApiError, ErrorCode};
use eve_auth::cookie::SESSION_ABSOLUTE_LIFETIME_SECS;
use eve_auth::throttle::{
    self, ACCOUNT_FAILURES_PER_WINDOW, ACCOUNT_WINDOW_SECS, FAILURE_MEMORY_SECS,
};
use eve_store::limits::RatePolicy;
use eve_store::ratelimit::{allowed, stale_key, window};
use spin_sdk::wit::wasi::keyvalue::{atomics, store};

/// The key-value store that holds the counters (`key_value_stores = ["default"]`).
pub const STORE: &str = "default";

fn unavailable(e: store::Error) -> ApiError {
    store_unavailable("rate limiting", e)
}

/// A key-value store that failed (Redis down, a backend error): 503 with `Retry-After`, as a
/// database out of reach answers, so clients wait and try again instead of giving up. `what`
/// names what depends on it, for the answer and the log.
pub fn store_unavailable(what: &str, e: store::Error) -> ApiError {
    eprintln!("{what}: key-value store error: {e:?}");
    ApiError {
        retry_after_secs: Some(eve_store::sql::UNAVAILABLE_RETRY_AFTER_SECS),
        ..ApiError::new(ErrorCode::NotConfigured, format!("{what} is not available"))
    }
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
        let newer_remembered = remembered
            .as_deref()
            .and_then(|r| std::str::from_utf8(r).ok()?.trim().parse::<u64>().ok())
            .is_some_and(|r| r > w.id);
        if !newer_remembered {
            let _ = bucket.set(&w.last_key, w.id.to_string().as_bytes());
        }
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

/// The account-wide count of failed sign-ins (all addresses; fixed window).
pub const LOGIN_ACCOUNT_FAILURES_PREFIX: &str = "login:account-failures";

fn failure_keys(subject: &str) -> (String, String) {
    (
        format!("login:fail:{subject}:n"),
        format!("login:fail:{subject}:at"),
    )
}

fn read_secs(bucket: &store::Bucket, key: &str) -> Result<Option<u64>, ApiError> {
    let value = bucket.get(key).map_err(unavailable)?;
    Ok(value.and_then(|v| std::str::from_utf8(&v).ok()?.trim().parse().ok()))
}

/// A sign-in attempt that was let through; report how it ended with [`LoginAttempt::failed`]
/// or [`LoginAttempt::succeeded`].
#[must_use]
pub struct LoginAttempt {
    subject: String,
    account: String,
}

/// Lets a sign-in attempt of `subject` (a client address, see `auth::client_ip`) against
/// `account` through, or refuses it with 429 and a `Retry-After` that grows with the
/// address's failures. The attempt is counted as a failure up front (so a burst of parallel
/// guesses is throttled as it arrives) and uncounted by a success.
pub fn login_begin(subject: &str, account: &str, now: u64) -> Result<LoginAttempt, ApiError> {
    let bucket = store::open(STORE).map_err(unavailable)?;
    let (count_key, at_key) = failure_keys(subject);
    let mut last = read_secs(&bucket, &at_key)?;
    if last.is_some_and(|at| throttle::forgotten(at, now)) {
        bucket.delete(&count_key).map_err(unavailable)?;
        bucket.delete(&at_key).map_err(unavailable)?;
        last = None;
    }
    let reserved = atomics::increment(&bucket, &count_key, 1).map_err(unavailable)?;
    let prior = u64::try_from(reserved - 1).unwrap_or_default();
    let mut refusal = throttle::wait_secs(prior, last.unwrap_or_default(), now);
    if refusal.is_none() && prior > 0 {
        let w = window(
            LOGIN_ACCOUNT_FAILURES_PREFIX,
            account,
            ACCOUNT_WINDOW_SECS,
            now,
        );
        let account_failures = atomics::increment(&bucket, &w.key, 0).map_err(unavailable)?;
        if !allowed(account_failures, ACCOUNT_FAILURES_PER_WINDOW) {
            refusal = Some(w.retry_after_secs);
        }
    }
    if let Some(wait) = refusal {
        // A refused attempt is not a guess: it does not lengthen the wait.
        let _ = atomics::increment(&bucket, &count_key, -1);
        let mut refused = ApiError::rate_limited(wait);
        refused.message =
            format!("too many failed sign-ins from this address; try again in {wait} s");
        return Err(refused);
    }
    bucket
        .set(&at_key, now.to_string().as_bytes())
        .map_err(unavailable)?;
    Ok(LoginAttempt {
        subject: subject.to_string(),
        account: account.to_string(),
    })
}

impl LoginAttempt {
    /// The password was wrong: the address's failure stays counted, the account's is counted.
    /// Best effort: the address's count is already in.
    pub fn failed(self, now: u64) {
        let _ = check_at(
            LOGIN_ACCOUNT_FAILURES_PREFIX,
            &self.account,
            u64::MAX,
            ACCOUNT_WINDOW_SECS,
            now,
        );
        sweep_sign_in_keys(now);
    }

    /// Signed in: the address starts afresh (successes never count against anyone).
    pub fn succeeded(self) {
        if let Ok(bucket) = store::open(STORE) {
            let (count_key, at_key) = failure_keys(&self.subject);
            let _ = bucket.delete(&count_key);
            let _ = bucket.delete(&at_key);
        }
    }
}

/// Key-value has no TTL, so once an hour (the first failed sign-in of the hour does it) the
/// per-address failure records older than a day and logout times older than the longest
/// session are deleted. Best effort.
fn sweep_sign_in_keys(now: u64) {
    let Ok(bucket) = store::open(STORE) else {
        return;
    };
    let hour = now / 3600;
    if atomics::increment(&bucket, &format!("login:sweep:{hour}"), 1).ok() != Some(1) {
        return;
    }
    let _ = bucket.delete(&format!("login:sweep:{}", hour.saturating_sub(1)));
    let Ok(listing) = bucket.list_keys(None) else {
        return;
    };
    for key in listing.keys {
        let read = || read_secs(&bucket, &key).ok().flatten();
        if let Some(subject) = key
            .strip_prefix("login:fail:")
            .and_then(|k| k.strip_suffix(":at"))
        {
            if read().is_some_and(|at| now.saturating_sub(at) >= FAILURE_MEMORY_SECS) {
                let (count_key, at_key) = failure_keys(subject);
                let _ = bucket.delete(&count_key);
                let _ = bucket.delete(&at_key);
            }
        } else if key.starts_with("session:valid-after:")
            && read().is_some_and(|at| now.saturating_sub(at) > SESSION_ABSOLUTE_LIFETIME_SECS)
        {
            let _ = bucket.delete(&key);
        }
    }
}

/// For `/api/setup`'s `rateLimitReady`: the store opens and atomics work.
pub fn ready() -> bool {
    store::open(STORE)
        .and_then(|bucket| atomics::increment(&bucket, "rate:setup-probe", 0))
        .is_ok()
}
