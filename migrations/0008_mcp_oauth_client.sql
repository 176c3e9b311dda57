-- 0008 (issue 19 item 2): the sign-in of an MCP connection, discovered and registered once;
-- an index to free unused sessions.
--
-- The connect page used to run discovery (protected-resource and authorization-server
-- metadata) and RFC 7591 dynamic client registration at the provider on every visit. What it
-- found is kept here per connection (its name and URL) and redirect URI, shared by every
-- principal (a registered client is the app's, not a user's), and used again for a day; a
-- token exchange the server refuses forgets it. Nothing secret about a user is stored.
CREATE TABLE IF NOT EXISTS agent_mcp_oauth_client (
    connection     TEXT NOT NULL,
    connection_url TEXT NOT NULL,
    redirect_uri   TEXT NOT NULL,
    metadata       TEXT NOT NULL, -- the authorization server's metadata (JSON)
    flow           TEXT NOT NULL, -- the registered client and its endpoints (JSON)
    created_at     INTEGER NOT NULL,
    PRIMARY KEY (connection, connection_url, redirect_uri)
) WITHOUT ROWID;

-- Which chat names a session: looked up by session when unused sessions are freed (issue 19
-- item 2, `DELETE_UNUSED_SESSIONS`); the primary key is by chat.
CREATE INDEX IF NOT EXISTS chat_agent_session_by_session ON chat_agent_session (session_id);
