//! The `logModelRequests` setting (docs/runtime.md "Settings"): one log line per model
//! request — provider, model, URL, how many messages and tools, the tokens it used and how it
//! ended. Never a key, a header or any content.

use crate::providers::config::{ModelChoice, ProviderConfig};
use crate::providers::model::{Flow, Model, ModelError, ModelEvent, ModelRequest};

/// A model whose every request is logged.
pub struct Logged<'a> {
    pub inner: Box<dyn Model + 'a>,
    /// `provider=… model=… url=…`, from [`describe`].
    pub what: String,
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
        eprintln!(
            "agent: model request: {} messages={} tools={} input_tokens={input} \
             output_tokens={output} finish={ended}",
            self.what,
            request.messages.len(),
            request.tools.len(),
        );
        result
    }
}
