//! Sign-in through the local host, end to end: each auth mode, the session cookie's rejections
//! (tampered, truncated, expired, wrong-secret, rotated-secret), cross-site refusal, the login
//! throttle, setup status for each misconfiguration, and OIDC against a local provider
//! (`auth/oidc_provider.rs`). Every test talks HTTP to real `.wasm` components.

use crate::oidc_provider;
use crate::support;

use eve_api::auth::{AuthMode, SessionResponse, SetupStatus, PASSWORD_PRINCIPAL_ID};
use eve_api::{ApiError, ErrorCode};
use eve_auth::config::missing;
use eve_auth::cookie::{SessionClaims, SESSION_COOKIE_NAME, SESSION_LIFETIME_SECS};
use eve_auth::AuthConfig;
use eve_chat_tests::Host;
use oidc_provider::{NextUser, Provider, CLIENT_ID, CLIENT_SECRET};
use support::{start_host, Client, Resp};

const PASSWORD: &str = "correct horse battery staple";
const SECRET: &str = "test-session-secret-0123456789abcdef";
const OLD_SECRET: &str = "test-old-session-secret-0123456789abcd";

/// Spin variables for a host: name → value.
type Vars = Vec<(&'static str, String)>;

fn password_vars() -> Vars {
    vec![
        ("chat_password", PASSWORD.into()),
        ("session_secret", SECRET.into()),
    ]
}

fn vars(pairs: &[(&'static str, &str)]) -> Vars {
    pairs.iter().map(|(k, v)| (*k, v.to_string())).collect()
}

/// A host in password mode (each test its own: hosts start in well under a second, and the
/// login throttle counts per host).
fn password_host() -> Option<Host> {
    start_host(&password_vars())
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The same codec the components build from these variables (to forge cookies in tests).
fn codec_for(pairs: &[(&'static str, String)]) -> eve_auth::SessionCodec {
    let pairs = pairs.to_vec();
    AuthConfig::from_lookup(move |n| pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone()))
        .session_codec()
        .expect("a ready configuration")
}

fn session(client: &Client, cookie: Option<&str>) -> (SessionResponse, Resp) {
    let headers: Vec<(&str, String)> = cookie
        .map(|c| vec![("cookie", format!("{SESSION_COOKIE_NAME}={c}"))])
        .unwrap_or_default();
    let resp = client.get("/api/auth/session", &headers);
    assert_eq!(resp.status, 200, "{}", resp.body);
    (resp.json(), resp)
}

fn login(client: &Client, password: &str) -> Resp {
    client.post_json(
        "/api/auth/login",
        &serde_json::json!({ "password": password }),
        &[],
    )
}

fn error_code(resp: &Resp) -> ErrorCode {
    ApiError::from_json(&resp.body)
        .unwrap_or_else(|| panic!("not an error envelope: {}", resp.body))
        .0
}

// ---------------------------------------------------------------- password mode

#[test]
fn setup_reports_password_mode_ready_when_password_and_secret_are_set() {
    let Some(host) = password_host() else { return };
    let client = Client::of(&host);
    let setup: SetupStatus = client.get("/api/setup", &[]).json();
    assert_eq!(setup.auth_mode, AuthMode::Password);
    assert!(setup.auth_ready, "{setup:?}");
    assert!(setup
        .missing
        .iter()
        .all(|m| !m.starts_with("session_secret") && !m.starts_with("chat_password")));
    let raw = client.get("/api/setup", &[]).body;
    assert!(
        !raw.contains(PASSWORD) && !raw.contains(SECRET),
        "setup must not leak secrets"
    );
}

#[test]
fn password_login_sets_a_signed_http_only_same_site_cookie_for_the_shared_principal() {
    let Some(host) = password_host() else { return };
    let client = Client::of(&host);
    let (signed_out, _) = session(&client, None);
    assert_eq!(signed_out.viewer, None);
    assert_eq!(signed_out.auth_mode, AuthMode::Password);

    let resp = login(&client, PASSWORD);
    assert_eq!(resp.status, 200, "{}", resp.body);
    let set_cookie = resp
        .set_cookie(SESSION_COOKIE_NAME)
        .expect("a session cookie");
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=604800"] {
        assert!(
            set_cookie.contains(attribute),
            "{set_cookie} lacks {attribute}"
        );
    }
    assert!(
        set_cookie.contains("Secure"),
        "a __Host- cookie is Secure, even on loopback http"
    );
    let value = resp.cookie_value(SESSION_COOKIE_NAME).unwrap();
    let (signed_in, _) = session(&client, Some(&value));
    let viewer = signed_in.viewer.expect("signed in");
    assert_eq!(viewer.id, PASSWORD_PRINCIPAL_ID);
    assert_eq!(viewer.mode, AuthMode::Password);
}

#[test]
fn a_wrong_password_is_refused_with_401_and_no_cookie() {
    let Some(host) = password_host() else { return };
    let client = Client::of(&host);
    let resp = login(&client, "correct horse battery stapler");
    assert_eq!(resp.status, 401);
    assert_eq!(error_code(&resp), ErrorCode::Unauthorized);
    assert!(resp.set_cookie(SESSION_COOKIE_NAME).is_none());
    assert!(!resp.body.contains(PASSWORD));
}

#[test]
fn login_requires_a_json_body() {
    let Some(host) = password_host() else { return };
    let client = Client::of(&host);
    let resp = client.request(
        "POST",
        "/api/auth/login",
        &[("content-type", "text/plain".into())],
        Some("x"),
    );
    assert_eq!(resp.status, 415);
    let resp = client.request(
        "POST",
        "/api/auth/login",
        &[("content-type", "application/json".into())],
        Some("{"),
    );
    assert_eq!(resp.status, 400);
}

#[test]
fn tampered_truncated_and_garbage_cookies_are_rejected_and_cleared() {
    let Some(host) = password_host() else { return };
    let client = Client::of(&host);
    let (good, _) = codec_for(&password_vars()).issue(&password_principal(), now());
    let (payload_end, _) = good.rsplit_once('.').unwrap();
    let mut tampered_tag = good.clone().into_bytes();
    let i = tampered_tag.len() - 5;
    tampered_tag[i] = if tampered_tag[i] == b'A' { b'B' } else { b'A' };
    let tampered_tag = String::from_utf8(tampered_tag).unwrap();
    let forged_claims = SessionClaims {
        sub: "someone-else".into(),
        ..SessionClaims::new(&password_principal(), now())
    };
    let forged_payload = eve_auth::crypto::b64url(&serde_json::to_vec(&forged_claims).unwrap());
    let tampered_payload = format!("v1.{forged_payload}.{}", good.rsplit_once('.').unwrap().1);
    for bad in [
        tampered_tag.as_str(),
        tampered_payload.as_str(),
        payload_end,
        &good[..good.len() / 2],
        "garbage",
        "v1..",
    ] {
        let (s, resp) = session(&client, Some(bad));
        assert_eq!(s.viewer, None, "accepted {bad:?}");
        let cleared = resp
            .set_cookie(SESSION_COOKIE_NAME)
            .expect("the bad cookie is cleared");
        assert!(cleared.contains("Max-Age=0"), "{cleared}");
    }
    let (ok, _) = session(&client, Some(&good));
    assert!(ok.viewer.is_some(), "the untampered cookie is accepted");
}

fn password_principal() -> eve_api::auth::Principal {
    eve_api::auth::Principal {
        id: PASSWORD_PRINCIPAL_ID.into(),
        mode: AuthMode::Password,
        name: None,
        email: None,
    }
}

#[test]
fn a_cookie_signed_with_another_secret_is_rejected() {
    let Some(host) = password_host() else { return };
    let client = Client::of(&host);
    let other = vec![
        ("chat_password", PASSWORD.to_string()),
        (
            "session_secret",
            "another-secret-0123456789abcdefghij".to_string(),
        ),
    ];
    let (value, _) = codec_for(&other).issue(&password_principal(), now());
    assert_eq!(session(&client, Some(&value)).0.viewer, None);
}

#[test]
fn a_cookie_signed_for_another_password_is_rejected() {
    let Some(host) = password_host() else { return };
    let client = Client::of(&host);
    let other = vec![
        ("chat_password", "a different shared passphrase".to_string()),
        ("session_secret", SECRET.to_string()),
    ];
    let (value, _) = codec_for(&other).issue(&password_principal(), now());
    assert_eq!(session(&client, Some(&value)).0.viewer, None);
}

#[test]
fn an_expired_cookie_is_rejected() {
    let Some(host) = password_host() else { return };
    let client = Client::of(&host);
    let issued = now() - SESSION_LIFETIME_SECS - 10;
    let value =
        codec_for(&password_vars()).seal(&SessionClaims::new(&password_principal(), issued));
    assert_eq!(session(&client, Some(&value)).0.viewer, None);
}

#[test]
fn a_day_old_cookie_is_refreshed_on_use() {
    let Some(host) = password_host() else { return };
    let client = Client::of(&host);
    let issued = now() - 2 * 24 * 3600;
    let value =
        codec_for(&password_vars()).seal(&SessionClaims::new(&password_principal(), issued));
    let (s, resp) = session(&client, Some(&value));
    assert!(s.viewer.is_some());
    let refreshed = resp
        .set_cookie(SESSION_COOKIE_NAME)
        .expect("a refreshed cookie");
    assert!(
        refreshed.contains("Max-Age=604800") || refreshed.contains("Max-Age=604799"),
        "{refreshed}"
    );
}

#[test]
fn cross_site_login_and_logout_are_refused_with_403() {
    let Some(host) = password_host() else { return };
    let client = Client::of(&host);
    let body = serde_json::json!({ "password": PASSWORD });
    for headers in [
        vec![("origin", "https://evil.example".to_string())],
        vec![("sec-fetch-site", "cross-site".to_string())],
        vec![("origin", "null".to_string())],
    ] {
        let resp = client.post_json("/api/auth/login", &body, &headers);
        assert_eq!(resp.status, 403, "{headers:?}: {}", resp.body);
        assert_eq!(error_code(&resp), ErrorCode::Forbidden);
        assert!(resp.set_cookie(SESSION_COOKIE_NAME).is_none());
        let resp = client.post_json("/api/auth/logout", &serde_json::json!({}), &headers);
        assert_eq!(resp.status, 403);
    }
    let same_origin = vec![
        ("origin", client.base.clone()),
        ("sec-fetch-site", "same-origin".to_string()),
    ];
    let resp = client.post_json("/api/auth/logout", &serde_json::json!({}), &same_origin);
    assert_eq!(resp.status, 200, "{}", resp.body);
}

#[test]
fn logout_clears_the_session_cookie() {
    let Some(host) = password_host() else { return };
    let client = Client::of(&host);
    let resp = client.post_json("/api/auth/logout", &serde_json::json!({}), &[]);
    assert_eq!(resp.status, 200);
    let cleared = resp
        .set_cookie(SESSION_COOKIE_NAME)
        .expect("a clearing cookie");
    assert!(cleared.contains("Max-Age=0"));
    let s: SessionResponse = resp.json();
    assert_eq!(s.viewer, None);
}

#[test]
fn a_cookie_from_the_previous_secret_is_accepted_and_reissued_under_the_new_one() {
    let old = vec![
        ("chat_password", PASSWORD.to_string()),
        ("session_secret", OLD_SECRET.to_string()),
    ];
    let (old_cookie, _) = codec_for(&old).issue(&password_principal(), now());
    let rotated = vec![
        ("chat_password", PASSWORD.to_string()),
        ("session_secret", SECRET.to_string()),
        ("session_secret_previous", OLD_SECRET.to_string()),
    ];
    let Some(host) = start_host(&rotated) else {
        return;
    };
    let client = Client::of(&host);
    let (s, resp) = session(&client, Some(&old_cookie));
    assert_eq!(
        s.viewer.map(|v| v.id).as_deref(),
        Some(PASSWORD_PRINCIPAL_ID)
    );
    let reissued = resp
        .cookie_value(SESSION_COOKIE_NAME)
        .expect("reissued under the new secret");
    let verified = codec_for(&password_vars())
        .verify(&reissued, now())
        .expect("signed with the new secret");
    assert!(!verified.used_previous_secret);
}

#[test]
fn repeated_failures_from_one_address_are_throttled_with_429_and_retry_after() {
    let Some(host) = start_host(&password_vars()) else {
        return;
    };
    let client = Client::of(&host);
    let free = eve_auth::throttle::FREE_FAILURES;
    for attempt in 1..=free {
        let resp = login(&client, "not the password at all");
        assert_eq!(resp.status, 401, "attempt {attempt}: {}", resp.body);
    }
    let resp = login(&client, PASSWORD);
    assert_eq!(resp.status, 429, "{}", resp.body);
    assert_eq!(error_code(&resp), ErrorCode::RateLimited);
    let retry_after: u64 = resp
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .unwrap();
    assert!((1..=eve_auth::throttle::FIRST_DELAY_SECS).contains(&retry_after));
    assert!(
        resp.set_cookie(SESSION_COOKIE_NAME).is_none(),
        "no cookie while throttled, even for the right password"
    );
}

#[test]
fn every_component_rejects_a_missing_or_bad_cookie_with_the_same_401() {
    let Some(host) = password_host() else { return };
    let client = Client::of(&host);
    let codec = codec_for(&password_vars());
    let expired = codec.seal(&SessionClaims::new(
        &password_principal(),
        now() - SESSION_LIFETIME_SECS - 1,
    ));
    let (good, _) = codec.issue(&password_principal(), now());
    let tampered = format!("{}x", &good[..good.len() - 1]);
    let same_origin = || {
        vec![
            ("origin", client.base.clone()),
            ("sec-fetch-site", "same-origin".to_string()),
        ]
    };
    let expected = r#"{"error":{"code":"unauthorized","message":"sign in first"}}"#;
    for cookie in [
        None,
        Some("garbage"),
        Some(tampered.as_str()),
        Some(expired.as_str()),
    ] {
        let with_cookie = |mut h: Vec<(&'static str, String)>| {
            if let Some(c) = cookie {
                h.push(("cookie", format!("{SESSION_COOKIE_NAME}={c}")));
            }
            h
        };
        let answers = [
            (
                "chats: list",
                client.get("/api/chats", &with_cookie(vec![])),
            ),
            (
                "chats: one",
                client.get("/api/chats/some-chat", &with_cookie(vec![])),
            ),
            (
                "events: pending",
                client.request(
                    "PUT",
                    "/api/chats/some-chat/pending",
                    &with_cookie(
                        [
                            same_origin(),
                            vec![("content-type", "application/json".to_string())],
                        ]
                        .concat(),
                    ),
                    Some(r#"{"message":"hi"}"#),
                ),
            ),
        ];
        for (what, resp) in answers {
            assert_eq!(
                (resp.status, resp.body.as_str()),
                (401, expected),
                "{what} with cookie {cookie:?}"
            );
        }
    }
    let ok = client.get(
        "/api/chats",
        &[("cookie", format!("{SESSION_COOKIE_NAME}={good}"))],
    );
    assert_eq!(ok.status, 200, "{}", ok.body);
}

#[test]
fn a_cross_site_write_to_another_component_is_refused_with_403() {
    let Some(host) = password_host() else { return };
    let client = Client::of(&host);
    let (good, _) = codec_for(&password_vars()).issue(&password_principal(), now());
    let headers = vec![
        ("cookie", format!("{SESSION_COOKIE_NAME}={good}")),
        ("origin", "https://evil.example".to_string()),
    ];
    let resp = client.post_json("/api/chats", &serde_json::json!({}), &headers);
    assert_eq!(resp.status, 403, "{}", resp.body);
    assert_eq!(error_code(&resp), ErrorCode::Forbidden);
    let listed = client.get(
        "/api/chats",
        &[("cookie", format!("{SESSION_COOKIE_NAME}={good}"))],
    );
    assert_eq!(
        listed.json::<serde_json::Value>()["chats"],
        serde_json::json!([]),
        "nothing was written"
    );
}

#[test]
fn behind_an_https_base_url_the_cookie_is_secure_and_that_origin_is_same_site() {
    let mut config = password_vars();
    config.push(("app_base_url", "https://chat.example.com".into()));
    let Some(host) = start_host(&config) else {
        return;
    };
    let client = Client::of(&host);
    let headers = vec![("origin", "https://chat.example.com".to_string())];
    let resp = client.post_json(
        "/api/auth/login",
        &serde_json::json!({ "password": PASSWORD }),
        &headers,
    );
    assert_eq!(resp.status, 200, "{}", resp.body);
    let cookie = resp.set_cookie(SESSION_COOKIE_NAME).unwrap();
    assert!(cookie.ends_with("; Secure"), "{cookie}");
}

// ---------------------------------------------------------------- local-dev and unconfigured

#[test]
fn local_dev_mode_signs_everyone_in_as_the_local_developer() {
    let Some(host) = start_host(&vars(&[("auth_mode", "local-dev")])) else {
        return;
    };
    let client = Client::of(&host);
    let setup: SetupStatus = client.get("/api/setup", &[]).json();
    assert_eq!(setup.auth_mode, AuthMode::LocalDev);
    assert!(setup.auth_ready);
    let (s, _) = session(&client, None);
    assert_eq!(
        s.viewer.map(|v| v.id).as_deref(),
        Some(eve_api::auth::LOCAL_DEV_PRINCIPAL_ID)
    );
    let resp = login(&client, PASSWORD);
    assert_eq!(resp.status, 400, "no password sign-in in local-dev");
}

#[test]
fn an_unconfigured_deployment_says_what_is_missing_and_signs_nobody_in() {
    let Some(host) = start_host(&[]) else { return };
    let client = Client::of(&host);
    let setup: SetupStatus = client.get("/api/setup", &[]).json();
    assert_eq!(setup.auth_mode, AuthMode::Unconfigured);
    assert!(!setup.auth_ready && !setup.app_ready);
    assert_eq!(setup.storage_mode, eve_api::auth::StorageMode::Database);
    assert!(
        setup.missing.iter().any(|m| m == missing::NO_MODE),
        "{:?}",
        setup.missing
    );
    assert!(setup
        .missing
        .iter()
        .any(|m| m == missing::SESSION_SECRET_UNSET));
    assert_eq!(session(&client, None).0.viewer, None);
    let resp = login(&client, PASSWORD);
    assert_eq!(resp.status, 503);
    assert_eq!(error_code(&resp), ErrorCode::NotConfigured);
}

#[test]
fn setup_names_each_misconfiguration() {
    let cases: Vec<(Vars, AuthMode, &str)> = vec![
        (
            vars(&[("chat_password", PASSWORD)]),
            AuthMode::Password,
            missing::SESSION_SECRET_UNSET,
        ),
        (
            vars(&[("chat_password", PASSWORD), ("session_secret", "short")]),
            AuthMode::Password,
            missing::SESSION_SECRET_SHORT,
        ),
        (
            vars(&[("chat_password", "short-pass"), ("session_secret", SECRET)]),
            AuthMode::Unconfigured,
            missing::CHAT_PASSWORD_WEAK,
        ),
        (
            vars(&[
                ("oidc_issuer", "https://id.example.com"),
                ("oidc_client_id", "eve"),
                ("session_secret", SECRET),
            ]),
            AuthMode::Unconfigured,
            missing::OIDC_CLIENT_SECRET_UNSET,
        ),
    ];
    for (config, mode, item) in cases {
        let Some(host) = start_host(&config) else {
            return;
        };
        let client = Client::of(&host);
        let setup: SetupStatus = client.get("/api/setup", &[]).json();
        assert_eq!(setup.auth_mode, mode, "{config:?}");
        assert!(!setup.auth_ready && !setup.app_ready, "{config:?}");
        assert!(
            setup.missing.iter().any(|m| m == item),
            "{config:?}: {:?}",
            setup.missing
        );
        let raw = client.get("/api/setup", &[]).body;
        assert!(!raw.contains("short-pass"), "setup leaked the password");
    }
}

// ---------------------------------------------------------------- OIDC

struct OidcEnv {
    provider: Provider,
    host: Host,
}

/// A local provider and a host in OIDC mode configured for it.
fn oidc_env() -> Option<OidcEnv> {
    let provider = Provider::start();
    let host = start_host(&vars(&[
        ("oidc_issuer", &provider.issuer),
        ("oidc_client_id", CLIENT_ID),
        ("oidc_client_secret", CLIENT_SECRET),
        ("oidc_allowed_domains", "example.com"),
        ("session_secret", SECRET),
    ]))?;
    Some(OidcEnv { provider, host })
}

/// `start` → provider authorize → the callback URL the provider sends the browser to, plus the
/// flow cookie the start set.
fn oidc_start(client: &Client, return_to: &str) -> (String, String) {
    let start = client.get(&format!("/api/auth/oidc/start?returnTo={return_to}"), &[]);
    assert_eq!(start.status, 303, "{}", start.body);
    let flow_cookie = start
        .cookie_value("__Host-eve_chat_oidc")
        .expect("a flow cookie");
    let flow_set = start.set_cookie("__Host-eve_chat_oidc").unwrap();
    assert!(
        flow_set.contains("; Path=/;")
            && flow_set.contains("HttpOnly")
            && flow_set.contains("; Secure")
            && !flow_set.contains("Domain"),
        "the __Host- rules: {flow_set}"
    );
    let authorize = start
        .header("location")
        .expect("a redirect to the provider")
        .to_string();
    let at_provider = client.get_url(&authorize, &[]);
    assert_eq!(at_provider.status, 302, "{}", at_provider.body);
    let callback = at_provider.header("location").unwrap().to_string();
    assert!(
        callback.starts_with(&format!("{}/api/auth/oidc/callback?", client.base)),
        "{callback}"
    );
    (callback, flow_cookie)
}

fn oidc_callback(client: &Client, callback: &str, flow_cookie: &str) -> Resp {
    client.get_url(
        callback,
        &[("cookie", format!("__Host-eve_chat_oidc={flow_cookie}"))],
    )
}

/// `user` signs in with the provider through the whole flow: the session cookie's value
/// (panics with the callback's answer when none was set).
fn oidc_signed_in(client: &Client, provider: &Provider, user: NextUser) -> String {
    provider.set_next_user(user);
    let (callback, flow) = oidc_start(client, "/");
    let done = oidc_callback(client, &callback, &flow);
    done.cookie_value(SESSION_COOKIE_NAME)
        .unwrap_or_else(|| panic!("{} {:?}", done.status, done.header("location")))
}

fn auth_error(resp: &Resp) -> String {
    assert_eq!(resp.status, 303, "{}", resp.body);
    let location = resp.header("location").unwrap();
    assert!(location.starts_with("/?authError="), "{location}");
    location.to_string()
}

#[test]
fn oidc_sign_in_works_end_to_end_with_a_principal_per_subject() {
    let Some(env) = oidc_env() else { return };
    let client = Client::of(&env.host);
    let setup: SetupStatus = client.get("/api/setup", &[]).json();
    assert_eq!(setup.auth_mode, AuthMode::Oidc);
    assert!(setup.auth_ready, "{:?}", setup.missing);

    env.provider.set_next_user(NextUser::default());
    let (callback, flow) = oidc_start(&client, "/chat/abc");
    let done = oidc_callback(&client, &callback, &flow);
    assert_eq!(done.status, 303, "{}", done.body);
    assert_eq!(done.header("location"), Some("/chat/abc"));
    let session_cookie = done
        .cookie_value(SESSION_COOKIE_NAME)
        .expect("a session cookie");
    let cleared = done
        .set_cookie("__Host-eve_chat_oidc")
        .expect("the flow cookie is cleared");
    assert!(cleared.contains("Max-Age=0"));
    let viewer = session(&client, Some(&session_cookie))
        .0
        .viewer
        .expect("signed in");
    assert_eq!(viewer.mode, AuthMode::Oidc);
    assert_eq!(viewer.email.as_deref(), Some("eve@example.com"));
    assert_eq!(viewer.name.as_deref(), Some("Eve Example"));
    assert!(
        viewer.id.starts_with("oidc:") && viewer.id.ends_with(":user-1"),
        "{}",
        viewer.id
    );

    env.provider.set_next_user(NextUser {
        sub: "user-2".into(),
        email: Some("bob@example.com".into()),
        ..NextUser::default()
    });
    let (callback, flow) = oidc_start(&client, "/");
    let other = oidc_callback(&client, &callback, &flow)
        .cookie_value(SESSION_COOKIE_NAME)
        .unwrap();
    let other_viewer = session(&client, Some(&other)).0.viewer.unwrap();
    assert_ne!(other_viewer.id, viewer.id);
}

/// Accounts mode with OIDC alongside (issue 20): the first sign-in of a provider user makes an
/// account (admin when listed in `oidc_admin_emails`), later ones reuse it.
#[test]
fn oidc_in_accounts_mode_signs_in_as_an_account() {
    let provider = Provider::start();
    let Some(host) = start_host(&vars(&[
        ("auth_mode", "accounts"),
        ("oidc_issuer", &provider.issuer),
        ("oidc_client_id", CLIENT_ID),
        ("oidc_client_secret", CLIENT_SECRET),
        ("oidc_allowed_domains", "example.com"),
        ("oidc_admin_emails", "eve@example.com"),
        ("session_secret", SECRET),
    ])) else {
        return;
    };
    let client = Client::of(&host);
    let setup: SetupStatus = client.get("/api/setup", &[]).json();
    assert_eq!(setup.auth_mode, AuthMode::Accounts);
    assert!(setup.auth_ready && setup.accounts_need_admin, "{setup:?}");
    let sign_in = |user: NextUser| {
        let cookie = oidc_signed_in(&client, &provider, user);
        let viewer = session(&client, Some(&cookie)).0.viewer.expect("signed in");
        let account = client.get(
            "/api/auth/account",
            &[("cookie", format!("{SESSION_COOKIE_NAME}={cookie}"))],
        );
        assert_eq!(account.status, 200, "{}", account.body);
        let role = account.json::<serde_json::Value>()["role"].clone();
        (viewer, role)
    };
    let (eve, role) = sign_in(NextUser::default());
    assert_eq!(eve.mode, AuthMode::Accounts);
    assert!(eve.id.starts_with("user:"), "{}", eve.id);
    assert_eq!(role, "admin");
    let (again, _) = sign_in(NextUser::default());
    assert_eq!(again.id, eve.id, "one account per provider user");
    let (bob, role) = sign_in(NextUser {
        sub: "user-2".into(),
        email: Some("bob@example.com".into()),
        ..NextUser::default()
    });
    assert_ne!(bob.id, eve.id);
    assert_eq!(role, "member");
    let setup: SetupStatus = client.get("/api/setup", &[]).json();
    assert!(!setup.accounts_need_admin);
}

/// Issue 32 (high): a password sign-up never proved it owns its address, so the provider
/// user with that (verified) address must not land in it — nor may an `oidc_admin_emails`
/// address be squatted with a password before its owner signs in.
#[test]
fn oidc_never_signs_in_to_a_password_account_of_the_same_email() {
    let provider = Provider::start();
    let Some(host) = start_host(&vars(&[
        ("auth_mode", "accounts"),
        ("oidc_issuer", &provider.issuer),
        ("oidc_client_id", CLIENT_ID),
        ("oidc_client_secret", CLIENT_SECRET),
        ("oidc_allowed_domains", "example.com"),
        ("oidc_admin_emails", "boss@example.com"),
        ("signup_allowed_domains", "example.com"),
        ("session_secret", SECRET),
    ])) else {
        return;
    };
    let client = Client::of(&host);
    let password = "a password nobody verified";
    let signup = |email: &str| {
        client.post_json(
            "/api/auth/signup",
            &serde_json::json!({"email": email, "password": password}),
            &[],
        )
    };
    let squatter = signup("eve@example.com");
    assert_eq!(squatter.status, 201, "{}", squatter.body);
    let squatter = squatter.json::<SessionResponse>().viewer.unwrap();

    provider.set_next_user(NextUser::default());
    let (callback, flow) = oidc_start(&client, "/");
    let refused = oidc_callback(&client, &callback, &flow);
    assert!(auth_error(&refused).contains("authError=account_exists"));
    assert!(refused.cookie_value(SESSION_COOKIE_NAME).is_none());

    // The password still signs in to its own account, which nobody else shares.
    let login = client.post_json(
        "/api/auth/login",
        &serde_json::json!({"email": "eve@example.com", "password": password}),
        &[],
    );
    assert_eq!(login.status, 200, "{}", login.body);
    assert_eq!(
        login.json::<SessionResponse>().viewer.unwrap().id,
        squatter.id
    );

    // The admin's address cannot be taken first; its owner's sign-in makes the admin.
    let early = signup("boss@example.com");
    assert_eq!(early.status, 403, "{}", early.body);
    provider.set_next_user(NextUser {
        sub: "boss".into(),
        email: Some("boss@example.com".into()),
        ..NextUser::default()
    });
    let (callback, flow) = oidc_start(&client, "/");
    let boss = oidc_callback(&client, &callback, &flow)
        .cookie_value(SESSION_COOKIE_NAME)
        .expect("the admin signs in");
    let account = client.get(
        "/api/auth/account",
        &[("cookie", format!("{SESSION_COOKIE_NAME}={boss}"))],
    );
    assert_eq!(account.json::<serde_json::Value>()["role"], "admin");
}

/// Issue 32 (8): in accounts mode an account made by OIDC (no password) stays held to
/// `oidc_allowed_*` after it signed in, as OIDC mode's sessions are: once the lists no longer
/// allow its email, its cookie and its API token are refused at their next request, while an
/// account the lists still allow goes on.
#[test]
fn an_oidc_account_no_longer_allowed_is_refused_with_its_cookie_and_its_token() {
    let provider = Provider::start();
    let Some(mut host) = start_host(&vars(&[
        ("auth_mode", "accounts"),
        ("oidc_issuer", &provider.issuer),
        ("oidc_client_id", CLIENT_ID),
        ("oidc_client_secret", CLIENT_SECRET),
        ("oidc_allowed_domains", "example.com"),
        ("session_secret", SECRET),
    ])) else {
        return;
    };
    let client = Client::of(&host);
    let sign_in = |user: NextUser| {
        let cookie = oidc_signed_in(&client, &provider, user);
        format!("{SESSION_COOKIE_NAME}={cookie}")
    };
    let eve = sign_in(NextUser::default());
    let bob = sign_in(NextUser {
        sub: "user-2".into(),
        email: Some("bob@example.com".into()),
        ..NextUser::default()
    });
    let created = client.post_json(
        "/api/tokens",
        &serde_json::json!({"name": "cli", "expiresInDays": 1}),
        &[("cookie", eve.clone())],
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let token = created.json::<serde_json::Value>()["token"]
        .as_str()
        .unwrap()
        .to_string();
    let chats =
        |client: &Client, header: (&str, String)| client.get("/api/chats", &[header]).status;
    let bearer = ("authorization", format!("Bearer {token}"));
    assert_eq!(chats(&client, ("cookie", eve.clone())), 200);
    assert_eq!(chats(&client, bearer.clone()), 200);

    // The deployment narrows who may sign in with OIDC: bob by name, nobody else.
    host.restart_with_vars(&[
        ("oidc_allowed_domains", "other.example"),
        ("oidc_allowed_emails", "bob@example.com"),
    ]);
    let client = Client::of(&host);
    assert_eq!(chats(&client, ("cookie", eve.clone())), 401);
    assert_eq!(chats(&client, bearer), 401, "the API token too");
    let cookie = eve.split_once('=').unwrap().1;
    assert!(session(&client, Some(cookie)).0.viewer.is_none());
    assert_eq!(chats(&client, ("cookie", bob)), 200, "still allowed");
}

#[test]
fn oidc_takes_the_email_from_userinfo_when_the_id_token_lacks_it() {
    let Some(env) = oidc_env() else { return };
    let client = Client::of(&env.host);
    let cookie = oidc_signed_in(
        &client,
        &env.provider,
        NextUser {
            email_only_in_userinfo: true,
            ..NextUser::default()
        },
    );
    let viewer = session(&client, Some(&cookie)).0.viewer.unwrap();
    assert_eq!(viewer.email.as_deref(), Some("eve@example.com"));
}

#[test]
fn oidc_with_a_wrong_state_is_refused() {
    let Some(env) = oidc_env() else { return };
    let client = Client::of(&env.host);
    env.provider.set_next_user(NextUser::default());
    let (callback, flow) = oidc_start(&client, "/");
    let (base, query) = callback.split_once('?').unwrap();
    let forged: String = query
        .split('&')
        .map(|p| {
            if p.starts_with("state=") {
                "state=forged-state".to_string()
            } else {
                p.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("&");
    let resp = oidc_callback(&client, &format!("{base}?{forged}"), &flow);
    assert!(auth_error(&resp).contains("authError=invalid_state"));
    assert!(resp.cookie_value(SESSION_COOKIE_NAME).is_none());

    // Without the flow cookie (another browser), the genuine callback URL is refused too.
    let resp = client.get_url(&callback, &[]);
    assert!(auth_error(&resp).contains("authError=invalid_state"));
}

#[test]
fn oidc_with_a_replayed_callback_is_refused_before_it_reaches_the_provider() {
    let Some(env) = oidc_env() else { return };
    let client = Client::of(&env.host);
    env.provider.set_next_user(NextUser::default());
    let (callback, flow) = oidc_start(&client, "/");
    let first = oidc_callback(&client, &callback, &flow);
    assert!(first.cookie_value(SESSION_COOKIE_NAME).is_some());
    assert_eq!(env.provider.token_requests(), 1);
    // The same callback URL with the same flow cookie (someone who copied both): each flow
    // is single-use, so nothing more is sent to the provider with the client secret.
    for _ in 0..3 {
        let replay = oidc_callback(&client, &callback, &flow);
        let location = auth_error(&replay);
        assert!(location.contains("authError=flow_used"), "{location}");
        assert!(replay.cookie_value(SESSION_COOKIE_NAME).is_none());
    }
    assert_eq!(
        env.provider.token_requests(),
        1,
        "no replay reached the provider's token endpoint"
    );
}

#[test]
fn oidc_without_an_email_is_refused() {
    let Some(env) = oidc_env() else { return };
    let client = Client::of(&env.host);
    env.provider.set_next_user(NextUser {
        email: None,
        ..NextUser::default()
    });
    let (callback, flow) = oidc_start(&client, "/");
    let resp = oidc_callback(&client, &callback, &flow);
    assert!(auth_error(&resp).contains("authError=email_required"));
    assert!(resp.cookie_value(SESSION_COOKIE_NAME).is_none());
}

#[test]
fn oidc_provider_errors_are_reported_to_the_ui() {
    let Some(env) = oidc_env() else { return };
    let client = Client::of(&env.host);
    env.provider.set_next_user(NextUser {
        deny: true,
        ..NextUser::default()
    });
    let (callback, flow) = oidc_start(&client, "/");
    let resp = oidc_callback(&client, &callback, &flow);
    let location = auth_error(&resp);
    assert!(
        location.contains("authError=provider_error") && location.contains("access_denied"),
        "{location}"
    );
    env.provider.set_next_user(NextUser::default());
}

#[test]
fn oidc_start_only_returns_to_paths_on_this_site() {
    let Some(env) = oidc_env() else { return };
    let client = Client::of(&env.host);
    env.provider.set_next_user(NextUser::default());
    let (callback, flow) = oidc_start(&client, "//evil.example/phish");
    let done = oidc_callback(&client, &callback, &flow);
    assert_eq!(done.header("location"), Some("/"));
}

#[test]
fn password_login_is_not_available_in_oidc_mode() {
    let Some(env) = oidc_env() else { return };
    let resp = login(&Client::of(&env.host), PASSWORD);
    assert_eq!(resp.status, 400);
}
