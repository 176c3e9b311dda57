//! The checks every request passes on its head alone, before a byte of its body is read:
//! the route (404) and method (405), a same-origin request for a state change (403), a
//! signed-in principal — cookie or API token (401) —, the database; for an upload also the
//! owner's type policy (415) and the cap its body is read with (413 from `Content-Length`).

use eve_agent::protocol::uploads::{essence, UploadPolicy};
use eve_api::{ApiError, ErrorCode};
use eve_spin::api_component;
use eve_spin::db::{self, Db};
use eve_store::limits::MAX_SMALL_BODY_BYTES;
use spin_sdk::http::{Request, Response};

use eve_projects::routes;

/// An admitted request.
pub struct Caller {
    pub db: Db,
    pub principal: String,
    /// `Set-Cookie` to attach when the session cookie should be reissued.
    pub refreshed_cookie: Option<String>,
    /// The most body bytes to read.
    pub body_cap: usize,
}

/// The owner's upload policy (`attachment_max_bytes`, `attachment_types`), per file.
pub fn policy() -> UploadPolicy {
    let var = |name: &str| spin_sdk::variables::get(name).ok();
    UploadPolicy::from_vars(
        var("attachment_max_bytes").as_deref(),
        var("attachment_types").as_deref(),
        None,
    )
}

/// The default storage cap of a principal (`principal_max_bytes`; an account's override wins
/// inside the statements).
pub fn storage_cap() -> u64 {
    let max = spin_sdk::variables::get("principal_max_bytes").ok();
    eve_store::limits::storage_quota(None, max.as_deref()).principal_bytes
}

/// The media type an upload declares (`content-type`'s essence; none: octet-stream), if the
/// policy allows it (415 otherwise).
pub fn upload_type(req: &Request, policy: &UploadPolicy) -> Result<String, ApiError> {
    let declared = req.header("content-type").and_then(|v| v.as_str());
    let media = declared
        .and_then(essence)
        .unwrap_or_else(|| "application/octet-stream".to_string());
    if !policy.allows(&media) {
        return Err(ApiError::new(
            ErrorCode::UnsupportedMediaType,
            format!("files of type {media} are not accepted here"),
        ));
    }
    Ok(media)
}

/// The request's caller, or the response that refuses it.
pub fn admit(req: &Request) -> Result<Caller, Response> {
    let (route, session) =
        api_component::admit_head(req, routes::route(req.path()), routes::Route::methods)?;
    let method = req.method().to_string();
    let refused =
        |e: ApiError| eve_spin::chat_request::finish(Err(e), session.refreshed_cookie.clone());
    let body_cap = if route.is_upload(&method) {
        let policy = policy();
        upload_type(req, &policy).map_err(refused)?;
        usize::try_from(policy.max_bytes).unwrap_or(usize::MAX)
    } else {
        MAX_SMALL_BODY_BYTES
    };
    let db = db::open().map_err(refused)?;
    Ok(Caller {
        db,
        principal: session.principal.id,
        refreshed_cookie: session.refreshed_cookie,
        body_cap,
    })
}

impl api_component::Admitted for Caller {
    fn body_cap(&self) -> usize {
        self.body_cap
    }
    fn refreshed_cookie(&self) -> Option<String> {
        self.refreshed_cookie.clone()
    }
}
