//! The Slack Web API (`slack_bot_token`, `slack_api_base_url`): the calls the renderer decides
//! (`eve_slack::render`), made in order; a failed one is logged and the turn goes on, as eve
//! logs and skips a failed status or post.

use std::collections::HashMap;

use eve_slack::hitl::{self, Post};
use eve_slack::render::{self, Action, Delivery, Renderer, SNIPPET_NAME};
use eve_slack::store::{self, Card};
use eve_slack::web_api::{self, Call, DEFAULT_API_BASE};
use serde_json::{json, Value};
use spin_sdk::http::Method;

use crate::http;
use crate::variable;

/// The bot's token and the API base.
pub struct Slack {
    token: String,
    base: String,
}

impl Slack {
    /// `None` without `slack_bot_token` (nothing can be posted).
    pub fn from_env() -> Option<Slack> {
        let token = variable("slack_bot_token")?;
        let base = variable("slack_api_base_url").unwrap_or_else(|| DEFAULT_API_BASE.into());
        Some(Slack { token, base })
    }

    /// Calls `method` with the call's form body; Slack's answer or its error code.
    pub fn call(&self, c: &Call) -> Result<Value, String> {
        let headers = vec![
            (
                "authorization".into(),
                format!("Bearer {}", self.token).into_bytes(),
            ),
            (
                "content-type".into(),
                b"application/x-www-form-urlencoded".to_vec(),
            ),
        ];
        let url = web_api::method_url(&self.base, c.method);
        let a = http::call(Method::Post, &url, &headers, c.form().as_bytes())?;
        web_api::verdict(a.status, &a.body)
    }

    /// Does each action in order, logging what Slack refuses.
    pub fn run(&self, actions: Vec<Action>, r: &Renderer) {
        // The tool-input messages posted so far, by approval request (their cards follow).
        let mut details = HashMap::new();
        for a in actions {
            let result = match &a {
                Action::Call(c) => self.call(c).map(|_| ()),
                Action::Reply { markdown } => {
                    self.reply(markdown, r);
                    Ok(())
                }
                Action::Ask { call, post } => self.ask(call, post, r, &mut details),
                Action::Settle {
                    request_id,
                    label,
                    user,
                } => self.settle(request_id, label, user.as_deref().unwrap_or(""), r),
            };
            if let Err(e) = result {
                eprintln!("slack: a Slack call failed: {e}");
            }
        }
    }

    /// Posts a message asking for input; its approval cards are kept open until settled.
    fn ask(
        &self,
        call: &Call,
        post: &Post,
        r: &Renderer,
        details: &mut HashMap<String, String>,
    ) -> Result<(), String> {
        let v = self.call(call)?;
        let Some(ts) = v["ts"].as_str() else {
            return Ok(());
        };
        if post.details {
            for id in &post.approvals {
                details.insert(id.clone(), ts.to_string());
            }
            return Ok(());
        }
        let db = eve_spin::db::open().map_err(|e| e.message)?;
        for id in &post.approvals {
            let card = Card {
                channel: r.channel.clone(),
                thread_ts: r.thread_ts.clone(),
                request_id: id.clone(),
                message_ts: ts.to_string(),
                blocks: post.blocks.clone(),
                details_ts: details.get(id).cloned(),
                requester: r.requester.clone(),
            };
            store::record_card(&db, &card, eve_spin::db::now_ms()).map_err(|e| e.message)?;
        }
        Ok(())
    }

    /// Retires a settled approval's open card (eve's `settleApprovalCard`): the card shows the
    /// answer and loses its buttons (`chat.update`), and its tool input's message goes
    /// (`chat.delete`) once no open card refers to it. Nothing when another invocation took it.
    fn settle(
        &self,
        request_id: &str,
        label: &str,
        user: &str,
        r: &Renderer,
    ) -> Result<(), String> {
        let db = eve_spin::db::open().map_err(|e| e.message)?;
        let taken = store::take_card(&db, &r.channel, &r.thread_ts, request_id);
        let Some(card) = taken.map_err(|e| e.message)? else {
            return Ok(());
        };
        let blocks = hitl::answered_blocks(&card.blocks, request_id, label, user, r.words);
        store::update_card_blocks(&db, &r.channel, &card.message_ts, &blocks)
            .map_err(|e| e.message)?;
        let update = Call::new(
            "chat.update",
            vec![
                ("blocks", Value::Array(blocks)),
                ("channel", json!(r.channel)),
                ("text", json!(format!("{}{label}", r.words.answered))),
                ("ts", json!(card.message_ts)),
            ],
        );
        self.call(&update)?;
        let Some(d) = card.details_ts else {
            return Ok(());
        };
        if store::details_in_use(&db, &r.channel, &d).map_err(|e| e.message)? {
            return Ok(());
        }
        let delete = Call::new(
            "chat.delete",
            vec![("channel", json!(r.channel)), ("ts", json!(d))],
        );
        self.call(&delete).map(|_| ())
    }

    /// Delivers a final reply as eve does: inline, else (too long, or refused for its size) as
    /// a snippet; when neither arrives, a notice with an error id that the log names too.
    fn reply(&self, markdown: &str, r: &Renderer) {
        let delivered = match render::first_delivery(markdown) {
            Delivery::Inline => {
                match self.call(&r.markdown_call(markdown)) {
                    Err(e) if render::is_refused_payload(&e) => {
                        eprintln!("slack: Slack refused the final reply ({e}); delivering it as a snippet");
                        self.snippet(markdown, r)
                    }
                    other => other.map(|_| ()),
                }
            }
            Delivery::Snippet => self.snippet(markdown, r),
        };
        if let Err(e) = delivered {
            let id = error_id();
            eprintln!("slack: final reply was not delivered to Slack (error id {id}): {e}");
            let notice = r.markdown_call(&render::undelivered_notice(r.words, &id));
            if let Err(e) = self.call(&notice) {
                eprintln!("slack: the undelivered-reply notice failed too: {e}");
            }
        }
    }

    /// Whether the conversation is private, by `conversations.info` (eve asks when an
    /// `app_mention` does not say; unknown or failed counts as private).
    pub fn is_private(&self, channel: &str) -> bool {
        let c = Call::new("conversations.info", vec![("channel", json!(channel))]);
        match self.call(&c) {
            Ok(v) => {
                let ch = &v["channel"];
                ch["is_im"] == true || ch["is_mpim"] == true || ch["is_private"] != false
            }
            Err(_) => true,
        }
    }

    /// Uploads a long reply as the `eve-response.md` snippet in the thread, as eve's
    /// `uploadSlackFiles`: reserve, upload the bytes, complete with the note.
    fn snippet(&self, markdown: &str, r: &Renderer) -> Result<(), String> {
        let reserve = Call::new(
            "files.getUploadURLExternal",
            vec![
                ("filename", json!(SNIPPET_NAME)),
                ("length", json!(markdown.len())),
                ("snippet_type", json!("markdown")),
            ],
        );
        let v = self.call(&reserve)?;
        let (Some(url), Some(id)) = (v["upload_url"].as_str(), v["file_id"].as_str()) else {
            return Err("files.getUploadURLExternal returned no upload URL".into());
        };
        let headers = vec![
            (
                "authorization".into(),
                format!("Bearer {}", self.token).into_bytes(),
            ),
            ("content-type".into(), b"application/octet-stream".to_vec()),
        ];
        let up = http::call(Method::Post, url, &headers, markdown.as_bytes())?;
        if !(200..300).contains(&up.status) {
            return Err(format!("the file upload answered HTTP {}", up.status));
        }
        let complete = Call::new(
            "files.completeUploadExternal",
            vec![
                ("channel_id", json!(r.channel)),
                ("files", json!([{ "id": id, "title": SNIPPET_NAME }])),
                ("initial_comment", json!(r.words.snippet_note)),
                ("thread_ts", json!(r.thread_ts)),
            ],
        );
        self.call(&complete).map(|_| ())
    }
}

/// A fresh error id (a UUID v4, as eve's), naming one failure in the log and in the thread.
fn error_id() -> String {
    let mut b = eve_auth::crypto::random_bytes::<16>();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = eve_auth::crypto::hex(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}
