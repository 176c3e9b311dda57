//! The `shell` component through the local host: the app HTML on client routes, real 404s,
//! JSON 404 for unknown `/api/*`, ETag/304, precompressed variants, cache policy, security
//! headers, and path traversal refused. Needs the web build in `static/dist` (the shell's build
//! command makes it).

use eve_chat_tests::{repo_root, Host};

fn dist_file(rel: &str) -> Vec<u8> {
    std::fs::read(repo_root().join("static/dist").join(rel))
        .unwrap_or_else(|e| panic!("static/dist/{rel}: {e}"))
}

/// The app bundle's path (`/assets/app-<HASH>.js`) as index.html references it.
fn app_script(h: &Host) -> String {
    let html = h.get("/").text();
    let start = html
        .find("src=\"/assets/app-")
        .expect("app script in index.html")
        + 5;
    let end = start + html[start..].find(".js").unwrap() + 3;
    html[start..end].to_string()
}

fn assert_security_headers(r: &eve_chat_tests::Response) {
    let csp = r.header("content-security-policy").expect("csp");
    assert!(
        csp.contains("script-src 'self';") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    assert!(csp.contains("frame-ancestors 'none'"), "{csp}");
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert!(r.header("referrer-policy").is_some());
}

#[test]
fn client_routes_serve_the_app_html_with_no_cache_and_security_headers() {
    let h = Host::shared();
    for path in [
        "/",
        "/chat/abc_123-x",
        "/admin",
        "/settings",
        "/signup?invite=abc",
        "/reset?token=abc",
    ] {
        let r = h.get(path);
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("content-type"), Some("text/html; charset=utf-8"));
        assert_eq!(r.header("cache-control"), Some("no-cache"));
        assert!(r.text().contains("<div id=\"app\">"));
        assert_security_headers(&r);
    }
}

#[test]
fn a_matching_if_none_match_answers_304_without_a_body() {
    let h = Host::shared();
    let etag = h.get("/").header("etag").expect("etag").to_string();
    let r = h.send("GET", "/", &[("if-none-match", &etag)], None);
    assert_eq!(r.status, 304);
    assert!(r.body.is_empty());
    assert_eq!(r.header("etag"), Some(etag.as_str()));
}

#[test]
fn assets_are_immutable_and_served_in_the_best_accepted_encoding() {
    let h = Host::shared();
    let path = app_script(&h);
    let rel = path.trim_start_matches('/');
    let br = h.send("GET", &path, &[("accept-encoding", "gzip, br")], None);
    assert_eq!(br.status, 200);
    assert_eq!(br.header("content-encoding"), Some("br"));
    assert_eq!(
        br.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    assert_eq!(br.header("vary"), Some("Accept-Encoding"));
    assert_eq!(br.body, dist_file(&format!("{rel}.br")));
    let plain = h.send("GET", &path, &[("accept-encoding", "identity")], None);
    assert_eq!(plain.header("content-encoding"), None);
    assert_eq!(
        plain.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    assert_eq!(plain.body, dist_file(rel));
    assert_ne!(br.header("etag"), plain.header("etag"));
}

#[test]
fn missing_assets_are_real_404s() {
    let h = Host::shared();
    for path in [
        "/assets/missing-ABCDEFGH.js",
        "/favicon.ico",
        "/.env",
        "/chat/a/b",
    ] {
        let r = h.get(path);
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(r.header("cache-control"), Some("no-store"));
        assert_security_headers(&r);
    }
}

#[test]
fn unknown_api_paths_answer_a_json_404() {
    let h = Host::shared();
    let r = h.get("/api/nope");
    assert_eq!(r.status, 404);
    assert_eq!(r.error_code().as_deref(), Some("not_found"));
    let r = h.json("POST", "/api/nope/deeper", &serde_json::json!({}));
    assert_eq!(r.status, 404);
    assert_eq!(r.error_code().as_deref(), Some("not_found"));
}

#[test]
fn dot_dot_paths_are_refused() {
    let h = Host::shared();
    // (`%2e%2e` alone would be resolved to `..` by the client's URL parser before sending.)
    for path in [
        "/assets/..%2f..%2fCargo.toml",
        "/x/%2e%2e%5c%2e%2e%5cCargo.toml",
    ] {
        assert_eq!(h.get(path).status, 400, "{path}");
    }
}

#[test]
fn only_get_and_head_are_allowed() {
    let h = Host::shared();
    let r = h.send("DELETE", "/", &[], None);
    assert_eq!(r.status, 405);
    assert_eq!(r.header("allow"), Some("GET, HEAD"));
    let r = h.send("HEAD", "/", &[], None);
    assert_eq!(r.status, 200);
    assert!(r.body.is_empty());
}
