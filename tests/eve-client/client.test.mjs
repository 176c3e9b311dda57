// The /eve/v1/* protocol, driven by eve's own client (`eve/client` from eve 0.80.1): if these pass,
// eve's Client, ClientSession and EveAgentStore (what `useEveAgent` wraps) work against the app.
//
//   EVE_BASE_URL=http://127.0.0.1:2000 node --test tests/eve-client/
//
// See lib.mjs for EVE_HEADERS, EVE_EXPECT_REPLY and the EVE_PROMPT_* prompts, README.md for how
// to point it at eve-chat.
import { before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { Client, ClientError, EveAgentStore, defaultMessageReducer } from "eve/client";
import {
  BASE_URL,
  EXPECT_REPLY,
  EXTRA_HEADERS,
  PROMPTS,
  QUESTION_TOOLS,
  UNKNOWN_SESSION_ID,
  agentCapabilities,
  rawFetch,
  withTimeout,
} from "./lib.mjs";
import { startCuttingProxy } from "./proxy.mjs";

const TURN_MS = 30_000;
const EVENT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{26}$/;
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** eve's Client, configured the way an app would: host + extra headers (cookie, origin, …). */
function makeClient(host = BASE_URL) {
  return new Client({ host, headers: { ...EXTRA_HEADERS } });
}

const client = makeClient();

/** Iterates `iterable` (a MessageResponse or a session stream) into an array, bounded in time. */
async function collect(iterable, { timeoutMs = TURN_MS, until, onEvent } = {}) {
  const events = [];
  const run = (async () => {
    for await (const event of iterable) {
      events.push(event);
      if (onEvent) await onEvent(event, events);
      if (until?.(event, events)) break;
    }
    return events;
  })();
  return await withTimeout(run, timeoutMs, `stream (got ${events.length} events: ${events.map((e) => e.type).join(", ")})`);
}

const types = (events) => events.map((e) => e.type);
const ids = (events) => events.map((e) => e.meta?.id);
const deltas = (events) =>
  events.filter((e) => e.type === "message.appended").map((e) => e.data.messageDelta).join("");

function assertReply(text, what) {
  if (EXPECT_REPLY === "") assert.ok(typeof text === "string" && text.length > 0, `${what}: a non-empty reply`);
  else assert.equal(text, EXPECT_REPLY, what);
}

/** The envelope every event carries: type, data, meta.id (evt_ ULID, unique), meta.at (ISO). */
function assertEnvelopes(events) {
  const seen = new Set();
  for (const e of events) {
    assert.equal(typeof e.type, "string");
    assert.ok(e.data && typeof e.data === "object", `${e.type}: data is an object`);
    assert.match(e.meta?.id ?? "", EVENT_ID, `${e.type}: meta.id is evt_<ULID>`);
    assert.match(e.meta?.at ?? "", ISO_TIME, `${e.type}: meta.at is ISO-8601 UTC`);
    assert.ok(!seen.has(e.meta.id), `meta.id ${e.meta.id} is unique`);
    seen.add(e.meta.id);
  }
}

/** One plain turn: turn.started … message.appended+ … message.completed, step.completed, turn.completed. */
function assertPlainTurn(events, { turnId, sequence, prompt }) {
  const t = types(events);
  const firstAppend = t.indexOf("message.appended");
  assert.ok(firstAppend > 0, `a message.appended in ${t.join(", ")}`);
  const lastAppend = t.lastIndexOf("message.appended");
  assert.deepEqual(t.slice(0, firstAppend), ["turn.started", "message.received", "step.started"]);
  assert.ok(t.slice(firstAppend, lastAppend + 1).every((x) => x === "message.appended"), "appends are contiguous");
  assert.deepEqual(t.slice(lastAppend + 1), [
    "message.completed",
    "step.completed",
    "turn.completed",
    "session.waiting",
  ]);
  for (const e of events.slice(0, -1)) {
    assert.equal(e.data.turnId, turnId, `${e.type}.data.turnId`);
    assert.equal(e.data.sequence, sequence, `${e.type}.data.sequence`);
  }
  const received = events[1];
  assert.equal(received.data.message, prompt);
  assert.deepEqual(received.data.parts, [{ text: prompt, type: "text" }]);
  const completed = events.find((e) => e.type === "message.completed");
  assert.equal(completed.data.finishReason, "stop");
  assert.equal(completed.data.stepIndex, 0);
  assert.equal(deltas(events), completed.data.message, "the deltas add up to message.completed");
  assertReply(completed.data.message, "message.completed.data.message");
  const step = events.find((e) => e.type === "step.completed");
  assert.equal(step.data.finishReason, "stop");
  assert.equal(typeof step.data.usage, "object");
}

function assertWaiting(event, sessionId) {
  assert.equal(event.type, "session.waiting");
  assert.equal(event.data.wait, "next-user-message");
  assert.equal(event.data.continuationToken, sessionId, "session.waiting.data.continuationToken is the session id");
}

/** Every event of a turn carries the same one-delivery meta.deliveryIds. */
function turnDelivery(events) {
  const first = events[0].meta.deliveryIds;
  assert.ok(Array.isArray(first) && first.length === 1 && typeof first[0] === "string", "meta.deliveryIds: [id]");
  for (const e of events) assert.deepEqual(e.meta.deliveryIds, first, `${e.type}.meta.deliveryIds`);
  return first[0];
}

async function expectClientError(promise, { status, code }, what) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof ClientError, `${what}: a ClientError, got ${error?.name}: ${error?.message}`);
    assert.equal(error.status, status, `${what}: status`);
    if (code !== undefined) assert.equal(error.code, code, `${what}: code`);
    return true;
  });
}

let capabilities;
before(async () => {
  capabilities = await agentCapabilities();
});

test("health: GET /eve/v1/health through Client.health()", { timeout: 15_000 }, async () => {
  const health = await client.health();
  assert.equal(health.ok, true);
  assert.equal(health.status, "ready");
  assert.equal(typeof health.workflowId, "string");
  const head = await rawFetch(`${BASE_URL}/eve/v1/health`, { method: "HEAD" });
  assert.equal(head.status, 200, "HEAD /eve/v1/health");
});

test("info: Client.info() accepts GET /eve/v1/info (agent-info v6 schema)", { timeout: 15_000 }, async () => {
  const info = await client.info();
  assert.equal(info.kind, "eve-agent-info");
  assert.equal(typeof info.agent.name, "string");
  assert.equal(typeof info.agent.model.id, "string");
  assert.ok(Array.isArray(info.tools.static));
});

describe("one session, turn by turn", () => {
  let session;
  let turn0 = [];
  let turn1 = [];

  test("create with a message: the first turn streams in order", { timeout: TURN_MS + 5_000 }, async () => {
    const created = await client.sessions.create({ message: PROMPTS.plain });
    session = created.session;
    const sessionId = session.state.sessionId;
    assert.equal(typeof sessionId, "string");
    assert.ok(sessionId.length > 0);
    assert.equal(created.response.sessionId, sessionId);
    turn0 = await collect(created.response);
    assert.equal(turn0[0].type, "session.started");
    assertEnvelopes(turn0);
    assertPlainTurn(turn0.slice(1), { turnId: "turn_0", sequence: 0, prompt: PROMPTS.plain });
    assertWaiting(turn0.at(-1), sessionId);
    turnDelivery(turn0);
    assert.deepEqual(session.state, { sessionId, streamIndex: turn0.length }, "the cursor advanced past the turn");
  });

  test("a follow-up message on the same session is turn_1", { timeout: TURN_MS + 5_000 }, async () => {
    assert.ok(session, "needs the session of the previous test");
    const response = await session.send(PROMPTS.followUp);
    const result = await withTimeout(response.result(), TURN_MS, "follow-up result()");
    assert.equal(result.status, "waiting");
    assertReply(result.message, "result.message");
    turn1 = result.events;
    assertEnvelopes([...turn0, ...turn1]);
    assertPlainTurn(turn1, { turnId: "turn_1", sequence: 1, prompt: PROMPTS.followUp });
    assertWaiting(turn1.at(-1), session.state.sessionId);
    assert.notEqual(turnDelivery(turn1), turnDelivery(turn0), "each accepted message has its own delivery id");
    assert.equal(session.state.streamIndex, turn0.length + turn1.length);
  });

  test("replay with follow:false returns the recorded history and ends", { timeout: 20_000 }, async () => {
    assert.ok(turn1.length > 0, "needs the two turns of the previous tests");
    const all = [...turn0, ...turn1];
    const fresh = client.sessions.attach(session.state.sessionId);
    const replay = await collect(fresh.stream({ follow: false, startIndex: 0 }), { timeoutMs: 10_000 });
    assert.deepEqual(ids(replay), ids(all), "same events, same meta.id, same order");
    assert.deepEqual(replay, all, "identical events");
    assert.equal(fresh.state.streamIndex, all.length, "a bounded read advances the cursor");

    const suffix = await collect(fresh.stream({ follow: false, startIndex: turn0.length }), { timeoutMs: 10_000 });
    assert.deepEqual(ids(suffix), ids(turn1), "from a cursor: the suffix");

    const atTail = await collect(fresh.stream({ follow: false, startIndex: all.length }), { timeoutMs: 10_000 });
    assert.deepEqual(atTail, [], "at the tail: nothing, and it returns");

    const snapshot = await withTimeout(fresh.snapshot(), 10_000, "snapshot()");
    assert.deepEqual(ids(snapshot.events), ids(all));
    assert.deepEqual(snapshot.session, { sessionId: session.state.sessionId, streamIndex: all.length });
  });

  test("negative startIndex reads from the tail (-1 is session.waiting)", { timeout: 20_000 }, async () => {
    assert.ok(turn1.length > 0, "needs the two turns of the previous tests");
    const all = [...turn0, ...turn1];
    const handle = client.sessions.attach(session.state.sessionId);
    const controller = new AbortController();
    try {
      const last = await collect(handle.stream({ startIndex: -1, signal: controller.signal }), {
        timeoutMs: 10_000,
        until: () => true,
      });
      assert.equal(last.length, 1);
      assert.equal(last[0].type, "session.waiting");
      assert.equal(last[0].meta.id, all.at(-1).meta.id);
      const lastTwo = await collect(handle.stream({ startIndex: -2, signal: controller.signal }), {
        timeoutMs: 10_000,
        until: (_, got) => got.length === 2,
      });
      assert.deepEqual(types(lastTwo), ["turn.completed", "session.waiting"]);
      assert.deepEqual(ids(lastTwo), ids(all.slice(-2)));
      assert.equal(handle.state.streamIndex, 0, "tail-relative reads do not move the stored cursor");
    } finally {
      controller.abort();
    }
  });
});

test("cancel mid-turn: turn.cancelled then session.waiting; the session goes on", { timeout: 60_000 }, async () => {
  const { session, response } = await client.sessions.create({ message: PROMPTS.slow });
  let cancellation;
  const events = await collect(response, {
    onEvent: async (event, got) => {
      if (!cancellation && got.filter((e) => e.type === "message.appended").length >= 2) {
        cancellation = await response.cancel();
      }
    },
  });
  assert.ok(cancellation, `cancelled after two appends; saw ${types(events).join(", ")}`);
  assert.deepEqual(cancellation, { sessionId: session.state.sessionId, status: "accepted" });
  assertEnvelopes(events);
  assert.deepEqual(types(events).slice(-2), ["turn.cancelled", "session.waiting"]);
  assert.equal(events.at(-2).data.turnId, "turn_0");
  assertWaiting(events.at(-1), session.state.sessionId);
  const t = types(events);
  assert.ok(!t.includes("turn.completed") && !t.includes("message.completed") && !t.includes("turn.failed"), t.join(", "));
  assert.ok(t.includes("message.appended"));

  const next = await withTimeout((await session.send(PROMPTS.plain)).result(), TURN_MS, "send after cancel");
  assert.equal(next.status, "waiting");
  assertReply(next.message, "the reply after a cancelled turn");
  assertPlainTurn(next.events, { turnId: "turn_1", sequence: 1, prompt: PROMPTS.plain });
  const idle = await session.cancel();
  assert.equal(idle.status, "accepted", "cancel on a live idle session is accepted (a no-op)");
});

test("a question (input.requested) answered with inputResponses", { timeout: 90_000 }, async (t) => {
  // skipped only when /eve/v1/info answers and lists no question tool
  if (capabilities && !capabilities.tools.some((n) => QUESTION_TOOLS.has(n))) {
    t.skip(`/eve/v1/info lists no question tool (${[...QUESTION_TOOLS].join(", ")}); tools: ${capabilities.tools.join(", ") || "none"}`);
    return;
  }
  const { session, response } = await client.sessions.create({ message: PROMPTS.question });
  const asked = await withTimeout(response.result(), TURN_MS, "the question turn");
  assert.equal(asked.status, "waiting", `the turn parks on the question; events: ${types(asked.events).join(", ")}`);
  assert.ok(asked.inputRequests.length > 0, `input.requested for "${PROMPTS.question}" (EVE_PROMPT_QUESTION)`);
  const requested = asked.events.find((e) => e.type === "input.requested");
  assert.ok(requested, "an input.requested event");
  assert.equal(asked.events.at(-1).type, "turn.waiting");
  assert.equal(asked.events.at(-1).data.on, "input");
  const turnId = requested.data.turnId;
  assert.equal(asked.events.at(-1).data.turnId, turnId);
  assert.ok(!types(asked.events).includes("session.waiting"), "the turn has not ended");

  const answers = asked.inputRequests.map((request) => {
    assert.equal(typeof request.requestId, "string");
    assert.equal(typeof request.prompt, "string");
    assert.equal(request.action?.kind, "tool-call");
    return request.options?.length
      ? { requestId: request.requestId, optionId: request.options[0].id }
      : { requestId: request.requestId, text: "Paris" };
  });
  const resumed = await withTimeout((await session.respond(answers)).result(), TURN_MS, "the answered turn");
  const rt = types(resumed.events);
  const resolved = resumed.events.find((e) => e.type === "input.resolved");
  assert.ok(resolved, `input.resolved after the answer; events: ${rt.join(", ")}`);
  for (const answer of answers) {
    const resolution = resolved.data.resolutions.find((r) => r.requestId === answer.requestId);
    assert.ok(resolution, `a resolution for ${answer.requestId}`);
    assert.equal(typeof resolution.outcome, "string");
  }
  assert.ok(rt.indexOf("step.started") > rt.indexOf("input.resolved"), "the turn resumes with a new step");
  assert.deepEqual(rt.slice(-2), ["turn.completed", "session.waiting"]);
  for (const e of resumed.events.slice(0, -1)) if ("turnId" in e.data) assert.equal(e.data.turnId, turnId, `${e.type}: same turn`);
  assert.equal(resumed.status, "waiting");
  assert.ok(resumed.message, "a reply after the answer");
});

test("an authorization (authorization.required) declined", { timeout: 90_000 }, async (t) => {
  // skipped only when /eve/v1/info answers and lists no connection
  if (capabilities && capabilities.connections.length === 0) {
    t.skip("/eve/v1/info lists no connections");
    return;
  }
  const decline = process.env.EVE_AUTHORIZATION_DECLINE || "message";
  const { session, response } = await client.sessions.create({ message: PROMPTS.authorization });
  let steer;
  let cancellation;
  const events = await collect(response, {
    timeoutMs: 60_000,
    onEvent: async (event) => {
      // the sign-in parks the turn (turn.waiting on:"input"); the response stays attached
      if (event.type === "turn.waiting" && event.data.on === "input" && !steer && !cancellation) {
        if (decline === "cancel") cancellation = await response.cancel();
        else {
          steer = session.send("never mind, skip that connection");
          steer.catch(() => {}); // awaited below; no unhandled rejection if the test fails first
        }
      }
    },
  });
  const required = events.find((e) => e.type === "authorization.required");
  assert.ok(required, `authorization.required for "${PROMPTS.authorization}"; events: ${types(events).join(", ")}`);
  assert.equal(typeof required.data.name, "string");
  assert.equal(typeof required.data.description, "string");
  assert.ok(steer || cancellation, "the turn parked with turn.waiting on:input");
  if (steer) await withTimeout((await steer).result(), TURN_MS, "the steering message's response");

  const all = (await withTimeout(session.snapshot(), 10_000, "snapshot")).events;
  assertEnvelopes(all);
  const at = all.findIndex((e) => e.meta.id === required.meta.id);
  const completed = all.slice(at).find((e) => e.type === "authorization.completed" && e.data.name === required.data.name);
  assert.ok(completed, `authorization.completed after the decline; events: ${types(all).join(", ")}`);
  assert.equal(completed.data.outcome, "declined");
  assert.equal(completed.data.turnId, required.data.turnId);
  if (required.data.attemptId) assert.equal(completed.data.attemptId, required.data.attemptId);
  assert.equal(all.at(-1).type, "session.waiting", "the turn settled and the session waits");
  assert.ok(
    types(all.slice(at)).some((x) => x === "turn.completed" || x === "turn.cancelled"),
    "the parked turn ended",
  );
});

test("clear: context.cleared then session.waiting; the session goes on", { timeout: 60_000 }, async () => {
  const { session, response } = await client.sessions.create({ message: PROMPTS.plain });
  const first = await collect(response);
  const sessionId = session.state.sessionId;
  const cleared = await session.clear();
  assert.deepEqual(cleared, { sessionId, status: "accepted" });
  const controller = new AbortController();
  const after = await collect(session.stream({ signal: controller.signal }), {
    timeoutMs: 15_000,
    until: (e) => e.type === "session.waiting",
  }).finally(() => controller.abort());
  assert.deepEqual(types(after), ["context.cleared", "session.waiting"]);
  assert.equal(after[0].data.sessionId, sessionId);
  assert.equal(after[0].data.turnId, "turn_1");
  assert.equal(after[0].data.sequence, 1);
  // control events carry the delivery ids of the last accepted message
  assert.deepEqual(after[0].meta.deliveryIds, first[0].meta.deliveryIds);
  assert.deepEqual(after[1].meta.deliveryIds, first[0].meta.deliveryIds);
  assertWaiting(after[1], sessionId);
  assertEnvelopes([...first, ...after]);
  assert.equal(session.state.streamIndex, first.length + 2);

  const next = await withTimeout((await session.send(PROMPTS.plain)).result(), TURN_MS, "send after clear");
  assertReply(next.message, "the reply after a clear");
  // a control names the turn id that the next message then gets: the clear does not use one up
  assertPlainTurn(next.events, { turnId: "turn_1", sequence: 1, prompt: PROMPTS.plain });
});

test("reset: the session completes and every operation gets eve's answer", { timeout: 60_000 }, async () => {
  const { session, response } = await client.sessions.create({ message: PROMPTS.plain });
  const first = await collect(response);
  const sessionId = session.state.sessionId;
  const reset = await session.reset({ reason: "Start over" });
  assert.deepEqual(reset, { previousSessionId: sessionId, status: "reset" });

  // following the stream from the cursor: session.completed, then the stream ends by itself
  const after = await collect(session.stream(), { timeoutMs: 15_000 });
  assert.deepEqual(types(after), ["session.completed"]);
  assert.equal(typeof after[0].data, "object");
  assertEnvelopes([...first, ...after]);

  await expectClientError(session.send(PROMPTS.plain), { status: 409, code: "session_not_active" }, "send after reset");
  assert.deepEqual(await session.clear(), { status: "no_active_session" });
  assert.deepEqual(await session.compact(), { status: "no_active_session" });
  assert.deepEqual(await session.cancel(), { status: "no_active_turn" });
  assert.deepEqual(await session.reset(), { status: "no_active_session" });
  const history = await collect(session.stream({ follow: false, startIndex: 0 }), { timeoutMs: 10_000 });
  assert.deepEqual(ids(history), ids([...first, ...after]), "the history stays readable");
});

test("unknown session: eve's errors and no-op answers", { timeout: 30_000 }, async () => {
  for (const id of [UNKNOWN_SESSION_ID, "not-a-session"]) {
    const session = client.sessions.attach(id);
    await expectClientError(session.send(PROMPTS.plain), { status: 409, code: "session_not_active" }, `send to ${id}`);
    await expectClientError(
      collect(session.stream({ follow: false, streamReconnectPolicy: { reconnect: false } }), { timeoutMs: 10_000 }),
      { status: 404 },
      `stream of ${id}`,
    );
    assert.deepEqual(await session.cancel(), { status: "no_active_turn" });
    assert.deepEqual(await session.clear(), { status: "no_active_session" });
    assert.deepEqual(await session.compact(), { status: "no_active_session" });
    assert.deepEqual(await session.reset(), { status: "no_active_session" });
  }
});

test("a connection cut mid-turn resumes through the client's reconnect, no gap, no duplicate", { timeout: 60_000 }, async () => {
  // the first stream connection is cut after 5 events (+ a partial 6th), the second after 3 more
  const proxy = await startCuttingProxy(BASE_URL, { cuts: [5, 3], partialBytes: 12 });
  try {
    const viaProxy = makeClient(proxy.url);
    const { session, response } = await viaProxy.sessions.create({ message: PROMPTS.slow });
    const live = await collect(response, { timeoutMs: 45_000 });
    const streams = proxy.streams();
    assert.ok(streams.length >= 3, `three stream connections (two cut); got ${JSON.stringify(streams)}`);
    assert.deepEqual(
      streams.slice(0, 2).map((s) => [s.cut, s.eventsForwarded]),
      [
        [true, 5],
        [true, 3],
      ],
      "the proxy cut the first two connections mid-event",
    );
    // how eve's client asks: leases (streamControlVersion=1) and the absolute cursor (startIndex,
    // omitted when 0)
    assert.deepEqual(streams[0].query, { streamControlVersion: "1" });
    assert.deepEqual(streams[1].query, { streamControlVersion: "1", startIndex: "5" });
    assert.deepEqual(streams[2].query, { streamControlVersion: "1", startIndex: "8" });

    const authoritative = await collect(client.sessions.attach(session.state.sessionId).stream({ follow: false }), {
      timeoutMs: 10_000,
    });
    assertEnvelopes(live);
    assert.deepEqual(ids(live), ids(authoritative), "the client saw every event exactly once, in order");
    assert.deepEqual(live, authoritative);
    assert.deepEqual(types(live).slice(-3), ["step.completed", "turn.completed", "session.waiting"]);
    const completed = live.find((e) => e.type === "message.completed");
    assert.equal(deltas(live), completed.data.message, "no delta lost or repeated across the cuts");
    assert.equal(session.state.streamIndex, live.length);
  } finally {
    await proxy.close();
  }
});

test("EveAgentStore reduces the stream to the chat's messages, and resume() rebuilds them", { timeout: 90_000 }, async () => {
  const texts = (snapshot) =>
    snapshot.data.messages.map((m) => [
      m.role,
      m.parts.filter((p) => p.type === "text").map((p) => p.text).join(""),
    ]);
  const store = new EveAgentStore({ client, reducer: defaultMessageReducer(), followIdle: false });
  const seen = [];
  store.setCallbacks({ onEvent: (e) => seen.push(e) });
  await withTimeout(store.send({ message: PROMPTS.plain }), TURN_MS, "store.send (first)");
  let snap = store.snapshot;
  assert.equal(snap.error, undefined, `no store error: ${snap.error?.message}`);
  assert.equal(snap.status, "ready");
  const expected = EXPECT_REPLY === "" ? texts(snap)[1]?.[1] : EXPECT_REPLY;
  assert.deepEqual(texts(snap), [
    ["user", PROMPTS.plain],
    ["assistant", expected],
  ]);
  assert.ok(expected, "an assistant reply");
  assert.equal(snap.data.messages[0].metadata?.turnId, "turn_0");
  assert.equal(snap.data.messages[1].metadata?.status, "complete");

  await withTimeout(store.send({ message: PROMPTS.followUp }), TURN_MS, "store.send (second)");
  snap = store.snapshot;
  assert.equal(snap.error, undefined, `no store error: ${snap.error?.message}`);
  assert.equal(snap.status, "ready");
  const reply2 = EXPECT_REPLY === "" ? texts(snap)[3]?.[1] : EXPECT_REPLY;
  assert.deepEqual(texts(snap), [
    ["user", PROMPTS.plain],
    ["assistant", expected],
    ["user", PROMPTS.followUp],
    ["assistant", reply2],
  ]);
  assert.deepEqual(ids(snap.events), ids(seen));
  assert.equal(snap.session.streamIndex, snap.events.length);
  assert.equal(snap.conversation.turns && typeof snap.conversation.turns, "object");

  // a page reload: a new store from the saved session id rebuilds the same projection
  const reloaded = new EveAgentStore({
    client,
    reducer: defaultMessageReducer(),
    followIdle: false,
    initialSession: { sessionId: snap.session.sessionId, streamIndex: 0 },
  });
  await withTimeout(reloaded.resume(), 20_000, "store.resume()");
  assert.equal(reloaded.snapshot.error, undefined, `no resume error: ${reloaded.snapshot.error?.message}`);
  assert.equal(reloaded.snapshot.status, "ready");
  assert.deepEqual(texts(reloaded.snapshot), texts(snap));
  assert.deepEqual(ids(reloaded.snapshot.events), ids(snap.events));
  reloaded.reset();
  store.reset();
});


test("the client's custom headers reach every request (POSTs, streams, health)", { timeout: 60_000 }, async () => {
  const proxy = await startCuttingProxy(BASE_URL, { cuts: [] });
  try {
    const probe = new Client({ host: proxy.url, headers: { ...EXTRA_HEADERS, "x-eve-client-suite": "probe" } });
    await probe.health();
    const { session, response } = await probe.sessions.create({ message: PROMPTS.plain });
    await withTimeout(response.result(), TURN_MS, "create result()");
    await collect(session.stream({ follow: false, startIndex: 0 }), { timeoutMs: 10_000 });
    await withTimeout((await session.send(PROMPTS.followUp)).result(), TURN_MS, "send result()");
    await session.cancel();
    await session.reset();
    const kinds = new Set(proxy.log.map((e) => `${e.method} ${e.path.replace(/\/session\/[^/]+/, "/session/:id")}`));
    for (const kind of [
      "GET /eve/v1/health",
      "POST /eve/v1/session",
      "POST /eve/v1/session/:id",
      "GET /eve/v1/session/:id/stream",
      "POST /eve/v1/session/:id/cancel",
      "POST /eve/v1/session/:id/reset",
    ]) {
      assert.ok(kinds.has(kind), `the client made ${kind}; made ${[...kinds].join(", ")}`);
    }
    for (const entry of proxy.log) {
      assert.equal(entry.headers["x-eve-client-suite"], "probe", `${entry.method} ${entry.path} carries the custom header`);
      for (const [k, v] of Object.entries(EXTRA_HEADERS)) {
        assert.equal(entry.headers[k.toLowerCase()], v, `${entry.method} ${entry.path} carries ${k} from EVE_HEADERS`);
      }
      if (entry.method === "POST") assert.match(entry.headers["content-type"] ?? "", /^application\/json/, "POSTs are JSON");
    }
  } finally {
    await proxy.close();
  }
});

test("a leased stream (streamControlVersion=1) sends bare-newline heartbeats while idle", { timeout: 30_000 }, async () => {
  const { session, response } = await client.sessions.create({ message: PROMPTS.plain });
  const events = await collect(response);
  const controller = new AbortController();
  const started = Date.now();
  try {
    const res = await rawFetch(
      `${BASE_URL}/eve/v1/session/${session.state.sessionId}/stream?startIndex=${events.length}&streamControlVersion=1`,
      { signal: controller.signal },
    );
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-eve-stream-version"), "26");
    assert.match(res.headers.get("content-type") ?? "", /^application\/x-ndjson/);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let text = "";
    let heartbeatAt;
    // the body opens with one empty line; a heartbeat is a later bare "\n" (eve: every 10 s)
    await withTimeout(
      (async () => {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          const chunk = decoder.decode(value, { stream: true });
          const before = text.length;
          text += chunk;
          if (before > 0 && chunk.trim() === "" && chunk.includes("\n")) {
            heartbeatAt = Date.now() - started;
            break;
          }
        }
      })(),
      15_000,
      "a heartbeat on the idle leased stream (the client gives up on a silent stream after 15 s)",
    );
    assert.ok(heartbeatAt !== undefined, `a heartbeat; the body so far: ${JSON.stringify(text)}`);
    assert.equal(text.trim(), "", "no event on an idle session, only newlines");
    assert.ok(text.startsWith("\n"), "the body opens with an empty line");
  } finally {
    controller.abort();
  }
});
