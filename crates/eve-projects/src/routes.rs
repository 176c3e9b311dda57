//! The route table of `/api/projects`, parsed from the path (ids are raw segments: an
//! unknown one is the handlers' 404).

/// A resource under `/api/projects`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route<'a> {
    /// `/api/projects`
    Projects,
    /// `/api/projects/:id`
    Project(&'a str),
    /// `/api/projects/:id/files`
    Files(&'a str),
    /// `/api/projects/:id/files/:fileId`
    File(&'a str, &'a str),
    /// `/api/projects/:id/files/:fileId/download`
    Download(&'a str, &'a str),
    /// `/api/projects/:id/files/:fileId/final`
    Final(&'a str, &'a str),
}

pub const PREFIX: &str = "/api/projects";

/// The route of `path`, or `None` (404).
pub fn route(path: &str) -> Option<Route<'_>> {
    Some(match eve_api::path::segments(path, PREFIX)?.as_slice() {
        [] => Route::Projects,
        [id] => Route::Project(id),
        [id, "files"] => Route::Files(id),
        [id, "files", file] => Route::File(id, file),
        [id, "files", file, "download"] => Route::Download(id, file),
        [id, "files", file, "final"] => Route::Final(id, file),
        _ => return None,
    })
}

impl Route<'_> {
    /// The methods the route answers (405 with `Allow` otherwise).
    pub fn methods(&self) -> &'static [&'static str] {
        match self {
            Route::Projects | Route::Files(_) => &["GET", "POST"],
            Route::Project(_) => &["GET", "PATCH", "DELETE"],
            Route::File(..) => &["GET", "DELETE"],
            Route::Download(..) => &["GET"],
            Route::Final(..) => &["POST"],
        }
    }

    /// Whether the request is a file upload (its body is the file's bytes).
    pub fn is_upload(&self, method: &str) -> bool {
        matches!(self, Route::Files(_)) && method == "POST"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_route_parses_and_nothing_else() {
        assert_eq!(route("/api/projects"), Some(Route::Projects));
        assert_eq!(route("/api/projects/p"), Some(Route::Project("p")));
        assert_eq!(route("/api/projects/p/files"), Some(Route::Files("p")));
        assert_eq!(
            route("/api/projects/p/files/f/download"),
            Some(Route::Download("p", "f"))
        );
        assert_eq!(
            route("/api/projects/p/files/f/final"),
            Some(Route::Final("p", "f"))
        );
        for bad in [
            "/api/projectsx",
            "/api/projects/",
            "/api/projects//files",
            "/api/projects/p/other",
            "/api/projects/p/files/f/x",
        ] {
            assert_eq!(route(bad), None, "{bad}");
        }
    }
}
