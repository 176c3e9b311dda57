//! Password mode: the constant-time shared-password check (its throttle: [`crate::throttle`]).

use crate::crypto::{ct_eq, hmac_sha256, random_bytes};

/// A supplied password longer than this is refused before any work (bodies are bounded anyway).
pub const MAX_PASSWORD_BYTES: usize = 1024;

/// Whether `supplied` is the configured password. Both are MACed under a fresh random key and
/// the tags compared in constant time, so the time taken depends on neither value nor on where
/// or whether they differ (lengths included). With no password configured the same work is
/// done against an empty one, and the answer is false.
pub fn password_matches(configured: Option<&str>, supplied: &str) -> bool {
    let key = random_bytes::<32>();
    let expected = hmac_sha256(&key, configured.unwrap_or_default().as_bytes());
    let actual = hmac_sha256(&key, supplied.as_bytes());
    let equal = ct_eq(&expected, &actual);
    equal && configured.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configured_password_matches() {
        assert!(password_matches(
            Some("correct horse battery"),
            "correct horse battery"
        ));
    }

    #[test]
    fn a_wrong_password_of_any_length_does_not_match() {
        let configured = Some("correct horse battery");
        for wrong in [
            "",
            "correct horse batter",
            "correct horse battery ",
            "Correct horse battery",
            "x",
        ] {
            assert!(!password_matches(configured, wrong), "{wrong:?}");
        }
    }

    #[test]
    fn nothing_matches_when_no_password_is_configured() {
        assert!(!password_matches(None, ""));
        assert!(!password_matches(None, "anything"));
    }
}
