//! What a verified `POST /eve/v1/slack` carries, decided as eve's `slackChannel` decides it
//! (`handleEventPost`, `handleInteractionPost`, `@chat-adapter/slack`'s `parseSlackWebhookBody`):
//!
//! - a form body is an interaction (`payload=<JSON>`); one of our question buttons
//!   (`eve_input:…`) becomes an [`Answer`], every other interaction is ignored;
//! - a JSON `url_verification` answers its `challenge`;
//! - an `event_callback` whose event is an `app_mention`, or a `message` in a DM
//!   (`channel_type: im`, no subtype but `file_share`, no `bot_id`), is a [`Message`] — unless
//!   the installed app wrote it (its bot user, or its `api_app_id`): eve drops its own messages
//!   so it never answers itself;
//! - anything else (bad JSON included) is answered 200 `ok` and does nothing.

use serde_json::{Map, Value};

use crate::hitl;

/// Which event brought a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    AppMention,
    DirectMessage,
}

/// A message that starts or continues the thread's turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub kind: Kind,
    /// The envelope's `event_id` (repeats are dropped).
    pub event_id: Option<String>,
    /// The app installation's workspace, else the event's team: the principal's `<team>`.
    pub team: String,
    /// The event's own team (`event.team_id`, else the envelope's).
    pub event_team: Option<String>,
    pub user: String,
    pub is_bot: bool,
    pub channel: String,
    /// `public`, `private` or `None` when the event does not say (an `app_mention`).
    pub channel_type: Option<String>,
    pub ts: String,
    /// The thread: the message's `thread_ts`, or its own `ts` when it starts one.
    pub thread_ts: String,
    pub text: String,
    /// The receiving bot's user id (`authorizations[].is_bot`), when Slack names it.
    pub bot_user_id: Option<String>,
}

/// A click on one of our question buttons.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub team: String,
    pub user: String,
    pub channel: String,
    pub thread_ts: String,
    /// The message the buttons are on (updated to show the answer).
    pub message_ts: String,
    pub request_id: String,
    /// The option chosen (empty for a free-form answer).
    pub option_id: String,
    /// A free-form answer's text (from the modal).
    pub text: Option<String>,
    /// The button's label, or the free-form answer (what the updated message shows).
    pub label: String,
    /// The blocks of the message the buttons are on.
    pub blocks: Vec<Value>,
    /// A tool approval's button (its card is retired when the agent settles it).
    pub approval: bool,
}

/// A click on a free-form question's "Type your answer": the modal to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenModal {
    /// Slack's `trigger_id` (good for about three seconds).
    pub trigger_id: String,
    pub team: String,
    pub channel: String,
    pub thread_ts: String,
    pub message_ts: String,
    pub request_id: String,
    /// The question, read from the message's first section.
    pub prompt: Option<String>,
}

impl OpenModal {
    /// What the modal carries back with the submission (eve's `private_metadata` fields).
    pub fn metadata(&self) -> Value {
        serde_json::json!({
            "continuationToken": format!("{}:{}", self.channel, self.thread_ts),
            "channelId": self.channel,
            "installationTeamId": self.team,
            "messageChannelId": self.channel,
            "threadTs": self.thread_ts,
            "messageTs": self.message_ts,
            "requestId": self.request_id,
        })
    }
}

/// What a verified request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inbound {
    Challenge(String),
    Message(Message),
    Answer(Answer),
    OpenModal(OpenModal),
    Ignored,
}

/// Whether Slack's headers say this is a retry after our answer timed out (eve answers those
/// `ok` at once and does nothing: the first delivery is already being handled).
pub fn is_timeout_retry(retry_num: Option<&str>, retry_reason: Option<&str>) -> bool {
    let num = retry_num
        .and_then(|n| n.trim().parse::<f64>().ok())
        .unwrap_or(0.0);
    num >= 1.0 && retry_reason == Some("http_timeout")
}

/// Reads a verified body; `form` when its content type is `application/x-www-form-urlencoded`.
pub fn parse(body: &[u8], form: bool) -> Inbound {
    if form {
        return parse_interaction(body);
    }
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return Inbound::Ignored;
    };
    let Some(o) = v.as_object() else {
        return Inbound::Ignored;
    };
    if o.get("type").and_then(Value::as_str) == Some("url_verification") {
        if let Some(c) = o.get("challenge").and_then(Value::as_str) {
            return Inbound::Challenge(c.to_string());
        }
    }
    if o.get("type").and_then(Value::as_str) != Some("event_callback") {
        return Inbound::Ignored;
    }
    match o.get("event").and_then(Value::as_object) {
        Some(event) => message(o, event).map_or(Inbound::Ignored, Inbound::Message),
        None => Inbound::Ignored,
    }
}

fn text(o: &Map<String, Value>, key: &str) -> Option<String> {
    o.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn message(envelope: &Map<String, Value>, event: &Map<String, Value>) -> Option<Message> {
    let kind = match event.get("type").and_then(Value::as_str)? {
        "app_mention" => Kind::AppMention,
        "message" if event.get("channel_type").and_then(Value::as_str) == Some("im") => {
            Kind::DirectMessage
        }
        _ => return None,
    };
    let bot_id = text(event, "bot_id");
    if kind == Kind::DirectMessage {
        let subtype = text(event, "subtype");
        if subtype.is_some_and(|s| s != "file_share") || bot_id.is_some() {
            return None;
        }
    }
    let (channel, ts) = (text(event, "channel")?, text(event, "ts")?);
    let bot_user_id = bot_user(envelope);
    let user = text(event, "user");
    let own_app = text(envelope, "api_app_id").is_some_and(|a| text(event, "app_id") == Some(a));
    if own_app || (bot_user_id.is_some() && user == bot_user_id) {
        return None;
    }
    let event_team = text(event, "team").or_else(|| text(event, "team_id"));
    let event_team = event_team.or_else(|| text(envelope, "team_id"));
    let team = installation_team(envelope).or_else(|| event_team.clone())?;
    Some(Message {
        kind,
        event_id: text(envelope, "event_id"),
        team,
        event_team,
        // eve lets a message without a user through with no auth; we need a principal.
        user: user?,
        is_bot: bot_id.is_some(),
        thread_ts: text(event, "thread_ts").unwrap_or_else(|| ts.clone()),
        channel,
        channel_type: text(event, "channel_type").map(|t| privacy(&t).to_string()),
        ts,
        text: event
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        bot_user_id,
    })
}

/// eve's reading of a message event's `channel_type`.
fn privacy(channel_type: &str) -> &'static str {
    match channel_type {
        "im" | "mpim" | "group" => "private",
        "channel" => "public",
        _ => "unknown",
    }
}

fn authorizations(envelope: &Map<String, Value>) -> Vec<&Map<String, Value>> {
    envelope
        .get("authorizations")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default()
}

fn bot_user(envelope: &Map<String, Value>) -> Option<String> {
    authorizations(envelope)
        .into_iter()
        .find(|a| a.get("is_bot") == Some(&Value::Bool(true)))
        .and_then(|a| text(a, "user_id"))
}

fn installation_team(envelope: &Map<String, Value>) -> Option<String> {
    let all = authorizations(envelope);
    all.iter()
        .find(|a| a.get("is_bot") == Some(&Value::Bool(true)) && text(a, "team_id").is_some())
        .or_else(|| all.iter().find(|a| text(a, "team_id").is_some()))
        .and_then(|a| text(a, "team_id"))
}

fn parse_interaction(body: &[u8]) -> Inbound {
    let payload = form_urlencoded::parse(body)
        .find(|(k, _)| k == "payload")
        .map(|(_, v)| v.into_owned());
    let Some(v) = payload.and_then(|p| serde_json::from_str::<Value>(&p).ok()) else {
        return Inbound::Ignored;
    };
    let Some(o) = v.as_object() else {
        return Inbound::Ignored;
    };
    match o.get("type").and_then(Value::as_str) {
        Some("block_actions") => match open_modal(o) {
            Some(m) => Inbound::OpenModal(m),
            None => answer(o).map_or(Inbound::Ignored, Inbound::Answer),
        },
        Some("view_submission") => submission(o).map_or(Inbound::Ignored, Inbound::Answer),
        _ => Inbound::Ignored,
    }
}

/// The team of an interaction (eve's `readInstallationTeamId`).
fn interaction_team(o: &Map<String, Value>) -> Option<String> {
    let obj = |k: &str| o.get(k).and_then(Value::as_object);
    obj("view")
        .and_then(|v| text(v, "app_installed_team_id"))
        .or_else(|| text(o, "app_installed_team_id"))
        .or_else(|| obj("team").and_then(|t| text(t, "id")))
        .or_else(|| obj("user").and_then(|u| text(u, "team_id")))
}

fn open_modal(o: &Map<String, Value>) -> Option<OpenModal> {
    let obj = |k: &str| o.get(k).and_then(Value::as_object);
    let actions = o.get("actions").and_then(Value::as_array)?;
    let request_id = actions
        .iter()
        .find_map(|a| hitl::decode_freeform(a.get("action_id")?.as_str()?))?;
    let message = obj("message")?;
    let message_ts = text(message, "ts")?;
    let blocks = message
        .get("blocks")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    Some(OpenModal {
        trigger_id: text(o, "trigger_id")?,
        team: interaction_team(o)?,
        channel: obj("channel").and_then(|c| text(c, "id"))?,
        thread_ts: text(message, "thread_ts").unwrap_or_else(|| message_ts.clone()),
        message_ts,
        request_id,
        prompt: hitl::prompt_of(&blocks),
    })
}

/// A submitted answer modal: the answer to the request its metadata names.
fn submission(o: &Map<String, Value>) -> Option<Answer> {
    let view = o.get("view").and_then(Value::as_object)?;
    if text(view, "callback_id").as_deref() != Some(hitl::MODAL_CALLBACK_ID) {
        return None;
    }
    let meta: Value = serde_json::from_str(&text(view, "private_metadata")?).ok()?;
    let meta = meta.as_object()?;
    let answer = view.get("state")?["values"][hitl::MODAL_BLOCK_ID][hitl::MODAL_ACTION_ID]["value"]
        .as_str()
        .filter(|v| !v.is_empty())?
        .to_string();
    let user = o.get("user").and_then(Value::as_object)?;
    Some(Answer {
        team: text(meta, "installationTeamId").or_else(|| interaction_team(o))?,
        user: text(user, "id")?,
        channel: text(meta, "channelId")?,
        thread_ts: text(meta, "threadTs")?,
        message_ts: text(meta, "messageTs")?,
        request_id: text(meta, "requestId")?,
        option_id: String::new(),
        text: Some(answer.clone()),
        label: answer,
        blocks: Vec::new(),
        approval: false,
    })
}

fn answer(o: &Map<String, Value>) -> Option<Answer> {
    let obj = |k: &str| o.get(k).and_then(Value::as_object);
    let channel = obj("channel").and_then(|c| text(c, "id"))?;
    let message = obj("message")?;
    let message_ts = text(message, "ts")?;
    let thread_ts = text(message, "thread_ts").unwrap_or_else(|| message_ts.clone());
    let user = obj("user")?;
    let team = interaction_team(o)?;
    let actions = o.get("actions").and_then(Value::as_array)?;
    let (request_id, option_id, label, approval) =
        actions.iter().filter_map(Value::as_object).find_map(|a| {
            let action_id = a.get("action_id")?.as_str()?;
            let id = hitl::decode_button(action_id)?;
            let value = text(a, "value")?;
            let label = a
                .get("text")
                .and_then(|t| t.get("text"))
                .and_then(Value::as_str)
                .unwrap_or(&value)
                .to_string();
            Some((id, value, label, hitl::is_approval_button(action_id)))
        })?;
    Some(Answer {
        team,
        user: text(user, "id")?,
        channel,
        thread_ts,
        message_ts,
        request_id,
        option_id,
        text: None,
        label,
        blocks: message
            .get("blocks")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        approval,
    })
}

/// The principal of a Slack user, as eve's `buildSlackAuthContext` names it:
/// `slack:<team>:<user>`, `slack:<team>:bot:<user>` for another bot.
pub fn principal(team: &str, user: &str, is_bot: bool) -> String {
    if is_bot {
        format!("slack:{team}:bot:{user}")
    } else {
        format!("slack:{team}:{user}")
    }
}

/// Whether the message names the app: an `app_mention`, or a text with `<@BOT…`.
pub fn is_mentioned(m: &Message) -> bool {
    m.kind == Kind::AppMention
        || m.bot_user_id
            .as_ref()
            .is_some_and(|b| m.text.contains(&format!("<@{b}")))
}

/// What the model reads for a message: eve's `<slack_message>` block (who wrote it, where, and
/// the text, `<@USER>` mentions kept as they are).
pub fn model_text(m: &Message) -> String {
    let mut lines = vec![
        "<slack_message>".to_string(),
        "sender_type: user".to_string(),
        format!("sender_id: {}", m.user),
    ];
    if let Some(bot) = &m.bot_user_id {
        lines.push(format!("bot_user_id: {bot}"));
    }
    lines.push(format!("is_mentioned: {}", is_mentioned(m)));
    lines.push(format!("channel_id: {}", m.channel));
    lines.push(format!("thread_ts: {}", m.thread_ts));
    lines.push(format!("message_ts: {}", m.ts));
    if let Some(team) = &m.event_team {
        lines.push(format!("team_id: {team}"));
    }
    lines.extend([
        "<content>".to_string(),
        m.text.clone(),
        "</content>".to_string(),
        "</slack_message>".to_string(),
    ]);
    lines.join("\n")
}
