//! Chats written before the agent spoke eve stored events of an earlier dialect
//! (`user.message`, `assistant.text.delta`, `tool.call.*`, an `index` field, no `data`/`meta`).
//! [`to_eve`] reads one such event as the eve events that say the same, so those chats still
//! open, search and export; an eve event passes through unchanged.

use serde_json::{json, Value};

/// Whether `v` is an event of the earlier dialect (a `type` and no `data`).
pub fn is_legacy(v: &Value) -> bool {
    v.get("type").is_some_and(Value::is_string) && v.get("data").is_none()
}

/// The eve events that say what `v` said (one event as it is when it already is eve's).
pub fn to_eve(v: &Value) -> Vec<Value> {
    if !is_legacy(v) {
        return vec![v.clone()];
    }
    let t = v["type"].as_str().unwrap_or("");
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let index = v.get("index").and_then(Value::as_u64);
    let turn = json!({ "sequence": 0, "turnId": "turn_0" });
    let step = json!({ "sequence": 0, "stepIndex": 0, "turnId": "turn_0" });
    let with = |base: &Value, extra: Value| {
        let mut d = base.clone();
        for (k, x) in extra.as_object().expect("an object") {
            d[k] = x.clone();
        }
        d
    };
    let events: Vec<(&str, Value)> = match t {
        "user.message" => vec![(
            "message.received",
            with(
                &turn,
                json!({ "message": s("text"), "parts": [{ "type": "text", "text": s("text") }] }),
            ),
        )],
        "assistant.text.delta" => vec![(
            "message.appended",
            with(&step, json!({ "messageDelta": s("delta") })),
        )],
        "assistant.reasoning.delta" => {
            vec![(
                "reasoning.appended",
                with(&step, json!({ "reasoningDelta": s("delta") })),
            )]
        }
        "tool.call.started" => vec![],
        "tool.call.input.delta" => vec![(
            "action.input.appended",
            with(
                &step,
                json!({ "callId": s("toolCallId"), "inputTextDelta": s("delta"), "toolName": "" }),
            ),
        )],
        "tool.call.ready" => vec![(
            "actions.requested",
            with(
                &step,
                json!({ "actions": [{
                "callId": s("toolCallId"), "input": v.get("input").cloned().unwrap_or(json!({})),
                "kind": "tool-call", "toolName": s("toolName"),
            }] }),
            ),
        )],
        "tool.call.result" => {
            let is_error = v.get("isError").and_then(Value::as_bool).unwrap_or(false);
            vec![(
                "action.result",
                with(
                    &step,
                    json!({
                        "result": { "callId": s("toolCallId"), "kind": "tool-result", "toolName": s("toolName"),
                                    "output": v.get("output").cloned().unwrap_or(Value::Null) },
                        "status": if is_error { "failed" } else { "completed" },
                    }),
                ),
            )]
        }
        "authorization.required" => vec![(
            "authorization.required",
            with(
                &step,
                json!({
                    "attemptId": s("authorizationId"), "name": s("connection"), "description": s("description"),
                    "callId": s("toolCallId"),
                    "authorization": { "url": s("connectUrl"), "displayName": s("displayName") },
                }),
            ),
        )],
        "authorization.completed" => vec![(
            "authorization.completed",
            with(
                &step,
                json!({
                    "attemptId": s("authorizationId"), "name": s("connection"),
                    "outcome": if s("outcome") == "granted" { "authorized" } else { "declined" },
                }),
            ),
        )],
        "input.requested" => {
            let options: Vec<Value> = v
                .get("options")
                .and_then(Value::as_array)
                .map(|o| {
                    o.iter()
                        .enumerate()
                        .filter_map(|(i, l)| {
                            l.as_str()
                                .map(|l| json!({ "id": format!("option_{i}"), "label": l }))
                        })
                        .collect()
                })
                .unwrap_or_default();
            vec![(
                "input.requested",
                with(
                    &step,
                    json!({ "callId": "", "requests": [{
                    "action": { "callId": "", "input": {}, "kind": "tool-call", "toolName": "ask_user" },
                    "kind": "question", "prompt": s("prompt"), "requestId": s("requestId"), "options": options,
                }] }),
                ),
            )]
        }
        "usage" => vec![(
            "step.completed",
            with(
                &step,
                json!({ "finishReason": "stop", "usage": {
                "inputTokens": v.get("inputTokens").cloned().unwrap_or(json!(0)),
                "outputTokens": v.get("outputTokens").cloned().unwrap_or(json!(0)),
                "cacheReadTokens": 0,
            } }),
            ),
        )],
        "session.waiting" => {
            let mut out = Vec::new();
            if s("reason") == "interrupted" {
                out.push(("turn.cancelled", turn.clone()));
            }
            out.push((
                "session.waiting",
                json!({ "continuationToken": "", "wait": "next-user-message" }),
            ));
            out
        }
        "session.completed" => vec![
            ("turn.completed", turn.clone()),
            (
                "session.waiting",
                json!({ "continuationToken": "", "wait": "next-user-message" }),
            ),
        ],
        "session.failed" => vec![(
            "session.failed",
            json!({ "code": s("code"), "message": s("message"), "sessionId": "" }),
        )],
        _ => return vec![v.clone()],
    };
    events
        .into_iter()
        .enumerate()
        .map(|(i, (t, data))| {
            let id = match index {
                Some(n) => format!("evt_legacy_{n}_{i}"),
                None => format!("evt_legacy_{i}"),
            };
            json!({ "type": t, "data": data, "meta": { "at": "1970-01-01T00:00:00.000Z", "id": id } })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eve::Envelope;

    #[test]
    fn every_event_of_the_earlier_dialect_becomes_valid_eve_events() {
        let old = vec![
            json!({ "type": "user.message", "index": 0, "text": "hi" }),
            json!({ "type": "assistant.reasoning.delta", "index": 1, "delta": "hmm" }),
            json!({ "type": "assistant.text.delta", "index": 2, "delta": "Hello" }),
            json!({ "type": "tool.call.started", "index": 3, "toolCallId": "c", "toolName": "get_weather" }),
            json!({ "type": "tool.call.input.delta", "index": 4, "toolCallId": "c", "delta": "{" }),
            json!({ "type": "tool.call.ready", "index": 5, "toolCallId": "c", "toolName": "get_weather", "input": {} }),
            json!({ "type": "tool.call.result", "index": 6, "toolCallId": "c", "toolName": "get_weather", "output": {}, "isError": false }),
            json!({ "type": "authorization.required", "index": 7, "authorizationId": "a", "connection": "notion", "displayName": "Notion", "description": "d", "connectUrl": "/u", "toolCallId": "c" }),
            json!({ "type": "authorization.completed", "index": 8, "authorizationId": "a", "connection": "notion", "outcome": "granted" }),
            json!({ "type": "input.requested", "index": 9, "requestId": "r", "prompt": "p", "options": ["a"] }),
            json!({ "type": "usage", "index": 10, "inputTokens": 1, "outputTokens": 2 }),
            json!({ "type": "session.waiting", "index": 11, "reason": "interrupted" }),
            json!({ "type": "session.completed", "index": 12 }),
            json!({ "type": "session.failed", "index": 13, "message": "m", "code": "c" }),
        ];
        let mut n = 0;
        for v in &old {
            for e in to_eve(v) {
                let parsed: Result<Envelope, _> = serde_json::from_value(e.clone());
                assert!(parsed.is_ok(), "{e}: {parsed:?}");
                n += 1;
            }
        }
        assert_eq!(n, 15);
    }

    #[test]
    fn eve_events_pass_through() {
        let e = json!({ "type": "turn.started", "data": { "sequence": 0, "turnId": "turn_0" }, "meta": { "at": "t", "id": "x" } });
        assert_eq!(to_eve(&e), vec![e.clone()]);
        assert!(!is_legacy(&e));
    }
}
