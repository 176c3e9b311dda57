//! `GET /eve/v1/info`: the agent-info snapshot in eve's schema (`kind: "eve-agent-info"`,
//! the version the reference serves), reduced to what this agent has: its name, model, tools
//! and connections. Source-ownership and sandbox sections eve reports do not apply here.

use eve_store::sql::Sql;
use eve_usage::{access, standing};
use serde_json::{json, Value};

use crate::connections::mcp::McpConnection;
use crate::protocol::Refusal;
use crate::service::env::{self, db_refusal, AgentEnv};
use crate::tools::builtin;
use crate::tools::spec::ToolSpec;

/// The whole `GET /eve/v1/info` document for this configuration: the default model, every
/// tool, the MCP connections, the models to choose from, the upload policy.
pub fn document<S: Sql>(env: &dyn AgentEnv, db: &S) -> Value {
    document_offering(
        env,
        db,
        env::model_choices(env, db).unwrap_or_default(),
        |_| true,
    )
}

/// The document as `principal` reads it: a member of an accounts deployment is offered only
/// the models it may use (`member_models`), the first of them as the default; anyone else,
/// every model. The composer offers what this lists.
///
/// Every principal's document lists the skills offered to it (docs/skills.md), as eve lists
/// its agent's skills (eve lists no `eve__skill` among the tools: it is not authored).
pub fn document_for<S: Sql>(
    env: &dyn AgentEnv,
    open: impl FnOnce() -> Result<S, Refusal>,
    principal: &str,
) -> Result<Value, Refusal> {
    let db = open()?;
    // The variables' models, then the admins' providers', the `defaultModel` setting first.
    let choices = env::model_choices(env, &db).unwrap_or_default();
    let mut doc = if standing::account_id(principal).is_none() {
        document_offering(env, &db, choices, |_| true)
    } else {
        let standing = standing::read(&db, principal).map_err(db_refusal)?;
        document_offering(env, &db, choices, |id| access::may_use(&standing, id))
    };
    let skills = eve_skills::store::offered(&db, principal).map_err(|e| {
        eprintln!("agent: reading the skills: {}", e.message);
        Refusal::unavailable()
    })?;
    list_skills(&mut doc, &skills);
    Ok(doc)
}

/// eve's `skills.static` entries (a packaged skill: `skills/<name>/SKILL.md`, its
/// description and markdown; `license` when it has one).
pub fn list_skills(doc: &mut Value, skills: &[eve_skills::store::Offered]) {
    if skills.is_empty() {
        return;
    }
    let entries: Vec<Value> = skills
        .iter()
        .map(|s| {
            let path = format!("skills/{}/SKILL.md", s.name);
            let mut entry = json!({
                "logicalPath": path,
                "owner": { "kind": "application" },
                "sourceId": path,
                "sourceKind": "skill-package",
                "description": s.description,
                "markdown": s.body,
                "name": s.name,
            });
            if let Some(license) = &s.license {
                entry["license"] = license.clone().into();
            }
            entry
        })
        .collect();
    doc["skills"]["static"] = Value::Array(entries);
}

/// The document with the models of `choices` (the default first) that `offered` keeps, and
/// the MCP servers in use now.
fn document_offering<S: Sql>(
    env: &dyn AgentEnv,
    db: &S,
    mut choices: Vec<crate::providers::config::ModelChoice>,
    offered: impl Fn(&str) -> bool,
) -> Value {
    choices.retain(|c| offered(&c.id));
    let model_id = choices.first().map(|c| c.id.clone()).unwrap_or_default();
    let mut doc = agent_info(&model_id, &builtin::specs(), &env::mcp_connections(env, db));
    list_models(&mut doc, &choices);
    list_upload_policy(&mut doc, &env::upload_policy(env));
    doc
}

/// The agent-info version the reference eve 0.80.1 serves (its client accepts only this one).
pub const INFO_VERSION: u64 = 5;

/// eve's description of where something comes from: here, always compiled-in code of this
/// application (`programmatic` module backing).
fn source(logical_path: &str) -> Value {
    json!({
        "binding": {
            "backing": {
                "kind": "programmatic",
                "moduleId": logical_path,
                "registryId": "eve-chat",
                "revision": concat!("eve-chat@", env!("CARGO_PKG_VERSION")),
            },
            "logicalPath": logical_path,
            "owner": { "kind": "application" },
        },
        "logicalPath": logical_path,
        "owner": { "kind": "application" },
        "sourceId": logical_path,
        "sourceKind": "module",
    })
}

fn with(mut base: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().expect("an object") {
        base[k] = v.clone();
    }
    base
}

/// The info document for `tools` (every tool the agent may offer) and `model_id`
/// (`provider/model`). It passes eve's client validation (`AgentInfoResultSchema`).
pub fn agent_info(model_id: &str, tools: &[ToolSpec], mcp: &[McpConnection]) -> Value {
    let provider = model_id.split('/').next().unwrap_or("demo");
    let tools: Vec<Value> = tools.iter().map(tool).collect();
    let connections: Vec<Value> = mcp.iter().map(connection).collect();
    let routes = routes();
    json!({
        "agent": {
            "agentRoot": "crates/eve-agent",
            "appRoot": ".",
            "config": source("agent"),
            "model": {
                "endpoint": { "kind": "external", "provider": provider },
                "id": model_id,
                "routing": { "kind": "external", "provider": provider },
            },
            "name": "eve-chat",
            "nodeId": "__root__",
        },
        "capabilities": { "devRoutes": false },
        "channels": { "routes": routes, "shadowed": [] },
        "composition": { "disabled": [], "shadowed": [] },
        "connections": connections,
        "diagnostics": { "discoveryErrors": 0, "discoveryWarnings": 0 },
        "hooks": [],
        "instructions": { "dynamic": [], "static": [] },
        "kernelEffects": [],
        "kind": "eve-agent-info",
        "memories": [],
        "mode": "production",
        "remoteAgents": { "entries": [], "total": 0 },
        "sandbox": with(source("sandbox"), json!({ "revisionHash": "none" })),
        "schedules": [],
        "skills": { "dynamic": [], "static": [] },
        "subagents": { "local": [], "total": 0 },
        "tools": { "dynamic": [], "static": tools },
        "version": INFO_VERSION,
        "workspace": { "resourceRoot": null, "rootEntries": [] },
    })
}

/// A tool as eve's info lists it.
fn tool(t: &ToolSpec) -> Value {
    with(
        source(&format!("tools/{}", t.name)),
        json!({
            "name": t.name,
            "description": t.description,
            "hasAuth": false,
            "hasExecute": true,
            "hasModelOutputProjection": false,
            "hasOutputSchema": false,
            "inputSchema": t.input_schema,
            "requiresApproval": false,
        }),
    )
}

/// An MCP connection as eve's info lists it.
fn connection(c: &McpConnection) -> Value {
    with(
        source(&format!("connections/{}", c.name)),
        json!({
            "connectionName": c.name,
            "description": c.description,
            "hasApproval": false,
            // A static token needs no sign-in; otherwise the server may ask for one.
            "hasAuthorization": c.token.is_none(),
            "hasHeaders": c.token.is_some(),
            "protocol": "mcp",
            "url": c.url,
        }),
    )
}

/// eve's channel routes, as the `eve` channel serves them.
fn routes() -> Vec<Value> {
    [
        ("GET", "/eve/v1/health"),
        ("HEAD", "/eve/v1/health"),
        ("GET", "/eve/v1/info"),
        ("POST", "/eve/v1/session"),
        ("POST", "/eve/v1/session/:sessionId"),
        ("GET", "/eve/v1/session/:sessionId/stream"),
        ("POST", "/eve/v1/session/:sessionId/cancel"),
        ("POST", "/eve/v1/session/:sessionId/clear"),
        ("POST", "/eve/v1/session/:sessionId/compact"),
        ("POST", "/eve/v1/session/:sessionId/reset"),
    ]
    .iter()
    .map(|(method, path)| {
        with(
            source("channels/eve"),
            json!({ "name": "eve", "method": method, "urlPath": path }),
        )
    })
    .collect()
}

/// Lists the models a chat may choose (`id`, `label`, `provider`) under
/// `agent.model.providerOptions.models`, the one open slot of eve's strict info schema.
pub fn list_models(info: &mut Value, choices: &[crate::providers::config::ModelChoice]) {
    let models: Vec<Value> = choices
        .iter()
        .map(|c| {
            json!({
                "id": c.id,
                "label": c.label,
                "provider": c.id.split('/').next().unwrap_or(""),
            })
        })
        .collect();
    info["agent"]["model"]["providerOptions"] = json!({ "models": models });
}

/// The owner's upload policy in eve's `UploadPolicyConfig` shape (`maxBytes`,
/// `allowedMediaTypes`: a list or `"*"`) under `agent.model.providerOptions.uploadPolicy`, so a
/// client checks files before sending them. After [`list_models`], which sets the object.
pub fn list_upload_policy(info: &mut Value, policy: &crate::protocol::uploads::UploadPolicy) {
    let allowed = match &policy.allowed {
        Some(list) => json!(list),
        None => json!("*"),
    };
    let options = &mut info["agent"]["model"]["providerOptions"];
    if !options.is_object() {
        *options = json!({});
    }
    options["uploadPolicy"] = json!({ "maxBytes": policy.max_bytes, "allowedMediaTypes": allowed });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_reports_the_upload_policy_beside_the_models() {
        let mut v = agent_info("demo/eve-demo", &[], &[]);
        list_models(&mut v, &[]);
        let p =
            crate::protocol::uploads::UploadPolicy::from_vars(Some("10"), Some("image/*"), None);
        list_upload_policy(&mut v, &p);
        let o = &v["agent"]["model"]["providerOptions"];
        assert_eq!(o["models"], json!([]));
        assert_eq!(
            o["uploadPolicy"],
            json!({"maxBytes": 10, "allowedMediaTypes": ["image/*"]})
        );
        let any = crate::protocol::uploads::UploadPolicy::from_vars(None, Some("*"), None);
        list_upload_policy(&mut v, &any);
        assert_eq!(
            v["agent"]["model"]["providerOptions"]["uploadPolicy"]["allowedMediaTypes"],
            "*"
        );
    }

    #[test]
    fn info_lists_every_tool_and_connection_with_the_model() {
        let specs = crate::tools::builtin::specs();
        let mcp =
            crate::connections::mcp::parse_connections(Some(r#"[{"name":"linear"}]"#)).unwrap();
        let v = agent_info("demo/eve-demo", &specs, &mcp);
        assert_eq!(v["kind"], "eve-agent-info");
        assert_eq!(v["agent"]["model"]["id"], "demo/eve-demo");
        let names: Vec<&str> = v["tools"]["static"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert!(names.contains(&"get_weather") && names.contains(&"ask_user"));
        assert_eq!(v["connections"].as_array().unwrap().len(), 1);
        let linear = &v["connections"][0];
        assert_eq!(linear["protocol"], "mcp");
        assert_eq!(linear["url"], "https://mcp.linear.app/mcp");
        assert_eq!(v["version"], 5);
    }
}
