//! "Test connection" for an admin's provider (docs/runtime.md): one real call to the
//! provider's models endpoint, with the key sent as the agent sends it on a turn, and the
//! provider's own answer or error text read back.

use eve_api::providers::{ProviderKind, ProviderTest};
use serde_json::Value;

use crate::anthropic::API_VERSION;

/// The models endpoint of a provider at `base_url` and the headers that carry `api_key`.
pub fn models_request(
    kind: ProviderKind,
    base_url: &str,
    api_key: Option<&str>,
) -> (String, Vec<(String, String)>) {
    let base = base_url.trim_end_matches('/');
    let key = api_key.filter(|k| !k.is_empty());
    let mut headers = vec![("accept".to_string(), "application/json".to_string())];
    let url = match kind {
        ProviderKind::Openai => {
            if let Some(k) = key {
                headers.push(("authorization".into(), format!("Bearer {k}")));
            }
            format!("{base}/models")
        }
        ProviderKind::Anthropic => {
            headers.push(("anthropic-version".into(), API_VERSION.into()));
            if let Some(k) = key {
                headers.push(("x-api-key".into(), k.to_string()));
            }
            if base.ends_with("/v1") {
                format!("{base}/models")
            } else {
                format!("{base}/v1/models")
            }
        }
    };
    (url, headers)
}

/// Longest piece of a provider's answer shown.
const MAX_MESSAGE_CHARS: usize = 500;

/// What the provider's answer says: 2xx lists its models (`data[].id`, both kinds' shape);
/// anything else is not ok, with the provider's `error.message` (else its body's text).
pub fn read_answer(status: u16, body: &[u8]) -> ProviderTest {
    let json: Option<Value> = serde_json::from_slice(body).ok();
    if (200..300).contains(&status) {
        let models: Vec<String> = json
            .as_ref()
            .and_then(|j| j["data"].as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|m| m["id"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        return ProviderTest {
            ok: true,
            status: Some(status),
            message: format!("Connected: the provider lists {} models.", models.len()),
            models: Some(models),
        };
    }
    let said = json
        .as_ref()
        .and_then(|j| j["error"]["message"].as_str().or(j["error"].as_str()))
        .map(str::to_string)
        .unwrap_or_else(|| String::from_utf8_lossy(body).trim().to_string());
    let said: String = said.chars().take(MAX_MESSAGE_CHARS).collect();
    ProviderTest {
        ok: false,
        status: Some(status),
        message: if said.is_empty() {
            format!("The provider answered HTTP {status}.")
        } else {
            said
        },
        models: None,
    }
}

/// The request could not be made or answered: Spin refusing a host the component may not
/// call says so, so the admin knows to add it and redeploy.
pub fn unreachable(url: &str, error: &str) -> ProviderTest {
    let message = if error.contains("HttpRequestDenied") {
        let origin = url::origin(url);
        format!(
            "{origin} is not in allowed_outbound_hosts: add it to the agent's and the admin \
             component's allowed_outbound_hosts and redeploy."
        )
    } else {
        format!("The provider could not be reached: {error}")
    };
    ProviderTest {
        ok: false,
        status: None,
        message,
        models: None,
    }
}

mod url {
    /// `scheme://host[:port]` of a URL, as allowed_outbound_hosts names it.
    pub fn origin(url: &str) -> String {
        let (scheme, rest) = url.split_once("://").unwrap_or(("https", url));
        let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
        format!("{scheme}://{host}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_sends_its_key_its_way_to_its_models_endpoint() {
        let (url, h) = models_request(ProviderKind::Openai, "https://x.example/v1/", Some("k"));
        assert_eq!(url, "https://x.example/v1/models");
        assert!(h.contains(&("authorization".into(), "Bearer k".into())));
        let (url, h) = models_request(ProviderKind::Anthropic, "https://a.example", Some("k"));
        assert_eq!(url, "https://a.example/v1/models");
        assert!(h.contains(&("x-api-key".into(), "k".into())));
        let (_, h) = models_request(ProviderKind::Openai, "https://x.example", None);
        assert_eq!(h.len(), 1, "no key, no header");
    }

    #[test]
    fn the_answer_lists_models_or_carries_the_providers_error_text() {
        let ok = read_answer(200, br#"{"data":[{"id":"a"},{"id":"b"}]}"#);
        assert!(ok.ok);
        assert_eq!(ok.models.unwrap(), ["a", "b"]);
        let bad = read_answer(
            401,
            br#"{"error":{"message":"Incorrect API key provided"}}"#,
        );
        assert!(!bad.ok);
        assert_eq!(
            (bad.status, bad.message.as_str()),
            (Some(401), "Incorrect API key provided")
        );
        assert_eq!(read_answer(502, b"bad gateway").message, "bad gateway");
        let denied = unreachable(
            "https://llm.example.com:8443/v1/models",
            "ErrorCode::HttpRequestDenied",
        );
        assert!(denied
            .message
            .starts_with("https://llm.example.com:8443 is not in allowed_outbound_hosts"));
    }
}
