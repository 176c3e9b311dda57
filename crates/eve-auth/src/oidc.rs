//! OpenID Connect authorization-code flow with PKCE, as plain functions: the glue does the two
//! or three HTTP calls (discovery, token, userinfo) and hands the bodies here.
//!
//! Flow: `start` makes a [`FlowState`] (state, PKCE verifier, nonce, where to return), keeps it
//! in a short-lived signed `__Host-` cookie, and redirects to the provider's authorize URL. The
//! callback checks the returned `state` against that cookie (constant time), marks the flow used
//! (each flow completes at most once, [`used_flow_key`]), exchanges the code with the verifier, validates the ID token (issuer, audience, expiry, nonce;
//! signature when HS256 — other algorithms come straight from the token endpoint over TLS, which
//! OIDC Core §3.1.3.7 accepts in place of a signature check), requires an email, and signs the
//! session cookie for the principal `oidc:<issuer hash>:<sub>`.

use eve_api::auth::{AuthMode, Principal};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cookie::{clear_cookie, set_cookie, SignedValueCodec, CLOCK_SKEW_SECS};
use crate::crypto::{b64url, b64url_decode, ct_eq, hex, hmac_sha256_verify, random_token, sha256};
use crate::origin::{is_loopback_host, Origin};

/// Scopes requested from the provider; `email` is required (the seed demands it).
pub const SCOPES: &str = "openid email profile";
/// The callback route, relative to the app's base URL (the redirect URI registered with the
/// provider is `<base>/api/auth/oidc/callback`).
pub const CALLBACK_PATH: &str = "/api/auth/oidc/callback";
/// The flow cookie, gone after ten minutes or the callback. `__Host-`: browsers accept it only
/// `Secure`, with `Path=/` and no `Domain`, so a sibling subdomain cannot plant one (cookie
/// tossing, which would let it sign a victim into the attacker's account: login CSRF).
pub const FLOW_COOKIE_NAME: &str = "__Host-eve_chat_oidc";
pub const FLOW_COOKIE_PATH: &str = "/";
pub const FLOW_LIFETIME_SECS: u64 = 600;
/// Key-value prefix of the markers of flows whose callback has run (single use).
pub const USED_FLOW_PREFIX: &str = "oidc:used:";
/// Longest provider response body we read (discovery, token, userinfo).
pub const MAX_PROVIDER_BODY_BYTES: usize = 256 * 1024;

/// Why sign-in with the provider failed. [`OidcError::code`] is what the UI is told
/// (`/?authError=<code>`); details never include tokens or secrets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OidcError {
    /// The discovery document could not be fetched or is unusable.
    Discovery(&'static str),
    /// The callback's `state` does not match the flow cookie, or there is no flow cookie.
    InvalidState,
    /// The flow cookie is older than [`FLOW_LIFETIME_SECS`].
    FlowExpired,
    /// A callback of this flow already ran (a replayed callback URL and flow cookie).
    FlowUsed,
    /// The store that marks used flows did not answer (the flow is refused: fail closed).
    StoreUnavailable,
    /// The provider redirected back with `error=<code>`.
    Provider(String),
    /// The token endpoint refused the code (for example, it was already used).
    TokenRejected(String),
    /// The ID token failed a check.
    IdToken(&'static str),
    /// The userinfo answer is unusable.
    Userinfo(&'static str),
    /// Neither the ID token nor userinfo carried an email.
    EmailMissing,
    /// The provider does not say the email is verified (`email_verified` absent or false).
    EmailUnverified,
    /// The email is not in `oidc_allowed_emails` and its domain not in `oidc_allowed_domains`.
    NotAllowed,
    /// Accounts mode: an account with a password has this email, and the two are never
    /// joined by email (the password sign-up never proved it owns the address).
    AccountExists,
}

impl OidcError {
    /// A short stable code for the UI.
    pub fn code(&self) -> &'static str {
        match self {
            OidcError::Discovery(_) => "discovery_failed",
            OidcError::InvalidState => "invalid_state",
            OidcError::FlowExpired => "flow_expired",
            OidcError::FlowUsed => "flow_used",
            OidcError::StoreUnavailable => "unavailable",
            OidcError::Provider(_) => "provider_error",
            OidcError::TokenRejected(_) => "token_exchange_failed",
            OidcError::IdToken(_) => "invalid_id_token",
            OidcError::Userinfo(_) => "userinfo_failed",
            OidcError::EmailMissing => "email_required",
            OidcError::EmailUnverified => "email_unverified",
            OidcError::NotAllowed => "not_allowed",
            OidcError::AccountExists => "account_exists",
        }
    }

    /// Refusals of who the user is (not of how the flow went): shown as a page of their own
    /// (403) rather than a redirect, since trying again will not help.
    pub fn is_refusal(&self) -> bool {
        matches!(self, OidcError::EmailUnverified | OidcError::NotAllowed)
    }

    /// The provider's own error code, when it gave one (sanitised: `[A-Za-z0-9_.-]`, ≤ 64).
    pub fn provider_code(&self) -> Option<&str> {
        match self {
            OidcError::Provider(c) | OidcError::TokenRejected(c) if !c.is_empty() => Some(c),
            _ => None,
        }
    }
}

impl std::fmt::Display for OidcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OidcError::Discovery(d) | OidcError::IdToken(d) | OidcError::Userinfo(d) => {
                write!(f, "{}: {d}", self.code())
            }
            OidcError::Provider(c) | OidcError::TokenRejected(c) => {
                write!(f, "{}: {c}", self.code())
            }
            _ => f.write_str(self.code()),
        }
    }
}

/// Keeps only `[A-Za-z0-9_.-]`, at most 64 characters (provider error codes are echoed to the UI).
pub fn sanitize_code(code: &str) -> String {
    code.chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        .take(64)
        .collect()
}

/// PKCE `code_challenge` for a verifier, method S256 (RFC 7636 §4.2).
pub fn pkce_challenge(verifier: &str) -> String {
    b64url(&sha256(verifier.as_bytes()))
}

/// Where the provider publishes its configuration.
pub fn discovery_url(issuer: &str) -> String {
    format!(
        "{}/.well-known/openid-configuration",
        issuer.trim_end_matches('/')
    )
}

/// The parts of the discovery document the flow uses.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Discovery {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    #[serde(default)]
    pub userinfo_endpoint: Option<String>,
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
}

fn endpoint_ok(url: &str) -> bool {
    Origin::parse(url).is_some_and(|o| o.is_https() || is_loopback_host(&o.host))
}

/// Parses and checks a discovery document: its `issuer` must be the configured one, its
/// endpoints https (plain http only on loopback), and it must not rule out PKCE S256.
pub fn parse_discovery(body: &[u8], configured_issuer: &str) -> Result<Discovery, OidcError> {
    let doc: Discovery = serde_json::from_slice(body)
        .map_err(|_| OidcError::Discovery("not a discovery document"))?;
    if doc.issuer.trim_end_matches('/') != configured_issuer.trim_end_matches('/') {
        return Err(OidcError::Discovery(
            "the document's issuer is not oidc_issuer",
        ));
    }
    let userinfo_ok = doc.userinfo_endpoint.as_deref().is_none_or(endpoint_ok);
    if !endpoint_ok(&doc.authorization_endpoint)
        || !endpoint_ok(&doc.token_endpoint)
        || !userinfo_ok
    {
        return Err(OidcError::Discovery("an endpoint is not an https URL"));
    }
    if let Some(methods) = &doc.code_challenge_methods_supported {
        if !methods.iter().any(|m| m == "S256") {
            return Err(OidcError::Discovery(
                "the provider does not support PKCE S256",
            ));
        }
    }
    Ok(doc)
}

/// What the flow cookie remembers between start and callback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowState {
    pub state: String,
    pub verifier: String,
    pub nonce: String,
    /// A same-app path to land on after sign-in.
    pub return_to: String,
    /// Unix seconds after which the callback is refused.
    pub exp: u64,
}

impl FlowState {
    /// Fresh random `state`, PKCE verifier (43 characters) and `nonce`.
    pub fn new(return_to: String, now: u64) -> Self {
        FlowState {
            state: random_token(),
            verifier: random_token(),
            nonce: random_token(),
            return_to,
            exp: now + FLOW_LIFETIME_SECS,
        }
    }
}

/// Signs and opens flow cookies; bound to the issuer and client so a cookie from another
/// configuration is refused.
#[derive(Debug, Clone)]
pub struct FlowCodec(SignedValueCodec);

impl FlowCodec {
    pub fn new(secret: &str, previous: Option<&str>, issuer: &str, client_id: &str) -> Self {
        FlowCodec(SignedValueCodec::new(
            secret,
            previous,
            "oidc-flow",
            &format!("{issuer}\n{client_id}"),
        ))
    }

    pub fn seal(&self, flow: &FlowState) -> String {
        self.0
            .seal(&serde_json::to_vec(flow).expect("flow state always serializes"))
    }

    /// The flow state of a cookie, checked for signature and age.
    pub fn open(&self, value: &str, now: u64) -> Result<FlowState, OidcError> {
        let (payload, _) = self.0.open(value).map_err(|_| OidcError::InvalidState)?;
        let flow: FlowState =
            serde_json::from_slice(&payload).map_err(|_| OidcError::InvalidState)?;
        if flow.exp <= now {
            return Err(OidcError::FlowExpired);
        }
        Ok(flow)
    }
}

/// `Set-Cookie` for a flow cookie value: always `Secure` and `Path=/` (the `__Host-` rules;
/// browsers keep `Secure` cookies from http://localhost and 127.0.0.0/8 too).
pub fn flow_set_cookie(value: &str) -> String {
    set_cookie(
        FLOW_COOKIE_NAME,
        value,
        FLOW_COOKIE_PATH,
        FLOW_LIFETIME_SECS,
        true,
    )
}

/// `Set-Cookie` that deletes the flow cookie.
pub fn flow_clear_cookie() -> String {
    clear_cookie(FLOW_COOKIE_NAME, FLOW_COOKIE_PATH, true)
}

/// The key-value key that marks `flow` used: `oidc:used:<exp>:<hash of its state>`. The first
/// callback of a flow creates it (an atomic increment that returns 1); any later callback with
/// the same flow cookie finds it and is refused before the provider is asked anything. The
/// expiry in the key lets a sweep delete markers of flows that can no longer be opened.
pub fn used_flow_key(flow: &FlowState) -> String {
    let hash = hex(&sha256(flow.state.as_bytes()));
    format!("{USED_FLOW_PREFIX}{}:{}", flow.exp, &hash[..32])
}

/// Whether a used-flow marker can be deleted at `now`: its flow expired (with the clock skew
/// allowed for cookies to spare), or the key is not one [`used_flow_key`] makes.
pub fn used_flow_key_expired(key: &str, now: u64) -> bool {
    key.strip_prefix(USED_FLOW_PREFIX)
        .and_then(|rest| rest.split_once(':'))
        .and_then(|(exp, _)| exp.parse::<u64>().ok())
        .is_none_or(|exp| exp.saturating_add(CLOCK_SKEW_SECS) < now)
}

/// The callback's `state` must equal the flow cookie's (constant-time).
pub fn check_state(flow: &FlowState, returned_state: Option<&str>) -> Result<(), OidcError> {
    match returned_state {
        Some(s) if ct_eq(s.as_bytes(), flow.state.as_bytes()) => Ok(()),
        _ => Err(OidcError::InvalidState),
    }
}

fn with_query(url: &str, pairs: &[(&str, &str)]) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (k, v) in pairs {
        query.append_pair(k, v);
    }
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}{}", query.finish())
}

/// The provider URL the browser is sent to.
pub fn authorize_url(
    discovery: &Discovery,
    client_id: &str,
    redirect_uri: &str,
    flow: &FlowState,
) -> String {
    let challenge = pkce_challenge(&flow.verifier);
    with_query(
        &discovery.authorization_endpoint,
        &[
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", redirect_uri),
            ("scope", SCOPES),
            ("state", &flow.state),
            ("nonce", &flow.nonce),
            ("code_challenge", &challenge),
            ("code_challenge_method", "S256"),
        ],
    )
}

/// The token request: `POST url`, form body, and an `Authorization` header for
/// `client_secret_basic` (the default) or the credentials in the body for `client_secret_post`
/// when that is all the provider supports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRequest {
    pub url: String,
    pub body: String,
    pub authorization: Option<String>,
}

fn form_component(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

pub fn token_request(
    discovery: &Discovery,
    client_id: &str,
    client_secret: &str,
    redirect_uri: &str,
    code: &str,
    verifier: &str,
) -> TokenRequest {
    let post_only = discovery
        .token_endpoint_auth_methods_supported
        .as_ref()
        .is_some_and(|m| {
            !m.iter().any(|x| x == "client_secret_basic")
                && m.iter().any(|x| x == "client_secret_post")
        });
    let mut form = form_urlencoded::Serializer::new(String::new());
    form.append_pair("grant_type", "authorization_code")
        .append_pair("code", code)
        .append_pair("redirect_uri", redirect_uri)
        .append_pair("code_verifier", verifier);
    let authorization = if post_only {
        form.append_pair("client_id", client_id)
            .append_pair("client_secret", client_secret);
        None
    } else {
        // RFC 6749 §2.3.1: the id and secret are form-encoded before the Basic encoding.
        let pair = format!(
            "{}:{}",
            form_component(client_id),
            form_component(client_secret)
        );
        use base64::Engine;
        Some(format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(pair)
        ))
    };
    TokenRequest {
        url: discovery.token_endpoint.clone(),
        body: form.finish(),
        authorization,
    }
}

/// The token endpoint's answer (the fields the flow uses).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct TokenResponse {
    pub id_token: String,
    #[serde(default)]
    pub access_token: Option<String>,
}

/// Parses the token endpoint's answer; a non-2xx status is a rejection carrying the provider's
/// `error` code (for example `invalid_grant` for a replayed code).
pub fn parse_token_response(status: u16, body: &[u8]) -> Result<TokenResponse, OidcError> {
    if !(200..300).contains(&status) {
        let code = serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|v| v.get("error").and_then(Value::as_str).map(sanitize_code))
            .unwrap_or_else(|| format!("http_{status}"));
        return Err(OidcError::TokenRejected(code));
    }
    serde_json::from_slice(body).map_err(|_| OidcError::TokenRejected("no_id_token".into()))
}

/// Who the provider says the user is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Identity {
    pub sub: String,
    pub email: Option<String>,
    pub email_verified: Option<bool>,
    pub name: Option<String>,
}

fn string_claim(claims: &Value, name: &str) -> Option<String> {
    claims
        .get(name)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
}

fn identity_from(claims: &Value) -> Option<Identity> {
    let email_verified = match claims.get("email_verified") {
        Some(Value::Bool(b)) => Some(*b),
        Some(Value::String(s)) => Some(s.eq_ignore_ascii_case("true")),
        _ => None,
    };
    Some(Identity {
        sub: string_claim(claims, "sub")?,
        email: string_claim(claims, "email"),
        email_verified,
        name: string_claim(claims, "name").or_else(|| string_claim(claims, "preferred_username")),
    })
}

/// What an ID token must match.
#[derive(Debug, Clone)]
pub struct IdTokenChecks<'a> {
    pub issuer: &'a str,
    pub client_id: &'a str,
    /// Verifies HS256 signatures (the client secret is the HMAC key, OIDC Core §10.1).
    pub client_secret: &'a str,
    pub nonce: &'a str,
    pub now: u64,
}

/// Validates an ID token from the token endpoint and returns the identity it names.
pub fn validate_id_token(token: &str, checks: &IdTokenChecks<'_>) -> Result<Identity, OidcError> {
    let mut parts = token.split('.');
    let (Some(header_b64), Some(payload_b64), Some(signature_b64), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(OidcError::IdToken("not a JWS compact token"));
    };
    let decode_json =
        |part: &str| -> Option<Value> { serde_json::from_slice(&b64url_decode(part)?).ok() };
    let header = decode_json(header_b64).ok_or(OidcError::IdToken("unreadable header"))?;
    let claims = decode_json(payload_b64).ok_or(OidcError::IdToken("unreadable claims"))?;
    match header.get("alg").and_then(Value::as_str) {
        Some("HS256") => {
            let signature =
                b64url_decode(signature_b64).ok_or(OidcError::IdToken("bad signature"))?;
            let signed = &token[..header_b64.len() + 1 + payload_b64.len()];
            if !hmac_sha256_verify(
                checks.client_secret.as_bytes(),
                signed.as_bytes(),
                &signature,
            ) {
                return Err(OidcError::IdToken("bad signature"));
            }
        }
        Some("none") | None => return Err(OidcError::IdToken("unsigned token")),
        Some(alg) if alg.starts_with("HS") => {
            return Err(OidcError::IdToken("unsupported HMAC algorithm"))
        }
        // Asymmetric: the token came directly from the token endpoint over TLS (§3.1.3.7).
        Some(_) => {}
    }
    let iss = claims
        .get("iss")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if iss.trim_end_matches('/') != checks.issuer.trim_end_matches('/') {
        return Err(OidcError::IdToken("wrong issuer"));
    }
    let audience_ok = match claims.get("aud") {
        Some(Value::String(a)) => a == checks.client_id,
        Some(Value::Array(list)) => list.iter().any(|a| a.as_str() == Some(checks.client_id)),
        _ => false,
    };
    let azp_ok = claims
        .get("azp")
        .and_then(Value::as_str)
        .is_none_or(|azp| azp == checks.client_id);
    if !audience_ok || !azp_ok {
        return Err(OidcError::IdToken("wrong audience"));
    }
    let exp = claims
        .get("exp")
        .and_then(Value::as_u64)
        .ok_or(OidcError::IdToken("no expiry"))?;
    if exp + CLOCK_SKEW_SECS <= checks.now {
        return Err(OidcError::IdToken("expired"));
    }
    let nonce = claims
        .get("nonce")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !ct_eq(nonce.as_bytes(), checks.nonce.as_bytes()) {
        return Err(OidcError::IdToken("wrong nonce"));
    }
    identity_from(&claims).ok_or(OidcError::IdToken("no subject"))
}

/// Fills the identity's gaps (email, name) from a userinfo answer, whose `sub` must match.
pub fn merge_userinfo(identity: Identity, body: &[u8]) -> Result<Identity, OidcError> {
    let claims: Value =
        serde_json::from_slice(body).map_err(|_| OidcError::Userinfo("not JSON"))?;
    let info = identity_from(&claims).ok_or(OidcError::Userinfo("no subject"))?;
    if info.sub != identity.sub {
        return Err(OidcError::Userinfo("subject differs from the ID token"));
    }
    Ok(Identity {
        email: identity.email.clone().or(info.email.clone()),
        // Userinfo's verdict counts only for the email it describes.
        email_verified: match (&identity.email, &info.email) {
            (None, _) => info.email_verified,
            (Some(_), _) if identity.email_verified.is_some() => identity.email_verified,
            (Some(a), Some(b)) if a.eq_ignore_ascii_case(b) => info.email_verified,
            (Some(_), _) => None,
        },
        name: identity.name.or(info.name),
        sub: identity.sub,
    })
}

/// Whether the ID token lacks something userinfo could supply.
pub fn needs_userinfo(identity: &Identity) -> bool {
    identity.email.is_none() || identity.email_verified.is_none() || identity.name.is_none()
}

/// Who may sign in with OIDC: exact emails and whole email domains, compared case-insensitively.
/// Empty means nobody (and OIDC is then not ready, see `AuthConfig::resolve`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowlist {
    emails: Vec<String>,
    domains: Vec<String>,
}

fn list(value: Option<&str>, clean: impl Fn(&str) -> &str) -> Vec<String> {
    value
        .unwrap_or_default()
        .split(',')
        .map(|item| clean(item.trim()).to_lowercase())
        .filter(|item| !item.is_empty())
        .collect()
}

impl Allowlist {
    /// From `oidc_allowed_emails` and `oidc_allowed_domains` (comma-separated; a domain may be
    /// written `example.com` or `@example.com`).
    pub fn parse(emails: Option<&str>, domains: Option<&str>) -> Self {
        Allowlist {
            emails: list(emails, |e| e),
            domains: list(domains, |d| d.trim_start_matches('@').trim_end_matches('.')),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.emails.is_empty() && self.domains.is_empty()
    }

    /// Whether `email` may sign in: it is listed, or the part after its last `@` is a listed
    /// domain exactly (`example.com` does not admit `mail.example.com` or `evilexample.com`).
    pub fn allows(&self, email: &str) -> bool {
        let email = email.trim().to_lowercase();
        let Some((local, domain)) = email.rsplit_once('@') else {
            return false;
        };
        if local.is_empty() || domain.is_empty() {
            return false;
        }
        self.emails.contains(&email) || self.domains.iter().any(|d| d == domain)
    }
}

/// The longest `sub` accepted (OIDC Core §2: at most 255 ASCII characters).
pub const MAX_SUBJECT_BYTES: usize = 255;
/// The longest email accepted (RFC 5321's path limit).
pub const MAX_EMAIL_BYTES: usize = 254;
/// Display names are cut to this many characters, so the session cookie stays far below the
/// 4 KB browsers keep.
pub const MAX_NAME_CHARS: usize = 100;

/// The principal for a provider identity: `oidc:<first 12 hex of sha256(issuer)>:<sub>`, so two
/// providers' `sub`s never collide. An email is required, the provider must say it is verified
/// (`email_verified: true`), and it must be on the allowlist.
pub fn principal_for(
    issuer: &str,
    identity: &Identity,
    allowed: &Allowlist,
) -> Result<Principal, OidcError> {
    let email = identity.email.clone().ok_or(OidcError::EmailMissing)?;
    if identity.email_verified != Some(true) {
        return Err(OidcError::EmailUnverified);
    }
    if email.len() > MAX_EMAIL_BYTES || email.chars().any(char::is_control) {
        return Err(OidcError::IdToken("unusable email"));
    }
    if identity.sub.len() > MAX_SUBJECT_BYTES || identity.sub.chars().any(char::is_control) {
        return Err(OidcError::IdToken("unusable subject"));
    }
    if !allowed.allows(&email) {
        return Err(OidcError::NotAllowed);
    }
    let issuer_hash = hex(&sha256(issuer.trim_end_matches('/').as_bytes()));
    let name = identity
        .name
        .as_deref()
        .map(|n| {
            n.chars()
                .filter(|c| !c.is_control())
                .take(MAX_NAME_CHARS)
                .collect::<String>()
        })
        .filter(|n| !n.trim().is_empty());
    Ok(Principal {
        id: format!("oidc:{}:{}", &issuer_hash[..12], identity.sub),
        mode: AuthMode::Oidc,
        name,
        email: Some(email),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::hmac_sha256;

    const ISSUER: &str = "http://127.0.0.1:9000";
    const SECRET: &str = "0123456789abcdef0123456789abcdef";

    fn discovery() -> Discovery {
        parse_discovery(
            br#"{"issuer":"http://127.0.0.1:9000","authorization_endpoint":"http://127.0.0.1:9000/authorize",
                "token_endpoint":"http://127.0.0.1:9000/token","userinfo_endpoint":"http://127.0.0.1:9000/userinfo",
                "code_challenge_methods_supported":["S256"]}"#,
            ISSUER,
        )
        .unwrap()
    }

    fn jwt(header: &str, claims: &Value, key: &str) -> String {
        let signed = format!(
            "{}.{}",
            b64url(header.as_bytes()),
            b64url(claims.to_string().as_bytes())
        );
        let sig = hmac_sha256(key.as_bytes(), signed.as_bytes());
        format!("{signed}.{}", b64url(&sig))
    }

    fn claims() -> Value {
        serde_json::json!({
            "iss": ISSUER, "aud": "eve", "sub": "user-1", "exp": 2_000_000_000u64, "iat": 1_900_000_000u64,
            "nonce": "n-1", "email": "eve@example.com", "email_verified": true, "name": "Eve"
        })
    }

    fn checks() -> IdTokenChecks<'static> {
        IdTokenChecks {
            issuer: ISSUER,
            client_id: "eve",
            client_secret: "client-secret",
            nonce: "n-1",
            now: 1_900_000_100,
        }
    }

    const HS256: &str = r#"{"alg":"HS256","typ":"JWT"}"#;

    #[test]
    fn pkce_challenge_matches_rfc_7636_appendix_b() {
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn a_fresh_flow_has_a_verifier_of_valid_pkce_length_and_distinct_values() {
        let flow = FlowState::new("/".into(), 0);
        assert!((43..=128).contains(&flow.verifier.len()));
        assert_ne!(flow.state, flow.nonce);
        assert_eq!(flow.exp, FLOW_LIFETIME_SECS);
    }

    #[test]
    fn discovery_must_name_the_configured_issuer() {
        let body = br#"{"issuer":"https://other.example","authorization_endpoint":"https://a/x","token_endpoint":"https://a/t"}"#;
        assert!(matches!(
            parse_discovery(body, "https://id.example"),
            Err(OidcError::Discovery(_))
        ));
        assert!(matches!(
            parse_discovery(b"<html>", "https://id.example"),
            Err(OidcError::Discovery(_))
        ));
    }

    #[test]
    fn discovery_refuses_plain_http_endpoints_off_loopback_and_providers_without_s256() {
        let http = br#"{"issuer":"https://id.example","authorization_endpoint":"http://id.example/a","token_endpoint":"https://id.example/t"}"#;
        assert!(parse_discovery(http, "https://id.example").is_err());
        let plain = br#"{"issuer":"https://id.example","authorization_endpoint":"https://id.example/a","token_endpoint":"https://id.example/t","code_challenge_methods_supported":["plain"]}"#;
        assert!(parse_discovery(plain, "https://id.example").is_err());
        assert_eq!(
            discovery().userinfo_endpoint.as_deref(),
            Some("http://127.0.0.1:9000/userinfo")
        );
    }

    #[test]
    fn the_authorize_url_carries_pkce_state_nonce_and_scopes() {
        let flow = FlowState::new("/".into(), 0);
        let url = authorize_url(
            &discovery(),
            "eve",
            "http://127.0.0.1:3000/api/auth/oidc/callback",
            &flow,
        );
        let (base, query) = url.split_once('?').unwrap();
        assert_eq!(base, "http://127.0.0.1:9000/authorize");
        let q: std::collections::HashMap<String, String> = form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        assert_eq!(q["response_type"], "code");
        assert_eq!(q["scope"], "openid email profile");
        assert_eq!(q["state"], flow.state);
        assert_eq!(q["nonce"], flow.nonce);
        assert_eq!(q["code_challenge"], pkce_challenge(&flow.verifier));
        assert_eq!(q["code_challenge_method"], "S256");
        assert_eq!(
            q["redirect_uri"],
            "http://127.0.0.1:3000/api/auth/oidc/callback"
        );
    }

    #[test]
    fn the_token_request_uses_basic_auth_and_sends_the_verifier() {
        let r = token_request(
            &discovery(),
            "eve",
            "s:ecret",
            "http://x/cb",
            "code-1",
            "verifier-1",
        );
        assert_eq!(r.url, "http://127.0.0.1:9000/token");
        assert!(r.body.contains("grant_type=authorization_code"));
        assert!(r.body.contains("code_verifier=verifier-1"));
        assert!(!r.body.contains("client_secret"));
        use base64::Engine;
        let basic = r.authorization.unwrap();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(basic.strip_prefix("Basic ").unwrap())
            .unwrap();
        assert_eq!(decoded, b"eve:s%3Aecret");
    }

    #[test]
    fn the_token_request_posts_credentials_when_the_provider_only_takes_them_in_the_body() {
        let d = Discovery {
            token_endpoint_auth_methods_supported: Some(vec!["client_secret_post".into()]),
            ..discovery()
        };
        let r = token_request(&d, "eve", "sec", "http://x/cb", "c", "v");
        assert!(r.authorization.is_none());
        assert!(r.body.contains("client_id=eve") && r.body.contains("client_secret=sec"));
    }

    #[test]
    fn a_rejected_code_reports_the_provider_error() {
        let e = parse_token_response(400, br#"{"error":"invalid_grant"}"#).unwrap_err();
        assert_eq!(e, OidcError::TokenRejected("invalid_grant".into()));
        assert_eq!(e.code(), "token_exchange_failed");
        assert_eq!(
            parse_token_response(500, b"oops").unwrap_err(),
            OidcError::TokenRejected("http_500".into())
        );
        assert!(parse_token_response(200, br#"{"access_token":"a"}"#).is_err());
    }

    #[test]
    fn a_valid_hs256_id_token_yields_the_identity() {
        let token = jwt(HS256, &claims(), "client-secret");
        let id = validate_id_token(&token, &checks()).unwrap();
        assert_eq!(id.sub, "user-1");
        assert_eq!(id.email.as_deref(), Some("eve@example.com"));
        assert_eq!(id.name.as_deref(), Some("Eve"));
    }

    #[test]
    fn an_id_token_signed_with_another_key_is_rejected() {
        let token = jwt(HS256, &claims(), "not-the-secret");
        assert_eq!(
            validate_id_token(&token, &checks()),
            Err(OidcError::IdToken("bad signature"))
        );
    }

    #[test]
    fn an_unsigned_id_token_is_rejected() {
        let token = jwt(r#"{"alg":"none"}"#, &claims(), "");
        assert_eq!(
            validate_id_token(&token, &checks()),
            Err(OidcError::IdToken("unsigned token"))
        );
    }

    #[test]
    fn id_token_claims_are_checked() {
        let cases: [(&str, Value, &str); 5] = [
            ("iss", "https://evil.example".into(), "wrong issuer"),
            ("aud", "someone-else".into(), "wrong audience"),
            ("exp", 1_000u64.into(), "expired"),
            ("nonce", "n-2".into(), "wrong nonce"),
            ("sub", "".into(), "no subject"),
        ];
        for (field, value, expected) in cases {
            let mut c = claims();
            c[field] = value;
            let token = jwt(HS256, &c, "client-secret");
            assert_eq!(
                validate_id_token(&token, &checks()),
                Err(OidcError::IdToken(expected)),
                "{field}"
            );
        }
        let mut c = claims();
        c["aud"] = serde_json::json!(["other", "eve"]);
        assert!(validate_id_token(&jwt(HS256, &c, "client-secret"), &checks()).is_ok());
        assert!(validate_id_token("a.b", &checks()).is_err());
    }

    #[test]
    fn an_rs256_token_from_the_token_endpoint_is_accepted_on_its_claims() {
        let signed = format!(
            "{}.{}.c2lnbmF0dXJl",
            b64url(br#"{"alg":"RS256","kid":"k"}"#),
            b64url(claims().to_string().as_bytes())
        );
        assert_eq!(validate_id_token(&signed, &checks()).unwrap().sub, "user-1");
    }

    #[test]
    fn userinfo_fills_a_missing_email_only_for_the_same_subject() {
        let id = Identity {
            sub: "user-1".into(),
            ..Default::default()
        };
        assert!(needs_userinfo(&id));
        let merged = merge_userinfo(
            id.clone(),
            br#"{"sub":"user-1","email":"eve@example.com","name":"Eve"}"#,
        )
        .unwrap();
        assert_eq!(merged.email.as_deref(), Some("eve@example.com"));
        assert_eq!(
            merge_userinfo(id, br#"{"sub":"user-2","email":"x@example.com"}"#),
            Err(OidcError::Userinfo("subject differs from the ID token"))
        );
    }

    fn everyone_at(domain: &str) -> Allowlist {
        Allowlist::parse(None, Some(domain))
    }

    #[test]
    fn a_principal_requires_an_email_the_provider_says_is_verified() {
        let allowed = everyone_at("x.example");
        let id = Identity {
            sub: "user-1".into(),
            ..Default::default()
        };
        assert_eq!(
            principal_for(ISSUER, &id, &allowed),
            Err(OidcError::EmailMissing)
        );
        for verified in [Some(false), None] {
            let unverified = Identity {
                email: Some("e@x.example".into()),
                email_verified: verified,
                ..id.clone()
            };
            assert_eq!(
                principal_for(ISSUER, &unverified, &allowed),
                Err(OidcError::EmailUnverified),
                "{verified:?}"
            );
        }
    }

    fn verified(sub: &str, email: &str) -> Identity {
        Identity {
            sub: sub.into(),
            email: Some(email.into()),
            email_verified: Some(true),
            ..Default::default()
        }
    }

    #[test]
    fn principals_are_per_subject_and_per_issuer() {
        let allowed = everyone_at("x.example");
        let id = verified("user-1", "e@x.example");
        let p = principal_for(ISSUER, &id, &allowed).unwrap();
        assert!(p.id.starts_with("oidc:") && p.id.ends_with(":user-1"));
        assert_eq!(p.mode, AuthMode::Oidc);
        assert_ne!(
            principal_for("https://other.example", &id, &allowed)
                .unwrap()
                .id,
            p.id
        );
        assert_eq!(
            principal_for(&format!("{ISSUER}/"), &id, &allowed)
                .unwrap()
                .id,
            p.id
        );
    }

    #[test]
    fn only_listed_emails_and_exact_domains_are_allowed() {
        let allowed = Allowlist::parse(
            Some(" Boss@Partner.example , "),
            Some("@Team.example, ops.example."),
        );
        for ok in [
            "boss@partner.example",
            "BOSS@partner.EXAMPLE",
            "eve@team.example",
            "x@ops.example",
        ] {
            assert!(allowed.allows(ok), "{ok}");
        }
        for refused in [
            "other@partner.example",
            "eve@sub.team.example",
            "eve@evilteam.example",
            "eve@team.example.evil",
            "\"eve@team.example\"@evil.example",
            "team.example",
            "@team.example",
        ] {
            assert!(!allowed.allows(refused), "{refused}");
        }
        assert!(Allowlist::parse(None, Some(" , ")).is_empty());
        assert!(!Allowlist::default().allows("eve@team.example"));
        assert_eq!(
            principal_for(ISSUER, &verified("u", "eve@elsewhere.example"), &allowed),
            Err(OidcError::NotAllowed)
        );
        assert!(OidcError::NotAllowed.is_refusal());
        assert!(OidcError::EmailUnverified.is_refusal());
        assert!(!OidcError::InvalidState.is_refusal());
    }

    #[test]
    fn userinfo_verifies_only_the_email_it_describes() {
        let from_token = Identity {
            sub: "user-1".into(),
            email: Some("eve@x.example".into()),
            ..Default::default()
        };
        assert!(needs_userinfo(&from_token));
        let same = merge_userinfo(
            from_token.clone(),
            br#"{"sub":"user-1","email":"EVE@x.example","email_verified":true}"#,
        )
        .unwrap();
        assert_eq!(same.email_verified, Some(true));
        let other = merge_userinfo(
            from_token,
            br#"{"sub":"user-1","email":"mallory@x.example","email_verified":true}"#,
        )
        .unwrap();
        assert_eq!(other.email.as_deref(), Some("eve@x.example"));
        assert_eq!(other.email_verified, None);
    }

    #[test]
    fn a_huge_identity_cannot_push_the_session_cookie_past_4_kb() {
        let allowed = everyone_at("x.example");
        let mut id = verified(&"\"".repeat(MAX_SUBJECT_BYTES), "");
        id.email = Some(format!("{}@x.example", "\"".repeat(MAX_EMAIL_BYTES - 10)));
        id.name = Some("\u{1F600}\"\u{7}".repeat(5000));
        let p = principal_for(ISSUER, &id, &allowed).unwrap();
        assert_eq!(p.name.as_ref().unwrap().chars().count(), MAX_NAME_CHARS);
        let codec = crate::cookie::SessionCodec::new(AuthMode::Oidc, SECRET, None, "oidc:x");
        let (value, claims) = codec.issue(&p, 1_750_000_000);
        let header = crate::cookie::session_set_cookie(&value, claims.max_age(claims.iat));
        assert!(header.len() < 4096, "{} bytes", header.len());
        assert_eq!(
            codec.verify(&value, 1_750_000_001).unwrap().claims.sub,
            p.id
        );

        let long_sub = verified(&"s".repeat(MAX_SUBJECT_BYTES + 1), "e@x.example");
        assert_eq!(
            principal_for(ISSUER, &long_sub, &allowed),
            Err(OidcError::IdToken("unusable subject"))
        );
        let long_email = verified("u", &format!("{}@x.example", "e".repeat(250)));
        assert_eq!(
            principal_for(ISSUER, &long_email, &allowed),
            Err(OidcError::IdToken("unusable email"))
        );
    }

    #[test]
    fn the_flow_cookie_round_trips_and_is_refused_when_tampered_or_late() {
        let codec = FlowCodec::new(SECRET, None, ISSUER, "eve");
        let flow = FlowState::new("/chat/1".into(), 100);
        let value = codec.seal(&flow);
        assert_eq!(codec.open(&value, 101).unwrap(), flow);
        assert_eq!(
            codec.open(&value, 100 + FLOW_LIFETIME_SECS),
            Err(OidcError::FlowExpired)
        );
        assert_eq!(
            codec.open(&value[..value.len() - 3], 101),
            Err(OidcError::InvalidState)
        );
        let other_client = FlowCodec::new(SECRET, None, ISSUER, "other");
        assert_eq!(other_client.open(&value, 101), Err(OidcError::InvalidState));
    }

    #[test]
    fn the_returned_state_must_match_the_flow() {
        let flow = FlowState::new("/".into(), 0);
        assert_eq!(check_state(&flow, Some(&flow.state)), Ok(()));
        assert_eq!(
            check_state(&flow, Some("forged")),
            Err(OidcError::InvalidState)
        );
        assert_eq!(check_state(&flow, None), Err(OidcError::InvalidState));
    }

    #[test]
    fn the_flow_cookie_follows_the_host_prefix_rules() {
        let set = flow_set_cookie("v");
        assert_eq!(
            set,
            "__Host-eve_chat_oidc=v; Path=/; Max-Age=600; HttpOnly; SameSite=Lax; Secure"
        );
        assert!(!set.contains("Domain"));
        let clear = flow_clear_cookie();
        assert!(clear.starts_with("__Host-eve_chat_oidc=; Path=/; Max-Age=0"));
        assert!(clear.ends_with("; Secure"));
    }

    #[test]
    fn each_flow_has_its_own_used_marker_which_expires_with_the_flow() {
        let a = FlowState::new("/".into(), 1000);
        let b = FlowState::new("/".into(), 1000);
        let key = used_flow_key(&a);
        assert_eq!(key, used_flow_key(&a.clone()), "stable for one flow");
        assert_ne!(key, used_flow_key(&b));
        assert!(key.starts_with(&format!("{USED_FLOW_PREFIX}{}:", a.exp)));
        assert!(!key.contains(&a.state), "the state itself is not stored");
        assert!(!used_flow_key_expired(&key, 1000));
        assert!(!used_flow_key_expired(&key, a.exp + CLOCK_SKEW_SECS));
        assert!(used_flow_key_expired(&key, a.exp + CLOCK_SKEW_SECS + 1));
        assert!(used_flow_key_expired("oidc:used:garbage", 0));
    }

    #[test]
    fn provider_codes_are_sanitised() {
        assert_eq!(sanitize_code("access_denied"), "access_denied");
        assert_eq!(sanitize_code("<script>x</script>"), "scriptxscript");
    }
}
