//! Signing in to an MCP server as the MCP Authorization spec (2025-06-18) has it: OAuth 2.1
//! authorization code with PKCE S256, discovered from the server's 401 — its
//! `WWW-Authenticate: Bearer resource_metadata="…"` (RFC 9728 protected-resource metadata,
//! else the well-known URL under the server's origin), then the authorization server's RFC 8414
//! metadata — with RFC 7591 dynamic client registration and the RFC 8707 `resource`
//! parameter. Tokens are kept sealed with ChaCha20-Poly1305 and refreshed before they expire.
//!
//! Only the pure steps are here; the component does the HTTP.

use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use eve_auth::crypto::{b64url, b64url_decode, sha256};

use crate::oauth::encode;

/// A token is refreshed when it has less than this left.
pub const REFRESH_MARGIN_MS: i64 = 60_000;

/// `(scheme://authority, path)` of an http(s) URL.
fn split_origin(url: &str) -> Option<(&str, &str)> {
    let rest_at = url.find("://")? + 3;
    let path_at = url[rest_at..].find('/').map_or(url.len(), |i| rest_at + i);
    Some((&url[..path_at], &url[path_at..]))
}

/// A `key="value"` (or `key=value`) parameter of a `WWW-Authenticate` challenge.
pub fn challenge_param(challenge: &str, key: &str) -> Option<String> {
    let lower = challenge.to_ascii_lowercase();
    let needle = format!("{key}=");
    let mut from = 0;
    while let Some(i) = lower[from..].find(&needle) {
        let at = from + i;
        let boundary = at == 0 || matches!(lower.as_bytes()[at - 1], b' ' | b',');
        let value = &challenge[at + needle.len()..];
        if boundary {
            return Some(match value.strip_prefix('"') {
                Some(q) => q.split('"').next().unwrap_or_default().to_string(),
                None => value
                    .split([',', ' '])
                    .next()
                    .unwrap_or_default()
                    .to_string(),
            });
        }
        from = at + needle.len();
    }
    None
}

/// Where the server's protected-resource metadata is: the challenge's `resource_metadata`,
/// else `<origin>/.well-known/oauth-protected-resource<path>` (RFC 9728 §3.1).
pub fn resource_metadata_url(server_url: &str, challenge: Option<&str>) -> Option<String> {
    if let Some(u) = challenge.and_then(|c| challenge_param(c, "resource_metadata")) {
        if u.starts_with("https://") || u.starts_with("http://") {
            return Some(u);
        }
    }
    let (origin, path) = split_origin(server_url)?;
    let path = path
        .split('?')
        .next()
        .unwrap_or_default()
        .trim_end_matches('/');
    Some(format!(
        "{origin}/.well-known/oauth-protected-resource{path}"
    ))
}

/// The protected resource's `(resource, first authorization server)`.
pub fn parse_resource_metadata(body: &[u8]) -> Result<(String, String), String> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|_| "the server's protected-resource metadata is not JSON".to_string())?;
    let server = v
        .get("authorization_servers")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str)
        .ok_or("the server's protected-resource metadata names no authorization server")?;
    let resource = v
        .get("resource")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Ok((resource.to_string(), server.to_string()))
}

/// The host of an http(s) URL, lower-cased, without port or brackets (`None`: not http(s)).
fn url_host(url: &str) -> Option<String> {
    let lower = url.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("https://")
        .or_else(|| lower.strip_prefix("http://"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    // userinfo is never acceptable in an endpoint (it hides the real host from a reader).
    if authority.contains('@') || authority.is_empty() {
        return None;
    }
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default().to_string()
    } else {
        authority.split(':').next().unwrap_or_default().to_string()
    };
    (!host.is_empty()).then_some(host)
}

/// A loopback, private, link-local or otherwise local host: where a sign-in may not send the
/// agent unless the connection itself is such a test server.
fn is_local_host(host: &str) -> bool {
    if host == "localhost" || host.ends_with(".localhost") || host.ends_with(".internal") {
        return true;
    }
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(ip)) => {
            ip.is_loopback()
                || ip.is_private()
                || ip.is_link_local()
                || ip.is_unspecified()
                || ip.is_broadcast()
                || ip.octets()[0] == 0
                || (ip.octets()[0] == 100 && (ip.octets()[1] & 0xc0) == 64)
        }
        Ok(std::net::IpAddr::V6(ip)) => {
            ip.is_loopback()
                || ip.is_unspecified()
                || (ip.segments()[0] & 0xfe00) == 0xfc00
                || (ip.segments()[0] & 0xffc0) == 0xfe80
                || ip
                    .to_ipv4_mapped()
                    .is_some_and(|v4| v4.is_loopback() || v4.is_private() || v4.is_link_local())
        }
        Err(_) => false,
    }
}

/// A loopback host: `localhost`, `127.0.0.0/8`, `::1`.
fn is_loopback_host(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether the sign-in of the connection at `connection_url` may use `endpoint` (metadata,
/// registration, authorization, token, revocation): https only, to a public host. The one
/// exception is a test server: a connection on loopback may use loopback endpoints over http.
/// Everything else is refused (issue 19 item 1: no blind SSRF through metadata).
pub fn endpoint_allowed(endpoint: &str, connection_url: &str) -> Result<(), String> {
    let host = url_host(endpoint).ok_or_else(|| format!("{endpoint:?} is not an http(s) URL"))?;
    let loopback_connection = url_host(connection_url).is_some_and(|h| is_loopback_host(&h));
    if loopback_connection && is_loopback_host(&host) {
        return Ok(());
    }
    if !endpoint.to_ascii_lowercase().starts_with("https://") {
        return Err(format!("{endpoint} is not https"));
    }
    if is_local_host(&host) {
        return Err(format!("{endpoint} is on a local network address"));
    }
    Ok(())
}

/// RFC 9728 §3.3: the protected-resource metadata's `resource` must be the URL the client
/// asked (the connection's), else the metadata is someone else's and must not be used.
/// A trailing `/` is the only difference tolerated.
pub fn resource_matches(resource: &str, connection_url: &str) -> Result<(), String> {
    let norm = |u: &str| u.trim_end_matches('/').to_string();
    if resource.is_empty() {
        return Err("the protected-resource metadata names no resource".into());
    }
    if norm(resource) != norm(connection_url) {
        return Err(format!(
            "the protected-resource metadata is for {resource}, not for {connection_url}"
        ));
    }
    Ok(())
}

/// RFC 8414 §3.3: the authorization server's metadata must name as `issuer` exactly the issuer
/// it was fetched for.
pub fn issuer_matches(meta: &ServerMetadata, issuer: &str) -> Result<(), String> {
    match meta.issuer.as_deref() {
        Some(i) if i == issuer => Ok(()),
        Some(i) => Err(format!(
            "the authorization server's metadata names issuer {i}, not {issuer}"
        )),
        None => Err("the authorization server's metadata names no issuer".into()),
    }
}

/// Every endpoint of the authorization server's metadata the sign-in may use.
pub fn server_endpoints_allowed(meta: &ServerMetadata, connection_url: &str) -> Result<(), String> {
    let endpoints = [
        Some(&meta.authorization_endpoint),
        Some(&meta.token_endpoint),
        meta.registration_endpoint.as_ref(),
        meta.revocation_endpoint.as_ref(),
    ];
    for e in endpoints.into_iter().flatten() {
        endpoint_allowed(e, connection_url)?;
    }
    Ok(())
}

/// RFC 8414 §3.1: the well-known path is inserted between the issuer's origin and its path.
pub fn authorization_server_metadata_url(issuer: &str) -> Option<String> {
    let (origin, path) = split_origin(issuer)?;
    Some(format!(
        "{origin}/.well-known/oauth-authorization-server{}",
        path.trim_end_matches('/')
    ))
}

/// What the client needs of the authorization server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerMetadata {
    #[serde(default)]
    pub issuer: Option<String>,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    #[serde(default)]
    pub registration_endpoint: Option<String>,
    #[serde(default)]
    pub revocation_endpoint: Option<String>,
    #[serde(default)]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub scopes_supported: Option<Vec<String>>,
}

pub fn parse_server_metadata(body: &[u8]) -> Result<ServerMetadata, String> {
    let m: ServerMetadata = serde_json::from_slice(body)
        .map_err(|e| format!("the authorization server's metadata is not usable: {e}"))?;
    // OAuth 2.1 requires PKCE; a server that says it lacks S256 cannot be used safely.
    if let Some(methods) = &m.code_challenge_methods_supported {
        if !methods.iter().any(|x| x == "S256") {
            return Err("the authorization server does not support PKCE S256".into());
        }
    }
    Ok(m)
}

/// The RFC 7591 registration of eve-chat as a public client.
pub fn registration_body(redirect_uri: &str) -> Value {
    json!({
        "client_name": "eve-chat",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    })
}

/// `(client_id, client_secret)` of a registration answer.
pub fn parse_registration(status: u16, body: &[u8]) -> Result<(String, Option<String>), String> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|_| format!("client registration answered {status} without JSON"))?;
    let id = v
        .get("client_id")
        .and_then(Value::as_str)
        .filter(|_| (200..300).contains(&status))
        .ok_or_else(|| {
            format!(
                "client registration answered {status}: {}",
                v.get("error_description")
                    .or_else(|| v.get("error"))
                    .and_then(Value::as_str)
                    .unwrap_or("no client_id")
            )
        })?;
    let secret = v
        .get("client_secret")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok((id.to_string(), secret))
}

/// The PKCE S256 challenge of `verifier`.
pub fn pkce_challenge(verifier: &str) -> String {
    b64url(&sha256(verifier.as_bytes()))
}

fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// A registered client of one authorization server, carried in the signed flow state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpFlow {
    pub client_id: String,
    #[serde(default)]
    pub client_secret: Option<String>,
    pub token_endpoint: String,
    #[serde(default)]
    pub revocation_endpoint: Option<String>,
    /// The RFC 8707 resource: the MCP server.
    pub resource: String,
}

impl McpFlow {
    /// Where the browser goes.
    pub fn authorize_url(
        &self,
        meta: &ServerMetadata,
        redirect_uri: &str,
        state: &str,
        verifier: &str,
    ) -> String {
        let challenge = pkce_challenge(verifier);
        let mut pairs = vec![
            ("response_type", "code"),
            ("client_id", self.client_id.as_str()),
            ("redirect_uri", redirect_uri),
            ("state", state),
            ("code_challenge", challenge.as_str()),
            ("code_challenge_method", "S256"),
            ("resource", self.resource.as_str()),
        ];
        let scope = meta.scopes_supported.as_ref().map(|s| s.join(" "));
        if let Some(s) = scope.as_deref().filter(|s| !s.is_empty()) {
            pairs.push(("scope", s));
        }
        let sep = if meta.authorization_endpoint.contains('?') {
            '&'
        } else {
            '?'
        };
        format!("{}{sep}{}", meta.authorization_endpoint, form(&pairs))
    }

    fn with_client(&self, mut pairs: Vec<(&'static str, String)>) -> String {
        pairs.push(("client_id", self.client_id.clone()));
        if let Some(s) = &self.client_secret {
            pairs.push(("client_secret", s.clone()));
        }
        pairs.push(("resource", self.resource.clone()));
        let refs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        form(&refs)
    }

    pub fn code_body(&self, code: &str, redirect_uri: &str, verifier: &str) -> String {
        self.with_client(vec![
            ("grant_type", "authorization_code".into()),
            ("code", code.into()),
            ("redirect_uri", redirect_uri.into()),
            ("code_verifier", verifier.into()),
        ])
    }

    pub fn refresh_body(&self, refresh_token: &str) -> String {
        self.with_client(vec![
            ("grant_type", "refresh_token".into()),
            ("refresh_token", refresh_token.into()),
        ])
    }

    pub fn revoke_body(&self, token: &str) -> String {
        self.with_client(vec![("token", token.into())])
    }
}

/// What is kept of a sign-in (sealed at rest).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredToken {
    pub access_token: String,
    #[serde(default)]
    pub refresh_token: Option<String>,
    /// Milliseconds since the epoch; `None`: the server gave no lifetime.
    #[serde(default)]
    pub expires_at_ms: Option<i64>,
    /// How to refresh and revoke it (absent for the `<id>_oauth_*` clients).
    #[serde(default)]
    pub flow: Option<McpFlow>,
}

impl StoredToken {
    pub fn needs_refresh(&self, now_ms: i64) -> bool {
        self.refresh_token.is_some()
            && self.flow.is_some()
            && self
                .expires_at_ms
                .is_some_and(|e| e - REFRESH_MARGIN_MS <= now_ms)
    }
}

/// A token endpoint's answer as a [`StoredToken`]; a refresh that gives no new refresh token
/// keeps the old one (`previous_refresh`).
pub fn parse_token_answer(
    status: u16,
    body: &[u8],
    now_ms: i64,
    flow: Option<McpFlow>,
    previous_refresh: Option<String>,
) -> Result<StoredToken, String> {
    let access = crate::oauth::parse_token_response(status, body)?;
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    Ok(StoredToken {
        access_token: access,
        refresh_token: v
            .get("refresh_token")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or(previous_refresh),
        expires_at_ms: v
            .get("expires_in")
            .and_then(Value::as_i64)
            .map(|s| now_ms + s * 1000),
        flow,
    })
}

/// Seals `token` for the database (`v1.` + base64url of nonce ‖ ciphertext). `nonce` must be
/// fresh random bytes; `binding` (principal and connection) is authenticated with it, so a row
/// copied to another principal does not open.
pub fn seal(key: &[u8; 32], nonce: [u8; 12], binding: &str, token: &StoredToken) -> String {
    let cipher = ChaCha20Poly1305::new(&Key::from(*key));
    let plain = serde_json::to_vec(token).expect("tokens serialize");
    let ct = cipher
        .encrypt(
            &Nonce::from(nonce),
            chacha20poly1305::aead::Payload {
                msg: &plain,
                aad: binding.as_bytes(),
            },
        )
        .expect("encryption of a small message succeeds");
    let mut out = nonce.to_vec();
    out.extend(ct);
    format!("v1.{}", b64url(&out))
}

/// Opens what [`seal`] made; `None` for anything else (a wrong key, binding or a tampered row).
pub fn open(key: &[u8; 32], binding: &str, sealed: &str) -> Option<StoredToken> {
    let raw = b64url_decode(sealed.strip_prefix("v1.")?)?;
    if raw.len() < 12 + 16 {
        return None;
    }
    let (nonce, ct) = raw.split_at(12);
    let nonce: [u8; 12] = nonce.try_into().ok()?;
    let cipher = ChaCha20Poly1305::new(&Key::from(*key));
    let plain = cipher
        .decrypt(
            &Nonce::from(nonce),
            chacha20poly1305::aead::Payload {
                msg: ct,
                aad: binding.as_bytes(),
            },
        )
        .ok()?;
    serde_json::from_slice(&plain).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::query_value;

    #[test]
    fn discovery_follows_the_challenge_or_the_well_known_urls() {
        let c = r#"Bearer error="invalid_token", error_description="Missing", resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp""#;
        assert_eq!(
            resource_metadata_url("http://127.0.0.1:9/mcp", Some(c)).as_deref(),
            Some("http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(
            resource_metadata_url("https://mcp.example/v1/mcp", Some("Bearer")).as_deref(),
            Some("https://mcp.example/.well-known/oauth-protected-resource/v1/mcp")
        );
        assert_eq!(
            authorization_server_metadata_url("http://127.0.0.1:9/").as_deref(),
            Some("http://127.0.0.1:9/.well-known/oauth-authorization-server")
        );
        assert_eq!(
            authorization_server_metadata_url("https://auth.example/tenant1").as_deref(),
            Some("https://auth.example/.well-known/oauth-authorization-server/tenant1")
        );
        let (resource, server) = parse_resource_metadata(
            br#"{"resource":"http://127.0.0.1:9/mcp","authorization_servers":["http://127.0.0.1:9/"]}"#,
        )
        .unwrap();
        assert_eq!(
            (resource.as_str(), server.as_str()),
            ("http://127.0.0.1:9/mcp", "http://127.0.0.1:9/")
        );
        assert!(parse_resource_metadata(b"<html>").is_err());
        assert!(parse_resource_metadata(br#"{"resource":"x"}"#).is_err());
    }

    #[test]
    fn sign_in_endpoints_are_https_and_public_unless_the_connection_is_a_local_test_server() {
        let notion = "https://mcp.notion.com/mcp";
        assert!(endpoint_allowed("https://auth.notion.com/token", notion).is_ok());
        for bad in [
            "http://auth.notion.com/token",
            "https://127.0.0.1:8080/token",
            "https://localhost/token",
            "https://10.0.0.5/register",
            "https://192.168.1.1/x",
            "https://169.254.169.254/latest/meta-data",
            "https://[::1]:9/x",
            "https://[fe80::1]/x",
            "https://agent.spin.internal/x",
            "https://user@auth.notion.com/token",
            "ftp://auth.notion.com/",
            "javascript:alert(1)",
        ] {
            assert!(endpoint_allowed(bad, notion).is_err(), "{bad}");
        }
        // A loopback test connection may use its own loopback http endpoints.
        let local = "http://127.0.0.1:4000/mcp";
        assert!(endpoint_allowed("http://127.0.0.1:4000/token", local).is_ok());
        assert!(endpoint_allowed("http://localhost:4001/token", local).is_ok());
        assert!(endpoint_allowed("ftp://127.0.0.1/", local).is_err());
        // ... but not other local addresses, nor http elsewhere.
        assert!(endpoint_allowed("http://169.254.169.254/", local).is_err());
        assert!(endpoint_allowed("https://10.0.0.5/", local).is_err());
        assert!(endpoint_allowed("http://auth.example.com/", local).is_err());
        assert!(endpoint_allowed("https://auth.example.com/", local).is_ok());
    }

    #[test]
    fn metadata_of_another_resource_or_issuer_is_refused() {
        let url = "http://127.0.0.1:4000/mcp";
        assert!(resource_matches("http://127.0.0.1:4000/mcp", url).is_ok());
        assert!(resource_matches("http://127.0.0.1:4000/mcp/", url).is_ok());
        assert!(resource_matches("https://mcp.notion.com/mcp", url).is_err());
        assert!(resource_matches("http://127.0.0.1:4000/other", url).is_err());
        assert!(resource_matches("", url).is_err());
        let meta = |issuer: Option<&str>| ServerMetadata {
            issuer: issuer.map(str::to_string),
            authorization_endpoint: "https://a/authorize".into(),
            token_endpoint: "https://a/token".into(),
            registration_endpoint: None,
            revocation_endpoint: None,
            code_challenge_methods_supported: None,
            scopes_supported: None,
        };
        assert!(issuer_matches(&meta(Some("https://a/")), "https://a/").is_ok());
        assert!(issuer_matches(&meta(Some("https://notion/")), "https://a/").is_err());
        assert!(issuer_matches(&meta(None), "https://a/").is_err());
    }

    #[test]
    fn a_server_without_s256_is_refused() {
        let m = br#"{"authorization_endpoint":"a","token_endpoint":"t","code_challenge_methods_supported":["plain"]}"#;
        assert!(parse_server_metadata(m).is_err());
        let m = br#"{"authorization_endpoint":"https://a/authorize","token_endpoint":"https://a/token","registration_endpoint":"https://a/register","code_challenge_methods_supported":["S256"]}"#;
        assert_eq!(
            parse_server_metadata(m)
                .unwrap()
                .registration_endpoint
                .as_deref(),
            Some("https://a/register")
        );
    }

    #[test]
    fn the_authorize_url_and_token_bodies_carry_pkce_and_the_resource() {
        // `printf %s VERIFIER | openssl dgst -sha256 -binary | base64url`.
        assert_eq!(
            pkce_challenge("dBjftJeZ4CVP-mJ92K1Q8jJkWOd2vYJFzKkPTo7SJXg"),
            "57ph80rpC1y4J6voBbxZMijpWeGxzzE3eKNbO0Xj7RU"
        );
        let flow = McpFlow {
            client_id: "cid".into(),
            client_secret: None,
            token_endpoint: "https://a/token".into(),
            revocation_endpoint: None,
            resource: "https://mcp.example/mcp".into(),
        };
        let meta = parse_server_metadata(
            br#"{"authorization_endpoint":"https://a/authorize","token_endpoint":"https://a/token","scopes_supported":["mcp:tools"]}"#,
        )
        .unwrap();
        let url = flow.authorize_url(&meta, "http://app/cb", "st", "verifier");
        let q = url.split_once('?').unwrap().1;
        assert_eq!(
            query_value(q, "code_challenge_method").as_deref(),
            Some("S256")
        );
        assert_eq!(
            query_value(q, "code_challenge"),
            Some(pkce_challenge("verifier"))
        );
        assert_eq!(
            query_value(q, "resource").as_deref(),
            Some("https://mcp.example/mcp")
        );
        assert_eq!(query_value(q, "scope").as_deref(), Some("mcp:tools"));
        let body = flow.code_body("c", "http://app/cb", "verifier");
        assert_eq!(
            query_value(&body, "code_verifier").as_deref(),
            Some("verifier")
        );
        assert_eq!(query_value(&body, "client_secret"), None);
        let body = flow.refresh_body("r1");
        assert_eq!(
            query_value(&body, "grant_type").as_deref(),
            Some("refresh_token")
        );
    }

    #[test]
    fn tokens_refresh_before_expiry_and_keep_their_refresh_token() {
        let flow = Some(McpFlow {
            client_id: "c".into(),
            client_secret: None,
            token_endpoint: "t".into(),
            revocation_endpoint: None,
            resource: "r".into(),
        });
        let t = parse_token_answer(
            200,
            br#"{"access_token":"a","expires_in":120,"refresh_token":"r"}"#,
            1_000,
            flow.clone(),
            None,
        )
        .unwrap();
        assert_eq!(t.expires_at_ms, Some(121_000));
        assert!(!t.needs_refresh(1_000));
        assert!(t.needs_refresh(61_000));
        let again =
            parse_token_answer(200, br#"{"access_token":"b"}"#, 0, flow, Some("r".into())).unwrap();
        assert_eq!(again.refresh_token.as_deref(), Some("r"));
        assert!(!again.needs_refresh(i64::MAX));
    }

    #[test]
    fn sealed_tokens_open_only_with_their_key_and_binding() {
        let t = StoredToken {
            access_token: "secret-access".into(),
            refresh_token: Some("secret-refresh".into()),
            expires_at_ms: Some(5),
            flow: None,
        };
        let key = [7u8; 32];
        let sealed = seal(&key, [1u8; 12], "p\0notes", &t);
        assert!(!sealed.contains("secret"));
        assert_eq!(open(&key, "p\0notes", &sealed), Some(t));
        assert_eq!(open(&[8u8; 32], "p\0notes", &sealed), None);
        assert_eq!(open(&key, "q\0notes", &sealed), None);
        assert_eq!(open(&key, "p\0notes", "plain-token"), None);
    }
}
