//! Accounts: creating them (first admin, invited, open sign-up, OIDC), signing in, passwords
//! and own settings. SQL in [`crate::accounts_sql`].

use eve_api::accounts::{AccountPatch, AccountSettings, Role, LANGUAGES};
use eve_api::auth::account_principal_id;
use eve_api::{ApiError, ErrorCode};
use eve_store::sql::{Sql, SqlValue};

use crate::accounts_sql as q;
use crate::common::{db_error, int, normalize_email, opt_int, text};
use crate::password;

/// One stored account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub id: String,
    pub email: String,
    pub display_name: Option<String>,
    pub password_hash: Option<String>,
    pub role: Role,
    pub disabled: bool,
    pub language: Option<String>,
    pub default_model: Option<String>,
    pub created_at: i64,
    pub last_active_at: Option<i64>,
}

impl Account {
    /// An account from the columns `id, email, display_name, password_hash, role, disabled,
    /// language, default_model, created_at, last_active_at`.
    pub fn from_row(row: &[SqlValue]) -> Option<Account> {
        Some(Account {
            id: text(row, 0)?,
            email: text(row, 1)?,
            display_name: text(row, 2),
            password_hash: text(row, 3),
            role: Role::parse(&text(row, 4)?)?,
            disabled: int(row, 5) != 0,
            language: text(row, 6),
            default_model: text(row, 7),
            created_at: int(row, 8),
            last_active_at: opt_int(row, 9),
        })
    }

    /// The principal every chat, session and token of the account is scoped to.
    pub fn principal_id(&self) -> String {
        account_principal_id(&self.id)
    }

    /// The account's own settings (`GET /api/auth/account`).
    pub fn settings(&self) -> AccountSettings {
        AccountSettings {
            id: self.id.clone(),
            email: self.email.clone(),
            display_name: self.display_name.clone(),
            role: self.role,
            language: self.language.clone(),
            default_model: self.default_model.clone(),
        }
    }
}

/// A sign-up's checked input: the address normalized, the name checked, the password hashed.
#[derive(Debug, Clone)]
pub struct NewAccount {
    pub id: String,
    pub email: String,
    pub display_name: Option<String>,
    pub password_hash: String,
}

impl NewAccount {
    /// 400 for a bad email, name or password length; nothing is written.
    pub fn parse(
        email: &str,
        password: &str,
        display_name: Option<&str>,
    ) -> Result<Self, ApiError> {
        let email = normalize_email(email)?;
        let display_name = display_name.map(check_display_name).transpose()?.flatten();
        password::check_length(password)?;
        Ok(NewAccount {
            id: crate::common::new_id(),
            email,
            display_name,
            password_hash: password::hash(password)?,
        })
    }

    fn params(&self, now_ms: i64) -> Vec<SqlValue> {
        vec![
            SqlValue::text(&self.id),
            SqlValue::text(&self.email),
            SqlValue::opt_text(self.display_name.as_deref()),
            SqlValue::text(&self.password_hash),
            now_ms.into(),
        ]
    }
}

/// Longest display name.
pub const MAX_DISPLAY_NAME_CHARS: usize = 100;

/// A display name trimmed (`None` when blank), or 400: at most 100 characters, no control
/// characters.
pub fn check_display_name(name: &str) -> Result<Option<String>, ApiError> {
    let name = name.trim();
    if name.chars().count() > MAX_DISPLAY_NAME_CHARS {
        return Err(ApiError::bad_request(format!(
            "the display name is longer than {MAX_DISPLAY_NAME_CHARS} characters"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(ApiError::bad_request(
            "the display name contains control characters",
        ));
    }
    Ok((!name.is_empty()).then(|| name.to_string()))
}

fn one(db: &dyn Sql, statement: &str, params: Vec<SqlValue>) -> Result<Option<Account>, ApiError> {
    let rows = db.execute(statement, params).map_err(db_error)?;
    Ok(rows.first().and_then(|r| Account::from_row(r)))
}

fn flag(db: &dyn Sql, statement: &str, params: Vec<SqlValue>) -> Result<bool, ApiError> {
    let rows = db.execute(statement, params).map_err(db_error)?;
    Ok(rows.first().map(|r| int(r, 0)).unwrap_or_default() != 0)
}

/// Whether an admin account exists.
pub fn admin_exists(db: &dyn Sql) -> Result<bool, ApiError> {
    flag(db, q::ADMIN_EXISTS, vec![])
}

/// Whether an account has this (normalized) email.
pub fn email_taken(db: &dyn Sql, email: &str) -> Result<bool, ApiError> {
    flag(db, q::EMAIL_TAKEN, vec![email.into()])
}

/// The account `id`, if any.
pub fn by_id(db: &dyn Sql, id: &str) -> Result<Option<Account>, ApiError> {
    one(db, q::BY_ID, vec![id.into()])
}

/// The account of `principal` (`user:<id>`), if any.
pub fn by_principal(db: &dyn Sql, principal: &str) -> Result<Option<Account>, ApiError> {
    match principal.strip_prefix(eve_api::auth::ACCOUNT_PRINCIPAL_PREFIX) {
        Some(id) => by_id(db, id),
        None => Ok(None),
    }
}

fn email_exists_error() -> ApiError {
    ApiError::new(
        ErrorCode::Conflict,
        "an account with this email address exists; sign in instead",
    )
}

/// Creates the first admin (the setup token was checked by the caller). 403 once an admin
/// exists, 409 when the email is taken.
pub fn create_first_admin(
    db: &dyn Sql,
    new: &NewAccount,
    now_ms: i64,
) -> Result<Account, ApiError> {
    db.execute(q::INSERT_FIRST_ADMIN, new.params(now_ms))
        .map_err(db_error)?;
    match by_id(db, &new.id)? {
        Some(account) => Ok(account),
        None if admin_exists(db)? => Err(ApiError::forbidden(
            "an admin exists already: the setup token works once",
        )),
        None => Err(email_exists_error()),
    }
}

/// Creates an account of `role`; 409 when the email is taken.
pub fn create(
    db: &dyn Sql,
    new: &NewAccount,
    role: Role,
    now_ms: i64,
) -> Result<Account, ApiError> {
    let mut params = new.params(now_ms);
    params.push(role.as_str().into());
    let rows = db.execute(q::INSERT_ACCOUNT, params).map_err(db_error)?;
    if rows.is_empty() {
        return Err(email_exists_error());
    }
    by_id(db, &new.id)?.ok_or_else(|| ApiError::internal("the new account vanished"))
}

/// The one 401 of a failed account sign-in: unknown email, wrong password, disabled account.
pub fn invalid_credentials() -> ApiError {
    ApiError::new(
        ErrorCode::InvalidCredentials,
        "wrong email address or password",
    )
}

/// Checks an email and password: exactly one argon2 verify whatever the outcome (an unknown
/// email verifies against a dummy hash), and one answer for every failure.
pub fn login(db: &dyn Sql, email: &str, password: &str, now_ms: i64) -> Result<Account, ApiError> {
    let account = match normalize_email(email) {
        Ok(email) => one(db, q::BY_EMAIL, vec![email.into()])?,
        Err(_) => None,
    };
    let matches = password::verify(
        account.as_ref().and_then(|a| a.password_hash.as_deref()),
        password,
    );
    match account {
        Some(a) if matches && !a.disabled => {
            db.execute(q::TOUCH, vec![a.id.as_str().into(), now_ms.into()])
                .map_err(db_error)?;
            Ok(a)
        }
        _ => Err(invalid_credentials()),
    }
}

/// Replaces the password of account `id` (already checked for length by the caller or here).
pub fn set_password(db: &dyn Sql, id: &str, new_password: &str) -> Result<(), ApiError> {
    password::check_length(new_password)?;
    let hashed = password::hash(new_password)?;
    let rows = db
        .execute(q::SET_PASSWORD, vec![id.into(), hashed.into()])
        .map_err(db_error)?;
    if rows.is_empty() {
        return Err(ApiError::not_found("no such account"));
    }
    Ok(())
}

/// `POST /api/auth/password`: 401 `invalid_credentials` when the current password is wrong.
pub fn change_password(
    db: &dyn Sql,
    account: &Account,
    current: &str,
    new_password: &str,
) -> Result<(), ApiError> {
    password::check_length(new_password)?;
    if !password::verify(account.password_hash.as_deref(), current) {
        return Err(ApiError::new(
            ErrorCode::InvalidCredentials,
            "the current password is wrong",
        ));
    }
    set_password(db, &account.id, new_password)
}

/// `PATCH /api/auth/account`. `models` are the model ids the deployment offers (a default
/// model must be one of them).
pub fn patch_settings(
    db: &dyn Sql,
    id: &str,
    patch: &AccountPatch,
    models: &[String],
) -> Result<AccountSettings, ApiError> {
    let name = match &patch.display_name {
        Some(Some(n)) => Some(check_display_name(n)?),
        Some(None) => Some(None),
        None => None,
    };
    if let Some(Some(lang)) = &patch.language {
        if !LANGUAGES.contains(&lang.as_str()) {
            return Err(ApiError::bad_request("language must be en or zh-CN"));
        }
    }
    if let Some(Some(model)) = &patch.default_model {
        if !models.iter().any(|m| m == model) {
            return Err(ApiError::bad_request(
                "defaultModel is not one of this deployment's models",
            ));
        }
    }
    let set = |present: bool| SqlValue::from(present);
    let params = vec![
        id.into(),
        set(name.is_some()),
        SqlValue::opt_text(name.flatten()),
        set(patch.language.is_some()),
        SqlValue::opt_text(patch.language.clone().flatten()),
        set(patch.default_model.is_some()),
        SqlValue::opt_text(patch.default_model.clone().flatten()),
    ];
    one(db, q::PATCH_SETTINGS, params)?
        .map(|a| a.settings())
        .ok_or_else(|| ApiError::not_found("no such account"))
}

/// Who an OIDC provider said signed in, for accounts mode.
#[derive(Debug, Clone)]
pub struct OidcUser<'a> {
    /// The principal id OIDC mode would use (`oidc:<issuer hash>:<sub>`).
    pub subject: &'a str,
    pub email: &'a str,
    pub name: Option<&'a str>,
    /// The email is in `oidc_admin_emails`.
    pub admin: bool,
}

/// The account of an OIDC sign-in: the one linked to its subject, else a password-less one
/// with its (provider-verified) email, now linked, else a new one (admin when listed). 401
/// when the account is disabled; 409 `conflict` ([`password_account_exists`]) when an account
/// with a password has the email: nobody proved that sign-up owned the address, so the two are
/// never joined by email.
pub fn oidc_account(db: &dyn Sql, user: &OidcUser<'_>, now_ms: i64) -> Result<Account, ApiError> {
    let email = normalize_email(user.email)?;
    let mut account = one(db, q::BY_OIDC_SUBJECT, vec![user.subject.into()])?;
    if account.is_none() {
        let linked = db
            .execute(
                q::LINK_OIDC_SUBJECT,
                vec![user.subject.into(), email.as_str().into()],
            )
            .map_err(db_error)?;
        if let Some(id) = linked.first().and_then(|r| text(r, 0)) {
            account = by_id(db, &id)?;
        }
    }
    if account.is_none() {
        let id = crate::common::new_id();
        let name = user
            .name
            .map(check_display_name)
            .transpose()
            .ok()
            .flatten()
            .flatten();
        let role = if user.admin {
            Role::Admin
        } else {
            Role::Member
        };
        let params = vec![
            id.as_str().into(),
            email.as_str().into(),
            SqlValue::opt_text(name),
            user.subject.into(),
            now_ms.into(),
            role.as_str().into(),
        ];
        db.execute(q::INSERT_OIDC_ACCOUNT, params)
            .map_err(db_error)?;
        // A racing first sign-in of the same subject may have won: read whichever exists.
        account = one(db, q::BY_OIDC_SUBJECT, vec![user.subject.into()])?;
    }
    match account {
        Some(a) if !a.disabled => {
            db.execute(q::TOUCH, vec![a.id.as_str().into(), now_ms.into()])
                .map_err(db_error)?;
            Ok(a)
        }
        Some(_) => Err(invalid_credentials()),
        None => Err(password_account_exists()),
    }
}

/// The refusal of an OIDC sign-in whose email belongs to an account with a password.
pub fn password_account_exists() -> ApiError {
    ApiError::new(
        ErrorCode::Conflict,
        "an account with this email address signs in with its password; sign in with the password",
    )
}
