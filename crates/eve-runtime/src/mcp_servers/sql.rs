//! Every statement on MCP servers as data (`mcp_server` of migration 0014) and the one read
//! of `system_setting` the outbound guard needs. Each write is one statement, so a failure
//! leaves nothing half-written.

/// The columns [`super::server`] reads, in order.
macro_rules! columns {
    () => {
        "id, name, display_name, description, url, auth, bearer_sealed, enabled, tools_json, \
         tools_at, tools_error"
    };
}

/// Every server by name, or only server `?1` when it is not NULL.
pub const SELECT_SERVERS: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM mcp_server WHERE (?1 IS NULL OR id = ?1) ORDER BY name"
);

/// `?1` id, `?2` name, `?3` display name, `?4` description, `?5` url, `?6` auth, `?7` sealed
/// token or NULL, `?8` its key id, `?9` now; inserted only while no server is named `?2` and
/// there are fewer than `?10` (nothing returned otherwise).
pub const INSERT_SERVER: &str = "INSERT INTO mcp_server (id, name, display_name, description, \
    url, auth, bearer_sealed, key_id, enabled, created_at, updated_at) \
    SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1, ?9, ?9 \
    WHERE NOT EXISTS (SELECT 1 FROM mcp_server WHERE name = ?2) \
    AND (SELECT count(*) FROM mcp_server) < ?10 RETURNING id";

/// Whether a server is named `?1`.
pub const NAME_TAKEN: &str = "SELECT EXISTS (SELECT 1 FROM mcp_server WHERE name = ?1)";

/// Server `?1`'s fields: `?2` display name, `?3` description, `?4` url, `?5` auth, `?6`
/// sealed token or NULL, `?7` its key id, `?8` enabled, `?9` 1 when the endpoint changed (the
/// cached tools were another endpoint's: forgotten), `?10` now; only while its url is still
/// `?11`, the one the patch was decided against (whether the token stays depends on the URL
/// it was entered for; nothing returned after a concurrent change).
pub const UPDATE_SERVER: &str = "UPDATE mcp_server SET display_name = ?2, description = ?3, \
    url = ?4, auth = ?5, bearer_sealed = ?6, key_id = ?7, enabled = ?8, \
    tools_json = CASE WHEN ?9 = 1 THEN NULL ELSE tools_json END, \
    tools_at = CASE WHEN ?9 = 1 THEN NULL ELSE tools_at END, \
    tools_error = CASE WHEN ?9 = 1 THEN NULL ELSE tools_error END, \
    updated_at = ?10 WHERE id = ?1 AND url = ?11 RETURNING id";

/// Every person's OAuth access token of connection `?1` (a server's name; the agent's
/// `agent_connection_token` of migration 0003): a server moved to another origin is signed
/// in to again.
pub const DELETE_OAUTH_TOKENS: &str = "DELETE FROM agent_connection_token WHERE connection = ?1";

/// Deletes server `?1`.
pub const DELETE_SERVER: &str = "DELETE FROM mcp_server WHERE id = ?1 RETURNING id";

/// A refresh of server `?1`'s tools, kept only if its url is still `?5` (an edit during the
/// refresh wins): `?2` the tools (JSON) or NULL to keep the last list, `?3` when, `?4` why it
/// failed or NULL.
pub const SET_TOOLS: &str = "UPDATE mcp_server SET tools_json = coalesce(?2, tools_json), \
    tools_at = CASE WHEN ?2 IS NULL THEN tools_at ELSE ?3 END, tools_error = ?4 \
    WHERE id = ?1 AND url = ?5 RETURNING id";

/// Every stored bearer token, sealed.
pub const SELECT_SEALED: &str =
    "SELECT id, bearer_sealed FROM mcp_server WHERE bearer_sealed IS NOT NULL";

/// Re-seals server `?1`'s token as `?2` under key `?3` if it is still `?4` (a token changed
/// meanwhile is left as the newer write made it).
pub const RESEAL: &str = "UPDATE mcp_server SET bearer_sealed = ?2, key_id = ?3 \
    WHERE id = ?1 AND bearer_sealed = ?4 RETURNING id";
