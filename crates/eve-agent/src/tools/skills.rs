//! Skills (issue 22, docs/skills.md) the way eve 0.80.1 offers them: the enabled skills'
//! names and descriptions listed in the instructions (eve's "Available skills" section, in
//! its words), and `eve__skill({ name })`, whose result is the skill's markdown, reported as a
//! `load-skill` action (`tests/eve-reference/recordings/skills/` is what the reference did).
//!
//! What differs from eve, because this app has no sandbox: a skill has no supporting files,
//! so the lines about where they live and each skill's `(path: …)` are left out; and there is
//! no `eve__search`, so a deferred skill (not listed) is loaded only by its name.

use eve_api::eve::{
    ActionError, ActionOutput, ActionRequest, ActionResult, Event, StepRef, LOAD_SKILL,
    LOAD_SKILL_RESULT, SKILL_TOOL,
};
use eve_skills::store::Offered;
use serde_json::{json, Value};

use crate::tools::spec::{ToolCall, ToolSpec};

/// eve's `eve__skill` as a model sees it (its description without `eve__search`).
pub fn spec() -> ToolSpec {
    ToolSpec {
        name: SKILL_TOOL.into(),
        description: "Load a skill's instructions when the request clearly matches one of your listed skills or the user asks for it, then follow them.".into(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "description": "The skill's name, from your listed skills." }
            },
            "required": ["name"],
            "additionalProperties": false,
        }),
    }
}

/// The instructions' section listing `skills` (the deferred ones are not named), or `None`
/// when there is nothing to offer.
pub fn prompt_section(skills: &[Offered]) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let mut s = String::from(
        "Available skills\n\
         Listed skills are available in this run. Do not claim a listed skill is inaccessible unless activation or workspace inspection actually fails.\n\
         If the user names a skill or the request clearly matches one of the descriptions below, load it with eve__skill({ name }) before proceeding.\n\
         If multiple skills match, activate the minimal set that covers the task. After activation, follow the returned instructions instead of improvising around them.\n\
         If activation fails, say so briefly and continue with the best available alternative.",
    );
    for skill in skills.iter().filter(|s| !s.deferred) {
        s.push_str(&format!("\n- {}: {}", skill.name, skill.description));
    }
    Some(s)
}

/// The skill a call asks for (its `name`), if the input names one.
pub fn requested_name(call: &ToolCall) -> Option<String> {
    call.input.get("name")?.as_str().map(str::to_string)
}

/// A call of `eve__skill` as eve reports it: a `load-skill` action named for the skill.
pub fn action_request(call: &ToolCall) -> ActionRequest {
    ActionRequest {
        call_id: call.id.clone(),
        input: call.input.clone(),
        kind: LOAD_SKILL.into(),
        tool_name: String::new(),
        name: requested_name(call),
    }
}

/// eve's label of a pending load, per call id (`None` when no call loads a skill).
pub fn requested_labels(actions: &[ActionRequest]) -> Option<Value> {
    let labels: serde_json::Map<String, Value> = actions
        .iter()
        .filter(|a| a.kind == LOAD_SKILL)
        .map(|a| {
            let label = format!("Load skill {}", a.name.as_deref().unwrap_or_default());
            (a.call_id.clone(), json!({ "label": label }))
        })
        .collect();
    (!labels.is_empty()).then_some(Value::Object(labels))
}

/// The result of loading the skill `call` names from `skills`: its markdown, or why not.
pub fn load(call: &ToolCall, skills: &[Offered]) -> Result<String, String> {
    let name = requested_name(call).ok_or("eve__skill needs the skill's name.")?;
    skills
        .iter()
        .find(|s| s.name == name)
        .map(|s| s.body.clone())
        .ok_or_else(|| format!("No skill named {}.", json!(name)))
}

/// The `action.result` of a load: eve's `load-skill-result` with the markdown as its output,
/// or a failed one whose output tells the model why.
pub fn result_event(at: &StepRef, call: &ToolCall, loaded: Result<String, String>) -> Event {
    let name = requested_name(call);
    let (output, is_error, status, error, presentation) = match loaded {
        Ok(markdown) => {
            let label = format!("Loaded skill {}", name.as_deref().unwrap_or_default());
            let presentation = json!({ &call.id: { "label": label } });
            (
                Value::String(markdown),
                None,
                "completed",
                None,
                Some(presentation),
            )
        }
        Err(message) => {
            let error = ActionError {
                code: "skill_not_found".into(),
                message: message.clone(),
            };
            (
                json!({ "error": message }),
                Some(true),
                "failed",
                Some(error),
                None,
            )
        }
    };
    Event::ActionResult(ActionResult {
        error,
        presentation,
        result: ActionOutput {
            call_id: call.id.clone(),
            is_error,
            kind: LOAD_SKILL_RESULT.into(),
            output,
            tool_name: String::new(),
            name,
        },
        status: status.into(),
        at: at.clone(),
    })
}
