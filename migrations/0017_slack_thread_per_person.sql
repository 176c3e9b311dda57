-- 0017 (issue 32): in a Slack thread, each person's turns run as that person.
--
-- `slack_thread` gave a thread one session, owned by whoever wrote first, so anyone replying
-- in the thread acted as them: their memory, their approvals, their quota. Now a thread has one
-- agent session per person who wrote in it (`slack:<team>:<user>`).
CREATE TABLE IF NOT EXISTS slack_thread_session (
    team_id    TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    thread_ts  TEXT NOT NULL,
    principal  TEXT NOT NULL,
    session_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (team_id, channel_id, thread_ts, principal)
);

-- The thread's status text as the channel last showed it (eve's persisted `threadStatus`):
-- Slack shows one status per thread, whoever's turn set it, so it stays the thread's.
CREATE TABLE IF NOT EXISTS slack_thread_status (
    team_id    TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    thread_ts  TEXT NOT NULL,
    status     TEXT,
    PRIMARY KEY (team_id, channel_id, thread_ts)
);

-- The threads so far keep their session (for the person who started them) and status.
-- `slack_thread` is no longer read; it stays so that these statements are safe to run again
-- (a migration retried after a partial run).
INSERT OR IGNORE INTO slack_thread_session
    (team_id, channel_id, thread_ts, principal, session_id, created_at)
    SELECT team_id, channel_id, thread_ts, principal, session_id, created_at FROM slack_thread;

INSERT OR IGNORE INTO slack_thread_status (team_id, channel_id, thread_ts, status)
    SELECT team_id, channel_id, thread_ts, status FROM slack_thread WHERE status IS NOT NULL;
