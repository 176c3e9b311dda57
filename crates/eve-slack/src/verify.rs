//! Slack's v0 request signature, checked exactly as eve's `slackChannel` checks it (through
//! `@chat-adapter/slack`'s `verifySlackRequest`): both headers present, a numeric timestamp
//! within 300 seconds of now either way, and `X-Slack-Signature` equal to
//! `v0=` + hex(HMAC-SHA256(signing secret, `v0:{timestamp}:{raw body}`)). Anything else is
//! refused (eve answers 401 `unauthorized`) before the body is looked at.

use eve_auth::crypto::{hex, hmac_sha256, hmac_sha256_verify};

/// The widest gap between the request's timestamp and now (eve's `maxSkewSeconds`).
pub const MAX_SKEW_SECS: i64 = 300;

/// Why a request was refused (for the log only: the answer is always the same 401).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unverified {
    /// No signing secret is configured: nothing can be verified.
    NoSecret,
    MissingHeaders,
    BadTimestamp,
    StaleTimestamp,
    BadSignature,
}

/// Checks a request: `timestamp` and `signature` are the `X-Slack-Request-Timestamp` and
/// `X-Slack-Signature` headers, `body` the raw bytes, `now_secs` the clock.
pub fn verify(
    secret: &str,
    timestamp: Option<&str>,
    signature: Option<&str>,
    body: &[u8],
    now_secs: i64,
) -> Result<(), Unverified> {
    if secret.is_empty() {
        return Err(Unverified::NoSecret);
    }
    let (Some(timestamp), Some(signature)) = (timestamp, signature) else {
        return Err(Unverified::MissingHeaders);
    };
    if timestamp.is_empty() || signature.is_empty() {
        return Err(Unverified::MissingHeaders);
    }
    let ts: f64 = timestamp
        .trim()
        .parse()
        .map_err(|_| Unverified::BadTimestamp)?;
    if !ts.is_finite() {
        return Err(Unverified::BadTimestamp);
    }
    if (now_secs as f64 - ts).abs() > MAX_SKEW_SECS as f64 {
        return Err(Unverified::StaleTimestamp);
    }
    let tag = signature
        .strip_prefix("v0=")
        .and_then(decode_hex)
        .ok_or(Unverified::BadSignature)?;
    let mut signed = format!("v0:{timestamp}:").into_bytes();
    signed.extend_from_slice(body);
    if hmac_sha256_verify(secret.as_bytes(), &signed, &tag) {
        Ok(())
    } else {
        Err(Unverified::BadSignature)
    }
}

/// The `X-Slack-Signature` Slack would send for `body` at `timestamp` (tests and the Slack
/// simulator sign with it).
pub fn sign(secret: &str, timestamp: &str, body: &[u8]) -> String {
    let mut signed = format!("v0:{timestamp}:").into_bytes();
    signed.extend_from_slice(body);
    format!("v0={}", hex(&hmac_sha256(secret.as_bytes(), &signed)))
}

fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if text.is_empty() || !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "8f742231b10e8888abcd99yyyzzz85a5";

    #[test]
    fn slacks_documented_example_verifies() {
        // https://api.slack.com/authentication/verifying-requests-from-slack
        let body = b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
        let sig = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
        assert_eq!(sign(SECRET, "1531420618", body), sig);
        assert_eq!(
            verify(SECRET, Some("1531420618"), Some(sig), body, 1531420618),
            Ok(())
        );
    }

    #[test]
    fn every_flaw_is_refused() {
        let body = br#"{"type":"url_verification","challenge":"c"}"#;
        let now = 1_700_000_000;
        let ts = now.to_string();
        let good = sign(SECRET, &ts, body);
        assert_eq!(verify(SECRET, Some(&ts), Some(&good), body, now), Ok(()));
        // Up to 300 s either way, not one more.
        assert_eq!(
            verify(SECRET, Some(&ts), Some(&good), body, now + 300),
            Ok(())
        );
        assert_eq!(
            verify(SECRET, Some(&ts), Some(&good), body, now + 301),
            Err(Unverified::StaleTimestamp)
        );
        assert_eq!(
            verify(SECRET, Some(&ts), Some(&good), body, now - 301),
            Err(Unverified::StaleTimestamp)
        );
        assert_eq!(
            verify("", Some(&ts), Some(&good), body, now),
            Err(Unverified::NoSecret)
        );
        assert_eq!(
            verify(SECRET, None, Some(&good), body, now),
            Err(Unverified::MissingHeaders)
        );
        assert_eq!(
            verify(SECRET, Some(&ts), None, body, now),
            Err(Unverified::MissingHeaders)
        );
        assert_eq!(
            verify(SECRET, Some("soon"), Some(&good), body, now),
            Err(Unverified::BadTimestamp)
        );
        assert_eq!(
            verify(SECRET, Some(&ts), Some(&good), b"{}", now),
            Err(Unverified::BadSignature)
        );
        assert_eq!(
            verify("another secret", Some(&ts), Some(&good), body, now),
            Err(Unverified::BadSignature)
        );
        for bad in ["v1=00", "v0=zz", "v0=abc", &good[3..]] {
            assert_eq!(
                verify(SECRET, Some(&ts), Some(bad), body, now),
                Err(Unverified::BadSignature),
                "{bad}"
            );
        }
    }
}
