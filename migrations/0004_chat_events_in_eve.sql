-- 0004: chats written before the agent spoke eve v1 stored events of an earlier dialect
-- (`user.message`, `assistant.text.delta`, `tool.call.*`, a top-level `index`, no
-- `data`/`meta`). Each such row becomes the eve event that says the same, in place (one row for
-- one row, so every slot and the seed's snapshot invariants stay as they were). Rows already in
-- eve's shape (they have `data`) are left alone, so running this twice changes nothing.
-- Their agent sessions were of the earlier agent: the chat forgets them, and its next message
-- starts a new eve session.

UPDATE chat_event SET
    event = json_object(
        'type', CASE event_type
            WHEN 'user.message' THEN 'message.received'
            WHEN 'assistant.text.delta' THEN 'message.appended'
            WHEN 'assistant.reasoning.delta' THEN 'reasoning.appended'
            WHEN 'tool.call.started' THEN 'action.input.appended'
            WHEN 'tool.call.input.delta' THEN 'action.input.appended'
            WHEN 'tool.call.ready' THEN 'actions.requested'
            WHEN 'tool.call.result' THEN 'action.result'
            WHEN 'usage' THEN 'step.completed'
            WHEN 'session.completed' THEN 'session.waiting'
            ELSE event_type END,
        'data', CASE event_type
            WHEN 'user.message' THEN json_object(
                'message', json_extract(event, '$.text'),
                'parts', json_array(json_object('type', 'text', 'text', json_extract(event, '$.text'))),
                'sequence', 0, 'turnId', 'turn_0')
            WHEN 'assistant.text.delta' THEN json_object(
                'messageDelta', json_extract(event, '$.delta'), 'sequence', 0, 'stepIndex', 0, 'turnId', 'turn_0')
            WHEN 'assistant.reasoning.delta' THEN json_object(
                'reasoningDelta', json_extract(event, '$.delta'), 'sequence', 0, 'stepIndex', 0, 'turnId', 'turn_0')
            WHEN 'tool.call.started' THEN json_object(
                'callId', json_extract(event, '$.toolCallId'), 'inputTextDelta', '',
                'toolName', json_extract(event, '$.toolName'), 'sequence', 0, 'stepIndex', 0, 'turnId', 'turn_0')
            WHEN 'tool.call.input.delta' THEN json_object(
                'callId', json_extract(event, '$.toolCallId'), 'inputTextDelta', json_extract(event, '$.delta'),
                'toolName', '', 'sequence', 0, 'stepIndex', 0, 'turnId', 'turn_0')
            WHEN 'tool.call.ready' THEN json_object(
                'actions', json_array(json_object(
                    'callId', json_extract(event, '$.toolCallId'),
                    'input', json(coalesce(json_extract(event, '$.input'), '{}')),
                    'kind', 'tool-call', 'toolName', json_extract(event, '$.toolName'))),
                'sequence', 0, 'stepIndex', 0, 'turnId', 'turn_0')
            WHEN 'tool.call.result' THEN json_object(
                'result', json_object(
                    'callId', json_extract(event, '$.toolCallId'), 'kind', 'tool-result',
                    'output', json_extract(event, '$.output'), 'toolName', json_extract(event, '$.toolName')),
                'status', CASE WHEN json_extract(event, '$.isError') THEN 'failed' ELSE 'completed' END,
                'sequence', 0, 'stepIndex', 0, 'turnId', 'turn_0')
            WHEN 'authorization.required' THEN json_object(
                'attemptId', json_extract(event, '$.authorizationId'),
                'authorization', json_object('url', json_extract(event, '$.connectUrl'),
                                             'displayName', json_extract(event, '$.displayName')),
                'callId', json_extract(event, '$.toolCallId'),
                'description', coalesce(json_extract(event, '$.description'), ''),
                'name', json_extract(event, '$.connection'),
                'sequence', 0, 'stepIndex', 0, 'turnId', 'turn_0')
            WHEN 'authorization.completed' THEN json_object(
                'attemptId', json_extract(event, '$.authorizationId'),
                'name', json_extract(event, '$.connection'),
                'outcome', CASE json_extract(event, '$.outcome') WHEN 'granted' THEN 'authorized' ELSE 'declined' END,
                'sequence', 0, 'stepIndex', 0, 'turnId', 'turn_0')
            WHEN 'input.requested' THEN json_object(
                'callId', '',
                'requests', json_array(json_object(
                    'action', json_object('callId', '', 'input', json_object(), 'kind', 'tool-call', 'toolName', 'ask_user'),
                    'kind', 'question',
                    'prompt', json_extract(event, '$.prompt'),
                    'requestId', json_extract(event, '$.requestId'))),
                'sequence', 0, 'stepIndex', 0, 'turnId', 'turn_0')
            WHEN 'usage' THEN json_object(
                'finishReason', 'stop',
                'usage', json_object('inputTokens', coalesce(json_extract(event, '$.inputTokens'), 0),
                                     'outputTokens', coalesce(json_extract(event, '$.outputTokens'), 0),
                                     'cacheReadTokens', 0),
                'sequence', 0, 'stepIndex', 0, 'turnId', 'turn_0')
            WHEN 'session.failed' THEN json_object(
                'code', coalesce(json_extract(event, '$.code'), 'failed'),
                'message', coalesce(json_extract(event, '$.message'), ''),
                'sessionId', '')
            ELSE json_object('continuationToken', '', 'wait', 'next-user-message')
            END,
        'meta', json_object('at', '1970-01-01T00:00:00.000Z', 'id', 'evt_legacy_' || chat_id || '_' || event_index))
WHERE json_extract(event, '$.data') IS NULL
  AND event_type IN ('user.message', 'assistant.text.delta', 'assistant.reasoning.delta', 'tool.call.started',
                     'tool.call.input.delta', 'tool.call.ready', 'tool.call.result', 'authorization.required',
                     'authorization.completed', 'input.requested', 'usage', 'session.waiting',
                     'session.completed', 'session.failed');

-- The settling checks read `event_type`: it follows the rewritten event.
UPDATE chat_event SET event_type = json_extract(event, '$.type')
WHERE json_extract(event, '$.meta.id') LIKE 'evt\_legacy\_%' ESCAPE '\'
  AND event_type <> json_extract(event, '$.type');

UPDATE chat SET eve_session = NULL
WHERE json_extract(eve_session, '$.sessionId') LIKE 'ses\_%' ESCAPE '\';
