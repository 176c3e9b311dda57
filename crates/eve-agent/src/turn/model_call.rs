//! One model call of a step: the request (the history fitted to the context window, the
//! files read, the system prompt), its stream turned into eve's delta events as they arrive
//! (with the cancel checkpoint while it streams), tried again after a transient failure as eve
//! tries it, and the completed blocks written after it.

use eve_api::eve::*;

use crate::providers::model::{self, Flow, Model, ModelError, ModelEvent, ModelRequest};
use crate::providers::retry::{self, Next};
use crate::session::transcript;
use crate::tools::skills;
use crate::tools::spec::{ToolCall, ToolSpec};
use crate::turn::events::finish_reason;
use crate::turn::host::{Fenced, TurnContext, TurnLog};
use crate::turn::prompt::system_prompt;

/// What one model call produced.
#[derive(Default)]
pub(crate) struct StepOutput {
    pub text: String,
    pub reasoning: String,
    pub reasoning_done: bool,
    pub calls: Vec<ToolCall>,
    pub names: Vec<(String, String)>,
    pub usage: Option<StepUsage>,
    /// The provider's finish reason.
    pub finish: Option<String>,
}

/// One model call: streams its deltas, then writes its completed blocks. A transient failure
/// before anything was streamed is tried again as eve tries it ([`retry::next`]): after a
/// pause that a stop cuts short, with nothing written for it (eve writes nothing either; the
/// retry is in the operator's log). The outer `Result` is a fence; the inner one the model's
/// error.
pub(crate) fn model_step(
    w: &mut TurnLog,
    ctx: &TurnContext,
    model: &mut dyn Model,
    at: &StepRef,
    specs: &[ToolSpec],
) -> Result<Result<StepOutput, ModelError>, Fenced> {
    let request = request(w, ctx, at, specs)?;
    let mut attempt = 1;
    loop {
        let written = w.events.len();
        let (out, result) = attempt_call(w, model, at, &request)?;
        let error = match result {
            Ok(()) => {
                let mut out = out;
                w.emit_all(closing_events(&mut out, at))?;
                return Ok(Ok(out));
            }
            Err(e) => e,
        };
        let streamed = w.events.len() > written;
        let jitter = u64::from(u16::from_le_bytes(eve_auth::crypto::random_bytes::<2>()));
        let now = w.host.now_ms();
        match retry::next(error.clone(), attempt, streamed, jitter, now) {
            Next::Fail(e) => return Ok(Err(e)),
            Next::RetryAfter(ms) => {
                if let ModelError::Provider { code, message, .. } = &error {
                    eprintln!(
                        "agent: model call failed in session {} ({code}), trying again in {ms} ms \
                         (attempt {} of {}): {message}",
                        ctx.session_id,
                        attempt + 1,
                        retry::MAX_ATTEMPTS
                    );
                }
                // Checkpoint 2 still holds while the call waits to be tried again.
                if !w.host.pause(ms) {
                    return Ok(Err(ModelError::Interrupted));
                }
                attempt += 1;
            }
        }
    }
}

/// One try of the call: its stream turned into delta events as they arrive.
fn attempt_call(
    w: &mut TurnLog,
    model: &mut dyn Model,
    at: &StepRef,
    request: &ModelRequest,
) -> Result<(StepOutput, Result<(), ModelError>), Fenced> {
    let mut out = StepOutput::default();
    let mut fenced = false;
    let result = model.stream(request, &mut |ev| {
        // Checkpoint 2: while the model streams.
        if w.host.stop_requested() {
            return Flow::Stop;
        }
        for e in on_model_event(&mut out, at, ev) {
            if w.emit(e).is_err() {
                fenced = true;
                return Flow::Stop;
            }
        }
        Flow::Continue
    });
    if fenced {
        return Err(Fenced);
    }
    Ok((out, result))
}

/// The request of step `at`: the history fitted to the context window with its files read.
/// When the fit drops exchanges, the compaction is said once per turn, as eve's own.
fn request(
    w: &mut TurnLog,
    ctx: &TurnContext,
    at: &StepRef,
    specs: &[ToolSpec],
) -> Result<ModelRequest, Fenced> {
    let memory = w.host.memory().unwrap_or_default();
    let (mut messages, trimmed) =
        transcript::fit_context(transcript::messages(&w.events), ctx.context_chars);
    model::resolve_files(&mut messages, &mut |id| w.host.attachment(id));
    if trimmed && !transcript::compacted_in_turn(&w.events) {
        // Said once per turn, as eve's own compaction: the model no longer sees the
        // oldest exchanges.
        let c = Compaction {
            model_id: ctx.model_id.clone(),
            sequence: at.sequence,
            session_id: ctx.session_id.clone(),
            step_index: at.step_index,
            turn_id: at.turn_id.clone(),
            usage_input_tokens: None,
        };
        w.emit(Event::CompactionRequested(c.clone()))?;
        w.emit(Event::CompactionCompleted(c))?;
    }
    let base = w.host.base_instructions();
    let mut system = system_prompt(base.as_deref(), &memory, ctx.client_context.as_deref());
    if let Some(instructions) = w.host.project_instructions() {
        system.push_str(&project_instructions(&instructions));
    }
    if let Some(section) = skills::prompt_section(&w.host.skills()) {
        system.push_str("\n\n");
        system.push_str(&section);
    }
    Ok(ModelRequest {
        system,
        messages,
        tools: specs.to_vec(),
    })
}

/// The system prompt's part for a chat in a project: the owner's instructions, and where its
/// files are.
pub(crate) fn project_instructions(instructions: &str) -> String {
    let mut s = String::from(
        "\n\nThis chat is in a project. Its files are at /workspace/<name>: list them with glob, \
         read them with read_file, search them with grep; write your results with write_file \
         (files the user uploaded or marked final cannot be overwritten).",
    );
    if !instructions.trim().is_empty() {
        s.push_str("\n\nProject instructions (from the project's owner):\n");
        s.push_str(instructions.trim());
    }
    s
}

/// What one event of the model's stream adds to `out`, and the delta events it writes.
pub(crate) fn on_model_event(out: &mut StepOutput, at: &StepRef, ev: ModelEvent) -> Vec<Event> {
    let mut events = Vec::new();
    match ev {
        ModelEvent::ReasoningDelta(delta) => {
            out.reasoning.push_str(&delta);
            events.push(Event::ReasoningAppended(ReasoningAppended {
                reasoning_delta: delta,
                at: at.clone(),
            }));
        }
        ModelEvent::TextDelta(delta) => {
            if !out.reasoning.is_empty() && !out.reasoning_done {
                out.reasoning_done = true;
                events.push(Event::ReasoningCompleted(ReasoningCompleted {
                    reasoning: out.reasoning.clone(),
                    at: at.clone(),
                }));
            }
            out.text.push_str(&delta);
            events.push(Event::MessageAppended(MessageAppended {
                message_delta: delta,
                at: at.clone(),
            }));
        }
        ModelEvent::ToolCallStarted { id, name } => out.names.push((id, name)),
        ModelEvent::ToolInputDelta { id, delta } => {
            let name = out
                .names
                .iter()
                .find(|(i, _)| *i == id)
                .map(|(_, n)| n.clone())
                .unwrap_or_default();
            // eve streams no input of a skill load: its action appears whole.
            if name == SKILL_TOOL {
                return events;
            }
            events.push(Event::ActionInputAppended(ActionInputAppended {
                call_id: id,
                input_text_delta: delta,
                tool_name: name,
                at: at.clone(),
            }));
        }
        ModelEvent::ToolCallReady(call) => out.calls.push(call),
        ModelEvent::Usage {
            input_tokens,
            output_tokens,
        } => {
            out.usage = Some(StepUsage {
                input_tokens,
                output_tokens,
                cache_read_tokens: 0,
            })
        }
        ModelEvent::Finished { reason } => out.finish = Some(reason),
        ModelEvent::Waiting => {}
    }
    events
}

/// The completed blocks of a finished call: `reasoning.completed` if no text closed the
/// reasoning yet, then `message.completed` with the authoritative text.
pub(crate) fn closing_events(out: &mut StepOutput, at: &StepRef) -> Vec<Event> {
    let mut events = Vec::new();
    if !out.reasoning.is_empty() && !out.reasoning_done {
        out.reasoning_done = true;
        events.push(Event::ReasoningCompleted(ReasoningCompleted {
            reasoning: out.reasoning.clone(),
            at: at.clone(),
        }));
    }
    if !out.text.is_empty() {
        events.push(Event::MessageCompleted(MessageCompleted {
            finish_reason: finish_reason(!out.calls.is_empty(), out.finish.as_deref()),
            message: out.text.clone(),
            at: at.clone(),
        }));
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> StepRef {
        TurnRef::new(0).step(0)
    }

    #[test]
    fn text_after_reasoning_closes_the_reasoning_first() {
        let mut out = StepOutput::default();
        let first = on_model_event(&mut out, &at(), ModelEvent::ReasoningDelta("hm".into()));
        assert_eq!(first.len(), 1);
        let then = on_model_event(&mut out, &at(), ModelEvent::TextDelta("Hi".into()));
        let names: Vec<_> = then.iter().map(Event::type_name).collect();
        assert_eq!(names, ["reasoning.completed", "message.appended"]);
        assert!(out.reasoning_done);
    }

    #[test]
    fn a_tool_calls_input_deltas_carry_the_name_it_started_with() {
        let mut out = StepOutput::default();
        let started = ModelEvent::ToolCallStarted {
            id: "c1".into(),
            name: "get_weather".into(),
        };
        assert!(on_model_event(&mut out, &at(), started).is_empty());
        let delta = ModelEvent::ToolInputDelta {
            id: "c1".into(),
            delta: "{".into(),
        };
        let events = on_model_event(&mut out, &at(), delta);
        let Some(Event::ActionInputAppended(a)) = events.first() else {
            panic!("{events:?}")
        };
        assert_eq!(a.tool_name, "get_weather");
    }

    #[test]
    fn a_finished_call_closes_its_reasoning_and_its_text_with_the_finish_reason() {
        let mut out = StepOutput {
            text: "Hi".into(),
            reasoning: "hm".into(),
            finish: Some("length".into()),
            ..StepOutput::default()
        };
        let events = closing_events(&mut out, &at());
        let names: Vec<_> = events.iter().map(Event::type_name).collect();
        assert_eq!(names, ["reasoning.completed", "message.completed"]);
        let Event::MessageCompleted(m) = &events[1] else {
            panic!()
        };
        assert_eq!(m.finish_reason, "length");
        assert!(closing_events(&mut StepOutput::default(), &at()).is_empty());
    }
}
