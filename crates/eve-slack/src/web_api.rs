//! Slack Web API calls as eve's `@chat-adapter/slack` makes them: `POST <base>/<method>`,
//! `Authorization: Bearer <bot token>`, the body form-encoded (strings as they are, numbers and
//! booleans as text, arrays and objects as JSON), the answer `{"ok":true,…}` or
//! `{"ok":false,"error":"…"}`.

use serde_json::Value;

/// Slack's own API base (variable `slack_api_base_url` replaces it, e.g. for a simulator).
pub const DEFAULT_API_BASE: &str = "https://slack.com/api";
/// The host of the upload URLs `files.getUploadURLExternal` hands out (a long reply's
/// snippet is sent there).
pub const UPLOAD_HOST: &str = "files.slack.com";

/// One Web API call: the method and its fields in eve's order.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub method: &'static str,
    pub fields: Vec<(&'static str, Value)>,
}

impl Call {
    pub fn new(method: &'static str, fields: Vec<(&'static str, Value)>) -> Self {
        Call { method, fields }
    }

    /// The form body (`null` fields are left out, as eve leaves out `undefined` ones).
    pub fn form(&self) -> String {
        let mut f = form_urlencoded::Serializer::new(String::new());
        for (k, v) in &self.fields {
            match v {
                Value::Null => {}
                Value::String(s) => {
                    f.append_pair(k, s);
                }
                Value::Bool(_) | Value::Number(_) => {
                    f.append_pair(k, &v.to_string());
                }
                _ => {
                    f.append_pair(k, &v.to_string());
                }
            }
        }
        f.finish()
    }

    /// The field `name`, if set.
    pub fn field(&self, name: &str) -> Option<&Value> {
        self.fields.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
    }
}

/// The URL of `method` under `base` (a trailing slash or not).
pub fn method_url(base: &str, method: &str) -> String {
    format!("{}/{method}", base.trim_end_matches('/'))
}

/// Slack's verdict on an answer: `Ok(body)` for `"ok": true`, else its `error` code.
pub fn verdict(status: u16, body: &[u8]) -> Result<Value, String> {
    let v: Value =
        serde_json::from_slice(body).map_err(|_| format!("HTTP {status} without a JSON answer"))?;
    if v["ok"] == Value::Bool(true) {
        Ok(v)
    } else {
        Err(v["error"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| format!("HTTP {status}: unknown_error")))
    }
}
