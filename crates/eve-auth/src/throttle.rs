//! Sign-in throttling as arithmetic: which address a request comes from (the direct peer, or
//! behind configured reverse proxies the right-most `X-Forwarded-For` hop they did not add),
//! and how long an address that keeps failing must wait before its next attempt.
//!
//! Failures only are counted (a correct password never counts against anyone), and a failing
//! address is slowed down by a delay that doubles with each failure instead of being locked
//! out, so someone else's guessing can cost a user at most a wait, never their sign-in.

use std::net::IpAddr;

use ipnet::{IpNet, Ipv6Net};

use crate::origin::parse_ip;

/// Failures an address may make before it has to wait at all.
pub const FREE_FAILURES: u64 = 10;
/// The first wait once the free failures are used up; each further failure doubles it.
pub const FIRST_DELAY_SECS: u64 = 30;
/// The longest wait between two attempts of one address (15 minutes).
pub const MAX_DELAY_SECS: u64 = 15 * 60;
/// An address's failures are forgotten this long after its last attempt (one day).
pub const FAILURE_MEMORY_SECS: u64 = 24 * 3600;
/// Failures against the shared account (all addresses) per window before addresses that have
/// themselves failed are refused until the window ends. An address with no failure of its own
/// is never refused by this, so a distributed guesser cannot lock the real users out.
pub const ACCOUNT_FAILURES_PER_WINDOW: u64 = 100;
/// The window of the account-wide failure count.
pub const ACCOUNT_WINDOW_SECS: u64 = 15 * 60;

/// Reverse proxies whose `X-Forwarded-For` is believed (Spin variable `trusted_proxies`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Parses a comma-separated list of IPs and CIDR ranges; `None` if any entry is neither.
    pub fn parse(list: &str) -> Option<Self> {
        list.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|item| {
                item.parse::<IpNet>()
                    .ok()
                    .or_else(|| parse_ip(item).map(IpNet::from))
            })
            .collect::<Option<Vec<_>>>()
            .map(TrustedProxies)
    }

    pub fn contains(&self, ip: &IpAddr) -> bool {
        let ip = canonical(*ip);
        self.0.iter().any(|net| net.contains(&ip))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// IPv4 addresses mapped into IPv6 (`::ffff:1.2.3.4`) as the IPv4 address they are.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The address a request comes from. The direct peer, unless it is a trusted proxy: then the
/// `X-Forwarded-For` hops (all such headers, in order) are walked from the right, past the
/// trusted proxies, and the first address not among them is the client. A client can prepend
/// anything to the header, but not what the proxies nearest to us appended. An unreadable hop
/// stops the walk at the last readable one.
pub fn client_address(
    peer: Option<IpAddr>,
    forwarded_for: &[&str],
    trusted: &TrustedProxies,
) -> Option<IpAddr> {
    let mut client = canonical(peer?);
    if !trusted.contains(&client) {
        return Some(client);
    }
    for hop in forwarded_for.iter().rev().flat_map(|h| h.rsplit(',')) {
        let Some(ip) = parse_ip(hop) else { break };
        client = canonical(ip);
        if !trusted.contains(&client) {
            break;
        }
    }
    Some(client)
}

/// The throttle subject of an address: an IPv4 address itself, an IPv6 address's /64 (one
/// host usually holds a whole /64, so single addresses would be free to rotate).
pub fn throttle_subject(ip: IpAddr) -> String {
    match canonical(ip) {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => Ipv6Net::new(v6, 64)
            .map(|n| n.trunc().to_string())
            .unwrap_or_else(|_| v6.to_string()),
    }
}

/// Seconds an address with `failures` failures must wait after its last attempt: nothing for
/// the first [`FREE_FAILURES`], then 30 s, 60 s, 120 s, … up to [`MAX_DELAY_SECS`].
pub fn backoff_secs(failures: u64) -> u64 {
    if failures < FREE_FAILURES {
        return 0;
    }
    let doublings = (failures - FREE_FAILURES).min(32) as u32;
    FIRST_DELAY_SECS
        .saturating_mul(1u64 << doublings)
        .min(MAX_DELAY_SECS)
}

/// The `Retry-After` for an attempt at `now` by an address with `failures` failures whose last
/// attempt was at `last`; `None` when it may try now.
pub fn wait_secs(failures: u64, last: u64, now: u64) -> Option<u64> {
    let until = last.saturating_add(backoff_secs(failures));
    (now < until).then(|| until - now)
}

/// Whether an address's failure record (last attempt at `last`) is old enough to forget.
pub fn forgotten(last: u64, now: u64) -> bool {
    now.saturating_sub(last) >= FAILURE_MEMORY_SECS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn trusted_proxies_parse_ips_and_ranges_and_reject_garbage() {
        let t = TrustedProxies::parse("10.0.0.0/8, 192.0.2.7 ,::1,").unwrap();
        assert!(t.contains(&ip("10.1.2.3")));
        assert!(t.contains(&ip("192.0.2.7")));
        assert!(t.contains(&ip("::1")));
        assert!(t.contains(&ip("::ffff:10.9.9.9")));
        assert!(!t.contains(&ip("192.0.2.8")));
        assert!(TrustedProxies::parse("10.0.0.0/8, proxy.lan").is_none());
        assert!(TrustedProxies::parse("").unwrap().is_empty());
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_forwards() {
        let t = TrustedProxies::parse("10.0.0.1").unwrap();
        assert_eq!(
            client_address(Some(ip("203.0.113.9")), &["198.51.100.1"], &t),
            Some(ip("203.0.113.9"))
        );
        assert_eq!(
            client_address(
                Some(ip("203.0.113.9")),
                &["198.51.100.1"],
                &TrustedProxies::default()
            ),
            Some(ip("203.0.113.9"))
        );
    }

    #[test]
    fn behind_trusted_proxies_the_right_most_untrusted_hop_is_the_client() {
        let t = TrustedProxies::parse("10.0.0.0/8").unwrap();
        // The client prepended a forged hop; the proxies appended the real one and themselves.
        let headers = ["1.1.1.1, 198.51.100.7", "10.0.0.2"];
        assert_eq!(
            client_address(Some(ip("10.0.0.1")), &headers, &t),
            Some(ip("198.51.100.7"))
        );
        // Only proxies in the header: the farthest one.
        assert_eq!(
            client_address(Some(ip("10.0.0.1")), &["10.0.0.3"], &t),
            Some(ip("10.0.0.3"))
        );
        // No header: the proxy itself.
        assert_eq!(
            client_address(Some(ip("10.0.0.1")), &[], &t),
            Some(ip("10.0.0.1"))
        );
        // Garbage stops the walk at the last readable hop.
        assert_eq!(
            client_address(Some(ip("10.0.0.1")), &["198.51.100.7, nonsense"], &t),
            Some(ip("10.0.0.1"))
        );
        assert_eq!(client_address(None, &["198.51.100.7"], &t), None);
    }

    #[test]
    fn ipv6_addresses_are_throttled_by_their_64() {
        assert_eq!(
            throttle_subject(ip("2001:db8:1:2:3:4:5:6")),
            "2001:db8:1:2::/64"
        );
        assert_eq!(
            throttle_subject(ip("2001:db8:1:2:ffff::1")),
            throttle_subject(ip("2001:db8:1:2::9"))
        );
        assert_eq!(throttle_subject(ip("::ffff:192.0.2.1")), "192.0.2.1");
        assert_eq!(throttle_subject(ip("192.0.2.1")), "192.0.2.1");
    }

    #[test]
    fn the_delay_is_free_at_first_then_doubles_up_to_the_cap() {
        for f in 0..FREE_FAILURES {
            assert_eq!(backoff_secs(f), 0);
        }
        assert_eq!(backoff_secs(FREE_FAILURES), 30);
        assert_eq!(backoff_secs(FREE_FAILURES + 1), 60);
        assert_eq!(backoff_secs(FREE_FAILURES + 4), 480);
        assert_eq!(backoff_secs(FREE_FAILURES + 5), MAX_DELAY_SECS);
        assert_eq!(backoff_secs(FREE_FAILURES + 20), MAX_DELAY_SECS);
        assert_eq!(backoff_secs(u64::MAX), MAX_DELAY_SECS);
    }

    #[test]
    fn wait_counts_from_the_last_attempt_and_records_are_forgotten() {
        assert_eq!(wait_secs(2, 1000, 1000), None);
        assert_eq!(wait_secs(FREE_FAILURES + 2, 1000, 1000), Some(120));
        assert_eq!(wait_secs(FREE_FAILURES + 2, 1000, 1100), Some(20));
        assert_eq!(wait_secs(FREE_FAILURES + 2, 1000, 1120), None);
        assert!(!forgotten(1000, 1000 + FAILURE_MEMORY_SECS - 1));
        assert!(forgotten(1000, 1000 + FAILURE_MEMORY_SECS));
    }
}
