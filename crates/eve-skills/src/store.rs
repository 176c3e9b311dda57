//! Skills as rows: a principal's own, the global ones (admins write them), the principal's
//! switch on each, and the set the agent offers. Another principal's skill answers 404,
//! exactly like one that does not exist; a global one a member tries to change, 403.

use eve_api::skills::{Skill, SkillScope};
use eve_api::{ApiError, ErrorCode};
use eve_store::sql::{Sql, SqlRow, SqlValue};
use eve_store::time::{format_iso_ms, Millis};

use crate::skill_md;
use crate::sql::*;
use crate::{exec, int, text};

/// The most skills one principal keeps, and the most global ones.
pub const MAX_SKILLS: i64 = 200;

/// Who is asking: the principal, and whether it may manage global skills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller<'a> {
    pub principal: &'a str,
    pub admin: bool,
}

/// A skill's fields as written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewSkill {
    pub name: String,
    pub description: String,
    pub deferred: bool,
    pub body: String,
    pub license: Option<String>,
}

/// What a change sets (`None` keeps each).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkillPatch {
    pub name: Option<String>,
    pub description: Option<String>,
    pub deferred: Option<bool>,
    pub body: Option<String>,
}

/// A skill the agent offers: enabled for the principal, not replaced by one of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offered {
    pub name: String,
    pub description: String,
    pub deferred: bool,
    pub body: String,
    pub license: Option<String>,
}

/// Whether `principal` may manage global skills: the local developer (local-dev mode has one
/// person, who runs the deployment), or an account that is an enabled admin now (read from
/// SQL on each request, never from a cookie). Password and OIDC principals are not accounts,
/// so they have no admin (docs/skills.md).
pub fn is_admin<S: Sql>(db: &S, principal: &str, local_dev: bool) -> Result<bool, ApiError> {
    if local_dev {
        return Ok(true);
    }
    let Some(id) = principal.strip_prefix(eve_api::auth::ACCOUNT_PRINCIPAL_PREFIX) else {
        return Ok(false);
    };
    let rows = exec(db, IS_ENABLED_ADMIN, vec![id.into()])?;
    Ok(rows.first().is_some_and(|r| int(r, 0) == 1))
}

fn not_found() -> ApiError {
    ApiError::not_found("skill not found")
}

fn admins_only() -> ApiError {
    ApiError::forbidden("only admins manage global skills")
}

fn bad(reason: String) -> ApiError {
    ApiError::bad_request(reason)
}

/// A row of [`SELECT_VISIBLE`] as `caller` sees it.
fn skill(row: &SqlRow, caller: &Caller) -> Skill {
    let global = row.get(1).is_none_or(|v| v.as_str().is_none());
    let license = row.get(6).and_then(SqlValue::as_str).map(str::to_string);
    Skill {
        id: text(row, 0),
        scope: if global {
            SkillScope::Global
        } else {
            SkillScope::Personal
        },
        name: text(row, 2),
        description: text(row, 3),
        deferred: int(row, 4) == 1,
        body: text(row, 5),
        license,
        created_at: format_iso_ms(int(row, 7)),
        updated_at: format_iso_ms(int(row, 8)),
        enabled: int(row, 9) == 0,
        shadowed: int(row, 10) == 1,
        editable: !global || caller.admin,
    }
}

fn visible<S: Sql>(db: &S, caller: &Caller, id: Option<&str>) -> Result<Vec<Skill>, ApiError> {
    let params = vec![
        caller.principal.into(),
        SqlValue::opt_text(id),
        (2 * MAX_SKILLS).into(),
    ];
    let rows = exec(db, SELECT_VISIBLE, params)?;
    Ok(rows.iter().map(|r| skill(r, caller)).collect())
}

/// The caller's own skills, then the global ones, each by name.
pub fn list<S: Sql>(db: &S, caller: &Caller) -> Result<Vec<Skill>, ApiError> {
    visible(db, caller, None)
}

/// One skill the caller sees (404 otherwise).
pub fn get<S: Sql>(db: &S, caller: &Caller, id: &str) -> Result<Skill, ApiError> {
    visible(db, caller, Some(id))?
        .into_iter()
        .next()
        .ok_or_else(not_found)
}

/// Checks a skill's fields by eve's rules and our bounds (400 with the reason).
pub fn check(new: &NewSkill) -> Result<(), ApiError> {
    skill_md::check_name(&new.name).map_err(bad)?;
    skill_md::check_sizes(&new.description, &new.body).map_err(bad)
}

/// Creates a skill (`id` fresh and random): the caller's own, or a global one (admins only).
/// 409 when the owner has one of that name or [`MAX_SKILLS`] already.
pub fn create<S: Sql>(
    db: &S,
    caller: &Caller,
    id: &str,
    global: bool,
    new: &NewSkill,
    now: Millis,
) -> Result<Skill, ApiError> {
    if global && !caller.admin {
        return Err(admins_only());
    }
    check(new)?;
    let owner = (!global).then_some(caller.principal);
    let params = vec![
        id.into(),
        SqlValue::opt_text(owner),
        new.name.as_str().into(),
        new.description.as_str().into(),
        new.deferred.into(),
        new.body.as_str().into(),
        SqlValue::opt_text(new.license.as_deref()),
        now.into(),
        MAX_SKILLS.into(),
    ];
    if exec(db, INSERT_SKILL, params)?.is_empty() {
        return Err(refused_insert(db, owner, &new.name)?);
    }
    get(db, caller, id)
}

/// Why [`INSERT_SKILL`] wrote nothing: the name is taken, or the owner is full.
fn refused_insert<S: Sql>(db: &S, owner: Option<&str>, name: &str) -> Result<ApiError, ApiError> {
    let rows = exec(
        db,
        OWNER_COUNT_AND_NAME,
        vec![SqlValue::opt_text(owner), name.into()],
    )?;
    let taken = rows.first().is_some_and(|r| int(r, 1) > 0);
    Ok(if taken {
        ApiError::new(
            ErrorCode::Conflict,
            format!("a skill named {name:?} exists already"),
        )
    } else {
        ApiError::new(
            ErrorCode::Conflict,
            format!("at most {MAX_SKILLS} skills: delete one first"),
        )
    })
}

/// Changes a skill the caller may edit (404 if it does not see it, 403 for a global one
/// unless an admin, 409 for a name its owner has already).
pub fn update<S: Sql>(
    db: &S,
    caller: &Caller,
    id: &str,
    patch: &SkillPatch,
    now: Millis,
) -> Result<Skill, ApiError> {
    let current = get(db, caller, id)?;
    if !current.editable {
        return Err(admins_only());
    }
    check(&NewSkill {
        name: patch.name.clone().unwrap_or(current.name),
        description: patch.description.clone().unwrap_or(current.description),
        deferred: false,
        body: patch.body.clone().unwrap_or(current.body),
        license: None,
    })?;
    let params = vec![
        id.into(),
        caller.principal.into(),
        SqlValue::opt_text(patch.name.as_deref()),
        SqlValue::opt_text(patch.description.as_deref()),
        patch.deferred.map_or(SqlValue::Null, SqlValue::from),
        SqlValue::opt_text(patch.body.as_deref()),
        now.into(),
        caller.admin.into(),
    ];
    if exec(db, UPDATE_SKILL, params)?.is_empty() {
        // It was seen and editable a moment ago: the new name is taken (or it just went).
        let name = patch.name.as_deref().unwrap_or_default();
        get(db, caller, id)?;
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!("a skill named {name:?} exists already"),
        ));
    }
    get(db, caller, id)
}

/// Deletes a skill the caller may edit (404 / 403 as [`update`]), with every switch on it.
pub fn delete<S: Sql>(db: &S, caller: &Caller, id: &str) -> Result<(), ApiError> {
    let current = get(db, caller, id)?;
    if !current.editable {
        return Err(admins_only());
    }
    let params = vec![id.into(), caller.principal.into(), caller.admin.into()];
    exec(db, DELETE_SKILL, params)?;
    Ok(())
}

/// The caller's switch on a skill it sees (its own or a global one).
pub fn set_enabled<S: Sql>(
    db: &S,
    caller: &Caller,
    id: &str,
    enabled: bool,
) -> Result<Skill, ApiError> {
    get(db, caller, id)?;
    let statement = if enabled { ENABLE_SKILL } else { DISABLE_SKILL };
    exec(db, statement, vec![caller.principal.into(), id.into()])?;
    get(db, caller, id)
}

/// The skills the agent offers `principal`: its own and the global ones it has not switched
/// off; its own enabled skill replaces a global one of the same name. By name.
pub fn offered<S: Sql>(db: &S, principal: &str) -> Result<Vec<Offered>, ApiError> {
    let caller = Caller {
        principal,
        admin: false,
    };
    let mut skills: Vec<Offered> = list(db, &caller)?
        .into_iter()
        .filter(|s| s.enabled && !s.shadowed)
        .map(|s| Offered {
            name: s.name,
            description: s.description,
            deferred: s.deferred,
            body: s.body,
            license: s.license,
        })
        .collect();
    skills.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(skills)
}
