//! Which handler serves which route (the checks before it are `eve_spin::chat_request`).

use crate::handlers;
use eve_api::ApiError;
use eve_spin::chat_request::{finish, ChatRequest};
use eve_store::routes::Resource;
use eve_store::ChatStore;
use spin_sdk::http::{Request, Response};

/// `ctx` is the request that passed `eve_spin::chat_request`'s checks (see `serve`).
pub fn route(req: &Request, ctx: ChatRequest<'_>) -> Response {
    let store = ChatStore::new(&ctx.db, &ctx.principal.id);
    let result = match (ctx.resource, ctx.method.as_str()) {
        (Resource::Chats, "GET") => handlers::list(&store, req),
        (Resource::Chats, "POST") => handlers::create(&store, req),
        (Resource::Chat(id), "GET") => handlers::get(&store, id, req),
        (Resource::Chat(id), "PATCH") => handlers::update(&store, id, req),
        (Resource::Chat(id), "DELETE") => handlers::delete(&store, id),
        (Resource::Export(id), "GET") => handlers::export(&store, id, req),
        // `begin` has checked the method against the same table.
        _ => Err(ApiError::method_not_allowed()),
    };
    finish(result, ctx.refreshed_cookie)
}
