//! How `eve-proxy` tells the agent behind it who is calling: a short-lived HS256 JWT in
//! `Authorization: Bearer …`, the scheme a real eve agent verifies with
//! `jwtHmac({ secret, issuer, audiences })` from `eve/channels/auth`. Our own agent verifies the
//! same token and trusts nothing else, so it stays safe where it must be reachable by URL.
//!
//! Claims: `sub` (the principal id), `iss`, `aud`, `iat`, `exp` (five minutes), and ours:
//! `mode` (the auth mode), `name`, `email`. The secret is `eve_jwt_secret`, required outside
//! `local-dev` (a real eve agent needs it set to the same string as its `jwtHmac` secret). It
//! used to default to a key derived from `session_secret`, which is why the agent was given
//! the session secret; since issue 32 the agent holds this key alone, and `scripts/run` (and
//! the test harness) pass that same derived key ([`key_derived_from`]) when only a session
//! secret is configured, so existing installs keep their key. In `local-dev` mode without a
//! secret a fixed, public development key is used: local-dev has one principal and no
//! sign-in anyway.

use eve_api::auth::{AuthMode, Principal};
use eve_auth::crypto::{b64url, b64url_decode, hex, hmac_sha256, hmac_sha256_verify};
use serde::{Deserialize, Serialize};

/// How long a token is valid (it is checked once, when a request starts).
pub const TOKEN_TTL_SECS: u64 = 300;
/// Clock skew tolerated on `exp`/`iat`, as eve's verifier (30 s).
pub const CLOCK_SKEW_SECS: u64 = 30;
/// Default `iss` (variable `eve_jwt_issuer`).
pub const DEFAULT_ISSUER: &str = "eve-chat";
/// Default `aud` (variable `eve_jwt_audience`).
pub const DEFAULT_AUDIENCE: &str = "eve-agent";
/// The shortest `eve_jwt_secret` accepted.
pub const MIN_SECRET_CHARS: usize = 32;
const LOCAL_DEV_KEY: &str = "eve-chat local-dev upstream jwt key (public)";
const HEADER: &str = r#"{"alg":"HS256","typ":"JWT"}"#;
/// What `/api/setup` says while [`UpstreamJwt::from_vars`] has no key.
pub const MISSING: &str = "eve_jwt_secret: not set (a random secret of at least 32 characters \
    that eve-proxy signs its calls to the agent with; scripts/run derives one from \
    session_secret)";

/// What `/api/setup` lists while `mode` and the variables give no key (`None`: there is one).
pub fn missing(mode: AuthMode, lookup: impl Fn(&str) -> Option<String>) -> Option<&'static str> {
    UpstreamJwt::from_vars(mode, lookup)
        .is_none()
        .then_some(MISSING)
}

/// The key this app derived from `session_secret` before `eve_jwt_secret` became required:
/// HMAC-SHA256 of `eve-chat upstream jwt` under the session secret, in lowercase hex, as
/// `printf %s 'eve-chat upstream jwt' | openssl dgst -sha256 -hmac "$SESSION_SECRET"` prints
/// it. Setting `eve_jwt_secret` to it keeps an install's key, and with it the connection
/// tokens sealed under it ([`UpstreamJwt::token_key`]).
pub fn key_derived_from(session_secret: &str) -> String {
    // Untrimmed, as the sign-in configuration reads secrets: the same bytes, the same key.
    hex(&hmac_sha256(
        session_secret.as_bytes(),
        b"eve-chat upstream jwt",
    ))
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Claims {
    sub: String,
    iss: String,
    aud: String,
    iat: u64,
    exp: u64,
    mode: AuthMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    email: Option<String>,
}

/// Mints and verifies the proxy's upstream tokens.
#[derive(Clone)]
pub struct UpstreamJwt {
    secret: Vec<u8>,
    issuer: String,
    audience: String,
}

impl std::fmt::Debug for UpstreamJwt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamJwt")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .finish_non_exhaustive()
    }
}

impl UpstreamJwt {
    /// The codec of this deployment: `eve_jwt_secret` (at least [`MIN_SECRET_CHARS`]
    /// characters), else in `local-dev` mode a fixed public key; `None` otherwise (the proxy
    /// answers 503 and `/api/setup` lists the variable, [`missing`]). Of sign-in only the mode
    /// matters (issue 32): the agent, which runs model output and tools, holds this key and no
    /// session secret, so it verifies the proxy's tokens but can never mint a session cookie.
    /// `lookup` reads Spin variables.
    pub fn from_vars(mode: AuthMode, lookup: impl Fn(&str) -> Option<String>) -> Option<Self> {
        let var = |n: &str| {
            lookup(n)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let secret = match var("eve_jwt_secret") {
            Some(s) if s.chars().count() >= MIN_SECRET_CHARS => s.into_bytes(),
            Some(_) => return None,
            None if mode == AuthMode::LocalDev => LOCAL_DEV_KEY.as_bytes().to_vec(),
            None => return None,
        };
        Some(UpstreamJwt {
            secret,
            issuer: var("eve_jwt_issuer").unwrap_or_else(|| DEFAULT_ISSUER.into()),
            audience: var("eve_jwt_audience").unwrap_or_else(|| DEFAULT_AUDIENCE.into()),
        })
    }

    /// A codec with explicit parts (tests, tools).
    pub fn new(secret: &str, issuer: &str, audience: &str) -> Self {
        UpstreamJwt {
            secret: secret.as_bytes().to_vec(),
            issuer: issuer.into(),
            audience: audience.into(),
        }
    }

    /// A token naming `principal`, valid for [`TOKEN_TTL_SECS`].
    pub fn mint(&self, principal: &Principal, now_secs: u64) -> String {
        let claims = Claims {
            sub: principal.id.clone(),
            iss: self.issuer.clone(),
            aud: self.audience.clone(),
            iat: now_secs,
            exp: now_secs + TOKEN_TTL_SECS,
            mode: principal.mode,
            name: principal.name.clone(),
            email: principal.email.clone(),
        };
        let body = serde_json::to_vec(&claims).expect("claims serialize");
        let signing_input = format!("{}.{}", b64url(HEADER.as_bytes()), b64url(&body));
        let tag = hmac_sha256(&self.secret, signing_input.as_bytes());
        format!("{signing_input}.{}", b64url(&tag))
    }

    /// The principal of a valid token: HS256, signed with our secret, our issuer and audience,
    /// not expired, not issued in the future, and no longer-lived than we mint.
    pub fn verify(&self, token: &str, now_secs: u64) -> Option<Principal> {
        let mut parts = token.trim().split('.');
        let (h, b, s) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let header: serde_json::Value = serde_json::from_slice(&b64url_decode(h)?).ok()?;
        if header.get("alg")?.as_str()? != "HS256" {
            return None;
        }
        let tag = b64url_decode(s)?;
        if !hmac_sha256_verify(&self.secret, format!("{h}.{b}").as_bytes(), &tag) {
            return None;
        }
        let claims: Claims = serde_json::from_slice(&b64url_decode(b)?).ok()?;
        let fresh = claims.exp + CLOCK_SKEW_SECS >= now_secs
            && claims.iat <= now_secs + CLOCK_SKEW_SECS
            && claims.exp <= claims.iat + TOKEN_TTL_SECS;
        (fresh
            && claims.iss == self.issuer
            && claims.aud == self.audience
            && !claims.sub.is_empty())
        .then_some(Principal {
            id: claims.sub,
            mode: claims.mode,
            name: claims.name,
            email: claims.email,
        })
    }

    /// The `Authorization` header value of a token.
    pub fn bearer(&self, principal: &Principal, now_secs: u64) -> String {
        format!("Bearer {}", self.mint(principal, now_secs))
    }

    /// The token of an `Authorization: Bearer …` header value.
    pub fn from_bearer(header: &str) -> Option<&str> {
        let (scheme, token) = header.trim().split_once(' ')?;
        scheme
            .eq_ignore_ascii_case("bearer")
            .then_some(token.trim())
    }

    /// The key that seals connection tokens at rest (`connections::mcp_oauth::seal`), derived
    /// from the same secret: rotating it signs everyone out of their connections.
    pub fn token_key(&self) -> [u8; 32] {
        hmac_sha256(&self.secret, b"connection tokens")
    }

    /// The PKCE verifier of a sign-in, derived from its sealed `state`: the callback gets the
    /// state back and recomputes it, so the verifier itself never leaves the agent.
    pub fn pkce_verifier(&self, state: &str) -> String {
        b64url(&hmac_sha256(
            &self.secret,
            format!("pkce {state}").as_bytes(),
        ))
    }

    /// The key of connection OAuth `state` values, derived from the same secret.
    pub fn state_codec(&self) -> crate::flow_state::StateCodec {
        crate::flow_state::StateCodec::new(
            &hex(&hmac_sha256(&self.secret, b"oauth state")),
            None,
            "v1",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alice() -> Principal {
        Principal {
            id: "alice".into(),
            mode: AuthMode::Password,
            name: Some("Alice".into()),
            email: None,
        }
    }

    const NOW: u64 = 1_800_000_000;

    #[test]
    fn a_minted_token_verifies_to_its_principal() {
        let j = UpstreamJwt::new(
            "a shared secret of at least 32 characters",
            "eve-chat",
            "eve-agent",
        );
        let t = j.mint(&alice(), NOW);
        assert_eq!(t.split('.').count(), 3);
        assert_eq!(j.verify(&t, NOW + 10), Some(alice()));
    }

    #[test]
    fn the_token_is_a_standard_hs256_jwt_with_sub_iss_aud_and_exp() {
        let j = UpstreamJwt::new(
            "a shared secret of at least 32 characters",
            "iss-x",
            "aud-y",
        );
        let t = j.mint(&alice(), NOW);
        let mut p = t.split('.');
        let header: serde_json::Value =
            serde_json::from_slice(&b64url_decode(p.next().unwrap()).unwrap()).unwrap();
        let claims: serde_json::Value =
            serde_json::from_slice(&b64url_decode(p.next().unwrap()).unwrap()).unwrap();
        assert_eq!(header["alg"], "HS256");
        assert_eq!(claims["sub"], "alice");
        assert_eq!(claims["iss"], "iss-x");
        assert_eq!(claims["aud"], "aud-y");
        assert_eq!(
            claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(),
            TOKEN_TTL_SECS
        );
    }

    #[test]
    fn expired_foreign_tampered_or_misaddressed_tokens_are_refused() {
        let j = UpstreamJwt::new(
            "a shared secret of at least 32 characters",
            "eve-chat",
            "eve-agent",
        );
        let t = j.mint(&alice(), NOW);
        assert_eq!(
            j.verify(&t, NOW + TOKEN_TTL_SECS + CLOCK_SKEW_SECS + 1),
            None
        );
        assert_eq!(
            j.verify(&t, NOW - CLOCK_SKEW_SECS - 1),
            None,
            "issued in the future"
        );
        let other = UpstreamJwt::new(
            "another secret of at least 32 characters",
            "eve-chat",
            "eve-agent",
        );
        assert_eq!(other.verify(&t, NOW), None);
        let aud = UpstreamJwt::new(
            "a shared secret of at least 32 characters",
            "eve-chat",
            "other",
        );
        assert_eq!(aud.verify(&t, NOW), None);
        let mut bad = t.clone();
        bad.insert(t.find('.').unwrap() + 3, 'x');
        assert_eq!(j.verify(&bad, NOW), None);
        assert_eq!(j.verify("a.b", NOW), None);
        assert_eq!(j.verify("", NOW), None);
    }

    #[test]
    fn the_key_is_eve_jwt_secret_or_local_devs_and_never_a_session_secret() {
        let secret = "a shared secret of at least 32 characters";
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |n: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == n)
                    .map(|(_, v)| v.to_string())
            }
        };
        let t = UpstreamJwt::new(secret, DEFAULT_ISSUER, DEFAULT_AUDIENCE).mint(&alice(), NOW);
        let set = UpstreamJwt::from_vars(
            AuthMode::Password,
            vars(&[(
                "eve_jwt_secret",
                "a shared secret of at least 32 characters",
            )]),
        )
        .unwrap();
        assert_eq!(set.verify(&t, NOW), Some(alice()));
        let only_session = vars(&[("session_secret", "a session secret of at least 32 chars")]);
        for mode in [AuthMode::Password, AuthMode::Oidc, AuthMode::Accounts] {
            assert!(
                UpstreamJwt::from_vars(mode, only_session).is_none(),
                "{mode:?}"
            );
            assert_eq!(missing(mode, only_session), Some(MISSING));
        }
        let short = vars(&[("eve_jwt_secret", "short")]);
        assert!(UpstreamJwt::from_vars(AuthMode::LocalDev, short).is_none());
        let dev = UpstreamJwt::from_vars(AuthMode::LocalDev, vars(&[])).unwrap();
        assert_eq!(dev.secret, LOCAL_DEV_KEY.as_bytes());
        assert_eq!(missing(AuthMode::LocalDev, vars(&[])), None);
    }

    /// The derivation scripts/run does with openssl (the vector is openssl's output).
    #[test]
    fn the_derived_key_is_what_openssl_prints() {
        assert_eq!(
            key_derived_from("accounts-session-secret-0123456789abcdef"),
            "96d39a9756ee9d61a357c5853587eef81e9420c6424e9e7e98227b1b054b3980"
        );
    }

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        assert_eq!(UpstreamJwt::from_bearer("bearer abc"), Some("abc"));
        assert_eq!(UpstreamJwt::from_bearer("Bearer  abc "), Some("abc"));
        assert_eq!(UpstreamJwt::from_bearer("Basic abc"), None);
    }
}
