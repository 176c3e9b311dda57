//! File names: what is kept and shown (one name, no path, no control characters), and what a
//! download's `content-disposition` says.

/// The longest file name kept.
pub const MAX_NAME_CHARS: usize = 255;

/// A name as kept and shown: its last path segment, without control or bidi-override
/// characters, trimmed, at most [`MAX_NAME_CHARS`]; `None` when nothing usable is left
/// (empty, `.` or `..`).
pub fn clean(name: &str) -> Option<String> {
    let last = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let cleaned: String = last
        .chars()
        .filter(|c| {
            !c.is_control()
                && !('\u{202a}'..='\u{202e}').contains(c)
                && !('\u{2066}'..='\u{2069}').contains(c)
        })
        .take(MAX_NAME_CHARS)
        .collect();
    let cleaned = cleaned.trim();
    (!cleaned.is_empty() && cleaned != "." && cleaned != "..").then(|| cleaned.to_string())
}

/// The file name a tool's `filePath` names: eve's tools take absolute paths, so a leading
/// `/workspace/`, `$HOME/` or `/` is dropped; what is left must be one clean name (files are
/// flat: there are no directories to address).
pub fn from_tool_path(path: &str) -> Result<String, String> {
    let p = path.trim();
    let p = p
        .strip_prefix("/workspace/")
        .or_else(|| p.strip_prefix("$HOME/"))
        .or_else(|| p.strip_prefix("./"))
        .or_else(|| p.strip_prefix('/'))
        .unwrap_or(p);
    match clean(p) {
        Some(name) if name == p => Ok(name),
        _ => Err(format!(
            "{path:?} is not a file name here: project files are flat, name one as /workspace/<name> or <name> (glob lists them)"
        )),
    }
}

/// A tool's view of a name (eve's tools speak in absolute paths).
pub fn tool_path(name: &str) -> String {
    format!("/workspace/{name}")
}

/// `content-disposition` for a download: an ASCII fallback and the UTF-8 name (RFC 6266);
/// `inline` for an image shown as itself.
pub fn content_disposition(name: &str, inline: bool) -> String {
    let ascii: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || ".-_ ".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut encoded = String::new();
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-._".contains(&b) {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    let kind = if inline { "inline" } else { "attachment" };
    format!("{kind}; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

/// Decodes the percent-encoded `x-file-name` header (UTF-8); `None` when it is not.
pub fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}
