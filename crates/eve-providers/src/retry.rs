//! Which failed model calls are tried again, and when: eve's rule (eve 0.80.1,
//! `dist/src/harness/model-call/retry.js` and `errors.js`), decided here as plain functions so
//! the turn only follows the answer ([`next`]).
//!
//! eve tries one model call at most [`MAX_ATTEMPTS`] times, waiting `500 ms · 2^(n-1)` plus up
//! to 250 ms of jitter after the `n`th failure, and only when the failure is transient: HTTP
//! 408, 409, 429 and 5xx (Anthropic's 529 overloaded among them), an `overloaded_error`,
//! `rate_limit_exceeded` or `timeout_error`, a network failure, a stream that stalled or broke.
//! A refused request (any other 4xx, a bad key, a bad body) fails at once. The AI SDK under
//! eve honours the provider's `Retry-After` when it asks for less than a minute; so do we.
//! Where we differ (docs/eve-protocol.md, "Retries"): a call that already streamed part of its
//! answer is not tried again, so nothing reaches the log twice.

use crate::model::{ModelError, RetryAfter};

/// How many times one model call is tried in all (eve's `runModelCallWithRetries`).
pub const MAX_ATTEMPTS: u32 = 3;
/// The wait after the first failure; it doubles after each next one.
pub const BASE_DELAY_MS: u64 = 500;
/// At most this much is added to each wait, at random, so that calls failed together do not
/// come back together.
pub const JITTER_MS: u64 = 250;
/// The longest `Retry-After` waited for (the AI SDK's bound): a provider asking for longer is
/// not asked again within this turn.
pub const MAX_RETRY_AFTER_MS: u64 = 60_000;

/// The error code of a call that failed after part of its answer was streamed
/// ([`broke_off`]).
pub const BROKE_OFF: &str = "broke_off";

/// What to do after a failed attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Wait this many milliseconds, then try the same call again.
    RetryAfter(u64),
    /// The call has failed for good, with this error.
    Fail(ModelError),
}

/// What follows attempt number `attempt` (1-based) of a call that failed with `error`:
/// `streamed` says whether the attempt wrote anything to the log (a retry would repeat it);
/// `jitter` is any random number; `now_ms` reads an HTTP-date `Retry-After`.
pub fn next(error: ModelError, attempt: u32, streamed: bool, jitter: u64, now_ms: i64) -> Next {
    let (transient, retry_after) = match &error {
        ModelError::Provider {
            transient,
            retry_after,
            ..
        } => (*transient, *retry_after),
        ModelError::Interrupted => (false, None),
    };
    if !transient {
        return Next::Fail(error);
    }
    if streamed {
        return Next::Fail(broke_off(error));
    }
    if attempt >= MAX_ATTEMPTS {
        return Next::Fail(error);
    }
    let backoff = backoff_ms(attempt, jitter);
    match retry_after.map(|r| wait_ms(r, now_ms)) {
        None => Next::RetryAfter(backoff),
        Some(asked) if asked <= MAX_RETRY_AFTER_MS => Next::RetryAfter(asked),
        // Asking before the provider allows would only spend the attempts.
        Some(_) => Next::Fail(error),
    }
}

/// eve's wait after failed attempt `attempt`: `500 ms · 2^(attempt-1)` plus `jitter` modulo
/// [`JITTER_MS`].
pub fn backoff_ms(attempt: u32, jitter: u64) -> u64 {
    let doubling = 1u64 << attempt.saturating_sub(1).min(16);
    BASE_DELAY_MS * doubling + jitter % JITTER_MS
}

/// How long from `now_ms` a `Retry-After` asks to wait (0 for a time already past).
pub fn wait_ms(retry_after: RetryAfter, now_ms: i64) -> u64 {
    match retry_after {
        RetryAfter::Delay(ms) => ms,
        RetryAfter::At(at) => u64::try_from(at.saturating_sub(now_ms)).unwrap_or(0),
    }
}

/// The same failure, once part of the answer was already streamed: not tried again (the log
/// would hold the part twice), and said so to the reader. The provider's words stay for the
/// operator's log.
pub fn broke_off(error: ModelError) -> ModelError {
    match error {
        ModelError::Provider { message, code, .. } => ModelError::provider(
            BROKE_OFF,
            format!("{message} ({code}, after part of the answer was streamed)"),
        ),
        other => other,
    }
}

/// Whether an HTTP status is worth trying again (eve's `classifyModelCallError`): a timeout,
/// a conflict, too many requests, or the server's own failure.
pub fn transient_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || status >= 500
}

/// Whether a provider's error type (an error body's or an error event's `type`) is worth
/// trying again: eve's three (`overloaded_error`, `rate_limit_exceeded`, `timeout_error`) and
/// Anthropic's names for a 429 and a 500 (`rate_limit_error`, `api_error`).
pub fn transient_type(kind: &str) -> bool {
    matches!(
        kind,
        "overloaded_error"
            | "rate_limit_exceeded"
            | "timeout_error"
            | "rate_limit_error"
            | "api_error"
    )
}

/// The `Retry-After` among a response's `headers`: OpenAI's `retry-after-ms` first, then
/// `retry-after` in seconds or as an HTTP date (what the AI SDK reads).
pub fn retry_after(headers: &[(String, String)]) -> Option<RetryAfter> {
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
    };
    if let Some(ms) = header("retry-after-ms").and_then(non_negative) {
        return Some(RetryAfter::Delay(ms as u64));
    }
    let value = header("retry-after")?;
    if let Some(secs) = non_negative(value) {
        return Some(RetryAfter::Delay((secs * 1000.0) as u64));
    }
    http_date_ms(value).map(RetryAfter::At)
}

fn non_negative(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|n| n.is_finite() && *n >= 0.0)
}

/// An HTTP date in its one current form, IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), as
/// milliseconds since the epoch.
pub fn http_date_ms(s: &str) -> Option<i64> {
    let mut parts = s.split_whitespace();
    let (_weekday, day, month, year, time, zone) = (
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
        parts.next()?,
    );
    if zone != "GMT" || parts.next().is_some() {
        return None;
    }
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let month = MONTHS.iter().position(|m| *m == month)? as i64 + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let hms: Vec<i64> = time
        .split(':')
        .map(|n| n.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, sec] = hms[..] else { return None };
    if !(1..=31).contains(&day) || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some(((days * 24 + h) * 60 + m) * 60_000 + sec * 1000)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn busy() -> ModelError {
        ModelError::transient("http_status", "Overloaded")
    }

    fn asking(retry_after: RetryAfter) -> ModelError {
        let ModelError::Provider { message, code, .. } = busy() else {
            unreachable!()
        };
        ModelError::Provider {
            message,
            code,
            transient: true,
            retry_after: Some(retry_after),
        }
    }

    #[test]
    fn a_transient_failure_is_tried_three_times_in_all_with_eves_doubling_waits() {
        assert_eq!(next(busy(), 1, false, 0, 0), Next::RetryAfter(500));
        assert_eq!(next(busy(), 2, false, 0, 0), Next::RetryAfter(1000));
        assert_eq!(next(busy(), 3, false, 0, 0), Next::Fail(busy()));
    }

    #[test]
    fn the_jitter_adds_less_than_a_quarter_second() {
        assert_eq!(backoff_ms(1, 249), 749);
        assert_eq!(backoff_ms(1, 250), 500);
        assert_eq!(backoff_ms(2, u64::MAX), 1000 + u64::MAX % 250);
        assert_eq!(backoff_ms(40, 0), 500 << 16, "never overflows");
    }

    #[test]
    fn a_refused_request_or_a_stop_is_not_tried_again() {
        let refused = ModelError::provider("http_status", "Incorrect API key");
        assert_eq!(next(refused.clone(), 1, false, 0, 0), Next::Fail(refused));
        assert_eq!(
            next(ModelError::Interrupted, 1, false, 0, 0),
            Next::Fail(ModelError::Interrupted)
        );
    }

    #[test]
    fn a_call_that_already_streamed_part_of_its_answer_fails_as_broken_off() {
        let Next::Fail(ModelError::Provider {
            code,
            message,
            transient,
            ..
        }) = next(busy(), 1, true, 0, 0)
        else {
            panic!()
        };
        assert_eq!((code.as_str(), transient), (BROKE_OFF, false));
        assert!(message.starts_with("Overloaded (http_status"), "{message}");
    }

    #[test]
    fn the_providers_retry_after_is_waited_instead_when_under_a_minute() {
        let r = next(asking(RetryAfter::Delay(7000)), 1, false, 99, 0);
        assert_eq!(r, Next::RetryAfter(7000));
        let at = next(asking(RetryAfter::At(10_000)), 1, false, 0, 4000);
        assert_eq!(at, Next::RetryAfter(6000));
        let past = next(asking(RetryAfter::At(1000)), 1, false, 0, 4000);
        assert_eq!(past, Next::RetryAfter(0));
        let long = asking(RetryAfter::Delay(MAX_RETRY_AFTER_MS + 1));
        assert_eq!(next(long.clone(), 1, false, 0, 0), Next::Fail(long));
    }

    #[test]
    fn timeouts_conflicts_rate_limits_and_server_errors_are_transient_other_4xx_not() {
        for s in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert!(transient_status(s), "{s}");
        }
        for s in [400, 401, 403, 404, 413, 422] {
            assert!(!transient_status(s), "{s}");
        }
        assert!(transient_type("overloaded_error") && transient_type("rate_limit_error"));
        assert!(
            !transient_type("invalid_request_error") && !transient_type("authentication_error")
        );
    }

    #[test]
    fn retry_after_is_read_in_milliseconds_seconds_or_as_an_http_date() {
        let h = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            retry_after(&h(&[("Retry-After", "2")])),
            Some(RetryAfter::Delay(2000))
        );
        assert_eq!(
            retry_after(&h(&[("retry-after", "1.5"), ("retry-after-ms", "120")])),
            Some(RetryAfter::Delay(120))
        );
        assert_eq!(
            retry_after(&h(&[("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT")])),
            Some(RetryAfter::At(784_111_777_000))
        );
        for bad in ["-1", "soon", "Sun, 06 Nov 1994 08:49:37 PST", ""] {
            assert_eq!(retry_after(&h(&[("retry-after", bad)])), None, "{bad}");
        }
        assert_eq!(retry_after(&[]), None);
    }
}
