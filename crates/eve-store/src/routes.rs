//! The chat API's route table, one for both components: `chats` serves the collection, a chat
//! and its export; `events` serves everything else under `/api/chats/:id/`. Parsed from the
//! request path so that it does not depend on which `spin-*` headers a host sets.

/// A resource of the chat API. Ids and indices are raw path segments, validated by the
/// handlers (an invalid id is a 404, an invalid index a 400).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource<'a> {
    /// `/api/chats`
    Chats,
    /// `/api/chats/:id`
    Chat(&'a str),
    /// `/api/chats/:id/export`
    Export(&'a str),
    /// `/api/chats/:id/events`
    Events(&'a str),
    /// `/api/chats/:id/events/:eventIndex`
    Event(&'a str, &'a str),
    /// `/api/chats/:id/snapshot`
    Snapshot(&'a str),
    /// `/api/chats/:id/pending`
    Pending(&'a str),
    /// `/api/chats/:id/session`
    Session(&'a str),
    /// `/api/chats/:id/authorization/skip`
    AuthorizationSkip(&'a str),
    /// `/api/chats/:id/pin`
    Pin(&'a str),
}

/// Which component serves a resource (the `spin.toml` routes agree).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Component {
    Chats,
    Events,
}

/// The API's path prefix.
pub const PREFIX: &str = "/api/chats";

/// The resource at `path` (no query string), or `None` for an unknown path.
pub fn resource(path: &str) -> Option<Resource<'_>> {
    Some(match eve_api::path::segments(path, PREFIX)?.as_slice() {
        [] => Resource::Chats,
        [id] => Resource::Chat(id),
        [id, "export"] => Resource::Export(id),
        [id, "events"] => Resource::Events(id),
        [id, "events", index] => Resource::Event(id, index),
        [id, "snapshot"] => Resource::Snapshot(id),
        [id, "pending"] => Resource::Pending(id),
        [id, "session"] => Resource::Session(id),
        [id, "authorization", "skip"] => Resource::AuthorizationSkip(id),
        [id, "pin"] => Resource::Pin(id),
        _ => return None,
    })
}

impl Resource<'_> {
    /// The methods the resource answers (for 405 and `Allow`).
    pub fn methods(&self) -> &'static [&'static str] {
        match self {
            Resource::Chats => &["GET", "POST"],
            Resource::Chat(_) => &["GET", "PATCH", "DELETE"],
            Resource::Export(_) => &["GET"],
            Resource::Events(_) | Resource::AuthorizationSkip(_) => &["POST"],
            Resource::Pending(_) | Resource::Pin(_) => &["PUT", "DELETE"],
            Resource::Event(..) | Resource::Snapshot(_) | Resource::Session(_) => &["PUT"],
        }
    }

    /// The component that serves it.
    pub fn component(&self) -> Component {
        match self {
            Resource::Chats | Resource::Chat(_) | Resource::Export(_) => Component::Chats,
            _ => Component::Events,
        }
    }

    /// The chat id segment, when the resource is under a chat.
    pub fn chat_id(&self) -> Option<&str> {
        match *self {
            Resource::Chats => None,
            Resource::Chat(id)
            | Resource::Export(id)
            | Resource::Events(id)
            | Resource::Event(id, _)
            | Resource::Snapshot(id)
            | Resource::Pending(id)
            | Resource::Session(id)
            | Resource::AuthorizationSkip(id)
            | Resource::Pin(id) => Some(id),
        }
    }
}

/// Whether a method changes state (and so needs the same-origin check).
pub fn is_state_changing(method: &str) -> bool {
    matches!(method, "POST" | "PUT" | "PATCH" | "DELETE")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_of_the_design_table_parses() {
        assert_eq!(resource("/api/chats"), Some(Resource::Chats));
        assert_eq!(resource("/api/chats/abc"), Some(Resource::Chat("abc")));
        assert_eq!(
            resource("/api/chats/abc/export"),
            Some(Resource::Export("abc"))
        );
        assert_eq!(
            resource("/api/chats/abc/events"),
            Some(Resource::Events("abc"))
        );
        assert_eq!(
            resource("/api/chats/abc/events/7"),
            Some(Resource::Event("abc", "7"))
        );
        assert_eq!(
            resource("/api/chats/abc/snapshot"),
            Some(Resource::Snapshot("abc"))
        );
        assert_eq!(
            resource("/api/chats/abc/pending"),
            Some(Resource::Pending("abc"))
        );
        assert_eq!(
            resource("/api/chats/abc/session"),
            Some(Resource::Session("abc"))
        );
        assert_eq!(
            resource("/api/chats/abc/authorization/skip"),
            Some(Resource::AuthorizationSkip("abc"))
        );
        assert_eq!(resource("/api/chats/abc/pin"), Some(Resource::Pin("abc")));
        assert_eq!(Resource::Pin("abc").component(), Component::Events);
    }

    #[test]
    fn unknown_paths_are_none() {
        for p in [
            "/api/chat",
            "/api/chatsx",
            "/api/chats/",
            "/api/chats//events",
            "/api/chats/abc/",
            "/api/chats/abc/nope",
            "/api/chats/abc/events/1/2",
            "/api/chats/abc/authorization",
            "/api/chats/abc/authorization/grant",
        ] {
            assert_eq!(resource(p), None, "{p}");
        }
    }

    #[test]
    fn export_belongs_to_chats_and_sub_resources_to_events() {
        assert_eq!(
            resource("/api/chats/a/export").unwrap().component(),
            Component::Chats
        );
        assert_eq!(
            resource("/api/chats/a").unwrap().component(),
            Component::Chats
        );
        assert_eq!(
            resource("/api/chats/a/events/1").unwrap().component(),
            Component::Events
        );
        assert_eq!(
            resource("/api/chats/a/authorization/skip")
                .unwrap()
                .component(),
            Component::Events
        );
    }

    #[test]
    fn methods_follow_the_design_table() {
        assert_eq!(Resource::Chats.methods(), ["GET", "POST"]);
        assert_eq!(Resource::Chat("a").methods(), ["GET", "PATCH", "DELETE"]);
        assert_eq!(Resource::Event("a", "1").methods(), ["PUT"]);
        assert_eq!(Resource::Events("a").methods(), ["POST"]);
    }
}
