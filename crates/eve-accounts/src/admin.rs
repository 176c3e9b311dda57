//! What an admin does to accounts: the role check every admin route makes, listing and
//! searching, changing role or disabled, deleting everything of an account. SQL in
//! [`crate::admin_sql`]. Nothing here reads a chat.

use eve_api::accounts::{AdminUser, Role, UserList, UserPatch};
use eve_api::auth::account_principal_id;
use eve_api::{ApiError, ErrorCode};
use eve_store::sql::{Sql, SqlValue};

use crate::accounts::{self, Account};
use crate::admin_sql as q;
use crate::common::{db_error, int, iso};

/// Accounts per page of the user list.
pub const PAGE: i64 = 50;
/// Longest search text.
pub const MAX_QUERY_CHARS: usize = 200;

/// 403 `forbidden` unless `principal` is an enabled admin account (read from SQL now).
pub fn require_admin(db: &dyn Sql, principal: &str) -> Result<String, ApiError> {
    let forbidden = || ApiError::forbidden("admins only");
    let id = principal
        .strip_prefix(eve_api::auth::ACCOUNT_PRINCIPAL_PREFIX)
        .ok_or_else(forbidden)?;
    let rows = db
        .execute(q::IS_ENABLED_ADMIN, vec![id.into()])
        .map_err(db_error)?;
    match rows.first().map(|r| int(r, 0)) {
        Some(1) => Ok(id.to_string()),
        _ => Err(forbidden()),
    }
}

/// The admin's view of an account.
pub fn admin_user(a: &Account) -> AdminUser {
    AdminUser {
        id: a.id.clone(),
        email: a.email.clone(),
        display_name: a.display_name.clone(),
        role: a.role,
        disabled: a.disabled,
        created_at: iso(a.created_at),
        last_active_at: a.last_active_at.map(iso),
    }
}

/// `<created_at ms>.<id>` of the last account of a page.
fn encode_cursor(a: &Account) -> String {
    format!("{}.{}", a.created_at, a.id)
}

fn decode_cursor(cursor: &str) -> Result<(i64, String), ApiError> {
    let bad = || ApiError::bad_request("malformed cursor");
    let (at, id) = cursor.split_once('.').ok_or_else(bad)?;
    let at = at.parse::<i64>().map_err(|_| bad())?;
    if !eve_store::ids::is_valid_chat_id(id) {
        return Err(bad());
    }
    Ok((at, id.to_string()))
}

/// `q` as a LIKE pattern matching it anywhere, with `%`, `_` and `\` taken literally.
fn like_pattern(q: &str) -> String {
    let mut out = String::from("%");
    for c in q.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// `GET /api/admin/users?q=&cursor=`: a page of accounts (oldest first), searched by email or
/// display name.
pub fn list_users(
    db: &dyn Sql,
    query: Option<&str>,
    cursor: Option<&str>,
) -> Result<UserList, ApiError> {
    let query = query.map(str::trim).filter(|q| !q.is_empty());
    if query.is_some_and(|q| q.chars().count() > MAX_QUERY_CHARS) {
        return Err(ApiError::bad_request("the search text is too long"));
    }
    let (after_at, after_id) = match cursor.filter(|c| !c.is_empty()) {
        Some(c) => decode_cursor(c)?,
        None => (i64::MIN, String::new()),
    };
    let params = vec![
        SqlValue::opt_text(query.map(like_pattern)),
        after_at.into(),
        after_id.into(),
        (PAGE + 1).into(),
    ];
    let rows = db.execute(q::LIST_USERS, params).map_err(db_error)?;
    let mut page: Vec<Account> = rows.iter().filter_map(|r| Account::from_row(r)).collect();
    let more = page.len() as i64 > PAGE;
    page.truncate(PAGE as usize);
    Ok(UserList {
        next_cursor: more.then(|| page.last().map(encode_cursor)).flatten(),
        users: page.iter().map(admin_user).collect(),
    })
}

fn last_admin() -> ApiError {
    ApiError::new(
        ErrorCode::LastAdmin,
        "this is the last enabled admin: make another admin first",
    )
}

/// `PATCH /api/admin/users/:id`: the account after the change. 404 for no such account, 409
/// `last_admin` when the change would leave no enabled admin; then nothing changed. Disabling
/// also asks the account's running turns to stop and drops its queued messages. Every request
/// reads the row this writes (`eve_auth::standing`), so nothing else has to follow it.
pub fn patch_user(
    db: &dyn Sql,
    id: &str,
    patch: &UserPatch,
    now_ms: i64,
) -> Result<Account, ApiError> {
    let params = vec![
        id.into(),
        SqlValue::opt_text(patch.role.map(Role::as_str)),
        patch.disabled.map_or(SqlValue::Null, SqlValue::from),
    ];
    let rows = db.execute(q::PATCH_USER, params).map_err(db_error)?;
    let Some(account) = rows.first().and_then(|r| Account::from_row(r)) else {
        return match accounts::by_id(db, id)? {
            Some(_) => Err(last_admin()),
            None => Err(ApiError::not_found("no such account")),
        };
    };
    if account.disabled {
        cancel_running_turns(db, &account_principal_id(id), now_ms)?;
    }
    Ok(account)
}

/// Asks every running turn of `principal` to stop and drops its queued work.
pub fn cancel_running_turns(db: &dyn Sql, principal: &str, now_ms: i64) -> Result<(), ApiError> {
    db.execute(
        q::CANCEL_RUNNING_TURNS,
        vec![principal.into(), now_ms.into()],
    )
    .map_err(db_error)?;
    db.execute(q::DROP_QUEUED_WORK, vec![principal.into()])
        .map(|_| ())
        .map_err(db_error)
}

/// `DELETE /api/admin/users/:id`: disables the account (refused for the last enabled admin:
/// 409; every request reads that row, so the account's cookies stop before its data goes),
/// stops its turns, then deletes everything of it, the account row last, so calling it again
/// completes a delete that stopped half-way. `Ok(false)`: there was no such account.
pub fn delete_user(db: &dyn Sql, id: &str, now_ms: i64) -> Result<bool, ApiError> {
    let disable = UserPatch {
        role: None,
        disabled: Some(true),
    };
    match patch_user(db, id, &disable, now_ms) {
        Ok(_) => {}
        Err(e) if e.code == ErrorCode::NotFound => return Ok(false),
        Err(e) => return Err(e),
    }
    let principal = account_principal_id(id);
    for statement in q::DELETE_ACCOUNT_DATA {
        db.execute(statement, vec![principal.as_str().into()])
            .map_err(db_error)?;
    }
    Ok(true)
}
