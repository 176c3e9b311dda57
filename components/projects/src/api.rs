//! Which handler serves which route (the checks before it are [`crate::admission`]'s).

use eve_api::ApiError;
use eve_spin::chat_request::finish;
use spin_sdk::http::{Request, Response};

use crate::admission::Caller;
use crate::{files, projects};
use eve_projects::routes::{self, Route};

pub fn route(req: &Request, c: &Caller) -> Response {
    let method = req.method().to_string();
    let result = match (routes::route(req.path()), method.as_str()) {
        (Some(Route::Projects), "GET") => projects::list(c),
        (Some(Route::Projects), "POST") => projects::create(c, req),
        (Some(Route::Project(id)), "GET") => projects::get(c, id),
        (Some(Route::Project(id)), "PATCH") => projects::update(c, id, req),
        (Some(Route::Project(id)), "DELETE") => projects::delete(c, id),
        (Some(Route::Files(id)), "GET") => files::list(c, id),
        (Some(Route::Files(id)), "POST") => files::upload(c, id, req),
        (Some(Route::File(id, file)), "GET") => files::get(c, id, file),
        (Some(Route::File(id, file)), "DELETE") => files::delete(c, id, file),
        (Some(Route::Download(id, file)), "GET") => files::download(c, id, file),
        (Some(Route::Final(id, file)), "POST") => files::mark_final(c, id, file),
        // `admit` has checked the path and the method against the same table.
        _ => Err(ApiError::method_not_allowed()),
    };
    finish(result, c.refreshed_cookie.clone())
}
