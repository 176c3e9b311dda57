//! The `logModelRequests` setting (docs/runtime.md "Settings"): one log line per model
//! request — provider, model, URL, how many messages and tools, the tokens it used and how it
//! ended. Never a key, a header or any content.

use crate::config::{ModelChoice, ProviderConfig};
use crate::model::{Flow, Model, ModelError, ModelEvent, ModelRequest};

/// A model whose every request is logged.
pub struct Logged<'a> {
    pub inner: Box<dyn Model + 'a>,
    /// `provider=… model=… url=…`, from [`describe`].
    pub what: String,
    /// The last line logged.
    pub last: Option<String>,
}

impl<'a> Logged<'a> {
    pub fn new(inner: Box<dyn Model + 'a>, what: String) -> Self {
        Logged {
            inner,
            what,
            last: None,
        }
    }
}

/// The provider, model id and base URL of `choice`, as a log line's start.
pub fn describe(choice: &ModelChoice) -> String {
    let (provider, url) = match &choice.provider {
        ProviderConfig::Demo { .. } => ("demo", "-".to_string()),
        ProviderConfig::OpenAi(o) => ("openai", o.base_url.clone()),
        ProviderConfig::Anthropic(a) => ("anthropic", a.base_url.clone()),
    };
    format!("provider={provider} model={} url={url}", choice.id)
}

impl Model for Logged<'_> {
    fn stream(
        &mut self,
        request: &ModelRequest,
        on: &mut dyn FnMut(ModelEvent) -> Flow,
    ) -> Result<(), ModelError> {
        let (mut input, mut output) = (0u64, 0u64);
        let mut finish = String::new();
        let result = self.inner.stream(request, &mut |ev| {
            match &ev {
                ModelEvent::Usage {
                    input_tokens,
                    output_tokens,
                } => {
                    input = input.max(*input_tokens);
                    output = output.max(*output_tokens);
                }
                ModelEvent::Finished { reason } => finish = reason.clone(),
                _ => {}
            }
            on(ev)
        });
        let ended = match &result {
            Ok(()) => finish,
            Err(_) => "error".to_string(),
        };
        let line = format!(
            "agent: model request: {} messages={} tools={} input_tokens={input} \
             output_tokens={output} finish={ended}",
            self.what,
            request.messages.len(),
            request.tools.len(),
        );
        eprintln!("{line}");
        self.last = Some(line);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::DemoModel;
    use crate::model::ModelMessage;

    #[test]
    fn a_request_is_one_line_with_its_counts_and_the_events_pass_unchanged() {
        let choices = crate::config::models(|n| match n {
            "llm_provider" => Some("openai".into()),
            "llm_model" => Some("m".into()),
            "llm_base_url" => Some("http://127.0.0.1:9/v1".into()),
            "llm_api_key" => Some("sk-secret".into()),
            _ => None,
        })
        .unwrap();
        let what = describe(&choices[0]);
        assert_eq!(
            what,
            "provider=openai model=openai/m url=http://127.0.0.1:9/v1"
        );
        let demo = DemoModel {
            pacing_ms: 0,
            sleep: |_| {},
        };
        let mut logged = Logged::new(Box::new(demo), what);
        let request = ModelRequest {
            system: "s".into(),
            messages: vec![ModelMessage::User("hello".into())],
            tools: Vec::new(),
        };
        let (mut direct, mut through) = (Vec::new(), Vec::new());
        let mut plain = DemoModel {
            pacing_ms: 0,
            sleep: |_| {},
        };
        plain
            .stream(&request, &mut |e| {
                direct.push(format!("{e:?}"));
                Flow::Continue
            })
            .unwrap();
        logged
            .stream(&request, &mut |e| {
                through.push(format!("{e:?}"));
                Flow::Continue
            })
            .unwrap();
        assert_eq!(direct, through);
        let line = logged.last.unwrap();
        assert!(
            line.starts_with("agent: model request: provider=openai model=openai/m"),
            "{line}"
        );
        assert!(line.contains(" messages=1 tools=0 "), "{line}");
        assert!(line.contains("finish="), "{line}");
        assert!(
            !line.contains("sk-secret") && !line.contains("hello"),
            "{line}"
        );
    }
}
