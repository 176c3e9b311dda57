// Shared configuration and helpers of the eve client suite (client.test.mjs) and the side-by-side
// harness (side-by-side.mjs). Configuration comes from the environment only:
//
//   EVE_BASE_URL       the app under test (default http://127.0.0.1:2000, the eve 0.80.1 reference)
//   EVE_HEADERS        extra request headers, a JSON object, sent on every request (POSTs, streams,
//                      health, info), e.g. {"origin":"http://127.0.0.1:3000","sec-fetch-site":"same-origin","cookie":"…"}
//   EVE_EXPECT_REPLY   the plain reply text (default "Hello from the reference model.", what the
//                      fake model says); set it to "" to accept any non-empty reply
//   EVE_PROMPT_*       the prompts that trigger behaviours (see PROMPTS below)
import { setTimeout as sleep } from "node:timers/promises";

export const BASE_URL = trimSlash(process.env.EVE_BASE_URL || "http://127.0.0.1:2000");

export const EXTRA_HEADERS = parseHeaders(process.env.EVE_HEADERS, "EVE_HEADERS");

export const EXPECT_REPLY = process.env.EVE_EXPECT_REPLY ?? "Hello from the reference model.";

/** Prompts that make the model (the reference's fake model, or our demo model) do something. */
export const PROMPTS = {
  plain: process.env.EVE_PROMPT_PLAIN || "hi",
  followUp: process.env.EVE_PROMPT_FOLLOW_UP || "and again",
  // fake model: 20 chunks 200 ms apart
  slow: process.env.EVE_PROMPT_SLOW || "please be slow",
  // fake model: one get_time call
  tool: process.env.EVE_PROMPT_TOOL || "use the tool please",
  // fake model: one eve__skill({"name":"release-notes"}) call, when the agent offers skills
  // (run-all gives both agents the skill of tests/eve-reference/agent/skills/release-notes)
  skill: process.env.EVE_PROMPT_SKILL || "please use the skill release-notes",
  // fake model: one get_weather({"city":"Paris"}) / recall({}) call (issue 23: gated by approval)
  approvalAlways: process.env.EVE_PROMPT_APPROVAL_ALWAYS || "approval always please",
  approvalOnce: process.env.EVE_PROMPT_APPROVAL_ONCE || "approval once please",
  // fake model: get_weather and recall in one response
  approvalBoth: process.env.EVE_PROMPT_APPROVAL_BOTH || "approval both please",
  // fake model: HTTP 400 from the provider -> step.failed, turn.failed (terminal), session.failed
  fail: process.env.EVE_PROMPT_FAIL || "please fail",
  // our demo model: ask_user -> input.requested
  question: process.env.EVE_PROMPT_QUESTION || "ask me to choose a city",
  // our demo model calling a tool of the MCP server "notes" that wants a sign-in (run-all
  // starts tests/mcp-servers/protected.mjs for client/demo) -> authorization.required
  authorization: process.env.EVE_PROMPT_AUTHORIZATION || 'call tool notes__read_notes {"topic":"the roadmap"}',
};

/** Tool names that raise an `input.requested` question (eve's built-in, ours). */
export const QUESTION_TOOLS = new Set(
  (process.env.EVE_QUESTION_TOOLS || "ask_question,ask_user").split(",").map((s) => s.trim()).filter(Boolean),
);

/** A syntactically valid session id that no server ever issued (the one the recordings use). */
export const UNKNOWN_SESSION_ID = "wrun_01M8R3RVBZ76Z0CSYSXBR00000";

export function trimSlash(url) {
  return url.replace(/\/+$/, "");
}

export function parseHeaders(text, name) {
  if (!text) return {};
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${name} must be a JSON object of header names to strings: ${error.message}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new Error(`${name} must be a JSON object of header names to strings`);
  }
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== "string") throw new Error(`${name}: header ${k} must be a string`);
  }
  return value;
}

/** fetch with the configured extra headers (the caller's own headers win) and a timeout. */
export async function rawFetch(url, init = {}, { headers = EXTRA_HEADERS, timeoutMs = 15_000 } = {}) {
  const merged = new Headers(headers);
  for (const [k, v] of new Headers(init.headers ?? {})) merged.set(k, v);
  return await fetch(url, { ...init, headers: merged, signal: init.signal ?? AbortSignal.timeout(timeoutMs) });
}

/** Parses an NDJSON body: one JSON value per non-empty line (eve's body starts with an empty line). */
export function parseNdjson(text) {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l));
}

/** GET /eve/v1/info, parsed loosely (tool and connection names only), or undefined. */
export async function agentCapabilities(baseUrl = BASE_URL, headers = EXTRA_HEADERS) {
  let res;
  try {
    res = await rawFetch(`${baseUrl}/eve/v1/info`, {}, { headers });
  } catch {
    return undefined;
  }
  if (!res.ok) return undefined;
  let info;
  try {
    info = await res.json();
  } catch {
    return undefined;
  }
  const names = (list) => (Array.isArray(list) ? list.map((t) => t?.name).filter((n) => typeof n === "string") : []);
  const tools = Array.isArray(info?.tools)
    ? names(info.tools)
    : [...names(info?.tools?.static), ...names(info?.tools?.dynamic)];
  // eve's agent-info names a connection by `connectionName` (tools and skills by `name`).
  const connectionNames = (list) =>
    Array.isArray(list) ? list.map((c) => c?.connectionName ?? c?.name).filter((n) => typeof n === "string") : [];
  const connections = Array.isArray(info?.connections)
    ? connectionNames(info.connections)
    : [...names(info?.connections?.static), ...names(info?.connections?.dynamic), ...names(info?.connections?.entries)];
  return { tools, connections, info };
}

/** Resolves `promise`, or rejects after `ms` with a message naming `what`. */
export async function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `fn` until it returns a truthy value, or throws after `ms`. */
export async function eventually(fn, ms, what, intervalMs = 150) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    last = await fn();
    if (last) return last;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

export const SESSION_BOUNDARIES = new Set(["session.waiting", "session.failed", "session.completed"]);
