// Pure logic over a chat's event log (eve v1 events, verbatim): which events settle a turn,
// whether a turn is open, what is pending (sign-ins, questions), how the log renders, and how
// the final snapshot is merged (seed 000: preserve the known prefix, merge local events, compare
// JSON by value). No DOM, no network: unit-tested in events.test.ts.
//
// Rendering goes through the eve message reducer (eve-reducer.ts, proven equal to eve's own
// `defaultMessageReducer`), one reduction per eve session in the log: a chat whose session was
// replaced holds several sessions' streams, and their turn ids (`turn_0`, …) repeat.

import { addUsage, totalUsage, type TurnUsage } from "./usage";
import { fileToolView, type FileToolView } from "./file-tools";
import { t } from "../i18n";
import type { notices as noticeCatalogue } from "../i18n/en";
import {
  initialEveState,
  reduceEveEvent,
  type EveAuthorizationPart,
  type EveEvent,
  type EveMessage,
  type EveState,
  type EveToolPart,
} from "./eve-reducer";

export type { EveEvent } from "./eve-reducer";

const TERMINAL = new Set(["session.failed", "session.completed"]);

export function isLocal(e: EveEvent): boolean {
  return e.meta?.local === true;
}

/**
 * The events after which a turn needs nothing more from the browser: the session parked
 * (`session.waiting`), ended (`session.failed`, `session.completed`), or the open turn parked on
 * a person (`turn.waiting` with `on: "input"`: a question, an approval or a sign-in; the turn is
 * not over, but only the user can move it on). `turn.waiting` with `on: "tasks"` is not: the
 * turn resumes by itself.
 */
export function isSettlingEvent(e: EveEvent): boolean {
  return e.type === "session.waiting" || TERMINAL.has(e.type) || (e.type === "turn.waiting" && e.data?.on === "input");
}

export function isTerminalEvent(e: EveEvent): boolean {
  return TERMINAL.has(e.type);
}

/** Whether the log ends in a turn that has started but not settled (it should be resumed). */
export function hasOpenTurn(events: readonly EveEvent[]): boolean {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (isSettlingEvent(e)) return false;
    if (e.type === "authorization.completed" && isLocal(e)) return false;
    if (!isLocal(e)) return true;
  }
  return false;
}

/**
 * Decides whether an event read after a send ends the wait for that send's turn. eve's own
 * client (ClientSession.send) does the same: with a `deliveryId`, events before the first one
 * carrying it belong to earlier turns (a boundary there is not ours), and later events of other
 * deliveries are not ours either; a session end always ends the wait.
 */
export class TurnWatch {
  private seen: boolean;
  private turnId: string | undefined;
  constructor(private readonly deliveryId?: string) {
    this.seen = deliveryId === undefined;
  }

  /**
   * Call once per event, in stream order. `ours`: the event belongs to the awaited turn (or no
   * delivery is awaited); `ends`: the wait is over (our turn settled, or the session ended).
   */
  observe(e: EveEvent): { ours: boolean; ends: boolean } {
    let ours = true;
    let seenBefore = this.seen;
    if (this.deliveryId !== undefined) {
      const ids = e.meta?.deliveryIds;
      const turnId = typeof e.data?.turnId === "string" ? e.data.turnId : undefined;
      // A message that steers a running turn joins it: that turn's later events are ours too.
      const mine = ids?.includes(this.deliveryId) === true || (this.turnId !== undefined && turnId === this.turnId);
      if (mine && turnId && this.turnId === undefined) this.turnId = turnId;
      if (!this.seen) {
        ours = mine;
        this.seen = mine;
      } else {
        ours = mine || ids === undefined;
      }
    } else {
      seenBefore = true;
    }
    // Once our turn has shown, the session parking means no turn runs any more: ours is over
    // too, whatever delivery ids eve stamped on that `session.waiting`.
    const parked = seenBefore && e.type === "session.waiting";
    return { ours, ends: isTerminalEvent(e) || parked || (ours && isSettlingEvent(e)) };
  }
}

// ---------------------------------------------------------------------------------------------
// The reduced log: one eve reduction per session, kept incrementally.

export type NoticeId = keyof typeof noticeCatalogue;

export interface Notice {
  key: string;
  tone: "error" | "info";
  /** The server's text, or the catalogue's at the time of reduction (see `id`). */
  text: string;
  /** A notice of the app's own: shown as the current catalogue's `notices[id]`. */
  id?: NoticeId;
  /** The turn this notice follows (the latest turn with messages when it was raised). */
  anchor: string | null;
}

export interface Segment {
  state: EveState;
  notices: Notice[];
  /** Turn ids in the order they first appeared (notices anchor to the latest with messages). */
  turnOrder: string[];
  /** The failure text of each failed turn (a session failure repeating it adds no notice). */
  failedTurns: Record<string, string>;
  events: number;
  /** Tokens and model of each turn (usage.ts). */
  usage: Record<string, TurnUsage>;
  /** The segment starts a branch of the chat (an edit or a regenerate): see branches.ts. */
  branch?: BranchMarker;
}

/**
 * The app's local event that opens a branch: the eve session after it continues the
 * conversation of run `parent` cut before its user message number `at` (0-based), seeded
 * with `context` (the earlier turns, as text).
 */
export const BRANCH_EVENT = "eve-chat.branch";

export interface BranchMarker {
  id: string;
  parent: string;
  at: number;
  context?: string;
}

function branchMarker(e: EveEvent): BranchMarker | null {
  const d = e.data ?? {};
  if (e.type !== BRANCH_EVENT || typeof e.meta?.id !== "string" || typeof d.parent !== "string") return null;
  if (typeof d.at !== "number" || !Number.isInteger(d.at) || d.at < 0) return null;
  return { id: e.meta.id, parent: d.parent, at: d.at, context: typeof d.context === "string" ? d.context : undefined };
}

export interface ReducedLog {
  segments: Segment[];
  /**
   * The number the first segment's render keys carry. A chat opened at its latest window
   * reduces again when earlier pages arrive; the runtime lowers `base` by the segments they add,
   * so the segments already shown keep their keys (and their DOM) and the page does not jump.
   */
  base?: number;
}

function emptySegment(): Segment {
  return { state: initialEveState(), notices: [], turnOrder: [], failedTurns: {}, events: 0, usage: {} };
}

export function reduceLog(events: readonly EveEvent[], base = 0): ReducedLog {
  let log: ReducedLog = { segments: [], base };
  for (const e of events) log = appendToLog(log, e);
  return log;
}

/** The log with one more event; the previous log object is left untouched. */
export function appendToLog(log: ReducedLog, e: EveEvent): ReducedLog {
  const segments = [...log.segments];
  const base = log.base ?? 0;
  const marker = branchMarker(e);
  if (marker) {
    // A branch opens a segment of its own; the new session's `session.started` joins it.
    return { segments: [...segments, { ...emptySegment(), branch: marker }], base };
  }
  let seg = segments.pop();
  // A `session.started` opens a new eve session: its turn ids start over.
  if (!seg || (e.type === "session.started" && seg.events > 0)) {
    if (seg) segments.push(seg);
    seg = emptySegment();
  }
  segments.push(appendToSegment(seg, e, base + segments.length - 1));
  return { segments, base };
}

function appendToSegment(seg: Segment, e: EveEvent, index: number): Segment {
  const state = reduceEveEvent(seg.state, e, { keepUnsettledTools: true });
  const d = e.data ?? {};
  const turnId: string | undefined = typeof d.turnId === "string" ? d.turnId : undefined;
  let turnOrder = seg.turnOrder;
  if (turnId && !turnOrder.includes(turnId)) turnOrder = [...turnOrder, turnId];
  const anchor = (() => {
    const withMessages = new Set(state.messages.map((m) => m.metadata?.turnId));
    for (let i = turnOrder.length - 1; i >= 0; i--) if (withMessages.has(turnOrder[i])) return turnOrder[i]!;
    return null;
  })();
  const key = `s${index}:${e.meta?.id ?? seg.events}`;
  let notices = seg.notices;
  let failedTurns = seg.failedTurns;
  const add = (tone: Notice["tone"], id: NoticeId) => {
    notices = [...notices, { key, tone, text: t.notices[id], id, anchor }];
  };
  switch (e.type) {
    case "turn.failed":
    case "step.failed": {
      const own = !(typeof d.message === "string" && d.message);
      const text = own ? t.notices.responseFailed : d.message;
      const tid = turnId ?? "";
      // One notice per failed turn: a later failure of the same turn replaces the earlier text.
      const existing = notices.findIndex((n) => n.key.startsWith(`s${index}:fail:${tid}:`));
      const notice: Notice = { key: `s${index}:fail:${tid}:${e.meta?.id ?? seg.events}`, tone: "error", text, ...(own ? { id: "responseFailed" as const } : {}), anchor };
      notices = existing >= 0 ? notices.map((n, i) => (i === existing ? { ...notice, key: n.key } : n)) : [...notices, notice];
      failedTurns = { ...failedTurns, [tid]: text };
      break;
    }
    case "session.failed": {
      const own = !(typeof d.message === "string" && d.message);
      const text = own ? t.notices.sessionFailed : d.message;
      if (!Object.values(failedTurns).includes(text)) {
        notices = [...notices, { key, tone: "error", text, ...(own ? { id: "sessionFailed" as const } : {}), anchor }];
      }
      break;
    }
    case "turn.cancelled": {
      const declined = state.messages.some(
        (m) => m.metadata?.turnId === turnId && m.parts.some((p) => p.type === "authorization" && p.state === "completed" && p.outcome !== "authorized"),
      );
      if (!declined) add("info", "responseStopped");
      break;
    }
    case "context.cleared":
      add("info", "contextCleared");
      break;
    case "compaction.completed":
      add("info", "compacted");
      break;
    case "session.completed":
      add("info", "sessionEnded");
      break;
  }
  return { ...seg, state, notices, turnOrder, failedTurns, events: seg.events + 1, usage: addUsage(seg.usage, e, turnId) };
}

function lastSegment(log: ReducedLog): Segment | undefined {
  return log.segments[log.segments.length - 1];
}

/** The turn eve is running now (from `turn.started` until the turn or session ends). */
export function activeTurnId(log: ReducedLog): string | undefined {
  return lastSegment(log)?.state.projection.activeTurnId;
}

// ---------------------------------------------------------------------------------------------
// What is pending

export interface AuthorizationView {
  /** eve's attempt identity: `attemptId`, or the connection `name` when there is none. */
  id: string;
  attemptId?: string;
  name: string;
  displayName: string;
  description: string;
  /** The sign-in link, only when it is a same-origin `/eve/v1/…` URL. */
  connectUrl: string | null;
  userCode?: string;
  instructions?: string;
  turnId: string;
  stepIndex: number;
  sequence: number;
  /** The challenge as eve sent it (copied onto a local decline). */
  authorization?: EveAuthorizationPart["authorization"];
  outcome: "pending" | "authorized" | "declined" | "failed" | "timed-out";
}

/**
 * Only a same-origin `/eve/v1/…` link is ever opened: the agent serves the sign-in start there
 * and redirects onward itself. Returns the path (with query and hash) or null.
 */
export function safeConnectUrl(url: string | undefined, origin: string): string | null {
  if (!url) return null;
  try {
    const u = new URL(url, origin);
    if (u.origin !== new URL(origin).origin || !u.pathname.startsWith("/eve/v1/")) return null;
    // An encoded separator or dot passes the prefix check here but may be decoded by a server
    // or proxy into a path outside /eve/v1/ (`/eve/v1/..%2f..%2fapi/…`).
    if (/%(2f|5c|2e)/i.test(u.pathname)) return null;
    return u.pathname + u.search + u.hash;
  } catch {
    return null;
  }
}

function authorizationView(seg: Segment, p: EveAuthorizationPart, origin: string): AuthorizationView {
  const record = seg.state.projection.authorizations[p.attemptId ?? p.name];
  return {
    id: p.attemptId ?? p.name,
    attemptId: p.attemptId,
    name: p.name,
    displayName: p.displayName,
    description: p.description,
    connectUrl: safeConnectUrl(p.authorization?.url, origin),
    userCode: p.authorization?.userCode,
    instructions: p.authorization?.instructions,
    turnId: p.turnId,
    stepIndex: p.stepIndex,
    sequence: typeof record?.sequence === "number" ? record.sequence : 0,
    authorization: p.authorization,
    outcome: p.state === "required" ? "pending" : (p.outcome ?? "declined"),
  };
}

/** One item per sign-in of the current session still `required` (seed getPendingAuthorizations). */
export function getPendingAuthorizations(log: ReducedLog, origin = defaultOrigin()): AuthorizationView[] {
  const seg = lastSegment(log);
  if (!seg || seg.state.projection.ended) return [];
  const proj = seg.state.projection;
  const out: AuthorizationView[] = [];
  for (const m of seg.state.messages) {
    for (const p of m.parts) {
      // A sign-in holds its turn open; once that turn is over nothing waits for it any more.
      if (p.type === "authorization" && p.state === "required" && proj.turns[p.turnId]?.status !== "completed" && proj.turns[p.turnId]?.status !== "cancelled" && proj.turns[p.turnId]?.status !== "failed") {
        out.push(authorizationView(seg, p, origin));
      }
    }
  }
  return out;
}

export interface InputOption {
  id: string;
  label: string;
  description?: string;
  style?: string;
}

export interface InputView {
  requestId: string;
  /** eve's request kind: `question`, `tool-approval` or `session-limit`. */
  requestKind: string;
  prompt: string;
  options: InputOption[];
  allowFreeform: boolean;
  /** Still waiting for an answer. */
  open: boolean;
  /** The answer given, for display. */
  answer: string | null;
  /** A `tool-approval`'s tool and its input (pretty JSON). */
  toolName?: string;
  toolInput?: string;
}

function inputView(seg: Segment, part: EveToolPart, live: boolean): InputView | null {
  const req = part.toolMetadata?.eve?.inputRequest;
  if (!req) return null;
  const record = seg.state.projection.inputs[req.requestId];
  const options: InputOption[] = Array.isArray(req.options) ? req.options : [];
  const response = record?.response ?? part.toolMetadata?.eve?.inputResponse;
  const answer =
    req.kind === "tool-approval"
      ? approvalAnswer(record?.outcome, response?.text ?? deniedNote(part.approval?.reason))
      : response
        ? (response.text ?? options.find((o) => o.id === response.optionId)?.label ?? response.optionId ?? null)
        : record?.outcome && record.outcome !== "answered"
          ? outcomeLabel(record.outcome)
          : null;
  return {
    requestId: req.requestId,
    requestKind: req.kind,
    prompt: req.prompt,
    options,
    allowFreeform: req.allowFreeform === true || options.length === 0,
    open: live && record !== undefined && record.status === "open",
    answer,
    ...(req.kind === "tool-approval" ? { toolName: part.toolName, toolInput: approvalInput(part.input) } : {}),
  };
}

/** How an approval ended (Approved, Denied, …) and the note the person left, once it has. */
function approvalAnswer(outcome: string | undefined, note: string | undefined): string | null {
  if (!outcome) return null;
  const label = outcomeLabel(outcome);
  return note?.trim() ? `${label}: “${note.trim()}”` : label;
}

/** The note quoted in eve's denial text (`… The person who denied it wrote: "<note>"`): a
 * reloaded chat has it only there. */
function deniedNote(reason: string | undefined): string | undefined {
  const quoted = reason?.split(" The person who denied it wrote: ")[1];
  if (quoted === undefined) return undefined;
  try {
    const note: unknown = JSON.parse(quoted);
    return typeof note === "string" ? note : undefined;
  } catch {
    return undefined;
  }
}

/** A tool call's input as the approval card shows it. */
function approvalInput(input: unknown): string {
  if (input === undefined) return "";
  return typeof input === "string" ? input : JSON.stringify(input, null, 2);
}

function outcomeLabel(outcome: string): string {
  const m = t.messages;
  return ({ approved: m.answerApproved, denied: m.answerDenied, cancelled: m.answerCancelled, ignored: m.answerIgnored, invalid: m.answerInvalid } as Record<string, string>)[outcome] ?? outcome;
}

/** Open questions of the current session, oldest first (a typed message answers the first free-text one). */
export function openInputs(log: ReducedLog): InputView[] {
  const seg = lastSegment(log);
  if (!seg || seg.state.projection.ended) return [];
  const out: InputView[] = [];
  for (const m of seg.state.messages)
    for (const p of m.parts) {
      if (p.type !== "dynamic-tool") continue;
      const v = inputView(seg, p, true);
      if (v?.open) out.push(v);
    }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Rendering model

export type ToolStatus = "running" | "waiting" | "asking" | "declined" | "denied" | "done" | "error" | "interrupted";

export interface ToolCall {
  id: string;
  name: string;
  input: string;
  output: unknown;
  status: ToolStatus;
  /** A file tool (read_file, write_file, glob, grep): shown as one line (name, path, size). */
  file?: FileToolView | null;
}

export interface FileView {
  filename?: string;
  mediaType: string;
  size?: number;
  url?: string;
}

export type AssistantPart =
  | { kind: "text"; text: string }
  | { kind: "reasoning"; text: string; done: boolean }
  | { kind: "tools"; calls: ToolCall[] };

export type RenderItem =
  | { kind: "user"; key: string; text: string; files: FileView[] }
  | { kind: "assistant"; key: string; parts: AssistantPart[] }
  | { kind: "authorization"; key: string; authorization: AuthorizationView; outcome: AuthorizationView["outcome"] }
  | { kind: "notice"; key: string; tone: "error" | "info"; text: string; id?: NoticeId }
  | { kind: "usage"; key: string; usage: TurnUsage; chat?: TurnUsage }
  | ({ kind: "input"; key: string } & InputView);

let pageOrigin: string | undefined;
/** The page's origin, read once: `location.origin` builds a new string on every read, and this
 * runs for every streamed event. A page's origin never changes (history moves stay in it). */
function defaultOrigin(): string {
  return (pageOrigin ??= typeof location === "undefined" ? "http://localhost" : location.origin);
}

function toolInputText(p: EveToolPart): string {
  if (p.state === "input-streaming") return p.inputText ?? "";
  if (p.input === undefined) return p.inputText ?? "";
  return typeof p.input === "string" ? p.input : JSON.stringify(p.input);
}

function toolStatus(p: EveToolPart, ctx: { ended: boolean; stopped: boolean; authPending: boolean; authDeclined: boolean; inputOpen: boolean }): ToolStatus {
  const cut = ctx.ended || ctx.stopped;
  switch (p.state) {
    case "input-streaming":
    case "input-available":
    case "approval-responded":
      if (cut) return ctx.authDeclined ? "declined" : "interrupted";
      return ctx.authPending ? "waiting" : "running";
    case "approval-requested":
      return ctx.inputOpen && !ctx.stopped ? "asking" : "interrupted";
    case "output-available":
      return p.partial ? (cut ? "interrupted" : "running") : "done";
    case "output-error":
      return "error";
    case "output-denied":
      return "denied";
  }
  return "running";
}

function renderMessage(seg: Segment, m: EveMessage, si: number, stopped: boolean, origin: string, items: RenderItem[]) {
  const key = `s${si}:${m.id}`;
  if (m.role === "user") {
    const text = m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n");
    const files = m.parts.flatMap((p) => (p.type === "file" ? [{ filename: p.filename, mediaType: p.mediaType, size: p.size, url: p.url }] : []));
    items.push({ kind: "user", key, text, files });
    return;
  }
  const proj = seg.state.projection;
  const turnId = m.metadata?.turnId;
  const turn = turnId === undefined ? undefined : proj.turns[turnId];
  const ended = turn === undefined || turn.status !== "active" || proj.activeTurnId !== turnId;
  const auths = m.parts.filter((p): p is EveAuthorizationPart => p.type === "authorization");
  const authPending = auths.some((a) => a.state === "required");
  const authDeclined = auths.some((a) => a.state === "completed" && a.outcome !== "authorized");
  let current: Extract<RenderItem, { kind: "assistant" }> | null = null;
  const open = (i: number) => {
    if (!current) {
      current = { kind: "assistant", key: `${key}:${i}`, parts: [] };
      items.push(current);
    }
    return current;
  };
  m.parts.forEach((p, i) => {
    switch (p.type) {
      case "text":
        if (p.text) open(i).parts.push({ kind: "text", text: p.text });
        break;
      case "reasoning":
        if (p.text) open(i).parts.push({ kind: "reasoning", text: p.text, done: p.state === "done" || ended || stopped });
        break;
      case "dynamic-tool": {
        const input = inputView(seg, p, !ended);
        const call: ToolCall = {
          id: p.toolCallId,
          name: p.toolMetadata?.eve?.label ?? p.toolName,
          input: toolInputText(p),
          output: p.state === "output-error" ? p.errorText : p.output,
          status: toolStatus(p, { ended, stopped, authPending, authDeclined, inputOpen: input?.open ?? false }),
          file: fileToolView(p.toolName, p.input ?? p.inputText, p.state === "output-available" ? p.output : undefined),
        };
        const a = open(i);
        const last = a.parts[a.parts.length - 1];
        if (last?.kind === "tools") last.calls.push(call);
        else a.parts.push({ kind: "tools", calls: [call] });
        if (input) {
          items.push({ kind: "input", key: `${key}:q:${input.requestId}`, ...input, open: input.open && !stopped });
          current = null;
        }
        break;
      }
      case "authorization": {
        const view = authorizationView(seg, p, origin);
        items.push({ kind: "authorization", key: `${key}:z:${view.id}:${p.stepIndex}`, authorization: view, outcome: view.outcome });
        current = null;
        break;
      }
      default:
        break;
    }
  });
}

/**
 * The log as render items: each eve message in order (user text and files; assistant text,
 * reasoning, consecutive tool calls grouped; sign-in cards and questions split out where they
 * occur), and notices (failures, stops, clears, compaction) after the turn they follow.
 * `stopped`: the user pressed stop, so anything still running renders as interrupted at once.
 */
export function renderItems(log: ReducedLog, stopped = false, origin = defaultOrigin()): RenderItem[] {
  return withChatTotal(log.segments.flatMap((seg, si) => renderSegment(seg, (log.base ?? 0) + si, stopped, origin)), log);
}

// Segments are immutable (appendToSegment returns a new object only for the segment an event
// changed), so while an answer streams every other segment keeps its items, and their identity:
// the chat page re-renders only the live message instead of the whole transcript per delta.
const segmentItems = new WeakMap<Segment, { si: number; stopped: boolean; origin: string; items: RenderItem[] }>();

/** One segment's render items (renderItems is all segments' in order); do not mutate them. */
export function renderSegment(seg: Segment, si: number, stopped = false, origin = defaultOrigin()): RenderItem[] {
  const hit = segmentItems.get(seg);
  if (hit && hit.si === si && hit.stopped === stopped && hit.origin === origin) return hit.items;
  const items = renderSegmentItems(seg, si, stopped, origin);
  segmentItems.set(seg, { si, stopped, origin, items });
  return items;
}

function renderSegmentItems(seg: Segment, si: number, stopped: boolean, origin: string): RenderItem[] {
  const items: RenderItem[] = [];
  {
    const byAnchor = new Map<string | null, Notice[]>();
    for (const n of seg.notices) byAnchor.set(n.anchor, [...(byAnchor.get(n.anchor) ?? []), n]);
    const flush = (anchor: string | null) => {
      for (const n of byAnchor.get(anchor) ?? []) items.push({ kind: "notice", key: n.key, tone: n.tone, text: n.text, ...(n.id ? { id: n.id } : {}) });
      byAnchor.delete(anchor);
    };
    flush(null);
    const msgs = seg.state.messages;
    msgs.forEach((m, i) => {
      renderMessage(seg, m, si, stopped, origin, items);
      const t = m.metadata?.turnId ?? null;
      if (msgs[i + 1]?.metadata?.turnId !== t || i === msgs.length - 1) {
        const u = t === null ? undefined : seg.usage[t];
        const settled = t !== null && seg.state.projection.turns[t]?.status !== "active";
        if (m.role === "assistant" && u && settled && (u.inputTokens || u.outputTokens)) {
          items.push({ kind: "usage", key: `s${si}:usage:${t}`, usage: u });
        }
        flush(t);
      }
    });
    for (const anchor of [...byAnchor.keys()]) flush(anchor);
  }
  return items;
}

/**
 * `items` with the chat's total on its latest usage line: every turn of every segment counts
 * (tokens of an abandoned branch were spent too). The line is copied, never changed in place.
 */
export function withChatTotal(items: RenderItem[], log: ReducedLog): RenderItem[] {
  let last = -1;
  let lines = 0;
  items.forEach((item, i) => {
    if (item.kind === "usage") {
      last = i;
      lines++;
    }
  });
  if (lines < 2) return items;
  const line = items[last] as Extract<RenderItem, { kind: "usage" }>;
  const out = items.slice();
  out[last] = { ...line, chat: totalUsage(log.segments.flatMap((s) => Object.values(s.usage))) };
  return out;
}

/** Whether the latest user message since `since` events has this text (the optimistic bubble can go). */
export function hasLatestUserMessage(events: readonly EveEvent[], text: string, since: number): boolean {
  for (let i = events.length - 1; i >= since; i--) {
    const e = events[i]!;
    if (e.type === "message.received") return String(e.data?.message ?? "").trim() === text.trim();
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Snapshot merge (seed persistSnapshot)

/** Deep equality of JSON values, independent of object key order (seed areEqualJsonValues). */
export function areEqualJsonValues(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => areEqualJsonValues(v, b[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => Object.prototype.hasOwnProperty.call(bo, k) && areEqualJsonValues(ao[k], bo[k]));
}

/**
 * Seed preserveKnownInitialEvents: the final log given the events known when the chat was
 * loaded and the events observed since. If the observed list already starts with the known log,
 * it is the whole log; if it starts part-way into the known log (a resume that overlaps), the
 * overlap is kept once; otherwise it continues the known log.
 */
export function preserveKnownInitialEvents(observed: readonly EveEvent[], known: readonly EveEvent[]): EveEvent[] {
  if (known.length === 0) return [...observed];
  if (observed.length >= known.length && known.every((e, i) => areEqualJsonValues(e, observed[i]))) {
    return [...observed];
  }
  // Longest suffix of `known` that is a prefix of `observed`.
  const max = Math.min(known.length, observed.length);
  for (let overlap = max; overlap > 0; overlap--) {
    let same = true;
    for (let j = 0; j < overlap && same; j++) {
      same = areEqualJsonValues(known[known.length - overlap + j], observed[j]);
    }
    if (same) return [...known, ...observed.slice(overlap)];
  }
  return [...known, ...observed];
}

/**
 * Seed mergeLocalEvents: puts each locally synthesised event (authorization skip) at its slot
 * unless an equal event is already there, shifting later events up by one.
 */
export function mergeLocalEvents(events: readonly EveEvent[], local: readonly { eventIndex: number; event: EveEvent }[]): EveEvent[] {
  const out = [...events];
  for (const { eventIndex, event } of [...local].sort((a, b) => a.eventIndex - b.eventIndex)) {
    if (out.some((e) => areEqualJsonValues(e, event))) continue;
    out.splice(Math.min(eventIndex, out.length), 0, event);
  }
  return out;
}

/** The whole log to save at the end of a turn. */
export function buildSnapshot(
  known: readonly EveEvent[],
  observed: readonly EveEvent[],
  local: readonly { eventIndex: number; event: EveEvent }[],
): EveEvent[] {
  return mergeLocalEvents(preserveKnownInitialEvents(observed, known), local);
}

/**
 * After a 409 on an event write (another tab or client wrote the chat since this one read it):
 * the stored log, then every event of ours it does not have, in our order. Events are matched by
 * `meta.id` (eve's ids, and the ids of local events), else by their JSON; so a turn both tabs
 * read from the same eve session is kept once, and nothing of either tab is lost.
 */
export function rebaseLog(stored: readonly EveEvent[], mine: readonly EveEvent[]): EveEvent[] {
  const key = (e: EveEvent) => (e.meta?.id ? `id:${e.meta.id}` : `json:${JSON.stringify(e)}`);
  const have = new Set(stored.map(key));
  return [...stored, ...mine.filter((e) => !have.has(key(e)))];
}

// ---------------------------------------------------------------------------------------------
// Local events (never sent by eve: marked `meta.local`)

let localCounter = 0;
export function localMeta(now = new Date()): NonNullable<EveEvent["meta"]> {
  localCounter += 1;
  return { at: now.toISOString(), id: `local_${now.getTime().toString(36)}_${localCounter.toString(36)}_${Math.random().toString(36).slice(2, 8)}`, local: true };
}

/** The local events of seed handleSkipAuthorization, in eve's shapes. */
export function skipEvents(auth: AuthorizationView, sessionId: string, now = new Date()): [EveEvent, EveEvent] {
  const data: Record<string, unknown> = { name: auth.name, outcome: "declined", sequence: auth.sequence, stepIndex: auth.stepIndex, turnId: auth.turnId };
  if (auth.attemptId !== undefined) data.attemptId = auth.attemptId;
  if (auth.authorization !== undefined) data.authorization = auth.authorization;
  return [
    { type: "authorization.completed", data, meta: localMeta(now) },
    { type: "session.waiting", data: { continuationToken: sessionId, wait: "next-user-message" }, meta: localMeta(now) },
  ];
}

/** A local `session.waiting` closing a stopped turn the agent did not confirm in time. */
export function localWaiting(sessionId: string, now = new Date()): EveEvent {
  return { type: "session.waiting", data: { continuationToken: sessionId, wait: "next-user-message" }, meta: localMeta(now) };
}

// ---------------------------------------------------------------------------------------------
// Client context and titles

/** Seed createConnectionClientContext: tells the agent which connections this turn may use.
 * `enabled` holds the toggles the user switched, by connection name (`mcp_connections`); a
 * configured connection not in it is on. */
export function createConnectionClientContext(enabled: Record<string, boolean>): string {
  const names = Object.keys(enabled);
  const on = names.filter((name) => enabled[name]);
  const off = names.filter((name) => !enabled[name]);
  const parts: string[] = [];
  if (on.length) parts.push(`Connections the user enabled for this turn: ${on.join(", ")}.`);
  if (off.length) parts.push(`Connections the user disabled (do not use them): ${off.join(", ")}.`);
  // Nothing switched: every configured connection stays on (never "enabled no connections",
  // which the agent reads as all off).
  return parts.length ? parts.join(" ") : "The user left every configured connection on for this turn.";
}

/** The most characters a message may have (checked again by the server). */
export const MAX_MESSAGE_CHARS = 8000;

/**
 * A message's length as the server counts it: characters (Unicode code points, Rust's
 * `chars().count()`) of the trimmed text, not UTF-16 units, so an emoji is one character,
 * not two (eve-store `validate::message`, eve-agent `protocol::MAX_MESSAGE_CHARS`).
 */
export function messageChars(text: string): number {
  // A string's iterator yields code points (a surrogate pair once).
  return Array.from(text.trim()).length;
}

/**
 * The `maxlength` of a message field: browsers count UTF-16 units there, and the longest
 * message the server accepts has at most two per character. The real limit is
 * {@link messageChars}, shown and enforced by the composer.
 */
export const MESSAGE_FIELD_MAX_LENGTH = MAX_MESSAGE_CHARS * 2;

/** Seed createFallbackTitle: a sidebar title from the first message. */
export function createFallbackTitle(message: string): string {
  const line = message.trim().split(/\s+/).join(" ");
  return line.length > 60 ? line.slice(0, 57).trimEnd() + "…" : line || "New chat";
}
