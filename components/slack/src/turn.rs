//! The work after the 200: a message or an answer delivered to the thread's session, and the
//! session's events followed and rendered into the thread until the turn settles.

use std::time::Duration;

use eve_api::eve::Event;
use eve_slack::inbound::{self, Answer, Kind, Message, OpenModal};
use eve_slack::render::{self, Action, Renderer};
use eve_slack::store::{self, Thread};
use eve_slack::words::{self, Words};
use eve_slack::{hitl, web_api::Call};
use eve_spin::streaming::Read;
use serde_json::{json, Value};

use crate::agent::{Agent, Failure};
use crate::slack_api::Slack;
use crate::variable;

/// The words the channel writes (`slack_language`: `zh` for Simplified Chinese).
fn words() -> &'static Words {
    words::for_language(variable("slack_language").as_deref())
}

/// The longest silence on a followed stream (the agent sends keep-alives every few seconds).
const QUIET_LIMIT: Duration = Duration::from_secs(600);
const READ_POLL: Duration = Duration::from_secs(5);

/// A mention or DM: `Thinking...`, then the thread's session (a new one for a new thread, as
/// the message's author), the message sent, the turn rendered.
pub fn on_message(m: &Message) {
    let Some(slack) = Slack::from_env() else {
        return eprintln!("slack: slack_bot_token is not set; the message is not answered");
    };
    let mut r = Renderer::new(&m.channel, &m.thread_ts, words());
    let received = r.received();
    slack.run(received, &r);
    if m.kind == Kind::AppMention && m.channel_type.is_none() {
        // eve asks whether the conversation is private (for its run title and audience).
        slack.is_private(&m.channel);
    }
    let thread = Thread {
        team: m.team.clone(),
        channel: m.channel.clone(),
        thread_ts: m.thread_ts.clone(),
    };
    let author = inbound::principal(&m.team, &m.user, m.is_bot);
    r.requester = author.clone();
    let status = eve_spin::db::open()
        .ok()
        .and_then(|db| store::thread_status(&db, &thread).ok().flatten());
    r.resume(status);
    let text = inbound::model_text(m);
    match deliver(&thread, &author, &text) {
        Ok((agent, session, start, delivery)) => {
            follow(
                &agent,
                &slack,
                &mut r,
                (&thread, &session),
                start,
                delivery.as_deref(),
            );
            remember_status(&thread, &r);
        }
        Err(e) => refused(&slack, &r, e),
    }
}

/// Sends the message to the author's session in the thread, or starts one: the agent (as the
/// author), the session, where its new events start, the delivery to follow. Whoever started
/// the thread, the author's turn runs as the author.
fn deliver(
    thread: &Thread,
    author: &str,
    text: &str,
) -> Result<(Agent, String, i64, Option<String>), Failure> {
    let db = eve_spin::db::open().map_err(|e| Failure::Unreachable(e.message))?;
    let known =
        store::thread_session(&db, thread, author).map_err(|e| Failure::Unreachable(e.message))?;
    let agent = Agent::as_principal(author)?;
    if let Some(session) = known {
        let sent = agent.tail(&session).and_then(|tail| {
            let d = agent.send(&session, &json!({ "message": text }))?;
            Ok((tail + 1, d))
        });
        match sent {
            Ok((start, d)) => return Ok((agent, session, start, d)),
            Err(Failure::Gone) => {
                let _ = store::forget_thread(&db, thread, author, &session);
            }
            Err(e) => return Err(e),
        }
    }
    let session = agent.create(text)?;
    let now = eve_spin::db::now_ms();
    if let Err(e) = store::record_thread(&db, thread, author, &session, now) {
        eprintln!("slack: recording the thread's session: {}", e.message);
    }
    Ok((agent, session, 0, None))
}

/// A click on a question's or an approval's button: the answer sent to the clicker's own
/// session in the thread, the card updated to show it, the rest of the turn rendered. Only
/// the person whose turn asks may answer (as eve says for approvals): a click answers as the
/// clicker, never as someone else, and anyone else's click is told so.
pub fn on_answer(a: &Answer) {
    let Some(slack) = Slack::from_env() else {
        return eprintln!("slack: slack_bot_token is not set; the answer is not delivered");
    };
    let thread = Thread {
        team: a.team.clone(),
        channel: a.channel.clone(),
        thread_ts: a.thread_ts.clone(),
    };
    let clicker = inbound::principal(&a.team, &a.user, false);
    let mut r = Renderer::new(&a.channel, &a.thread_ts, words());
    r.requester = clicker.clone();
    let db = eve_spin::db::open().ok();
    r.resume(
        db.as_ref()
            .and_then(|db| store::thread_status(db, &thread).ok().flatten()),
    );
    let Some(session) = answerable(db.as_ref(), a, &thread, &clicker) else {
        return refuse_answer(&slack, &thread, &mut r);
    };
    let response = match &a.text {
        Some(text) => json!({"requestId": a.request_id, "text": text}),
        None => json!({"requestId": a.request_id, "optionId": a.option_id}),
    };
    let body = json!({ "inputResponses": [response] });
    let sent = Agent::as_principal(&clicker).and_then(|agent| {
        let tail = agent.tail(&session)?;
        agent.send(&session, &body)?;
        Ok((agent, tail + 1))
    });
    match sent {
        Ok((agent, start)) => {
            if a.approval {
                // eve retires an approval's card when the agent settles it (`approval.settled`,
                // rendered as it arrives below), naming who clicked.
                r.responder = Some(a.user.clone());
            } else {
                update_answered(&slack, a, &r);
            }
            // An answer's events carry the turn's first delivery, not the answer's own.
            follow(&agent, &slack, &mut r, (&thread, &session), start, None);
            remember_status(&thread, &r);
        }
        // The clicker's session asks no such thing: someone else's question.
        Err(Failure::Refused(409, _)) => refuse_answer(&slack, &thread, &mut r),
        // eve leaves the buttons active when an answer is not taken.
        Err(e) => eprintln!("slack: the answer was not delivered: {e}"),
    }
}

/// The clicker's session in the thread, when the click may answer there: an approval's card
/// must name the clicker as the one who asked — with no card on record (its row is written
/// after Slack took the post) nobody may answer it (fail closed).
fn answerable(
    db: Option<&eve_spin::db::Db>,
    a: &Answer,
    thread: &Thread,
    clicker: &str,
) -> Option<String> {
    let db = db?;
    if a.approval {
        let card = store::card_requester(db, &a.channel, &a.thread_ts, &a.request_id).ok()?;
        if card.as_deref() != Some(clicker) {
            return None;
        }
    }
    store::thread_session(db, thread, clicker).ok().flatten()
}

/// "Only the person who requested this action can respond to this approval." in the thread,
/// in eve's words; the card stays.
fn refuse_answer(slack: &Slack, thread: &Thread, r: &mut Renderer) {
    let refusal = r.refused_answer();
    slack.run(refusal, r);
    remember_status(thread, r);
}

/// A question's message once answered: the answer and who gave it, no buttons.
fn update_answered(slack: &Slack, a: &Answer, r: &Renderer) {
    let blocks = match &a.text {
        Some(text) => hitl::answered_freeform_blocks(text, &a.user, r.words),
        None => hitl::answered_blocks(&a.blocks, &a.request_id, &a.label, &a.user, r.words),
    };
    let update = Call::new(
        "chat.update",
        vec![
            ("channel", json!(a.channel)),
            ("ts", json!(a.message_ts)),
            ("blocks", Value::Array(blocks)),
            ("text", json!(format!("{}{}", r.words.answered, a.label))),
        ],
    );
    if let Err(e) = slack.call(&update) {
        eprintln!("slack: updating the answered card: {e}");
    }
}

/// Keeps the thread's status text for the invocation that resumes the turn (eve's persisted
/// `threadStatus`).
fn remember_status(thread: &Thread, r: &Renderer) {
    let saved =
        eve_spin::db::open().and_then(|db| store::set_thread_status(&db, thread, r.status()));
    if let Err(e) = saved {
        eprintln!("slack: remembering the thread's status: {}", e.message);
    }
}

/// "Type your answer" on a free-form question: eve's answer modal (`views.open`).
pub fn open_modal(m: &OpenModal) {
    let Some(slack) = Slack::from_env() else {
        return eprintln!("slack: slack_bot_token is not set; no modal");
    };
    let view = hitl::freeform_modal(m.prompt.as_deref(), &m.metadata(), words());
    let call = Call::new(
        "views.open",
        vec![("trigger_id", json!(m.trigger_id)), ("view", view)],
    );
    if let Err(e) = slack.call(&call) {
        eprintln!("slack: views.open failed: {e}");
    }
}

/// A message the agent would not take: said in the thread (eve's words for a failed turn).
fn refused(slack: &Slack, r: &Renderer, e: Failure) {
    eprintln!("slack: the message was not delivered: {e}");
    let why = match e {
        Failure::Refused(_, why) => why,
        _ => String::new(),
    };
    let text = render::failure_text(r.words, false, &why, &None);
    slack.run(vec![r.post_markdown(&text)], r);
}

/// Follows the thread's session from `start`, rendering the events of `delivery` (every
/// event when `None`), until one of them settles the turn.
fn follow(
    agent: &Agent,
    slack: &Slack,
    r: &mut Renderer,
    (thread, session): (&Thread, &str),
    start: i64,
    delivery: Option<&str>,
) {
    let mut stream = match agent.follow(session, start) {
        Ok(s) => s,
        Err(e) => return eprintln!("slack: following session {session}: {e}"),
    };
    let (mut buf, mut quiet) = (Vec::<u8>::new(), Duration::ZERO);
    loop {
        match stream.read(READ_POLL) {
            Ok(Read::Data(bytes)) => {
                quiet = Duration::ZERO;
                buf.extend_from_slice(&bytes);
                while let Some(i) = buf.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = buf.drain(..=i).collect();
                    if render_line(&line, r, (slack, thread), delivery) {
                        return;
                    }
                }
            }
            Ok(Read::Idle) => {
                quiet += READ_POLL;
                if quiet >= QUIET_LIMIT {
                    return eprintln!("slack: session {session} went quiet; stopped following");
                }
            }
            Ok(Read::End) => return,
            Err(e) => return eprintln!("slack: the stream of {session} broke: {e}"),
        }
    }
}

/// Renders one NDJSON line; `true` once the followed turn has settled.
fn render_line(
    line: &[u8],
    r: &mut Renderer,
    (slack, thread): (&Slack, &Thread),
    delivery: Option<&str>,
) -> bool {
    let Ok(v) = serde_json::from_slice::<Value>(line) else {
        return false;
    };
    let ours = delivery.is_none_or(|d| {
        v["meta"]["deliveryIds"]
            .as_array()
            .is_some_and(|ids| ids.iter().any(|i| i == d))
    });
    let event = serde_json::from_value::<Event>(json!({"type": v["type"], "data": v["data"]}));
    let (true, Ok(event)) = (ours, event) else {
        return false;
    };
    let actions = r.on_event(&event);
    // A click on a card can arrive before this invocation ends: the status it resumes with is
    // kept before the card is posted, not only once the turn waits.
    if actions.iter().any(|a| matches!(a, Action::Ask { .. })) {
        remember_status(thread, r);
    }
    slack.run(actions, r);
    event.is_settling()
}
