//! Application variables, resolved as Spin does.
//!
//! Values come from (highest priority first) `--variable name=value` flags, then
//! `SPIN_VARIABLE_<NAME>` environment variables, then the manifest's `default`. A `required`
//! variable without a value stops the host at start-up, naming the variable. Component
//! variables are templates over application variables (`"Bearer {{ token }}"`), rendered once
//! at start-up so every request sees the same values.

use crate::manifest::Manifest;
use crate::template::{split_template, validate_variable_name, TemplatePart};
use anyhow::{bail, Result};
use std::collections::{BTreeMap, HashMap};

/// Renders a template against resolved application variables.
pub fn render(template: &str, app: &BTreeMap<String, String>) -> Result<String> {
    let mut out = String::new();
    for part in split_template(template).map_err(anyhow::Error::msg)? {
        match part {
            TemplatePart::Text(t) => out.push_str(&t),
            TemplatePart::Var(v) => match app.get(&v) {
                Some(value) => out.push_str(value),
                None => bail!("variable `{v}` has no value"),
            },
        }
    }
    Ok(out)
}

/// The resolved values: application variables and, per component, its rendered variables.
#[derive(Debug, Clone, Default)]
pub struct ResolvedVariables {
    pub app: BTreeMap<String, String>,
    pub components: HashMap<String, BTreeMap<String, String>>,
}

/// Resolves every variable of the manifest. `flags` are `--variable` values; `env` is the
/// process environment (passed in so tests need not mutate it).
pub fn resolve(
    manifest: &Manifest,
    flags: &BTreeMap<String, String>,
    env: &HashMap<String, String>,
) -> Result<ResolvedVariables> {
    for name in flags.keys() {
        if !manifest.variables.contains_key(name) {
            bail!(
                "--variable {name}: the manifest {} declares no variable `{name}` in [variables]",
                manifest.path.display()
            );
        }
    }
    let mut app = BTreeMap::new();
    for (name, decl) in &manifest.variables {
        let env_key = format!("SPIN_VARIABLE_{}", name.to_ascii_uppercase());
        let value = flags
            .get(name)
            .cloned()
            .or_else(|| env.get(&env_key).cloned())
            .or_else(|| decl.default.clone());
        match value {
            Some(v) => {
                app.insert(name.clone(), v);
            }
            None => bail!(
                "variable `{name}` is required by {} but has no value: set {env_key} or pass --variable {name}=<value>",
                manifest.path.display()
            ),
        }
    }
    let mut components = HashMap::new();
    for (id, c) in &manifest.components {
        let mut vars = BTreeMap::new();
        for (name, template) in &c.variables {
            let value = render(template, &app)
                .map_err(|e| anyhow::anyhow!("[component.{id}.variables] {name}: {e}"))?;
            vars.insert(name.clone(), value);
        }
        components.insert(id.clone(), vars);
    }
    Ok(ResolvedVariables { app, components })
}

/// What a component's `variables::get(name)` answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    Value(String),
    InvalidName(String),
    Undefined(String),
}

/// Looks a variable up for a component, with Spin's error texts.
pub fn lookup(vars: &BTreeMap<String, String>, component: &str, name: &str) -> Lookup {
    if let Err(e) = validate_variable_name(name) {
        return Lookup::InvalidName(e);
    }
    match vars.get(name) {
        Some(v) => Lookup::Value(v.clone()),
        None => Lookup::Undefined(format!("no variable for {component:?}.{name:?}")),
    }
}

/// Parses `--variable name=value`.
pub fn parse_flag(s: &str) -> std::result::Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected name=value"))?;
    validate_variable_name(k.trim())?;
    Ok((k.trim().to_string(), v.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::template_references;
    use std::path::Path;

    fn manifest() -> Manifest {
        crate::manifest::parse(
            r#"
spin_manifest_version = 2
[application]
name = "a"
[variables]
greeting = { default = "hello" }
token = { required = true, secret = true }
[[trigger.http]]
route = "/..."
component = "web"
[component.web]
source = "web.wasm"
[component.web.variables]
auth = "Bearer {{ token }}"
hello = "{{greeting}}, world"
"#,
            Path::new("spin.toml"),
        )
        .unwrap()
    }

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn required_variable_without_value_is_an_error_naming_it() {
        let err = resolve(&manifest(), &BTreeMap::new(), &env(&[]))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("`token`") && err.contains("SPIN_VARIABLE_TOKEN"),
            "{err}"
        );
    }

    #[test]
    fn environment_supplies_values_and_templates_render() {
        let r = resolve(
            &manifest(),
            &BTreeMap::new(),
            &env(&[("SPIN_VARIABLE_TOKEN", "s3")]),
        )
        .unwrap();
        assert_eq!(r.components["web"]["auth"], "Bearer s3");
        assert_eq!(r.components["web"]["hello"], "hello, world");
    }

    #[test]
    fn flag_overrides_environment_which_overrides_default() {
        let flags = BTreeMap::from([("greeting".to_string(), "flag".to_string())]);
        let e = env(&[
            ("SPIN_VARIABLE_TOKEN", "t"),
            ("SPIN_VARIABLE_GREETING", "env"),
        ]);
        assert_eq!(
            resolve(&manifest(), &flags, &e).unwrap().app["greeting"],
            "flag"
        );
        assert_eq!(
            resolve(&manifest(), &BTreeMap::new(), &e).unwrap().app["greeting"],
            "env"
        );
    }

    #[test]
    fn unknown_flag_variable_is_an_error() {
        let flags = BTreeMap::from([("nope".to_string(), "x".to_string())]);
        let err = resolve(&manifest(), &flags, &env(&[("SPIN_VARIABLE_TOKEN", "t")])).unwrap_err();
        assert!(err.to_string().contains("no variable `nope`"));
    }

    #[test]
    fn lookup_reports_undefined_and_invalid_names_like_spin() {
        let vars = BTreeMap::from([("greeting".to_string(), "hello".to_string())]);
        assert_eq!(
            lookup(&vars, "api", "greeting"),
            Lookup::Value("hello".into())
        );
        assert_eq!(
            lookup(&vars, "api", "nope"),
            Lookup::Undefined("no variable for \"api\".\"nope\"".into())
        );
        assert!(matches!(
            lookup(&vars, "api", "Greeting"),
            Lookup::InvalidName(_)
        ));
    }

    #[test]
    fn templates_reject_unterminated_placeholders() {
        assert!(template_references("{{ a").is_err());
        assert!(template_references("a }}").is_err());
        assert_eq!(
            template_references("x{{a}}y{{ b_c }}").unwrap(),
            vec!["a", "b_c"]
        );
    }

    #[test]
    fn variable_flag_parses_name_equals_value() {
        assert_eq!(parse_flag("a=b=c").unwrap(), ("a".into(), "b=c".into()));
        assert!(parse_flag("novalue").is_err());
        assert!(parse_flag("Bad=1").is_err());
    }
}
