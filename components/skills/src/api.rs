//! Who may call `/api/skills` and what each route does. Every signed-in principal (cookie or
//! API token) manages its own skills and its switches; global skills are written only by an
//! admin, decided from SQL on each request (`eve_skills::store::is_admin`: the local
//! developer in local-dev, an enabled `admin` account in accounts mode).

use eve_api::auth::AuthMode;
use eve_api::skills::{
    CreateSkillRequest, SkillEnabledRequest, SkillList, SkillResponse, UpdateSkillRequest,
};
use eve_api::ApiError;
use eve_skills::import::{self, Imported, MAX_ZIP_BYTES};
use eve_skills::store::{self, Caller as Who, NewSkill, SkillPatch};
use eve_spin::chat_request::{body, finish, no_content};
use eve_spin::db::{self, now_ms, Db};
use eve_spin::{api_component, json};
use eve_store::ids::{chat_id_from_random, CHAT_ID_LEN};
use spin_sdk::http::{Request, Response};

use eve_skills::routes::{self, Route};

/// An admitted request.
pub struct Caller {
    pub db: Db,
    pub principal: String,
    pub admin: bool,
    pub refreshed_cookie: Option<String>,
    pub body_cap: usize,
}

impl Caller {
    fn who(&self) -> Who<'_> {
        Who {
            principal: &self.principal,
            admin: self.admin,
        }
    }
}

/// The route (404) and method (405), a same-origin state change (403), a principal (401),
/// the database and the caller's role — all before a byte of the body is read.
pub fn admit(req: &Request) -> Result<Caller, Response> {
    let (_, session) = api_component::admit_head(req, routes::route(req.path()), Route::methods)?;
    let refused = |e: ApiError| finish(Err(e), session.refreshed_cookie.clone());
    let db = db::open().map_err(refused)?;
    let principal = session.principal.id.clone();
    let local_dev = session.principal.mode == AuthMode::LocalDev;
    let admin = store::is_admin(&db, &principal, local_dev).map_err(refused)?;
    Ok(Caller {
        db,
        principal,
        admin,
        refreshed_cookie: session.refreshed_cookie,
        body_cap: MAX_ZIP_BYTES,
    })
}

pub fn route(req: &Request, c: &Caller) -> Response {
    let method = req.method().to_string();
    let result = match (routes::route(req.path()), method.as_str()) {
        (Some(Route::Skills), "GET") => list(c),
        (Some(Route::Skills), "POST") => create(c, req),
        (Some(Route::Skill(id)), "GET") => store::get(&c.db, &c.who(), id).map(reply(200)),
        (Some(Route::Skill(id)), "PATCH") => update(c, id, req),
        (Some(Route::Skill(id)), "DELETE") => {
            store::delete(&c.db, &c.who(), id).map(|()| no_content())
        }
        (Some(Route::Enabled(id)), "PUT") => set_enabled(c, id, req),
        // `admit` has checked the path and the method against the same table.
        _ => Err(ApiError::method_not_allowed()),
    };
    finish(result, c.refreshed_cookie.clone())
}

fn reply(status: u16) -> impl Fn(eve_api::skills::Skill) -> Response {
    move |skill| json(status, &SkillResponse { skill })
}

/// `GET /api/skills`
fn list(c: &Caller) -> Result<Response, ApiError> {
    let skills = store::list(&c.db, &c.who())?;
    Ok(json(
        200,
        &SkillList {
            skills,
            can_manage_global: c.admin,
        },
    ))
}

/// A fresh random id.
fn new_id() -> Result<String, ApiError> {
    let mut bytes = [0u8; CHAT_ID_LEN];
    getrandom::fill(&mut bytes).map_err(|_| ApiError::internal("no randomness available"))?;
    Ok(format!("skill_{}", chat_id_from_random(bytes)))
}

/// `POST /api/skills`: a zip of a skill folder (`content-type: application/zip`,
/// `?global=true`), a `SKILL.md` text (`{skillMd, name?, global?}`), or the fields
/// (`{name, description, body?, deferred?, global?}`) → 201 `{skill}`.
fn create(c: &Caller, req: &Request) -> Result<Response, ApiError> {
    let (new, global) = if is_zip(req) {
        let imported = import::from_zip(req.body()).map_err(ApiError::bad_request)?;
        (from_import(imported), query_flag(req, "global"))
    } else {
        let input: CreateSkillRequest = body(req, MAX_ZIP_BYTES)?;
        (new_skill(&input)?, input.global)
    };
    let skill = store::create(&c.db, &c.who(), &new_id()?, global, &new, now_ms())?;
    Ok(json(201, &SkillResponse { skill }))
}

fn is_zip(req: &Request) -> bool {
    let declared = req.header("content-type").and_then(|v| v.as_str());
    declared.is_some_and(|t| {
        let essence = t.split(';').next().unwrap_or("").trim();
        essence.eq_ignore_ascii_case("application/zip")
            || essence.eq_ignore_ascii_case("application/x-zip-compressed")
    })
}

fn query_flag(req: &Request, name: &str) -> bool {
    form_urlencoded::parse(req.query().as_bytes())
        .any(|(k, v)| k == name && (v == "true" || v == "1"))
}

fn from_import(i: Imported) -> NewSkill {
    NewSkill {
        name: i.name,
        description: i.md.description,
        deferred: i.md.deferred,
        body: i.md.body,
        license: i.md.license,
    }
}

/// The skill a JSON create describes: a `SKILL.md` text, or the fields (not both).
fn new_skill(input: &CreateSkillRequest) -> Result<NewSkill, ApiError> {
    if let Some(text) = &input.skill_md {
        if input.description.is_some() || input.body.is_some() || input.deferred.is_some() {
            return Err(ApiError::bad_request(
                "give either skillMd or description, body and deferred, not both",
            ));
        }
        let imported =
            import::from_text(text, input.name.as_deref()).map_err(ApiError::bad_request)?;
        return Ok(from_import(imported));
    }
    let (Some(name), Some(description)) = (&input.name, &input.description) else {
        return Err(ApiError::bad_request(
            "a skill needs a name and a description (or a SKILL.md text in skillMd)",
        ));
    };
    Ok(NewSkill {
        name: name.clone(),
        description: description.clone(),
        deferred: input.deferred.unwrap_or(false),
        body: input.body.clone().unwrap_or_default(),
        license: None,
    })
}

/// `PATCH /api/skills/:id` `{name?, description?, body?, deferred?}` → `{skill}`.
fn update(c: &Caller, id: &str, req: &Request) -> Result<Response, ApiError> {
    let input: UpdateSkillRequest = body(req, MAX_ZIP_BYTES)?;
    let patch = SkillPatch {
        name: input.name,
        description: input.description,
        deferred: input.deferred,
        body: input.body,
    };
    store::update(&c.db, &c.who(), id, &patch, now_ms()).map(reply(200))
}

/// `PUT /api/skills/:id/enabled` `{enabled}` → `{skill}` with the caller's switch.
fn set_enabled(c: &Caller, id: &str, req: &Request) -> Result<Response, ApiError> {
    let input: SkillEnabledRequest = body(req, MAX_ZIP_BYTES)?;
    store::set_enabled(&c.db, &c.who(), id, input.enabled).map(reply(200))
}

impl api_component::Admitted for Caller {
    fn body_cap(&self) -> usize {
        self.body_cap
    }
    fn refreshed_cookie(&self) -> Option<String> {
        self.refreshed_cookie.clone()
    }
}
