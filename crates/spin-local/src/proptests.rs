//! Property tests of what the host parses: the manifest (any text, truncated or mangled
//! versions of the app's own `spin.toml`), route strings and request paths, variable templates
//! and `--variable` flags, and `allowed_outbound_hosts` entries. None of them may panic on any
//! input; a route match must be consistent with the route; the app's own route table sends
//! every path to the component spin.toml says; an allow-list admits what it names and nothing
//! else.

use crate::manifest;
use crate::outbound::{chained_component, AllowList, AllowedHost};
use crate::routes::{validate_route, Route, Router};
use crate::template::{self, template_references};
use crate::variables::parse_flag;
use proptest::prelude::*;
use std::path::Path;

/// `cases` runs per property; failures are reported, not saved to files next to the source.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn app_manifest_text() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spin.toml");
    std::fs::read_to_string(path).expect("the app's spin.toml")
}

/// The app's router, built as the runtime builds it.
fn app_router() -> Router {
    let text = app_manifest_text();
    let m = manifest::parse(&text, Path::new("spin.toml")).expect("the app's manifest parses");
    Router::new(
        m.triggers
            .iter()
            .filter_map(|t| match &t.route {
                manifest::RouteSpec::Path(r) => Some(Route::new("/", r, &t.component).unwrap()),
                manifest::RouteSpec::Private => None,
            })
            .collect(),
    )
}

/// A path segment as a client may send it: plain, percent-encoded, dots, odd bytes.
fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9_-]{1,12}",
        Just("..".to_string()),
        Just(".".to_string()),
        Just("%2e%2e".to_string()),
        Just("%2F".to_string()),
        Just("%00".to_string()),
        "[a-z]{0,3}(%[0-9A-Fa-f]{2}|:|;|~|\\.){1,3}",
        "\\PC{1,4}",
    ]
}

fn request_path() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::collection::vec(segment(), 0..6).prop_map(|s| format!("/{}", s.join("/"))),
        (
            prop_oneof![
                Just("/api/chats"),
                Just("/api/auth"),
                Just("/eve/v1"),
                Just("/api"),
                Just("/chat")
            ],
            proptest::collection::vec(prop_oneof![segment(), Just(String::new())], 0..5),
        )
            .prop_map(|(p, s)| if s.is_empty() {
                p.to_string()
            } else {
                format!("{p}/{}", s.join("/"))
            }),
        any::<String>().prop_map(|s| format!("/{s}")),
    ]
}

fn route_segment() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9_-]{1,8}",
        "[a-z0-9_-]{1,8}".prop_map(|s| format!(":{s}")),
    ]
}

fn route() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(route_segment(), 0..4),
        any::<bool>(),
    )
        .prop_map(|(segs, wildcard)| {
            let base = format!("/{}", segs.join("/"));
            match (wildcard, base.as_str()) {
                (true, "/") => "/...".to_string(),
                (true, b) => format!("{b}/..."),
                (false, b) => b.to_string(),
            }
        })
}

/// The component the app's spin.toml must route `segments` (after `/`) to.
fn expected_component(segments: &[String]) -> &'static str {
    let s: Vec<&str> = segments.iter().map(String::as_str).collect();
    match s.as_slice() {
        ["api", "setup"] => "auth",
        ["api", "auth", ..] => "auth",
        ["api", "chats"] => "chats",
        ["api", "chats", _] => "chats",
        ["api", "chats", _, "export"] => "chats",
        ["api", "chats", _, _, ..] => "events",
        // The Slack channel's exact route beats the proxy's wildcard (issue 23).
        ["eve", "v1", "slack"] => "slack",
        ["eve", "v1", ..] => "eve-proxy",
        _ => "shell",
    }
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn parsing_any_text_as_a_manifest_never_panics(text in any::<String>()) {
        let _ = manifest::parse(&text, Path::new("spin.toml"));
    }

    #[test]
    fn a_truncated_app_manifest_never_panics(cut in any::<prop::sample::Index>()) {
        let text = app_manifest_text();
        let mut at = cut.index(text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let _ = manifest::parse(&text[..at], Path::new("spin.toml"));
    }

    #[test]
    fn the_app_manifest_with_lines_dropped_or_mangled_never_panics(
        drops in proptest::collection::vec(any::<prop::sample::Index>(), 1..6),
        mangle in any::<prop::sample::Index>(),
        replacement in prop_oneof![
            Just("route = \"\"".to_string()),
            Just("route = \"/a/.../b\"".to_string()),
            Just("route = { private = false }".to_string()),
            Just("component = 42".to_string()),
            Just("source = { url = \"https://x\", digest = \"y\" }".to_string()),
            Just("allowed_outbound_hosts = [\"*://*:*\", \"http://[::1\", \"{{ nope }}\"]".to_string()),
            Just("files = [{ source = \"a\" }]".to_string()),
            Just("x = \"{{ unterminated\"".to_string()),
            Just("spin_manifest_version = \"1\"".to_string()),
            "[ -~]{0,40}",
        ],
    ) {
        let mut lines: Vec<String> = app_manifest_text().lines().map(str::to_string).collect();
        let at = mangle.index(lines.len());
        lines[at] = replacement;
        for d in drops {
            if !lines.is_empty() {
                let i = d.index(lines.len());
                lines.remove(i);
            }
        }
        let _ = manifest::parse(&lines.join("\n"), Path::new("spin.toml"));
    }

    #[test]
    fn route_validation_never_panics(route in any::<String>()) {
        let _ = validate_route(&route);
        let _ = Route::new("/", &route, "c");
        let _ = Route::new(&route, "/x/...", "c");
    }

    #[test]
    fn well_formed_routes_validate(route in route()) {
        prop_assert!(validate_route(&route).is_ok(), "{}", route);
    }

    #[test]
    fn routing_any_path_never_panics_and_the_match_agrees_with_its_route(
        routes in proptest::collection::btree_set(route(), 1..6),
        path in request_path(),
    ) {
        let router = Router::new(
            routes.iter().enumerate().map(|(i, r)| Route::new("/", r, &format!("c{i}")).unwrap()).collect(),
        );
        if let Some(m) = router.route(&path) {
            prop_assert!(path.ends_with(&m.path_info), "path info {:?} of {:?}", m.path_info, path);
            prop_assert!(m.path_info.is_empty() || m.path_info.starts_with('/'));
            for (name, value) in &m.params {
                prop_assert!(!name.is_empty());
                prop_assert!(!value.is_empty() && !value.contains('/'), "param {:?}", value);
            }
            if !m.matched_route.ends_with("/...") {
                prop_assert!(m.path_info.is_empty());
            }
        }
    }

    #[test]
    fn a_route_matches_the_paths_it_describes(
        route in route(),
        values in proptest::collection::vec("[a-zA-Z0-9%._~-]{1,10}", 4),
        tail in proptest::collection::vec("[a-zA-Z0-9%._~-]{1,10}", 0..3),
    ) {
        let router = Router::new(vec![Route::new("/", &route, "c").unwrap()]);
        let stem = route.strip_suffix("/...").unwrap_or(&route);
        let mut path = String::new();
        let mut expected_params = Vec::new();
        for (i, seg) in stem.split('/').filter(|s| !s.is_empty()).enumerate() {
            path.push('/');
            match seg.strip_prefix(':') {
                Some(name) => {
                    path.push_str(&values[i]);
                    expected_params.push((name.to_string(), values[i].clone()));
                }
                None => path.push_str(seg),
            }
        }
        let wildcard = route.ends_with("/...");
        let info = if wildcard && !tail.is_empty() { format!("/{}", tail.join("/")) } else { String::new() };
        let full = if path.is_empty() && info.is_empty() { "/".to_string() } else { format!("{path}{info}") };
        let m = router.route(&full);
        prop_assert!(m.is_some(), "{} should match {}", route, full);
        let m = m.unwrap();
        // Duplicate parameter names are allowed by Spin; compare by position.
        prop_assert_eq!(m.params, expected_params);
        if wildcard && !path.is_empty() {
            prop_assert_eq!(m.path_info, info);
        }
    }

    #[test]
    fn the_app_routes_every_path_to_the_component_spin_toml_names(
        segments in proptest::collection::vec(
            prop_oneof![
                Just("api".to_string()), Just("chats".to_string()), Just("auth".to_string()),
                Just("setup".to_string()), Just("export".to_string()), Just("events".to_string()),
                Just("eve".to_string()), Just("v1".to_string()), Just("session".to_string()),
                Just("slack".to_string()),
                "[a-zA-Z0-9_-]{1,8}", "%[0-9A-F]{2}", Just("..".to_string()),
            ],
            0..6,
        ),
        trailing_slash in any::<bool>(),
    ) {
        let router = app_router();
        let path = format!("/{}{}", segments.join("/"), if trailing_slash && !segments.is_empty() { "/" } else { "" });
        let m = router.route(&path).expect("the shell's /... catches everything");
        // A trailing slash changes nothing: an exact route answers it too (and beats the
        // `/api/chats/:id/...` wildcard, whose path info would be `/`).
        let expected = expected_component(&segments);
        prop_assert_eq!(m.component.as_str(), expected, "{}", path);
    }

    #[test]
    fn templates_and_variable_flags_never_panic(text in any::<String>(), templ in "(\\{\\{ ?[a-z_]{0,6} ?\\}\\}|[a-z{} ]){0,8}") {
        let _ = template_references(&text);
        let _ = parse_flag(&text);
        if let Ok(names) = template_references(&templ) {
            for n in names {
                prop_assert!(template::validate_variable_name(&n).is_ok());
            }
        }
    }

    #[test]
    fn allow_list_parsing_and_checks_never_panic(
        entry in prop_oneof![
            any::<String>(),
            "(\\*|https?|redis|[a-z]{1,5})://(\\*|\\*\\.[a-z.]{1,10}|[a-z0-9.\\[\\]:*-]{0,15})(:(\\*|[0-9]{0,6}(\\.\\.[0-9]{0,6})?))?/?",
        ],
        scheme in "(http|https|HTTP|[a-z]{0,5})",
        host in "\\PC{0,20}",
        port in proptest::option::of(any::<u16>()),
    ) {
        let _ = chained_component(&host);
        if let Ok(list) = AllowList::parse(&[entry]) {
            let _ = list.allows(&scheme, &host, port);
        }
    }

    #[test]
    fn an_exact_entry_admits_its_own_host_and_port_and_nothing_else(
        scheme in "(http|https)",
        host in "[a-z][a-z0-9-]{0,10}(\\.[a-z]{2,5}){0,2}",
        other in "[a-z][a-z0-9-]{0,10}(\\.[a-z]{2,5}){0,2}",
        port in 1u16..,
        other_port in 1u16..,
    ) {
        let list = AllowList::parse(&[format!("{scheme}://{host}:{port}")]).unwrap();
        prop_assert!(list.allows(&scheme, &host, Some(port)));
        prop_assert!(list.allows(&scheme, &host.to_ascii_uppercase(), Some(port)));
        prop_assert_eq!(list.allows(&scheme, &host, Some(other_port)), other_port == port);
        prop_assert_eq!(list.allows(&scheme, &other, Some(port)), other == host);
        let other_scheme = if scheme == "http" { "https" } else { "http" };
        prop_assert!(!list.allows(other_scheme, &host, Some(port)));
    }

    #[test]
    fn a_port_range_admits_exactly_the_ports_inside_it(a in any::<u16>(), b in any::<u16>(), p in any::<u16>()) {
        let (lo, hi) = (a.min(b), a.max(b));
        let list = AllowList::parse(&[format!("http://localhost:{lo}..{hi}")]).unwrap();
        prop_assert_eq!(list.allows("http", "localhost", Some(p)), lo <= p && p <= hi);
        if a > b {
            let reversed = format!("http://localhost:{a}..{b}");
            prop_assert!(AllowedHost::parse(&reversed).is_err());
        }
    }

    #[test]
    fn a_subdomain_wildcard_admits_only_hosts_strictly_below_it(
        suffix in "[a-z]{1,8}\\.[a-z]{2,4}",
        label in "[a-z0-9-]{1,8}",
        prefix in "[a-z0-9-]{1,8}",
    ) {
        let list = AllowList::parse(&[format!("https://*.{suffix}")]).unwrap();
        let below = format!("{label}.{suffix}");
        let glued = format!("{prefix}{suffix}");
        prop_assert!(list.allows("https", &below, None));
        prop_assert!(!list.allows("https", &suffix, None));
        prop_assert!(!list.allows("https", &glued, None));
    }
}
