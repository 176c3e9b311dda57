//! Same-origin protection for state-changing requests, and where the app lives (its base URL).
//!
//! A browser marks every request with `Sec-Fetch-Site` (modern browsers) and cross-origin or
//! state-changing ones with `Origin`; a cross-site form or `fetch` cannot forge either. The rule,
//! for POST / PUT / PATCH / DELETE:
//! 1. `Sec-Fetch-Site: same-origin` or `none` (typed by the user) passes; `same-site` and
//!    `cross-site` are rejected.
//! 2. Otherwise an `Origin` must name this app: the request's `Host`, the host's full URL
//!    (`spin-full-url`), or `app_base_url`. `Origin: null` is rejected.
//! 3. A request with neither header is not from a browser (curl, a test, a server) and passes:
//!    it cannot carry a victim's cookie without the victim's browser.

/// The scheme, host and port of a URL: what "same origin" compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// `http` or `https`.
    pub scheme: String,
    /// Lower-case host name or IP literal (IPv6 with its brackets).
    pub host: String,
    pub port: u16,
}

fn default_port(scheme: &str) -> u16 {
    if scheme == "https" {
        443
    } else {
        80
    }
}

/// Splits `host[:port]` (IPv6 as `[::1]:port`) into a lower-case host and an optional port.
fn split_authority(authority: &str) -> Option<(String, Option<u16>)> {
    if authority.is_empty() || authority.contains(['@', '/', '\\', ' ', '?', '#']) {
        return None;
    }
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?),
        };
        (format!("[{}]", inside.to_ascii_lowercase()), port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_ascii_lowercase(), Some(p)),
            None => (authority.to_ascii_lowercase(), None),
        }
    };
    let valid_host = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._[]:".contains(&b));
    if !valid_host {
        return None;
    }
    let port = match port {
        None => None,
        Some(p) => Some(p.parse::<u16>().ok().filter(|p| *p != 0)?),
    };
    Some((host, port))
}

impl Origin {
    /// Parses the origin of an absolute `http(s)://host[:port][/path...]` URL.
    pub fn parse(url: &str) -> Option<Origin> {
        let (scheme, rest) = url.trim().split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return None;
        }
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (host, port) = split_authority(&rest[..end])?;
        let port = port.unwrap_or_else(|| default_port(&scheme));
        Some(Origin { scheme, host, port })
    }

    /// `scheme://host[:port]`, the port omitted when it is the scheme's default.
    pub fn serialize(&self) -> String {
        if self.port == default_port(&self.scheme) {
            format!("{}://{}", self.scheme, self.host)
        } else {
            format!("{}://{}:{}", self.scheme, self.host, self.port)
        }
    }

    /// Whether this origin is served at `host_header` (`host[:port]`). Without a port in the
    /// header, the origin must use its scheme's default port (a TLS-terminating proxy may change
    /// the scheme, so only the authority is compared).
    pub fn matches_host_header(&self, host_header: &str) -> bool {
        match split_authority(host_header.trim()) {
            Some((host, Some(port))) => host == self.host && port == self.port,
            Some((host, None)) => host == self.host && self.port == default_port(&self.scheme),
            None => false,
        }
    }

    /// Whether both name the same host and port (the scheme is not compared; see above).
    pub fn same_authority(&self, other: &Origin) -> bool {
        self.host == other.host && self.port == other.port
    }

    pub fn is_https(&self) -> bool {
        self.scheme == "https"
    }

    /// https, or plain http on a loopback name: origins where browsers keep `Secure` cookies
    /// (they treat http://localhost and 127.0.0.0/8 as secure contexts).
    pub fn is_secure_context(&self) -> bool {
        self.is_https() || is_loopback_host(&self.host)
    }
}

/// Whether an IP is a loopback address (127.0.0.0/8, ::1, or 127.x mapped into IPv6).
pub fn is_loopback_ip(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(v4) => v4.is_loopback(),
        std::net::IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// The IP of a socket address as hosts report it (`1.2.3.4:5678`, `[::1]:5678`, or a bare IP).
pub fn parse_ip(addr: &str) -> Option<std::net::IpAddr> {
    let addr = addr.trim();
    addr.parse::<std::net::SocketAddr>()
        .map(|s| s.ip())
        .or_else(|_| addr.trim_matches(['[', ']']).parse::<std::net::IpAddr>())
        .ok()
}

/// `localhost`, `*.localhost`, 127.0.0.0/8 or `[::1]`: hosts where plain http is acceptable.
pub fn is_loopback_host(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host == "[::1]"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Whether a method changes state (and so must be same-origin).
pub fn is_state_changing(method: &str) -> bool {
    !matches!(
        method.to_ascii_uppercase().as_str(),
        "GET" | "HEAD" | "OPTIONS" | "TRACE"
    )
}

/// What a request says about where it came from and where it was sent.
#[derive(Debug, Clone, Default)]
pub struct RequestFacts<'a> {
    pub method: &'a str,
    pub origin: Option<&'a str>,
    pub sec_fetch_site: Option<&'a str>,
    pub host: Option<&'a str>,
    /// The full URL the host received (`spin-full-url`).
    pub full_url: Option<&'a str>,
    /// `app_base_url`, when configured.
    pub app_base: Option<&'a Origin>,
}

/// Why a state-changing request was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrossOrigin {
    /// `Sec-Fetch-Site` is `same-site` or `cross-site`.
    FetchSite,
    /// `Origin` names another site, or is `null` or unreadable.
    Origin,
}

/// The same-origin rule in the module docs.
pub fn check_same_origin(facts: &RequestFacts<'_>) -> Result<(), CrossOrigin> {
    if !is_state_changing(facts.method) {
        return Ok(());
    }
    match facts
        .sec_fetch_site
        .map(|s| s.trim().to_ascii_lowercase())
        .as_deref()
    {
        Some("same-origin") | Some("none") => return Ok(()),
        Some("same-site") | Some("cross-site") => return Err(CrossOrigin::FetchSite),
        _ => {}
    }
    let Some(origin) = facts.origin else {
        return Ok(());
    };
    let origin = Origin::parse(origin).ok_or(CrossOrigin::Origin)?;
    let matches_host = facts.host.is_some_and(|h| origin.matches_host_header(h));
    let matches_url = facts
        .full_url
        .and_then(Origin::parse)
        .is_some_and(|u| u.same_authority(&origin));
    let matches_base = facts.app_base.is_some_and(|b| b.same_authority(&origin));
    if matches_host || matches_url || matches_base {
        Ok(())
    } else {
        Err(CrossOrigin::Origin)
    }
}

/// The app's public origin, as the seed's auth-url order resolves it: `app_base_url` when set,
/// else the URL this request arrived at (`spin-full-url`), else `http://<Host>`.
pub fn base_origin(
    app_base: Option<&Origin>,
    full_url: Option<&str>,
    host: Option<&str>,
) -> Option<Origin> {
    if let Some(base) = app_base {
        return Some(base.clone());
    }
    if let Some(origin) = full_url.and_then(Origin::parse) {
        return Some(origin);
    }
    Origin::parse(&format!("http://{}", host?))
}

/// A same-app path to return to after sign-in: must start with one `/` (not `//` or `/\`,
/// which browsers read as another host) and hold no control characters. Anything else is `/`.
pub fn safe_return_path(path: Option<&str>) -> String {
    match path {
        Some(p)
            if p.starts_with('/')
                && !p.starts_with("//")
                && !p.starts_with("/\\")
                && p.len() <= 2048
                && !p.chars().any(|c| c.is_control()) =>
        {
            p.to_string()
        }
        _ => "/".to_string(),
    }
}

/// The IP of a socket address as the host reports it (`1.2.3.4:5678`, `[::1]:5678`), without
/// the port; anything unreadable is kept as is (bounded) so it still keys a throttle.
pub fn client_ip(addr: &str) -> String {
    let addr = addr.trim();
    if let Ok(sock) = addr.parse::<std::net::SocketAddr>() {
        return sock.ip().to_string();
    }
    if let Ok(ip) = addr.parse::<std::net::IpAddr>() {
        return ip.to_string();
    }
    if addr.is_empty() {
        return "unknown".into();
    }
    addr.chars()
        .filter(|c| c.is_ascii_graphic())
        .take(64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post<'a>(origin: Option<&'a str>, site: Option<&'a str>) -> RequestFacts<'a> {
        RequestFacts {
            method: "POST",
            origin,
            sec_fetch_site: site,
            host: Some("127.0.0.1:3000"),
            full_url: Some("http://127.0.0.1:3000/api/auth/login"),
            app_base: None,
        }
    }

    #[test]
    fn origin_parse_normalises_scheme_host_and_default_port() {
        let o = Origin::parse("HTTPS://Chat.Example.com/path?x").unwrap();
        assert_eq!(
            o,
            Origin {
                scheme: "https".into(),
                host: "chat.example.com".into(),
                port: 443
            }
        );
        assert_eq!(o.serialize(), "https://chat.example.com");
        assert_eq!(
            Origin::parse("http://[::1]:8080").unwrap().serialize(),
            "http://[::1]:8080"
        );
        for bad in [
            "chat.example.com",
            "ftp://x",
            "http://",
            "http://a@b",
            "http://h:99999",
            "null",
        ] {
            assert_eq!(Origin::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn safe_methods_pass_whatever_their_origin() {
        let facts = RequestFacts {
            method: "GET",
            ..post(Some("https://evil.example"), Some("cross-site"))
        };
        assert_eq!(check_same_origin(&facts), Ok(()));
    }

    #[test]
    fn a_cross_site_post_is_rejected_by_sec_fetch_site() {
        assert_eq!(
            check_same_origin(&post(None, Some("cross-site"))),
            Err(CrossOrigin::FetchSite)
        );
        assert_eq!(
            check_same_origin(&post(None, Some("same-site"))),
            Err(CrossOrigin::FetchSite)
        );
    }

    #[test]
    fn a_same_origin_post_passes_by_sec_fetch_site() {
        assert_eq!(
            check_same_origin(&post(Some("https://evil.example"), Some("same-origin"))),
            Ok(())
        );
    }

    #[test]
    fn a_post_from_another_origin_is_rejected() {
        assert_eq!(
            check_same_origin(&post(Some("https://evil.example"), None)),
            Err(CrossOrigin::Origin)
        );
        assert_eq!(
            check_same_origin(&post(Some("http://127.0.0.1:3001"), None)),
            Err(CrossOrigin::Origin)
        );
        assert_eq!(
            check_same_origin(&post(Some("null"), None)),
            Err(CrossOrigin::Origin)
        );
    }

    #[test]
    fn a_post_whose_origin_matches_the_host_passes() {
        assert_eq!(
            check_same_origin(&post(Some("http://127.0.0.1:3000"), None)),
            Ok(())
        );
    }

    #[test]
    fn a_post_behind_a_tls_proxy_matches_by_host_header_without_port() {
        let facts = RequestFacts {
            method: "DELETE",
            origin: Some("https://chat.example.com"),
            sec_fetch_site: None,
            host: Some("chat.example.com"),
            full_url: Some("http://10.0.0.5:80/api/chats/1"),
            app_base: None,
        };
        assert_eq!(check_same_origin(&facts), Ok(()));
    }

    #[test]
    fn a_post_whose_origin_is_the_configured_base_url_passes() {
        let base = Origin::parse("https://chat.example.com").unwrap();
        let facts = RequestFacts {
            app_base: Some(&base),
            host: Some("internal:3000"),
            full_url: None,
            ..post(Some("https://chat.example.com"), None)
        };
        assert_eq!(check_same_origin(&facts), Ok(()));
    }

    #[test]
    fn a_post_without_browser_headers_passes() {
        assert_eq!(check_same_origin(&post(None, None)), Ok(()));
    }

    #[test]
    fn base_origin_prefers_the_variable_then_the_request_url_then_the_host() {
        let base = Origin::parse("https://chat.example.com").unwrap();
        let from_var = base_origin(Some(&base), Some("http://127.0.0.1:3000/x"), Some("h"));
        assert_eq!(from_var.unwrap().serialize(), "https://chat.example.com");
        let from_url = base_origin(None, Some("http://127.0.0.1:3000/x"), Some("h"));
        assert_eq!(from_url.unwrap().serialize(), "http://127.0.0.1:3000");
        assert_eq!(
            base_origin(None, None, Some("h:81")).unwrap().serialize(),
            "http://h:81"
        );
        assert_eq!(base_origin(None, None, None), None);
    }

    #[test]
    fn return_paths_must_stay_on_this_site() {
        assert_eq!(safe_return_path(Some("/chat/abc?x=1")), "/chat/abc?x=1");
        for bad in [
            "//evil.example",
            "/\\evil.example",
            "https://evil.example",
            "chat",
            "/a\nb",
        ] {
            assert_eq!(safe_return_path(Some(bad)), "/", "{bad:?}");
        }
        assert_eq!(safe_return_path(None), "/");
    }

    #[test]
    fn client_ip_drops_the_port() {
        assert_eq!(client_ip("127.0.0.1:54321"), "127.0.0.1");
        assert_eq!(client_ip("[::1]:54321"), "::1");
        assert_eq!(client_ip("10.1.2.3"), "10.1.2.3");
        assert_eq!(client_ip(""), "unknown");
    }

    #[test]
    fn loopback_hosts_are_recognised() {
        for h in [
            "localhost",
            "127.0.0.1",
            "127.1.2.3",
            "[::1]",
            "app.localhost",
        ] {
            assert!(is_loopback_host(h), "{h}");
        }
        for h in ["example.com", "10.0.0.1", "localhost.example.com"] {
            assert!(!is_loopback_host(h), "{h}");
        }
    }
}
