// The eve session API over same-origin /eve/v1/* (served by the agent through eve-proxy):
// start or continue a session, read its NDJSON stream from an index, interrupt a turn.

import { ApiError, errorFrom, request } from "./api";
import type { ClientSessionState, EveEvent } from "./types";

/** Opening a stream is retried on these statuses (seed): the session may not be readable yet. */
export const RETRYABLE_STREAM_STATUSES = new Set([404, 409, 425, 500, 502, 503, 504]);
const OPEN_ATTEMPTS = 4;

export const STREAM_DISCONNECTED = "Stream disconnected before the response completed.";

/** Starts a new session with a message, or sends the next message to an existing one. */
export async function sendMessage(
  session: ClientSessionState | null,
  message: string,
  clientContext: string,
): Promise<ClientSessionState> {
  const path = session ? `/eve/v1/session/${encodeURIComponent(session.sessionId)}` : "/eve/v1/session";
  let res: Response;
  try {
    res = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ message, clientContext }),
    });
  } catch {
    throw new ApiError(0, "network", "The server could not be reached. Check your connection.");
  }
  // The chat's session is gone on the agent (a reset store): start a new one for this message.
  if (res.status === 404 && session) return sendMessage(null, message, clientContext);
  if (!res.ok) throw await errorFrom(res);
  const body = (await res.json().catch(() => ({}))) as Partial<ClientSessionState>;
  const sessionId = res.headers.get("x-eve-session-id") ?? body.sessionId ?? session?.sessionId;
  if (!sessionId) throw new ApiError(502, "upstream", "The agent did not return a session id.");
  const streamIndex = typeof body.streamIndex === "number" ? body.streamIndex : session?.streamIndex ?? 0;
  return { sessionId, streamIndex };
}

/** Answers an `input.requested`; returns where the continued turn's events start. */
export async function answerInput(session: ClientSessionState, requestId: string, value: string): Promise<ClientSessionState> {
  const body = await request<Partial<ClientSessionState>>("POST", `/eve/v1/session/${encodeURIComponent(session.sessionId)}`, {
    inputResponses: [{ requestId, value }],
  });
  return { sessionId: session.sessionId, streamIndex: typeof body?.streamIndex === "number" ? body.streamIndex : session.streamIndex };
}

/** Tells the agent that the user declined an authorization (ends its wait). */
export function declineAuthorization(sessionId: string, authorizationId: string): Promise<unknown> {
  return request("POST", `/eve/v1/session/${encodeURIComponent(sessionId)}`, {
    inputResponses: [{ requestId: authorizationId, outcome: "declined" }],
  });
}

export function interrupt(sessionId: string): Promise<unknown> {
  return request("POST", `/eve/v1/session/${encodeURIComponent(sessionId)}/interrupt`, {});
}

/**
 * Reads the session's stream from `startIndex`, calling `onEvent` for each event in order, and
 * resolves when the stream ends (the caller decides whether the turn settled). Opening the
 * stream is retried on transient statuses; lines that are not events (blank keep-alives, objects
 * without an index) are skipped; events before `startIndex` are never delivered twice.
 */
export async function readStream(
  sessionId: string,
  startIndex: number,
  onEvent: (event: EveEvent) => boolean | void,
  signal: AbortSignal,
): Promise<void> {
  const url = `/eve/v1/session/${encodeURIComponent(sessionId)}/stream?startIndex=${startIndex}`;
  let res: Response | null = null;
  for (let attempt = 0; attempt < OPEN_ATTEMPTS; attempt++) {
    res = await fetch(url, { credentials: "same-origin", headers: { accept: "application/x-ndjson" }, signal });
    if (res.ok || !RETRYABLE_STREAM_STATUSES.has(res.status) || attempt === OPEN_ATTEMPTS - 1) break;
    await delay(250 * 2 ** attempt, signal);
  }
  if (!res || !res.ok) throw res ? await errorFrom(res) : new ApiError(0, "network", STREAM_DISCONNECTED);
  if (!res.body) return;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let next = startIndex;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let newline: number;
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        const event = parseLine(line);
        if (!event || (event.index as number) < next) continue;
        next = (event.index as number) + 1;
        if (onEvent(event) === false) return;
      }
    }
  } finally {
    reader.cancel().catch(() => {
      // The stream is already closed or aborted: nothing to release.
    });
  }
}

function parseLine(line: string): EveEvent | null {
  if (!line || line.startsWith(":")) return null;
  try {
    const v = JSON.parse(line.startsWith("data:") ? line.slice(5) : line);
    if (v && typeof v === "object" && typeof v.type === "string" && typeof v.index === "number") return v as EveEvent;
  } catch {
    // A partial or foreign line: skip it.
  }
  return null;
}

export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      reject(signal.reason ?? new DOMException("aborted", "AbortError"));
    }, { once: true });
  });
}
