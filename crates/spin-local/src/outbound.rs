//! `allowed_outbound_hosts`: which outbound requests a component may make.
//!
//! Entries are `scheme://host[:port]` as Spin documents them: `*` for any scheme, host or
//! port; `*.example.com` for any subdomain; `8000..8100` for a port range; no port means the
//! scheme's default port. `http://<component>.spin.internal` entries allow service chaining.
//! Anything not matched is denied (`HttpRequestDenied` inside the component).

use anyhow::{bail, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    Any,
    Exact(String),
    /// `*.suffix`: any host strictly below `suffix`.
    Subdomain(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum PortPattern {
    Any,
    Range(u16, u16),
    Default,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedHost {
    scheme: Option<String>,
    host: HostPattern,
    port: PortPattern,
}

/// A component's parsed allow-list.
#[derive(Debug, Clone, Default)]
pub struct AllowList {
    entries: Vec<AllowedHost>,
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" => Some(443),
        "redis" => Some(6379),
        "mysql" => Some(3306),
        "postgres" => Some(5432),
        "mqtt" => Some(1883),
        _ => None,
    }
}

impl AllowedHost {
    pub fn parse(entry: &str) -> Result<Self> {
        let Some((scheme, rest)) = entry.split_once("://") else {
            bail!("`{entry}`: expected scheme://host[:port]");
        };
        if scheme.is_empty() || rest.is_empty() {
            bail!("`{entry}`: expected scheme://host[:port]");
        }
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains('/') {
            bail!("`{entry}`: paths are not allowed in allowed_outbound_hosts");
        }
        let (host, port) = if let Some(after) = rest.strip_prefix('[') {
            // IPv6 literal.
            let (h, tail) = after
                .split_once(']')
                .ok_or_else(|| anyhow::anyhow!("`{entry}`: unterminated IPv6 address"))?;
            (format!("[{h}]"), tail.strip_prefix(':'))
        } else {
            match rest.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (rest.to_string(), None),
            }
        };
        let host = if host == "*" {
            HostPattern::Any
        } else if let Some(suffix) = host.strip_prefix("*.") {
            HostPattern::Subdomain(suffix.to_ascii_lowercase())
        } else if host.contains('*') {
            bail!("`{entry}`: `*` is only allowed as the whole host or as a leading `*.`");
        } else {
            HostPattern::Exact(host.to_ascii_lowercase())
        };
        let port = match port {
            None => {
                if scheme != "*" && default_port(scheme).is_none() {
                    bail!("`{entry}`: scheme `{scheme}` has no default port; give one");
                }
                PortPattern::Default
            }
            Some("*") => PortPattern::Any,
            Some(p) => {
                if let Some((a, b)) = p.split_once("..") {
                    let (a, b): (u16, u16) = (
                        a.parse()
                            .map_err(|_| anyhow::anyhow!("`{entry}`: bad port range"))?,
                        b.parse()
                            .map_err(|_| anyhow::anyhow!("`{entry}`: bad port range"))?,
                    );
                    if a > b {
                        bail!("`{entry}`: empty port range");
                    }
                    PortPattern::Range(a, b)
                } else {
                    let n: u16 = p
                        .parse()
                        .map_err(|_| anyhow::anyhow!("`{entry}`: bad port `{p}`"))?;
                    PortPattern::Range(n, n)
                }
            }
        };
        Ok(AllowedHost {
            scheme: if scheme == "*" {
                None
            } else {
                Some(scheme.to_ascii_lowercase())
            },
            host,
            port,
        })
    }

    fn allows(&self, scheme: &str, host: &str, port: Option<u16>) -> bool {
        if let Some(s) = &self.scheme {
            if s != scheme {
                return false;
            }
        }
        let host = host.to_ascii_lowercase();
        // Service chaining reaches private components, so it takes an entry that names
        // `spin.internal`: as in Spin (SIP 017), `*` hosts (`https://*:*`, `*://*:*`) and
        // wider subdomain wildcards do not grant it.
        if is_internal(&host) {
            let names_internal = match &self.host {
                HostPattern::Any => false,
                HostPattern::Exact(_) => true,
                HostPattern::Subdomain(suffix) => suffix == SERVICE_CHAINING_DOMAIN,
            };
            if !names_internal {
                return false;
            }
        }
        let host_ok = match &self.host {
            HostPattern::Any => true,
            HostPattern::Exact(h) => *h == host,
            HostPattern::Subdomain(suffix) => host
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.ends_with('.') && head.len() > 1),
        };
        if !host_ok {
            return false;
        }
        let port = port.or_else(|| default_port(scheme));
        match (&self.port, port) {
            (PortPattern::Any, _) => true,
            (PortPattern::Range(a, b), Some(p)) => *a <= p && p <= *b,
            (PortPattern::Default, Some(p)) => Some(p) == default_port(scheme),
            _ => false,
        }
    }
}

impl AllowList {
    /// Parses rendered entries (templates already substituted), naming the bad entry.
    pub fn parse(entries: &[String]) -> Result<Self> {
        let mut out = Vec::new();
        for e in entries {
            // `self` means relative requests to this app; this host answers those as chaining.
            let parsed = AllowedHost::parse(e)?;
            out.push(parsed);
        }
        Ok(AllowList { entries: out })
    }

    /// Whether a request to `scheme://host[:port]` is allowed.
    pub fn allows(&self, scheme: &str, host: &str, port: Option<u16>) -> bool {
        self.entries.iter().any(|e| e.allows(scheme, host, port))
    }
}

const SERVICE_CHAINING_DOMAIN: &str = "spin.internal";

/// Whether `host` (lower case) is under the service-chaining domain.
fn is_internal(host: &str) -> bool {
    host == SERVICE_CHAINING_DOMAIN
        || host
            .strip_suffix(SERVICE_CHAINING_DOMAIN)
            .is_some_and(|head| head.ends_with('.'))
}

/// The component a `*.spin.internal` host names, if it is one.
pub fn chained_component(host: &str) -> Option<&str> {
    host.strip_suffix(".spin.internal")
        .filter(|c| !c.is_empty() && !c.contains('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(entries: &[&str]) -> AllowList {
        AllowList::parse(&entries.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn exact_host_without_port_allows_only_the_default_port() {
        let l = list(&["https://api.openai.com"]);
        assert!(l.allows("https", "api.openai.com", None));
        assert!(l.allows("https", "API.OpenAI.com", Some(443)));
        assert!(!l.allows("https", "api.openai.com", Some(8443)));
        assert!(!l.allows("http", "api.openai.com", None));
        assert!(!l.allows("https", "evil.com", None));
    }

    #[test]
    fn wildcard_port_and_port_ranges() {
        let l = list(&["http://127.0.0.1:*", "http://localhost:3000..3010"]);
        assert!(l.allows("http", "127.0.0.1", Some(54321)));
        assert!(l.allows("http", "localhost", Some(3005)));
        assert!(!l.allows("http", "localhost", Some(3011)));
    }

    #[test]
    fn subdomain_wildcard_does_not_match_the_apex() {
        let l = list(&["https://*.example.com"]);
        assert!(l.allows("https", "a.example.com", None));
        assert!(l.allows("https", "a.b.example.com", None));
        assert!(!l.allows("https", "example.com", None));
        assert!(!l.allows("https", "badexample.com", None));
    }

    #[test]
    fn any_scheme_any_host() {
        let l = list(&["*://*:*"]);
        assert!(l.allows("http", "x", Some(1)));
        assert!(l.allows("https", "y", None));
    }

    #[test]
    fn empty_list_denies_everything() {
        assert!(!AllowList::default().allows("http", "example.com", None));
    }

    #[test]
    fn service_chaining_needs_the_internal_host_listed() {
        let l = list(&["http://agent.spin.internal"]);
        assert!(l.allows("http", "agent.spin.internal", None));
        assert!(!l.allows("http", "chats.spin.internal", None));
        assert_eq!(chained_component("agent.spin.internal"), Some("agent"));
        assert_eq!(chained_component("a.b.spin.internal"), None);
        assert_eq!(chained_component("example.com"), None);
    }

    #[test]
    fn wildcard_hosts_do_not_grant_service_chaining() {
        for entries in [
            &["https://*:*"][..],
            &["*://*:*"],
            &["http://*:*"],
            &["http://*"],
            &["http://*.internal"],
        ] {
            let l = list(entries);
            for scheme in ["http", "https"] {
                assert!(
                    !l.allows(scheme, "agent.spin.internal", None),
                    "{entries:?} let {scheme}://agent.spin.internal through"
                );
            }
            assert!(!l.allows("http", "AGENT.spin.internal", Some(80)));
        }
        assert!(list(&["*://*:*"]).allows("https", "example.com", None));
        let l = list(&["http://*.spin.internal"]);
        assert!(l.allows("http", "agent.spin.internal", None));
        assert!(l.allows("http", "chats.spin.internal", None));
        assert!(!l.allows("http", "example.com", None));
        assert!(list(&["*://agent.spin.internal:*"]).allows("https", "agent.spin.internal", None));
    }

    #[test]
    fn malformed_entries_are_rejected_with_the_entry_named() {
        for bad in [
            "example.com",
            "https://exa*mple.com",
            "https://x.com/path",
            "http://x:99999",
            "http://x:9..1",
        ] {
            let err = AllowList::parse(&[bad.to_string()])
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(bad.split("://").next().unwrap()),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn ipv6_literals_parse() {
        let l = list(&["http://[::1]:8080"]);
        assert!(l.allows("http", "[::1]", Some(8080)));
    }
}
