// Pure logic over the eve event log: which events settle a turn, what is pending, how the log
// renders as messages, and how the final snapshot is merged (seed 000: preserve the known
// prefix, merge local events, compare JSON by value). No DOM, no network: unit-tested in
// events.test.ts.

import type { EveEvent } from "./types";

/** Event type names of the eve protocol (docs/eve-protocol.md, crates/eve-api/src/eve.rs). */
export const EVENT = {
  userMessage: "user.message",
  textDelta: "assistant.text.delta",
  reasoningDelta: "assistant.reasoning.delta",
  toolCallStarted: "tool.call.started",
  toolInputDelta: "tool.call.input.delta",
  toolCallReady: "tool.call.ready",
  toolResult: "tool.call.result",
  authorizationRequired: "authorization.required",
  authorizationCompleted: "authorization.completed",
  inputRequested: "input.requested",
  usage: "usage",
  sessionWaiting: "session.waiting",
  sessionCompleted: "session.completed",
  sessionFailed: "session.failed",
} as const;

/** Seed `isChatTurnSettledEvent`: the events after which a turn needs nothing more. */
export function isSettlingEvent(event: EveEvent): boolean {
  return (
    event.type === EVENT.authorizationRequired ||
    event.type === EVENT.sessionCompleted ||
    event.type === EVENT.sessionFailed ||
    event.type === EVENT.sessionWaiting
  );
}

/** Whether the log ends in a turn that has started (a user message or later) but not settled. */
export function hasOpenTurn(events: readonly EveEvent[]): boolean {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (isSettlingEvent(e)) return false;
    if (e.type === EVENT.authorizationCompleted && e.outcome === "declined" && e.local === true) return false;
    if (typeof e.index === "number" || e.type === EVENT.userMessage) return true;
  }
  return false;
}

/**
 * Where to resume reading the eve stream: the saved cursor, or one past the highest stream
 * index of the open turn's events when those were persisted after the cursor was saved.
 */
export function resumeStreamIndex(events: readonly EveEvent[], savedStreamIndex: number): number {
  let cursor = savedStreamIndex;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (isSettlingEvent(e)) break;
    if (typeof e.index === "number" && e.local !== true) cursor = Math.max(cursor, e.index + 1);
  }
  return cursor;
}

// ---------------------------------------------------------------------------------------------
// Field access: tolerant of the few spellings an agent may use for the same datum.

function str(e: EveEvent, ...keys: string[]): string | undefined {
  for (const k of keys) {
    const v = e[k];
    if (typeof v === "string") return v;
  }
  return undefined;
}

export function eventText(e: EveEvent): string {
  return str(e, "delta", "text", "content", "message") ?? "";
}

export function toolCallId(e: EveEvent): string {
  return str(e, "toolCallId", "callId", "id", "toolUseId") ?? "";
}

export function authorizationId(e: EveEvent): string {
  return str(e, "authorizationId", "id", "connection", "connectionId") ?? "";
}

// ---------------------------------------------------------------------------------------------
// Pending authorizations (seed getPendingAuthorizations)

export interface PendingAuthorization {
  id: string;
  connection: string;
  displayName: string;
  description: string;
  connectUrl: string | null;
  /** Position of the `authorization.required` event in the log. */
  eventIndex: number;
}

export function toAuthorization(e: EveEvent, eventIndex: number): PendingAuthorization {
  const connection = str(e, "connection", "connectionId", "connector") ?? "";
  return {
    id: authorizationId(e),
    connection,
    displayName: str(e, "displayName", "name", "title") ?? (connection || "Connection"),
    description: str(e, "description", "reason") ?? "",
    connectUrl: str(e, "connectUrl", "authorizationUrl", "url") ?? null,
    eventIndex,
  };
}

/** One item per `authorization.required` without a matching `authorization.completed`. */
export function getPendingAuthorizations(events: readonly EveEvent[]): PendingAuthorization[] {
  const pending = new Map<string, PendingAuthorization>();
  events.forEach((e, i) => {
    if (e.type === EVENT.authorizationRequired) pending.set(authorizationId(e), toAuthorization(e, i));
    else if (e.type === EVENT.authorizationCompleted) pending.delete(authorizationId(e));
  });
  return [...pending.values()];
}

// ---------------------------------------------------------------------------------------------
// Rendering model

export type ToolStatus = "running" | "waiting" | "asking" | "declined" | "done" | "error" | "interrupted";

export interface ToolCall {
  id: string;
  name: string;
  input: string;
  output: unknown;
  status: ToolStatus;
}

export type AssistantPart =
  | { kind: "text"; text: string }
  | { kind: "reasoning"; text: string; done: boolean }
  | { kind: "tools"; calls: ToolCall[] };

export type RenderItem =
  | { kind: "user"; key: string; text: string; pending?: boolean }
  | { kind: "assistant"; key: string; parts: AssistantPart[] }
  | {
      kind: "authorization";
      key: string;
      authorization: PendingAuthorization;
      outcome: "pending" | "granted" | "declined";
    }
  | { kind: "notice"; key: string; tone: "error" | "info"; text: string }
  | { kind: "input"; key: string; requestId: string; prompt: string; options: string[]; open: boolean };

/**
 * Reduces the event log to render items. Deltas append to the current assistant message;
 * consecutive tool calls share one `tools` part; reasoning is its own part, `done` once
 * anything else follows it. `stoppedAt` (a log length) marks tool calls still running at a
 * user stop as interrupted, so the UI reacts before the agent's synthetic results arrive.
 */
export function renderItems(events: readonly EveEvent[], stoppedAt: number | null = null): RenderItem[] {
  const items: RenderItem[] = [];
  const tools = new Map<string, ToolCall>();
  const authItems = new Map<string, Extract<RenderItem, { kind: "authorization" }>>();
  let assistant: Extract<RenderItem, { kind: "assistant" }> | null = null;

  const currentAssistant = (i: number) => {
    if (!assistant) {
      assistant = { kind: "assistant", key: `a${i}`, parts: [] };
      items.push(assistant);
    }
    return assistant;
  };
  const lastPart = () => (assistant ? assistant.parts[assistant.parts.length - 1] : undefined);
  const closeReasoning = () => {
    const last = lastPart();
    if (last?.kind === "reasoning") last.done = true;
  };

  events.forEach((e, i) => {
    switch (e.type) {
      case EVENT.userMessage: {
        closeReasoning();
        assistant = null;
        items.push({ kind: "user", key: `u${i}`, text: eventText(e) });
        break;
      }
      case EVENT.textDelta: {
        closeReasoning();
        const a = currentAssistant(i);
        const last = lastPart();
        if (last?.kind === "text") last.text += eventText(e);
        else a.parts.push({ kind: "text", text: eventText(e) });
        break;
      }
      case EVENT.reasoningDelta: {
        const a = currentAssistant(i);
        const last = lastPart();
        if (last?.kind === "reasoning") last.text += eventText(e);
        else a.parts.push({ kind: "reasoning", text: eventText(e), done: false });
        break;
      }
      case EVENT.toolCallStarted: {
        closeReasoning();
        const a = currentAssistant(i);
        const call: ToolCall = {
          id: toolCallId(e),
          name: str(e, "name", "toolName") ?? "tool",
          input: typeof e.input === "string" ? e.input : e.input !== undefined ? JSON.stringify(e.input) : "",
          output: undefined,
          status: "running",
        };
        tools.set(call.id, call);
        const last = lastPart();
        if (last?.kind === "tools") last.calls.push(call);
        else a.parts.push({ kind: "tools", calls: [call] });
        break;
      }
      case EVENT.toolInputDelta: {
        const call = tools.get(toolCallId(e));
        if (call) call.input += eventText(e);
        break;
      }
      case EVENT.toolCallReady: {
        const call = tools.get(toolCallId(e));
        if (call && e.input !== undefined) call.input = typeof e.input === "string" ? e.input : JSON.stringify(e.input);
        break;
      }
      case EVENT.toolResult: {
        const call = tools.get(toolCallId(e));
        if (call) {
          call.output = e.output ?? e.result ?? e.content;
          call.status = e.discarded === true ? "interrupted" : e.isError === true || e.is_error === true ? "error" : "done";
        }
        break;
      }
      case EVENT.authorizationRequired: {
        closeReasoning();
        const waitingCall = tools.get(toolCallId(e));
        if (waitingCall && waitingCall.status === "running") waitingCall.status = "waiting";
        const auth = toAuthorization(e, i);
        const item = { kind: "authorization" as const, key: `z${i}`, authorization: auth, outcome: "pending" as const };
        authItems.set(auth.id, item);
        items.push(item);
        assistant = null;
        break;
      }
      case EVENT.authorizationCompleted: {
        const item = authItems.get(authorizationId(e));
        if (item) (item as { outcome: string }).outcome = e.outcome === "granted" ? "granted" : "declined";
        for (const call of tools.values()) {
          if (call.status === "waiting") call.status = e.outcome === "granted" ? "running" : "declined";
        }
        break;
      }
      case EVENT.inputRequested: {
        closeReasoning();
        // The tool call that asked waits for the user's answer, it was not cut short.
        for (const call of tools.values()) if (call.status === "running") call.status = "asking";
        const options = Array.isArray(e.options) ? e.options.filter((o): o is string => typeof o === "string") : [];
        const open = events.slice(i + 1).every((later) => isSettlingEvent(later));
        items.push({ kind: "input", key: `q${i}`, requestId: str(e, "requestId", "id") ?? "", prompt: str(e, "prompt", "text") ?? "", options, open });
        assistant = null;
        break;
      }
      case EVENT.sessionFailed: {
        closeReasoning();
        for (const call of tools.values()) if (call.status === "running") call.status = "interrupted";
        items.push({ kind: "notice", key: `f${i}`, tone: "error", text: str(e, "message", "error", "reason") ?? "The response failed." });
        assistant = null;
        break;
      }
      case EVENT.sessionWaiting:
      case EVENT.sessionCompleted: {
        closeReasoning();
        // A settled turn has no running tool call left: one without a result was cut short.
        for (const call of tools.values()) if (call.status === "running") call.status = "interrupted";
        break;
      }
      default:
        break;
    }
  });
  if (stoppedAt !== null) {
    for (const call of tools.values()) if (call.status === "running") call.status = "interrupted";
    for (const item of items)
      if (item.kind === "assistant")
        for (const part of item.parts) if (part.kind === "reasoning") part.done = true;
  }
  return items;
}

/** Whether the last user message in the log has this text (the optimistic bubble can go). */
export function hasLatestUserMessage(events: readonly EveEvent[], text: string, since: number): boolean {
  for (let i = events.length - 1; i >= since; i--) {
    const e = events[i]!;
    if (e.type === EVENT.userMessage) return eventText(e).trim() === text.trim();
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

// ---------------------------------------------------------------------------------------------
// Client context and titles

export const CONNECTIONS = [
  { id: "notion", name: "Notion" },
  { id: "linear", name: "Linear" },
  { id: "sentry", name: "Sentry" },
] as const;

/** Seed createConnectionClientContext: tells the agent which connections this turn may use. */
export function createConnectionClientContext(enabled: Record<string, boolean>): string {
  const on = CONNECTIONS.filter((c) => enabled[c.id]).map((c) => c.name);
  const off = CONNECTIONS.filter((c) => !enabled[c.id]).map((c) => c.name);
  const parts: string[] = [];
  parts.push(on.length ? `Connections the user enabled for this turn: ${on.join(", ")}.` : "The user enabled no connections for this turn.");
  if (off.length) parts.push(`Connections the user disabled (do not use them): ${off.join(", ")}.`);
  return parts.join(" ");
}

/** The most characters a message may have (checked again by the server). */
export const MAX_MESSAGE_CHARS = 8000;

/** Seed createFallbackTitle: a sidebar title from the first message. */
export function createFallbackTitle(message: string): string {
  const line = message.trim().split(/\s+/).join(" ");
  return line.length > 60 ? line.slice(0, 57).trimEnd() + "…" : line || "New chat";
}
