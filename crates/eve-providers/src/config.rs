//! Which model provider runs, from the Spin variables `llm_provider` (`demo` | `openai` |
//! `anthropic`), `llm_base_url`, `llm_api_key`, `llm_model`, `llm_max_tokens` and
//! `demo_pacing_ms`; and which models a chat may choose from (`llm_models`, see [`models`]).

use serde::Deserialize;

use crate::anthropic::{self, Anthropic};
use crate::demo::DEFAULT_PACING_MS;
use crate::openai::{self, OpenAi};

/// The selected provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderConfig {
    Demo { pacing_ms: u64 },
    OpenAi(OpenAi),
    Anthropic(Anthropic),
}

impl ProviderConfig {
    /// The model id streams report (`step.started.modelId`): `<provider>/<model>`.
    pub fn model_id(&self) -> String {
        match self {
            ProviderConfig::Demo { .. } => "demo/eve-demo".into(),
            ProviderConfig::OpenAi(o) => format!("openai/{}", o.model),
            ProviderConfig::Anthropic(a) => format!("anthropic/{}", a.model),
        }
    }
}

/// Reads the provider configuration through `lookup` (unset or empty → default). An unknown
/// `llm_provider` is an error naming the variable.
pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<ProviderConfig, String> {
    let get = |name: &str| {
        lookup(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let provider = get("llm_provider")
        .unwrap_or_else(|| "demo".into())
        .to_ascii_lowercase();
    let base = get("llm_base_url");
    let key = lookup("llm_api_key")
        .filter(|k| !k.trim().is_empty())
        .map(|k| k.trim().to_string());
    let model = get("llm_model");
    provider_config(&provider, base, key, model, &lookup)
}

/// `llm_max_tokens`: unset or empty is `None`; anything but a positive integer is an error.
fn max_tokens(lookup: &impl Fn(&str) -> Option<String>) -> Result<Option<u64>, String> {
    match lookup("llm_max_tokens").map(|v| v.trim().to_string()) {
        None => Ok(None),
        Some(v) if v.is_empty() => Ok(None),
        Some(v) => match v.parse::<u64>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(format!(
                "llm_max_tokens: expected a positive integer, got {v:?}"
            )),
        },
    }
}

fn provider_config(
    provider: &str,
    base: Option<String>,
    key: Option<String>,
    model: Option<String>,
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<ProviderConfig, String> {
    let get = |name: &str| {
        lookup(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let max_tokens = max_tokens(lookup)?;
    match provider {
        "demo" => Ok(ProviderConfig::Demo {
            pacing_ms: get("demo_pacing_ms")
                .and_then(|v| v.parse().ok())
                .map(|ms: u64| ms.min(2000))
                .unwrap_or(DEFAULT_PACING_MS),
        }),
        "openai" => Ok(ProviderConfig::OpenAi(OpenAi {
            base_url: base.unwrap_or_else(|| openai::DEFAULT_BASE_URL.into()),
            api_key: key,
            model: model.unwrap_or_else(|| openai::DEFAULT_MODEL.into()),
            max_tokens,
        })),
        "anthropic" => Ok(ProviderConfig::Anthropic(Anthropic {
            base_url: base.unwrap_or_else(|| anthropic::DEFAULT_BASE_URL.into()),
            api_key: key,
            model: model.unwrap_or_else(|| anthropic::DEFAULT_MODEL.into()),
            max_tokens,
        })),
        other => Err(format!(
            "llm_provider: unknown value {other:?} (expected demo, openai or anthropic)"
        )),
    }
}

/// One model a chat may choose: `id` is `provider/model`, what `step.started.modelId` reports
/// and what a message's `model` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelChoice {
    pub id: String,
    pub label: String,
    pub provider: ProviderConfig,
    /// The model's context window in tokens (`context_tokens` of its entry, else
    /// `llm_context_tokens`, else [`DEFAULT_CONTEXT_TOKENS`]).
    pub context_tokens: u64,
}

/// The context window assumed when none is configured.
pub const DEFAULT_CONTEXT_TOKENS: u64 = 128_000;
/// Characters per token assumed when fitting history (low, so the estimate errs on the side
/// of trimming: English runs about 4, Chinese about 1.5, both count as UTF-8 bytes here).
const CHARS_PER_TOKEN: u64 = 3;

impl ModelChoice {
    /// How many characters (UTF-8 bytes) of history fit: the window less the answer's room.
    pub fn context_chars(&self) -> usize {
        let answer = match &self.provider {
            ProviderConfig::OpenAi(o) => o.max_tokens.unwrap_or(4096),
            ProviderConfig::Anthropic(a) => a.max_tokens.unwrap_or(anthropic::MAX_TOKENS),
            ProviderConfig::Demo { .. } => 0,
        };
        let tokens = self.context_tokens.saturating_sub(answer).max(1024);
        usize::try_from(tokens.saturating_mul(CHARS_PER_TOKEN)).unwrap_or(usize::MAX)
    }
}

pub(crate) fn positive(name: &str, v: Option<String>) -> Result<Option<u64>, String> {
    match v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => match v.parse::<u64>() {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(format!("{name}: expected a positive integer, got {v:?}")),
        },
    }
}

/// One entry of `llm_models`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    provider: String,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    base_url: Option<String>,
    #[serde(default)]
    context_tokens: Option<u64>,
}

/// The models the owner allows, the default first. `llm_models` is a JSON array of
/// `{"provider", "model", "label"?, "base_url"?}`; unset or empty, the one model of
/// `llm_provider`/`llm_model`. An entry's API key is `llm_<provider>_api_key`, else
/// `llm_api_key` when its provider is `llm_provider` (a key never goes to another provider);
/// its base URL is its own, else `llm_base_url` likewise, else the provider's.
pub fn models(lookup: impl Fn(&str) -> Option<String>) -> Result<Vec<ModelChoice>, String> {
    let get = |name: &str| {
        lookup(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let window = positive("llm_context_tokens", lookup("llm_context_tokens"))?
        .unwrap_or(DEFAULT_CONTEXT_TOKENS);
    let Some(list) = get("llm_models") else {
        let provider = from_lookup(&lookup)?;
        let id = provider.model_id();
        let label = id
            .split_once('/')
            .map_or(id.clone(), |(_, m)| m.to_string());
        return Ok(vec![ModelChoice {
            id,
            label,
            provider,
            context_tokens: window,
        }]);
    };
    let entries: Vec<Entry> = serde_json::from_str(&list).map_err(|e| {
        format!("llm_models: expected a JSON array of {{\"provider\", \"model\", \"label\"}}: {e}")
    })?;
    if entries.is_empty() {
        return Err("llm_models: the list is empty".into());
    }
    let main = get("llm_provider")
        .unwrap_or_else(|| "demo".into())
        .to_ascii_lowercase();
    let mut out: Vec<ModelChoice> = Vec::new();
    for e in entries {
        let p = e.provider.trim().to_ascii_lowercase();
        let own = |suffix: &str| get(&format!("llm_{p}_{suffix}"));
        let shared = |name: &str| if p == main { get(name) } else { None };
        let key = own("api_key").or_else(|| shared("llm_api_key"));
        let base = e
            .base_url
            .filter(|b| !b.trim().is_empty())
            .or_else(|| shared("llm_base_url"));
        let model = e.model.filter(|m| !m.trim().is_empty());
        let provider = provider_config(&p, base, key, model.clone(), &lookup)
            .map_err(|m| m.replacen("llm_provider", "llm_models", 1))?;
        let id = match &provider {
            ProviderConfig::Demo { .. } => {
                format!("demo/{}", model.as_deref().unwrap_or("eve-demo"))
            }
            other => other.model_id(),
        };
        if out.iter().any(|c| c.id == id) {
            return Err(format!("llm_models: {id} is listed twice"));
        }
        let label = e.label.filter(|l| !l.trim().is_empty()).unwrap_or_else(|| {
            id.split_once('/')
                .map_or(id.clone(), |(_, m)| m.to_string())
        });
        out.push(ModelChoice {
            id,
            label,
            provider,
            context_tokens: e.context_tokens.filter(|&n| n > 0).unwrap_or(window),
        });
    }
    Ok(out)
}

/// The choice named `requested`, else `fallback` (a session's earlier model) if still
/// allowed, else the default (first).
pub fn choose<'a>(
    choices: &'a [ModelChoice],
    requested: Option<&str>,
    fallback: Option<&str>,
) -> Option<&'a ModelChoice> {
    match requested {
        Some(id) => choices.iter().find(|c| c.id == id),
        None => fallback
            .and_then(|id| choices.iter().find(|c| c.id == id))
            .or_else(|| choices.first()),
    }
}

/// Puts the admins' default model (the `defaultModel` setting) first when it is one of
/// `choices`; otherwise the order stays and the first is the default.
pub fn prefer(choices: &mut [ModelChoice], default: Option<&str>) {
    if let Some(i) = default.and_then(|id| choices.iter().position(|c| c.id == id)) {
        choices[..=i].rotate_right(1);
    }
}

/// What `/api/setup` lists as missing: a hosted provider (its default base URL) with no API
/// key cannot answer.
pub fn missing_keys(choices: &[ModelChoice]) -> Vec<String> {
    choices
        .iter()
        .filter_map(|c| match &c.provider {
            ProviderConfig::OpenAi(o)
                if o.api_key.is_none() && o.base_url == openai::DEFAULT_BASE_URL =>
            {
                Some(format!("llm_api_key (for {})", c.id))
            }
            ProviderConfig::Anthropic(a)
                if a.api_key.is_none() && a.base_url == anthropic::DEFAULT_BASE_URL =>
            {
                Some(format!("llm_api_key (for {})", c.id))
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(pairs: &[(&str, &str)]) -> Result<ProviderConfig, String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        from_lookup(move |n| pairs.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone()))
    }

    #[test]
    fn model_ids_name_the_provider_and_the_model() {
        assert_eq!(cfg(&[]).unwrap().model_id(), "demo/eve-demo");
        assert_eq!(
            cfg(&[("llm_provider", "openai"), ("llm_model", "m1")])
                .unwrap()
                .model_id(),
            "openai/m1"
        );
    }

    #[test]
    fn the_demo_provider_is_the_default() {
        assert_eq!(
            cfg(&[]),
            Ok(ProviderConfig::Demo {
                pacing_ms: DEFAULT_PACING_MS
            })
        );
        assert_eq!(
            cfg(&[("llm_provider", ""), ("demo_pacing_ms", "5")]),
            Ok(ProviderConfig::Demo { pacing_ms: 5 })
        );
    }

    #[test]
    fn openai_and_anthropic_take_base_url_key_and_model_with_defaults() {
        match cfg(&[
            ("llm_provider", "OpenAI"),
            ("llm_base_url", "http://127.0.0.1:11434/v1"),
        ])
        .unwrap()
        {
            ProviderConfig::OpenAi(o) => {
                assert_eq!(o.base_url, "http://127.0.0.1:11434/v1");
                assert_eq!(o.api_key, None);
                assert_eq!(o.model, openai::DEFAULT_MODEL);
            }
            other => panic!("{other:?}"),
        }
        match cfg(&[
            ("llm_provider", "anthropic"),
            ("llm_api_key", "k"),
            ("llm_model", "m"),
        ])
        .unwrap()
        {
            ProviderConfig::Anthropic(a) => {
                assert_eq!(a.base_url, anthropic::DEFAULT_BASE_URL);
                assert_eq!((a.api_key.as_deref(), a.model.as_str()), (Some("k"), "m"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_unknown_provider_names_the_variable() {
        assert!(cfg(&[("llm_provider", "gpt")])
            .unwrap_err()
            .starts_with("llm_provider"));
    }

    fn list(pairs: &[(&str, &str)]) -> Result<Vec<ModelChoice>, String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        models(move |n| pairs.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone()))
    }

    #[test]
    fn without_llm_models_the_one_configured_model_is_the_list() {
        let l = list(&[("llm_provider", "openai"), ("llm_model", "m1")]).unwrap();
        assert_eq!(l.len(), 1);
        assert_eq!((l[0].id.as_str(), l[0].label.as_str()), ("openai/m1", "m1"));
        assert_eq!(list(&[]).unwrap()[0].id, "demo/eve-demo");
    }

    #[test]
    fn llm_models_lists_choices_and_keys_stay_with_their_provider() {
        let l = list(&[
            ("llm_provider", "openai"),
            ("llm_api_key", "sk-openai"),
            ("llm_base_url", "http://127.0.0.1:1/v1"),
            ("llm_max_tokens", "123"),
            (
                "llm_models",
                r#"[{"provider":"openai","model":"a","label":"Model A"},
                    {"provider":"anthropic","model":"b"},
                    {"provider":"demo"}]"#,
            ),
        ])
        .unwrap();
        let ids: Vec<&str> = l.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["openai/a", "anthropic/b", "demo/eve-demo"]);
        assert_eq!(l[0].label, "Model A");
        match (&l[0].provider, &l[1].provider) {
            (ProviderConfig::OpenAi(o), ProviderConfig::Anthropic(a)) => {
                assert_eq!(o.api_key.as_deref(), Some("sk-openai"));
                assert_eq!(o.base_url, "http://127.0.0.1:1/v1");
                assert_eq!(o.max_tokens, Some(123));
                assert_eq!(a.api_key, None, "the OpenAI key never goes to Anthropic");
                assert_eq!(a.base_url, anthropic::DEFAULT_BASE_URL);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(missing_keys(&l), ["llm_api_key (for anthropic/b)"]);
    }

    #[test]
    fn choosing_takes_the_request_then_the_sessions_model_then_the_default() {
        let l = list(&[(
            "llm_models",
            r#"[{"provider":"demo","model":"one"},{"provider":"demo","model":"two"}]"#,
        )])
        .unwrap();
        assert_eq!(choose(&l, Some("demo/two"), None).unwrap().id, "demo/two");
        assert_eq!(choose(&l, Some("demo/three"), None), None);
        assert_eq!(choose(&l, None, Some("demo/two")).unwrap().id, "demo/two");
        assert_eq!(choose(&l, None, Some("gone/x")).unwrap().id, "demo/one");
        assert_eq!(choose(&l, None, None).unwrap().id, "demo/one");
    }

    #[test]
    fn a_wrong_llm_models_or_max_tokens_names_the_variable() {
        for bad in [
            "not json",
            "[]",
            r#"[{"provider":"gpt","model":"x"}]"#,
            r#"[{"provider":"demo"},{"provider":"demo"}]"#,
            r#"[{"provider":"openai","modle":"x"}]"#,
        ] {
            let e = list(&[("llm_models", bad)]).unwrap_err();
            assert!(e.starts_with("llm_models"), "{bad}: {e}");
        }
        let e = list(&[("llm_provider", "openai"), ("llm_max_tokens", "lots")]).unwrap_err();
        assert!(e.starts_with("llm_max_tokens"), "{e}");
        let e = list(&[("llm_context_tokens", "-5")]).unwrap_err();
        assert!(e.starts_with("llm_context_tokens"), "{e}");
    }

    #[test]
    fn the_context_window_leaves_room_for_the_answer() {
        let l = list(&[
            ("llm_context_tokens", "10000"),
            (
                "llm_models",
                r#"[{"provider":"anthropic","model":"a"},{"provider":"openai","model":"b","context_tokens":2000000}]"#,
            ),
        ])
        .unwrap();
        assert_eq!(l[0].context_tokens, 10_000);
        assert_eq!(l[0].context_chars(), (10_000 - 4096) * 3);
        assert_eq!(l[1].context_tokens, 2_000_000);
        assert_eq!(list(&[]).unwrap()[0].context_tokens, DEFAULT_CONTEXT_TOKENS);
    }

    #[test]
    fn the_admins_default_model_goes_first_when_it_is_offered() {
        let list = r#"[{"provider":"demo","model":"a"},{"provider":"demo","model":"b"},{"provider":"demo","model":"c"}]"#;
        let ids = |default: Option<&str>| {
            let mut choices = models(|n| (n == "llm_models").then(|| list.to_string())).unwrap();
            prefer(&mut choices, default);
            choices.into_iter().map(|c| c.id).collect::<Vec<_>>()
        };
        assert_eq!(ids(Some("demo/c")), ["demo/c", "demo/a", "demo/b"]);
        assert_eq!(ids(Some("demo/z")), ["demo/a", "demo/b", "demo/c"]);
        assert_eq!(ids(None), ["demo/a", "demo/b", "demo/c"]);
    }
}
