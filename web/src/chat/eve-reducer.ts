// Derived from eve 0.80.1 (npm `eve`, Apache-2.0, by Vercel): the app's own copy of eve's client-side
// projection (`eve/client`):
// `foldSession` (protocol/session-projection) and `defaultMessageReducer` (client/message-reducer
// and its helpers). Importing `eve/client` would add ~119 KB gzip to the first load, so these few
// functions are ported here, line for line; `eve-reducer.test.ts` feeds every recorded eve
// stream plus generated ones through this reducer and through eve's own `defaultMessageReducer`
// and `EveAgentStore`, and requires identical messages and projection after every event.
//
// The one deliberate difference is opt-in: `keepUnsettledTools` keeps tool calls that a turn
// ended without a result (eve drops them from `messages`), so the app can show them as
// interrupted after a stop. With the option off the output is eve's exactly.

// The ported code is as loosely typed as eve's compiled JavaScript; the exported shapes are typed.
type Any = any;

/** One eve stream event as read from `/eve/v1/session/:id/stream` (stream version 26). */
export interface EveEvent {
  type: string;
  data?: Any;
  meta?: EveEventMeta;
}

export interface EveEventMeta {
  id?: string;
  at?: string;
  deliveryIds?: readonly string[];
  /** Set by this app on events it synthesised itself (never sent by eve). */
  local?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Session projection (eve protocol/session-projection.js)

export interface SessionProjection {
  authorizations: Record<string, Any>;
  calls: Record<string, Any>;
  candidates: Record<string, Any>;
  inputs: Record<string, Any>;
  nextSequence: number;
  tasks: Record<string, Any>;
  turns: Record<string, Any>;
  activeTurnId?: string;
  started?: boolean;
  ended?: boolean;
}

export function initialSessionProjection(): SessionProjection {
  return { authorizations: {}, calls: {}, candidates: {}, inputs: {}, nextSequence: 0, tasks: {}, turns: {} };
}

function updateTurn(p: SessionProjection, turnId: string, fn: (t: Any) => Any): SessionProjection {
  const t = p.turns[turnId];
  if (t === undefined) return p;
  const n = fn(t);
  return n === t ? p : { ...p, turns: { ...p.turns, [turnId]: n } };
}
function putTask(p: SessionProjection, task: Any): SessionProjection {
  return p.tasks[task.taskId] === task ? p : { ...p, tasks: { ...p.tasks, [task.taskId]: task } };
}
function putTaskCall(task: Any, call: Any): Any {
  return task.calls[call.callId] === call ? task : { ...task, calls: { ...task.calls, [call.callId]: call } };
}
function putCall(p: SessionProjection, call: Any): SessionProjection {
  return p.calls[call.callId] === call ? p : { ...p, calls: { ...p.calls, [call.callId]: call } };
}
function updateTask(p: SessionProjection, taskId: string, fn: (t: Any) => Any): SessionProjection {
  const t = p.tasks[taskId];
  return t === undefined ? p : putTask(p, fn(t));
}
function updateCall(p: SessionProjection, callId: string, fn: (c: Any) => Any): SessionProjection {
  const c = p.calls[callId];
  return c === undefined ? p : putCall(p, fn(c));
}

const SETTLED_CALL_STATUSES = new Set(["completed", "failed", "rejected", "cancelled"]);
export function isSettledCallStatus(s: string): boolean {
  return SETTLED_CALL_STATUSES.has(s);
}

function settleCall(call: Any, status: string, error?: Any): Any {
  if (call.taskId !== undefined || isSettledCallStatus(call.status)) return call;
  const { requestId: _r, error: _e, ...rest } = call;
  const out: Any = { ...rest, status };
  if (call.requestId !== undefined) out.requestId = call.requestId;
  if (error !== undefined) out.error = error;
  return out;
}

function actionName(a: Any): string {
  switch (a.kind) {
    case "load-skill":
      return a.name;
    case "subagent-call":
    case "remote-agent-call":
      return a.name;
    case "tool-call":
    case "workflow-tool-call":
      return a.toolName;
  }
  return undefined as Any;
}

function resultName(r: Any): string {
  switch (r.kind) {
    case "load-skill-result":
      return r.name;
    case "subagent-result":
      return r.subagentName;
    default:
      return r.toolName;
  }
}

function callStatusAfterApproval(outcome: string): string | undefined {
  switch (outcome) {
    case "approved":
      return "running";
    case "denied":
      return "rejected";
    case "cancelled":
      return "cancelled";
    default:
      return undefined;
  }
}

function isRelayed(d: Any): boolean {
  return d.callId !== undefined || d.taskId !== undefined;
}

function settleApprovalCall(p: SessionProjection, input: Any, outcome: string): SessionProjection {
  if (input.request.kind !== "tool-approval" || isRelayed(input)) return p;
  const r = callStatusAfterApproval(outcome);
  if (r === undefined) return p;
  return updateCall(p, input.request.action.callId, (c) =>
    c.status !== "awaiting-input" || c.requestId !== input.request.requestId ? c : r === "running" ? { ...c, status: r } : settleCall(c, r),
  );
}

/** eve's `foldSession`: the session-level lifecycle (turns, calls, inputs, sign-ins, tasks). */
export function foldSession(p: SessionProjection, ev: EveEvent): SessionProjection {
  const d: Any = ev.data;
  switch (ev.type) {
    case "session.started":
      return p.started ? p : { ...p, started: true };
    case "turn.started": {
      const { sequence, turnId } = d;
      return {
        ...p,
        activeTurnId: turnId,
        nextSequence: Math.max(p.nextSequence, sequence + 1),
        turns: { ...p.turns, [turnId]: { turnId, sequence, status: "active" } },
      };
    }
    case "step.started":
      return updateTurn(p, d.turnId, (t) => {
        if (!t.waiting && t.stepIndex === d.stepIndex) return t;
        const { waiting: _w, ...r } = t;
        return { ...r, stepIndex: d.stepIndex };
      });
    case "turn.waiting":
      return updateTurn(p, d.turnId, (t) => (t.status === "active" && !t.waiting ? { ...t, waiting: true } : t));
    case "message.appended":
    case "message.completed":
    case "result.completed":
      return (ev.type === "message.appended" ? d.messageDelta.length > 0 : ev.type !== "message.completed" || (d.message?.length ?? 0) > 0)
        ? updateTurn(p, d.turnId, (t) => (t.outputStarted ? t : { ...t, outputStarted: true }))
        : p;
    case "turn.completed":
    case "turn.cancelled":
    case "turn.failed": {
      const { turnId } = d;
      const status = ev.type === "turn.completed" ? "completed" : ev.type === "turn.failed" ? "failed" : "cancelled";
      const { waiting: _w, ...a } = p.turns[turnId] ?? { turnId, sequence: d.sequence };
      return {
        ...p,
        activeTurnId: p.activeTurnId === turnId ? undefined : p.activeTurnId,
        turns: { ...p.turns, [turnId]: { ...a, status } },
      };
    }
    case "context.cleared":
      return { ...p, calls: Object.fromEntries(Object.entries(p.calls).filter(([, c]) => c.taskId !== undefined)) };
    case "session.waiting":
      return p.activeTurnId === undefined ? p : { ...p, activeTurnId: undefined };
    case "session.completed":
    case "session.failed": {
      const { activeTurnId: _a, ...n } = p;
      return { ...n, ended: true };
    }
    case "actions.requested": {
      let calls: Record<string, Any> | undefined;
      for (const a of d.actions) {
        if (p.calls[a.callId] === undefined) {
          calls ??= { ...p.calls };
          calls[a.callId] = { callId: a.callId, name: actionName(a), turnId: d.turnId, stepIndex: d.stepIndex, status: "running" };
        }
      }
      return calls === undefined ? p : { ...p, calls };
    }
    case "action.result": {
      const { result, status, error } = d;
      const c = p.calls[result.callId];
      if (c?.taskId !== undefined) return p;
      const st =
        status === "rejected" || error?.code === "TOOL_EXECUTION_DENIED"
          ? "rejected"
          : status === "failed" || result.isError === true
            ? "failed"
            : "completed";
      if (c === undefined) {
        const r: Any = { callId: result.callId, name: resultName(result), turnId: d.turnId, stepIndex: d.stepIndex, status: st };
        if (error !== undefined) r.error = error;
        return putCall(p, r);
      }
      return updateCall(p, result.callId, (x) => settleCall(x, st, error));
    }
    case "task.started": {
      const { callId, kind, name, taskId, turnId } = d;
      const s = p.tasks[taskId] ?? { taskId, name, kind, calls: {} };
      let c = p;
      if (s.calls[callId] === undefined) c = putTask(c, putTaskCall(s, { callId, turnId, status: "working" }));
      const l = c.calls[callId];
      if (l?.taskId === taskId) return c;
      const u: Any = { callId, name: l?.name ?? name, stepIndex: l?.stepIndex ?? 0, taskId, turnId: l?.turnId ?? turnId };
      if (l?.requestId !== undefined) u.requestId = l.requestId;
      return putCall(c, u);
    }
    case "task.settled": {
      const { callId, error, output, status, taskId } = d;
      return updateTask(p, taskId, (task) => {
        const n = task.calls[callId];
        if (n === undefined || n.status !== "working") return task;
        const o = { callId, turnId: n.turnId, status };
        return putTaskCall(
          task,
          status === "completed" && output !== undefined ? { ...o, output } : status === "failed" && error !== undefined ? { ...o, error } : o,
        );
      });
    }
    case "input.requested": {
      const inputs = { ...p.inputs };
      let calls: Record<string, Any> | undefined;
      for (const req of d.requests) {
        if (inputs[req.requestId] !== undefined) continue;
        const a: Any = { request: req, sequence: d.sequence, turnId: d.turnId, stepIndex: d.stepIndex, status: "open" };
        if (d.taskId !== undefined) a.taskId = d.taskId;
        if (d.callId !== undefined) a.callId = d.callId;
        inputs[req.requestId] = a;
        if (req.kind !== "tool-approval" || isRelayed(d)) continue;
        const { callId, toolName } = req.action;
        calls ??= { ...p.calls };
        const c = calls[callId];
        if (c?.taskId === undefined && !(c !== undefined && isSettledCallStatus(c.status))) {
          calls[callId] = { ...(c ?? { callId, name: toolName, turnId: d.turnId, stepIndex: d.stepIndex }), requestId: req.requestId, status: "awaiting-input" };
        }
      }
      return calls === undefined ? { ...p, inputs } : { ...p, calls, inputs };
    }
    case "approval.candidate": {
      const { candidateId, outcome, requestId } = d;
      p = { ...p, candidates: { ...p.candidates, [candidateId]: { candidateId, outcome, requestId } } };
      const a = p.inputs[d.requestId];
      if (a === undefined || a.status === "settled" || d.outcome === "pending" || a.status === "open") return p;
      const { response: _r, ...s } = a;
      return { ...p, inputs: { ...p.inputs, [d.requestId]: { ...s, status: "open" } } };
    }
    case "approval.settled": {
      const t = p.inputs[d.requestId];
      if (t === undefined || t.status === "settled") return p;
      const r = d.outcome === "approved" ? "approved" : "denied";
      return settleApprovalCall({ ...p, inputs: { ...p.inputs, [d.requestId]: { ...t, status: "settled", outcome: r } } }, t, r);
    }
    case "input.resolved": {
      let t = p;
      for (const e of d.resolutions) {
        const n = t.inputs[e.requestId];
        if (n === undefined || n.status === "settled") continue;
        const r = e.response ?? n.response;
        const i: Any = { ...n, status: "settled", outcome: e.outcome };
        if (r !== undefined) i.response = r;
        t = { ...t, inputs: { ...t.inputs, [e.requestId]: i } };
        t = settleApprovalCall(t, n, e.outcome);
      }
      return t;
    }
    case "authorization.required": {
      const id = d.attemptId ?? d.name;
      const r: Any = { attemptId: id, name: d.name, sequence: d.sequence, turnId: d.turnId, stepIndex: d.stepIndex, status: "required" };
      if (d.taskId !== undefined) r.taskId = d.taskId;
      if (d.principalId !== undefined) r.principalId = d.principalId;
      if (d.candidateId !== undefined) r.candidateId = d.candidateId;
      if (d.webhookUrl !== undefined) r.awaitsCallback = true;
      return { ...p, authorizations: { ...p.authorizations, [id]: r } };
    }
    case "authorization.completed": {
      const id = d.attemptId ?? d.name;
      const r = {
        ...(p.authorizations[id] ?? { attemptId: id, name: d.name, sequence: d.sequence, turnId: d.turnId, stepIndex: d.stepIndex }),
        status: d.outcome,
      };
      return { ...p, authorizations: { ...p.authorizations, [id]: r } };
    }
    default:
      return p;
  }
}

/** eve's `reportedCallStatus`: a task call reports its task's status. */
export function reportedCallStatus(p: SessionProjection, call: Any): string {
  if (call.taskId === undefined) return call.status;
  const n = p.tasks[call.taskId]?.calls[call.callId]?.status;
  return n === undefined || n === "working" ? "running" : n;
}

// ---------------------------------------------------------------------------------------------
// Message parts (eve client/message-reducer-types.d.ts)

export type EveMessagePart =
  | { type: "text" | "reasoning"; id?: string; state?: "done" | "streaming"; stepIndex?: number; text: string }
  | { type: "file"; filename?: string; mediaType: string; size?: number; stepIndex?: number; url?: string }
  | { type: "step-start" }
  | EveAuthorizationPart
  | EveToolPart;

export interface EveAuthorizationPart {
  type: "authorization";
  authorization?: { displayName?: string; expiresAt?: string; instructions?: string; url?: string; userCode?: string };
  description: string;
  displayName: string;
  name: string;
  attemptId?: string;
  awaitsCallback?: boolean;
  stepIndex: number;
  turnId: string;
  state: "required" | "completed";
  outcome?: "authorized" | "declined" | "failed" | "timed-out";
  reason?: string;
}

export interface EveToolPart {
  type: "dynamic-tool";
  toolCallId: string;
  toolName: string;
  stepIndex?: number;
  toolMetadata?: { eve?: Any };
  state: "input-streaming" | "input-available" | "approval-requested" | "approval-responded" | "output-available" | "output-error" | "output-denied";
  input?: unknown;
  inputText?: string;
  output?: unknown;
  errorText?: string;
  partial?: true;
  approval?: { id: string; approved?: boolean; reason?: string; isAutomatic?: boolean };
}

export interface EveMessage {
  id: string;
  metadata?: { optimistic?: true; result?: unknown; status?: "complete" | "failed" | "streaming" | "submitted"; turnId?: string };
  parts: EveMessagePart[];
  role: "assistant" | "user";
}

export interface EveState {
  messages: EveMessage[];
  projection: SessionProjection;
}

export interface ReduceOptions {
  /** Keep tool calls a turn ended without a result (eve removes them). */
  keepUnsettledTools?: boolean;
}

export function initialEveState(): EveState {
  return { messages: [], projection: initialSessionProjection() };
}

// ---------------------------------------------------------------------------------------------
// Names and labels (eve shared/display-name.js, shared/action-request-name.js, action-label.js)

const SEPARATORS = /[\s_-]+/u;
function lastSegment(s: string): string {
  return s.split("__").findLast((x) => x !== "") ?? s;
}
function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
function displayName(s: string): string {
  const words = lastSegment(s)
    .replace(/([a-z0-9])([A-Z])/gu, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/gu, "$1 $2")
    .split(SEPARATORS)
    .filter((w) => w !== "")
    .map((w) => (w.length > 1 && w === w.toUpperCase() ? w : w.toLowerCase()));
  return words.length === 0 ? s : words.join(" ");
}
export function displayTitle(s: string): string {
  return capitalize(displayName(s));
}

function actionRequestName(a: Any): string {
  switch (a.kind) {
    case "load-skill":
      return a.name;
    case "subagent-call":
      return a.subagentName;
    case "remote-agent-call":
      return a.remoteAgentName;
    case "tool-call":
    case "workflow-tool-call":
      return a.toolName;
  }
  return undefined as Any;
}

function actionLabel(a: Any, presentation: Any): string {
  return presentation?.[a.callId]?.label ?? displayTitle(actionRequestName(a));
}

// ---------------------------------------------------------------------------------------------
// Tool-part helpers (eve client/message-action-parts.js)

function toMessageInputRequest(e: Any): Any {
  return { allowFreeform: e.allowFreeform, display: e.display, kind: e.kind, options: e.options, prompt: e.prompt, requestId: e.requestId };
}
function createToolMetadata(e: Any, t?: Any): Any {
  return { eve: { inputRequest: t?.inputRequest, kind: e.kind, label: t?.label, name: e.name } };
}
function mergeToolMetadata(e: Any, t: Any): Any {
  const kind = t.eve?.kind ?? e?.eve?.kind ?? "unknown";
  const name = t.eve?.name ?? e?.eve?.name ?? "unknown";
  return {
    eve: {
      ...e?.eve,
      ...t.eve,
      inputRequest: t.eve?.inputRequest ?? e?.eve?.inputRequest,
      inputResponse: t.eve?.inputResponse ?? e?.eve?.inputResponse,
      kind,
      label: t.eve?.label ?? e?.eve?.label,
      name,
    },
  };
}
const SKILL_TOOL_NAME = "eve__skill";
function normalizeActionRequest(e: Any): Any {
  const t = actionRequestName(e);
  switch (e.kind) {
    case "load-skill":
      return { kind: "load-skill", name: t, toolName: SKILL_TOOL_NAME };
    case "tool-call":
    case "workflow-tool-call":
      return { kind: "tool-call", name: t, toolName: t };
    case "subagent-call":
    case "remote-agent-call":
      return { kind: "subagent-call", name: t, toolName: `eve:subagent:${t}` };
  }
  return { kind: "unknown", name: String(e.toolName ?? e.name ?? "unknown"), toolName: String(e.toolName ?? e.name ?? "unknown") };
}
function normalizeActionResult(e: Any): Any {
  switch (e.kind) {
    case "load-skill-result":
      return { kind: "load-skill", name: e.name, toolName: SKILL_TOOL_NAME };
    case "tool-result":
      return { kind: "tool-call", name: e.toolName, toolName: e.toolName };
    case "subagent-result":
      return { kind: "subagent-call", name: e.subagentName, toolName: `eve:subagent:${e.subagentName}` };
  }
  return { kind: "unknown", name: String(e.toolName ?? "unknown"), toolName: String(e.toolName ?? "unknown") };
}
function settledLabel(e: Any, t: Any, n: Any): string {
  return t ?? e?.eve?.label ?? displayTitle(n.name);
}
function stringifyUnknown(e: unknown): string {
  if (typeof e == "string") return e;
  try {
    return JSON.stringify(e);
  } catch {
    return "Action failed.";
  }
}

// ---------------------------------------------------------------------------------------------
// Authorization parts (eve client/authorization-message-parts.js)

function formatAuthorizationDisplayName(e: string): string {
  return e.length === 0 ? e : `${e.charAt(0).toUpperCase()}${e.slice(1)}`;
}
function createAuthorizationRequiredPart(ev: EveEvent): EveAuthorizationPart {
  const d = ev.data;
  const displayName = d.authorization?.displayName ?? formatAuthorizationDisplayName(d.name);
  const part: Any = {
    authorization: d.authorization,
    description: d.description === `Authorization required for ${d.name}` ? `Authorization required for ${displayName}` : d.description,
    displayName,
    name: d.name,
    state: "required",
    stepIndex: d.stepIndex,
    turnId: d.turnId,
    type: "authorization",
  };
  if (d.attemptId !== undefined) part.attemptId = d.attemptId;
  if (d.webhookUrl !== undefined) part.awaitsCallback = true;
  return part;
}
function createAuthorizationCompletedPart(ev: EveEvent, t: Any): EveAuthorizationPart {
  const d = ev.data;
  const n = d.authorization?.displayName ?? t?.displayName ?? formatAuthorizationDisplayName(d.name);
  const r: Any = {
    authorization: t?.authorization || d.authorization ? { ...t?.authorization, ...d.authorization } : undefined,
    description:
      t?.description ??
      (d.outcome === "authorized" ? `${n} connected.` : `${n} authorization ${d.outcome}${d.reason === undefined ? "" : ` (${d.reason})`}.`),
    displayName: n,
    name: d.name,
    outcome: d.outcome,
    state: "completed",
    stepIndex: t?.stepIndex ?? d.stepIndex,
    turnId: t?.turnId ?? d.turnId,
    type: "authorization",
  };
  const attemptId = d.attemptId ?? t?.attemptId;
  if (attemptId !== undefined) r.attemptId = attemptId;
  if (t?.awaitsCallback) r.awaitsCallback = true;
  if (d.reason !== undefined) r.reason = d.reason;
  return r;
}

// ---------------------------------------------------------------------------------------------
// Message primitives (eve client/message-reducer-primitives.js, message-run-parts.js)

function projectReceivedParts(parts: Any, message: string): EveMessagePart[] {
  return (
    parts?.map((p: Any) =>
      p.type === "text"
        ? { state: "done", text: p.text, type: "text" }
        : { filename: p.filename, mediaType: p.mediaType, size: p.size, type: "file", url: p.url },
    ) ?? [{ state: "done", text: message, type: "text" }]
  );
}

function partKey(p: Any): string {
  switch (p.type) {
    case "text":
      return `text:${p.stepIndex ?? 0}`;
    case "reasoning":
      return `reasoning:${p.stepIndex ?? 0}`;
    case "file":
      return `file:${p.stepIndex ?? 0}:${p.filename ?? p.url ?? p.mediaType}`;
    case "step-start":
      return "step-start";
    case "authorization":
      return p.attemptId === undefined ? `authorization:${p.turnId}:${p.stepIndex}:${p.name}` : `authorization:${p.attemptId}`;
    case "dynamic-tool":
      return `dynamic-tool:${p.toolCallId}`;
  }
  return undefined as Any;
}

type Messages = EveMessage[];

function upsertMessage(e: Messages, m: EveMessage, turnId?: string): Messages {
  const r = e.findIndex((x) => x.id === m.id);
  if (r !== -1) return [...e.slice(0, r), m, ...e.slice(r + 1)];
  const i = turnId === undefined ? -1 : e.findIndex((x) => x.role === "assistant" && x.metadata?.turnId === turnId);
  return i === -1 ? [...e, m] : [...e.slice(0, i), m, ...e.slice(i)];
}

function runTransition(m: EveMessage, t: Any): EveMessage {
  const n = m.parts.findLastIndex((p: Any) => p.type === t.type && p.stepIndex === t.stepIndex);
  const r: Any = n === -1 ? undefined : m.parts[n];
  if (t.kind === "append" && !t.delta) return m;
  const i = r?.state === "streaming" ? r : undefined;
  const a: Any = {
    id: i?.id ?? t.id ?? `${m.id}:${t.type}:${m.parts.length}`,
    state: t.kind === "append" ? "streaming" : "done",
    stepIndex: t.stepIndex,
    text: t.kind === "append" ? (i?.text ?? "") + t.delta : t.text,
    type: t.type,
  };
  const parts = i ? [...m.parts.slice(0, n), a, ...m.parts.slice(n + 1)] : [...m.parts, a];
  return { ...m, metadata: { ...m.metadata, status: t.type === "text" && a.state === "done" ? "complete" : "streaming" }, parts };
}

// ---------------------------------------------------------------------------------------------
// The message reducer (eve client/message-reducer.js, client/tool-part-state.js)

function receivedMessageEventId(ev: EveEvent): string {
  return (ev.meta as Any).id ?? `${ev.data.turnId}:${ev.data.sequence}`;
}

function createAssistantMessage(turnId: string): EveMessage {
  return { id: `${turnId}:assistant`, metadata: { status: "streaming", turnId }, parts: [], role: "assistant" };
}
function updateAssistantMessage(e: Messages, turnId: string, fn: (m: EveMessage) => EveMessage): Messages {
  const m = e.find((x) => x.role === "assistant" && x.metadata?.turnId === turnId) ?? createAssistantMessage(turnId);
  return upsertMessage(e, fn(m));
}
function ensureStepStartPart(m: EveMessage, stepIndex: number): EveMessage {
  const n = m.parts.filter((p) => p.type === "step-start").length;
  if (n > stepIndex) return m;
  const r = stepIndex - n + 1;
  return { ...m, parts: [...m.parts, ...Array.from({ length: r }, () => ({ type: "step-start" as const }))] };
}
function upsertPart(m: EveMessage, part: Any): EveMessage {
  const key = partKey(part);
  const n = m.parts.findIndex((p) => partKey(p) === key);
  const parts = n === -1 ? [...m.parts, part] : [...m.parts.slice(0, n), part, ...m.parts.slice(n + 1)];
  return { ...m, metadata: { ...m.metadata, status: part.type === "text" && part.state === "done" ? "complete" : "streaming" }, parts };
}
function updateToolPart(e: Messages, callId: string, part: Any): Messages | null {
  const m = e.find((x) => x.role === "assistant" && x.parts.some((p: Any) => p.type === "dynamic-tool" && p.toolCallId === callId));
  return m ? upsertMessage(e, upsertPart(m, part)) : null;
}
function upsertToolPart(e: Messages, turnId: string, stepIndex: number, part: Any): Messages {
  return updateToolPart(e, part.toolCallId, part) ?? updateAssistantMessage(e, turnId, (m) => upsertPart(ensureStepStartPart(m, stepIndex), part));
}
function replaceToolPart(e: Messages, part: Any): Messages {
  const m = e.find((x) => x.parts.some((p: Any) => p.type === "dynamic-tool" && p.toolCallId === part.toolCallId));
  if (m === undefined) return e;
  const key = partKey(part);
  return upsertMessage(e, { ...m, parts: m.parts.map((p) => (partKey(p) === key ? part : p)) });
}
function findToolPart(e: Messages, callId: string): Any {
  for (const m of e) for (const p of m.parts as Any[]) if (p.type === "dynamic-tool" && p.toolCallId === callId) return p;
  return undefined;
}
function findToolPartByApprovalId(e: Messages, id: string): Any {
  for (const m of e) for (const p of m.parts as Any[]) if (p.type === "dynamic-tool" && p.approval?.id === id) return p;
  return undefined;
}
function isSettledToolPart(p: Any): boolean {
  return p.state === "output-denied" || p.state === "output-error" || (p.state === "output-available" && p.partial !== true);
}
function findPendingAuthorizationPart(e: Messages, name: string, attemptId?: string): Any {
  for (let r = e.length - 1; r >= 0; --r) {
    const m = e[r];
    if (m?.role !== "assistant") continue;
    for (let i = m.parts.length - 1; i >= 0; --i) {
      const p: Any = m.parts[i];
      if (p?.type === "authorization" && p.state === "required" && (attemptId === undefined ? p.attemptId === undefined && p.name === name : p.attemptId === attemptId)) return p;
    }
  }
  return undefined;
}
function completeAuthorization(e: Messages, ev: EveEvent): Messages {
  const n = findPendingAuthorizationPart(e, ev.data.name, ev.data.attemptId);
  const r = createAuthorizationCompletedPart(ev, n);
  return updateAssistantMessage(e, n?.turnId ?? ev.data.turnId, (m) => upsertPart(ensureStepStartPart(m, r.stepIndex), r));
}
function closeStreamingRuns(parts: EveMessagePart[], stepIndex?: number): EveMessagePart[] {
  return parts.map((p: Any) =>
    (p.type === "text" || p.type === "reasoning") && p.state === "streaming" && (stepIndex === undefined || p.stepIndex === stepIndex) ? { ...p, state: "done" } : p,
  );
}
function removeUnsettledToolParts(parts: EveMessagePart[], proj: SessionProjection): EveMessagePart[] {
  return parts.filter((p: Any) => {
    if (p.type !== "dynamic-tool") return true;
    if (p.state === "input-streaming") return false;
    if (p.state !== "input-available") return true;
    const c = proj.calls[p.toolCallId];
    return c === undefined || c.taskId !== undefined || reportedCallStatus(proj, c) !== "running";
  });
}

function reduceContent(e: Messages, proj: SessionProjection, t: EveEvent, opts: ReduceOptions): Messages {
  const d: Any = t.data;
  switch (t.type) {
    case "message.received":
      return upsertMessage(
        e,
        { id: `${receivedMessageEventId(t)}:user`, metadata: { status: "complete", turnId: d.turnId }, parts: projectReceivedParts(d.parts, d.message), role: "user" } as EveMessage,
        d.turnId,
      );
    case "step.started":
      return updateAssistantMessage(e, d.turnId, (m) => ensureStepStartPart(m, d.stepIndex));
    case "step.completed":
      return e.find((m) => m.role === "assistant" && m.metadata?.turnId === d.turnId) === undefined
        ? e
        : updateAssistantMessage(e, d.turnId, (m) => ({ ...m, parts: closeStreamingRuns(m.parts, d.stepIndex) }));
    case "reasoning.appended":
      return updateAssistantMessage(e, d.turnId, (m) =>
        runTransition(ensureStepStartPart(m, d.stepIndex), { kind: "append", delta: d.reasoningDelta, id: t.meta?.id, stepIndex: d.stepIndex, type: "reasoning" }),
      );
    case "reasoning.completed":
      return updateAssistantMessage(e, d.turnId, (m) =>
        runTransition(ensureStepStartPart(m, d.stepIndex), { kind: "complete", stepIndex: d.stepIndex, text: d.reasoning, id: t.meta?.id, type: "reasoning" }),
      );
    case "action.input.appended": {
      const n = findToolPart(e, d.callId);
      if (n !== undefined && n.state !== "input-streaming") return e;
      const inputText = (n?.state === "input-streaming" ? n.inputText : "") + d.inputTextDelta;
      return upsertToolPart(e, d.turnId, d.stepIndex, {
        input: undefined,
        inputText,
        state: "input-streaming",
        stepIndex: d.stepIndex,
        toolCallId: d.callId,
        toolMetadata: n?.toolMetadata ?? { eve: { kind: "unknown", name: d.toolName } },
        toolName: d.toolName,
        type: "dynamic-tool",
      });
    }
    case "actions.requested": {
      let n = e;
      for (const a of d.actions) {
        const r = findToolPart(n, a.callId);
        if (r !== undefined && r.state !== "input-streaming") continue;
        const i = normalizeActionRequest(a);
        n = updateAssistantMessage(n, d.turnId, (m) =>
          upsertPart(ensureStepStartPart(m, d.stepIndex), {
            input: "input" in a ? a.input : undefined,
            state: "input-available",
            stepIndex: d.stepIndex,
            toolCallId: a.callId,
            toolMetadata: createToolMetadata(i, { label: actionLabel(a, d.presentation) }),
            toolName: i.toolName,
            type: "dynamic-tool",
          }),
        );
      }
      return n;
    }
    case "input.requested": {
      let n = e;
      for (const req of d.requests) {
        const r = findToolPart(n, req.action.callId);
        if (r?.approval?.id === req.requestId || (r !== undefined && isSettledToolPart(r))) continue;
        const i = normalizeActionRequest(req.action);
        n = updateAssistantMessage(n, d.turnId, (m) =>
          upsertPart(ensureStepStartPart(m, d.stepIndex), {
            ...r,
            approval: { id: req.requestId },
            input: req.action.input,
            state: "approval-requested",
            stepIndex: r?.stepIndex ?? d.stepIndex,
            toolCallId: req.action.callId,
            toolMetadata: createToolMetadata(i, { inputRequest: toMessageInputRequest(req), label: r?.toolMetadata?.eve?.label ?? actionLabel(req.action, undefined) }),
            toolName: i.toolName,
            type: "dynamic-tool",
          }),
        );
      }
      return n;
    }
    case "action.result": {
      if (proj.calls[d.result.callId]?.taskId !== undefined) return e;
      if (d.error?.code === "MODEL_CALL_ATTEMPT_RETRIED") {
        return updateAssistantMessage(e, d.turnId, (m) => ({
          ...m,
          parts: m.parts.filter((p: Any) => p.type !== "dynamic-tool" || p.toolCallId !== d.result.callId),
        }));
      }
      const n = findToolPart(e, d.result.callId);
      const r = normalizeActionResult(d.result);
      const ok = d.status === undefined || d.status === "completed" ? d.result.isError !== true && d.error === undefined : false;
      const a = {
        ...n,
        input: n?.input,
        stepIndex: n?.stepIndex ?? d.stepIndex,
        toolCallId: d.result.callId,
        toolMetadata: mergeToolMetadata(n?.toolMetadata, createToolMetadata(r, { label: settledLabel(n?.toolMetadata, d.presentation?.[d.result.callId]?.label, r) })),
        toolName: n?.toolName ?? r.toolName,
        type: "dynamic-tool",
      };
      const o = ok ? { errorText: undefined, output: d.result.output } : { errorText: d.error?.message ?? stringifyUnknown(d.result.output), output: undefined };
      return upsertToolPart(e, d.turnId, d.stepIndex, { ...a, ...o, partial: undefined });
    }
    case "action.partial": {
      const n = findToolPart(e, d.result.callId);
      if (n !== undefined && isSettledToolPart(n)) return e;
      const r = normalizeActionResult(d.result);
      return upsertToolPart(e, d.turnId, d.stepIndex, {
        ...n,
        input: n?.input,
        output: d.result.output,
        partial: true,
        state: "output-available",
        stepIndex: n?.stepIndex ?? d.stepIndex,
        toolCallId: d.result.callId,
        toolMetadata: mergeToolMetadata(n?.toolMetadata, createToolMetadata(r, { label: settledLabel(n?.toolMetadata, d.presentation?.[d.result.callId]?.label, r) })),
        toolName: n?.toolName ?? r.toolName,
        type: "dynamic-tool",
      });
    }
    case "input.resolved": {
      let n = e;
      for (const { requestId, response } of d.resolutions) {
        const p = response === undefined ? undefined : findToolPartByApprovalId(n, requestId);
        if (p !== undefined) {
          n = replaceToolPart(n, {
            ...p,
            toolMetadata: mergeToolMetadata(p.toolMetadata, {
              eve: { inputResponse: response, kind: p.toolMetadata?.eve?.kind ?? "unknown", name: p.toolMetadata?.eve?.name ?? p.toolName },
            }),
          });
        }
      }
      return n;
    }
    case "task.settled": {
      const n = findToolPart(e, d.callId);
      if (n === undefined) return e;
      const o = d.status === "completed" ? { output: d.output } : { errorText: d.error?.message };
      return replaceToolPart(e, { ...n, ...o });
    }
    case "authorization.required":
      return updateAssistantMessage(e, d.turnId, (m) => upsertPart(ensureStepStartPart(m, d.stepIndex), createAuthorizationRequiredPart(t)));
    case "authorization.completed":
      return completeAuthorization(e, t);
    case "message.appended":
      return updateAssistantMessage(e, d.turnId, (m) =>
        runTransition(ensureStepStartPart(m, d.stepIndex), { kind: "append", delta: d.messageDelta, id: t.meta?.id, stepIndex: d.stepIndex, type: "text" }),
      );
    case "message.completed":
      return updateAssistantMessage(e, d.turnId, (m) =>
        runTransition(ensureStepStartPart(m, d.stepIndex), { kind: "complete", stepIndex: d.stepIndex, text: d.message, id: t.meta?.id, type: "text" }),
      );
    case "result.completed":
      return updateAssistantMessage(e, d.turnId, (m) => ({ ...m, metadata: { ...m.metadata, result: d.result } }));
    case "turn.completed":
    case "turn.cancelled":
    case "turn.failed":
      return t.type === "turn.failed" && !e.some((m) => m.role === "assistant" && m.metadata?.turnId === d.turnId)
        ? e
        : updateAssistantMessage(e, d.turnId, (m) => {
            const closed = closeStreamingRuns(m.parts);
            return { ...m, metadata: { ...m.metadata, status: "complete" }, parts: opts.keepUnsettledTools ? closed : removeUnsettledToolParts(closed, proj) };
          });
    default:
      return e;
  }
}

function toolCallIds(e: Messages, t: EveEvent): string[] {
  const d: Any = t.data;
  const byRequest = (id: string): string | [] => findToolPartByApprovalId(e, id)?.toolCallId ?? [];
  switch (t.type) {
    case "actions.requested":
      return d.actions.map((a: Any) => a.callId);
    case "input.requested":
      return d.requests.map((r: Any) => r.action.callId);
    case "action.result":
    case "action.partial":
      return [d.result.callId];
    case "task.started":
    case "task.settled":
      return [d.callId];
    case "input.resolved":
      return d.resolutions.flatMap((r: Any) => byRequest(r.requestId));
    case "approval.settled":
      return [byRequest(d.requestId)].flat();
    default:
      return [];
  }
}

function toolPartState(r: SessionProjection, t: Any): Any {
  const n = t;
  const i = r.calls[t.toolCallId];
  const a = n.approval?.id;
  const o = a === undefined ? undefined : r.inputs[a];
  const s = { input: t.input, stepIndex: t.stepIndex, toolCallId: t.toolCallId, toolMetadata: t.toolMetadata, toolName: t.toolName, type: "dynamic-tool" };
  const c = a === undefined ? undefined : { id: a, ...(n.approval?.isAutomatic !== undefined ? { isAutomatic: n.approval.isAutomatic } : {}) };
  const responded = (approved: boolean, reason: unknown) => ({
    ...s,
    approval: { ...c, ...(approved ? { approved: true } : {}), ...(reason !== undefined ? { reason } : {}) },
    state: "approval-responded",
  });
  const l = c === undefined ? undefined : { ...c, approved: true };
  if (c !== undefined && o !== undefined && o.status !== "settled" && (i === undefined || !isSettledCallStatus(reportedCallStatus(r, i)))) {
    return { ...s, approval: c, state: "approval-requested" };
  }
  const u = i?.taskId === undefined ? undefined : r.tasks[i.taskId]?.calls[t.toolCallId];
  if (i === undefined) {
    return o === undefined ? t : o.response === undefined ? { ...s, output: { status: o.outcome }, state: "output-available" } : responded(o.outcome === "approved", o.response.text);
  }
  switch (reportedCallStatus(r, i)) {
    case "running":
    case "awaiting-input":
      return n.partial === true
        ? { ...s, approval: l, output: n.output, partial: true, state: "output-available" }
        : o !== undefined && (o.outcome === "approved" || o.response !== undefined)
          ? responded(o.outcome === "approved", o.response?.text)
          : { ...s, state: "input-available" };
    case "completed":
      return { ...s, approval: l, output: u?.output ?? n.output, state: "output-available" };
    case "failed":
      return {
        ...s,
        approval: l,
        errorText: u?.error?.message ?? n.errorText ?? i.error?.message ?? (i.taskId === undefined ? "Action failed." : "Task failed."),
        state: "output-error",
      };
    case "rejected":
      return { ...s, approval: { id: a ?? t.toolCallId, approved: false, reason: i.error?.message ?? n.errorText }, state: "output-denied" };
    case "cancelled":
      return a !== undefined && o?.outcome === "cancelled"
        ? { ...s, approval: { id: a, approved: false, reason: "Tool execution was cancelled." }, state: "output-denied" }
        : {
            ...s,
            approval: l,
            errorText: i.taskId === undefined ? n.errorText ?? i.error?.message ?? "Action was cancelled." : "Task was cancelled.",
            state: "output-error",
          };
  }
  return t;
}

/** One eve event into the state (eve's `defaultMessageReducer().reduce`). */
export function reduceEveEvent(state: EveState, ev: EveEvent, opts: ReduceOptions = {}): EveState {
  const projection = foldSession(state.projection, ev);
  let messages = reduceContent(state.messages, state.projection, ev, opts);
  const ids = toolCallIds(messages, ev);
  for (const id of new Set(ids)) {
    const part = findToolPart(messages, id);
    if (part === undefined) continue;
    const next = toolPartState(projection, part);
    if (next !== part) messages = replaceToolPart(messages, next);
  }
  return { messages, projection };
}

export function reduceEveEvents(events: readonly EveEvent[], opts: ReduceOptions = {}, state: EveState = initialEveState()): EveState {
  for (const e of events) state = reduceEveEvent(state, e, opts);
  return state;
}
