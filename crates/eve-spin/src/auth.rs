//! Request authentication shared by every component: who is calling (the signed session cookie,
//! an API token in `Authorization: Bearer evc_…`, or the local-dev principal), whether a
//! state-changing request is same-origin, and the `Set-Cookie` values that go with sessions.
//! The decisions live in [`eve_auth`]; this module only reads Spin variables and request
//! headers. Nothing else parses the session cookie.
//!
//! Every component that authenticates maps the sign-in variables (`auth_mode`,
//! `session_secret`, `session_secret_previous`, `chat_password`, `oidc_issuer`,
//! `oidc_client_id`, `oidc_client_secret`, `oidc_allowed_emails`, `oidc_allowed_domains`,
//! optionally `app_base_url`) in `spin.toml`, and has the key-value store `default`, where
//! logout records the time before which a principal's cookies are void ([`admit`] checks it),
//! and the SQLite database `default`, where API tokens are (`eve_auth::api_token`) and the
//! account rows [`admit`] reads on every request of an account.

use eve_api::auth::{AuthMode, Principal, LOCAL_DEV_PRINCIPAL_ID};
use eve_api::ApiError;
use eve_api::ErrorCode;
use eve_auth::activity;
use eve_auth::api_token;
use eve_auth::cookie::{self, SESSION_COOKIE_NAME};
use eve_auth::origin::{self, CrossOrigin, Origin, RequestFacts};
use eve_auth::throttle;
use eve_auth::AuthConfig;
use spin_sdk::http::{Fields, OutgoingResponse, Request, Response, ResponseOutparam};
use spin_sdk::wit::wasi::keyvalue::store;

/// `spin-full-url`: the full URL the host received.
pub const HEADER_FULL_URL: &str = "spin-full-url";
/// `spin-client-addr`: the client's socket address (`ip:port`).
pub const HEADER_CLIENT_ADDR: &str = "spin-client-addr";

/// The sign-in configuration from this component's Spin variables (unmapped or empty → unset).
pub fn config() -> AuthConfig {
    AuthConfig::from_lookup(|name| spin_sdk::variables::get(name).ok())
}

/// Unix seconds now.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

fn header<'a>(req: &'a Request, name: &str) -> Option<&'a str> {
    req.header(name).and_then(|v| v.as_str())
}

/// The local-dev principal.
pub fn local_dev_principal() -> Principal {
    Principal {
        id: LOCAL_DEV_PRINCIPAL_ID.into(),
        mode: AuthMode::LocalDev,
        name: Some("Local developer".into()),
        email: None,
    }
}

/// How a request proved who it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// Local-dev: a loopback client, no sign-in.
    LocalDev,
    /// The session cookie, signed in at `signed_in_at` (Unix seconds).
    Cookie { signed_in_at: u64 },
    /// An API token (`Authorization: Bearer evc_…`), by its id. Such a caller never gets a
    /// `Set-Cookie`, and cannot create tokens.
    Token { id: String },
}

/// An authenticated request: the principal, how it proved it, and, when the cookie should be
/// reissued (it is a day old, or was signed with `session_secret_previous`), the `Set-Cookie`
/// value to send.
#[derive(Debug, Clone)]
pub struct Session {
    pub principal: Principal,
    pub refreshed_cookie: Option<String>,
    pub credential: Credential,
}

/// The signed-in principal of this request, or 401 — the same 401 for a missing, forged,
/// truncated, expired, wrong-secret or signed-out cookie, for a malformed, unknown, revoked or
/// expired API token, and when sign-in is not configured.
pub fn authenticate(req: &Request) -> Result<Principal, ApiError> {
    authenticate_session(req).map(|s| s.principal)
}

/// Like [`authenticate`], also telling whether to reissue the cookie (attach
/// `refreshed_cookie` as `Set-Cookie` to the response to keep an active session alive).
pub fn authenticate_session(req: &Request) -> Result<Session, ApiError> {
    let config = config();
    authenticate_with(&config, req, now_secs())?.ok_or_else(ApiError::unauthorized)
}

/// The key-value key of the time (Unix seconds) at or before which every session of
/// `principal_id` is void: logout sets it, [`authenticate_with`] checks it.
pub fn valid_after_key(principal_id: &str) -> String {
    format!("session:valid-after:{principal_id}")
}

fn store_unavailable(e: store::Error) -> ApiError {
    eprintln!("auth: key-value store error: {e:?}");
    ApiError::new(
        ErrorCode::NotConfigured,
        "sign-in is not available (key-value store)",
    )
}

/// When the sessions of `principal_id` were last revoked (logout), if ever.
pub fn revoked_at(principal_id: &str) -> Result<Option<u64>, ApiError> {
    let bucket = store::open(crate::ratelimit::STORE).map_err(store_unavailable)?;
    let value = bucket
        .get(&valid_after_key(principal_id))
        .map_err(store_unavailable)?;
    Ok(value.and_then(|v| std::str::from_utf8(&v).ok()?.trim().parse().ok()))
}

/// Voids every session of `principal_id` signed in at or before `at` (logout).
pub fn revoke_sessions(principal_id: &str, at: u64) -> Result<(), ApiError> {
    let bucket = store::open(crate::ratelimit::STORE).map_err(store_unavailable)?;
    bucket
        .set(&valid_after_key(principal_id), at.to_string().as_bytes())
        .map_err(store_unavailable)
}

/// [`admit`]'s decision: `false` when the sessions of `principal_id` were revoked at or after
/// `signed_in_at` (logout, password change; `None`: a credential without a sign-in time, which
/// logout does not void), or, for an account, when its row says no
/// ([`eve_auth::standing`]: disabled, deleted, or an OIDC-only account whose email
/// `oidc_allowed_*` no longer allows). The row is read on every request rather than a
/// key-value flag the admin writes after it (issue 32): a disable is then one write, with no
/// moment where the database says disabled and a request still passes. An error: the
/// key-value store or the database did not answer (503).
fn admitted(
    config: &AuthConfig,
    principal_id: &str,
    signed_in_at: Option<u64>,
) -> Result<bool, ApiError> {
    if let Some(auth) = signed_in_at {
        if revoked_at(principal_id)?.is_some_and(|at| auth <= at) {
            return Ok(false);
        }
    }
    if let Some(account_id) = principal_id.strip_prefix(eve_api::auth::ACCOUNT_PRINCIPAL_PREFIX) {
        let db = crate::db::open()?;
        let standing = eve_auth::standing::read(&db, account_id).map_err(|e| {
            eprintln!("auth: account standing: {e}");
            crate::db::unavailable()
        })?;
        return Ok(eve_auth::standing::admits(
            standing.as_ref(),
            &config.allowlist(),
        ));
    }
    Ok(true)
}

/// Records that the account principal `principal_id` was active (`last_active_at`), at most
/// once an hour (`eve_auth::activity`): a key-value read per request, writes once an hour. A
/// failure is logged and the request goes on; the next one tries again.
fn note_activity(principal_id: &str) {
    let Some(account_id) = principal_id.strip_prefix(eve_api::auth::ACCOUNT_PRINCIPAL_PREFIX)
    else {
        return;
    };
    let now = now_secs();
    let key = activity::key(principal_id);
    let bucket = match store::open(crate::ratelimit::STORE) {
        Ok(b) => b,
        Err(e) => return eprintln!("auth: last activity: key-value store: {e:?}"),
    };
    if !activity::due(bucket.get(&key).ok().flatten().as_deref(), now) {
        return;
    }
    let now_ms = i64::try_from(now.saturating_mul(1000)).unwrap_or(i64::MAX);
    let written = crate::db::open()
        .map_err(|e| e.message)
        .and_then(|db| activity::record(&db, account_id, now_ms));
    match written {
        Ok(()) => {
            let _ = bucket.set(&key, now.to_string().as_bytes());
        }
        Err(e) => eprintln!("auth: last activity of {principal_id}: {e}"),
    }
}

/// The sign-in time to put in a new session of `principal_id` at `now`: `now`, or one second
/// past a logout in this same second (cookies count in whole seconds, and a session signed in
/// at the logout's second would be void).
pub fn sign_in_time(principal_id: &str, now: u64) -> Result<u64, ApiError> {
    Ok(match revoked_at(principal_id)? {
        Some(at) if at >= now => at + 1,
        _ => now,
    })
}

/// The API token of an `Authorization: Bearer evc_…` header, if the request has one. Only a
/// value with the tokens' prefix is taken (a malformed one is then 401, not a fall-back to the
/// cookie); any other Authorization (a gateway's own JWT in front of the app, a proxy's Basic,
/// a client's forged upstream token) is not ours to judge and is ignored, as it always was.
pub fn bearer_token(req: &Request) -> Option<&str> {
    api_token_in(header(req, "authorization")?)
}

/// [`bearer_token`] of an `Authorization` value.
pub fn api_token_in(authorization: &str) -> Option<&str> {
    let (scheme, token) = authorization.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && token.starts_with(api_token::TOKEN_PREFIX))
        .then_some(token)
}

/// The authentication decision for a given configuration and time: `Ok(None)` means 401; an
/// error means the key-value store or the database did not answer (503, so a store hiccup
/// does not sign anyone out). Costs one key-value read per cookie request (the logout time),
/// one SQLite read per token request (and a write at most once a minute per token); for an
/// account, one SQLite read of its row and a key-value read (last activity, written at most
/// once an hour).
pub fn authenticate_with(
    config: &AuthConfig,
    req: &Request,
    now: u64,
) -> Result<Option<Session>, ApiError> {
    if config.mode() == AuthMode::LocalDev {
        let requested =
            origin::base_origin(None, header(req, HEADER_FULL_URL), header(req, "host"));
        let served = local_dev_serves(requested.as_ref(), config.app_base_origin().as_ref())
            && local_dev_client(
                header(req, HEADER_CLIENT_ADDR),
                &header_values(req, "x-forwarded-for"),
                &header_values(req, "forwarded"),
            );
        return Ok(served.then(|| Session {
            principal: local_dev_principal(),
            refreshed_cookie: None,
            credential: Credential::LocalDev,
        }));
    }
    match bearer_token(req) {
        // Token times are milliseconds (the table's unit); cookies count whole seconds.
        Some(token) => authenticate_token(config, token, crate::db::now_ms()),
        None => authenticate_cookie(config, req, now),
    }
}

/// The session cookie's principal, through [`admit`].
fn authenticate_cookie(
    config: &AuthConfig,
    req: &Request,
    now: u64,
) -> Result<Option<Session>, ApiError> {
    let Some(codec) = config.session_codec() else {
        return Ok(None);
    };
    let Some(cookies) = header(req, "cookie") else {
        return Ok(None);
    };
    let Some(verified) = cookie::cookie_values(cookies, SESSION_COOKIE_NAME)
        .take(4)
        .find_map(|value| codec.verify(value, now).ok())
    else {
        return Ok(None);
    };
    if verified.claims.mode == AuthMode::Oidc {
        // The allowlist is checked on every request, so narrowing it takes effect at once.
        let allowed = config.allowlist();
        if !verified
            .claims
            .email
            .as_deref()
            .is_some_and(|e| allowed.allows(e))
        {
            return Ok(None);
        }
    }
    let credential = Credential::Cookie {
        signed_in_at: verified.claims.auth,
    };
    let Some(session) = admit(config, verified.claims.principal(), credential)? else {
        return Ok(None);
    };
    let refreshed_cookie = verified.needs_refresh(now).then(|| {
        let claims = verified.claims.refreshed(now);
        cookie::session_set_cookie(&codec.seal(&claims), claims.max_age(now))
    });
    Ok(Some(Session {
        refreshed_cookie,
        ..session
    }))
}

/// An API token's principal, through [`admit`]: the token must verify (well-formed, known,
/// not revoked, not expired), have been created under the current mode, and in OIDC its
/// email must still be allowed.
fn authenticate_token(
    config: &AuthConfig,
    presented: &str,
    now_ms: i64,
) -> Result<Option<Session>, ApiError> {
    let db = crate::db::open()?;
    let token = api_token::verify(&db, presented, now_ms).map_err(|e| {
        eprintln!("auth: API token lookup failed: {e}");
        crate::db::unavailable()
    })?;
    let Some(token) = token else {
        return Ok(None);
    };
    let Some(principal) = api_token::principal_for(&token, config) else {
        return Ok(None);
    };
    admit(config, principal, Credential::Token { id: token.id })
}

/// The one post-check every signed-in request passes, whatever proved who it is (cookie or
/// token): `Ok(None)` is 401. A logout voids the cookies signed in before it (tokens are
/// revoked one by one at `/api/tokens`); an account its row refuses (disabled, deleted, OIDC
/// email no longer allowed) is refused on either path.
pub fn admit(
    config: &AuthConfig,
    principal: Principal,
    credential: Credential,
) -> Result<Option<Session>, ApiError> {
    let signed_in_at = match &credential {
        Credential::Cookie { signed_in_at } => Some(*signed_in_at),
        _ => None,
    };
    if !admitted(config, &principal.id, signed_in_at)? {
        return Ok(None);
    }
    note_activity(&principal.id);
    Ok(Some(Session {
        principal,
        refreshed_cookie: None,
        credential,
    }))
}

fn header_values<'a>(req: &'a Request, name: &str) -> Vec<&'a str> {
    req.headers()
        .filter(|(k, _)| k.eq_ignore_ascii_case(name))
        .filter_map(|(_, v)| v.as_str())
        .collect()
}

/// Local-dev serves only a client on this machine: the peer (`spin-client-addr`, the socket
/// address the host accepted) is a loopback address, and no proxy says it forwarded for
/// anyone else (`X-Forwarded-For`, `Forwarded: for=`), since a reverse proxy on this machine
/// connects from loopback on behalf of whoever reached it.
pub fn local_dev_client(peer: Option<&str>, forwarded_for: &[&str], forwarded: &[&str]) -> bool {
    let peer_local = peer
        .and_then(origin::parse_ip)
        .is_some_and(origin::is_loopback_ip);
    let hop_local = |hop: &str| {
        let hop = hop.trim().trim_matches('"');
        hop.eq_ignore_ascii_case("localhost")
            || origin::parse_ip(hop).is_some_and(origin::is_loopback_ip)
    };
    let forwarded_local = forwarded_for
        .iter()
        .flat_map(|h| h.split(','))
        .all(hop_local);
    let rfc7239_local = forwarded
        .iter()
        .flat_map(|h| h.split([',', ';']))
        .filter_map(|pair| {
            let (k, v) = pair.trim().split_once('=')?;
            k.trim().eq_ignore_ascii_case("for").then_some(v)
        })
        .all(hop_local);
    peer_local && forwarded_local && rfc7239_local
}

/// Local-dev has no sign-in, so it serves only requests addressed to a loopback name
/// (`localhost`, `127.0.0.1`, `[::1]`) or to `app_base_url`. A page on another site whose DNS
/// name is rebound to 127.0.0.1 (DNS rebinding) reaches the port, and the browser even calls
/// its requests same-origin, but they carry the attacker's name in `Host`.
pub fn local_dev_serves(requested: Option<&Origin>, app_base: Option<&Origin>) -> bool {
    requested.is_some_and(|r| {
        origin::is_loopback_host(&r.host) || app_base.is_some_and(|b| b.same_authority(r))
    })
}

/// Whether the browser reached the app over https: `app_base_url`'s scheme when set, else the
/// request URL's. Decides the cookie's `Secure` attribute.
pub fn is_https(config: &AuthConfig, req: &Request) -> bool {
    origin::base_origin(
        config.app_base_origin().as_ref(),
        header(req, HEADER_FULL_URL),
        header(req, "host"),
    )
    .is_some_and(|o| o.is_https())
}

/// The origin this request was addressed to (`spin-full-url`, else `Host`), ignoring
/// `app_base_url`.
pub fn request_origin(req: &Request) -> Option<Origin> {
    origin::base_origin(None, header(req, HEADER_FULL_URL), header(req, "host"))
}

/// The app's public origin (`app_base_url`, else this request's URL).
pub fn base_origin(config: &AuthConfig, req: &Request) -> Option<Origin> {
    origin::base_origin(
        config.app_base_origin().as_ref(),
        header(req, HEADER_FULL_URL),
        header(req, "host"),
    )
}

/// `Set-Cookie` for a session cookie value (`__Host-`: always `Secure`, `Path=/`).
pub fn session_set_cookie(value: &str, max_age_secs: u64) -> String {
    cookie::session_set_cookie(value, max_age_secs)
}

/// `Set-Cookie` that signs the browser out.
pub fn clear_session_cookie() -> String {
    cookie::session_clear_cookie()
}

/// Whether sign-in must be refused for this request: `app_base_url` is unset and the request
/// came over plain http to a name that is not loopback, where browsers drop `Secure` cookies.
pub fn insecure_origin(config: &AuthConfig, req: &Request) -> bool {
    config.insecure_origin(request_origin(req).as_ref())
}

/// Sign-in over plain http at a non-loopback name would set a `Secure` cookie the browser
/// drops: refuse it with the reason instead.
pub fn require_secure_origin(config: &AuthConfig, req: &Request) -> Result<(), ApiError> {
    if insecure_origin(config, req) {
        return Err(ApiError::new(
            ErrorCode::NotConfigured,
            eve_auth::config::missing::PLAIN_HTTP_REQUEST,
        ));
    }
    Ok(())
}

/// The `Strict-Transport-Security` value to send when the app is served over https.
pub const HSTS: &str = "max-age=31536000";

/// 403 unless a state-changing request (POST, PUT, PATCH, DELETE) comes from this app's own
/// pages (`Sec-Fetch-Site` / `Origin`, see [`eve_auth::origin`]). Safe methods always pass.
pub fn require_same_origin(req: &Request) -> Result<(), ApiError> {
    let app_base = spin_sdk::variables::get("app_base_url")
        .ok()
        .and_then(|u| Origin::parse(&u));
    let method = req.method().to_string();
    let facts = RequestFacts {
        method: &method,
        origin: header(req, "origin"),
        sec_fetch_site: header(req, "sec-fetch-site"),
        host: header(req, "host"),
        full_url: header(req, HEADER_FULL_URL),
        app_base: app_base.as_ref(),
    };
    // Both refusals (`Sec-Fetch-Site`, `Origin`) get one message: which header gave the
    // request away is of no use to a legitimate client.
    origin::check_same_origin(&facts).map_err(|_: CrossOrigin| {
        ApiError::forbidden(
            "cross-site request refused: state-changing requests must come from this app's own pages",
        )
    })
}

/// The client's address for per-address throttles: `spin-client-addr` without its port, or,
/// when that peer is one of `trusted_proxies`, the right-most `X-Forwarded-For` hop that is
/// not (see [`eve_auth::throttle::client_address`]); IPv6 clients by their /64.
pub fn client_ip(req: &Request) -> String {
    client_ip_with(&config(), req)
}

/// [`client_ip`] for a configuration already read.
pub fn client_ip_with(config: &AuthConfig, req: &Request) -> String {
    let peer = header(req, HEADER_CLIENT_ADDR).unwrap_or_default();
    let forwarded = header_values(req, "x-forwarded-for");
    match throttle::client_address(
        origin::parse_ip(peer),
        &forwarded,
        &config.trusted_proxies(),
    ) {
        Some(ip) => throttle::throttle_subject(ip),
        None => origin::client_ip(peer),
    }
}

/// Sends `response` with extra `Set-Cookie` headers. Spin's simple `Response` keeps one value
/// per header name, so a handler that sets two cookies at once (sign-in via OIDC sets the session
/// and clears the flow cookie) writes the response itself, through this.
pub async fn send_with_cookies(out: ResponseOutparam, response: Response, set_cookies: &[String]) {
    let mut entries: Vec<(String, Vec<u8>)> = response
        .headers()
        .filter(|(name, _)| !name.eq_ignore_ascii_case("set-cookie"))
        .map(|(name, value)| (name.to_string(), value.as_bytes().to_vec()))
        .collect();
    if let Some(existing) = response.header("set-cookie") {
        entries.push(("set-cookie".into(), existing.as_bytes().to_vec()));
    }
    entries.extend(
        set_cookies
            .iter()
            .map(|c| ("set-cookie".to_string(), c.clone().into_bytes())),
    );
    let fields = Fields::from_list(&entries).unwrap_or_else(|_| Fields::new());
    let outgoing = OutgoingResponse::new(fields);
    // A status from our own responses is always valid; ignore the impossible error.
    let _ = outgoing.set_status_code(*response.status());
    // The client may have gone away; there is nobody to report a write error to.
    let _ = out.set_with_body(outgoing, response.into_body()).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(url: &str) -> Origin {
        Origin::parse(url).unwrap()
    }

    #[test]
    fn only_a_bearer_with_the_token_prefix_is_an_api_token() {
        assert_eq!(api_token_in("Bearer evc_abc_def"), Some("evc_abc_def"));
        assert_eq!(api_token_in("  bearer   evc_x  "), Some("evc_x"));
        assert_eq!(api_token_in("BEARER evc_"), Some("evc_"));
        for other in [
            "",
            "Bearer",
            "Bearer ",
            "Bearer eyJhbGciOiJIUzI1NiJ9.e30.x",
            "Basic ZXZjXzp4",
            "Token evc_abc_def",
            "evc_abc_def",
        ] {
            assert_eq!(api_token_in(other), None, "{other:?}");
        }
    }

    #[test]
    fn local_dev_serves_loopback_names_and_app_base_url_only() {
        for ok in [
            "http://127.0.0.1:3000",
            "http://localhost:3000",
            "http://[::1]:3000",
            "http://app.localhost",
        ] {
            assert!(local_dev_serves(Some(&o(ok)), None), "{ok}");
        }
        let rebound = o("http://rebound.evil.example:3000");
        assert!(!local_dev_serves(Some(&rebound), None));
        assert!(!local_dev_serves(None, None));
        let base = o("http://devbox.lan:3000");
        assert!(local_dev_serves(
            Some(&o("http://devbox.lan:3000/x")),
            Some(&base)
        ));
        assert!(!local_dev_serves(Some(&rebound), Some(&base)));
    }

    #[test]
    fn local_dev_serves_only_clients_on_this_machine() {
        for peer in [
            "127.0.0.1:5000",
            "[::1]:5000",
            "127.0.0.2:1",
            "[::ffff:127.0.0.1]:9",
        ] {
            assert!(local_dev_client(Some(peer), &[], &[]), "{peer}");
        }
        for peer in ["192.0.2.2:5000", "[2001:db8::1]:5000", "", "garbage"] {
            assert!(!local_dev_client(Some(peer), &[], &[]), "{peer}");
        }
        assert!(!local_dev_client(None, &[], &[]));
        let local = Some("127.0.0.1:5000");
        assert!(local_dev_client(
            local,
            &["127.0.0.1, ::1"],
            &["for=127.0.0.1"]
        ));
        assert!(!local_dev_client(local, &["203.0.113.5"], &[]));
        assert!(!local_dev_client(local, &["127.0.0.1", "203.0.113.5"], &[]));
        assert!(!local_dev_client(
            local,
            &[],
            &["for=\"[2001:db8::1]:4711\";proto=https"]
        ));
        assert!(!local_dev_client(local, &[], &["for=unknown"]));
    }
}
