// The eve v1 session API over same-origin /eve/v1/* (served by the agent through eve-proxy),
// spoken as eve 0.80.1's own client speaks it (`eve/client` ClientSession + followStreamIterable):
//
//   POST /eve/v1/session              { message, clientContext }      → 202 { ok, sessionId, status }
//   POST /eve/v1/session/:id          { message, clientContext }      → 202 { …, deliveryId }
//   POST /eve/v1/session/:id          { inputResponses: [...] }       → 202
//   POST /eve/v1/session/:id/cancel   { turnId? }                     → 202 accepted | 200 no_active_turn
//   GET  /eve/v1/session/:id/stream?streamControlVersion=1&startIndex=n   NDJSON, x-eve-stream-version 21–26
//
// The stream reader skips blank keep-alive lines, treats `{"$eve":"stream.lease-ended"}` as "the
// server ends this response: reconnect at once from the cursor", reconnects a dropped response
// from the absolute cursor (startIndex = events consumed), and normalises v21–v24 appends to the
// v25+ delta-only shape as eve's client does.

import { ApiError, errorFrom } from "../api";
import { messageOf, type FilePart } from "./attachments";
import type { EveEvent } from "./eve-reducer";
import type { ClientSessionState } from "../api/types";

export const STREAM_DISCONNECTED = "Stream disconnected before the response completed.";
export const STREAM_VERSION_HEADER = "x-eve-stream-version";
/** Stream versions eve 0.80.1's client accepts. */
export const SUPPORTED_STREAM_VERSIONS = new Set(["21", "22", "23", "24", "25", "26"]);
export const STREAM_CONTROL_VERSION = "1";

/** Opening a stream is retried on these statuses (eve's defaults): the session may not be readable yet. */
export const RETRYABLE_STREAM_STATUSES = new Set([404, 409, 425, 500, 502, 503, 504]);

export interface InputResponse {
  requestId: string;
  optionId?: string;
  text?: string;
}

export interface SentTurn {
  session: ClientSessionState;
  /** `deliveryId` of an accepted follow-up message: its turn's events carry it in `meta.deliveryIds`. */
  deliveryId?: string;
  /** A new session was created (the chat had none, or the agent no longer knows the old one). */
  created: boolean;
}

const sessionPath = (id: string) => `/eve/v1/session/${encodeURIComponent(id)}`;

async function post(path: string, body: unknown): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, "network", "The server could not be reached. Check your connection.");
  }
  if (!res.ok) throw await errorFrom(res);
  return res;
}

/**
 * Posts a turn, retrying `409 session_not_ready` (an inbox still starting) with bounded backoff
 * for up to 20 s, as eve's client does.
 */
async function postTurn(path: string, body: unknown): Promise<{ res: Response; json: Record<string, unknown> }> {
  const deadline = Date.now() + 20_000;
  let wait = 250;
  for (;;) {
    try {
      const res = await post(path, body);
      const json = ((await res.json().catch(() => ({}))) ?? {}) as Record<string, unknown>;
      return { res, json };
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 409 && err.code === "session_not_ready") || Date.now() + wait > deadline) throw err;
      await delay(wait);
      wait = Math.min(wait * 2, 2000);
    }
  }
}

/** The session is gone for good on the agent: a new message needs a new session. */
export function isSessionGone(err: unknown): boolean {
  return (
    err instanceof ApiError &&
    (err.status === 404 || err.status === 410 || (err.status === 409 && ["session_not_active", "session_stranded", "session_expired"].includes(err.code)))
  );
}

/** Starts a new session with a message, or sends the next message to an existing one. */
export async function sendMessage(session: ClientSessionState | null, text: string, clientContext: string, model?: string, files?: FilePart[], chatId?: string): Promise<SentTurn> {
  // With files, `message` is eve's array of text and file parts.
  const message = messageOf(text, files);
  // `model` is eve-chat's extension (docs/eve-protocol.md): sent only when there is a choice.
  const body = model ? { message, clientContext, model } : { message, clientContext };
  if (session) {
    try {
      const { json } = await postTurn(sessionPath(session.sessionId), body);
      return { session, deliveryId: typeof json.deliveryId === "string" && json.deliveryId ? json.deliveryId : undefined, created: false };
    } catch (err) {
      // The agent lost or retired the chat's session (unknown, reset, failed, stranded): start
      // a new one for this message; the chat's log simply continues.
      if (!isSessionGone(err)) throw err;
    }
  }
  // `chatId` (eve-chat's extension, docs/projects.md): the new session's chat, so that its
  // first turn already has the chat's project instructions and files.
  const { res, json } = await postTurn("/eve/v1/session", chatId ? { ...body, chatId } : body);
  const sessionId = (typeof json.sessionId === "string" && json.sessionId) || res.headers.get("x-eve-session-id")?.trim();
  if (!sessionId) throw new ApiError(502, "upstream", "The agent did not return a session id.");
  return { session: { sessionId, streamIndex: 0 }, created: true };
}

/**
 * Retires a session for good (eve's `reset`): before its chat is deleted, so that an eve agent
 * that is not ours (eve_upstream_url) forgets it too. Our own agent's rows go with the chat row
 * in any case, so this is best effort.
 */
export async function resetSession(sessionId: string): Promise<void> {
  await post(`${sessionPath(sessionId)}/reset`, { reason: "chat deleted" });
}

/** Answers open input requests (questions, approvals) of the session. */
export async function respond(sessionId: string, inputResponses: InputResponse[], clientContext?: string): Promise<void> {
  await postTurn(sessionPath(sessionId), clientContext === undefined ? { inputResponses } : { inputResponses, clientContext });
}

/**
 * Asks eve to cancel the running turn (`turnId` guards against cancelling a newer one). eve
 * answers `accepted` (202) or `no_active_turn` (200); both are success. The turn then ends on
 * the stream with `turn.cancelled` and `session.waiting` — and a sign-in the turn was held on
 * is declined (`authorization.completed` with `outcome: "declined"`).
 */
export async function cancelTurn(sessionId: string, turnId?: string): Promise<string> {
  const res = await post(`${sessionPath(sessionId)}/cancel`, turnId === undefined ? undefined : { turnId });
  const json = (await res.json().catch(() => ({}))) as { status?: string };
  return json.status ?? "accepted";
}

// ---------------------------------------------------------------------------------------------
// The stream

export interface FollowOptions {
  /** Absolute cursor: how many events of this session's stream were consumed already. */
  startIndex: number;
  signal: AbortSignal;
  /**
   * Called with each event and the cursor after it (its index + 1). Returning `false` stops
   * reading. The stream also ends after `session.failed` / `session.completed`.
   */
  onEvent(event: EveEvent, cursor: number): boolean | void;
  /** Reconnects in a row that bring no event before giving up (eve: 5; Infinity to follow forever). */
  maxIdleReconnects?: number;
  /** Opening attempts per connection on retryable statuses. */
  openAttempts?: number;
  /** No byte for this long: the connection is considered dropped (eve: 15 s; heartbeats come every 10 s). */
  idleTimeoutMs?: number;
}

export function streamUrl(sessionId: string, startIndex: number): string {
  const q = new URLSearchParams();
  if (startIndex >= 0) q.set("streamControlVersion", STREAM_CONTROL_VERSION);
  if (startIndex !== 0) q.set("startIndex", String(startIndex));
  const s = q.toString();
  return `${sessionPath(sessionId)}/stream${s ? `?${s}` : ""}`;
}

/**
 * Follows the session's stream from `startIndex`, reconnecting from the cursor when a response
 * ends (lease renewal: at once; a drop: with backoff 250 ms → 4 s). Resolves with the final
 * cursor when `onEvent` stops it, the session ended, or the signal aborted; rejects with
 * STREAM_DISCONNECTED after `maxIdleReconnects` reconnects in a row brought nothing, or with
 * the HTTP error when the stream cannot be opened.
 */
export async function followStream(sessionId: string, opts: FollowOptions): Promise<number> {
  const maxIdle = opts.maxIdleReconnects ?? 5;
  let cursor = opts.startIndex;
  let backoff = 250;
  let idle = 0;
  let first = true;
  for (;;) {
    if (opts.signal.aborted) return cursor;
    let res: Response;
    try {
      res = await openStream(sessionId, cursor, opts);
    } catch (err) {
      if (opts.signal.aborted) return cursor;
      throw err;
    }
    let version: string;
    try {
      version = checkStreamVersion(res.headers);
    } catch (err) {
      res.body?.cancel().catch(() => undefined);
      throw err;
    }
    let received = false;
    let leaseEnded = false;
    let stop = false;
    try {
      await readLines(res, opts.signal, opts.idleTimeoutMs ?? 15_000, (line) => {
        const value = parseLine(line);
        if (value === undefined) return true;
        if (isLeaseEnded(value)) {
          leaseEnded = true;
          return true;
        }
        if (!value || typeof value !== "object" || typeof (value as EveEvent).type !== "string") return true;
        const event = normalizeEvent(version, value as EveEvent);
        cursor += 1;
        received = true;
        idle = 0;
        backoff = 250;
        if (opts.onEvent(event, cursor) === false || event.type === "session.failed" || event.type === "session.completed") {
          stop = true;
          return false;
        }
        return true;
      });
    } catch {
      // A dropped connection: reconnect below.
    }
    if (stop || opts.signal.aborted) return cursor;
    if (leaseEnded) continue;
    if (!received && !first && ++idle >= maxIdle) throw new ApiError(0, "stream_disconnected", STREAM_DISCONNECTED);
    first = false;
    await delay(backoff, opts.signal).catch(() => undefined);
    backoff = Math.min(backoff * 2, 4000);
  }
}

async function openStream(sessionId: string, startIndex: number, opts: FollowOptions): Promise<Response> {
  const attempts = opts.openAttempts ?? 6;
  let wait = 250;
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(streamUrl(sessionId, startIndex), {
        credentials: "same-origin",
        cache: "no-store",
        headers: { accept: "application/x-ndjson" },
        signal: opts.signal,
      });
    } catch (err) {
      if (opts.signal.aborted || attempt >= attempts - 1) throw err instanceof ApiError ? err : new ApiError(0, "network", STREAM_DISCONNECTED);
      await delay(wait, opts.signal);
      wait = Math.min(wait * 2, 5000);
      continue;
    }
    if (res.ok && res.body) return res;
    const err = res.ok ? new ApiError(502, "upstream", "The stream had no body.") : await errorFrom(res);
    const retryable = RETRYABLE_STREAM_STATUSES.has(res.status) && err.code !== "session_stranded";
    if (!retryable || attempt >= attempts - 1) throw err;
    await delay(wait, opts.signal);
    wait = Math.min(wait * 2, 5000);
  }
}

/** eve's client fails on a missing or unsupported `x-eve-stream-version` instead of guessing. */
export function checkStreamVersion(headers: Headers): string {
  const v = headers.get(STREAM_VERSION_HEADER);
  if (v !== null && SUPPORTED_STREAM_VERSIONS.has(v)) return v;
  throw new ApiError(502, "stream_version", v === null ? "The agent's stream has no x-eve-stream-version header." : `The agent's stream version ${v} is not supported.`);
}

async function readLines(res: Response, signal: AbortSignal, idleTimeoutMs: number, onLine: (line: string) => boolean): Promise<void> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const cancel = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener("abort", cancel, { once: true });
  let buffer = "";
  try {
    for (;;) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const chunk = await Promise.race([
        reader.read(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("idle")), idleTimeoutMs);
        }),
      ]).finally(() => clearTimeout(timer));
      if (chunk.done) break;
      buffer += chunk.value;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (line && !onLine(line)) return;
      }
    }
    if (buffer.trim()) onLine(buffer.trim());
  } finally {
    signal.removeEventListener("abort", cancel);
    cancel();
  }
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

function isLeaseEnded(v: unknown): boolean {
  const o = v as { $eve?: unknown; version?: unknown } | null;
  return !!o && typeof o === "object" && o.$eve === "stream.lease-ended" && o.version === 1;
}

/**
 * eve's `normalizeMessageStreamEvent`: v21–v24 streams carry cumulative `messageSoFar` /
 * `reasoningSoFar` and offset-based tool input; v25+ only deltas. Also names unnamed skill loads.
 */
export function normalizeEvent(version: string, e: EveEvent): EveEvent {
  const legacy = Number(version) < 25;
  const d = e.data;
  if (legacy && e.type === "message.appended") {
    return { data: { messageDelta: d.messageDelta, sequence: d.sequence, stepIndex: d.stepIndex, turnId: d.turnId }, meta: e.meta, type: e.type };
  }
  if (legacy && e.type === "reasoning.appended") {
    return { data: { reasoningDelta: d.reasoningDelta, sequence: d.sequence, stepIndex: d.stepIndex, turnId: d.turnId }, meta: e.meta, type: e.type };
  }
  if (legacy && e.type === "action.input.appended") {
    return {
      data: { callId: d.callId, inputTextDelta: d.inputTextDelta, sequence: d.sequence, stepIndex: d.stepIndex, toolName: d.toolName, turnId: d.turnId },
      meta: e.meta,
      type: e.type,
    };
  }
  if (e.type === "actions.requested" && Array.isArray(d?.actions) && d.actions.some(unnamedSkill)) {
    return {
      ...e,
      data: {
        ...d,
        actions: d.actions.map((a: { kind?: string; name?: unknown; input?: { skill?: unknown } }) =>
          unnamedSkill(a) ? { ...a, name: typeof a.input?.skill === "string" ? a.input.skill : "load_skill" } : a,
        ),
      },
    };
  }
  return e;
}

function unnamedSkill(a: { kind?: string; name?: unknown }): boolean {
  return a.kind === "load-skill" && typeof a.name !== "string";
}

export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason ?? new DOMException("aborted", "AbortError"));
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        reject(signal.reason ?? new DOMException("aborted", "AbortError"));
      },
      { once: true },
    );
  });
}
