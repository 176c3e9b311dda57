//! A thread's turn as Slack sees it, rendered from the session's events exactly as eve's
//! default Slack renderer does (`defaults.js`, `thread-status.js`, `reply-delivery.js`):
//!
//! - the thread status (`assistant.threads.setStatus`) is `Thinking...` when a message
//!   arrives and again when the turn starts; the tool calls' labels while they run;
//!   `Writing a reply...` once a reply passes 280 characters; cleared (an empty status) when
//!   the turn completes or waits on a person;
//! - the final reply is posted in the thread (`chat.postMessage` with `markdown_text`, links
//!   not unfurled); one longer than 12,000 characters, or one Slack refuses as too large, is
//!   uploaded as the snippet `eve-response.md` with a short note ([`Action::Reply`],
//!   [`Delivery`]);
//! - a question is posted as buttons ([`crate::hitl`]);
//! - a failed turn or session says so in the thread, in eve's words.
//!
//! Time plays no part here (eve keeps a status at least three seconds): what is sent depends
//! on the events alone, so a test can compare it.

use eve_api::eve::Event;
use serde_json::{json, Value};

use crate::hitl;
use crate::web_api::Call;
use crate::words::Words;

/// The longest reply posted inline (eve's `SLACK_MARKDOWN_TEXT_MAX_LENGTH`).
pub const MARKDOWN_MAX: usize = 12_000;
/// A thread status is cut to this many characters (eve's `SLACK_TYPING_STATUS_MAX_LENGTH`).
pub const STATUS_MAX: usize = 50;
/// The reply length after which the status says `Writing a reply...`.
const WRITING_AFTER: usize = 280;
/// The snippet's name.
pub const SNIPPET_NAME: &str = "eve-response.md";

/// One thing to do in Slack.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Call(Call),
    /// The turn's final reply, delivered with eve's fallbacks ([`Delivery`]).
    Reply {
        markdown: String,
    },
    /// A message asking for input ([`hitl::Post`]): posted; its approval cards are kept open
    /// (`store::Card`) until settled.
    Ask {
        call: Call,
        post: hitl::Post,
    },
    /// Approval request `request_id` was settled: its open card, if any, shows `label` (and
    /// who answered, when known) and loses its buttons; its tool input's message, when no other
    /// open card refers to it, is deleted (eve's `settleApprovalCard`).
    Settle {
        request_id: String,
        label: String,
        user: Option<String>,
    },
}

/// How a final reply goes out (eve's `deliverCompletedSlackReply`): posted inline when it fits
/// ([`Renderer::post_markdown`]); uploaded as the `eve-response.md` snippet
/// (`files.getUploadURLExternal`, the upload, `files.completeUploadExternal`) when it is longer
/// or Slack refuses the post as too large or malformed ([`is_refused_payload`]); and when
/// neither arrives, a notice without its content ([`undelivered_notice`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    Inline,
    Snippet,
}

/// The first way to try for a reply of `markdown`.
pub fn first_delivery(markdown: &str) -> Delivery {
    if markdown.chars().count() <= MARKDOWN_MAX {
        Delivery::Inline
    } else {
        Delivery::Snippet
    }
}

/// Whether Slack refused a post for its size or shape (then eve uploads it as a snippet).
pub fn is_refused_payload(error: &str) -> bool {
    matches!(
        error,
        "invalid_blocks"
            | "invalid_blocks_format"
            | "msg_blocks_too_long"
            | "msg_blocks_too_many"
            | "msg_too_long"
    )
}

/// eve's notice for a reply that could not be delivered (no reply content in it).
pub fn undelivered_notice(words: &Words, error_id: &str) -> String {
    format!("{}{error_id}{}", words.undelivered.0, words.undelivered.1)
}

/// The thread a turn renders into, and what it has shown so far.
#[derive(Debug, Clone)]
pub struct Renderer {
    pub channel: String,
    pub thread_ts: String,
    pub words: &'static Words,
    status: Option<String>,
    pending_tool_message: Option<String>,
    /// `(turn id, step index, reply characters so far)`.
    reply: (String, u64, usize),
    /// `(turn id, step index, calls so far, label)` of the step's tool calls.
    calls: Option<(String, u64, usize, String)>,
    /// The Slack user whose click is being answered (named on the approval card it settles).
    pub responder: Option<String>,
    /// The principal whose message started the turn (the only one who may answer its
    /// approvals).
    pub requester: String,
}

impl Renderer {
    pub fn new(channel: &str, thread_ts: &str, words: &'static Words) -> Self {
        Renderer {
            channel: channel.into(),
            thread_ts: thread_ts.into(),
            words,
            status: None,
            pending_tool_message: None,
            reply: (String::new(), 0, 0),
            calls: None,
            responder: None,
            requester: String::new(),
        }
    }

    /// The status text as last shown (eve keeps it with the thread: [`Renderer::resume`]).
    pub fn status(&self) -> Option<&str> {
        self.status.as_deref()
    }

    /// Carries on in a thread whose status was last `status` (a turn resumed by a click).
    pub fn resume(&mut self, status: Option<String>) {
        self.status = status;
    }

    /// A message arrived (eve's `received`: `Thinking...` at once, without it becoming the
    /// thread's status: a turn the message resumes shows its own again when its next step
    /// starts).
    pub fn received(&mut self) -> Vec<Action> {
        vec![self.set_status(self.words.thinking)]
    }

    /// What `event` changes in the thread.
    pub fn on_event(&mut self, event: &Event) -> Vec<Action> {
        match event {
            Event::TurnStarted(_) => {
                self.pending_tool_message = None;
                self.calls = None;
                self.show(self.words.thinking, true)
            }
            Event::StepStarted(s) if s.at.step_index > 0 => {
                let text = self
                    .status
                    .clone()
                    .unwrap_or_else(|| self.words.thinking.into());
                self.show(&text, true)
            }
            Event::ReasoningCompleted(c) => match reasoning_status(&c.reasoning) {
                Some(text) => self.show(&text, false),
                None => vec![],
            },
            Event::MessageAppended(m) => {
                self.appended(&m.at.turn_id, m.at.step_index, &m.message_delta)
            }
            Event::ActionsRequested(a) => self.actions(a),
            Event::ActionResult(r) => match label_of(&r.presentation, &r.result.call_id) {
                Some(label) => self.show(&label, false),
                None => vec![],
            },
            Event::MessageCompleted(m) => self.completed(&m.finish_reason, &m.message),
            Event::InputRequested(r) => self.questions(&r.requests),
            Event::ApprovalSettled(s) => vec![Action::Settle {
                request_id: s.request_id.clone(),
                label: self.approval_label(&s.outcome, true).into(),
                user: self.responder.clone(),
            }],
            Event::InputResolved(r) => r
                .resolutions
                .iter()
                .filter(|x| x.kind == "tool-approval")
                .map(|x| Action::Settle {
                    request_id: x.request_id.clone(),
                    label: self.approval_label(&x.outcome, false).into(),
                    user: None,
                })
                .collect(),
            Event::TurnWaiting(w) if w.on == "input" => self.hide(),
            Event::TurnCompleted(_) => self.clear(),
            Event::TurnFailed(f) if f.terminal != Some(true) => {
                vec![self.post_markdown(&failure_text(self.words, false, &f.message, &f.details))]
            }
            Event::SessionFailed(f) => {
                vec![self.post_markdown(&failure_text(self.words, true, &f.message, &f.details))]
            }
            _ => vec![],
        }
    }

    fn appended(&mut self, turn: &str, step: u64, delta: &str) -> Vec<Action> {
        if self.reply.0 != turn || self.reply.1 != step {
            self.reply = (turn.to_string(), step, 0);
        }
        let before = self.reply.2;
        self.reply.2 += delta.chars().count();
        if before < WRITING_AFTER && self.reply.2 >= WRITING_AFTER {
            return self.show(self.words.writing, false);
        }
        vec![]
    }

    fn actions(&mut self, a: &eve_api::eve::ActionsRequested) -> Vec<Action> {
        let narration = self.pending_tool_message.take();
        let visible: Vec<_> = a.actions.iter().filter(|x| !is_task_control(x)).collect();
        if narration.is_none() && visible.is_empty() {
            return vec![];
        }
        let (turn, step) = (a.at.turn_id.clone(), a.at.step_index);
        let same_step = matches!(&self.calls, Some((t, s, _, _)) if *t == turn && *s == step);
        let text = match (narration, same_step) {
            (Some(n), _) => {
                self.calls = Some((turn, step, visible.len(), n.clone()));
                n
            }
            (None, true) => {
                let (_, _, count, label) = self.calls.as_mut().expect("same step");
                *count += visible.len();
                more(label, *count)
            }
            (None, false) => {
                let first = visible[0];
                let label = label_of(&a.presentation, &first.call_id)
                    .unwrap_or_else(|| display_title(action_name(first)));
                self.calls = Some((turn, step, visible.len(), label.clone()));
                more(&label, visible.len())
            }
        };
        self.show(&text, false)
    }

    fn completed(&mut self, finish_reason: &str, message: &str) -> Vec<Action> {
        if finish_reason == "tool-calls" {
            self.pending_tool_message = first_line(message);
            return vec![];
        }
        self.pending_tool_message = None;
        if message.is_empty() {
            return self.clear();
        }
        self.status = None;
        vec![Action::Reply {
            markdown: message.to_string(),
        }]
    }

    fn questions(&mut self, requests: &[eve_api::eve::InputRequest]) -> Vec<Action> {
        hitl::request_posts(requests, self.words)
            .into_iter()
            .map(|post| Action::Ask {
                call: Call::new(
                    "chat.postMessage",
                    vec![
                        ("blocks", Value::Array(post.blocks.clone())),
                        ("channel", json!(self.channel)),
                        ("text", json!(post.text)),
                        ("thread_ts", json!(self.thread_ts)),
                        ("unfurl_links", json!(false)),
                        ("unfurl_media", json!(false)),
                    ],
                ),
                post,
            })
            .collect()
    }

    /// The label a settled approval's card shows, as eve's: on `approval.settled`, Approve or
    /// else Cancel; on `input.resolved`, `approved` → Approve, `denied` → Cancel, anything else
    /// (ignored, cancelled with the turn) no longer needed.
    fn approval_label(&self, outcome: &str, settled: bool) -> &'static str {
        match outcome {
            "approved" => self.words.approve,
            "denied" => self.words.cancel,
            _ if settled => self.words.cancel,
            _ => self.words.no_longer_needed,
        }
    }

    /// An approval answered by someone other than the person who asked: eve's coordinator
    /// refuses it with a notice (a completed message) and the turn waits on (status cleared).
    pub fn refused_answer(&mut self) -> Vec<Action> {
        self.status = None;
        vec![
            Action::Reply {
                markdown: self.words.only_requester.into(),
            },
            self.set_status(""),
        ]
    }

    /// A reply or notice in the thread, as eve's `thread.post(markdown)`.
    pub fn post_markdown(&self, markdown: &str) -> Action {
        Action::Call(self.markdown_call(markdown))
    }

    /// The `chat.postMessage` of [`Renderer::post_markdown`].
    pub fn markdown_call(&self, markdown: &str) -> Call {
        Call::new(
            "chat.postMessage",
            vec![
                ("channel", json!(self.channel)),
                ("markdown_text", json!(markdown)),
                ("thread_ts", json!(self.thread_ts)),
                ("unfurl_links", json!(false)),
                ("unfurl_media", json!(false)),
            ],
        )
    }

    /// eve's `showStatus`: the same text again is not sent unless `force`d.
    fn show(&mut self, text: &str, force: bool) -> Vec<Action> {
        let text = truncate_status(text);
        if !force && self.status.as_deref() == Some(text.as_str()) {
            return vec![];
        }
        self.status = Some(text.clone());
        vec![self.set_status(&text)]
    }

    /// eve's `hideStatus`: cleared in Slack, remembered for when the turn resumes.
    fn hide(&mut self) -> Vec<Action> {
        vec![self.set_status("")]
    }

    /// eve's `clearStatus`.
    fn clear(&mut self) -> Vec<Action> {
        self.status = None;
        vec![self.set_status("")]
    }

    fn set_status(&self, text: &str) -> Action {
        let mut fields = vec![
            ("channel_id", json!(self.channel)),
            ("thread_ts", json!(self.thread_ts)),
            ("status", json!(text)),
        ];
        if !text.is_empty() {
            fields.push(("loading_messages", json!([text])));
        }
        Action::Call(Call::new("assistant.threads.setStatus", fields))
    }
}

/// eve's notice of a failure (`formatErrorHint`, the error id when there is one).
pub fn failure_text(
    words: &Words,
    session: bool,
    message: &str,
    details: &Option<Value>,
) -> String {
    let (opening, next) = if session {
        words.session_failed
    } else {
        words.turn_failed
    };
    let name = details
        .as_ref()
        .and_then(|d| d["name"].as_str())
        .filter(|n| !n.is_empty());
    let message = message.trim();
    let shown = if message.chars().count() <= 160 {
        message.to_string()
    } else {
        let cut: String = message.chars().take(159).collect();
        format!("{}…", cut.trim_end())
    };
    let hint = match (name, shown.is_empty()) {
        (Some(n), false) => format!(" ({n}: {shown})"),
        (Some(n), true) => format!(" ({n})"),
        (None, false) => format!(" ({shown})"),
        (None, true) => String::new(),
    };
    let mut text = format!("{opening}{hint}{}\n\n{next}", words.full_stop);
    if let Some(id) = details
        .as_ref()
        .and_then(|d| d["errorId"].as_str())
        .filter(|i| !i.is_empty())
    {
        text.push_str(&format!("\n\n_Error id: `{id}`_"));
    }
    text
}

fn is_task_control(a: &eve_api::eve::ActionRequest) -> bool {
    a.kind == "tool-call" && matches!(a.tool_name.as_str(), "eve__task_wait" | "eve__task_cancel")
}

fn action_name(a: &eve_api::eve::ActionRequest) -> &str {
    match (a.kind.as_str(), &a.name) {
        ("load-skill", Some(n)) => n,
        _ => &a.tool_name,
    }
}

fn label_of(presentation: &Option<Value>, call_id: &str) -> Option<String> {
    presentation.as_ref()?[call_id]["label"]
        .as_str()
        .map(str::to_string)
}

fn more(label: &str, count: usize) -> String {
    if count <= 1 {
        label.to_string()
    } else {
        format!("{label} +{} more", count - 1)
    }
}

fn first_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// eve's `reasoningStatus` of a finished reasoning: its last `**heading**`, else its last
/// sentence of at least 12 characters that is prose (not a code fence).
pub fn reasoning_status(reasoning: &str) -> Option<String> {
    let heading = reasoning.lines().rev().find_map(|l| {
        let t = l.trim_start_matches([' ', '\t']).strip_prefix("**")?;
        let end = t.find("**")?;
        let h = t[..end].trim();
        (!h.is_empty() && !t[..end].contains('*')).then(|| h.to_string())
    });
    if heading.is_some() {
        return heading;
    }
    let sentences: Vec<String> = reasoning.lines().flat_map(sentences).collect();
    sentences
        .into_iter()
        .rev()
        .map(|s| strip_list_marker(s.trim()).to_string())
        .find(|s| {
            s.chars().count() >= 12 && !s.starts_with("```") && s.chars().any(char::is_alphabetic)
        })
}

/// A line cut into sentences where eve cuts: after `.`, `!` or `?` (not a one- or two-digit
/// list number) and whitespace, before a capital, a quote, a backtick or `(`.
fn sentences(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let (mut out, mut start, mut i) = (Vec::new(), 0, 0);
    while i < chars.len() {
        if chars[i].is_whitespace() && i > 0 && matches!(chars[i - 1], '.' | '!' | '?') {
            let mut j = i;
            while j < chars.len() && chars[j].is_whitespace() {
                j += 1;
            }
            let next_ok = chars
                .get(j)
                .is_some_and(|c| c.is_uppercase() || "\"'`(".contains(*c));
            let word: String = chars[start..i - 1]
                .iter()
                .rev()
                .take_while(|c| !c.is_whitespace())
                .collect();
            let numbered = chars[i - 1] == '.'
                && (1..=2).contains(&word.len())
                && word.chars().all(|c| c.is_ascii_digit());
            if next_ok && !numbered {
                out.push(chars[start..i].iter().collect());
                start = j;
                i = j;
                continue;
            }
        }
        i += 1;
    }
    out.push(chars[start..].iter().collect());
    out
}

fn strip_list_marker(s: &str) -> &str {
    for m in ["- ", "* ", "+ "] {
        if let Some(rest) = s.strip_prefix(m) {
            return rest.trim_start();
        }
    }
    let digits = s.chars().take_while(char::is_ascii_digit).count();
    if (1..=2).contains(&digits) {
        let rest = &s[digits..];
        if let Some(r) = rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") ")) {
            return r.trim_start();
        }
    }
    s
}

/// eve's `displayTitle`: the name after the last `__`, camelCase and `_`/`-` split into words,
/// lower-cased but for acronyms, the first letter capitalised.
pub fn display_title(name: &str) -> String {
    let last = name
        .split("__")
        .filter(|s| !s.is_empty())
        .last()
        .unwrap_or(name);
    let mut spaced = String::new();
    let chars: Vec<char> = last.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1);
        let lower_to_upper =
            prev.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit()) && c.is_uppercase();
        let acronym_end = prev.is_some_and(char::is_uppercase)
            && c.is_uppercase()
            && next.is_some_and(|n| n.is_lowercase());
        if lower_to_upper || acronym_end {
            spaced.push(' ');
        }
        spaced.push(*c);
    }
    let words: Vec<String> = spaced
        .split(|c: char| c.is_whitespace() || c == '_' || c == '-')
        .filter(|w| !w.is_empty())
        .map(|w| {
            if w.chars().count() > 1 && w == w.to_uppercase() {
                w.to_string()
            } else {
                w.to_lowercase()
            }
        })
        .collect();
    if words.is_empty() {
        return name.to_string();
    }
    let joined = words.join(" ");
    let mut cs = joined.chars();
    match cs.next() {
        Some(f) => f.to_uppercase().chain(cs).collect(),
        None => joined,
    }
}

/// eve's `truncateTypingStatus` (without its Markdown stripping): whitespace collapsed, at
/// most 50 characters, cut at a word boundary with `...`.
pub fn truncate_status(text: &str) -> String {
    let t = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.chars().count() <= STATUS_MAX {
        return t;
    }
    let head: String = t.chars().take(47).collect();
    let cut = match head.rfind(' ') {
        Some(i) if head[..i].chars().count() > 25 => &head[..i],
        _ => &head,
    };
    format!("{}...", cut.trim_end())
}
