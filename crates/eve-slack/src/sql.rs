//! Every statement of the Slack channel (migration 0015).

/// `?1` event id, `?2` now (ms): a row returned when this request is the first to see it.
pub const CLAIM_EVENT: &str = "INSERT INTO slack_event (event_id, received_at) VALUES (?1, ?2) \
    ON CONFLICT DO NOTHING RETURNING event_id";

/// Forgets event ids received before `?1` (ms).
pub const PRUNE_EVENTS: &str = "DELETE FROM slack_event WHERE received_at < ?1";

/// The session and owner of thread (`?1` team, `?2` channel, `?3` thread_ts).
pub const SELECT_THREAD: &str = "SELECT session_id, principal FROM slack_thread \
    WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3";

/// Records thread `?1 ?2 ?3` as session `?4` of principal `?5` at `?6`, unless the thread
/// already has one (the first writer wins; a row returned when this one did).
pub const INSERT_THREAD: &str = "INSERT INTO slack_thread \
    (team_id, channel_id, thread_ts, session_id, principal, created_at) \
    VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING RETURNING session_id";

/// Forgets the thread's session (`?1 ?2 ?3`) when it is `?4` (the agent no longer has it).
pub const DELETE_THREAD: &str = "DELETE FROM slack_thread \
    WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3 AND session_id = ?4";
