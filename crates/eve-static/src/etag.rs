//! Strong ETags over the bytes actually sent, and `If-None-Match` matching.
//!
//! Each encoded variant has its own bytes and therefore its own ETag, as RFC 9110 requires for
//! different representations.

/// A strong ETag (quoted) of the given bytes: 64-bit FNV-1a of the content plus its length.
/// Not a security boundary, only a cache validator.
pub fn etag_of(bytes: &[u8]) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let hash = bytes
        .iter()
        .fold(OFFSET, |h, b| (h ^ u64::from(*b)).wrapping_mul(PRIME));
    format!("\"{hash:016x}-{:x}\"", bytes.len())
}

/// Whether an `If-None-Match` header matches `etag` (RFC 9110 §13.1.2: weak comparison, so a
/// `W/` prefix is ignored; `*` matches any current representation).
pub fn if_none_match_matches(header: Option<&str>, etag: &str) -> bool {
    let Some(header) = header else {
        return false;
    };
    let opaque = etag.trim_start_matches("W/");
    header
        .split(',')
        .map(str::trim)
        .any(|candidate| candidate == "*" || candidate.trim_start_matches("W/") == opaque)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_are_quoted_and_depend_on_the_content() {
        let a = etag_of(b"hello");
        assert!(a.starts_with('"') && a.ends_with('"'));
        assert_eq!(a, etag_of(b"hello"));
        assert_ne!(a, etag_of(b"hellp"));
        assert_ne!(etag_of(b""), etag_of(b"\0"));
    }

    #[test]
    fn if_none_match_matches_exact_listed_weak_and_star() {
        let e = etag_of(b"x");
        assert!(if_none_match_matches(Some(&e), &e));
        assert!(if_none_match_matches(Some(&format!("\"other\", {e}")), &e));
        assert!(if_none_match_matches(Some(&format!("W/{e}")), &e));
        assert!(if_none_match_matches(Some("*"), &e));
    }

    #[test]
    fn if_none_match_does_not_match_other_tags_or_absence() {
        let e = etag_of(b"x");
        assert!(!if_none_match_matches(None, &e));
        assert!(!if_none_match_matches(Some("\"nope\""), &e));
        assert!(!if_none_match_matches(Some(""), &e));
    }
}
