-- 0016 (issue 23): the Slack channel's open approval cards (components/slack, docs/slack.md).
--
-- `slack_card`: an approval request posted as a card, until it is settled. eve keeps these in
-- its channel state (`pendingApprovalCards`); here the card is posted by the invocation that
-- ran the turn and retired by a later one (the click's, or the next message's), so it is kept
-- in SQLite: the card's message and blocks, and the message showing the tool's input (deleted
-- when no open card refers to it any more), and the principal whose message started the turn
-- that asks: as in eve, only they may answer it. A row is taken (DELETE … RETURNING) by whichever
-- invocation settles it first.
CREATE TABLE IF NOT EXISTS slack_card (
    channel_id TEXT NOT NULL,
    thread_ts  TEXT NOT NULL,
    request_id TEXT NOT NULL,
    message_ts TEXT NOT NULL,
    details_ts TEXT,
    blocks     TEXT NOT NULL,
    requester  TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (channel_id, thread_ts, request_id)
);

-- The thread's status text as the channel last showed it (eve's persisted `threadStatus`): a
-- turn that resumes in a later invocation (a click) shows it again when its next step starts,
-- as eve does. NULL: none.
ALTER TABLE slack_thread ADD COLUMN status TEXT;
