-- 0018 (issue 31, long chats): opening a chat reads one window of its log, not the whole log;
-- the two per-chat questions the answer still asks of the whole log use this index instead of
-- a walk over every event of the chat (100,000 in a long one):
-- - the newest branch marker before the window (`SELECT_BRANCH_BEFORE`): a seek on
--   (chat_id, 'eve-chat.branch') and one step back from the window's first slot. With
--   `created_at` ahead of `event_index` SQLite walked `idx_chat_event_chat_index` backwards
--   instead, through every event of a chat without a branch (measured: 167 ms at 100,000);
-- - when the newest settling event got its slot (`LATEST_SETTLING_EVENT_AT`, only while a
--   pending message exists): a covering scan of the chat's settling rows, about one per turn.
CREATE INDEX IF NOT EXISTS idx_chat_event_chat_type ON chat_event (chat_id, event_type, event_index, created_at);
