//! The HTTP route table, matching as Spin documents it.
//!
//! - `/exact` matches `/exact` and `/exact/`, nothing deeper.
//! - `/prefix/...` matches `/prefix`, `/prefix/` and everything below; the part after the
//!   prefix is the path info (`""`, `"/"`, `"/x/y"`).
//! - `:name` matches exactly one non-empty, still-encoded segment and is exposed as
//!   `spin-path-match-<name>`.
//! - The most specific route wins: comparing segment by segment, a literal beats a parameter,
//!   which beats the end of an exact route, which beats a wildcard.
//! - Private routes are not in the table at all.

use anyhow::{bail, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Literal(String),
    Param(String),
}

/// One public route of the application.
#[derive(Debug, Clone)]
pub struct Route {
    /// The route as written in the manifest, with the base prepended (`spin-matched-route`).
    pub raw: String,
    segments: Vec<Segment>,
    wildcard: bool,
    pub component: String,
}

/// The result of matching a request path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteMatch {
    pub component: String,
    /// The route as declared (`spin-matched-route`, `spin-raw-component-route`).
    pub matched_route: String,
    /// The route without a trailing `/...` (`spin-component-route`).
    pub component_route: String,
    /// The path after the matched prefix (`spin-path-info`), still percent-encoded.
    pub path_info: String,
    /// `:name` captures, in route order.
    pub params: Vec<(String, String)>,
}

/// Checks that a route string is one Spin accepts.
pub fn validate_route(route: &str) -> Result<()> {
    parse(route).map(|_| ())
}

fn parse(route: &str) -> Result<(Vec<Segment>, bool)> {
    if !route.starts_with('/') {
        bail!("route `{route}` must start with `/`");
    }
    let (body, wildcard) = match route.strip_suffix("/...") {
        Some(prefix) => (prefix, true),
        None if route == "/..." => ("", true),
        None => (route, false),
    };
    let mut segments = Vec::new();
    let trimmed = body.trim_start_matches('/');
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    if !trimmed.is_empty() {
        for seg in trimmed.split('/') {
            if seg.is_empty() {
                bail!("route `{route}` has an empty segment");
            }
            if seg == "..." {
                bail!("route `{route}`: `...` is only allowed as the last segment");
            }
            if let Some(name) = seg.strip_prefix(':') {
                if name.is_empty() {
                    bail!("route `{route}` has a parameter without a name");
                }
                segments.push(Segment::Param(name.to_string()));
            } else {
                segments.push(Segment::Literal(seg.to_string()));
            }
        }
    }
    Ok((segments, wildcard))
}

/// Specificity ranks, compared lexicographically per position.
const RANK_LITERAL: u8 = 4;
const RANK_PARAM: u8 = 3;
const RANK_END: u8 = 2;
const RANK_WILDCARD: u8 = 1;

impl Route {
    pub fn new(base: &str, route: &str, component: &str) -> Result<Self> {
        let base = base.trim_end_matches('/');
        let full = if route == "/" || route.is_empty() {
            if base.is_empty() {
                "/".to_string()
            } else {
                base.to_string()
            }
        } else {
            format!("{base}{route}")
        };
        let (segments, wildcard) = parse(&full)?;
        Ok(Route {
            raw: full,
            segments,
            wildcard,
            component: component.to_string(),
        })
    }

    fn rank(&self) -> Vec<u8> {
        let mut r: Vec<u8> = self
            .segments
            .iter()
            .map(|s| match s {
                Segment::Literal(_) => RANK_LITERAL,
                Segment::Param(_) => RANK_PARAM,
            })
            .collect();
        r.push(if self.wildcard {
            RANK_WILDCARD
        } else {
            RANK_END
        });
        r
    }

    fn matches(&self, path: &str) -> Option<RouteMatch> {
        let rest = path.strip_prefix('/')?;
        let mut params = Vec::new();
        let mut remaining = rest;
        let mut consumed = 0usize; // bytes of `path` consumed, including the leading '/'
        for (i, seg) in self.segments.iter().enumerate() {
            if i > 0 {
                remaining = remaining.strip_prefix('/')?;
                consumed += 1;
            }
            let end = remaining.find('/').unwrap_or(remaining.len());
            let got = &remaining[..end];
            match seg {
                Segment::Literal(l) if l == got => {}
                Segment::Param(name) if !got.is_empty() => {
                    params.push((name.clone(), got.to_string()))
                }
                _ => return None,
            }
            remaining = &remaining[end..];
            consumed += end;
        }
        let component_route = if self.wildcard {
            let stem = self.raw.strip_suffix("/...").unwrap_or("");
            stem.to_string()
        } else {
            self.raw.clone()
        };
        let path_info = if self.wildcard {
            // After the literal prefix: nothing, or a `/...` remainder.
            let after = if self.segments.is_empty() {
                path
            } else {
                &path[consumed + 1..]
            };
            if !(after.is_empty() || after.starts_with('/')) {
                return None;
            }
            after.to_string()
        } else {
            // Exact: nothing more, or one trailing slash.
            if !(remaining.is_empty() || remaining == "/") {
                return None;
            }
            String::new()
        };
        Some(RouteMatch {
            component: self.component.clone(),
            matched_route: self.raw.clone(),
            component_route,
            path_info,
            params,
        })
    }
}

/// All public routes, most specific first.
#[derive(Debug, Clone, Default)]
pub struct Router {
    routes: Vec<Route>,
}

impl Router {
    pub fn new(mut routes: Vec<Route>) -> Self {
        // Stable sort keeps manifest order among equally specific routes.
        routes.sort_by_key(|r| std::cmp::Reverse(r.rank()));
        Router { routes }
    }

    /// The most specific route matching `path` (no query string), if any.
    pub fn route(&self, path: &str) -> Option<RouteMatch> {
        self.routes.iter().find_map(|r| r.matches(path))
    }

    pub fn routes(&self) -> &[Route] {
        &self.routes
    }
}

/// The match a component sees when it is called through service chaining: the whole path is
/// the path info of a `/...` route, as in Spin.
pub fn chained_match(component: &str, path: &str) -> RouteMatch {
    RouteMatch {
        component: component.to_string(),
        matched_route: "/...".into(),
        component_route: String::new(),
        path_info: path.to_string(),
        params: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn router(routes: &[(&str, &str)]) -> Router {
        Router::new(
            routes
                .iter()
                .map(|(r, c)| Route::new("/", r, c).unwrap())
                .collect(),
        )
    }

    /// The probe app's routes (../shared/spin-conformance/spin.toml).
    fn probe() -> Router {
        router(&[
            ("/...", "catchall"),
            ("/api/...", "api"),
            ("/api/chats/:id", "chat-id"),
            ("/api/chats/:id/events/...", "events"),
            ("/exact", "exact"),
        ])
    }

    fn hit(r: &Router, path: &str) -> (String, String) {
        let m = r.route(path).unwrap();
        (m.component, m.path_info)
    }

    #[test]
    fn exact_route_answers_itself_and_a_trailing_slash_only() {
        let r = probe();
        assert_eq!(hit(&r, "/exact"), ("exact".into(), "".into()));
        assert_eq!(hit(&r, "/exact/"), ("exact".into(), "".into()));
        assert_eq!(
            hit(&r, "/exact/more"),
            ("catchall".into(), "/exact/more".into())
        );
    }

    #[test]
    fn wildcard_matches_its_prefix_with_empty_or_slash_path_info() {
        let r = probe();
        assert_eq!(hit(&r, "/api"), ("api".into(), "".into()));
        assert_eq!(hit(&r, "/api/"), ("api".into(), "/".into()));
        assert_eq!(hit(&r, "/api/headers"), ("api".into(), "/headers".into()));
        assert_eq!(hit(&r, "/apix"), ("catchall".into(), "/apix".into()));
    }

    #[test]
    fn parameter_matches_exactly_one_non_empty_raw_segment() {
        let r = probe();
        let m = r.route("/api/chats/a%2Fb").unwrap();
        assert_eq!(m.component, "chat-id");
        assert_eq!(m.params, vec![("id".to_string(), "a%2Fb".to_string())]);
        assert_eq!(hit(&r, "/api/chats/"), ("api".into(), "/chats/".into()));
        assert_eq!(
            hit(&r, "/api/chats/abc/headers"),
            ("api".into(), "/chats/abc/headers".into())
        );
    }

    #[test]
    fn most_specific_route_wins_over_shorter_wildcards() {
        let r = probe();
        let m = r.route("/api/chats/abc/events/7").unwrap();
        assert_eq!(m.component, "events");
        assert_eq!(m.path_info, "/7");
        assert_eq!(m.component_route, "/api/chats/:id/events");
        assert_eq!(m.matched_route, "/api/chats/:id/events/...");
    }

    #[test]
    fn literal_segment_beats_parameter_and_exact_beats_wildcard() {
        let r = router(&[
            ("/api/chats/:id/...", "events"),
            ("/api/chats/:id/export", "chats"),
            ("/api/chats/:id", "chats-id"),
            ("/api/chats/new", "new"),
            ("/api/chats", "list"),
        ]);
        assert_eq!(hit(&r, "/api/chats/x/export").0, "chats");
        assert_eq!(hit(&r, "/api/chats/x/events/3").0, "events");
        assert_eq!(hit(&r, "/api/chats/x").0, "chats-id");
        assert_eq!(hit(&r, "/api/chats/new").0, "new");
        assert_eq!(hit(&r, "/api/chats").0, "list");
        assert_eq!(hit(&r, "/api/chats/").0, "list");
    }

    #[test]
    fn root_wildcard_has_empty_component_route_and_full_path_info() {
        let r = probe();
        let m = r.route("/some/deep/path").unwrap();
        assert_eq!(m.component_route, "");
        assert_eq!(m.path_info, "/some/deep/path");
        assert_eq!(m.matched_route, "/...");
    }

    #[test]
    fn encoded_characters_stay_encoded_in_path_info() {
        let r = probe();
        assert_eq!(
            hit(&r, "/api/%7Eenc%2Fslash/headers").1,
            "/%7Eenc%2Fslash/headers"
        );
    }

    #[test]
    fn no_route_matches_outside_declared_prefixes() {
        let r = router(&[("/api/...", "api")]);
        assert!(r.route("/other").is_none());
    }

    #[test]
    fn base_path_is_prepended_to_every_route() {
        let r = Router::new(vec![Route::new("/app", "/api/...", "api").unwrap()]);
        let m = r.route("/app/api/x").unwrap();
        assert_eq!(m.matched_route, "/app/api/...");
        assert_eq!(m.path_info, "/x");
    }

    #[test]
    fn malformed_routes_are_rejected() {
        assert!(validate_route("api").is_err());
        assert!(validate_route("/a/.../b").is_err());
        assert!(validate_route("/a//b").is_err());
        assert!(validate_route("/a/:").is_err());
    }
}
