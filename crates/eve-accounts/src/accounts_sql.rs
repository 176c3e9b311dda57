//! The statements on `account` (migration 0009). Email compares case-insensitively (the
//! column is `COLLATE NOCASE`); every address is stored lower-cased anyway.

/// The first admin: inserts only while no admin exists, in this one statement, so the setup
/// token makes exactly one admin even when sign-ups race (SQLite runs writes one at a time).
/// `?1` id, `?2` email, `?3` display name, `?4` password hash, `?5` now (ms).
pub const INSERT_FIRST_ADMIN: &str = "INSERT INTO account \
    (id, email, display_name, password_hash, role, created_at) \
    SELECT ?1, ?2, ?3, ?4, 'admin', ?5 \
    WHERE NOT EXISTS (SELECT 1 FROM account WHERE role = 'admin') \
    ON CONFLICT DO NOTHING RETURNING id";

/// A new account of role `?6`; no row when the email (or id) is taken.
pub const INSERT_ACCOUNT: &str = "INSERT INTO account \
    (id, email, display_name, password_hash, role, created_at) \
    VALUES (?1, ?2, ?3, ?4, ?6, ?5) ON CONFLICT DO NOTHING RETURNING id";

/// Whether any admin exists (for `/api/setup`).
pub const ADMIN_EXISTS: &str = "SELECT EXISTS (SELECT 1 FROM account WHERE role = 'admin')";

/// Whether an account has this email (`?1`).
pub const EMAIL_TAKEN: &str = "SELECT EXISTS (SELECT 1 FROM account WHERE email = ?1)";

/// The account with email `?1`.
pub const BY_EMAIL: &str = "SELECT id, email, display_name, password_hash, role, disabled, \
    language, default_model, created_at, last_active_at FROM account WHERE email = ?1";

/// The account with id `?1`.
pub const BY_ID: &str = "SELECT id, email, display_name, password_hash, role, disabled, \
    language, default_model, created_at, last_active_at FROM account WHERE id = ?1";

/// The account an OIDC subject (`?1`, the principal id OIDC mode used) signed in as before.
pub const BY_OIDC_SUBJECT: &str = "SELECT id, email, display_name, password_hash, role, \
    disabled, language, default_model, created_at, last_active_at FROM account \
    WHERE oidc_subject = ?1";

/// Links OIDC subject `?1` to the account of email `?2`, unless it is linked to another or
/// has a password: a password sign-up never proved it owns the address, so the provider's
/// verified email must not hand its holder that account (nor that account the holder's).
pub const LINK_OIDC_SUBJECT: &str = "UPDATE account SET oidc_subject = ?1 \
    WHERE email = ?2 AND oidc_subject IS NULL AND password_hash IS NULL RETURNING id";

/// An account made by an OIDC sign-in: no password. `?1` id, `?2` email, `?3` name, `?4`
/// subject, `?5` now, `?6` role.
pub const INSERT_OIDC_ACCOUNT: &str = "INSERT INTO account \
    (id, email, display_name, oidc_subject, role, created_at) \
    VALUES (?1, ?2, ?3, ?4, ?6, ?5) ON CONFLICT DO NOTHING RETURNING id";

/// Sets the password hash `?2` of account `?1`.
pub const SET_PASSWORD: &str = "UPDATE account SET password_hash = ?2 WHERE id = ?1 RETURNING id";

/// Records a sign-in time (`?2`, ms) of account `?1`.
pub const TOUCH: &str = "UPDATE account SET last_active_at = ?2 WHERE id = ?1";

/// Own settings: each of display name, language and default model changes only when its flag
/// (`?2`, `?4`, `?6`) is 1. Answers the settings.
pub const PATCH_SETTINGS: &str = "UPDATE account SET \
    display_name = CASE WHEN ?2 THEN ?3 ELSE display_name END, \
    language = CASE WHEN ?4 THEN ?5 ELSE language END, \
    default_model = CASE WHEN ?6 THEN ?7 ELSE default_model END \
    WHERE id = ?1 RETURNING id, email, display_name, password_hash, role, disabled, \
    language, default_model, created_at, last_active_at";
