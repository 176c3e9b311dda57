//! A `SKILL.md` read exactly as eve 0.80.1 reads a packaged skill's (`lowerSkillMarkdown`,
//! `parseFrontmatter` and `SKILL_NAME_PATTERN` in its compiler): YAML frontmatter between
//! `---` fences, then the body. A refusal carries eve's own words, so an author sees here
//! what `eve dev` would have told them.
//!
//! eve takes a packaged skill's name from its folder; a `SKILL.md` posted alone has no
//! folder, so its frontmatter `name` (the Agent Skills standard's field, which eve accepts
//! and ignores) names it there. Fields eve does not use are accepted and ignored.

use yaml_rust2::{Yaml, YamlLoader};

/// eve's rule for a skill name (`SKILL_NAME_RULE`).
pub const NAME_RULE: &str = "Expected ASCII letters, digits, underscores, and dashes only, starting with a letter or digit, up to 64 characters.";
/// The longest description and body kept (ours: eve has no bound, a database row does).
pub const MAX_DESCRIPTION_CHARS: usize = 1024;
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// A parsed `SKILL.md`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SkillMd {
    /// The frontmatter's `name`, when it has a string one (not checked here: see [`check_name`]).
    pub name: Option<String>,
    pub description: String,
    pub deferred: bool,
    pub license: Option<String>,
    /// The markdown after the frontmatter (one leading line break dropped, as eve does).
    pub body: String,
}

/// eve's `SKILL_NAME_PATTERN` (`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$`) and its reserved `eve`
/// namespace (nothing authored may be named `eve` or start with `eve__`).
pub fn check_name(name: &str) -> Result<(), String> {
    check_name_at(name, None)
}

/// [`check_name`] with eve's words for a skill found at `path` (`skills/<folder>/SKILL.md`).
pub fn check_name_at(name: &str, path: Option<&str>) -> Result<(), String> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !first_ok || !rest_ok || name.len() > 64 {
        let at = path.map(|p| format!(" \"{p}\"")).unwrap_or_default();
        return Err(format!(
            "Skill{at} has an illegal name {name:?}. {NAME_RULE}"
        ));
    }
    if name == "eve" || name.starts_with("eve__") {
        return Err(format!(
            "Skill name {name:?} is reserved: nothing may be named \"eve\" or start with \"eve__\"."
        ));
    }
    Ok(())
}

/// Our bounds on what eve accepts (a description, a body).
pub fn check_sizes(description: &str, body: &str) -> Result<(), String> {
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(format!(
            "A skill description may have at most {MAX_DESCRIPTION_CHARS} characters."
        ));
    }
    if body.len() > MAX_BODY_BYTES {
        return Err(format!(
            "A skill body may have at most {} KiB.",
            MAX_BODY_BYTES / 1024
        ));
    }
    Ok(())
}

/// Parses `text` by eve's rules; the error is eve's message, prefixed as eve prefixes it.
pub fn parse(text: &str) -> Result<SkillMd, String> {
    let md = lower(text)
        .map_err(|e| format!("Invalid authored skill frontmatter in \"SKILL.md\": {e}"))?;
    check_sizes(&md.description, &md.body)?;
    Ok(md)
}

/// `lowerSkillMarkdown` for a packaged skill (no slug to fall back on).
fn lower(text: &str) -> Result<SkillMd, String> {
    let Some((fields, body)) = frontmatter(text)? else {
        return Err("Skill markdown must start with YAML frontmatter.".into());
    };
    let get = |key: &str| match fields.get(&Yaml::String(key.into())) {
        None | Some(Yaml::Null) => None,
        Some(v) => Some(v),
    };
    let string = |key: &str| -> Result<Option<String>, String> {
        match get(key) {
            None => Ok(None),
            Some(Yaml::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("Expected \"{key}\" frontmatter to be a string.")),
        }
    };
    let description =
        string("description")?.ok_or("Missing required \"description\" frontmatter.")?;
    let license = string("license")?;
    let deferred = match get("deferred") {
        None => false,
        Some(Yaml::Boolean(b)) => *b,
        Some(_) => return Err("Expected \"deferred\" frontmatter to be true or false.".into()),
    };
    let name = match get("name") {
        Some(Yaml::String(s)) => Some(s.clone()),
        _ => None,
    };
    Ok(SkillMd {
        name,
        description,
        deferred,
        license,
        body,
    })
}

type Fields = yaml_rust2::yaml::Hash;

/// eve's `parseMarkdownDocument`: `None` without an opening fence; the fields and the body.
fn frontmatter(text: &str) -> Result<Option<(Fields, String)>, String> {
    let t = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(after) = t.strip_prefix("---").filter(|a| !a.starts_with('-')) else {
        return Ok(None);
    };
    let (info, rest) = split_line(after);
    let info = info.trim();
    if !info.is_empty() && !info.eq_ignore_ascii_case("yaml") {
        return Err(format!(
            "Frontmatter language \"{info}\" is not supported. Use YAML frontmatter."
        ));
    }
    let (yaml, body) =
        closing_fence(rest).ok_or("Markdown frontmatter is missing a closing delimiter.")?;
    let fields = if yaml.trim().is_empty() {
        Fields::new()
    } else {
        match load(yaml)? {
            Yaml::Hash(h) => h,
            Yaml::Null => Fields::new(),
            _ => return Err("Markdown frontmatter must parse to an object.".into()),
        }
    };
    let body = body
        .strip_prefix("\r\n")
        .or_else(|| body.strip_prefix('\n'))
        .unwrap_or(body);
    Ok(Some((fields, body.to_string())))
}

/// One YAML document (js-yaml's `load`: several are an error).
fn load(yaml: &str) -> Result<Yaml, String> {
    let mut docs = YamlLoader::load_from_str(yaml).map_err(|e| e.to_string())?;
    match docs.len() {
        0 => Ok(Yaml::Null),
        1 => Ok(docs.remove(0)),
        _ => Err("expected a single document in the stream, but found more".into()),
    }
}

/// The first line of `s` (without its break) and the rest after the break.
fn split_line(s: &str) -> (&str, &str) {
    match s.find('\n') {
        Some(i) => (s[..i].strip_suffix('\r').unwrap_or(&s[..i]), &s[i + 1..]),
        None => (s.strip_suffix('\r').unwrap_or(s), ""),
    }
}

/// eve's `CLOSING_FENCE` (`/^---[ \t]*(?:\r?\n|$)/m`): the YAML before the first line that is
/// `---` and blanks, and what follows that line.
fn closing_fence(rest: &str) -> Option<(&str, &str)> {
    let mut start = 0;
    loop {
        let line_end = rest[start..].find('\n').map(|i| start + i);
        let line = &rest[start..line_end.unwrap_or(rest.len())];
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(tail) = line.strip_prefix("---") {
            if tail.chars().all(|c| c == ' ' || c == '\t') {
                let after = line_end.map_or("", |e| &rest[e + 1..]);
                return Some((&rest[..start], after));
            }
        }
        start = line_end? + 1;
    }
}
