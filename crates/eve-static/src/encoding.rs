//! Content-encoding negotiation. The web build writes `<file>.br` and `<file>.gz` next to every
//! compressible asset; the server picks the best one the client accepts and falls back to the
//! identity file when a variant is missing.

/// A representation of a file on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Brotli,
    Gzip,
    Identity,
}

impl Encoding {
    /// The `Content-Encoding` value, `None` for identity.
    pub fn header_value(self) -> Option<&'static str> {
        match self {
            Encoding::Brotli => Some("br"),
            Encoding::Gzip => Some("gzip"),
            Encoding::Identity => None,
        }
    }

    /// The suffix of the precompressed file next to the original.
    pub fn file_suffix(self) -> &'static str {
        match self {
            Encoding::Brotli => ".br",
            Encoding::Gzip => ".gz",
            Encoding::Identity => "",
        }
    }
}

/// The encodings the client accepts, best first (brotli, then gzip), always ending with
/// identity unless the client explicitly refused it (`identity;q=0` or `*;q=0` without an
/// identity entry) — in which case identity is still returned last, since sending something is
/// better than a 406 for static assets.
///
/// Follows RFC 9110 §12.5.3: a coding with `q=0` is not acceptable; `*` covers codings not
/// named; names are case-insensitive; a missing header means "identity only".
pub fn acceptable_encodings(accept_encoding: Option<&str>) -> Vec<Encoding> {
    let mut out = Vec::with_capacity(3);
    if let Some(header) = accept_encoding {
        let entries: Vec<(String, f32)> = header.split(',').filter_map(parse_entry).collect();
        let q_of = |name: &str| -> Option<f32> {
            entries
                .iter()
                .find(|(n, _)| n == name)
                .or_else(|| entries.iter().find(|(n, _)| n == "*"))
                .map(|(_, q)| *q)
        };
        let mut candidates: Vec<(Encoding, f32)> = Vec::new();
        if let Some(q) = q_of("br").filter(|q| *q > 0.0) {
            candidates.push((Encoding::Brotli, q));
        }
        let gzip_q =
            q_of("gzip").or_else(|| entries.iter().find(|(n, _)| n == "x-gzip").map(|(_, q)| *q));
        if let Some(q) = gzip_q.filter(|q| *q > 0.0) {
            candidates.push((Encoding::Gzip, q));
        }
        // Stable sort keeps brotli before gzip when the client weighs them equally.
        candidates.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal));
        out.extend(candidates.into_iter().map(|(e, _)| e));
    }
    out.push(Encoding::Identity);
    out
}

fn parse_entry(entry: &str) -> Option<(String, f32)> {
    let mut parts = entry.split(';');
    let name = parts.next()?.trim().to_ascii_lowercase();
    if name.is_empty() {
        return None;
    }
    let mut q = 1.0;
    for param in parts {
        let (key, value) = param.split_once('=')?;
        if key.trim().eq_ignore_ascii_case("q") {
            q = value
                .trim()
                .parse::<f32>()
                .ok()
                .filter(|q| (0.0..=1.0).contains(q))?;
        }
    }
    Some((name, q))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Encoding::*;

    #[test]
    fn no_accept_encoding_header_means_identity_only() {
        assert_eq!(acceptable_encodings(None), vec![Identity]);
        assert_eq!(acceptable_encodings(Some("")), vec![Identity]);
    }

    #[test]
    fn a_browser_header_prefers_brotli_then_gzip() {
        assert_eq!(
            acceptable_encodings(Some("gzip, deflate, br, zstd")),
            vec![Brotli, Gzip, Identity]
        );
    }

    #[test]
    fn gzip_only_clients_get_gzip() {
        assert_eq!(acceptable_encodings(Some("gzip")), vec![Gzip, Identity]);
        assert_eq!(acceptable_encodings(Some("x-gzip")), vec![Gzip, Identity]);
    }

    #[test]
    fn q_zero_refuses_a_coding() {
        assert_eq!(
            acceptable_encodings(Some("br;q=0, gzip")),
            vec![Gzip, Identity]
        );
        assert_eq!(acceptable_encodings(Some("*;q=0")), vec![Identity]);
    }

    #[test]
    fn q_values_order_the_codings() {
        assert_eq!(
            acceptable_encodings(Some("br;q=0.5, gzip;q=0.9")),
            vec![Gzip, Brotli, Identity]
        );
        assert_eq!(
            acceptable_encodings(Some("GZIP;Q=1, BR;q=1")),
            vec![Brotli, Gzip, Identity]
        );
    }

    #[test]
    fn wildcard_covers_codings_not_named() {
        assert_eq!(
            acceptable_encodings(Some("*")),
            vec![Brotli, Gzip, Identity]
        );
        assert_eq!(
            acceptable_encodings(Some("gzip;q=0, *")),
            vec![Brotli, Identity]
        );
    }

    #[test]
    fn malformed_entries_are_ignored() {
        assert_eq!(
            acceptable_encodings(Some("br;q=abc, gzip;q=2, ,;")),
            vec![Identity]
        );
    }
}
