// Same-origin JSON calls to the app API (/api/*). Failures become ApiError with the server's
// error envelope `{ error: { code, message } }` (or eve's `{ ok: false, error, code }` from
// /eve/v1/*) so that the UI can toast a clear message.

import type {
  ChatDetail,
  ChatPage,
  ChatSummary,
  ClientSessionState,
  EveEvent,
  IndexedEvent,
  McpConnectionInfo,
  SessionResponse,
  SetupStatus,
} from "./types";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfter: number | null = null,
    /** A 409 on an event write: the length of the chat's stored log now. */
    readonly currentLength: number | null = null,
  ) {
    super(message);
  }
}

export async function errorFrom(res: Response): Promise<ApiError> {
  let code = "http_" + res.status;
  let message = `Request failed (${res.status}).`;
  let currentLength: number | null = null;
  try {
    const body = await res.json();
    if (typeof body?.currentLength === "number") currentLength = body.currentLength;
    if (body?.error?.message) {
      // The app's envelope: { error: { code, message } }.
      code = String(body.error.code ?? code);
      message = String(body.error.message);
    } else if (typeof body?.error === "string") {
      // eve's: { ok: false, error: "…", code? }.
      code = typeof body.code === "string" ? body.code : code;
      message = body.error;
    }
  } catch {
    // Not JSON (a proxy's error page): keep the generic message.
  }
  // The wait of a 429 is added where the error is shown, in the UI's language (i18n describeError).
  const retry = Number(res.headers.get("retry-after"));
  return new ApiError(res.status, code, message, Number.isFinite(retry) && retry > 0 ? retry : null, currentLength);
}

export async function request<T>(method: string, path: string, body?: unknown, init: RequestInit = {}): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: body === undefined ? { accept: "application/json" } : { accept: "application/json", "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      ...init,
    });
  } catch {
    throw new ApiError(0, "network", "The server could not be reached. Check your connection.");
  }
  if (!res.ok) throw await errorFrom(res);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** `?k=v&…` of the params that have a value (empty, null and undefined are left out). */
export function query(params: Record<string, string | number | null | undefined>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== "")
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`);
  return parts.length ? `?${parts.join("&")}` : "";
}

const chatPath = (id: string) => `/api/chats/${encodeURIComponent(id)}`;

export const api = {
  connections: () => request<{ connections: McpConnectionInfo[] }>("GET", "/eve/v1/connections"),
  revokeConnection: (name: string) => request<{ connected: boolean }>("POST", `/eve/v1/connections/${encodeURIComponent(name)}/revoke`, {}),
  setup: () => request<SetupStatus>("GET", "/api/setup"),
  session: () => request<SessionResponse>("GET", "/api/auth/session"),
  login: (password: string) => request<SessionResponse>("POST", "/api/auth/login", { password }),
  logout: () => request<SessionResponse>("POST", "/api/auth/logout", {}),
  listChats: (cursor: string | null, limit = 20, q?: string, signal?: AbortSignal) =>
    request<ChatPage>(
      "GET",
      `/api/chats?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}${q ? `&q=${encodeURIComponent(q)}` : ""}`,
      undefined,
      { signal },
    ),
  /** Every pinned chat, most recently pinned first (one page). */
  listPinned: () => request<ChatPage>("GET", "/api/chats?pinned=1"),
  setPinned: (id: string, pinned: boolean) => request<{ chat: ChatSummary; pinned: boolean }>(pinned ? "PUT" : "DELETE", `${chatPath(id)}/pin`),
  exportUrl: (id: string, format: "md" | "json") => `${chatPath(id)}/export?format=${format}`,
  createChat: (pendingUserMessage?: string) =>
    request<{ chat: ChatSummary }>("POST", "/api/chats", pendingUserMessage ? { pendingUserMessage } : {}),
  /** The latest window of the chat's log, or with `before` (a window's `beforeCursor`) the one before it. */
  getChat: (id: string, signal?: AbortSignal, page: { before?: string | null; limit?: number } = {}) =>
    request<ChatDetail>("GET", `${chatPath(id)}${query({ before: page.before, limit: page.limit })}`, undefined, { signal }),
  renameChat: (id: string, title: string) => request<{ chat: ChatSummary }>("PATCH", chatPath(id), { title }),
  deleteChat: (id: string) => request<unknown>("DELETE", chatPath(id)),
  // Event writes carry the log length they extend (`baseLength`): a 409 means another tab or
  // client wrote since, and the runtime re-reads the chat before writing again.
  appendEvents: (id: string, events: IndexedEvent[], baseLength: number) =>
    request<{ written: number; lastEventIndex: number | null }>("POST", `${chatPath(id)}/events`, { events, baseLength }),
  /** `events` are the log from slot `fromIndex` on (a window of a long chat); the slots before it stay. */
  saveSnapshot: (id: string, events: EveEvent[], session: ClientSessionState | null, baseLength: number, fromIndex = 0) =>
    request<{ chat: ChatSummary }>("PUT", `${chatPath(id)}/snapshot`, fromIndex ? { events, session, baseLength, fromIndex } : { events, session, baseLength }),
  markPending: (id: string, message: string) => request<{ chat: ChatSummary }>("PUT", `${chatPath(id)}/pending`, { message }),
  /** The message was not accepted: it must not be sent by the next page load. */
  clearPending: (id: string, message: string) => request<unknown>("DELETE", `${chatPath(id)}/pending`, { message }),
  saveSession: (id: string, session: ClientSessionState | null) => request<unknown>("PUT", `${chatPath(id)}/session`, { session }),
  skipAuthorization: (id: string, events: IndexedEvent[], session: ClientSessionState | null, baseLength: number) =>
    request<{ chat: ChatSummary }>("POST", `${chatPath(id)}/authorization/skip`, { events, session, baseLength }),
};
