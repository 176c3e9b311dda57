//! Which models a principal may use. Admins, and principals that are not accounts
//! (local-dev, password, OIDC modes), may use every configured model; a member only those of
//! the deployment setting `member_models` (absent: all). The role is the account row's, read
//! on each request, so a change applies to the next message.

use eve_api::usage::{MemberModels, MemberModelsRequest, ModelOption};
use eve_api::{ApiError, ErrorCode};
use eve_store::sql::{Sql, SqlValue};

use crate::persistence::{DELETE_SETTING, MEMBER_MODELS_KEY, SELECT_SETTING, UPSERT_SETTING};
use crate::standing::Standing;

/// Whether the member-models setting binds `standing`: an account that is not an admin (an
/// account whose row is gone counts as a member: the least it may do).
pub fn is_member(standing: &Standing) -> bool {
    standing.is_account && standing.role.as_deref() != Some("admin")
}

/// The stored setting as a list (`None`: every model). A value that does not parse allows
/// nothing: only [`set_member_models`] writes it, so it cannot happen short of a hand edit,
/// and then closed is the safe side.
pub fn parse_member_models(stored: Option<&str>) -> Option<Vec<String>> {
    stored.map(|v| serde_json::from_str::<Vec<String>>(v).unwrap_or_default())
}

/// Whether `standing` may use `model`.
pub fn may_use(standing: &Standing, model: &str) -> bool {
    if !is_member(standing) {
        return true;
    }
    match parse_member_models(standing.member_models.as_deref()) {
        None => true,
        Some(list) => list.iter().any(|m| m == model),
    }
}

/// The models of `configured` (the owner's list, default first) that `standing` may use, in
/// the same order.
pub fn allowed<'a>(standing: &Standing, configured: &'a [String]) -> Vec<&'a str> {
    configured
        .iter()
        .filter(|m| may_use(standing, m))
        .map(String::as_str)
        .collect()
}

/// 403 `model_not_allowed` for a model `standing` may not use.
pub fn check_model(standing: &Standing, model: &str) -> Result<(), ApiError> {
    if may_use(standing, model) {
        return Ok(());
    }
    Err(ApiError::new(
        ErrorCode::ModelNotAllowed,
        format!("The model {model:?} is not available to members of this deployment."),
    ))
}

fn db_error(e: String) -> ApiError {
    eprintln!("usage: database error: {e}");
    ApiError::internal("database error")
}

/// `GET /api/admin/models`: the setting and the `configured` models to choose from.
pub fn member_models(db: &dyn Sql, configured: &[ModelOption]) -> Result<MemberModels, ApiError> {
    let rows = db
        .execute(SELECT_SETTING, vec![SqlValue::text(MEMBER_MODELS_KEY)])
        .map_err(db_error)?;
    let stored = rows
        .first()
        .and_then(|r| r.first())
        .and_then(SqlValue::as_str);
    Ok(MemberModels {
        member_models: parse_member_models(stored),
        models: configured.to_vec(),
    })
}

/// The request's list, checked: each id one of `configured`, at least one, each once (in
/// the order given). `None` stays `None` (every model).
pub fn validate(
    request: &MemberModelsRequest,
    configured: &[ModelOption],
) -> Result<Option<Vec<String>>, ApiError> {
    let Some(list) = &request.member_models else {
        return Ok(None);
    };
    if let Some(unknown) = list
        .iter()
        .find(|id| !configured.iter().any(|m| &m.id == *id))
    {
        return Err(ApiError::bad_request(format!(
            "memberModels: {unknown:?} is not a configured model"
        )));
    }
    let mut out: Vec<String> = Vec::new();
    for id in list {
        if !out.contains(id) {
            out.push(id.clone());
        }
    }
    if out.is_empty() {
        return Err(ApiError::bad_request(
            "memberModels: name at least one model, or null for every model",
        ));
    }
    Ok(Some(out))
}

/// `PUT /api/admin/models`: stores the checked setting (`actor` is the admin's principal).
/// Nothing changes when the request is refused.
pub fn set_member_models(
    db: &dyn Sql,
    request: &MemberModelsRequest,
    configured: &[ModelOption],
    actor: &str,
    now_ms: i64,
) -> Result<MemberModels, ApiError> {
    let list = validate(request, configured)?;
    let key = SqlValue::text(MEMBER_MODELS_KEY);
    match &list {
        None => db.execute(DELETE_SETTING, vec![key]),
        Some(ids) => db.execute(
            UPSERT_SETTING,
            vec![
                key,
                serde_json::to_string(ids)
                    .expect("strings serialize")
                    .into(),
                now_ms.into(),
                actor.into(),
            ],
        ),
    }
    .map_err(db_error)?;
    Ok(MemberModels {
        member_models: list,
        models: configured.to_vec(),
    })
}
