//! Timestamps: stored as integer milliseconds since the Unix epoch (UTC), shown on the wire as
//! ISO-8601 with exactly three fractional digits and a `Z` (`2024-05-01T12:34:56.789Z`, the
//! shape of JavaScript's `Date.prototype.toISOString`). Parsing accepts only that exact shape,
//! so a timestamp that round-trips through a cursor compares equal to the stored one.

/// Milliseconds since 1970-01-01T00:00:00.000Z.
pub type Millis = i64;

/// The largest instant shown with a four-digit year: 9999-12-31T23:59:59.999Z.
pub const MAX_MILLIS: Millis = 253_402_300_799_999;

/// Formats `ms` (0 ..= [`MAX_MILLIS`], clamped) as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn format_iso_ms(ms: Millis) -> String {
    let ms = ms.clamp(0, MAX_MILLIS);
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, min, s, milli) = (
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000,
    );
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{milli:03}Z")
}

/// Parses exactly `YYYY-MM-DDTHH:MM:SS.mmmZ` (24 ASCII characters, a real calendar date).
pub fn parse_iso_ms(text: &str) -> Option<Millis> {
    let b = text.as_bytes();
    if b.len() != 24
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || b[19] != b'.'
        || b[23] != b'Z'
    {
        return None;
    }
    let num = |from: usize, to: usize| -> Option<i64> {
        let digits = &b[from..to];
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        Some(
            digits
                .iter()
                .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')),
        )
    };
    let (y, m, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, min, s, milli) = (num(11, 13)?, num(14, 16)?, num(17, 19)?, num(20, 23)?);
    if y < 1970 || !(1..=12).contains(&m) || d < 1 || d > days_in_month(y, m) {
        return None;
    }
    if h > 23 || min > 59 || s > 59 {
        return None;
    }
    let days = days_from_civil(y, m, d);
    Some(days * 86_400_000 + h * 3_600_000 + min * 60_000 + s * 1000 + milli)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(y) => 29,
        _ => 28,
    }
}

// Howard Hinnant's `days_from_civil` / `civil_from_days` (proleptic Gregorian calendar).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_javascript_to_iso_string() {
        assert_eq!(format_iso_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_iso_ms(1_714_566_896_789), "2024-05-01T12:34:56.789Z");
        assert_eq!(format_iso_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(format_iso_ms(MAX_MILLIS), "9999-12-31T23:59:59.999Z");
    }

    #[test]
    fn parse_is_the_exact_inverse_of_format() {
        for ms in [
            0,
            1,
            999,
            86_399_999,
            951_782_400_000,
            1_714_566_896_789,
            MAX_MILLIS,
        ] {
            assert_eq!(parse_iso_ms(&format_iso_ms(ms)), Some(ms), "{ms}");
        }
        let mut ms = 0;
        while ms < MAX_MILLIS {
            assert_eq!(parse_iso_ms(&format_iso_ms(ms)), Some(ms));
            ms += 7_777_777_777;
        }
    }

    #[test]
    fn parse_rejects_every_other_shape() {
        for bad in [
            "",
            "2024-05-01",
            "2024-05-01T12:34:56Z",
            "2024-05-01T12:34:56.78Z",
            "2024-05-01T12:34:56.789",
            "2024-05-01T12:34:56.789+00:00",
            "2024-05-01 12:34:56.789Z",
            "2024-13-01T12:34:56.789Z",
            "2023-02-29T12:34:56.789Z",
            "2024-04-31T12:34:56.789Z",
            "2024-05-01T24:00:00.000Z",
            "2024-05-01T12:60:00.000Z",
            "1969-12-31T23:59:59.999Z",
            "2024-05-01T12:34:56.-89Z",
            "+024-05-01T12:34:56.789Z",
            "２024-05-01T12:34:56.789Z",
        ] {
            assert_eq!(parse_iso_ms(bad), None, "{bad:?}");
        }
    }
}
