//! Which configured connections (MCP servers, see [`crate::mcp`]) the user left on for a turn,
//! read from the natural-language `clientContext` the web app sends.

/// Whether the client context leaves connection `name` on. The web app sends "Connections the
/// user enabled for this turn: Notion, Linear. Connections the user disabled (do not use
/// them): Sentry." A connection named in a sentence that says "disabled" or "do not use" is
/// off; "enabled no connections" turns all off; without a context (API clients), or when a
/// connection is not mentioned, it is on.
pub fn is_enabled(client_context: Option<&str>, name: &str) -> bool {
    let Some(ctx) = client_context else {
        return true;
    };
    let lower = ctx.to_ascii_lowercase();
    !lower.split(['.', '\n', ';']).any(|sentence| {
        sentence.contains("enabled no connections")
            || ((sentence.contains("disabled") || sentence.contains("do not use"))
                && sentence.contains(&name.to_ascii_lowercase()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_web_apps_client_context_enables_and_disables_connections_by_name() {
        let ctx = "Connections the user enabled for this turn: Notion. Connections the user disabled (do not use them): Linear, Sentry.";
        assert!(is_enabled(Some(ctx), "notion"));
        assert!(!is_enabled(Some(ctx), "linear"));
        assert!(!is_enabled(Some(ctx), "Sentry"));
        assert!(!is_enabled(
            Some("The user enabled no connections for this turn."),
            "notion"
        ));
    }

    #[test]
    fn without_a_client_context_or_a_mention_a_connection_is_enabled() {
        assert!(is_enabled(None, "notion"));
        assert!(is_enabled(
            Some("Connections the user disabled (do not use them): Linear."),
            "notes"
        ));
        assert!(is_enabled(
            Some("The user left every configured connection on for this turn."),
            "notes"
        ));
    }
}
