//! Fixed-window rate limiting, the arithmetic (the key-value side is `eve_spin::ratelimit`).
//!
//! Spin key-value has no TTL, so the window is part of the key:
//! `rate:<prefix>:<subject>:<floor(now / window)>`. The counter of a window is incremented
//! atomically; when a window's first hit is counted, the key of the subject's previous window
//! (remembered under `rate:<prefix>:<subject>:last`) is deleted, so at most two keys per
//! subject and prefix ever exist.

/// The window `now_secs` falls in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateWindow {
    /// `floor(now / window_secs)`.
    pub id: u64,
    /// The counter's key.
    pub key: String,
    /// Where the id of the subject's most recent window is remembered.
    pub last_key: String,
    /// Seconds until this window ends (at least 1): the `Retry-After` of a 429.
    pub retry_after_secs: u64,
}

/// The window of `subject` under `prefix` at `now_secs` (Unix seconds).
pub fn window(prefix: &str, subject: &str, window_secs: u64, now_secs: u64) -> RateWindow {
    let window_secs = window_secs.max(1);
    let id = now_secs / window_secs;
    let ends_at = (id + 1) * window_secs;
    RateWindow {
        id,
        key: counter_key(prefix, subject, id),
        last_key: format!("rate:{prefix}:{subject}:last"),
        retry_after_secs: (ends_at - now_secs).max(1),
    }
}

/// `rate:<prefix>:<subject>:<window id>`.
pub fn counter_key(prefix: &str, subject: &str, window_id: u64) -> String {
    format!("rate:{prefix}:{subject}:{window_id}")
}

/// Whether the action counted as number `count` of its window is allowed under `limit`.
pub fn allowed(count: i64, limit: u64) -> bool {
    u64::try_from(count).map_or(true, |c| c <= limit)
}

/// The stale key to delete once a window's first hit is counted: the remembered window's key
/// when it is older than this one. Never this window or a newer one: an instance whose clock
/// lags would otherwise delete the live counter of the window the others are in, and reset it.
pub fn stale_key(
    prefix: &str,
    subject: &str,
    remembered: Option<&[u8]>,
    current: u64,
) -> Option<String> {
    let previous: u64 = std::str::from_utf8(remembered?).ok()?.trim().parse().ok()?;
    (previous < current).then(|| counter_key(prefix, subject, previous))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_is_prefix_subject_and_window_id() {
        let w = window("chat:create", "user-1", 3600, 7200 + 5);
        assert_eq!(w.id, 2);
        assert_eq!(w.key, "rate:chat:create:user-1:2");
        assert_eq!(w.last_key, "rate:chat:create:user-1:last");
    }

    #[test]
    fn retry_after_is_the_time_left_in_the_window() {
        assert_eq!(window("p", "s", 3600, 3600).retry_after_secs, 3600);
        assert_eq!(window("p", "s", 3600, 3600 + 3599).retry_after_secs, 1);
        assert_eq!(window("p", "s", 60, 90).retry_after_secs, 30);
    }

    #[test]
    fn the_limit_itself_is_allowed_and_one_more_is_not() {
        assert!(allowed(1, 25));
        assert!(allowed(25, 25));
        assert!(!allowed(26, 25));
    }

    #[test]
    fn stale_key_is_the_remembered_window_unless_it_is_the_current_one() {
        assert_eq!(
            stale_key("p", "s", Some(b"4"), 7),
            Some("rate:p:s:4".into())
        );
        assert_eq!(stale_key("p", "s", Some(b"7"), 7), None);
        assert_eq!(stale_key("p", "s", None, 7), None);
        assert_eq!(stale_key("p", "s", Some(b"garbage"), 7), None);
    }

    #[test]
    fn stale_key_never_names_a_newer_window_than_the_current_one() {
        assert_eq!(stale_key("p", "s", Some(b"8"), 7), None);
        assert_eq!(stale_key("p", "s", Some(b"100"), 7), None);
    }

    #[test]
    fn zero_window_is_treated_as_one_second() {
        assert_eq!(window("p", "s", 0, 10).id, 10);
    }
}
