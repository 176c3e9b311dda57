-- 0015 (issue 23): the Slack channel (components/slack, docs/slack.md).
--
-- `slack_event`: the Events API `event_id`s already taken, so a delivery Slack repeats (a
-- retry, a duplicate) starts no second turn. Claimed with one INSERT … ON CONFLICT DO NOTHING
-- RETURNING: whichever node inserts first handles it. Rows older than a day are removed as new
-- ones arrive (Slack retries within minutes).
CREATE TABLE IF NOT EXISTS slack_event (
    event_id    TEXT PRIMARY KEY NOT NULL,
    received_at INTEGER NOT NULL
);

CREATE INDEX IF NOT EXISTS slack_event_received ON slack_event (received_at);

-- `slack_thread`: one agent session per Slack thread (eve's continuation token
-- `<channel>:<thread_ts>`, here with the workspace too), and the principal that owns it — the
-- Slack user whose message started the thread, `slack:<team>:<user>`.
CREATE TABLE IF NOT EXISTS slack_thread (
    team_id    TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    thread_ts  TEXT NOT NULL,
    session_id TEXT NOT NULL,
    principal  TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (team_id, channel_id, thread_ts)
);
