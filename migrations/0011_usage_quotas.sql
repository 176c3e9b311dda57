-- 0011 (issue 20): model usage per principal, day and model; per-account quotas; which
-- models members may use.
--
-- The agent adds a turn's tokens (from the providers' usage events) to `usage_daily` in the
-- statement that settles the turn's step. `day` is the UTC date 'YYYY-MM-DD'.
CREATE TABLE IF NOT EXISTS usage_daily (
    principal   TEXT NOT NULL,
    day         TEXT NOT NULL,
    model       TEXT NOT NULL,
    tokens_in   INTEGER NOT NULL DEFAULT 0,
    tokens_out  INTEGER NOT NULL DEFAULT 0,
    calls       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (principal, day, model)
) WITHOUT ROWID;

CREATE INDEX IF NOT EXISTS usage_daily_by_day ON usage_daily (day);

-- Per-principal overrides of the deployment defaults (`quota_tokens_per_day`,
-- `principal_max_bytes`); NULL: the default.
CREATE TABLE IF NOT EXISTS principal_quota (
    principal       TEXT PRIMARY KEY NOT NULL,
    tokens_per_day  INTEGER,
    storage_bytes   INTEGER
) WITHOUT ROWID;

-- Settings an admin keeps as data. Key 'member_models': a JSON array of the model ids
-- (the ids of llm_models) members may use; absent: all.
CREATE TABLE IF NOT EXISTS deployment_setting (
    key    TEXT PRIMARY KEY NOT NULL,
    value  TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    updated_by TEXT
) WITHOUT ROWID;
