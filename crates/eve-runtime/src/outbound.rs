//! The app's own guard on the outbound URLs an admin enters (a provider's base URL, an MCP
//! server's endpoint), for deployments whose `allowed_outbound_hosts` is a wildcard
//! (docs/runtime.md, "Outbound access"). A URL must be `https`, or `http` to a host an admin
//! allowed; its host must not be loopback, link-local, private, shared (CGNAT), unspecified,
//! multicast or a local name unless that host is on the allow-list.
//!
//! The guard sees the URL, not the address a name resolves to: a public name that resolves to
//! a private address passes it (the docs say to pair the wildcard with an egress firewall).
//! The Spin variables' own URLs are the owner's deploy-time configuration and are not
//! guarded.

use std::net::IpAddr;

use ipnet::IpNet;
use url::{Host, Url};

/// Why a URL is refused; the message is what the admin reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Not an absolute http(s) URL, or one with credentials in it.
    Malformed(String),
    /// `http://` to a host that is not on the allow-list.
    NotHttps,
    /// A loopback, private, link-local… address or a local name, not on the allow-list.
    PrivateHost(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Malformed(why) => write!(f, "not a usable URL: {why}"),
            Refused::NotHttps => write!(f, "the URL must use https (or its host must be allowed)"),
            Refused::PrivateHost(host) => write!(
                f,
                "{host} is a local or private address; an admin must allow it in the settings \
                 (outbound allow-list) first"
            ),
        }
    }
}

/// The ranges no admin-entered URL reaches unless allowed.
const BLOCKED: &[&str] = &[
    "0.0.0.0/8",
    "10.0.0.0/8",
    "100.64.0.0/10",
    "127.0.0.0/8",
    "169.254.0.0/16",
    "172.16.0.0/12",
    "192.0.0.0/24",
    "192.168.0.0/16",
    "198.18.0.0/15",
    "224.0.0.0/3",
    // IPv6 spellings that reach IPv4 (issue 32): IPv4-compatible (also `::` and `::1`),
    // NAT64's well-known and local prefixes, and 6to4 (which embeds any IPv4 address, private
    // ones too; the scheme is deprecated, so the whole range goes).
    "::/96",
    "64:ff9b::/96",
    "64:ff9b:1::/48",
    "2002::/16",
    "fc00::/7",
    "fe80::/10",
    "ff00::/8",
];

/// Checks `raw` against the guard. `allowed` are the hosts an admin allowed explicitly
/// (`host` or `host:port`, as written in the URL; IPv6 in brackets).
pub fn check(raw: &str, allowed: &[String]) -> Result<Url, Refused> {
    let url = Url::parse(raw.trim()).map_err(|e| Refused::Malformed(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Refused::Malformed(
            "only http and https are supported".into(),
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Refused::Malformed(
            "put credentials in the auth settings, not the URL".into(),
        ));
    }
    let host = url
        .host()
        .ok_or_else(|| Refused::Malformed("the URL has no host".into()))?;
    let name = url.host_str().unwrap_or_default().to_ascii_lowercase();
    let with_port = url
        .port()
        .map(|p| format!("{name}:{p}"))
        .unwrap_or_else(|| name.clone());
    let is_allowed = allowed
        .iter()
        .map(|a| a.trim().to_ascii_lowercase())
        .any(|a| a == name || a == with_port);
    if is_allowed {
        return Ok(url);
    }
    if is_local(&host) {
        return Err(Refused::PrivateHost(name));
    }
    if url.scheme() == "http" {
        return Err(Refused::NotHttps);
    }
    Ok(url)
}

fn is_local(host: &Host<&str>) -> bool {
    match host {
        Host::Ipv4(ip) => blocked(IpAddr::V4(*ip)),
        Host::Ipv6(ip) => match ip.to_ipv4_mapped() {
            Some(v4) => blocked(IpAddr::V4(v4)),
            None => blocked(IpAddr::V6(*ip)),
        },
        Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            // A name that is an address in another spelling (`2130706433`, `0x7f.1`) was
            // already normalised by the URL parser; these are the names that stay local.
            d == "localhost"
                || [
                    ".localhost",
                    ".local",
                    ".internal",
                    ".localdomain",
                    ".home.arpa",
                ]
                .iter()
                .any(|s| d.ends_with(s))
                || !d.contains('.')
        }
    }
}

fn blocked(ip: IpAddr) -> bool {
    BLOCKED
        .iter()
        .map(|n| n.parse::<IpNet>().expect("the blocked ranges parse"))
        .any(|net| net.contains(&ip))
}

/// Whether an address is one the guard blocks (for callers holding an address, not a URL).
pub fn is_blocked_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => blocked(IpAddr::V4(v4)),
            None => blocked(ip),
        },
        IpAddr::V4(_) => blocked(ip),
    }
}

/// Whether two URLs share an origin (scheme, host and port, the default port spelled or not).
/// A stored secret was entered for its URL's origin; one that moves to another origin must be
/// entered again (issue 32), so a URL that does not parse counts as another origin.
pub fn same_origin(a: &str, b: &str) -> bool {
    match (Url::parse(a.trim()), Url::parse(b.trim())) {
        (Ok(a), Ok(b)) => {
            let (a, b) = (a.origin(), b.origin());
            a.is_tuple() && a == b
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_scheme_host_and_port() {
        let base = "https://llm.example.com/v1";
        assert!(same_origin(base, "https://LLM.example.com:443/v2/"));
        assert!(same_origin(base, base));
        for other in [
            "http://llm.example.com/v1",
            "https://llm.example.com:8443/v1",
            "https://evil.example/v1",
            "https://llm.example.com.evil.example/v1",
            "not a url",
        ] {
            assert!(!same_origin(base, other), "{other}");
        }
    }

    fn refused(url: &str) -> Refused {
        check(url, &[]).unwrap_err()
    }

    #[test]
    fn public_https_urls_pass() {
        for url in [
            "https://api.openai.com/v1",
            "https://mcp.notion.com/mcp",
            "https://8.8.8.8/x",
            "https://[2606:4700::1111]/",
        ] {
            assert!(check(url, &[]).is_ok(), "{url}");
        }
    }

    #[test]
    fn loopback_private_link_local_and_local_names_are_refused() {
        for url in [
            "https://127.0.0.1/",
            "https://127.1/",
            "https://2130706433/",
            "https://0x7f000001/",
            "https://0.0.0.0/",
            "https://10.1.2.3/",
            "https://172.16.0.1/",
            "https://192.168.1.1/",
            "https://100.64.0.1/",
            "https://169.254.169.254/latest/meta-data/",
            "https://[::1]/",
            "https://[::ffff:127.0.0.1]/",
            "https://[::127.0.0.1]/",
            "https://[::a9fe:a9fe]/",
            "https://[64:ff9b::a9fe:a9fe]/",
            "https://[64:ff9b:1::a00:1]/",
            "https://[2002:a9fe:a9fe::1]/",
            "https://[2002:7f00:1::]/",
            "https://[fd00::1]/",
            "https://[fe80::1]/",
            "https://localhost:8080/",
            "https://db.localhost/",
            "https://printer.local/",
            "https://metadata.google.internal/",
            "https://intranet/",
        ] {
            assert!(matches!(refused(url), Refused::PrivateHost(_)), "{url}");
        }
    }

    #[test]
    fn plain_http_credentials_and_other_schemes_are_refused() {
        assert_eq!(refused("http://api.example.com/"), Refused::NotHttps);
        assert!(matches!(
            refused("https://u:p@api.example.com/"),
            Refused::Malformed(_)
        ));
        assert!(matches!(
            refused("file:///etc/passwd"),
            Refused::Malformed(_)
        ));
        assert!(matches!(refused("not a url"), Refused::Malformed(_)));
    }

    #[test]
    fn an_allowed_host_passes_by_name_or_with_its_port() {
        let allowed = vec!["127.0.0.1:9000".to_string(), "LLM.internal".to_string()];
        assert!(check("http://127.0.0.1:9000/v1", &allowed).is_ok());
        assert!(matches!(
            check("http://127.0.0.1:9001/v1", &allowed),
            Err(Refused::PrivateHost(_))
        ));
        assert!(check("http://llm.internal/v1", &allowed).is_ok());
        assert!(is_blocked_address("::ffff:10.0.0.1".parse().unwrap()));
        assert!(!is_blocked_address("1.1.1.1".parse().unwrap()));
    }
}
