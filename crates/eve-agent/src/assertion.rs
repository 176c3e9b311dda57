//! How `eve-proxy` tells the private `agent` who is calling, so that nobody else can: the
//! proxy (after verifying the session cookie) sends the principal in the
//! [`PRINCIPAL_ASSERTION_HEADER`](eve_api::eve::PRINCIPAL_ASSERTION_HEADER), signed with
//! HMAC-SHA256 under a key derived from `session_secret` (purpose `agent-principal`, bound to
//! the auth mode) and valid for five minutes. The agent accepts nothing else. So the agent is
//! safe even where it must be reachable by URL (no service chaining, e.g. Fermyon Cloud).
//!
//! In `local-dev` mode without a `session_secret` a fixed, public development key is used:
//! local-dev has one principal and no sign-in anyway, so there is nothing more to protect.

use eve_api::auth::{AuthMode, Principal};
use eve_auth::cookie::SignedValueCodec;
use eve_auth::AuthConfig;
use serde::{Deserialize, Serialize};

/// How long an assertion is valid (it is checked once, when a request starts).
pub const ASSERTION_TTL_SECS: u64 = 300;
/// The development key of local-dev mode without a `session_secret` (not a secret).
const LOCAL_DEV_KEY: &str = "eve-chat local-dev agent assertion key (public)";
const PURPOSE: &str = "agent-principal";

#[derive(Serialize, Deserialize)]
struct Payload {
    p: Principal,
    exp: u64,
}

/// Seals and verifies principal assertions.
#[derive(Debug, Clone)]
pub struct AssertionCodec(SignedValueCodec);

/// The key material of this configuration: `(secret, previous secret, binding)`.
fn key_material(config: &AuthConfig) -> Option<(String, Option<String>, &'static str)> {
    let mode = config.mode();
    match config.usable_session_secret() {
        Some(secret) => Some((
            secret.expose().to_string(),
            config
                .usable_previous_secret()
                .map(|s| s.expose().to_string()),
            mode.as_str(),
        )),
        None if mode == AuthMode::LocalDev => {
            Some((LOCAL_DEV_KEY.to_string(), None, mode.as_str()))
        }
        None => None,
    }
}

impl AssertionCodec {
    /// The codec for this configuration; `None` when no key is available (sign-in is not
    /// configured: the proxy answers 401 anyway).
    pub fn from_config(config: &AuthConfig) -> Option<Self> {
        let (secret, previous, binding) = key_material(config)?;
        Some(AssertionCodec(SignedValueCodec::new(
            &secret,
            previous.as_deref(),
            PURPOSE,
            binding,
        )))
    }

    /// The codec of connection OAuth `state` values, from the same key material.
    pub fn state_codec(config: &AuthConfig) -> Option<crate::oauth::StateCodec> {
        let (secret, previous, binding) = key_material(config)?;
        Some(crate::oauth::StateCodec::new(
            &secret,
            previous.as_deref(),
            binding,
        ))
    }

    pub fn seal(&self, principal: &Principal, now_secs: u64) -> String {
        let payload = Payload {
            p: principal.clone(),
            exp: now_secs + ASSERTION_TTL_SECS,
        };
        self.0
            .seal(&serde_json::to_vec(&payload).expect("a principal serializes"))
    }

    /// The principal of a valid, unexpired assertion.
    pub fn verify(&self, value: &str, now_secs: u64) -> Option<Principal> {
        let (bytes, _) = self.0.open(value.trim()).ok()?;
        let payload: Payload = serde_json::from_slice(&bytes).ok()?;
        (payload.exp >= now_secs && payload.exp <= now_secs + ASSERTION_TTL_SECS + 60)
            .then_some(payload.p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(mode: &str, secret: Option<&str>) -> AuthConfig {
        AuthConfig::from_lookup(|name| match name {
            "auth_mode" => Some(mode.to_string()),
            "session_secret" => secret.map(str::to_string),
            "chat_password" => Some("a-strong-enough-password".into()),
            _ => None,
        })
    }

    fn alice() -> Principal {
        Principal {
            id: "alice".into(),
            mode: AuthMode::Password,
            name: None,
            email: None,
        }
    }

    const SECRET: &str = "0123456789abcdef0123456789abcdef-secret";

    #[test]
    fn an_assertion_verifies_only_with_the_same_secret_and_before_it_expires() {
        let codec = AssertionCodec::from_config(&config("password", Some(SECRET))).unwrap();
        let a = codec.seal(&alice(), 1000);
        assert_eq!(codec.verify(&a, 1000), Some(alice()));
        assert_eq!(codec.verify(&a, 1000 + ASSERTION_TTL_SECS + 1), None);
        let other = AssertionCodec::from_config(&config(
            "password",
            Some("another-secret-that-is-long-enough-000"),
        ))
        .unwrap();
        assert_eq!(other.verify(&a, 1000), None);
    }

    #[test]
    fn a_forged_or_tampered_assertion_is_refused() {
        let codec = AssertionCodec::from_config(&config("password", Some(SECRET))).unwrap();
        let a = codec.seal(&alice(), 1000);
        let mut tampered = a.clone();
        tampered.replace_range(5..6, if &a[5..6] == "A" { "B" } else { "A" });
        assert_eq!(codec.verify(&tampered, 1000), None);
        assert_eq!(codec.verify("alice", 1000), None);
        // A local-dev key never verifies in password mode.
        let dev = AssertionCodec::from_config(&config("local-dev", None)).unwrap();
        assert_eq!(codec.verify(&dev.seal(&alice(), 1000), 1000), None);
    }

    #[test]
    fn without_a_session_secret_only_local_dev_has_a_key() {
        assert!(AssertionCodec::from_config(&config("local-dev", None)).is_some());
        assert!(AssertionCodec::from_config(&config("password", None)).is_none());
    }
}
