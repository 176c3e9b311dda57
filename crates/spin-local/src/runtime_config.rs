//! The runtime-config file (`--runtime-config-file`), with the same keys as Spin's for the
//! backends this host supports:
//!
//! ```toml
//! [key_value_store.default]
//! type = "spin"            # SQLite file; or "redis" with url = "redis://127.0.0.1:6379"
//! path = ".spin/kv.db"
//!
//! [sqlite_database.default]
//! type = "spin"            # a local file; allow_attach_file = true lets it ATTACH files
//! path = ".spin/app.db"
//!
//! [sqlite_database.shared]
//! type = "libsql"          # a libSQL server (sqld, Turso) over HTTP(S)
//! url = "https://db.example.com"
//! token = "…"
//! ```
//!
//! The `[sqlite_database.*]` tables are read as Spin 4.0.2 reads them (`crates/sqlite`): the
//! same keys, unknown keys refused, `token` required for libSQL, only `http://` and `https://`
//! URLs, and Spin's error texts after the file and table name.
//!
//! Relative paths are resolved against the directory of the runtime-config file, as Spin does.
//! Without a file, `default` stores live under the state directory (`.spin/`), also as Spin.

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where a key-value store lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KvBackendConfig {
    /// Spin's SQLite-backed store: a table `spin_key_value` in the given file.
    Sqlite { path: PathBuf },
    /// A Redis server.
    Redis { url: String },
}

/// Where a SQLite database lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqliteConfig {
    /// A local file (`type = "spin"`).
    Local {
        path: PathBuf,
        /// Spin's `allow_attach_file`: `ATTACH` of other files is refused unless set.
        allow_attach_file: bool,
    },
    /// A libSQL server (`type = "libsql"`), reached over HTTP(S) with a bearer token.
    LibSql { url: String, token: String },
}

#[cfg(test)]
impl SqliteConfig {
    /// The local file, for a database of `type = "spin"`.
    pub fn path(&self) -> Option<&Path> {
        match self {
            SqliteConfig::Local { path, .. } => Some(path),
            SqliteConfig::LibSql { .. } => None,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct RuntimeConfig {
    pub key_value_stores: BTreeMap<String, KvBackendConfig>,
    pub sqlite_databases: BTreeMap<String, SqliteConfig>,
}

#[derive(Deserialize)]
struct RawRuntimeConfig {
    #[serde(default)]
    key_value_store: BTreeMap<String, RawStore>,
    #[serde(default)]
    sqlite_database: BTreeMap<String, RawDatabase>,
    #[serde(default)]
    variables_provider: Option<toml::Value>,
    #[serde(default)]
    config_provider: Option<toml::Value>,
    #[serde(default)]
    llm_compute: Option<toml::Value>,
    #[serde(default)]
    outbound_networking: Option<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStore {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    token: Option<String>,
}

/// A `[sqlite_database.<label>]` table: its `type`, and the rest read by type (Spin's
/// `TomlRuntimeConfig`).
#[derive(Deserialize)]
struct RawDatabase {
    #[serde(rename = "type")]
    kind: String,
    #[serde(flatten)]
    config: toml::Table,
}

/// `type = "spin"` (Spin's `InProcDatabase`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLocalDatabase {
    path: Option<PathBuf>,
    #[serde(default)]
    allow_attach_file: bool,
}

/// `type = "libsql"` (Spin's `LibSqlDatabase`): both keys required.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLibSqlDatabase {
    url: String,
    token: String,
}

/// Spin's `check_url`: libSQL is spoken over HTTP(S) only.
fn check_libsql_url(url: &str) -> Result<()> {
    if url.starts_with("https://") || url.starts_with("http://") {
        Ok(())
    } else {
        Err(anyhow::anyhow!("URL does not start with 'https://' or 'http://'. Spin currently only supports talking to libSQL databases over HTTP(S)"))
    }
    .with_context(|| format!("unexpected libSQL URL '{url}' in runtime config file "))
}

/// The file names Spin uses for its default stores under the state directory.
pub const DEFAULT_KV_FILE: &str = "sqlite_key_value.db";
pub const DEFAULT_SQLITE_FILE: &str = "sqlite_db.db";

impl RuntimeConfig {
    /// Spin's defaults: both `default` stores as files under `state_dir`.
    pub fn defaults(state_dir: &Path) -> Self {
        let mut c = RuntimeConfig::default();
        c.key_value_stores.insert(
            "default".into(),
            KvBackendConfig::Sqlite {
                path: state_dir.join(DEFAULT_KV_FILE),
            },
        );
        c.sqlite_databases.insert(
            "default".into(),
            SqliteConfig::Local {
                path: state_dir.join(DEFAULT_SQLITE_FILE),
                allow_attach_file: false,
            },
        );
        c
    }

    /// Reads a runtime-config file; its entries override the defaults label by label.
    pub fn load(file: &Path, state_dir: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(file)
            .with_context(|| format!("cannot read runtime config {}", file.display()))?;
        Self::parse(&text, file, state_dir)
    }

    pub fn parse(text: &str, file: &Path, state_dir: &Path) -> Result<Self> {
        let name = file.display();
        let raw: RawRuntimeConfig = toml::from_str(text)
            .map_err(|e| anyhow::anyhow!("{name}: invalid runtime config: {e}"))?;
        if raw.variables_provider.is_some() || raw.config_provider.is_some() {
            bail!("{name}: variable providers (Vault, Azure Key Vault) are not supported by this host; use SPIN_VARIABLE_* or --variable");
        }
        if raw.llm_compute.is_some() {
            bail!("{name}: [llm_compute] is not supported by this host");
        }
        let _ = raw.outbound_networking;
        let base = file.parent().unwrap_or(Path::new("."));
        let mut c = Self::defaults(state_dir);
        for (label, s) in raw.key_value_store {
            let at = format!("{name}: [key_value_store.{label}]");
            let backend = match s.kind.as_str() {
                "spin" => KvBackendConfig::Sqlite {
                    path: s
                        .path
                        .map(|p| base.join(p))
                        .unwrap_or_else(|| state_dir.join(DEFAULT_KV_FILE)),
                },
                "redis" => KvBackendConfig::Redis {
                    url: s
                        .url
                        .ok_or_else(|| anyhow::anyhow!("{at}: type \"redis\" needs `url`"))?,
                },
                other => bail!(
                    "{at}: type \"{other}\" is not supported here (supported: \"spin\", \"redis\")"
                ),
            };
            let _ = s.token;
            c.key_value_stores.insert(label, backend);
        }
        for (label, s) in raw.sqlite_database {
            let at = format!("{name}: [sqlite_database.{label}]");
            let config = match s.kind.as_str() {
                "spin" => {
                    let d: RawLocalDatabase = s
                        .config
                        .try_into()
                        .map_err(|e| anyhow::anyhow!("{at}: {}", e.to_string().trim_end()))?;
                    // Spin resolves a relative path against the runtime config's directory;
                    // without a path its database is in memory, which one process can hold but
                    // a restart loses: this host keeps it in the state directory instead.
                    SqliteConfig::Local {
                        path: d
                            .path
                            .map(|p| base.join(p))
                            .unwrap_or_else(|| state_dir.join(format!("{label}.db"))),
                        allow_attach_file: d.allow_attach_file,
                    }
                }
                "libsql" => {
                    let d: RawLibSqlDatabase = s
                        .config
                        .try_into()
                        .map_err(|e| anyhow::anyhow!("{at}: {}", e.to_string().trim_end()))?;
                    check_libsql_url(&d.url).map_err(|e| anyhow::anyhow!("{at}: {e:#}"))?;
                    SqliteConfig::LibSql {
                        url: d.url,
                        token: d.token,
                    }
                }
                other => bail!("{at}: Unknown database kind: {other}"),
            };
            c.sqlite_databases.insert(label, config);
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_put_both_default_stores_under_the_state_dir() {
        let c = RuntimeConfig::defaults(Path::new("/app/.spin"));
        assert_eq!(
            c.key_value_stores["default"],
            KvBackendConfig::Sqlite {
                path: "/app/.spin/sqlite_key_value.db".into()
            }
        );
        assert_eq!(
            c.sqlite_databases["default"].path(),
            Some(Path::new("/app/.spin/sqlite_db.db"))
        );
    }

    #[test]
    fn file_entries_resolve_relative_to_the_file_and_override_defaults() {
        let c = RuntimeConfig::parse(
            r#"
[key_value_store.default]
type = "spin"
path = "data/kv.db"
[key_value_store.cache]
type = "redis"
url = "redis://127.0.0.1:6379"
[sqlite_database.default]
type = "spin"
path = "data/app.db"
"#,
            Path::new("/etc/app/rc.toml"),
            Path::new("/app/.spin"),
        )
        .unwrap();
        assert_eq!(
            c.key_value_stores["default"],
            KvBackendConfig::Sqlite {
                path: "/etc/app/data/kv.db".into()
            }
        );
        assert_eq!(
            c.key_value_stores["cache"],
            KvBackendConfig::Redis {
                url: "redis://127.0.0.1:6379".into()
            }
        );
        assert_eq!(
            c.sqlite_databases["default"],
            SqliteConfig::Local {
                path: "/etc/app/data/app.db".into(),
                allow_attach_file: false
            }
        );
    }

    #[test]
    fn unsupported_backends_are_named() {
        let err = RuntimeConfig::parse(
            "[key_value_store.x]\ntype = \"azure_cosmos\"\n",
            Path::new("rc.toml"),
            Path::new(".spin"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("[key_value_store.x]") && err.contains("azure_cosmos"),
            "{err}"
        );
    }

    #[test]
    fn redis_without_url_is_an_error() {
        assert!(RuntimeConfig::parse(
            "[key_value_store.x]\ntype = \"redis\"\n",
            Path::new("rc.toml"),
            Path::new(".spin")
        )
        .is_err());
    }

    fn parse_err(text: &str) -> String {
        RuntimeConfig::parse(text, Path::new("rc.toml"), Path::new(".spin"))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn libsql_takes_spins_url_and_token() {
        let c = RuntimeConfig::parse(
            "[sqlite_database.default]\ntype = \"libsql\"\nurl = \"http://127.0.0.1:8080\"\ntoken = \"t\"\n",
            Path::new("rc.toml"),
            Path::new(".spin"),
        )
        .unwrap();
        assert_eq!(
            c.sqlite_databases["default"],
            SqliteConfig::LibSql {
                url: "http://127.0.0.1:8080".into(),
                token: "t".into()
            }
        );
    }

    #[test]
    fn libsql_refusals_carry_spins_texts() {
        let e = parse_err(
            "[sqlite_database.db]\ntype = \"libsql\"\nurl = \"libsql://x.turso.io\"\ntoken = \"t\"\n",
        );
        assert_eq!(
            e,
            "rc.toml: [sqlite_database.db]: unexpected libSQL URL 'libsql://x.turso.io' in runtime config file : URL does not start with 'https://' or 'http://'. Spin currently only supports talking to libSQL databases over HTTP(S)"
        );
        let e = parse_err("[sqlite_database.db]\ntype = \"libsql\"\nurl = \"https://x\"\n");
        assert!(e.contains("missing field `token`"), "{e}");
        let e = parse_err(
            "[sqlite_database.db]\ntype = \"libsql\"\nurl = \"https://x\"\ntoken = \"t\"\npath = \"a.db\"\n",
        );
        assert!(e.contains("unknown field `path`"), "{e}");
        let e = parse_err("[sqlite_database.db]\ntype = \"postgres\"\n");
        assert_eq!(
            e,
            "rc.toml: [sqlite_database.db]: Unknown database kind: postgres"
        );
    }

    #[test]
    fn spin_databases_accept_allow_attach_file_and_nothing_unknown() {
        let c = RuntimeConfig::parse(
            "[sqlite_database.db]\ntype = \"spin\"\npath = \"x.db\"\nallow_attach_file = true\n",
            Path::new("/rc/rc.toml"),
            Path::new(".spin"),
        )
        .unwrap();
        assert_eq!(
            c.sqlite_databases["db"],
            SqliteConfig::Local {
                path: "/rc/x.db".into(),
                allow_attach_file: true
            }
        );
        let e = parse_err("[sqlite_database.db]\ntype = \"spin\"\nurl = \"https://x\"\n");
        assert!(e.contains("unknown field `url`"), "{e}");
    }
}
