//! The account flows over a real SQLite (in memory) with every migration applied.

use eve_accounts::accounts::{self, NewAccount, OidcUser};
use eve_accounts::{admin, audit, invites, resets, signup};
use eve_api::accounts::{AccountPatch, InviteCreate, Role, SignupRequest, UserPatch};
use eve_api::ErrorCode;
use eve_auth::AuthConfig;
use eve_sql_testing::Db;
use eve_store::sql::{Sql, SqlValue};

const NOW: i64 = 1_800_000_000_000;
const PASSWORD: &str = "correct horse battery";

fn db() -> Db {
    let db = Db::memory();
    eve_store::migrations::migrate(&db, 0).unwrap();
    db
}

fn config(vars: &[(&str, &str)]) -> AuthConfig {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    AuthConfig::from_lookup(|n| vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone()))
}

fn setup_config() -> AuthConfig {
    config(&[
        ("auth_mode", "accounts"),
        ("admin_setup_token", "the-setup-token-of-this-test"),
        ("signup_allowed_domains", "open.example"),
    ])
}

fn req(email: &str) -> SignupRequest {
    SignupRequest {
        email: email.into(),
        password: PASSWORD.into(),
        display_name: None,
        setup_token: None,
        invite_token: None,
    }
}

fn count(db: &Db, sql: &str) -> i64 {
    db.execute(sql, vec![]).unwrap()[0][0].as_i64().unwrap()
}

fn first_admin(db: &Db) -> accounts::Account {
    let r = SignupRequest {
        setup_token: Some("the-setup-token-of-this-test".into()),
        ..req("Boss@Example.com")
    };
    signup::sign_up(db, &setup_config(), &r, NOW).unwrap().0
}

/// A member with `email` and [`PASSWORD`], made directly.
fn member(db: &Db, email: &str) -> accounts::Account {
    let new = NewAccount::parse(email, PASSWORD, None).unwrap();
    accounts::create(db, &new, Role::Member, NOW).unwrap()
}

#[test]
fn the_setup_token_makes_one_admin_once() {
    let db = db();
    let c = setup_config();
    let wrong = SignupRequest {
        setup_token: Some("guess".into()),
        ..req("a@example.com")
    };
    assert_eq!(
        signup::sign_up(&db, &c, &wrong, NOW).unwrap_err().code,
        ErrorCode::Forbidden
    );
    assert!(!accounts::admin_exists(&db).unwrap());
    let admin = first_admin(&db);
    assert_eq!(admin.role, Role::Admin);
    assert_eq!(admin.email, "boss@example.com");
    let again = SignupRequest {
        setup_token: Some("the-setup-token-of-this-test".into()),
        ..req("second@example.com")
    };
    let e = signup::sign_up(&db, &c, &again, NOW).unwrap_err();
    assert_eq!(e.code, ErrorCode::Forbidden);
    assert_eq!(count(&db, "SELECT count(*) FROM account"), 1);
    // Without a configured token nothing matches, not even an empty one.
    let unset = config(&[("auth_mode", "accounts")]);
    assert!(!signup::setup_token_matches(&unset, ""));
}

#[test]
fn signup_checks_its_input_before_writing() {
    let db = db();
    let c = setup_config();
    let short = SignupRequest {
        password: "short".into(),
        ..req("ann@open.example")
    };
    assert_eq!(
        signup::sign_up(&db, &c, &short, NOW).unwrap_err().code,
        ErrorCode::BadRequest
    );
    let bad_name = SignupRequest {
        display_name: Some("a\u{7}b".into()),
        ..req("ann@open.example")
    };
    assert_eq!(
        signup::sign_up(&db, &c, &bad_name, NOW).unwrap_err().code,
        ErrorCode::BadRequest
    );
    assert_eq!(count(&db, "SELECT count(*) FROM account"), 0);
}

#[test]
fn open_signup_is_for_listed_domains_only_and_makes_members() {
    let db = db();
    let c = setup_config();
    let (a, way) = signup::sign_up(&db, &c, &req("ann@Open.Example"), NOW).unwrap();
    assert_eq!((a.role, way), (Role::Member, signup::Way::OpenDomain));
    let e = signup::sign_up(&db, &c, &req("eve@elsewhere.example"), NOW).unwrap_err();
    assert_eq!(e.code, ErrorCode::SignupClosed);
    let e = signup::sign_up(&db, &c, &req("ANN@open.example"), NOW).unwrap_err();
    assert_eq!(e.code, ErrorCode::Conflict);
    assert_eq!(count(&db, "SELECT count(*) FROM account"), 1);
}

#[test]
fn an_oidc_admin_address_cannot_be_squatted_with_a_password() {
    let db = db();
    let c = config(&[
        ("auth_mode", "accounts"),
        ("signup_allowed_domains", "open.example"),
        ("oidc_admin_emails", "boss@open.example"),
    ]);
    let e = signup::sign_up(&db, &c, &req("Boss@Open.Example"), NOW).unwrap_err();
    assert_eq!(e.code, ErrorCode::Forbidden);
    assert_eq!(count(&db, "SELECT count(*) FROM account"), 0);
    signup::sign_up(&db, &c, &req("ann@open.example"), NOW).unwrap();
}

#[test]
fn an_invite_is_single_use_expiring_and_bound_to_its_email() {
    let db = db();
    let c = setup_config();
    let admin = first_admin(&db);
    let invite = |role, email: Option<&str>| {
        let r = InviteCreate {
            role,
            email: email.map(Into::into),
        };
        invites::create(&db, &r, &admin.id, "https://chat.example/", NOW).unwrap()
    };
    let open = invite(Role::Admin, None);
    assert!(open.url.starts_with("https://chat.example/invite#token="));
    let info = invites::info(&db, &open.token, NOW).unwrap();
    assert_eq!(info.role, Role::Admin);
    let with = |email: &str, token: &str| SignupRequest {
        invite_token: Some(token.into()),
        ..req(email)
    };
    let (b, way) = signup::sign_up(&db, &c, &with("bo@x.example", &open.token), NOW).unwrap();
    assert_eq!((b.role, way), (Role::Admin, signup::Way::Invite));
    let replay = signup::sign_up(&db, &c, &with("cy@x.example", &open.token), NOW).unwrap_err();
    assert_eq!(replay.code, ErrorCode::InviteInvalid);
    assert_eq!(
        invites::info(&db, &open.token, NOW).unwrap_err().code,
        ErrorCode::InviteInvalid
    );

    let bound = invite(Role::Member, Some("Di@X.example"));
    let e = signup::sign_up(&db, &c, &with("eve@x.example", &bound.token), NOW).unwrap_err();
    assert_eq!(e.code, ErrorCode::Forbidden);
    // The refusal did not spend it: its addressee still can.
    signup::sign_up(&db, &c, &with("di@x.example", &bound.token), NOW).unwrap();

    let taken = invite(Role::Member, None);
    let e = signup::sign_up(&db, &c, &with("bo@x.example", &taken.token), NOW).unwrap_err();
    assert_eq!(e.code, ErrorCode::Conflict);
    assert!(invites::info(&db, &taken.token, NOW).is_ok(), "not spent");

    let late = invite(Role::Member, None);
    let expired = NOW + invites::INVITE_LIFETIME_MS;
    let e = signup::sign_up(&db, &c, &with("fa@x.example", &late.token), expired).unwrap_err();
    assert_eq!(e.code, ErrorCode::InviteInvalid);
    let forged = signup::sign_up(&db, &c, &with("fa@x.example", "forged-token"), NOW).unwrap_err();
    assert_eq!(forged.code, ErrorCode::InviteInvalid);

    assert!(invites::revoke(&db, &late.id).unwrap());
    assert!(!invites::revoke(&db, &late.id).unwrap());
    let listed = invites::list(&db).unwrap();
    assert_eq!(listed.len(), 3);
    assert!(listed.iter().any(|i| i.used_at.is_none()));
    assert_eq!(count(&db, "SELECT count(*) FROM account"), 3);
    let stored = db
        .execute("SELECT token_hash FROM account_invite", vec![])
        .unwrap();
    assert!(stored.iter().all(|r| r[0] != SqlValue::text(&open.token)));
}

#[test]
fn a_claimed_invite_whose_account_cannot_be_made_is_given_back() {
    let db = db();
    let admin = first_admin(&db);
    let r = InviteCreate {
        role: Role::Member,
        email: None,
    };
    let inv = invites::create(&db, &r, &admin.id, "http://x", NOW).unwrap();
    // The email gets taken between the claim and the insert.
    assert_eq!(
        invites::claim(&db, &inv.token, "newid", "late@x.example", NOW).unwrap(),
        Role::Member
    );
    invites::release(&db, &inv.token, "newid").unwrap();
    assert!(invites::info(&db, &inv.token, NOW).is_ok());
}

#[test]
fn login_has_one_answer_for_every_failure() {
    let db = db();
    let admin = first_admin(&db);
    let ok = accounts::login(&db, " BOSS@example.com", PASSWORD, NOW + 5).unwrap();
    assert_eq!(ok.id, admin.id);
    assert_eq!(
        accounts::by_id(&db, &admin.id)
            .unwrap()
            .unwrap()
            .last_active_at,
        Some(NOW + 5)
    );
    let failures = [
        accounts::login(&db, "boss@example.com", "wrong password!", NOW).unwrap_err(),
        accounts::login(&db, "nobody@example.com", PASSWORD, NOW).unwrap_err(),
        accounts::login(&db, "not an email", PASSWORD, NOW).unwrap_err(),
    ];
    for f in &failures {
        assert_eq!(f, &accounts::invalid_credentials());
    }
}

#[test]
fn passwords_change_and_reset_links_work_once() {
    let db = db();
    let admin = first_admin(&db);
    let e =
        accounts::change_password(&db, &admin, "not the password", "new password 1").unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidCredentials);
    accounts::change_password(&db, &admin, PASSWORD, "new password 1").unwrap();
    assert!(accounts::login(&db, "boss@example.com", "new password 1", NOW).is_ok());

    let link = resets::create(&db, &admin.id, &admin.id, "https://c.example", NOW).unwrap();
    assert!(link.url.starts_with("https://c.example/reset#token="));
    assert_eq!(
        resets::spend(&db, &link.token, "short", NOW)
            .unwrap_err()
            .code,
        ErrorCode::BadRequest
    );
    let a = resets::spend(&db, &link.token, "reset password 2", NOW).unwrap();
    assert_eq!(a.id, admin.id);
    assert!(accounts::login(&db, "boss@example.com", "reset password 2", NOW).is_ok());
    let again = resets::spend(&db, &link.token, "reset password 3", NOW).unwrap_err();
    assert_eq!(again.code, ErrorCode::InviteInvalid);
    let late = resets::create(&db, &admin.id, &admin.id, "x", NOW).unwrap();
    let e = resets::spend(
        &db,
        &late.token,
        "reset password 3",
        NOW + resets::RESET_LIFETIME_MS,
    );
    assert!(e.is_err());
    assert_eq!(
        resets::create(&db, "nobody", &admin.id, "x", NOW)
            .unwrap_err()
            .code,
        ErrorCode::NotFound
    );
}

#[test]
fn settings_are_checked_and_null_clears() {
    let db = db();
    let admin = first_admin(&db);
    let models = vec!["demo".to_string()];
    let patch = |json: &str| serde_json::from_str::<AccountPatch>(json).unwrap();
    let s = accounts::patch_settings(
        &db,
        &admin.id,
        &patch(r#"{"displayName":" Boss ","language":"zh-CN","defaultModel":"demo"}"#),
        &models,
    )
    .unwrap();
    assert_eq!(s.display_name.as_deref(), Some("Boss"));
    assert_eq!(s.language.as_deref(), Some("zh-CN"));
    assert_eq!(s.default_model.as_deref(), Some("demo"));
    for bad in [
        r#"{"language":"fr"}"#,
        r#"{"defaultModel":"gpt-9"}"#,
        &format!(r#"{{"displayName":"{}"}}"#, "x".repeat(101)),
    ] {
        let e = accounts::patch_settings(&db, &admin.id, &patch(bad), &models).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest, "{bad}");
    }
    let s =
        accounts::patch_settings(&db, &admin.id, &patch(r#"{"language":null}"#), &models).unwrap();
    assert_eq!(s.language, None);
    assert_eq!(
        s.display_name.as_deref(),
        Some("Boss"),
        "absent fields stay"
    );
}

#[test]
fn oidc_sign_ins_create_link_and_reuse_one_account() {
    let db = db();
    let user = |subject, email, admin| OidcUser {
        subject,
        email,
        name: Some("Ann"),
        admin,
    };
    let a = accounts::oidc_account(&db, &user("oidc:i:1", "ann@x.example", true), NOW).unwrap();
    assert_eq!(a.role, Role::Admin);
    assert!(a.password_hash.is_none());
    let again =
        accounts::oidc_account(&db, &user("oidc:i:1", "ann@x.example", false), NOW).unwrap();
    assert_eq!(again.id, a.id);
    // A password-less account never passes a password sign-in.
    assert!(accounts::login(&db, "ann@x.example", "", NOW).is_err());
}

#[test]
fn an_oidc_sign_in_never_takes_over_an_account_with_a_password() {
    let db = db();
    // Anyone can sign up with a password as someone else's address: it was never verified.
    let squatter = member(&db, "bo@x.example");
    for admin in [false, true] {
        let refused = accounts::oidc_account(
            &db,
            &OidcUser {
                subject: "oidc:i:2",
                email: "Bo@x.example",
                name: None,
                admin,
            },
            NOW,
        )
        .unwrap_err();
        assert_eq!(refused.code, ErrorCode::Conflict);
    }
    let still = accounts::by_id(&db, &squatter.id).unwrap().unwrap();
    assert_eq!(
        still.role,
        Role::Member,
        "an oidc_admin_emails address gains nothing"
    );
    let linked: Vec<Vec<SqlValue>> = db
        .execute(
            "SELECT id FROM account WHERE oidc_subject IS NOT NULL",
            vec![],
        )
        .unwrap();
    assert!(linked.is_empty(), "nothing was linked");
    assert_eq!(
        accounts::login(&db, "bo@x.example", PASSWORD, NOW)
            .unwrap()
            .id,
        squatter.id
    );
}

#[test]
fn only_enabled_admins_pass_the_admin_check() {
    let db = db();
    let admin = first_admin(&db);
    let principal = format!("user:{}", admin.id);
    assert_eq!(admin::require_admin(&db, &principal).unwrap(), admin.id);
    let m = member(&db, "m@x.example");
    for p in [
        format!("user:{}", m.id),
        "eve-chat-user".into(),
        "user:nobody".into(),
        admin.id.clone(),
    ] {
        assert_eq!(
            admin::require_admin(&db, &p).unwrap_err().code,
            ErrorCode::Forbidden,
            "{p}"
        );
    }
}

#[test]
fn the_last_enabled_admin_cannot_be_demoted_disabled_or_deleted() {
    let db = db();
    let admin = first_admin(&db);
    let m = member(&db, "m@x.example");
    let demote = UserPatch {
        role: Some(Role::Member),
        disabled: None,
    };
    let disable = UserPatch {
        role: None,
        disabled: Some(true),
    };
    for p in [&demote, &disable] {
        assert_eq!(
            admin::patch_user(&db, &admin.id, p, NOW).unwrap_err().code,
            ErrorCode::LastAdmin
        );
    }
    assert_eq!(
        admin::delete_user(&db, &admin.id, NOW).unwrap_err().code,
        ErrorCode::LastAdmin
    );
    let promote = UserPatch {
        role: Some(Role::Admin),
        disabled: None,
    };
    assert_eq!(
        admin::patch_user(&db, &m.id, &promote, NOW).unwrap().role,
        Role::Admin
    );
    assert!(
        admin::patch_user(&db, &admin.id, &disable, NOW)
            .unwrap()
            .disabled
    );
    // m is now the last enabled admin; the disabled one may be promoted or demoted freely.
    assert_eq!(
        admin::patch_user(&db, &m.id, &disable, NOW)
            .unwrap_err()
            .code,
        ErrorCode::LastAdmin
    );
    assert!(admin::patch_user(&db, &admin.id, &demote, NOW).is_ok());
    assert_eq!(
        admin::patch_user(&db, "nobody", &demote, NOW)
            .unwrap_err()
            .code,
        ErrorCode::NotFound
    );
    // A disabled account cannot sign in.
    assert!(accounts::login(&db, "boss@example.com", PASSWORD, NOW).is_err());
}

#[test]
fn users_are_listed_in_pages_and_searched_literally() {
    let db = db();
    let _admin = first_admin(&db);
    for i in 0..(admin::PAGE + 3) {
        let new = NewAccount {
            id: format!("{i:0>21}"),
            email: format!("user{i}@x.example"),
            display_name: Some(format!("User_{i}")),
            password_hash: "x".into(),
        };
        accounts::create(&db, &new, Role::Member, NOW + i).unwrap();
    }
    let first = admin::list_users(&db, None, None).unwrap();
    assert_eq!(first.users.len() as i64, admin::PAGE);
    let next = admin::list_users(&db, None, first.next_cursor.as_deref()).unwrap();
    assert_eq!(next.users.len(), 4);
    assert!(next.next_cursor.is_none());
    let mut ids: Vec<_> = first
        .users
        .iter()
        .chain(&next.users)
        .map(|u| u.id.clone())
        .collect();
    ids.dedup();
    assert_eq!(ids.len() as i64, admin::PAGE + 4);
    assert_eq!(
        admin::list_users(&db, Some("user12@"), None)
            .unwrap()
            .users
            .len(),
        1
    );
    assert_eq!(
        admin::list_users(&db, Some("_1"), None)
            .unwrap()
            .users
            .len(),
        11,
        "_ is literal"
    );
    assert_eq!(
        admin::list_users(&db, Some("%"), None).unwrap().users.len(),
        0
    );
    assert!(admin::list_users(&db, None, Some("garbage")).is_err());
}

#[test]
fn disabling_asks_the_running_turns_to_stop_and_drops_the_queued_work() {
    let db = db();
    let _admin = first_admin(&db);
    let m = member(&db, "m@x.example");
    let p = format!("user:{}", m.id);
    db.execute(
        "INSERT INTO eve_session (id, principal, created_at, updated_at) VALUES ('s1', ?1, 0, 0)",
        vec![p.as_str().into()],
    )
    .unwrap();
    for idx in 0..3 {
        db.execute("INSERT INTO eve_event (session_id, idx, type, body, created_at) VALUES ('s1', ?1, 't', '{}', 0)", vec![SqlValue::Integer(idx)]).unwrap();
    }
    // A message queued behind the running turn, and another principal's.
    db.execute(
        "INSERT INTO eve_session (id, principal, created_at, updated_at) VALUES ('s2', 'user:other', 0, 0)",
        vec![],
    )
    .unwrap();
    for session in ["s1", "s2"] {
        db.execute(
            "INSERT INTO eve_inbox (session_id, seq, kind, delivery_id, body, created_at) VALUES (?1, 0, 'message', 'd', '{}', 0)",
            vec![session.into()],
        )
        .unwrap();
    }
    admin::patch_user(
        &db,
        &m.id,
        &UserPatch {
            role: None,
            disabled: Some(true),
        },
        NOW,
    )
    .unwrap();
    let cancel_at = count(&db, "SELECT cancel_at FROM eve_session WHERE id = 's1'");
    assert_eq!(cancel_at, 3);
    assert_eq!(
        count(&db, "SELECT count(*) FROM eve_inbox"),
        1,
        "only the other principal's queued message stays"
    );
}

#[test]
fn deleting_an_account_deletes_everything_of_it_and_a_retry_completes() {
    let db = db();
    let _admin = first_admin(&db);
    let m = member(&db, "m@x.example");
    let other = member(&db, "o@x.example");
    for a in [&m, &other] {
        seed_principal(&db, &a.principal_id(), &a.id);
    }
    // The retry: the first statements ran, the rest did not.
    db.execute(
        "DELETE FROM chat WHERE owner = ?1",
        vec![m.principal_id().into()],
    )
    .unwrap();
    assert!(admin::delete_user(&db, &m.id, NOW).unwrap());
    assert!(!admin::delete_user(&db, &m.id, NOW).unwrap());
    for table in PRINCIPAL_TABLES {
        let left = db
            .execute(&format!("SELECT count(*) FROM {table}"), vec![])
            .unwrap()[0][0]
            .as_i64()
            .unwrap();
        assert!(left >= 1, "{table}: the other account's rows stay");
    }
    let mine = [
        ("chat", "owner = ?1"),
        ("eve_session", "principal = ?1"),
        ("eve_event", "session_id = 's-' || ?1"),
        ("eve_inbox", "session_id = 's-' || ?1"),
        ("agent_tool_output", "session_id = 's-' || ?1"),
        ("eve_attachment", "principal = ?1"),
        ("agent_memory", "principal = ?1"),
        ("agent_connection_grant", "principal = ?1"),
        ("agent_connection_token", "principal = ?1"),
        ("api_token", "principal = ?1"),
        ("usage_daily", "principal = ?1"),
        ("principal_quota", "principal = ?1"),
        (
            "storage_usage",
            "scope IN ('principal:' || ?1, 'attachments:' || ?1)",
        ),
        ("account_reset", "account_id = substr(?1, 6)"),
        ("account", "id = substr(?1, 6)"),
    ];
    for (table, filter) in mine {
        let rows = db
            .execute(
                &format!("SELECT count(*) FROM {table} WHERE {filter}"),
                vec![m.principal_id().into()],
            )
            .unwrap();
        assert_eq!(rows[0][0], SqlValue::Integer(0), "{table}");
    }
}

const PRINCIPAL_TABLES: [&str; 13] = [
    "chat",
    "eve_session",
    "eve_event",
    "eve_inbox",
    "agent_tool_output",
    "eve_attachment",
    "agent_memory",
    "agent_connection_grant",
    "agent_connection_token",
    "api_token",
    "usage_daily",
    "principal_quota",
    "account_reset",
];

fn seed_principal(db: &Db, p: &str, id: &str) {
    let s = format!("s-{p}");
    let statements: Vec<(&str, Vec<SqlValue>)> = vec![
        ("INSERT INTO chat (id, owner, title, created_at, updated_at) VALUES ('c-' || ?1, ?1, 't', 0, 0)", vec![p.into()]),
        ("INSERT INTO eve_session (id, principal, created_at, updated_at) VALUES (?2, ?1, 0, 0)", vec![p.into(), s.as_str().into()]),
        ("INSERT INTO eve_event (session_id, idx, type, body, created_at) VALUES (?1, 0, 't', '{}', 0)", vec![s.as_str().into()]),
        ("INSERT INTO eve_inbox (session_id, seq, kind, delivery_id, body, created_at) VALUES (?1, 0, 'message', 'd', '{}', 0)", vec![s.as_str().into()]),
        ("INSERT INTO agent_tool_output (session_id, tool_call_id, output, created_at) VALUES (?1, 't', 'o', 0)", vec![s.as_str().into()]),
        ("INSERT INTO eve_attachment (id, principal, session_id, media_type, data, created_at) VALUES ('a-' || ?1, ?1, 'elsewhere', 'text/plain', x'00', 0)", vec![p.into()]),
        ("INSERT INTO agent_memory (principal, document, updated_at) VALUES (?1, 'm', 0)", vec![p.into()]),
        ("INSERT INTO agent_connection_grant (principal, connection, granted_at) VALUES (?1, 'c', 0)", vec![p.into()]),
        ("INSERT INTO agent_connection_token (principal, connection, access_token, obtained_at) VALUES (?1, 'c', 't', 0)", vec![p.into()]),
        ("INSERT INTO api_token (id, principal, mode, name, token_hash, created_at, expires_at) VALUES ('t-' || ?1, ?1, 'accounts', 'n', 'h-' || ?1, 0, 1)", vec![p.into()]),
        ("INSERT INTO usage_daily (principal, day, model, tokens_in) VALUES (?1, '2026-01-01', 'demo', 5)", vec![p.into()]),
        ("INSERT INTO principal_quota (principal, tokens_per_day) VALUES (?1, 5)", vec![p.into()]),
        ("INSERT INTO account_reset (token_hash, account_id, created_by, created_at, expires_at) VALUES ('r-' || ?1, ?2, ?2, 0, 1)", vec![p.into(), id.into()]),
    ];
    for (sql, params) in statements {
        db.execute(sql, params)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

#[test]
fn audit_entries_page_newest_first() {
    let db = db();
    for i in 0..(audit::PAGE + 1) {
        audit::record(
            &db,
            &audit::AuditEntry {
                at_ms: i,
                actor: None,
                action: "signin",
                target: Some("user:x"),
                detail: None,
            },
        )
        .unwrap();
    }
    let first = audit::list(&db, None).unwrap();
    assert_eq!(first.entries.len() as i64, audit::PAGE);
    assert_eq!(first.entries[0].id, audit::PAGE + 1);
    let next = audit::list(&db, first.next_cursor.as_deref()).unwrap();
    assert_eq!(next.entries.len(), 1);
    assert!(next.next_cursor.is_none());
    assert!(audit::list(&db, Some("x")).is_err());
}
