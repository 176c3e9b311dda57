//! The session cookie: a compact JSON payload (principal, mode, name, email, issue / expiry /
//! sign-in times) signed with HMAC-SHA256, verified in constant time, with one previous secret
//! accepted for rotation and a sliding lifetime under an absolute cap.
//!
//! Wire form: `v1.<base64url(payload)>.<base64url(tag)>`, tag = HMAC-SHA256(key, `v1.<payload>`).
//! The key is derived from the secret, the purpose (session or OIDC flow) and a binding string
//! (the mode's identity), so a value signed for one purpose or configuration never verifies for
//! another.

use eve_api::auth::{AuthMode, Principal};
use serde::{Deserialize, Serialize};

use crate::crypto::{b64url, b64url_decode, hmac_sha256, hmac_sha256_verify};

/// The session cookie's name. The `__Host-` prefix makes browsers keep it only when it is
/// `Secure`, `Path=/` and has no `Domain`, so neither a sibling subdomain nor a plain-http
/// man in the middle can plant or overwrite one.
pub const SESSION_COOKIE_NAME: &str = "__Host-eve_chat_session";
/// A session lasts this long after its last refresh (7 days)...
pub const SESSION_LIFETIME_SECS: u64 = 7 * 24 * 3600;
/// ...but never longer than this after sign-in (30 days), however often it is used.
pub const SESSION_ABSOLUTE_LIFETIME_SECS: u64 = 30 * 24 * 3600;
/// A cookie older than this (since issue or last refresh) is reissued on use.
pub const SESSION_REFRESH_AFTER_SECS: u64 = 24 * 3600;
/// Tolerated clock difference between instances for "issued in the future".
pub const CLOCK_SKEW_SECS: u64 = 60;
/// Longer values are rejected before any decoding work.
pub const MAX_SIGNED_VALUE_CHARS: usize = 4096;

const VERSION_PREFIX: &str = "v1.";

/// Why a signed value was rejected. Callers answer every variant with the same 401, so that a
/// client cannot tell a forged cookie from an expired one by the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CookieError {
    /// Not of the `v1.<payload>.<tag>` shape, bad base64, oversized, or an unreadable payload.
    Malformed,
    /// The tag matches neither the current nor the previous secret.
    BadSignature,
    /// Past its expiry or its absolute lifetime, or issued implausibly far in the future.
    Expired,
    /// Issued for another auth mode than the one now configured.
    WrongMode,
}

/// Which secrets sign and verify values for one purpose and binding.
#[derive(Clone)]
pub struct SignedValueCodec {
    current: [u8; 32],
    previous: Option<[u8; 32]>,
}

impl std::fmt::Debug for SignedValueCodec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SignedValueCodec(<keys redacted>)")
    }
}

fn derive_key(secret: &str, purpose: &str, binding: &str) -> [u8; 32] {
    let context = format!("eve-chat/{purpose}/v1\0{binding}");
    hmac_sha256(secret.as_bytes(), context.as_bytes())
}

impl SignedValueCodec {
    /// `purpose` separates kinds of signed values (`session`, `oidc-flow`); `binding` ties them
    /// to the configuration they were issued under.
    pub fn new(secret: &str, previous: Option<&str>, purpose: &str, binding: &str) -> Self {
        SignedValueCodec {
            current: derive_key(secret, purpose, binding),
            previous: previous.map(|p| derive_key(p, purpose, binding)),
        }
    }

    /// Signs `payload` with the current secret.
    pub fn seal(&self, payload: &[u8]) -> String {
        let signed = format!("{VERSION_PREFIX}{}", b64url(payload));
        let tag = hmac_sha256(&self.current, signed.as_bytes());
        format!("{signed}.{}", b64url(&tag))
    }

    /// The payload of a value this codec (or its previous secret) signed, and whether the
    /// previous secret was the one that matched. Both tags are always computed and compared in
    /// constant time, so timing does not reveal which secret (if any) matched.
    pub fn open(&self, value: &str) -> Result<(Vec<u8>, bool), CookieError> {
        if value.len() > MAX_SIGNED_VALUE_CHARS || !value.starts_with(VERSION_PREFIX) {
            return Err(CookieError::Malformed);
        }
        let (signed, tag) = value.rsplit_once('.').ok_or(CookieError::Malformed)?;
        let payload_b64 = signed
            .strip_prefix(VERSION_PREFIX)
            .ok_or(CookieError::Malformed)?;
        if payload_b64.is_empty() || payload_b64.contains('.') {
            return Err(CookieError::Malformed);
        }
        let tag = b64url_decode(tag)
            .filter(|t| t.len() == 32)
            .ok_or(CookieError::Malformed)?;
        let current_ok = hmac_sha256_verify(&self.current, signed.as_bytes(), &tag);
        let previous_ok = self
            .previous
            .as_ref()
            .is_some_and(|key| hmac_sha256_verify(key, signed.as_bytes(), &tag));
        if !current_ok && !previous_ok {
            return Err(CookieError::BadSignature);
        }
        let payload = b64url_decode(payload_b64).ok_or(CookieError::Malformed)?;
        Ok((payload, !current_ok))
    }
}

/// What a session cookie says. Short field names keep the cookie small.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionClaims {
    /// The principal id (the isolation key of all stored data).
    pub sub: String,
    pub mode: AuthMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// Issued (or last refreshed) at, Unix seconds.
    pub iat: u64,
    /// Expires at, Unix seconds.
    pub exp: u64,
    /// Signed in at, Unix seconds: the absolute lifetime counts from here.
    pub auth: u64,
}

impl SessionClaims {
    /// Fresh claims for a principal that has just signed in.
    pub fn new(principal: &Principal, now: u64) -> Self {
        SessionClaims {
            sub: principal.id.clone(),
            mode: principal.mode,
            name: principal.name.clone(),
            email: principal.email.clone(),
            iat: now,
            exp: now + SESSION_LIFETIME_SECS,
            auth: now,
        }
    }

    /// The principal these claims name.
    pub fn principal(&self) -> Principal {
        Principal {
            id: self.sub.clone(),
            mode: self.mode,
            name: self.name.clone(),
            email: self.email.clone(),
        }
    }

    /// The same session, reissued at `now`: a new sliding expiry, capped by the absolute one.
    pub fn refreshed(&self, now: u64) -> Self {
        let cap = self.auth + SESSION_ABSOLUTE_LIFETIME_SECS;
        SessionClaims {
            iat: now,
            exp: (now + SESSION_LIFETIME_SECS).min(cap),
            ..self.clone()
        }
    }

    /// Seconds until expiry (the cookie's `Max-Age`).
    pub fn max_age(&self, now: u64) -> u64 {
        self.exp.saturating_sub(now)
    }
}

/// A verified session cookie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub claims: SessionClaims,
    /// Signed with `session_secret_previous`: reissue it under the current secret.
    pub used_previous_secret: bool,
}

impl Verified {
    /// Whether to reissue the cookie now: it was signed with the previous secret, or it is older
    /// than [`SESSION_REFRESH_AFTER_SECS`] and refreshing would extend it.
    pub fn needs_refresh(&self, now: u64) -> bool {
        let old = now.saturating_sub(self.claims.iat) >= SESSION_REFRESH_AFTER_SECS;
        let extends = self.claims.refreshed(now).exp > self.claims.exp;
        self.used_previous_secret || (old && extends)
    }
}

/// Signs and verifies session cookies for the configured mode.
#[derive(Debug, Clone)]
pub struct SessionCodec {
    mode: AuthMode,
    codec: SignedValueCodec,
}

impl SessionCodec {
    pub fn new(mode: AuthMode, secret: &str, previous: Option<&str>, binding: &str) -> Self {
        SessionCodec {
            mode,
            codec: SignedValueCodec::new(secret, previous, "session", binding),
        }
    }

    /// The mode this codec issues cookies for.
    pub fn mode(&self) -> AuthMode {
        self.mode
    }

    /// A cookie value for `claims`, signed with the current secret.
    pub fn seal(&self, claims: &SessionClaims) -> String {
        let payload = serde_json::to_vec(claims).expect("claims always serialize");
        self.codec.seal(&payload)
    }

    /// A cookie value for a principal that has just signed in.
    pub fn issue(&self, principal: &Principal, now: u64) -> (String, SessionClaims) {
        let claims = SessionClaims::new(principal, now);
        (self.seal(&claims), claims)
    }

    /// Like [`SessionCodec::issue`], with the sign-in time given (a second past a logout in the
    /// same second, so the new session is not void).
    pub fn issue_signed_in_at(
        &self,
        principal: &Principal,
        now: u64,
        signed_in_at: u64,
    ) -> (String, SessionClaims) {
        let mut claims = SessionClaims::new(principal, now);
        claims.auth = signed_in_at.max(now);
        (self.seal(&claims), claims)
    }

    /// Verifies a cookie value: signature (constant time, current then previous secret), shape,
    /// mode, expiry and absolute lifetime.
    pub fn verify(&self, value: &str, now: u64) -> Result<Verified, CookieError> {
        let (payload, used_previous_secret) = self.codec.open(value)?;
        let claims: SessionClaims =
            serde_json::from_slice(&payload).map_err(|_| CookieError::Malformed)?;
        if claims.sub.is_empty() {
            return Err(CookieError::Malformed);
        }
        if claims.mode != self.mode {
            return Err(CookieError::WrongMode);
        }
        let expired = claims.exp <= now
            || claims.iat > now + CLOCK_SKEW_SECS
            || claims.exp > claims.iat + SESSION_LIFETIME_SECS
            || claims.exp > claims.auth + SESSION_ABSOLUTE_LIFETIME_SECS;
        if expired {
            return Err(CookieError::Expired);
        }
        Ok(Verified {
            claims,
            used_previous_secret,
        })
    }
}

/// The values of every cookie called `name` in a `Cookie` request header (a browser may send
/// several when paths differ).
pub fn cookie_values<'a>(header: &'a str, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    header.split(';').filter_map(move |pair| {
        let (k, v) = pair.trim().split_once('=')?;
        (k.trim() == name).then(|| v.trim().trim_matches('"'))
    })
}

/// A `Set-Cookie` value: HttpOnly, SameSite=Lax, the given path and lifetime, Secure on https.
pub fn set_cookie(name: &str, value: &str, path: &str, max_age_secs: u64, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{name}={value}; Path={path}; Max-Age={max_age_secs}; HttpOnly; SameSite=Lax{secure}")
}

/// `Set-Cookie` for a session cookie value: always `Secure` and `Path=/` (the `__Host-` rules).
/// Browsers accept `Secure` cookies from http://localhost and 127.0.0.0/8 too (secure
/// contexts), which is why plain http is usable only there.
pub fn session_set_cookie(value: &str, max_age_secs: u64) -> String {
    set_cookie(SESSION_COOKIE_NAME, value, "/", max_age_secs, true)
}

/// `Set-Cookie` that deletes the session cookie.
pub fn session_clear_cookie() -> String {
    clear_cookie(SESSION_COOKIE_NAME, "/", true)
}

/// A `Set-Cookie` value that deletes the cookie.
pub fn clear_cookie(name: &str, path: &str, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!(
        "{name}=; Path={path}; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax{secure}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "0123456789abcdef0123456789abcdef";
    const OTHER: &str = "fedcba9876543210fedcba9876543210";
    const NOW: u64 = 1_750_000_000;

    fn principal() -> Principal {
        Principal {
            id: "eve-chat-user".into(),
            mode: AuthMode::Password,
            name: Some("Eve".into()),
            email: None,
        }
    }

    fn codec(secret: &str, previous: Option<&str>) -> SessionCodec {
        SessionCodec::new(AuthMode::Password, secret, previous, "password:abc")
    }

    #[test]
    fn an_issued_cookie_verifies_to_the_same_principal() {
        let c = codec(SECRET, None);
        let (value, _) = c.issue(&principal(), NOW);
        let v = c.verify(&value, NOW + 10).unwrap();
        assert_eq!(v.claims.principal(), principal());
        assert!(!v.used_previous_secret);
        assert!(!v.needs_refresh(NOW + 10));
    }

    #[test]
    fn a_tampered_payload_is_rejected() {
        let c = codec(SECRET, None);
        let (value, mut claims) = c.issue(&principal(), NOW);
        claims.sub = "someone-else".into();
        let forged_payload = b64url(&serde_json::to_vec(&claims).unwrap());
        let tag = value.rsplit_once('.').unwrap().1;
        let forged = format!("v1.{forged_payload}.{tag}");
        assert_eq!(c.verify(&forged, NOW), Err(CookieError::BadSignature));
    }

    #[test]
    fn a_tampered_tag_is_rejected() {
        let c = codec(SECRET, None);
        let (value, _) = c.issue(&principal(), NOW);
        let mut bytes = value.into_bytes();
        let last = bytes.len() - 2;
        bytes[last] = if bytes[last] == b'A' { b'B' } else { b'A' };
        let value = String::from_utf8(bytes).unwrap();
        assert!(matches!(
            c.verify(&value, NOW),
            Err(CookieError::BadSignature | CookieError::Malformed)
        ));
    }

    #[test]
    fn a_truncated_cookie_is_rejected() {
        let c = codec(SECRET, None);
        let (value, _) = c.issue(&principal(), NOW);
        for cut in [0, 2, 3, 10, value.len() / 2, value.len() - 1] {
            assert!(c.verify(&value[..cut], NOW).is_err(), "cut at {cut}");
        }
        let without_tag = value.rsplit_once('.').unwrap().0;
        assert_eq!(c.verify(without_tag, NOW), Err(CookieError::Malformed));
    }

    #[test]
    fn garbage_and_oversized_values_are_malformed() {
        let c = codec(SECRET, None);
        for v in [
            "",
            "v1.",
            "v1..",
            "v2.abc.def",
            "not a cookie",
            "v1.a.b.c",
            "v1.!!!.???",
        ] {
            assert!(c.verify(v, NOW).is_err(), "{v:?}");
        }
        let huge = format!("v1.{}.x", "a".repeat(5000));
        assert_eq!(c.verify(&huge, NOW), Err(CookieError::Malformed));
    }

    #[test]
    fn an_expired_cookie_is_rejected() {
        let c = codec(SECRET, None);
        let (value, _) = c.issue(&principal(), NOW);
        assert_eq!(
            c.verify(&value, NOW + SESSION_LIFETIME_SECS),
            Err(CookieError::Expired)
        );
        assert!(c.verify(&value, NOW + SESSION_LIFETIME_SECS - 1).is_ok());
    }

    #[test]
    fn a_cookie_issued_in_the_future_is_rejected() {
        let c = codec(SECRET, None);
        let (value, _) = c.issue(&principal(), NOW + 3600);
        assert_eq!(c.verify(&value, NOW), Err(CookieError::Expired));
    }

    #[test]
    fn a_cookie_signed_with_another_secret_is_rejected() {
        let (value, _) = codec(OTHER, None).issue(&principal(), NOW);
        assert_eq!(
            codec(SECRET, None).verify(&value, NOW),
            Err(CookieError::BadSignature)
        );
    }

    #[test]
    fn a_cookie_signed_with_the_previous_secret_verifies_and_asks_for_reissue() {
        let (value, _) = codec(OTHER, None).issue(&principal(), NOW);
        let rotated = codec(SECRET, Some(OTHER));
        let v = rotated.verify(&value, NOW + 5).unwrap();
        assert!(v.used_previous_secret);
        assert!(v.needs_refresh(NOW + 5));
        let reissued = rotated.seal(&v.claims.refreshed(NOW + 5));
        assert!(
            !codec(SECRET, None)
                .verify(&reissued, NOW + 5)
                .unwrap()
                .used_previous_secret
        );
    }

    #[test]
    fn a_cookie_bound_to_another_password_is_rejected() {
        let (value, _) = codec(SECRET, None).issue(&principal(), NOW);
        let other = SessionCodec::new(AuthMode::Password, SECRET, None, "password:def");
        assert_eq!(other.verify(&value, NOW), Err(CookieError::BadSignature));
    }

    #[test]
    fn a_cookie_for_another_mode_is_rejected() {
        let oidc = SessionCodec::new(AuthMode::Oidc, SECRET, None, "password:abc");
        let (value, _) = oidc.issue(
            &Principal {
                mode: AuthMode::Oidc,
                ..principal()
            },
            NOW,
        );
        assert_eq!(
            codec(SECRET, None).verify(&value, NOW),
            Err(CookieError::WrongMode)
        );
    }

    #[test]
    fn a_day_old_cookie_is_refreshed_on_use_up_to_the_absolute_lifetime() {
        let c = codec(SECRET, None);
        let (value, claims) = c.issue(&principal(), NOW);
        let later = NOW + SESSION_REFRESH_AFTER_SECS;
        let v = c.verify(&value, later).unwrap();
        assert!(v.needs_refresh(later));
        let refreshed = claims.refreshed(later);
        assert_eq!(refreshed.exp, later + SESSION_LIFETIME_SECS);
        assert_eq!(refreshed.auth, NOW);

        // Near the absolute cap, a refresh cannot extend past it.
        let near_cap = NOW + SESSION_ABSOLUTE_LIFETIME_SECS - 3600;
        let capped = SessionClaims {
            iat: near_cap - 2 * 24 * 3600,
            exp: near_cap + 100,
            ..claims.clone()
        };
        assert_eq!(
            capped.refreshed(near_cap).exp,
            NOW + SESSION_ABSOLUTE_LIFETIME_SECS
        );
    }

    #[test]
    fn a_cookie_past_its_absolute_lifetime_is_rejected_even_if_refreshed() {
        let c = codec(SECRET, None);
        let claims = SessionClaims {
            iat: NOW + SESSION_ABSOLUTE_LIFETIME_SECS,
            exp: NOW + SESSION_ABSOLUTE_LIFETIME_SECS + 10,
            ..SessionClaims::new(&principal(), NOW)
        };
        let value = c.seal(&claims);
        assert_eq!(
            c.verify(&value, NOW + SESSION_ABSOLUTE_LIFETIME_SECS + 1),
            Err(CookieError::Expired)
        );
    }

    #[test]
    fn a_payload_with_unknown_fields_is_malformed() {
        let c = SignedValueCodec::new(SECRET, None, "session", "password:abc");
        let value =
            c.seal(br#"{"sub":"x","mode":"password","iat":1,"exp":2,"auth":1,"admin":true}"#);
        assert_eq!(
            codec(SECRET, None).verify(&value, 1),
            Err(CookieError::Malformed)
        );
    }

    #[test]
    fn a_value_signed_for_another_purpose_does_not_verify_as_a_session() {
        let flow = SignedValueCodec::new(SECRET, None, "oidc-flow", "password:abc");
        let claims = SessionClaims::new(&principal(), NOW);
        let value = flow.seal(&serde_json::to_vec(&claims).unwrap());
        assert_eq!(
            codec(SECRET, None).verify(&value, NOW),
            Err(CookieError::BadSignature)
        );
    }

    #[test]
    fn cookie_values_finds_every_cookie_of_that_name() {
        let header = "a=1; __Host-eve_chat_session=x.y; b=2;__Host-eve_chat_session=\"z\"; eve_chat_session=old";
        let values: Vec<_> = cookie_values(header, SESSION_COOKIE_NAME).collect();
        assert_eq!(values, vec!["x.y", "z"]);
    }

    #[test]
    fn set_cookie_is_http_only_same_site_lax_and_secure_only_on_https() {
        let c = set_cookie("flow", "v", "/api/auth", 60, false);
        assert_eq!(
            c,
            "flow=v; Path=/api/auth; Max-Age=60; HttpOnly; SameSite=Lax"
        );
        assert!(set_cookie("x", "v", "/", 60, true).ends_with("; Secure"));
        assert!(clear_cookie("x", "/", false).contains("Max-Age=0"));
    }

    #[test]
    fn the_session_cookie_follows_the_host_prefix_rules() {
        let c = session_set_cookie("v", 60);
        assert_eq!(
            c,
            "__Host-eve_chat_session=v; Path=/; Max-Age=60; HttpOnly; SameSite=Lax; Secure"
        );
        assert!(!c.contains("Domain"));
        let clear = session_clear_cookie();
        assert!(clear.starts_with("__Host-eve_chat_session=; Path=/; Max-Age=0"));
        assert!(clear.ends_with("; Secure"));
    }
}
