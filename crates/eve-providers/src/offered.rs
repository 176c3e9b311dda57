//! The models the agent offers (docs/runtime.md, "What the agent offers"): the variables'
//! models ([`config::models`]) first, then the enabled models of the providers admins keep
//! as data (`eve_runtime::providers`), read on every call so a provider added, changed or
//! disabled at runtime counts from the next turn on every node. The default — the first —
//! is the `defaultModel` setting when it names an offered model.

use eve_runtime::providers::{self, OfferedModel};
use eve_runtime::sealed::Keys;
use eve_store::sql::Sql;

use crate::anthropic::Anthropic;
use crate::config::{self, ModelChoice, ProviderConfig, DEFAULT_CONTEXT_TOKENS};
use crate::openai::OpenAi;
use eve_api::providers::ProviderKind;

/// The sealing keys of `secrets_key` / `secrets_key_previous`; a malformed one is logged and
/// opens nothing (the providers' keys then read as absent).
pub fn keys(lookup: &impl Fn(&str) -> Option<String>) -> Option<Keys> {
    let (current, previous) = (lookup("secrets_key"), lookup("secrets_key_previous"));
    Keys::from_vars(current.as_deref(), previous.as_deref()).unwrap_or_else(|e| {
        eprintln!("agent: {e}");
        None
    })
}

/// Why there is no list: a wrong variable (the owner's to fix), or a database that cannot be
/// read now (the list would be incomplete; the client may retry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unoffered {
    Config(String),
    Database(String),
}

impl std::fmt::Display for Unoffered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unoffered::Config(e) => write!(f, "{e}"),
            Unoffered::Database(e) => write!(f, "database: {e}"),
        }
    }
}

impl From<Unoffered> for String {
    fn from(e: Unoffered) -> String {
        e.to_string()
    }
}

/// Every model offered, the default first: the variables' models, then the data providers'
/// (read from `db` now).
pub fn choices<S: Sql + ?Sized>(
    lookup: impl Fn(&str) -> Option<String>,
    db: &S,
) -> Result<Vec<ModelChoice>, Unoffered> {
    let bootstrap = config::models(&lookup).map_err(Unoffered::Config)?;
    let keys = keys(&lookup);
    let variable = lookup("outbound_allowed_hosts");
    let data = providers::allowed_hosts(db, variable.as_deref())
        .and_then(|allowed| providers::offered(db, keys.as_ref(), &allowed))
        .map_err(Unoffered::Database)?;
    let window = config::positive("llm_context_tokens", lookup("llm_context_tokens"))
        .ok()
        .flatten()
        .unwrap_or(DEFAULT_CONTEXT_TOKENS);
    let default = providers::default_model(db).map_err(Unoffered::Database)?;
    Ok(merge(bootstrap, data, window, default.as_deref()))
}

/// The variables' models, then each data model whose id none of them has; `default` moved
/// first when it is one of them.
pub fn merge(
    bootstrap: Vec<ModelChoice>,
    data: Vec<OfferedModel>,
    window: u64,
    default: Option<&str>,
) -> Vec<ModelChoice> {
    let mut out = bootstrap;
    for m in data {
        if out.iter().any(|c| c.id == m.id) {
            continue;
        }
        out.push(choice(m, window));
    }
    config::prefer(&mut out, default);
    out
}

fn choice(m: OfferedModel, window: u64) -> ModelChoice {
    let model =
        m.id.split_once('/')
            .map_or(m.id.clone(), |(_, model)| model.to_string());
    let provider = match m.kind {
        ProviderKind::Openai => ProviderConfig::OpenAi(OpenAi {
            base_url: m.base_url,
            api_key: m.api_key,
            model,
            max_tokens: m.max_tokens,
        }),
        ProviderKind::Anthropic => ProviderConfig::Anthropic(Anthropic {
            base_url: m.base_url,
            api_key: m.api_key,
            model,
            max_tokens: m.max_tokens,
        }),
    };
    ModelChoice {
        id: m.id,
        label: m.label,
        provider,
        context_tokens: m.context_tokens.unwrap_or(window),
    }
}

/// Whether `id`, which is not offered, names a data provider's model (disabled or removed
/// there): refused as `model_not_allowed` rather than as an unknown model.
pub fn is_withdrawn<S: Sql + ?Sized>(db: &S, id: &str) -> Result<bool, String> {
    providers::names_provider(db, id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{anthropic, openai};
    use eve_api::providers::{ProviderCreate, ProviderModel};

    fn db() -> eve_sql_testing::Db {
        let db = eve_sql_testing::Db::memory();
        eve_store::migrations::migrate(&db, 0).unwrap();
        db
    }

    fn model(name: &str, enabled: bool) -> ProviderModel {
        ProviderModel {
            model: name.into(),
            label: None,
            enabled,
            context_tokens: None,
            shadowed: false,
        }
    }

    const KEY: &str = "0101010101010101010101010101010101010101010101010101010101010101";

    #[test]
    fn the_variables_come_first_then_the_enabled_data_models_and_the_setting_picks_the_default() {
        let db = db();
        let keys = Keys::from_vars(Some(KEY), None).unwrap();
        let body = ProviderCreate {
            name: "openai".into(),
            kind: ProviderKind::Anthropic,
            base_url: None,
            api_key: Some("sk-data".into()),
            max_tokens: Some(77),
            models: vec![model("m1", true), model("off", false), model("gpt-x", true)],
        };
        providers::create(&db, keys.as_ref(), &[], &body, 1).unwrap();
        let vars = |n: &str| match n {
            "llm_provider" => Some("openai".to_string()),
            "llm_model" => Some("gpt-x".to_string()),
            "secrets_key" => Some(KEY.to_string()),
            _ => None,
        };
        let ids = |c: &[ModelChoice]| c.iter().map(|c| c.id.clone()).collect::<Vec<_>>();
        let list = choices(vars, &db).unwrap();
        assert_eq!(
            ids(&list),
            ["openai/gpt-x", "openai/m1"],
            "the variables' model wins"
        );
        match &list[1].provider {
            ProviderConfig::Anthropic(a) => {
                assert_eq!(a.api_key.as_deref(), Some("sk-data"));
                assert_eq!(a.base_url, anthropic::DEFAULT_BASE_URL);
                assert_eq!((a.model.as_str(), a.max_tokens), ("m1", Some(77)));
            }
            other => panic!("{other:?}"),
        }
        db.execute(
            "INSERT INTO system_setting (key, value, updated_at) VALUES ('defaultModel', '\"openai/m1\"', 1)",
            vec![],
        )
        .unwrap();
        assert_eq!(
            ids(&choices(vars, &db).unwrap()),
            ["openai/m1", "openai/gpt-x"]
        );
        assert!(is_withdrawn(&db, "openai/off").unwrap());
        assert!(!is_withdrawn(&db, "elsewhere/off").unwrap());
    }

    #[test]
    fn the_data_defaults_are_the_agents() {
        assert_eq!(providers::OPENAI_BASE_URL, openai::DEFAULT_BASE_URL);
        assert_eq!(providers::ANTHROPIC_BASE_URL, anthropic::DEFAULT_BASE_URL);
    }
}
