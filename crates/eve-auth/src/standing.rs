//! Whether an account may go on, decided from its row on every signed-in request (issue 32):
//! the account row, not the cookie or a cached flag, is the authority (docs/accounts.md,
//! "What is guaranteed"). A disable is one SQL write, so there is no moment where the
//! database says disabled and a request is still let through; a deleted account has no row;
//! and an account whose only way in is OIDC (linked to a subject, no password) must still be
//! allowed by `oidc_allowed_emails` / `oidc_allowed_domains`, so narrowing them ends its
//! cookies at the next request and its API tokens at their next use, as in OIDC mode.
//!
//! An account with a password is not held to the OIDC allowlist: the password signs it in
//! anyway, so refusing its OIDC-made cookie would protect nothing.

use eve_store::sql::{Sql, SqlValue};

use crate::oidc::Allowlist;

/// Account `?1`'s disabled flag, email, and whether OIDC is its only way in.
pub const SELECT_STANDING: &str = "SELECT disabled, email, \
    (oidc_subject IS NOT NULL AND password_hash IS NULL) FROM account WHERE id = ?1";

/// What [`admits`] reads of an account row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    pub disabled: bool,
    pub email: String,
    pub oidc_only: bool,
}

/// Account `account_id`'s standing, `None` when there is no such account (deleted).
pub fn read(db: &dyn Sql, account_id: &str) -> Result<Option<Standing>, String> {
    let rows = db.execute(SELECT_STANDING, vec![SqlValue::text(account_id)])?;
    Ok(rows.first().map(|row| {
        let flag = |i: usize| row.get(i).and_then(SqlValue::as_i64).unwrap_or(1) != 0;
        Standing {
            disabled: flag(0),
            email: row
                .get(1)
                .and_then(SqlValue::as_str)
                .unwrap_or_default()
                .to_string(),
            oidc_only: flag(2),
        }
    }))
}

/// Whether a request of the account with `standing` goes on: it exists, is not disabled, and
/// when OIDC is its only way in, `allowlist` still allows its email.
pub fn admits(standing: Option<&Standing>, allowlist: &Allowlist) -> bool {
    match standing {
        None => false,
        Some(s) if s.disabled => false,
        Some(s) if s.oidc_only => allowlist.allows(&s.email),
        Some(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use eve_sql_testing::Db;

    fn db() -> Db {
        let db = Db::memory();
        eve_store::migrations::migrate(&db, 0).unwrap();
        let insert = "INSERT INTO account (id, email, password_hash, role, disabled, \
            oidc_subject, created_at) VALUES (?1, ?2, ?3, 'member', ?4, ?5, 1)";
        for (id, email, hash, disabled, subject) in [
            ("pw", "pw@example.com", Some("$argon2id$x"), 0, None),
            ("off", "off@example.com", Some("$argon2id$x"), 1, None),
            ("sso", "sso@example.com", None, 0, Some("oidc:h:1")),
            (
                "both",
                "both@other.example",
                Some("$argon2id$x"),
                0,
                Some("oidc:h:2"),
            ),
        ] {
            let params = vec![
                SqlValue::text(id),
                SqlValue::text(email),
                SqlValue::opt_text(hash.map(str::to_string)),
                SqlValue::Integer(disabled),
                SqlValue::opt_text(subject.map(str::to_string)),
            ];
            db.execute(insert, params).unwrap();
        }
        db
    }

    #[test]
    fn the_row_decides_disabled_deleted_and_the_oidc_allowlist() {
        let db = db();
        let example = Allowlist::parse(None, Some("example.com"));
        let elsewhere = Allowlist::parse(Some("someone@example.com"), Some("other.example"));
        let admits_with =
            |id: &str, list: &Allowlist| admits(read(&db, id).unwrap().as_ref(), list);
        assert!(admits_with("pw", &example));
        assert!(
            admits_with("pw", &elsewhere),
            "a password account ignores the list"
        );
        assert!(!admits_with("off", &example), "disabled");
        assert!(!admits_with("gone", &example), "no row: deleted");
        assert!(admits_with("sso", &example));
        assert!(
            !admits_with("sso", &elsewhere),
            "OIDC only, no longer allowed"
        );
        assert!(
            !admits_with("sso", &Allowlist::parse(None, None)),
            "OIDC no longer set up"
        );
        assert!(admits_with("both", &example), "it has a password too");
        assert_eq!(
            read(&db, "sso").unwrap(),
            Some(Standing {
                disabled: false,
                email: "sso@example.com".into(),
                oidc_only: true
            })
        );
    }
}
