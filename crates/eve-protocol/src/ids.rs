//! The ids eve's protocol carries: event ids (`evt_` + ULID), session ids (`wrun_` + ULID, the
//! shape eve's sessions have), delivery ids (UUID v4), attachment ids, the short tokens routes carry, and `meta.at`
//! times.

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// A ULID: 48 bits of milliseconds, then 80 random bits, in Crockford base32 (26 characters).
pub fn ulid(now_ms: i64, random: [u8; 10]) -> String {
    let mut value: u128 = (now_ms.max(0) as u128 & ((1u128 << 48) - 1)) << 80;
    for (i, b) in random.iter().enumerate() {
        value |= (*b as u128) << (8 * (9 - i));
    }
    (0..26)
        .rev()
        .map(|i| CROCKFORD[((value >> (5 * i)) & 31) as usize] as char)
        .collect()
}

/// Whether `s` is a ULID (26 Crockford characters; the first at most `7`).
pub fn is_ulid(s: &str) -> bool {
    s.len() == 26 && s.as_bytes()[0] <= b'7' && s.bytes().all(|c| CROCKFORD.contains(&c))
}

/// An event id: `evt_<ULID>`.
pub fn event_id(now_ms: i64, random: [u8; 10]) -> String {
    format!("evt_{}", ulid(now_ms, random))
}

/// A session id: `wrun_<ULID>`.
pub fn session_id(now_ms: i64, random: [u8; 10]) -> String {
    format!("wrun_{}", ulid(now_ms, random))
}

/// Whether `s` has the shape of a session id.
pub fn is_session_id(s: &str) -> bool {
    s.strip_prefix("wrun_").is_some_and(is_ulid)
}

/// A delivery id: a UUID v4.
pub fn delivery_id(mut random: [u8; 16]) -> String {
    random[6] = (random[6] & 0x0f) | 0x40;
    random[8] = (random[8] & 0x3f) | 0x80;
    let h: String = random.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// A new attachment id from 16 random bytes.
pub fn attachment_id(random: [u8; 16]) -> String {
    let hex: String = random.iter().map(|b| format!("{b:02x}")).collect();
    format!("att_{hex}")
}

/// A new project file id from 16 random bytes (the projects component mints the same shape).
pub fn file_id(random: [u8; 16]) -> String {
    let hex: String = random.iter().map(|b| format!("{b:02x}")).collect();
    format!("file_{hex}")
}

/// Whether `id` can name an attachment ([`attachment_id`]'s shape).
pub fn is_attachment_id(id: &str) -> bool {
    id.strip_prefix("att_")
        .is_some_and(|h| h.len() == 32 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Whether `s` is a short token (a connection name, an authorization or request id): ASCII
/// letters, digits, `_` and `-`, at most `max` bytes.
pub fn is_token(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Milliseconds since the epoch as ISO-8601 UTC with milliseconds (`meta.at`).
pub fn iso8601(ms: i64) -> String {
    eve_store::time::format_iso_ms(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ulids_sort_by_time_and_have_26_crockford_characters() {
        let a = ulid(1_700_000_000_000, [0xff; 10]);
        let b = ulid(1_700_000_000_001, [0; 10]);
        assert_eq!(a.len(), 26);
        assert!(a < b);
        assert!(is_ulid(&a) && is_ulid(&b));
        assert!(!is_ulid("not-a-ulid"));
    }

    #[test]
    fn session_ids_have_eves_shape() {
        let s = session_id(1_700_000_000_000, [7; 10]);
        assert!(s.starts_with("wrun_") && is_session_id(&s));
        assert!(!is_session_id("not-a-session"));
        assert!(!is_session_id("wrun_01M8R3RVBZ76Z0CSYSXBR0000"));
    }

    #[test]
    fn delivery_ids_are_uuid_v4() {
        let d = delivery_id([0xab; 16]);
        assert_eq!(d.len(), 36);
        assert_eq!(&d[14..15], "4");
        assert!(matches!(&d[19..20], "8" | "9" | "a" | "b"));
    }

    #[test]
    fn iso8601_has_milliseconds_and_utc() {
        assert_eq!(iso8601(1_796_105_696_230), "2026-12-01T06:14:56.230Z");
    }
}
