-- 0018 (issue 31, long chats): opening a chat reads one window of its log, not the whole log;
-- the two per-chat questions the answer still asks of the whole log become index seeks:
-- when the newest settling event got its slot (`LATEST_SETTLING_EVENT_AT`: one seek per
-- settling type for `max(created_at)`), and the newest branch marker before the window
-- (`SELECT_BRANCH_BEFORE`: the chat's few `eve-chat.branch` rows). Without it both walked every
-- event of the chat, 100,000 of them in a long one.
CREATE INDEX IF NOT EXISTS idx_chat_event_chat_type_at ON chat_event (chat_id, event_type, created_at);
