//! Which handler serves which route (the checks before it are `eve_spin::chat_request`).

use crate::handlers;
use eve_api::ApiError;
use eve_spin::chat_request::{finish, ChatRequest};
use eve_store::routes::Resource;
use eve_store::ChatStore;
use spin_sdk::http::{Request, Response};

/// `ctx` is the request that passed `eve_spin::chat_request`'s checks (see `serve`).
pub fn route(req: &Request, ctx: ChatRequest<'_>) -> Response {
    let store = ChatStore::new(&ctx.db, &ctx.principal.id)
        .with_quota(handlers::quota(&ctx.db, &ctx.principal.id));
    let result = match (ctx.resource, ctx.method.as_str()) {
        (Resource::Event(id, index), "PUT") => handlers::put_event(&store, id, index, req),
        (Resource::Events(id), "POST") => handlers::append_events(&store, id, req),
        (Resource::Snapshot(id), "PUT") => handlers::save_snapshot(&store, id, req),
        (Resource::Pending(id), "PUT") => handlers::mark_pending(&store, id, req),
        (Resource::Pending(id), "DELETE") => handlers::clear_pending(&store, id, req),
        (Resource::Session(id), "PUT") => handlers::set_session(&store, id, req),
        (Resource::AuthorizationSkip(id), "POST") => handlers::skip_authorization(&store, id, req),
        (Resource::Pin(id), "PUT") => handlers::pin(&store, id, true),
        (Resource::Pin(id), "DELETE") => handlers::pin(&store, id, false),
        // `begin` has checked the method against the same table.
        _ => Err(ApiError::method_not_allowed()),
    };
    finish(result, ctx.refreshed_cookie)
}
