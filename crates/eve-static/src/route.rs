//! What a request path names: the app's HTML (client routes), a file of the build output, or an
//! `/api/*` path that no API component claimed.

/// The file that holds the app's HTML document.
pub const INDEX_FILE: &str = "index.html";
/// The file served (with status 404) for a path that names nothing.
pub const NOT_FOUND_FILE: &str = "404.html";
/// The longest path the shell looks at; longer ones are rejected before any work.
pub const MAX_PATH_LEN: usize = 1024;
/// The longest id accepted in `/chat/:id` and `/project/:id`.
pub const MAX_CHAT_ID_LEN: usize = 128;
/// Client routes of one segment that are pages of the app (docs/web.md): the admin page, the
/// account settings, the sign-up form, and the invitation and reset forms that links from admins
/// open (their token is in the fragment, which never reaches the server).
pub const APP_PAGES: [&str; 5] = ["admin", "settings", "signup", "invite", "reset"];

/// Why a path was rejected before any file was looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// Not starting with `/`, too long, bad percent-encoding or not UTF-8 after decoding.
    Malformed,
    /// A `.` or `..` segment, a backslash, a NUL or another control character.
    Traversal,
}

/// What the shell should serve for a normalised path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A client route of the single-page app (`/`, `/chat/:id`, `/project/:id`, [`APP_PAGES`]): the HTML document.
    AppShell,
    /// A file of the build output, relative to the mount root (no leading `/`).
    File(String),
    /// An `/api/...` path that fell through to the shell: answered with a JSON 404.
    UnknownApi,
    /// Nothing can be served for this path (hidden files, directories): a 404.
    NotFound,
}

/// Percent-decodes a request path and checks it is safe to map onto the file system: it must
/// start with `/`, and no segment may be `.` or `..`, or contain a backslash or a control
/// character. Empty segments (`//`) are collapsed. Returns the decoded path with a leading `/`.
pub fn normalize_path(raw: &str) -> Result<String, PathError> {
    if !raw.starts_with('/') || raw.len() > MAX_PATH_LEN {
        return Err(PathError::Malformed);
    }
    let decoded = percent_decode(raw)?;
    let mut segments = Vec::new();
    for segment in decoded.split('/') {
        if segment.is_empty() {
            continue;
        }
        if segment == "." || segment == ".." {
            return Err(PathError::Traversal);
        }
        if segment.chars().any(|c| c == '\\' || c.is_control()) {
            return Err(PathError::Traversal);
        }
        segments.push(segment);
    }
    let mut out = String::with_capacity(decoded.len());
    for segment in &segments {
        out.push('/');
        out.push_str(segment);
    }
    if out.is_empty() || decoded.ends_with('/') && !segments.is_empty() {
        out.push('/');
    }
    Ok(out)
}

fn percent_decode(raw: &str) -> Result<String, PathError> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).ok_or(PathError::Malformed)?;
            let hex = std::str::from_utf8(hex).map_err(|_| PathError::Malformed)?;
            let byte = u8::from_str_radix(hex, 16).map_err(|_| PathError::Malformed)?;
            out.push(byte);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| PathError::Malformed)
}

/// Decides what a normalised path (from [`normalize_path`]) names.
pub fn classify(path: &str) -> Target {
    if path == "/api" || path.starts_with("/api/") {
        return Target::UnknownApi;
    }
    if path == "/" {
        return Target::AppShell;
    }
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    if let [page] = segments.as_slice() {
        if APP_PAGES.contains(page) {
            return Target::AppShell;
        }
    }
    if let ["chat" | "project", id] = segments.as_slice() {
        return if is_chat_id(id) {
            Target::AppShell
        } else {
            Target::NotFound
        };
    }
    if path.ends_with('/') || segments.iter().any(|s| s.starts_with('.')) {
        return Target::NotFound;
    }
    Target::File(segments.join("/"))
}

/// A chat id as the chat store issues them: short, URL-safe characters only.
fn is_chat_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_CHAT_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_and_chat_routes_serve_the_app_shell() {
        assert_eq!(classify("/"), Target::AppShell);
        assert_eq!(classify("/chat/abc_DEF-123"), Target::AppShell);
        assert_eq!(classify("/project/p_abc-123"), Target::AppShell);
        assert_eq!(classify("/project/a.b"), Target::NotFound);
    }

    #[test]
    fn the_admin_settings_signup_and_reset_pages_serve_the_app_shell() {
        for page in ["/admin", "/settings", "/signup", "/invite", "/reset"] {
            assert_eq!(classify(page), Target::AppShell, "{page}");
        }
        // Only the pages themselves: deeper paths and look-alikes are files, and so 404.
        assert_eq!(classify("/admin/users"), Target::File("admin/users".into()));
        assert_eq!(classify("/admins"), Target::File("admins".into()));
        assert_eq!(classify("/admin/"), Target::NotFound);
    }

    #[test]
    fn a_chat_route_with_an_unsafe_id_is_not_found() {
        assert_eq!(classify("/chat/a.b"), Target::NotFound);
        assert_eq!(
            classify(&format!("/chat/{}", "a".repeat(129))),
            Target::NotFound
        );
    }

    #[test]
    fn deeper_chat_paths_are_looked_up_as_files_and_so_404() {
        assert_eq!(
            classify("/chat/abc/extra"),
            Target::File("chat/abc/extra".into())
        );
    }

    #[test]
    fn unknown_api_paths_are_answered_as_api_not_found() {
        assert_eq!(classify("/api"), Target::UnknownApi);
        assert_eq!(classify("/api/nope"), Target::UnknownApi);
        assert_eq!(classify("/apiary.js"), Target::File("apiary.js".into()));
    }

    #[test]
    fn asset_paths_map_to_files_relative_to_the_mount() {
        assert_eq!(
            classify("/assets/app-ABC123.js"),
            Target::File("assets/app-ABC123.js".into())
        );
        assert_eq!(classify("/favicon.svg"), Target::File("favicon.svg".into()));
    }

    #[test]
    fn hidden_files_and_directories_are_not_served() {
        assert_eq!(classify("/.env"), Target::NotFound);
        assert_eq!(classify("/assets/.manifest"), Target::NotFound);
        assert_eq!(classify("/assets/"), Target::NotFound);
    }

    #[test]
    fn normalisation_rejects_dot_dot_segments_even_when_percent_encoded() {
        assert_eq!(normalize_path("/../etc/passwd"), Err(PathError::Traversal));
        assert_eq!(
            normalize_path("/assets/%2e%2e/secret"),
            Err(PathError::Traversal)
        );
        assert_eq!(normalize_path("/a/%2E%2E"), Err(PathError::Traversal));
        assert_eq!(normalize_path("/a/./b"), Err(PathError::Traversal));
    }

    #[test]
    fn normalisation_rejects_backslashes_and_control_characters() {
        assert_eq!(normalize_path("/a\\..\\b"), Err(PathError::Traversal));
        assert_eq!(normalize_path("/a%5c..%5cb"), Err(PathError::Traversal));
        assert_eq!(normalize_path("/a%00.js"), Err(PathError::Traversal));
    }

    #[test]
    fn normalisation_rejects_malformed_input() {
        assert_eq!(normalize_path("relative"), Err(PathError::Malformed));
        assert_eq!(normalize_path("/bad%zz"), Err(PathError::Malformed));
        assert_eq!(normalize_path("/cut%2"), Err(PathError::Malformed));
        assert_eq!(normalize_path("/%ff%fe"), Err(PathError::Malformed));
        assert_eq!(
            normalize_path(&format!("/{}", "a".repeat(2000))),
            Err(PathError::Malformed)
        );
    }

    #[test]
    fn normalisation_decodes_and_collapses_empty_segments() {
        assert_eq!(normalize_path("/").unwrap(), "/");
        assert_eq!(
            normalize_path("//assets//x%20y.js").unwrap(),
            "/assets/x y.js"
        );
        assert_eq!(normalize_path("/assets/").unwrap(), "/assets/");
        assert_eq!(normalize_path("/chat/abc").unwrap(), "/chat/abc");
    }
}
