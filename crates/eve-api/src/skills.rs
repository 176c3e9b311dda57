//! The `/api/skills` shapes (issue 22; docs/skills.md): skills in eve's `SKILL.md` format, a
//! principal's own and the deployment's global ones, with the caller's switch on each.

use serde::{Deserialize, Serialize};

/// Whose a skill is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillScope {
    /// The caller's own.
    Personal,
    /// The deployment's, managed by admins, offered to everyone.
    Global,
}

/// A skill as the caller sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Skill {
    pub id: String,
    pub scope: SkillScope,
    /// eve's skill name: ASCII letters, digits, `_` and `-`, starting with a letter or digit,
    /// at most 64 characters.
    pub name: String,
    /// The routing hint the agent's instructions list.
    pub description: String,
    /// Not listed in the instructions; loaded only when named (eve's `deferred`).
    pub deferred: bool,
    /// The procedure: the `SKILL.md` body, without its frontmatter.
    pub body: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    /// The caller's switch.
    pub enabled: bool,
    /// A global skill the caller's own skill of the same name replaces.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shadowed: bool,
    /// Whether the caller may edit or delete it (its owner; an admin for a global one).
    pub editable: bool,
    pub created_at: String,
    pub updated_at: String,
}

/// `GET /api/skills` → the caller's own skills, then the global ones, each by name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillList {
    pub skills: Vec<Skill>,
    /// Whether the caller may create, edit and delete global skills (an admin).
    pub can_manage_global: bool,
}

/// `POST /api/skills` (JSON): either the fields (`name`, `description`, `body`, `deferred?`)
/// or a whole `SKILL.md` text in `skillMd` (its frontmatter gives the description, and the
/// name unless `name` is given). `global: true` makes a global skill (admins only).
/// A zip of a skill folder is posted as the body itself (`content-type: application/zip`,
/// `?global=true` for a global one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateSkillRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill_md: Option<String>,
    #[serde(default)]
    pub global: bool,
}

/// `PATCH /api/skills/:id` — absent fields are kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct UpdateSkillRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred: Option<bool>,
}

/// `PUT /api/skills/:id/enabled` `{ enabled }` → the skill with the caller's switch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SkillEnabledRequest {
    pub enabled: bool,
}

/// `{ skill }`: the answer of create, update and the switch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillResponse {
    pub skill: Skill,
}
