//! From a file to a response: which precompressed variants to try, and the status and headers
//! to answer with once the bytes of one of them are read.

use crate::encoding::{acceptable_encodings, Encoding};
use crate::etag::{etag_of, if_none_match_matches};
use crate::headers::{cache_control, content_type, is_compressible, CACHE_NONE, SECURITY_HEADERS};

/// One file on disk that can answer for a requested file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variant {
    /// The path relative to the mount root (`assets/app-X.js.br`).
    pub file: String,
    pub encoding: Encoding,
}

/// The files to try for `file`, best first: the precompressed variants the client accepts (only
/// for compressible types), then the file itself.
pub fn variants(file: &str, accept_encoding: Option<&str>) -> Vec<Variant> {
    let encodings = if is_compressible(content_type(file)) {
        acceptable_encodings(accept_encoding)
    } else {
        vec![Encoding::Identity]
    };
    encodings
        .into_iter()
        .map(|encoding| Variant {
            file: format!("{file}{}", encoding.file_suffix()),
            encoding,
        })
        .collect()
}

/// Status and headers of a response; `body` says whether the file's bytes follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: bool,
}

impl FileResponse {
    /// The value of a header (names are lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The response for `bytes`, read from `variant` of the requested `file`.
///
/// `status` is 200 for a found file and 404 for the not-found page. A 200 whose ETag matches
/// `If-None-Match` becomes a body-less 304 with the same validators and caching headers.
pub fn plan_file_response(
    file: &str,
    variant: &Variant,
    bytes: &[u8],
    if_none_match: Option<&str>,
    status: u16,
) -> FileResponse {
    let etag = etag_of(bytes);
    let mut headers = security_headers();
    let content_type = content_type(file);
    if is_compressible(content_type) {
        headers.push(("vary".into(), "Accept-Encoding".into()));
    }
    if status == 200 {
        headers.push(("etag".into(), etag.clone()));
        headers.push(("cache-control".into(), cache_control(file).into()));
        if if_none_match_matches(if_none_match, &etag) {
            return FileResponse {
                status: 304,
                headers,
                body: false,
            };
        }
    } else {
        headers.push(("cache-control".into(), CACHE_NONE.into()));
    }
    headers.push(("content-type".into(), content_type.into()));
    if let Some(coding) = variant.encoding.header_value() {
        headers.push(("content-encoding".into(), coding.into()));
    }
    FileResponse {
        status,
        headers,
        body: true,
    }
}

/// Headers of a response the shell writes itself (errors): security headers, `no-store`, and
/// the given content type.
pub fn plain_headers(content_type: &str) -> Vec<(String, String)> {
    let mut headers = security_headers();
    headers.push(("cache-control".into(), CACHE_NONE.into()));
    headers.push(("content-type".into(), content_type.into()));
    headers
}

fn security_headers() -> Vec<(String, String)> {
    SECURITY_HEADERS
        .iter()
        .map(|(n, v)| ((*n).into(), (*v).into()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headers::{CACHE_HTML, CACHE_IMMUTABLE};

    #[test]
    fn compressible_files_try_brotli_then_gzip_then_identity() {
        let files: Vec<String> = variants("assets/app-ABCDEFGH.js", Some("gzip, br"))
            .into_iter()
            .map(|v| v.file)
            .collect();
        assert_eq!(
            files,
            [
                "assets/app-ABCDEFGH.js.br",
                "assets/app-ABCDEFGH.js.gz",
                "assets/app-ABCDEFGH.js"
            ]
        );
    }

    #[test]
    fn images_are_only_tried_as_is() {
        let v = variants("logo.png", Some("gzip, br"));
        assert_eq!(
            v,
            vec![Variant {
                file: "logo.png".into(),
                encoding: Encoding::Identity
            }]
        );
    }

    #[test]
    fn a_found_brotli_asset_is_immutable_encoded_and_varies_on_accept_encoding() {
        let v = Variant {
            file: "assets/app-ABCDEFGH.js.br".into(),
            encoding: Encoding::Brotli,
        };
        let r = plan_file_response("assets/app-ABCDEFGH.js", &v, b"..", None, 200);
        assert_eq!(r.status, 200);
        assert!(r.body);
        assert_eq!(r.header("content-encoding"), Some("br"));
        assert_eq!(
            r.header("content-type"),
            Some("text/javascript; charset=utf-8")
        );
        assert_eq!(r.header("cache-control"), Some(CACHE_IMMUTABLE));
        assert_eq!(r.header("vary"), Some("Accept-Encoding"));
        assert_eq!(r.header("etag"), Some(etag_of(b"..").as_str()));
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    }

    #[test]
    fn a_matching_if_none_match_yields_304_without_body() {
        let v = Variant {
            file: "index.html".into(),
            encoding: Encoding::Identity,
        };
        let etag = etag_of(b"<html>");
        let r = plan_file_response("index.html", &v, b"<html>", Some(&etag), 200);
        assert_eq!(r.status, 304);
        assert!(!r.body);
        assert_eq!(r.header("etag"), Some(etag.as_str()));
        assert_eq!(r.header("cache-control"), Some(CACHE_HTML));
        assert_eq!(r.header("content-encoding"), None);
    }

    #[test]
    fn a_stale_if_none_match_yields_the_full_response() {
        let v = Variant {
            file: "index.html".into(),
            encoding: Encoding::Identity,
        };
        let r = plan_file_response("index.html", &v, b"<html>", Some("\"old\""), 200);
        assert_eq!(r.status, 200);
        assert!(r.body);
    }

    #[test]
    fn the_not_found_page_is_a_404_that_is_not_stored_and_never_304() {
        let v = Variant {
            file: "404.html".into(),
            encoding: Encoding::Identity,
        };
        let r = plan_file_response("404.html", &v, b"nf", Some("*"), 404);
        assert_eq!(r.status, 404);
        assert!(r.body);
        assert_eq!(r.header("cache-control"), Some(CACHE_NONE));
        assert_eq!(r.header("etag"), None);
    }

    #[test]
    fn error_responses_carry_the_security_headers() {
        let h = plain_headers("application/json");
        assert!(h.iter().any(|(n, _)| n == "content-security-policy"));
        assert!(h
            .iter()
            .any(|(n, v)| n == "cache-control" && v == CACHE_NONE));
    }
}
