//! How many streams one principal may hold open at once (variable `max_streams_per_user`,
//! default [`DEFAULT_MAX_STREAMS`], at most 100,000), so that one client cannot take every connection the
//! deployment has.
//!
//! Key-value has no expiring keys and no atomic "increment unless at the cap", and a counter
//! that a killed host never decrements would lock its principal out for good. So each open
//! stream holds a *slot*: one of the keys `streams:<principal>:<0..max>`, claimed with
//! compare-and-swap and holding `<lease id> <expiry>` (Unix seconds). The stream renews its
//! expiry every [`RENEW_SECS`] while it runs and empties the slot when it ends; a slot whose
//! expiry has passed is free whatever it holds. A host killed mid-stream therefore frees its
//! slots [`LEASE_SECS`] later at most, and two requests racing for the last slot cannot both
//! win it.
//!
//! A `cas-failed` from `swap` is not taken as "another stream won": Spin 4.0.2's Redis store
//! answers `cas-failed` after every swap, also one whose SET was applied (docs/local-host.md).
//! So after a `cas-failed` the slot is read back, and it is ours when it holds our lease id
//! (64 random bits: no other stream holds the same). A rival that read the slot as free before
//! our SET cannot overwrite it afterwards (its WATCH, or its compare, sees our write), so what
//! the read-back shows is what the slot holds.

use eve_api::variables::Bounded;
use eve_api::ApiError;
use spin_sdk::wit::wasi::keyvalue::{atomics, store};

/// Open streams per principal when `max_streams_per_user` is unset.
pub const DEFAULT_MAX_STREAMS: u32 = 8;
/// How long a slot stays taken without a renewal: what a host killed mid-stream costs its
/// users (their reconnecting tabs find the dead streams' slots taken for at most this long).
pub const LEASE_SECS: u64 = 20;
/// How often an open stream renews its slot (well inside [`LEASE_SECS`]).
pub const RENEW_SECS: u64 = 5;
/// What the refused stream is told to wait before trying again.
pub const RETRY_AFTER_SECS: u64 = 10;

/// The variable `max_streams_per_user`: a value past its range is clamped (and logged), never
/// the default.
pub const MAX_STREAMS_PER_USER: Bounded = Bounded {
    name: "max_streams_per_user",
    default: DEFAULT_MAX_STREAMS as u64,
    min: 1,
    max: 100_000,
};

/// The cap for the variable's raw value.
pub fn max_streams(variable: Option<&str>) -> u32 {
    // The range's maximum fits in u32.
    MAX_STREAMS_PER_USER.read(variable) as u32
}

/// The key of `principal`'s slot `slot`.
pub fn slot_key(principal: &str, slot: u32) -> String {
    format!("streams:{principal}:{slot}")
}

/// A slot's value: the lease id and its expiry.
pub fn lease_value(lease_id: &str, expires_secs: u64) -> Vec<u8> {
    format!("{lease_id} {expires_secs}").into_bytes()
}

fn parse(value: &[u8]) -> Option<(&str, u64)> {
    let text = std::str::from_utf8(value).ok()?;
    let (id, expiry) = text.split_once(' ')?;
    Some((id, expiry.parse().ok()?))
}

/// Whether a slot holding `value` may be claimed at `now`: empty, unreadable or expired.
pub fn slot_is_free(value: Option<&[u8]>, now_secs: u64) -> bool {
    match value.and_then(parse) {
        Some((_, expires)) => expires <= now_secs,
        None => true,
    }
}

/// Whether a slot holding `value` is still the lease `lease_id`'s.
pub fn holds(value: Option<&[u8]>, lease_id: &str) -> bool {
    value.and_then(parse).is_some_and(|(id, _)| id == lease_id)
}

/// The message of the refused stream.
pub fn too_many_message(max: u32) -> String {
    format!(
        "Too many open streams: at most {max} at once per user. Close a chat in another tab or window, or try again shortly."
    )
}

fn unavailable(e: store::Error) -> ApiError {
    crate::ratelimit::store_unavailable("stream accounting", e)
}

fn now_secs() -> u64 {
    crate::auth::now_secs()
}

/// An open stream's slot; emptied when dropped.
pub struct StreamLease {
    bucket: store::Bucket,
    key: String,
    id: String,
    renewed_at: u64,
}

/// Claims a free slot of `principal`'s `max`; `Ok(None)` when all are taken.
pub fn acquire(principal: &str, max: u32) -> Result<Option<StreamLease>, ApiError> {
    let bucket = store::open(crate::ratelimit::STORE).map_err(unavailable)?;
    let id = format!("{:016x}", wasi::random::random::get_random_u64());
    let now = now_secs();
    for slot in 0..max {
        let key = slot_key(principal, slot);
        let cas = atomics::Cas::new(&bucket, &key).map_err(unavailable)?;
        if !slot_is_free(cas.current().map_err(unavailable)?.as_deref(), now) {
            continue;
        }
        match atomics::swap(cas, &lease_value(&id, now + LEASE_SECS)) {
            Ok(()) => {
                return Ok(Some(StreamLease {
                    bucket,
                    key,
                    id,
                    renewed_at: now,
                }))
            }
            // Either another stream took this slot first (try the next), or the store applied
            // our swap and reported it failed (Spin's Redis store does): the slot tells.
            Err(atomics::CasError::CasFailed(fresh)) => {
                if holds(fresh.current().map_err(unavailable)?.as_deref(), &id) {
                    return Ok(Some(StreamLease {
                        bucket,
                        key,
                        id,
                        renewed_at: now,
                    }));
                }
                continue;
            }
            Err(atomics::CasError::StoreError(e)) => return Err(unavailable(e)),
        }
    }
    Ok(None)
}

impl StreamLease {
    /// Extends the lease when a renewal is due. Best effort: a failed renewal lets the slot
    /// expire, which frees it for someone else, and never ends a stream that is running. (A
    /// `cas-failed` here may be Spin's Redis store reporting an applied swap: either way the
    /// outcome is ignored.)
    pub fn renew_if_due(&mut self) {
        let now = now_secs();
        if now < self.renewed_at + RENEW_SECS {
            return;
        }
        self.renewed_at = now;
        if let Ok(cas) = atomics::Cas::new(&self.bucket, &self.key) {
            if holds(cas.current().ok().flatten().as_deref(), &self.id) {
                let _ = atomics::swap(cas, &lease_value(&self.id, now + LEASE_SECS));
            }
        }
    }
}

impl Drop for StreamLease {
    fn drop(&mut self) {
        // Only our own lease: after an expiry the slot may be another stream's.
        if let Ok(cas) = atomics::Cas::new(&self.bucket, &self.key) {
            if holds(cas.current().ok().flatten().as_deref(), &self.id) {
                let _ = atomics::swap(cas, b"");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_free_when_empty_unreadable_or_expired() {
        let lease = lease_value("abc", 100);
        assert!(!slot_is_free(Some(&lease), 99));
        assert!(slot_is_free(Some(&lease), 100));
        assert!(slot_is_free(None, 0));
        assert!(slot_is_free(Some(b""), 0));
        assert!(slot_is_free(Some(b"garbage"), 0));
        assert!(slot_is_free(Some(b"abc notanumber"), 0));
    }

    #[test]
    fn only_the_lease_that_claimed_a_slot_holds_it() {
        let lease = lease_value("abc", 100);
        assert!(holds(Some(&lease), "abc"));
        assert!(!holds(Some(&lease), "abd"));
        assert!(!holds(Some(b""), "abc"));
        assert!(!holds(None, "abc"));
    }

    #[test]
    fn the_cap_is_a_positive_integer_clamped_to_its_range_or_the_default() {
        assert_eq!(max_streams(None), DEFAULT_MAX_STREAMS);
        assert_eq!(max_streams(Some(" 3 ")), 3);
        for bad in ["-1", "many", ""] {
            assert_eq!(max_streams(Some(bad)), DEFAULT_MAX_STREAMS, "{bad}");
        }
        // A raised limit past the range stays the highest allowed, never the lower default.
        assert_eq!(max_streams(Some("1001")), 1001);
        assert_eq!(max_streams(Some("5000000")), 100_000);
        assert_eq!(max_streams(Some("0")), 1);
        assert_eq!(slot_key("alice", 7), "streams:alice:7");
    }
}
