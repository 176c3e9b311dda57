//! Connections (seed 000: Notion, Linear, Sentry): which exist, which the user enabled for a
//! turn (read from the natural-language `clientContext`), and the authorization they need.

/// A connection the agent can use once the user authorized it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Connection {
    pub id: &'static str,
    pub display_name: &'static str,
    pub description: &'static str,
    /// The tool that uses it.
    pub tool: &'static str,
}

pub const CONNECTIONS: &[Connection] = &[
    Connection {
        id: "notion",
        display_name: "Notion",
        description: "Notion workspace: search and edit pages and databases.",
        tool: "notion_search",
    },
    Connection {
        id: "linear",
        display_name: "Linear",
        description: "Linear: search and update issues and projects.",
        tool: "linear_search",
    },
    Connection {
        id: "sentry",
        display_name: "Sentry",
        description: "Sentry: look up errors and issues in your projects.",
        tool: "sentry_search",
    },
];

pub fn by_id(id: &str) -> Option<&'static Connection> {
    CONNECTIONS.iter().find(|c| c.id == id)
}

/// The connection a tool uses, if it is a connection tool.
pub fn for_tool(tool: &str) -> Option<&'static Connection> {
    CONNECTIONS.iter().find(|c| c.tool == tool)
}

/// Whether the client context leaves connection `id` on (the rule of [`enabled`]).
pub fn is_enabled(client_context: Option<&str>, id: &str) -> bool {
    let Some(ctx) = client_context else {
        return true;
    };
    let lower = ctx.to_ascii_lowercase();
    !lower.split(['.', '\n', ';']).any(|sentence| {
        sentence.contains("enabled no connections")
            || ((sentence.contains("disabled") || sentence.contains("do not use"))
                && sentence.contains(&id.to_ascii_lowercase()))
    })
}

/// Which connections this turn may use, from the client context. The web app sends
/// "Connections the user enabled for this turn: Notion, Linear. Connections the user disabled
/// (do not use them): Sentry." A connection named in a sentence that says "disabled" or
/// "do not use" is off; "enabled no connections" turns all off; without a context (API
/// clients), or when a connection is not mentioned, it is on.
pub fn enabled(client_context: Option<&str>) -> Vec<&'static Connection> {
    let Some(ctx) = client_context else {
        return CONNECTIONS.iter().collect();
    };
    let lower = ctx.to_ascii_lowercase();
    let mut on: Vec<&'static Connection> = CONNECTIONS.iter().collect();
    for sentence in lower.split(['.', '\n', ';']) {
        let off_sentence = sentence.contains("disabled")
            || sentence.contains("do not use")
            || sentence.contains("enabled no connections");
        if !off_sentence {
            continue;
        }
        let all = sentence.contains("enabled no connections");
        on.retain(|c| !(all || sentence.contains(c.id)));
    }
    on
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: Vec<&Connection>) -> Vec<&str> {
        v.into_iter().map(|c| c.id).collect()
    }

    #[test]
    fn the_web_apps_client_context_enables_and_disables_connections_by_name() {
        let ctx = "Connections the user enabled for this turn: Notion. Connections the user disabled (do not use them): Linear, Sentry.";
        assert_eq!(ids(enabled(Some(ctx))), vec!["notion"]);
        assert_eq!(
            ids(enabled(Some(
                "The user enabled no connections for this turn."
            ))),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn without_a_client_context_every_connection_is_enabled() {
        assert_eq!(ids(enabled(None)), vec!["notion", "linear", "sentry"]);
    }

    #[test]
    fn connection_tools_map_to_their_connection() {
        assert_eq!(for_tool("notion_search").map(|c| c.id), Some("notion"));
        assert_eq!(for_tool("get_weather"), None);
    }
}
