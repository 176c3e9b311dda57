//! Which model provider runs, from the Spin variables `llm_provider` (`demo` | `openai` |
//! `anthropic`), `llm_base_url`, `llm_api_key`, `llm_model`, and `demo_pacing_ms`.

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
    match provider.as_str() {
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
        })),
        "anthropic" => Ok(ProviderConfig::Anthropic(Anthropic {
            base_url: base.unwrap_or_else(|| anthropic::DEFAULT_BASE_URL.into()),
            api_key: key,
            model: model.unwrap_or_else(|| anthropic::DEFAULT_MODEL.into()),
        })),
        other => Err(format!(
            "llm_provider: unknown value {other:?} (expected demo, openai or anthropic)"
        )),
    }
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
}
