//! `spin.toml` (manifest version 2): parsing and validation.
//!
//! Only the keys Spin documents are accepted; a key Spin has but this host does not support is
//! reported by name instead of being silently ignored, so an app never runs differently here.

use crate::template::validate_variable_name;
use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A parsed, validated manifest.
#[derive(Debug, Clone)]
pub struct Manifest {
    /// The file the manifest was read from.
    pub path: PathBuf,
    pub application: Application,
    pub variables: BTreeMap<String, VariableDecl>,
    pub triggers: Vec<HttpTrigger>,
    pub components: BTreeMap<String, Component>,
}

impl Manifest {
    /// The directory relative paths in the manifest are resolved against.
    pub fn dir(&self) -> &Path {
        match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Application {
    pub name: String,
    // Accepted because Spin documents them; nothing here depends on them.
    #[serde(default, rename = "version")]
    _version: Option<String>,
    #[serde(default, rename = "description")]
    _description: Option<String>,
    #[serde(default, rename = "authors")]
    _authors: Vec<String>,
    #[serde(default, rename = "targets")]
    _targets: Vec<String>,
    #[serde(default)]
    pub trigger: Option<AppTriggerConfig>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppTriggerConfig {
    #[serde(default)]
    pub http: Option<AppHttpConfig>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppHttpConfig {
    #[serde(default)]
    pub base: Option<String>,
}

/// An application variable: exactly one of `default` or `required = true`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariableDecl {
    #[serde(default)]
    pub default: Option<String>,
    #[serde(default)]
    pub required: bool,
    /// Secrets are never printed; this host prints no variable values at all.
    #[serde(default, rename = "secret")]
    pub _secret: bool,
}

/// Where an HTTP trigger sends requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteSpec {
    /// A public route such as `/api/...`.
    Path(String),
    /// `{ private = true }`: reachable only through service chaining.
    Private,
}

#[derive(Debug, Clone)]
pub struct HttpTrigger {
    pub route: RouteSpec,
    pub component: String,
}

/// Refuses a `files` glob pattern or directory source with a `..` component. Spin compares
/// paths without resolving `..` (so `../x/*` would pass its check and copy the parent's
/// files); this host refuses them outright (docs/local-host.md, "Where this host differs").
fn check_no_parent(p: &str) -> std::result::Result<(), &'static str> {
    if Path::new(p)
        .components()
        .any(|c| c == std::path::Component::ParentDir)
    {
        return Err("must not contain `..` (files come from inside the application directory)");
    }
    Ok(())
}

/// The application directory as Spin 4.0.2 takes it (`spin-loader`'s `LocalLoader`): the
/// manifest's directory made absolute, `.` and `..` removed without resolving symlinks.
pub fn app_root(manifest: &Path) -> PathBuf {
    let dir = match manifest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let abs = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(dir)
    };
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Spin's rule for `files`: what a mount copies must lie inside the application directory,
/// compared as paths (a symlink inside the directory counts as inside). `pattern` is the
/// absolute glob Spin expands (a directory source `d` is `d/**/*`); the text is Spin's.
fn check_in_app_root(app_root: &Path, full: &Path, pattern: &Path) -> Result<()> {
    if !full.starts_with(app_root) {
        bail!(
            "{} cannot be mapped because it is outside the application directory. Files must be within the application directory.",
            pattern.display()
        );
    }
    Ok(())
}

/// A `files` entry: a glob string, or a `{ source, destination }` directory mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileMount {
    Glob(String),
    Dir { source: String, destination: String },
}

#[derive(Debug, Clone)]
pub struct Component {
    pub id: String,
    pub source: PathBuf,
    pub files: Vec<FileMount>,
    pub exclude_files: Vec<String>,
    pub allowed_outbound_hosts: Vec<String>,
    pub key_value_stores: Vec<String>,
    pub sqlite_databases: Vec<String>,
    pub environment: BTreeMap<String, String>,
    pub variables: BTreeMap<String, String>,
    pub build: Option<BuildConfig>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuildConfig {
    pub command: CommandSpec,
    #[serde(default)]
    pub workdir: Option<String>,
    /// `spin watch` patterns; this host does not watch.
    #[serde(default, rename = "watch")]
    _watch: Vec<String>,
}

/// A build command: one string or a list run in order.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum CommandSpec {
    One(String),
    Many(Vec<String>),
}

impl CommandSpec {
    pub fn commands(&self) -> Vec<String> {
        match self {
            CommandSpec::One(c) => vec![c.clone()],
            CommandSpec::Many(v) => v.clone(),
        }
    }
}

// ---- raw serde shapes ----

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    spin_manifest_version: toml::Value,
    application: Application,
    #[serde(default)]
    variables: BTreeMap<String, VariableDecl>,
    #[serde(default)]
    trigger: BTreeMap<String, Vec<RawTrigger>>,
    #[serde(default)]
    component: BTreeMap<String, RawComponent>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTrigger {
    #[serde(default)]
    id: Option<String>,
    route: toml::Value,
    component: toml::Value,
    #[serde(default)]
    executor: Option<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawComponent {
    source: toml::Value,
    #[serde(default, rename = "description")]
    _description: Option<String>,
    #[serde(default)]
    files: Vec<toml::Value>,
    #[serde(default)]
    exclude_files: Vec<String>,
    #[serde(default)]
    allowed_outbound_hosts: Vec<String>,
    #[serde(default)]
    allowed_http_hosts: Option<toml::Value>,
    #[serde(default)]
    key_value_stores: Vec<String>,
    #[serde(default)]
    sqlite_databases: Vec<String>,
    #[serde(default)]
    ai_models: Vec<String>,
    #[serde(default)]
    environment: BTreeMap<String, String>,
    #[serde(default)]
    variables: BTreeMap<String, String>,
    #[serde(default)]
    build: Option<BuildConfig>,
    #[serde(default)]
    dependencies: Option<toml::Value>,
    #[serde(default)]
    dependencies_inherit_configuration: Option<bool>,
    #[serde(default)]
    tool: Option<toml::Value>,
}

/// Reads and validates the manifest at `path`.
pub fn load(path: &Path) -> Result<Manifest> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read manifest {}", path.display()))?;
    parse(&text, path)
}

/// Parses manifest text; `path` names the file in errors and anchors relative paths.
pub fn parse(text: &str, path: &Path) -> Result<Manifest> {
    let file = path.display();
    let raw: RawManifest =
        toml::from_str(text).map_err(|e| anyhow::anyhow!("{file}: invalid manifest: {e}"))?;
    match &raw.spin_manifest_version {
        toml::Value::Integer(2) => {}
        toml::Value::String(s) if s == "2" => {}
        other => bail!(
            "{file}: `spin_manifest_version` is {other}; only version 2 manifests are supported"
        ),
    }
    for (name, decl) in &raw.variables {
        validate_variable_name(name).map_err(|e| anyhow::anyhow!("{file}: [variables]: {e}"))?;
        if decl.required == decl.default.is_some() {
            bail!(
                "{file}: [variables.{name}]: a variable must have exactly one of `default` or `required = true`"
            );
        }
    }

    let root = app_root(path);
    let mut components = BTreeMap::new();
    for (id, rc) in raw.component {
        validate_component_id(&id).map_err(|e| anyhow::anyhow!("{file}: [component.{id}]: {e}"))?;
        components.insert(
            id.clone(),
            component_from_raw(&id, rc, &raw.variables, &file.to_string(), &root)?,
        );
    }

    let mut triggers = Vec::new();
    for (kind, list) in raw.trigger {
        if kind != "http" {
            bail!("{file}: [[trigger.{kind}]]: only HTTP triggers are supported by this host");
        }
        for t in list {
            let component = match &t.component {
                toml::Value::String(s) => s.clone(),
                toml::Value::Table(_) => bail!(
                    "{file}: [[trigger.http]] {}: inline components are not supported; declare [component.<id>] and reference it",
                    t.id.as_deref().unwrap_or("")
                ),
                other => bail!("{file}: [[trigger.http]]: `component` must be a string, got {other}"),
            };
            if !components.contains_key(&component) {
                bail!("{file}: [[trigger.http]]: component `{component}` is not defined (no [component.{component}])");
            }
            if let Some(exec) = &t.executor {
                let ty = exec.get("type").and_then(|v| v.as_str()).unwrap_or("");
                if ty != "spin" {
                    bail!("{file}: [[trigger.http]] for `{component}`: executor type `{ty}` is not supported (only the default `spin` executor)");
                }
            }
            let route = match &t.route {
                toml::Value::String(s) => {
                    crate::routes::validate_route(s)
                        .map_err(|e| anyhow::anyhow!("{file}: [[trigger.http]] for `{component}`: {e}"))?;
                    RouteSpec::Path(s.clone())
                }
                toml::Value::Table(tbl)
                    if tbl.get("private").and_then(|v| v.as_bool()) == Some(true) && tbl.len() == 1 =>
                {
                    RouteSpec::Private
                }
                other => bail!(
                    "{file}: [[trigger.http]] for `{component}`: `route` must be a path string or {{ private = true }}, got {other}"
                ),
            };
            triggers.push(HttpTrigger { route, component });
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for t in &triggers {
        if let RouteSpec::Path(r) = &t.route {
            if !seen.insert(r.clone()) {
                bail!("{file}: route `{r}` is declared by more than one [[trigger.http]]");
            }
        }
    }
    let base = raw
        .application
        .trigger
        .as_ref()
        .and_then(|t| t.http.as_ref())
        .and_then(|h| h.base.clone());
    if let Some(base) = &base {
        if !base.starts_with('/') {
            bail!("{file}: [application.trigger.http] base must start with `/`, got `{base}`");
        }
    }

    Ok(Manifest {
        path: path.to_path_buf(),
        application: raw.application,
        variables: raw.variables,
        triggers,
        components,
    })
}

fn component_from_raw(
    id: &str,
    rc: RawComponent,
    app_vars: &BTreeMap<String, VariableDecl>,
    file: &str,
    app_root: &Path,
) -> Result<Component> {
    let at = format!("{file}: [component.{id}]");
    let source = match &rc.source {
        toml::Value::String(s) => PathBuf::from(s),
        toml::Value::Table(_) => bail!(
            "{at}: `source` must be a local .wasm path; URL and registry sources cannot be fetched by this host"
        ),
        other => bail!("{at}: `source` must be a path string, got {other}"),
    };
    if rc.allowed_http_hosts.is_some() {
        bail!("{at}: `allowed_http_hosts` is the Spin 1 key; use `allowed_outbound_hosts`");
    }
    if !rc.ai_models.is_empty() {
        bail!("{at}: `ai_models` (Serverless AI) is not supported by this host");
    }
    if rc.dependencies.is_some() || rc.dependencies_inherit_configuration.is_some() {
        bail!("{at}: component `dependencies` are not supported by this host");
    }
    let _ = rc.tool;
    let files = rc
        .files
        .into_iter()
        .map(|f| file_mount(f, &at, app_root))
        .collect::<Result<Vec<_>>>()?;
    check_references(&rc.variables, &rc.allowed_outbound_hosts, app_vars, &at)?;
    for label in rc.key_value_stores.iter().chain(rc.sqlite_databases.iter()) {
        if label.is_empty() {
            bail!("{at}: store and database labels must not be empty");
        }
    }
    Ok(Component {
        id: id.to_string(),
        source,
        files,
        exclude_files: rc.exclude_files,
        allowed_outbound_hosts: rc.allowed_outbound_hosts,
        key_value_stores: rc.key_value_stores,
        sqlite_databases: rc.sqlite_databases,
        environment: rc.environment,
        variables: rc.variables,
        build: rc.build,
    })
}

/// One `files` entry: a glob (kept relative to the application directory) or a
/// `{ source, destination }` directory mapping, both confined to the application directory.
fn file_mount(f: toml::Value, at: &str, app_root: &Path) -> Result<FileMount> {
    match f {
        toml::Value::String(s) => {
            check_no_parent(&s).map_err(|e| anyhow::anyhow!("{at}: files: pattern `{s}` {e}"))?;
            let pattern = if Path::new(&s).is_absolute() {
                // Allowed inside the application directory (kept relative to it).
                let full = Path::new(&s);
                check_in_app_root(app_root, full, full)
                    .map_err(|e| anyhow::anyhow!("{at}: files: {e}"))?;
                full.strip_prefix(app_root).expect("checked").to_string_lossy().into_owned()
            } else {
                s
            };
            Ok(FileMount::Glob(pattern))
        }
        toml::Value::Table(t) => {
            let source = t.get("source").and_then(|v| v.as_str());
            let destination = t.get("destination").and_then(|v| v.as_str());
            let (Some(s), Some(d), 2) = (source, destination, t.len()) else {
                bail!("{at}: files: a table entry needs exactly `source` and `destination`");
            };
            if !d.starts_with('/') {
                bail!("{at}: files: destination `{d}` must be an absolute path");
            }
            check_no_parent(s).map_err(|e| anyhow::anyhow!("{at}: files: source `{s}` {e}"))?;
            // Spin copies `<source>/**/*`: an absolute source outside the application
            // directory is refused, as Spin refuses it.
            let full = app_root.join(s);
            check_in_app_root(app_root, &full, &full.join("**/*"))
                .map_err(|e| anyhow::anyhow!("{at}: files: {e}"))?;
            if Path::new(d).components().any(|c| c == std::path::Component::ParentDir) {
                bail!("{at}: files: destination `{d}` must not contain `..`");
            }
            Ok(FileMount::Dir { source: s.into(), destination: d.into() })
        }
        other => bail!("{at}: files: entries must be glob strings or {{ source, destination }} tables, got {other}"),
    }
}

/// Every `{{ name }}` in a component's variables and outbound hosts names a declared
/// application variable; every component variable name is valid.
fn check_references(
    variables: &BTreeMap<String, String>,
    hosts: &[String],
    app_vars: &BTreeMap<String, VariableDecl>,
    at: &str,
) -> Result<()> {
    for (name, template) in variables {
        validate_variable_name(name).map_err(|e| anyhow::anyhow!("{at}.variables: {e}"))?;
        for reference in crate::template::template_references(template)
            .map_err(|e| anyhow::anyhow!("{at}.variables.{name}: {e}"))?
        {
            if !app_vars.contains_key(&reference) {
                bail!("{at}.variables.{name}: refers to `{{{{ {reference} }}}}`, which is not declared in [variables]");
            }
        }
    }
    for host in hosts {
        for reference in crate::template::template_references(host)
            .map_err(|e| anyhow::anyhow!("{at}: allowed_outbound_hosts `{host}`: {e}"))?
        {
            if !app_vars.contains_key(&reference) {
                bail!("{at}: allowed_outbound_hosts `{host}` refers to undeclared variable `{reference}`");
            }
        }
    }
    Ok(())
}

/// Spin's rule for component ids: lower-case words of letters and digits separated by `-`.
fn validate_component_id(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.split('-').all(|w| {
            !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                && w.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        });
    if ok {
        Ok(())
    } else {
        bail!("`{id}` is not a valid component id (lower-case letters, digits and single dashes, starting with a letter)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(s: &str) -> Result<Manifest> {
        parse(s, Path::new("/app/spin.toml"))
    }

    const MINIMAL: &str = r#"
spin_manifest_version = 2
[application]
name = "a"
[variables]
greeting = { default = "hi" }
token = { required = true, secret = true }
[[trigger.http]]
route = "/..."
component = "web"
[[trigger.http]]
route = { private = true }
component = "backend"
[component.web]
source = "web.wasm"
files = [{ source = "static", destination = "/" }, "assets/*.css"]
allowed_outbound_hosts = ["http://backend.spin.internal"]
key_value_stores = ["default"]
[component.web.variables]
message = "say {{ greeting }}"
[component.web.build]
command = "cargo build"
[component.backend]
source = "backend.wasm"
"#;

    #[test]
    fn parses_components_triggers_variables_and_files() {
        let m = parse_str(MINIMAL).unwrap();
        assert_eq!(m.application.name, "a");
        assert_eq!(m.triggers.len(), 2);
        assert_eq!(m.triggers[1].route, RouteSpec::Private);
        let web = &m.components["web"];
        assert_eq!(
            web.files[0],
            FileMount::Dir {
                source: "static".into(),
                destination: "/".into()
            }
        );
        assert_eq!(web.files[1], FileMount::Glob("assets/*.css".into()));
        assert_eq!(web.variables["message"], "say {{ greeting }}");
        assert!(m.variables["token"].required && m.variables["token"]._secret);
        assert_eq!(
            web.build.as_ref().unwrap().command.commands(),
            vec!["cargo build".to_string()]
        );
    }

    #[test]
    fn files_outside_the_app_directory_are_refused_naming_the_entry() {
        const SPIN: &str = "cannot be mapped because it is outside the application directory. Files must be within the application directory.";
        for (entry, want) in [
            (r#""/etc/*""#, format!("/etc/* {SPIN}")),
            (
                r#"{ source = "/srv/static", destination = "/" }"#,
                format!("/srv/static/**/* {SPIN}"),
            ),
            (
                r#"{ source = "/application/static", destination = "/" }"#,
                format!("/application/static/**/* {SPIN}"),
            ),
            (r#""../secrets/*""#, "`..`".into()),
            (r#""assets/../../x""#, "`..`".into()),
            (r#"{ source = "..", destination = "/up" }"#, "`..`".into()),
            (
                r#"{ source = "static/../..", destination = "/up" }"#,
                "`..`".into(),
            ),
            (
                r#"{ source = "/app/static/../..", destination = "/up" }"#,
                "`..`".into(),
            ),
            (
                r#"{ source = "static", destination = "/a/../.." }"#,
                "`..`".into(),
            ),
        ] {
            let bad = MINIMAL.replace(
                r#"files = [{ source = "static", destination = "/" }, "assets/*.css"]"#,
                &format!("files = [{entry}]"),
            );
            let err = parse_str(&bad).unwrap_err().to_string();
            assert!(
                err.contains("[component.web]") && err.contains("files") && err.contains(&want),
                "{entry}: {err}"
            );
        }
        // Absolute paths inside the application directory are inside, as for Spin.
        let inside = MINIMAL.replace(
            r#"files = [{ source = "static", destination = "/" }, "assets/*.css"]"#,
            r#"files = [{ source = "/app/static", destination = "/" }, "/app/assets/*.css"]"#,
        );
        let m = parse_str(&inside).unwrap();
        assert_eq!(
            m.components["web"].files[1],
            FileMount::Glob("assets/*.css".into())
        );
    }

    #[test]
    fn the_application_directory_is_the_manifests_made_absolute_without_dot_dot() {
        assert_eq!(
            app_root(Path::new("/a/b/../c/./spin.toml")),
            Path::new("/a/c")
        );
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(app_root(Path::new("spin.toml")), cwd);
        assert_eq!(app_root(Path::new("x/spin.toml")), cwd.join("x"));
    }

    #[test]
    fn rejects_manifest_version_one() {
        let err =
            parse_str(&MINIMAL.replace("spin_manifest_version = 2", "spin_manifest_version = 1"))
                .unwrap_err()
                .to_string();
        assert!(
            err.contains("/app/spin.toml") && err.contains("spin_manifest_version"),
            "{err}"
        );
    }

    #[test]
    fn rejects_unknown_keys_naming_the_key() {
        let err = parse_str(&MINIMAL.replace(
            "source = \"backend.wasm\"",
            "source = \"backend.wasm\"\nsorce = 1",
        ))
        .unwrap_err()
        .to_string();
        assert!(err.contains("sorce"), "{err}");
    }

    #[test]
    fn rejects_trigger_for_undefined_component() {
        let err = parse_str(&MINIMAL.replace("component = \"backend\"", "component = \"nope\""))
            .unwrap_err()
            .to_string();
        assert!(err.contains("`nope` is not defined"), "{err}");
    }

    #[test]
    fn rejects_variable_with_both_default_and_required() {
        let err = parse_str(&MINIMAL.replace(
            "{ default = \"hi\" }",
            "{ default = \"hi\", required = true }",
        ))
        .unwrap_err()
        .to_string();
        assert!(err.contains("[variables.greeting]"), "{err}");
    }

    #[test]
    fn rejects_component_variable_referring_to_undeclared_app_variable() {
        let err = parse_str(&MINIMAL.replace("say {{ greeting }}", "say {{ nope }}"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("nope") && err.contains("component.web"),
            "{err}"
        );
    }

    #[test]
    fn rejects_upper_case_variable_names_with_spins_wording() {
        let err = validate_variable_name("Greeting").unwrap_err();
        assert_eq!(
            err,
            "\"Greeting\": invalid character 'G'. Variable names may contain only lower-case letters, numbers, and underscores."
        );
    }

    #[test]
    fn rejects_duplicate_routes() {
        let err = parse_str(&MINIMAL.replace("route = { private = true }", "route = \"/...\""))
            .unwrap_err()
            .to_string();
        assert!(err.contains("more than one"), "{err}");
    }

    #[test]
    fn rejects_remote_sources_clearly() {
        let err = parse_str(&MINIMAL.replace(
            "source = \"backend.wasm\"",
            "source = { url = \"https://x/y.wasm\", digest = \"sha256:0\" }",
        ))
        .unwrap_err()
        .to_string();
        assert!(err.contains("cannot be fetched"), "{err}");
    }

    #[test]
    fn invalid_toml_names_the_file() {
        let err = parse_str("spin_manifest_version = ")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("/app/spin.toml"), "{err}");
    }

    #[test]
    fn the_projects_own_manifest_is_valid() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spin.toml");
        let m = load(&path).unwrap();
        assert!(m.components.contains_key("agent"));
        assert!(m
            .triggers
            .iter()
            .any(|t| t.component == "agent" && t.route == RouteSpec::Private));
    }
}
