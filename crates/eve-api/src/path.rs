//! Route tables' one reading of a request path: the segments under an API's prefix.

/// The segments of `path` under `prefix`: empty for the prefix itself, `None` when `path` is not
/// under it or has an empty segment (`//`, a trailing `/`): every table answers those 404.
pub fn segments<'a>(path: &'a str, prefix: &str) -> Option<Vec<&'a str>> {
    let rest = path.strip_prefix(prefix)?;
    if rest.is_empty() {
        return Some(Vec::new());
    }
    let segments: Vec<&str> = rest.strip_prefix('/')?.split('/').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return None;
    }
    Some(segments)
}

#[cfg(test)]
mod tests {
    use super::segments;

    #[test]
    fn segments_are_read_under_the_prefix_only() {
        assert_eq!(segments("/api/x", "/api/x"), Some(vec![]));
        assert_eq!(segments("/api/x/a/b", "/api/x"), Some(vec!["a", "b"]));
        for bad in ["/api/xy", "/api/x/", "/api/x//a", "/api/x/a/", "/other"] {
            assert_eq!(segments(bad, "/api/x"), None, "{bad}");
        }
    }
}
