//! `GET /eve/v1/info`: the agent-info snapshot in eve's schema (`kind: "eve-agent-info"`,
//! the version the reference serves), reduced to what this agent has: its name, model, tools
//! and connections. Source-ownership and sandbox sections eve reports do not apply here.

use serde_json::{json, Value};

use crate::connections::CONNECTIONS;
use crate::model::ToolSpec;

/// The agent-info version the reference eve 0.80.1 serves.
pub const INFO_VERSION: u64 = 5;

/// The info document for `tools` (every tool the agent may offer) and `model_id`.
pub fn agent_info(model_id: &str, tools: &[ToolSpec]) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| {
            json!({
                "description": t.description,
                "hasAuth": crate::connections::for_tool(&t.name).is_some(),
                "hasExecute": true,
                "inputSchema": t.input_schema,
                "name": t.name,
                "owner": { "kind": "application" },
                "requiresApproval": false,
            })
        })
        .collect();
    let connections: Vec<Value> = CONNECTIONS
        .iter()
        .map(|c| {
            json!({
                "description": c.description,
                "displayName": c.display_name,
                "name": c.id,
                "owner": { "kind": "application" },
            })
        })
        .collect();
    json!({
        "kind": "eve-agent-info",
        "version": INFO_VERSION,
        "mode": "production",
        "agent": {
            "name": "eve-chat",
            "model": { "id": model_id },
        },
        "capabilities": {},
        "channels": { "routes": [{ "path": "/eve/v1" }] },
        "connections": connections,
        "tools": { "static": tools, "dynamic": [] },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_lists_every_tool_and_connection_with_the_model() {
        let all: Vec<&crate::connections::Connection> = CONNECTIONS.iter().collect();
        let specs = crate::tools::specs(&all);
        let v = agent_info("demo/eve-demo", &specs);
        assert_eq!(v["kind"], "eve-agent-info");
        assert_eq!(v["agent"]["model"]["id"], "demo/eve-demo");
        let names: Vec<&str> = v["tools"]["static"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"get_weather") && names.contains(&"ask_user"));
        assert_eq!(v["connections"].as_array().unwrap().len(), CONNECTIONS.len());
    }
}
