//! What the file list shows of a file, made once when its bytes are written.

use eve_api::projects::FilePreview;

/// Images up to this size are their own thumbnails.
pub const MAX_THUMBNAIL_BYTES: usize = 1024 * 1024;
/// A text preview's first lines and characters.
pub const PREVIEW_LINES: usize = 10;
pub const PREVIEW_CHARS: usize = 1000;

/// The kind of a file by its declared type checked against its bytes.
pub fn preview(media_type: &str, bytes: &[u8]) -> FilePreview {
    let m = media_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if is_image(&m, bytes) {
        // The list fills in the URL: a preview does not know where it is served.
        return FilePreview::Image {
            thumbnail_url: None,
        };
    }
    if m == "application/pdf" && bytes.starts_with(b"%PDF-") {
        return FilePreview::Pdf {
            pages: pdf_pages(bytes),
        };
    }
    match std::str::from_utf8(bytes) {
        Ok(text) if is_text(&m) => FilePreview::Text { text: head(text) },
        _ => FilePreview::Other,
    }
}

/// Whether the bytes are an image of the (lower-case) type they claim: PNG, JPEG, GIF or
/// WebP, the types a browser may be shown inline.
pub fn is_image(m: &str, bytes: &[u8]) -> bool {
    match m {
        "image/png" => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" => bytes.starts_with(&[0xFF, 0xD8, 0xFF]),
        "image/gif" => bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a"),
        "image/webp" => bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP",
        _ => false,
    }
}

/// Whether a media type is text the list may show (eve's text types).
pub fn is_text(m: &str) -> bool {
    m.starts_with("text/")
        || m.ends_with("+json")
        || m.ends_with("+xml")
        || matches!(
            m,
            "application/json" | "application/xml" | "application/yaml" | "application/csv"
        )
}

/// The first [`PREVIEW_LINES`] lines, at most [`PREVIEW_CHARS`] characters.
fn head(text: &str) -> String {
    let lines: Vec<&str> = text.lines().take(PREVIEW_LINES).collect();
    lines.join("\n").chars().take(PREVIEW_CHARS).collect()
}

/// A PDF's pages, counted cheaply: the `/Type /Page` objects that are not `/Type /Pages`
/// (compressed object streams hide them: then 0, "unknown").
pub fn pdf_pages(bytes: &[u8]) -> u32 {
    let mut pages = 0;
    let needle = b"/Type";
    let mut i = 0;
    while let Some(at) = find(&bytes[i..], needle) {
        let mut j = i + at + needle.len();
        while j < bytes.len() && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        let rest = &bytes[j..];
        if rest.starts_with(b"/Page") && !rest.starts_with(b"/Pages") {
            pages += 1;
        }
        i = j;
    }
    pages
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
