// Side by side: the same scripted raw HTTP requests (plain fetch, not eve's client) against two
// base URLs — the eve 0.80.1 reference and the app under test — with every answer and each
// session's complete stream (read with follow=false once the turn settled) normalised so the two
// records can be compared with deepStrictEqual.
//
//   EVE_REFERENCE_URL (default http://127.0.0.1:2000)   EVE_REFERENCE_HEADERS (JSON, default {})
//   EVE_BASE_URL      (default http://127.0.0.1:2000)   EVE_HEADERS           (JSON, default {})
//
// Normalisation replaces what legitimately differs between two runs or two servers and nothing
// else: session ids, delivery ids, tool call ids and request ids become numbered placeholders in
// order of appearance (so "the same id again" is still checked); event ids, times, trace
// coordinates, usage numbers, the model id and the agent's name become fixed markers after their
// format is checked; adjacent deltas of one block are merged (eve itself may coalesce them).
// Deliberate differences (differences.mjs) are applied on top, each with its reason.
import { BASE_URL, EXTRA_HEADERS, SESSION_BOUNDARIES, UNKNOWN_SESSION_ID, PROMPTS, eventually, parseHeaders, parseNdjson, rawFetch, trimSlash } from "./lib.mjs";
import { setTimeout as sleep } from "node:timers/promises";

export const REFERENCE_URL = trimSlash(process.env.EVE_REFERENCE_URL || "http://127.0.0.1:2000");
export const REFERENCE_HEADERS = parseHeaders(process.env.EVE_REFERENCE_HEADERS, "EVE_REFERENCE_HEADERS");
export const CANDIDATE_URL = BASE_URL;
export const CANDIDATE_HEADERS = EXTRA_HEADERS;

const EVENT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;
const WRUN_ID = /^wrun_[0-9A-HJKMNP-TV-Z]{26}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const DELTA_FIELD = {
  "message.appended": "messageDelta",
  "reasoning.appended": "reasoningDelta",
  "action.input.appended": "inputTextDelta",
};
const SETTLE_MS = 30_000;

/** Placeholders for values that are different on every run but must keep their identity. */
class Ids {
  #maps = new Map();
  get(kind, value, format) {
    let map = this.#maps.get(kind);
    if (!map) this.#maps.set(kind, (map = new Map()));
    if (!map.has(value)) {
      const ok = format === undefined || format.test(value);
      map.set(value, `<${kind}:${map.size + 1}${ok ? "" : ":unexpected-format"}>`);
    }
    return map.get(value);
  }
  has(kind, value) {
    return this.#maps.get(kind)?.has(value) ?? false;
  }
}

/**
 * Records one scripted run against one base URL: `steps` (each request's status, selected headers
 * and JSON body) and `streams` (each session's full event list and stream headers), raw.
 */
export class Recorder {
  constructor(baseUrl, headers = {}) {
    this.baseUrl = trimSlash(baseUrl);
    this.headers = headers;
    this.steps = [];
    this.streams = {};
    this.sessions = [];
  }

  async request(label, method, path, { body, json, contentType, compare = "full" } = {}) {
    const init = { method, headers: {} };
    if (json !== undefined) {
      init.body = JSON.stringify(json);
      init.headers["content-type"] = "application/json";
    } else if (body !== undefined) {
      init.body = body;
      init.headers["content-type"] = contentType ?? "application/json";
    }
    const res = await rawFetch(`${this.baseUrl}${path}`, init, { headers: this.headers });
    const text = await res.text();
    let parsed;
    try {
      parsed = text.length ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    const step = {
      label,
      request: `${method} ${path.replace(/wrun_[0-9A-Z]+/g, "…")}`,
      status: res.status,
      compare,
      headers: {
        "content-type": res.headers.get("content-type"),
        "cache-control": res.headers.get("cache-control"),
        "x-eve-session-id": res.headers.get("x-eve-session-id"),
      },
      json: parsed,
      isJson: parsed !== undefined,
    };
    this.steps.push(step);
    if (parsed && typeof parsed.sessionId === "string" && !this.sessions.includes(parsed.sessionId)) {
      this.sessions.push(parsed.sessionId);
    }
    return step;
  }

  post(label, path, json, options = {}) {
    return this.request(label, "POST", path, { json, ...options });
  }

  /**
   * POST, repeated while eve answers 409 `session_not_ready` (its retryable refusal: a run that
   * has ended its session but not yet its workflow); only the settled answer is recorded.
   */
  async postSettled(label, path, json, ms = SETTLE_MS) {
    const deadline = Date.now() + ms;
    for (;;) {
      const step = await this.post(label, path, json);
      if (step.status !== 409 || step.json?.code !== "session_not_ready" || Date.now() > deadline) return step;
      this.steps.pop();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** POST /eve/v1/session; returns the new session id. */
  async create(label, message) {
    const step = await this.post(label, "/eve/v1/session", message === undefined ? undefined : { message });
    if (step.status !== 202 || typeof step.json?.sessionId !== "string") {
      throw new Error(`${this.baseUrl}: ${label}: create answered ${step.status} ${JSON.stringify(step.json)}`);
    }
    return step.json.sessionId;
  }

  /** Reads a session's stream with follow=false (raw text and headers). */
  async read(sessionId, startIndex = 0) {
    const qs = startIndex === 0 ? "follow=false" : `startIndex=${startIndex}&follow=false`;
    const res = await rawFetch(`${this.baseUrl}/eve/v1/session/${sessionId}/stream?${qs}`, {}, { headers: this.headers });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${this.baseUrl}: stream of ${sessionId} answered ${res.status}: ${text}`);
    return { res, text, events: parseNdjson(text) };
  }

  /** Polls the recorded history until `predicate(events)` holds. */
  async until(sessionId, predicate, what, ms = SETTLE_MS) {
    return await eventually(
      async () => {
        const { events } = await this.read(sessionId);
        return predicate(events) ? events : undefined;
      },
      ms,
      `${this.baseUrl}: ${what}`,
      100,
    );
  }

  /**
   * Waits until a following read of the session ends on its own. eve writes `session.failed`
   * before its workflow run has ended, and until the run ends it still accepts a message (202);
   * the follow stream closes when the run does, so this is the moment the session is over.
   */
  async ended(sessionId, ms = SETTLE_MS) {
    const res = await rawFetch(`${this.baseUrl}/eve/v1/session/${sessionId}/stream`, {}, { headers: this.headers, timeoutMs: ms });
    if (res.status !== 200) throw new Error(`${this.baseUrl}: stream of ${sessionId} answered ${res.status}`);
    await res.text();
  }

  /** Waits until the session has `n` session-level boundaries (waiting / failed / completed). */
  async settle(sessionId, n, what = `${n} session boundaries`) {
    return await this.until(sessionId, (events) => events.filter((e) => SESSION_BOUNDARIES.has(e.type)).length >= n, what);
  }

  /** Records the session's full stream (follow=false) under `name`. */
  async capture(name, sessionId) {
    const { res, text, events } = await this.read(sessionId);
    const tail = res.headers.get("x-eve-stream-tail-index");
    this.streams[name] = {
      headers: {
        "content-type": res.headers.get("content-type"),
        "cache-control": res.headers.get("cache-control"),
        "x-accel-buffering": res.headers.get("x-accel-buffering"),
        "x-eve-stream-version": res.headers.get("x-eve-stream-version"),
        "x-eve-stream-format": res.headers.get("x-eve-stream-format"),
        "x-eve-session-id": res.headers.get("x-eve-session-id"),
      },
      facts: {
        leadingEmptyLine: text.startsWith("\n"),
        endsWithNewline: text.endsWith("\n"),
        tailIndexHeader: tail === String(events.length - 1) ? "last event index" : tail,
        sessionIdHeaderMatches: res.headers.get("x-eve-session-id") === sessionId,
        uniqueEventIds: new Set(events.map((e) => e?.meta?.id)).size === events.length,
      },
      sessionId,
      events,
    };
    return events;
  }
}

/** Whether the session's last event parks its turn on a person (`turn.waiting`). */
function waitsOnInput(events) {
  return events.at(-1)?.type === "turn.waiting";
}

/** The requestId of the last `input.requested` in `events`. */
function openRequest(events) {
  return events.findLast((e) => e.type === "input.requested")?.data?.requests?.[0]?.requestId;
}

/**
 * The scripted scenarios. Each drives a Recorder; `tolerate` lists scenario-specific
 * normalisations (see normalize()).
 */
export const SCENARIOS = {
  "plain turn": {
    async run(r) {
      const sid = await r.create("create with a message", PROMPTS.plain);
      await r.settle(sid, 1);
      await r.capture("main", sid);
    },
  },

  "follow-up turn": {
    async run(r) {
      const sid = await r.create("create with a message", PROMPTS.plain);
      await r.settle(sid, 1);
      await r.post("send a follow-up", `/eve/v1/session/${sid}`, { message: PROMPTS.followUp });
      await r.settle(sid, 2);
      await r.capture("main", sid);
    },
  },

  "prewarmed session": {
    async run(r) {
      const sid = await r.create("create without a message");
      await r.capture("before the first message", sid);
      await r.post("first message", `/eve/v1/session/${sid}`, { message: PROMPTS.plain });
      await r.settle(sid, 1);
      await r.capture("main", sid);
    },
  },

  "tool turn": {
    tolerate: { toolValues: true },
    async run(r) {
      const sid = await r.create("create with a message", PROMPTS.plain);
      await r.settle(sid, 1);
      await r.post("send the tool prompt", `/eve/v1/session/${sid}`, { message: PROMPTS.tool });
      await r.settle(sid, 2);
      await r.capture("main", sid);
    },
  },

  // Issue 22: both agents have the skill `release-notes` (the reference in its agent/skills/,
  // eve-chat through /api/skills, posted by run-all): the same advertisement in
  // /eve/v1/info and the same load-skill action and result.
  "skill turn": {
    async run(r) {
      const info = await r.request("agent info: the skills", "GET", "/eve/v1/info");
      info.headers = {};
      info.json = { skills: info.json?.skills };
      const sid = await r.create("create with a message", PROMPTS.plain);
      await r.settle(sid, 1);
      await r.post("send the skill prompt", `/eve/v1/session/${sid}`, { message: PROMPTS.skill });
      await r.settle(sid, 2);
      await r.capture("main", sid);
    },
  },

  // Issue 23: tool approvals. The reference's get_weather is `always()` and recall `once()`;
  // run-all gives eve-chat's built-in tools of those names the same policies (tool_approvals).
  // After an approval the fake model says what the tool said: the stream shows what it read.
  "approval: approve, then deny with a note": {
    async run(r) {
      const sid = await r.create("create with the approval prompt", PROMPTS.approvalAlways);
      let events = await r.until(sid, waitsOnInput, "the approval request");
      await r.post("approve", `/eve/v1/session/${sid}`, { inputResponses: [{ requestId: openRequest(events), optionId: "approve" }] });
      await r.settle(sid, 1);
      await r.post("ask again", `/eve/v1/session/${sid}`, { message: PROMPTS.approvalAlways });
      events = await r.until(sid, (e) => e.filter((x) => x.type === "turn.waiting").length >= 2, "the second request");
      await r.post("deny with a note", `/eve/v1/session/${sid}`, {
        inputResponses: [{ requestId: openRequest(events), optionId: "cancel", text: " not today " }],
      });
      await r.settle(sid, 2);
      await r.capture("main", sid);
    },
  },

  "approval: a message past it, a message naming an option, a cancel": {
    async run(r) {
      const sid = await r.create("create with the approval prompt", PROMPTS.approvalAlways);
      await r.until(sid, waitsOnInput, "the approval request");
      await r.post("send a message past it", `/eve/v1/session/${sid}`, { message: PROMPTS.plain });
      await r.settle(sid, 1);
      await r.post("ask again", `/eve/v1/session/${sid}`, { message: PROMPTS.approvalAlways });
      await r.until(sid, (e) => e.filter((x) => x.type === "turn.waiting").length >= 2, "the second request");
      await r.post("answer by a message", `/eve/v1/session/${sid}`, { message: "approve" });
      await r.settle(sid, 2);
      await r.post("ask a third time", `/eve/v1/session/${sid}`, { message: PROMPTS.approvalAlways });
      await r.until(sid, (e) => e.filter((x) => x.type === "turn.waiting").length >= 3, "the third request");
      await r.post("cancel the turn", `/eve/v1/session/${sid}/cancel`);
      await r.settle(sid, 3);
      await r.capture("main", sid);
    },
  },

  "approval: two calls of one step, then a reset while one waits": {
    async run(r) {
      const sid = await r.create("create with the two-call prompt", PROMPTS.approvalBoth);
      const events = await r.until(sid, waitsOnInput, "the approval requests");
      const [first, second] = events.findLast((e) => e.type === "input.requested").data.requests.map((q) => q.requestId);
      await r.post("approve the first", `/eve/v1/session/${sid}`, { inputResponses: [{ requestId: first, optionId: "approve" }] });
      await r.until(sid, (e) => e.filter((x) => x.type === "turn.waiting").length >= 2, "parked again");
      await r.post("deny the second", `/eve/v1/session/${sid}`, { inputResponses: [{ requestId: second, optionId: "cancel" }] });
      await r.settle(sid, 1);
      await r.post("ask again", `/eve/v1/session/${sid}`, { message: PROMPTS.approvalAlways });
      await r.until(sid, (e) => e.filter((x) => x.type === "turn.waiting").length >= 3, "the third request");
      await r.post("reset while it waits", `/eve/v1/session/${sid}/reset`, { reason: "Start over" });
      await r.until(sid, (e) => e.some((x) => x.type === "session.completed"), "session.completed");
      await r.capture("main", sid);
    },
  },

  "approval: once per session": {
    async run(r) {
      const sid = await r.create("create with the once prompt", PROMPTS.approvalOnce);
      const events = await r.until(sid, waitsOnInput, "the approval request");
      await r.post("approve", `/eve/v1/session/${sid}`, { inputResponses: [{ requestId: openRequest(events), optionId: "approve" }] });
      await r.settle(sid, 1);
      await r.post("call it again", `/eve/v1/session/${sid}`, { message: PROMPTS.approvalOnce });
      await r.settle(sid, 2);
      await r.capture("main", sid);
    },
  },

  "cancel mid-turn": {
    tolerate: { partialText: true },
    async run(r) {
      const sid = await r.create("create with the slow prompt", PROMPTS.slow);
      await r.until(sid, (events) => events.filter((e) => e.type === "message.appended").length >= 2, "two appends");
      await r.post("cancel", `/eve/v1/session/${sid}/cancel`);
      await r.settle(sid, 1);
      await r.post("cancel when idle", `/eve/v1/session/${sid}/cancel`);
      await r.post("send after the cancel", `/eve/v1/session/${sid}`, { message: PROMPTS.plain });
      await r.settle(sid, 2);
      await r.capture("main", sid);
    },
  },

  "model failure": {
    async run(r) {
      const sid = await r.create("create with a message", PROMPTS.plain);
      await r.settle(sid, 1);
      await r.post("send the failing prompt", `/eve/v1/session/${sid}`, { message: PROMPTS.fail });
      await r.until(sid, (events) => events.some((e) => e.type === "session.failed"), "session.failed");
      await r.ended(sid);
      await r.postSettled("send to the failed session", `/eve/v1/session/${sid}`, { message: PROMPTS.plain });
      await r.post("cancel the failed session", `/eve/v1/session/${sid}/cancel`);
      await r.post("clear the failed session", `/eve/v1/session/${sid}/clear`);
      await r.capture("main", sid);
    },
  },

  clear: {
    async run(r) {
      const sid = await r.create("create with a message", PROMPTS.plain);
      await r.settle(sid, 1);
      await r.post("clear", `/eve/v1/session/${sid}/clear`);
      await r.settle(sid, 2);
      await r.post("send after the clear", `/eve/v1/session/${sid}`, { message: PROMPTS.plain });
      await r.settle(sid, 3);
      await r.capture("main", sid);
    },
  },

  reset: {
    async run(r) {
      const sid = await r.create("create with a message", PROMPTS.plain);
      await r.settle(sid, 1);
      await r.post("reset", `/eve/v1/session/${sid}/reset`, { reason: "Start over" });
      await r.until(sid, (events) => events.some((e) => e.type === "session.completed"), "session.completed");
      await r.post("send after the reset", `/eve/v1/session/${sid}`, { message: PROMPTS.plain });
      await r.post("clear after the reset", `/eve/v1/session/${sid}/clear`);
      await r.post("compact after the reset", `/eve/v1/session/${sid}/compact`);
      await r.post("cancel after the reset", `/eve/v1/session/${sid}/cancel`);
      await r.post("reset after the reset", `/eve/v1/session/${sid}/reset`);
      await r.capture("main", sid);
    },
  },

  "error cases": {
    async run(r) {
      const u = UNKNOWN_SESSION_ID;
      const sid = await r.create("create a live session", PROMPTS.plain);
      await r.settle(sid, 1);
      const s = `/eve/v1/session/${sid}`;
      await r.post("send to an unknown session", `/eve/v1/session/${u}`, { message: "hi" });
      await r.post("send to a garbage session id", "/eve/v1/session/not-a-session", { message: "hi" });
      await r.request("stream of an unknown session", "GET", `/eve/v1/session/${u}/stream`);
      await r.request("stream of an unknown session, follow=false", "GET", `/eve/v1/session/${u}/stream?follow=false`);
      await r.request("stream with a bad startIndex", "GET", `${s}/stream?startIndex=abc`);
      await r.post("cancel an unknown session", `/eve/v1/session/${u}/cancel`);
      await r.post("clear an unknown session", `/eve/v1/session/${u}/clear`);
      await r.post("compact an unknown session", `/eve/v1/session/${u}/compact`);
      await r.post("reset an unknown session", `/eve/v1/session/${u}/reset`);
      await r.request("create with bad JSON", "POST", "/eve/v1/session", { body: "{bad json" });
      await r.request("send bad JSON", "POST", s, { body: "{bad json" });
      await r.request("send no body", "POST", s);
      await r.post("send an empty message", s, { message: "" });
      await r.post("send an empty object", s, {});
      await r.post("create with an empty message", "/eve/v1/session", { message: "" });
      await r.post("send message and inputResponses", s, {
        message: "hi",
        inputResponses: [{ requestId: "req_A", optionId: "approve" }],
      });
      await r.post("create with inputResponses", "/eve/v1/session", {
        inputResponses: [{ requestId: "req_A", optionId: "approve" }],
      });
      await r.post("send empty inputResponses", s, { inputResponses: [] });
      await r.post("send a JSON array", s, [1, 2]);
      await r.post("send a number as message", s, { message: 42 });
      await r.post("send a bad turnPolicy", s, { message: "hi", turnPolicy: "bogus" });
      await r.post("send a continuationToken", s, { message: "hi", continuationToken: "x" });
      await r.post("create with an unsupported part", "/eve/v1/session", { message: [{ type: "image" }] });
      await r.post("cancel with an empty turnId", `${s}/cancel`, { turnId: "" });
      await r.post("reset with an empty reason", `${s}/reset`, { reason: "" });
      await r.request("clear with bad JSON", "POST", `${s}/clear`, { body: "{bad" });
      // routes and methods that do not exist: the reference answers h3's 404 page, so only the
      // status is compared
      await r.request("GET the create route", "GET", "/eve/v1/session", { compare: "status" });
      await r.request("GET the send route", "GET", s, { compare: "status" });
      await r.request("GET the cancel route", "GET", `${s}/cancel`, { compare: "status" });
      await r.request("POST the stream route", "POST", `${s}/stream`, { compare: "status" });
      await r.request("an unknown route", "GET", "/eve/v1/nope", { compare: "status" });
      // eve reads the body as JSON whatever the content-type says
      await r.request("send with content-type text/plain", "POST", s, {
        body: JSON.stringify({ message: PROMPTS.plain }),
        contentType: "text/plain",
      });
      await r.settle(sid, 2);
      await r.capture("main", sid);
    },
  },
};

/** Runs one scenario against one base URL and returns its normalised record. */
export async function record(name, baseUrl, headers) {
  const scenario = SCENARIOS[name];
  if (!scenario) throw new Error(`no scenario ${name}`);
  const r = new Recorder(baseUrl, headers);
  await scenario.run(r);
  return normalize(r, scenario.tolerate ?? {});
}

/** The comparable form of a Recorder's run (see the header comment). */
export function normalize(r, tolerate = {}) {
  const ids = new Ids();
  for (const sid of r.sessions) ids.get("session", sid, WRUN_ID);
  const walk = (value, key) => normalizeValue(value, key, ids, tolerate);
  // streams first, so delivery ids are numbered in stream order
  const streams = {};
  for (const [name, stream] of Object.entries(r.streams)) {
    streams[name] = {
      session: ids.get("session", stream.sessionId, WRUN_ID),
      headers: { ...stream.headers, "x-eve-session-id": stream.facts.sessionIdHeaderMatches ? "<the session>" : stream.headers["x-eve-session-id"] },
      facts: stream.facts,
      events: partialText(mergeDeltas(stream.events), tolerate).map((e) => normalizeEvent(e, ids, tolerate)),
    };
  }
  const steps = r.steps.map((step) => {
    if (step.compare === "status") return { label: step.label, request: step.request, status: step.status };
    const headers = {
      "content-type": step.headers["content-type"],
      "cache-control": step.headers["cache-control"],
      "x-eve-session-id": step.headers["x-eve-session-id"] === null ? null : walk(step.headers["x-eve-session-id"], "sessionId"),
    };
    return {
      label: step.label,
      request: step.request,
      status: step.status,
      headers,
      body: step.isJson ? walk(step.json, undefined) : "<not JSON>",
    };
  });
  return { steps, streams };
}

function normalizeEvent(event, ids, tolerate) {
  const out = {};
  for (const [k, v] of Object.entries(event)) {
    if (k === "meta") out.meta = normalizeMeta(v, ids);
    else if (k === "data") out.data = normalizeValue(v, "data", ids, tolerate, event.type);
    else out[k] = v;
  }
  return out;
}

function normalizeMeta(meta, ids) {
  if (!meta || typeof meta !== "object") return meta;
  const out = {};
  for (const [k, v] of Object.entries(meta)) {
    if (k === "id") out.id = typeof v === "string" && EVENT_ID.test(v) ? "<evt_ULID>" : `<unexpected id ${JSON.stringify(v)}>`;
    else if (k === "at") out.at = typeof v === "string" && ISO_TIME.test(v) ? "<time>" : `<unexpected time ${JSON.stringify(v)}>`;
    else if (k === "deliveryIds" && Array.isArray(v)) out.deliveryIds = v.map((d) => ids.get("delivery", d, UUID));
    else out[k] = v;
  }
  return out;
}

const ID_KEYS = {
  sessionId: ["session", WRUN_ID],
  previousSessionId: ["session", WRUN_ID],
  continuationToken: ["session", WRUN_ID],
  deliveryId: ["delivery", UUID],
  callId: ["call"],
  toolCallId: ["call"],
  requestId: ["request"],
  attemptId: ["attempt"],
  candidateId: ["candidate"],
  taskId: ["task"],
  errorId: ["error", UUID],
};

function normalizeValue(value, key, ids, tolerate, eventType) {
  if (Array.isArray(value)) return value.map((v) => normalizeValue(v, undefined, ids, tolerate, eventType));
  if (value !== null && typeof value === "object") {
    if (key === "trace") return "<trace>";
    if (key === "usage") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typeof v === "number" ? "<n>" : v]));
    const out = {};
    for (const [k, v] of Object.entries(value)) {
      // eve's labels of skill loads are keyed by call id.
      if (key === "presentation") out[ids.get("call", k)] = normalizeValue(v, undefined, ids, tolerate, eventType);
      else if (key === "runtime" && (k === "agentId" || k === "agentName")) out[k] = "<agent>";
      else if (tolerate.toolValues && (k === "input" || k === "output") && eventType !== "message.received") out[k] = `<tool ${k}>`;
      else out[k] = normalizeValue(v, k, ids, tolerate, eventType);
    }
    return out;
  }
  if (typeof value === "string") {
    if (key && ID_KEYS[key]) {
      const [kind, format] = ID_KEYS[key];
      if (kind === "session" && !ids.has("session", value) && key === "continuationToken") return value;
      return ids.get(kind, value, format);
    }
    if (ids.has("session", value)) return ids.get("session", value);
    if (key === "modelId") return "<model>";
    if (tolerate.toolValues) {
      if (key === "toolName") return "<tool>";
      if (key === "inputTextDelta") return "<tool input text>";
      if ((key === "message" || key === "messageDelta") && /^The tool said: [\s\S]*\.$/.test(value)) return "The tool said: <tool output>.";
    }
    return value;
  }
  if (typeof value === "number" && key === "usageInputTokens") return "<n>";
  return value;
}

/**
 * With `tolerate.partialText`, the text a cancelled turn streamed before the cancel (how much
 * depends on timing) becomes a marker; the rest of the turn's structure stays compared.
 */
function partialText(events, tolerate) {
  if (!tolerate.partialText) return events;
  const cancelled = new Set(events.filter((e) => e?.type === "turn.cancelled").map((e) => e.data?.turnId));
  return events.map((e) =>
    e?.type === "message.appended" && cancelled.has(e.data?.turnId) && e.data.messageDelta.length > 0
      ? { ...e, data: { ...e.data, messageDelta: "<text streamed before the cancel>" } }
      : e,
  );
}

/** Merges runs of adjacent deltas of one block (same type, coordinates, call and deliveries). */
export function mergeDeltas(events) {
  const out = [];
  for (const event of events) {
    const field = DELTA_FIELD[event?.type];
    const prev = out.at(-1);
    if (field && prev && prev.type === event.type && sameBlock(prev, event, field)) {
      out[out.length - 1] = { ...prev, data: { ...prev.data, [field]: prev.data[field] + event.data[field] } };
    } else {
      out.push(event);
    }
  }
  return out;
}

function sameBlock(a, b, field) {
  const strip = (e) => JSON.stringify({ ...e.data, [field]: undefined });
  return strip(a) === strip(b) && JSON.stringify(a.meta?.deliveryIds) === JSON.stringify(b.meta?.deliveryIds);
}

/**
 * Applies deliberate differences to a normalised record, in place. Each difference is
 * `{ scenario: "<name>" | "*", reason: "…", path: "streams.main.events.[type=step.failed].data.details" }`
 * (the value at the path is deleted on both sides, so it may also be absent on one) or
 * `{ scenario, reason, apply(record) }` for anything a path cannot say. Path segments: a key, an
 * array index, `*` (every key or element) or `[field=value]` (the elements whose field equals
 * value; `type` for events, `label` for steps).
 */
export function applyDifferences(rec, scenario, differences) {
  for (const d of differences) {
    if (typeof d.reason !== "string" || d.reason.trim() === "") {
      throw new Error(`a deliberate difference needs a reason: ${JSON.stringify(d)}`);
    }
    if (d.scenario !== "*" && d.scenario !== scenario) continue;
    if (typeof d.apply === "function") d.apply(rec);
    else if (typeof d.path === "string") deleteAt(rec, d.path.match(/\[[^\]]*\]|[^.]+/g) ?? []);
    else throw new Error(`a deliberate difference needs a path or apply(): ${d.reason}`);
  }
  return rec;
}

function deleteAt(node, segments) {
  if (node === null || typeof node !== "object" || segments.length === 0) return;
  const [head, ...rest] = segments;
  const filter = /^\[([^=\]]+)=([^\]]*)\]$/.exec(head);
  let keys;
  if (head === "*") keys = Object.keys(node);
  else if (filter) keys = Object.keys(node).filter((k) => String(node[k]?.[filter[1]]) === filter[2]);
  else keys = Object.hasOwn(node, head) ? [head] : [];
  for (const k of keys) {
    if (rest.length === 0) {
      if (Array.isArray(node)) node[k] = "<deliberately different>";
      else delete node[k];
    } else {
      deleteAt(node[k], rest);
    }
  }
}

/** Runs `name` against the reference, then the candidate, and returns both records. */
export async function sideBySide(name, { differences = [], referenceUrl = REFERENCE_URL, candidateUrl = CANDIDATE_URL } = {}) {
  const reference = applyDifferences(await record(name, referenceUrl, REFERENCE_HEADERS), name, differences);
  // the reference may have left a background step (e.g. a cancelled model call) running
  await sleep(50);
  const candidate = applyDifferences(await record(name, candidateUrl, CANDIDATE_HEADERS), name, differences);
  return { reference, candidate };
}
