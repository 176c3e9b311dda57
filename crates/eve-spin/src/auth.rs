//! Request authentication shared by every component: who is calling (the signed session cookie,
//! or the local-dev principal), whether a state-changing request is same-origin, and the
//! `Set-Cookie` values that go with sessions. The decisions live in [`eve_auth`]; this module
//! only reads Spin variables and request headers. Nothing else parses the session cookie.
//!
//! Every component that authenticates maps the sign-in variables (`auth_mode`,
//! `session_secret`, `session_secret_previous`, `chat_password`, `oidc_issuer`,
//! `oidc_client_id`, `oidc_client_secret`, optionally `app_base_url`) in `spin.toml`.

use eve_api::auth::{AuthMode, Principal, LOCAL_DEV_PRINCIPAL_ID};
use eve_api::ApiError;
use eve_auth::cookie::{self, SESSION_COOKIE_NAME};
use eve_auth::origin::{self, CrossOrigin, Origin, RequestFacts};
use eve_auth::AuthConfig;
use spin_sdk::http::{Fields, OutgoingResponse, Request, Response, ResponseOutparam};

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

/// An authenticated request: the principal and, when the cookie should be reissued (it is a
/// day old, or was signed with `session_secret_previous`), the `Set-Cookie` value to send.
#[derive(Debug, Clone)]
pub struct Session {
    pub principal: Principal,
    pub refreshed_cookie: Option<String>,
}

/// The signed-in principal of this request, or 401 — the same 401 for a missing, forged,
/// truncated, expired or wrong-secret cookie, and when sign-in is not configured.
pub fn authenticate(req: &Request) -> Result<Principal, ApiError> {
    authenticate_session(req).map(|s| s.principal)
}

/// Like [`authenticate`], also telling whether to reissue the cookie (attach
/// `refreshed_cookie` as `Set-Cookie` to the response to keep an active session alive).
pub fn authenticate_session(req: &Request) -> Result<Session, ApiError> {
    let config = config();
    authenticate_with(&config, req, now_secs()).ok_or_else(ApiError::unauthorized)
}

/// The authentication decision for a given configuration and time; `None` means 401.
pub fn authenticate_with(config: &AuthConfig, req: &Request, now: u64) -> Option<Session> {
    if config.mode() == AuthMode::LocalDev {
        let requested =
            origin::base_origin(None, header(req, HEADER_FULL_URL), header(req, "host"));
        if !local_dev_serves(requested.as_ref(), config.app_base_origin().as_ref()) {
            return None;
        }
        return Some(Session {
            principal: local_dev_principal(),
            refreshed_cookie: None,
        });
    }
    let codec = config.session_codec()?;
    let cookies = header(req, "cookie")?;
    let verified = cookie::cookie_values(cookies, SESSION_COOKIE_NAME)
        .take(4)
        .find_map(|value| codec.verify(value, now).ok())?;
    let refreshed_cookie = verified.needs_refresh(now).then(|| {
        let claims = verified.claims.refreshed(now);
        session_set_cookie(config, req, &codec.seal(&claims), claims.max_age(now))
    });
    Some(Session {
        principal: verified.claims.principal(),
        refreshed_cookie,
    })
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

/// The app's public origin (`app_base_url`, else this request's URL).
pub fn base_origin(config: &AuthConfig, req: &Request) -> Option<Origin> {
    origin::base_origin(
        config.app_base_origin().as_ref(),
        header(req, HEADER_FULL_URL),
        header(req, "host"),
    )
}

/// `Set-Cookie` for a session cookie value.
pub fn session_set_cookie(
    config: &AuthConfig,
    req: &Request,
    value: &str,
    max_age_secs: u64,
) -> String {
    cookie::set_cookie(
        SESSION_COOKIE_NAME,
        value,
        "/",
        max_age_secs,
        is_https(config, req),
    )
}

/// `Set-Cookie` that signs the browser out.
pub fn clear_session_cookie(config: &AuthConfig, req: &Request) -> String {
    cookie::clear_cookie(SESSION_COOKIE_NAME, "/", is_https(config, req))
}

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

/// The client's IP address (`spin-client-addr` without its port), for per-address throttles.
pub fn client_ip(req: &Request) -> String {
    origin::client_ip(header(req, HEADER_CLIENT_ADDR).unwrap_or_default())
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
}
