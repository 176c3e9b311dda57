-- 0010 (issue 20): API tokens for programmatic clients (eve's CLI, scripts).
--
-- A token authenticates `Authorization: Bearer <token>` on /eve/v1/* and /api/* as the
-- principal that created it, in every mode with a sign-in (password, OIDC, accounts). It is
-- shown once; only its SHA-256 (hex) is kept. Revoking sets `revoked_at`; deleting an account
-- deletes its tokens.
CREATE TABLE IF NOT EXISTS api_token (
    id            TEXT PRIMARY KEY NOT NULL,
    principal     TEXT NOT NULL,
    mode          TEXT NOT NULL,                       -- the auth mode it was created under
    name          TEXT NOT NULL,
    display_name  TEXT,                                -- the principal's name, as in its cookie
    email         TEXT,                                -- the principal's email (OIDC allowlist)
    token_hash    TEXT NOT NULL UNIQUE,
    created_at    INTEGER NOT NULL,                    -- Unix ms
    expires_at    INTEGER NOT NULL,
    last_used_at  INTEGER,
    revoked_at    INTEGER
);

CREATE INDEX IF NOT EXISTS api_token_by_principal ON api_token (principal);
