//! The token rules over a real (in-memory) SQLite with the app's migrations.

use super::*;
use eve_sql_testing::Db;

const NOW: Millis = 1_800_000_000_000;

fn db() -> Db {
    let db = Db::memory();
    eve_store::migrations::migrate(&db, 0).unwrap();
    db
}

fn principal(id: &str, mode: AuthMode, email: Option<&str>) -> Principal {
    Principal {
        id: id.into(),
        mode,
        name: Some("Ada".into()),
        email: email.map(str::to_string),
    }
}

fn password_user() -> Principal {
    principal("eve-chat-user", AuthMode::Password, None)
}

fn config(vars: &[(&str, &str)]) -> AuthConfig {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    AuthConfig::from_lookup(move |n| vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone()))
}

fn password_config() -> AuthConfig {
    config(&[
        ("auth_mode", "password"),
        ("chat_password", "correct horse battery staple"),
        ("session_secret", "0123456789abcdef0123456789abcdef"),
    ])
}

fn oidc_config(allowed_domains: &str) -> AuthConfig {
    config(&[
        ("auth_mode", "oidc"),
        ("oidc_issuer", "https://id.example.com"),
        ("oidc_client_id", "eve-chat"),
        ("oidc_client_secret", "client-secret"),
        ("oidc_allowed_domains", allowed_domains),
        ("session_secret", "0123456789abcdef0123456789abcdef"),
    ])
}

fn stored_hashes(db: &Db) -> Vec<String> {
    db.execute("SELECT token_hash FROM api_token", vec![])
        .unwrap()
        .into_iter()
        .filter_map(|r| r.into_iter().next()?.into_string())
        .collect()
}

#[test]
fn a_new_token_has_the_documented_shape_and_only_its_hash_is_stored() {
    let db = db();
    let new = create(&db, &password_user(), "  ci  ", None, NOW).unwrap();
    let (id, secret) = parse(&new.token).expect("its own format parses");
    assert_eq!(id, new.info.id);
    assert_eq!(secret.len(), 43);
    assert!(new.token.starts_with("evc_"));
    assert_eq!(new.info.name, "ci");
    assert_eq!(new.info.expires_at, format_iso_ms(NOW + 90 * DAY_MS));
    assert_eq!(stored_hashes(&db), vec![hash(&new.token)]);
    let everything: String = db
        .execute("SELECT * FROM api_token", vec![])
        .unwrap()
        .concat()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    assert!(!everything.contains(secret), "the secret is not stored");
}

#[test]
fn names_and_expiries_outside_the_rules_are_refused_and_nothing_is_written() {
    let db = db();
    let user = password_user();
    let long = "x".repeat(101);
    for (name, days) in [
        ("", None),
        ("   ", None),
        (long.as_str(), None),
        ("tab\there", None),
        ("bell\u{7}", None),
        ("ok", Some(0)),
        ("ok", Some(366)),
    ] {
        let err = create(&db, &user, name, days, NOW).unwrap_err();
        assert_eq!(err.api_error().status(), 400, "{name:?} {days:?}");
    }
    assert!(stored_hashes(&db).is_empty());
    let hundred = "é".repeat(100);
    assert!(create(&db, &user, &hundred, Some(1), NOW).is_ok());
    assert!(create(&db, &user, "year", Some(365), NOW).is_ok());
}

#[test]
fn a_token_verifies_until_it_is_revoked_or_expires() {
    let db = db();
    let new = create(&db, &password_user(), "ci", Some(1), NOW).unwrap();
    let found = verify(&db, &new.token, NOW + 1).unwrap().expect("valid");
    assert_eq!(found.principal, "eve-chat-user");
    assert_eq!(found.mode, "password");
    let expiry = NOW + DAY_MS;
    assert!(verify(&db, &new.token, expiry - 1).unwrap().is_some());
    assert!(verify(&db, &new.token, expiry).unwrap().is_none());

    let other = create(&db, &password_user(), "cli", None, NOW).unwrap();
    assert_eq!(
        revoke(&db, "eve-chat-user", &other.info.id, NOW + 5).unwrap(),
        Revoked::Now
    );
    assert!(verify(&db, &other.token, NOW + 6).unwrap().is_none());
    assert_eq!(
        revoke(&db, "eve-chat-user", &other.info.id, NOW + 7).unwrap(),
        Revoked::Already,
        "revoking again succeeds and keeps the first time"
    );
    let listed = list(&db, "eve-chat-user").unwrap();
    let revoked = listed.iter().find(|t| t.id == other.info.id).unwrap();
    assert_eq!(revoked.revoked_at, Some(format_iso_ms(NOW + 5)));
}

#[test]
fn malformed_unknown_and_altered_tokens_do_not_verify() {
    let db = db();
    let new = create(&db, &password_user(), "ci", None, NOW).unwrap();
    let (id, secret) = parse(&new.token).unwrap();
    let flipped = {
        let mut s = secret.to_string();
        let last = if s.ends_with('A') { "B" } else { "A" };
        s.replace_range(42.., last);
        format!("evc_{id}_{s}")
    };
    let unknown = format!("evc_{}_{secret}", "0".repeat(24));
    for bad in [
        "",
        "evc_",
        "Bearer x",
        &new.token[..new.token.len() - 1],
        &format!("{}x", new.token),
        &new.token.replace("evc_", "EVC_"),
        &new.token.to_uppercase(),
        &flipped,
        &unknown,
    ] {
        assert!(verify(&db, bad, NOW).unwrap().is_none(), "{bad:?}");
    }
}

#[test]
fn the_last_use_is_written_at_most_once_a_minute() {
    let db = db();
    let new = create(&db, &password_user(), "ci", None, NOW).unwrap();
    let last_used = |db: &Db| list(db, "eve-chat-user").unwrap()[0].last_used_at.clone();
    assert_eq!(last_used(&db), None);
    verify(&db, &new.token, NOW + 1_000).unwrap().unwrap();
    assert_eq!(last_used(&db), Some(format_iso_ms(NOW + 1_000)));
    verify(&db, &new.token, NOW + 30_000).unwrap().unwrap();
    assert_eq!(last_used(&db), Some(format_iso_ms(NOW + 1_000)));
    verify(&db, &new.token, NOW + 61_000).unwrap().unwrap();
    assert_eq!(last_used(&db), Some(format_iso_ms(NOW + 61_000)));
}

#[test]
fn only_the_owner_can_revoke_and_lists_are_per_principal() {
    let db = db();
    let a = principal("oidc:a", AuthMode::Oidc, Some("a@example.com"));
    let b = principal("oidc:b", AuthMode::Oidc, Some("b@example.com"));
    let ta = create(&db, &a, "a's", None, NOW).unwrap();
    create(&db, &b, "b's", None, NOW).unwrap();
    assert_eq!(
        revoke(&db, &b.id, &ta.info.id, NOW).unwrap_err(),
        TokenError::NotFound
    );
    assert_eq!(
        revoke(&db, &b.id, "nonexistent", NOW).unwrap_err(),
        TokenError::NotFound
    );
    assert!(verify(&db, &ta.token, NOW).unwrap().is_some());
    let names: Vec<String> = list(&db, &b.id)
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, vec!["b's".to_string()]);
}

#[test]
fn revoking_all_of_a_principal_leaves_other_principals_tokens() {
    let db = db();
    let a = principal("user:a", AuthMode::Accounts, Some("a@example.com"));
    let b = principal("user:b", AuthMode::Accounts, Some("b@example.com"));
    let ta = create(&db, &a, "a's", None, NOW).unwrap();
    let ta2 = create(&db, &a, "a's second", None, NOW).unwrap();
    let tb = create(&db, &b, "b's", None, NOW).unwrap();
    revoke(&db, &a.id, &ta2.info.id, NOW).unwrap();
    assert_eq!(
        revoke_all(&db, &a.id, NOW + 1).unwrap(),
        vec![ta.info.id.clone()],
        "only the live one is revoked now"
    );
    assert!(verify(&db, &ta.token, NOW + 2).unwrap().is_none());
    assert!(verify(&db, &tb.token, NOW + 2).unwrap().is_some());
    assert!(revoke_all(&db, &a.id, NOW + 3).unwrap().is_empty());
}

#[test]
fn fifty_live_tokens_is_the_cap_and_dead_ones_do_not_count() {
    let db = db();
    let user = password_user();
    let first = create(&db, &user, "t0", None, NOW).unwrap();
    for i in 1..MAX_LIVE_TOKENS {
        create(&db, &user, &format!("t{i}"), None, NOW).unwrap();
    }
    let over = create(&db, &user, "one more", None, NOW).unwrap_err();
    assert_eq!(over, TokenError::TooMany);
    assert_eq!(over.api_error().status(), 409);
    assert!(create(&db, &password_principal_other(), "other", None, NOW).is_ok());
    revoke(&db, &user.id, &first.info.id, NOW).unwrap();
    assert!(create(&db, &user, "after a revoke", None, NOW).is_ok());
}

fn password_principal_other() -> Principal {
    principal("someone-else", AuthMode::Password, None)
}

#[test]
fn dead_tokens_are_pruned_to_the_newest_fifty() {
    let db = db();
    let user = password_user();
    for i in 0..(KEPT_DEAD_TOKENS + 10) {
        let t = create(&db, &user, &format!("t{i}"), None, NOW + i).unwrap();
        revoke(&db, &user.id, &t.info.id, NOW + i).unwrap();
    }
    create(&db, &user, "live", None, NOW + 1_000).unwrap();
    let listed = list(&db, &user.id).unwrap();
    assert_eq!(listed.len() as i64, KEPT_DEAD_TOKENS + 1);
    assert_eq!(listed[0].name, "live");
    assert_eq!(listed.last().unwrap().name, "t10");
}

#[test]
fn a_token_applies_only_in_the_mode_it_was_made_in_and_oidc_rechecks_the_allowlist() {
    let db = db();
    let pw = create(&db, &password_user(), "pw", None, NOW).unwrap();
    let pw = verify(&db, &pw.token, NOW).unwrap().unwrap();
    let as_principal = principal_for(&pw, &password_config()).expect("password mode");
    assert_eq!(as_principal.id, "eve-chat-user");
    assert_eq!(as_principal.mode, AuthMode::Password);
    assert!(principal_for(&pw, &oidc_config("example.com")).is_none());
    assert!(principal_for(&pw, &config(&[("auth_mode", "local-dev")])).is_none());
    assert!(principal_for(&pw, &config(&[])).is_none());

    let ada = principal("oidc:ada", AuthMode::Oidc, Some("ada@example.com"));
    let t = create(&db, &ada, "oidc", None, NOW).unwrap();
    let t = verify(&db, &t.token, NOW).unwrap().unwrap();
    let p = principal_for(&t, &oidc_config("example.com")).expect("allowed");
    assert_eq!(p.email.as_deref(), Some("ada@example.com"));
    assert_eq!(p.name.as_deref(), Some("Ada"));
    assert!(principal_for(&t, &oidc_config("other.example")).is_none());
    assert!(principal_for(&t, &password_config()).is_none());
}
