//! The route table of `/api/skills`, parsed from the path (ids are raw segments: an unknown
//! one is the handlers' 404).

/// A resource under `/api/skills`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route<'a> {
    /// `/api/skills`
    Skills,
    /// `/api/skills/:id`
    Skill(&'a str),
    /// `/api/skills/:id/enabled`
    Enabled(&'a str),
}

pub const PREFIX: &str = "/api/skills";

/// The route of `path`, or `None` (404).
pub fn route(path: &str) -> Option<Route<'_>> {
    Some(match eve_api::path::segments(path, PREFIX)?.as_slice() {
        [] => Route::Skills,
        [id] => Route::Skill(id),
        [id, "enabled"] => Route::Enabled(id),
        _ => return None,
    })
}

impl Route<'_> {
    /// The methods the route answers (405 with `Allow` otherwise).
    pub fn methods(&self) -> &'static [&'static str] {
        match self {
            Route::Skills => &["GET", "POST"],
            Route::Skill(_) => &["GET", "PATCH", "DELETE"],
            Route::Enabled(_) => &["PUT"],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_route_parses_and_nothing_else() {
        assert_eq!(route("/api/skills"), Some(Route::Skills));
        assert_eq!(route("/api/skills/s"), Some(Route::Skill("s")));
        assert_eq!(route("/api/skills/s/enabled"), Some(Route::Enabled("s")));
        for bad in [
            "/api/skillsx",
            "/api/skills/",
            "/api/skills//enabled",
            "/api/skills/s/x",
        ] {
            assert_eq!(route(bad), None, "{bad}");
        }
    }
}
