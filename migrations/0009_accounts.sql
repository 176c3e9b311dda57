-- 0009 (issue 20): accounts with roles, invitations, one-time reset links and the audit log.
--
-- In `auth_mode = "accounts"` every person is one row of `account` and one principal,
-- 'user:' || id, to which every chat, event, session, attachment, memory and token stays
-- scoped exactly as before. OIDC users become accounts on their first sign-in (`oidc_subject`
-- holds the principal id the OIDC mode used: 'oidc:<issuer hash>:<sub>').
--
-- The first admin is created by the sign-up that presents the secret `admin_setup_token`, in
-- one statement that inserts only while no admin exists, so the token works once even when
-- two sign-ups race. Invitation and reset tokens are stored as their SHA-256 (hex), never in
-- the clear; each is spent by one conditional UPDATE (`used_at IS NULL AND expires_at > now`).
CREATE TABLE IF NOT EXISTS account (
    id             TEXT PRIMARY KEY NOT NULL,          -- the principal is 'user:' || id
    email          TEXT NOT NULL COLLATE NOCASE UNIQUE,
    display_name   TEXT,
    password_hash  TEXT,                               -- argon2id PHC string; NULL: OIDC only
    role           TEXT NOT NULL CHECK (role IN ('admin', 'member')),
    disabled       INTEGER NOT NULL DEFAULT 0,
    language       TEXT,                               -- 'en' | 'zh-CN' | NULL (browser's)
    default_model  TEXT,                               -- a model id of llm_models, or NULL
    oidc_subject   TEXT UNIQUE,
    created_at     INTEGER NOT NULL,                   -- Unix ms
    last_active_at INTEGER
);

CREATE TABLE IF NOT EXISTS account_invite (
    token_hash  TEXT PRIMARY KEY NOT NULL,
    id          TEXT NOT NULL UNIQUE,                  -- shown to admins; the token never is again
    role        TEXT NOT NULL CHECK (role IN ('admin', 'member')),
    email       TEXT COLLATE NOCASE,                   -- when set, only this address may use it
    created_by  TEXT NOT NULL,                         -- account id
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    used_at     INTEGER,
    used_by     TEXT
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS account_reset (
    token_hash  TEXT PRIMARY KEY NOT NULL,
    account_id  TEXT NOT NULL,
    created_by  TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    used_at     INTEGER
) WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS account_reset_by_account ON account_reset (account_id);

-- Sign-ins, failed sign-ins, admin actions, token creation and revocation. `actor` and
-- `target` are principal ids (or NULL); `detail` is JSON without secrets.
CREATE TABLE IF NOT EXISTS audit_log (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    at      INTEGER NOT NULL,                          -- Unix ms
    actor   TEXT,
    action  TEXT NOT NULL,
    target  TEXT,
    detail  TEXT
);

CREATE INDEX IF NOT EXISTS audit_log_by_time ON audit_log (at);
