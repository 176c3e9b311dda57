//! Every statement of the Slack channel (migrations 0015, 0016 and 0017).

/// `?1` event id, `?2` now (ms): a row returned when this request is the first to see it.
pub const CLAIM_EVENT: &str = "INSERT INTO slack_event (event_id, received_at) VALUES (?1, ?2) \
    ON CONFLICT DO NOTHING RETURNING event_id";

/// Forgets event ids received before `?1` (ms).
pub const PRUNE_EVENTS: &str = "DELETE FROM slack_event WHERE received_at < ?1";

/// The session of principal `?4` in thread (`?1` team, `?2` channel, `?3` thread_ts).
pub const SELECT_THREAD: &str = "SELECT session_id FROM slack_thread_session \
    WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3 AND principal = ?4";

/// Records session `?5` of principal `?4` in thread `?1 ?2 ?3` at `?6`, unless that person
/// already has one there (the first writer wins; a row returned when this one did).
pub const INSERT_THREAD: &str = "INSERT INTO slack_thread_session \
    (team_id, channel_id, thread_ts, principal, session_id, created_at) \
    VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING RETURNING session_id";

/// Forgets the session of `?4` in thread `?1 ?2 ?3` when it is `?5` (the agent no longer has it).
pub const DELETE_THREAD: &str = "DELETE FROM slack_thread_session \
    WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3 AND principal = ?4 \
    AND session_id = ?5";

/// Records the open approval card of request `?3` in thread `?1 ?2`: its message `?4`, the
/// message showing its tool input `?5` (or NULL), the message's blocks `?6` (JSON), who may
/// answer it `?8`, at `?7`.
pub const UPSERT_CARD: &str = "INSERT INTO slack_card \
    (channel_id, thread_ts, request_id, message_ts, details_ts, blocks, created_at, requester) \
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (channel_id, thread_ts, request_id) \
    DO UPDATE SET message_ts = ?4, details_ts = ?5, blocks = ?6, created_at = ?7, requester = ?8";

/// Who may answer the open card of request `?3` in thread `?1 ?2`.
pub const SELECT_CARD_REQUESTER: &str = "SELECT requester FROM slack_card \
    WHERE channel_id = ?1 AND thread_ts = ?2 AND request_id = ?3";

/// Takes the open card of request `?3` in thread `?1 ?2` (a row returned to the one
/// invocation that settles it).
pub const TAKE_CARD: &str = "DELETE FROM slack_card \
    WHERE channel_id = ?1 AND thread_ts = ?2 AND request_id = ?3 \
    RETURNING message_ts, details_ts, blocks, requester";

/// The other open cards on message `?2` of channel `?1` show its new blocks `?3`.
pub const UPDATE_CARD_BLOCKS: &str = "UPDATE slack_card SET blocks = ?3 \
    WHERE channel_id = ?1 AND message_ts = ?2";

/// How many open cards of channel `?1` still refer to tool-input message `?2`.
pub const COUNT_DETAILS_USERS: &str = "SELECT COUNT(*) FROM slack_card \
    WHERE channel_id = ?1 AND details_ts = ?2";

/// The thread's (`?1 ?2 ?3`) last status text (NULL: none).
pub const SELECT_THREAD_STATUS: &str = "SELECT status FROM slack_thread_status \
    WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3";

/// Remembers the thread's (`?1 ?2 ?3`) status text `?4` (NULL: none).
pub const UPSERT_THREAD_STATUS: &str = "INSERT INTO slack_thread_status \
    (team_id, channel_id, thread_ts, status) VALUES (?1, ?2, ?3, ?4) \
    ON CONFLICT (team_id, channel_id, thread_ts) DO UPDATE SET status = ?4";
