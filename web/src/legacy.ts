// Chats saved before /eve/v1 spoke eve's own protocol hold events of the app's old private
// dialect: flat objects with a `type` such as `user.message`, `assistant.text.delta`,
// `tool.call.*`, their fields at the top level, and the old agent's stream position in `index`.
// `convertLegacyLog` turns such a log into the eve v1 events that tell the same story, so that
// one renderer (eve's message reducer) serves every chat. It is pure and deterministic: the same
// old log always gives the same events with the same `meta.id`s (`evt_legacy_<i>_<k>`), so the
// converted log is a stable prefix for the snapshot merge. Eve-shaped events in the log (a chat
// continued after the switch) pass through unchanged. The first save of such a chat writes the
// converted log back (see runtime.ts), so a chat is converted at most once.
//
//   user.message {text}                       → turn.started, message.received, step.started
//   assistant.text.delta {delta}              → message.appended
//   assistant.reasoning.delta {delta}         → reasoning.appended
//   tool.call.started {toolCallId, toolName}  → action.input.appended (empty delta: the call shows)
//   tool.call.input.delta {toolCallId, delta} → action.input.appended
//   tool.call.ready {toolCallId, input}       → actions.requested
//   tool.call.result {…, output, isError}     → action.result (a `discarded` fragment is dropped);
//                                               output after a result starts the next step
//   authorization.required {authorizationId…} → authorization.required (+ turn.waiting on input)
//   authorization.completed {outcome}         → authorization.completed (granted → authorized)
//   input.requested {requestId, prompt, options} → input.requested (a question; + turn.waiting),
//                                               resolved as answered when the turn goes on
//   session.completed                         → turn.completed, session.waiting
//   session.failed {message, code}            → turn.failed (not terminal), session.waiting
//   session.waiting {reason}                  → turn.cancelled, session.waiting (reason "input": turn.waiting)
//   usage, keepalive, unknown                 → dropped
// A locally synthesised old event (`local: true`, e.g. a skipped authorization) stays local
// (`meta.local`).

import type { EveEvent } from "./eve-reducer";

export type StoredEvent = EveEvent | LegacyEvent;

export interface LegacyEvent {
  type: string;
  index?: number;
  local?: boolean;
  [key: string]: unknown;
}

const LEGACY_TYPES = new Set([
  "user.message",
  "assistant.text.delta",
  "assistant.reasoning.delta",
  "tool.call.started",
  "tool.call.input.delta",
  "tool.call.ready",
  "tool.call.result",
  "usage",
  "keepalive",
]);

/** Whether an event is in eve's shape: `{type, data?, meta: {…}}` with no old top-level fields. */
export function isEveShaped(e: StoredEvent): e is EveEvent {
  const meta = (e as EveEvent).meta;
  return !!meta && typeof meta === "object" && !LEGACY_TYPES.has(e.type) && (e as LegacyEvent).index === undefined;
}

/** Whether any event of the log is in the old dialect. */
export function isLegacyLog(events: readonly StoredEvent[]): boolean {
  return events.some((e) => !isEveShaped(e));
}

const LEGACY_AT = "1970-01-01T00:00:00.000Z";

function str(e: LegacyEvent, ...keys: string[]): string | undefined {
  for (const k of keys) {
    const v = e[k];
    if (typeof v === "string") return v;
  }
  return undefined;
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : {};
  } catch {
    return {};
  }
}

export function convertLegacyLog(events: readonly StoredEvent[]): EveEvent[] {
  const out: EveEvent[] = [];
  let seq = -1;
  let turnId: string | null = null;
  let step = 0;
  let afterResult = false;
  let waitingOnInput = false;
  let openQuestions: string[] = [];
  const tools = new Map<string, { name: string; input: string; ready: boolean; done: boolean }>();
  let lastStarted: string | null = null;

  events.forEach((raw, i) => {
    if (isEveShaped(raw)) {
      out.push(raw);
      return;
    }
    const e = raw as LegacyEvent;
    let k = 0;
    const local = e.local === true;
    const emit = (type: string, data: Record<string, unknown>) => {
      const meta: EveEvent["meta"] = { at: LEGACY_AT, id: `evt_legacy_${i}_${k++}` };
      if (local) meta.local = true;
      out.push({ data, meta, type });
    };
    const turn = (): string => {
      if (turnId === null) startTurn(null);
      return turnId!;
    };
    const startTurn = (text: string | null) => {
      seq += 1;
      turnId = `legacy_turn_${seq}`;
      step = 0;
      afterResult = false;
      waitingOnInput = false;
      openQuestions = [];
      tools.clear();
      lastStarted = null;
      emit("turn.started", { sequence: seq, turnId });
      if (text !== null) emit("message.received", { message: text, parts: [{ text, type: "text" }], sequence: seq, turnId });
      emit("step.started", { modelId: "legacy", sequence: seq, stepIndex: 0, turnId });
    };
    const endTurn = () => {
      turnId = null;
    };
    // The turn goes on after a question: it was answered.
    const resolveQuestions = () => {
      if (!openQuestions.length || turnId === null) return;
      emit("input.resolved", {
        resolutions: openQuestions.map((requestId) => ({ kind: "question", outcome: "answered", requestId })),
        sequence: seq,
        stepIndex: step,
        turnId,
      });
      openQuestions = [];
      waitingOnInput = false;
    };
    // Output after a tool result belongs to the model's next step.
    const output = () => {
      const t = turn();
      resolveQuestions();
      if (afterResult) {
        emit("step.completed", { finishReason: "tool-calls", sequence: seq, stepIndex: step, turnId: t });
        step += 1;
        afterResult = false;
        emit("step.started", { modelId: "legacy", sequence: seq, stepIndex: step, turnId: t });
      }
      return t;
    };
    const settle = (ending: "turn.completed" | "turn.cancelled" | "turn.failed", failure?: { code: string; message: string }) => {
      if (turnId !== null) {
        emit(ending, failure ? { code: failure.code, message: failure.message, sequence: seq, terminal: false, turnId } : { sequence: seq, turnId });
      }
      emit("session.waiting", { continuationToken: "", wait: "next-user-message" });
      endTurn();
    };

    switch (e.type) {
      case "user.message":
        startTurn(str(e, "text", "message", "content") ?? "");
        break;
      case "assistant.text.delta": {
        const t = output();
        const delta = str(e, "delta", "text") ?? "";
        if (delta) emit("message.appended", { messageDelta: delta, sequence: seq, stepIndex: step, turnId: t });
        break;
      }
      case "assistant.reasoning.delta": {
        const t = output();
        const delta = str(e, "delta", "text") ?? "";
        if (delta) emit("reasoning.appended", { reasoningDelta: delta, sequence: seq, stepIndex: step, turnId: t });
        break;
      }
      case "tool.call.started": {
        const t = output();
        const callId = str(e, "toolCallId", "callId", "id") ?? `legacy_call_${i}`;
        const name = str(e, "toolName", "name") ?? "tool";
        const input = typeof e.input === "string" ? e.input : e.input !== undefined ? JSON.stringify(e.input) : "";
        tools.set(callId, { name, input, ready: false, done: false });
        lastStarted = callId;
        emit("action.input.appended", { callId, inputTextDelta: input, sequence: seq, stepIndex: step, toolName: name, turnId: t });
        break;
      }
      case "tool.call.input.delta": {
        const t = turn();
        const callId = str(e, "toolCallId", "callId", "id") ?? "";
        const tool = tools.get(callId);
        const delta = str(e, "delta", "text") ?? "";
        if (!tool || tool.ready || !delta) break;
        tool.input += delta;
        emit("action.input.appended", { callId, inputTextDelta: delta, sequence: seq, stepIndex: step, toolName: tool.name, turnId: t });
        break;
      }
      case "tool.call.ready": {
        const t = turn();
        const callId = str(e, "toolCallId", "callId", "id") ?? `legacy_call_${i}`;
        const tool = tools.get(callId) ?? { name: str(e, "toolName", "name") ?? "tool", input: "", ready: false, done: false };
        tools.set(callId, tool);
        tool.ready = true;
        const input = e.input !== undefined ? (typeof e.input === "string" ? parseJson(e.input) : e.input) : parseJson(tool.input);
        emit("actions.requested", { actions: [{ callId, input, kind: "tool-call", toolName: tool.name }], sequence: seq, stepIndex: step, turnId: t });
        break;
      }
      case "tool.call.result": {
        const t = turn();
        const callId = str(e, "toolCallId", "callId", "id") ?? "";
        const tool = tools.get(callId) ?? { name: str(e, "toolName", "name") ?? "tool", input: "", ready: false, done: false };
        tools.set(callId, tool);
        if (e.discarded === true) break;
        if (!tool.ready) {
          tool.ready = true;
          emit("actions.requested", { actions: [{ callId, input: parseJson(tool.input), kind: "tool-call", toolName: tool.name }], sequence: seq, stepIndex: step, turnId: t });
        }
        tool.done = true;
        const failed = e.isError === true || e.is_error === true;
        const output = e.output ?? e.result ?? e.content ?? null;
        const data: Record<string, unknown> = {
          result: failed ? { callId, isError: true, kind: "tool-result", output, toolName: tool.name } : { callId, kind: "tool-result", output, toolName: tool.name },
          sequence: seq,
          status: failed ? "failed" : "completed",
          stepIndex: step,
          turnId: t,
        };
        if (failed) data.error = { code: "TOOL_FAILED", message: typeof output === "string" ? output : JSON.stringify(output) };
        emit("action.result", data);
        afterResult = true;
        break;
      }
      case "authorization.required": {
        const t = output();
        const name = str(e, "connection", "connectionId", "connector") ?? "connection";
        const attemptId = str(e, "authorizationId", "id") ?? name;
        const displayName = str(e, "displayName", "name", "title");
        const url = str(e, "connectUrl", "authorizationUrl", "url");
        const authorization: Record<string, string> = {};
        if (displayName) authorization.displayName = displayName;
        if (url) authorization.url = url;
        emit("authorization.required", {
          attemptId,
          authorization,
          description: str(e, "description", "reason") ?? `Authorization required for ${name}`,
          name,
          sequence: seq,
          stepIndex: step,
          turnId: t,
        });
        emit("turn.waiting", { on: "input", sequence: seq, turnId: t });
        waitingOnInput = true;
        break;
      }
      case "authorization.completed": {
        const t = turnId ?? `legacy_turn_${Math.max(seq, 0)}`;
        const name = str(e, "connection", "connectionId", "connector") ?? "connection";
        const attemptId = str(e, "authorizationId", "id") ?? name;
        const outcome = e.outcome === "granted" || e.outcome === "authorized" ? "authorized" : e.outcome === "failed" || e.outcome === "timed-out" ? e.outcome : "declined";
        emit("authorization.completed", { attemptId, name, outcome, sequence: Math.max(seq, 0), stepIndex: step, turnId: t });
        waitingOnInput = false;
        break;
      }
      case "input.requested": {
        const t = output();
        const requestId = str(e, "requestId", "id") ?? `legacy_request_${i}`;
        const options = Array.isArray(e.options) ? e.options.filter((o): o is string => typeof o === "string") : [];
        const callId = lastStarted && tools.get(lastStarted) && !tools.get(lastStarted)!.done ? lastStarted : `legacy_ask_${i}`;
        const tool = tools.get(callId);
        emit("input.requested", {
          requests: [
            {
              action: { callId, input: tool ? parseJson(tool.input) : {}, kind: "tool-call", toolName: tool?.name ?? "ask_question" },
              allowFreeform: options.length === 0,
              kind: "question",
              options: options.map((label) => ({ id: label, label })),
              prompt: str(e, "prompt", "text") ?? "",
              requestId,
            },
          ],
          sequence: seq,
          stepIndex: step,
          turnId: t,
        });
        emit("turn.waiting", { on: "input", sequence: seq, turnId: t });
        openQuestions.push(requestId);
        waitingOnInput = true;
        break;
      }
      case "session.completed":
        settle("turn.completed");
        break;
      case "session.failed":
        settle("turn.failed", { code: str(e, "code") ?? "LEGACY_FAILURE", message: str(e, "message", "error", "reason") ?? "The response failed." });
        break;
      case "session.waiting":
        if (e.reason === "input" && waitingOnInput) break;
        if (e.reason === "input" && turnId !== null) {
          emit("turn.waiting", { on: "input", sequence: seq, turnId });
          waitingOnInput = true;
          break;
        }
        settle("turn.cancelled");
        break;
      default:
        // usage, keep-alives and anything unknown carry nothing to render.
        break;
    }
  });
  return out;
}
