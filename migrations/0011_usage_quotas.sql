-- 0011 (issue 20): model usage per principal, day and model; per-account quotas; which
-- models members may use.
--
-- A turn's tokens (from the providers' usage events, carried by `step.completed`) are added
-- to `usage_daily` by the trigger below, inside the statement that appends the step's
-- `step.completed` to the agent's log. That append happens once per step (the log's slot is
-- unique and a runner that lost its lease cannot write), and a turn resumed by another node
-- continues from the log, so a settled step is counted exactly once, crash or not.
-- `day` is the UTC date 'YYYY-MM-DD' of the database's clock, the one every node shares.
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

-- The step's model is its `step.started`'s (the latest before it: a resumed step writes no
-- new one). `calls` counts settled steps.
CREATE TRIGGER IF NOT EXISTS eve_step_usage_recorded AFTER INSERT ON eve_event
WHEN NEW.type = 'step.completed' AND json_valid(NEW.body)
BEGIN
    INSERT INTO usage_daily (principal, day, model, tokens_in, tokens_out, calls)
    SELECT s.principal, date('now'),
        COALESCE((SELECT json_extract(e.body, '$.data.modelId') FROM eve_event AS e
            WHERE e.session_id = NEW.session_id AND e.idx < NEW.idx AND e.type = 'step.started'
            AND json_valid(e.body) ORDER BY e.idx DESC LIMIT 1), 'unknown'),
        COALESCE(json_extract(NEW.body, '$.data.usage.inputTokens'), 0),
        COALESCE(json_extract(NEW.body, '$.data.usage.outputTokens'), 0),
        1
    FROM eve_session AS s WHERE s.id = NEW.session_id
    ON CONFLICT (principal, day, model) DO UPDATE SET
        tokens_in = tokens_in + excluded.tokens_in,
        tokens_out = tokens_out + excluded.tokens_out,
        calls = calls + excluded.calls;
END;

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
