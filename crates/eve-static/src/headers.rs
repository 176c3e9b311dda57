//! Content types, cache policy and the security headers of every shell response.

/// `Cache-Control` of fingerprinted assets: the name changes when the content does.
pub const CACHE_IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// `Cache-Control` of HTML: always revalidated (cheap with the ETag), so a deploy is seen at once.
pub const CACHE_HTML: &str = "no-cache";
/// `Cache-Control` of other files (favicon, robots.txt): revalidate on every use.
pub const CACHE_REVALIDATE: &str = "public, max-age=0, must-revalidate";
/// `Cache-Control` of error responses.
pub const CACHE_NONE: &str = "no-store";

/// The directory of the web build whose file names carry a content hash.
pub const FINGERPRINTED_DIR: &str = "assets/";
/// Shortest content hash in a fingerprinted file name (`name-HASH.ext`).
pub const MIN_FINGERPRINT_LEN: usize = 8;

/// The Content-Security-Policy of the app. No inline script or style anywhere (`'self'`
/// only), no plugins, no framing, no `<base>` hijack; images may be data:/blob: URLs (rendered
/// Markdown) but are never fetched from other origins, so model output cannot beacon out.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
style-src 'self'; img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; \
object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; \
manifest-src 'self'; worker-src 'self'";

/// Headers every response of the shell carries.
pub const SECURITY_HEADERS: &[(&str, &str)] = &[
    ("content-security-policy", CONTENT_SECURITY_POLICY),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "same-origin"),
    ("x-frame-options", "DENY"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
    (
        "permissions-policy",
        "camera=(), microphone=(), geolocation=(), payment=()",
    ),
];

/// The `Content-Type` of a file by its extension; unknown ones are `application/octet-stream`
/// (with `nosniff`, the browser will not guess).
pub fn content_type(path: &str) -> &'static str {
    let ext = extension(path).to_ascii_lowercase();
    match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "webmanifest" => "application/manifest+json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "avif" => "image/avif",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "txt" => "text/plain; charset=utf-8",
        "xml" => "application/xml",
        "wasm" => "application/wasm",
        "gz" => "application/gzip",
        "br" => "application/x-brotli",
        _ => "application/octet-stream",
    }
}

/// Whether a content type is worth serving precompressed (text-like formats; images and fonts
/// are already compressed).
pub fn is_compressible(content_type: &str) -> bool {
    let media = content_type.split(';').next().unwrap_or("").trim();
    media.starts_with("text/")
        || matches!(
            media,
            "application/json"
                | "application/manifest+json"
                | "image/svg+xml"
                | "application/xml"
                | "application/wasm"
        )
}

/// Whether a file name carries a content hash: it lives in [`FINGERPRINTED_DIR`] and its stem
/// ends in `-HASH` with at least [`MIN_FINGERPRINT_LEN`] letters or digits.
pub fn is_fingerprinted(path: &str) -> bool {
    let Some(name) = path.strip_prefix(FINGERPRINTED_DIR) else {
        return false;
    };
    if name.contains('/') {
        return false;
    }
    let stem = name.split('.').next().unwrap_or("");
    match stem.rsplit_once('-') {
        Some((base, hash)) => {
            !base.is_empty()
                && hash.len() >= MIN_FINGERPRINT_LEN
                && hash.bytes().all(|b| b.is_ascii_alphanumeric())
        }
        None => false,
    }
}

/// The `Cache-Control` of a successfully served file.
pub fn cache_control(path: &str) -> &'static str {
    if content_type(path).starts_with("text/html") {
        CACHE_HTML
    } else if is_fingerprinted(path) {
        CACHE_IMMUTABLE
    } else {
        CACHE_REVALIDATE
    }
}

fn extension(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => ext,
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_follow_the_extension() {
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(
            content_type("assets/app-ABCDEFGH.js"),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(
            content_type("assets/app-ABCDEFGH.CSS"),
            "text/css; charset=utf-8"
        );
        assert_eq!(content_type("favicon.svg"), "image/svg+xml");
        assert_eq!(content_type("assets/app.js.map"), "application/json");
        assert_eq!(content_type("fonts/x.woff2"), "font/woff2");
    }

    #[test]
    fn unknown_and_missing_extensions_are_octet_streams() {
        assert_eq!(content_type("LICENSE"), "application/octet-stream");
        assert_eq!(content_type("x.exe"), "application/octet-stream");
        assert_eq!(content_type(".bashrc"), "application/octet-stream");
    }

    #[test]
    fn text_formats_are_compressible_and_images_are_not() {
        assert!(is_compressible("text/javascript; charset=utf-8"));
        assert!(is_compressible("image/svg+xml"));
        assert!(is_compressible("application/json"));
        assert!(!is_compressible("image/png"));
        assert!(!is_compressible("font/woff2"));
    }

    #[test]
    fn hashed_names_in_assets_are_fingerprinted() {
        assert!(is_fingerprinted("assets/app-5XK2QZ7M.js"));
        assert!(is_fingerprinted("assets/chunk-ABCDEFGH12.css"));
        assert!(is_fingerprinted("assets/sidebar-early-ABCDEFGH.js"));
    }

    #[test]
    fn unhashed_or_misplaced_names_are_not_fingerprinted() {
        assert!(!is_fingerprinted("assets/app.js"));
        assert!(!is_fingerprinted("assets/app-short.js"));
        assert!(!is_fingerprinted("app-5XK2QZ7M.js"));
        assert!(!is_fingerprinted("assets/sub/app-5XK2QZ7M.js"));
        assert!(!is_fingerprinted("assets/-5XK2QZ7M.js"));
    }

    #[test]
    fn html_is_never_cached_without_revalidation() {
        assert_eq!(cache_control("index.html"), CACHE_HTML);
        assert_eq!(cache_control("assets/page-ABCDEFGH.html"), CACHE_HTML);
    }

    #[test]
    fn fingerprinted_assets_are_immutable_and_others_revalidate() {
        assert_eq!(cache_control("assets/app-5XK2QZ7M.js"), CACHE_IMMUTABLE);
        assert_eq!(cache_control("favicon.svg"), CACHE_REVALIDATE);
    }

    #[test]
    fn the_csp_allows_no_inline_script_and_no_framing() {
        let csp = CONTENT_SECURITY_POLICY;
        assert!(csp.contains("script-src 'self';"));
        assert!(!csp.contains("unsafe-inline"));
        assert!(!csp.contains("unsafe-eval"));
        assert!(csp.contains("frame-ancestors 'none'"));
        assert!(csp.contains("object-src 'none'"));
    }

    #[test]
    fn every_security_header_is_present() {
        let names: Vec<&str> = SECURITY_HEADERS.iter().map(|(n, _)| *n).collect();
        for required in [
            "content-security-policy",
            "x-content-type-options",
            "referrer-policy",
        ] {
            assert!(names.contains(&required), "missing {required}");
        }
    }
}
