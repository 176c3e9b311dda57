//! Spin's `{{ name }}` templates and variable names: shared by the manifest (which checks
//! what a template refers to) and the variable resolver (which renders it).

/// Spin's rule for variable names, with Spin's wording for the first offending character.
pub fn validate_variable_name(name: &str) -> std::result::Result<(), String> {
    if name.is_empty() {
        return Err("variable names must not be empty".into());
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_'))
    {
        return Err(format!(
            "{name:?}: invalid character {c:?}. Variable names may contain only lower-case letters, numbers, and underscores."
        ));
    }
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        return Err(format!("{name:?}: must start with a letter."));
    }
    if name.ends_with('_') {
        return Err(format!("{name:?}: must not end with an underscore."));
    }
    if name.contains("__") {
        return Err(format!(
            "{name:?}: must not contain multiple consecutive underscores."
        ));
    }
    Ok(())
}

/// The names `{{ name }}` placeholders in a template refer to.
pub fn template_references(template: &str) -> std::result::Result<Vec<String>, String> {
    let mut out = Vec::new();
    for part in split_template(template)? {
        if let TemplatePart::Var(name) = part {
            out.push(name);
        }
    }
    Ok(out)
}

#[derive(Debug, PartialEq, Eq)]
pub(crate) enum TemplatePart {
    Text(String),
    Var(String),
}

pub(crate) fn split_template(template: &str) -> std::result::Result<Vec<TemplatePart>, String> {
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        if start > 0 {
            parts.push(TemplatePart::Text(rest[..start].to_string()));
        }
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| format!("unterminated `{{{{` in template {template:?}"))?;
        let name = after[..end].trim();
        validate_variable_name(name)?;
        parts.push(TemplatePart::Var(name.to_string()));
        rest = &after[end + 2..];
    }
    if rest.contains("}}") {
        return Err(format!("unmatched `}}}}` in template {template:?}"));
    }
    if !rest.is_empty() {
        parts.push(TemplatePart::Text(rest.to_string()));
    }
    Ok(parts)
}
