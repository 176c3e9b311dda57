-- 0014 (issue 22): what the agent can use, managed while it runs — model providers, MCP
-- servers and system settings — read per turn; the Spin variables stay the bootstrap
-- (docs/runtime.md).
--
-- Secrets (a provider's API key, an MCP server's bearer token) are stored only sealed with
-- XChaCha20-Poly1305 under the key of the secret variable `secrets_key`
-- (`eve_runtime::sealed`): `*_sealed` holds `v1.<key id>.<base64url(nonce ‖ ciphertext)>`,
-- bound to the row's id and column, so the database file holds no key bytes in the clear and
-- a sealed value copied to another row does not open. `key_id` says which key sealed it, so
-- a rotation knows what is left to re-seal.

-- A provider: an OpenAI-compatible or Anthropic endpoint. `name` is the prefix of its model
-- ids (`<name>/<model>`, what `step.started.modelId` reports and a message's `model` names).
CREATE TABLE IF NOT EXISTS provider (
    id             TEXT PRIMARY KEY NOT NULL,
    name           TEXT NOT NULL UNIQUE,        -- [a-z0-9][a-z0-9_-]{0,31}
    kind           TEXT NOT NULL CHECK (kind IN ('openai', 'anthropic')),
    base_url       TEXT NOT NULL,
    api_key_sealed TEXT,                        -- NULL: no key (a local server)
    key_id         TEXT,                        -- the sealing key's id, NULL with no key
    max_tokens     INTEGER,                     -- NULL: the provider's default
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);

-- A provider's models: listed from its models endpoint or typed; `enabled` = offered at all
-- (who may use an enabled one is the accounts issue's model access).
CREATE TABLE IF NOT EXISTS provider_model (
    provider_id    TEXT NOT NULL,
    model          TEXT NOT NULL,
    label          TEXT,
    enabled        INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    context_tokens INTEGER,
    position       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (provider_id, model)
) WITHOUT ROWID;

CREATE TRIGGER IF NOT EXISTS provider_deleted AFTER DELETE ON provider
BEGIN
    DELETE FROM provider_model WHERE provider_id = OLD.id;
END;

-- An MCP server added by an admin. `name` is the prefix of its tools, unique beside the
-- `mcp_connections` variable's. `tools_json` caches its last `tools/list` (with each tool's
-- annotations), refreshed on demand; `tools_error` is why the last refresh failed.
CREATE TABLE IF NOT EXISTS mcp_server (
    id            TEXT PRIMARY KEY NOT NULL,
    name          TEXT NOT NULL UNIQUE,          -- [a-z0-9_-]{1,32}
    display_name  TEXT NOT NULL,
    description   TEXT NOT NULL DEFAULT '',
    url           TEXT NOT NULL,
    auth          TEXT NOT NULL CHECK (auth IN ('none', 'bearer', 'oauth')),
    bearer_sealed TEXT,                          -- with auth 'bearer' only
    key_id        TEXT,
    enabled       INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    tools_json    TEXT,
    tools_at      INTEGER,
    tools_error   TEXT,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);

-- System-wide settings: one row per key, the value JSON (docs/runtime.md lists the keys and
-- their shapes). No row: the bootstrap (a Spin variable, else the built-in default).
CREATE TABLE IF NOT EXISTS system_setting (
    key        TEXT PRIMARY KEY NOT NULL,
    value      TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    updated_by TEXT
) WITHOUT ROWID;
