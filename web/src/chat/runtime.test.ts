// The client bridge (runtime.ts + eve.ts) end to end against an in-process backend that speaks
// eve v1 as the recordings show it (test-fixtures/fake-backend.mjs): sending, persistence and
// the snapshot, reconnects and lease renewals without duplicates, resume after a refresh, stop
// = cancel, questions answered with inputResponses, Skip = local decline + cancel, a lost
// session. Also: the stream reader reads exactly what eve's own client reads.
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { Client } from "eve/client";
import { followStream, STREAM_DISCONNECTED } from "./eve";
import { hasOpenTurn, renderItems } from "./events";
import { ChatRuntime } from "./runtime";
import type { EveEvent } from "../api/types";
import { defaultTurn, fakeBackend } from "../../test-fixtures/fake-backend.mjs";

let restore: (() => void) | null = null;
afterEach(() => {
  restore?.();
  restore = null;
});

function setup(opts: Record<string, unknown> = {}) {
  const backend = fakeBackend(opts);
  restore = backend.install();
  const toasts: string[] = [];
  const host = { toast: (m: string) => void toasts.push(m), touchChat: () => undefined, clientContext: () => "Connections the user enabled for this turn: Notion." };
  const runtime = (id = "chat1") => new ChatRuntime(id, host);
  return { backend, toasts, runtime };
}

async function until(what: string, fn: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const idle = (rt: ChatRuntime) => rt.getState().phase === "idle";
const types = (events: EveEvent[]) => events.map((e) => e.type);
const ids = (events: EveEvent[]) => events.map((e) => e.meta?.id);

test("a first message creates the session, streams the turn, persists every event and the snapshot", async () => {
  const { backend, runtime } = setup();
  const rt = runtime();
  rt.primeFromCreate("hi there");
  assert.equal(rt.getState().optimistic, "hi there", "the user bubble shows at once");
  await until("the snapshot", () => (backend.chat("chat1").snapshots ?? 0) >= 1);
  const [session] = [...backend.sessions.values()];
  const chat = backend.chat("chat1");
  assert.deepEqual(chat.slots, session.log, "the chat log is eve's stream, verbatim");
  assert.deepEqual(chat.session, { sessionId: session.id, streamIndex: session.log.length });
  assert.equal(chat.pendingUserMessage, null);
  const create = backend.to("/eve/v1/session", "POST")[0]!;
  // chatId: the new session names its chat, so its first turn already has the chat's project.
  assert.deepEqual(create.body, { message: "hi there", clientContext: "Connections the user enabled for this turn: Notion.", chatId: "chat1" });
  const streams = backend.to(`/eve/v1/session/${session.id}/stream`);
  assert.equal(streams[0]!.path, `/eve/v1/session/${session.id}/stream?streamControlVersion=1`);
  assert.equal(rt.getState().optimistic, null);
  assert.ok(idle(rt));
  const items = renderItems(rt.getState().log, false);
  assert.deepEqual(items.map((i) => i.kind), ["user", "assistant"]);
  // Persisted batches carry the local log positions.
  const appended = backend.to("/api/chats/chat1/events", "POST").flatMap((r) => r.body.events.map((e: { eventIndex: number }) => e.eventIndex));
  assert.deepEqual(appended, [...appended.keys()]);
});

test("a follow-up goes to the same session with its delivery id; only its turn's boundary settles it", async () => {
  const { backend, runtime } = setup();
  const rt = runtime();
  rt.primeFromCreate("one");
  await until("first turn", () => (backend.chat("chat1").snapshots ?? 0) >= 1 && idle(rt));
  const [session] = [...backend.sessions.values()];
  // Another client's turn lands on the stream first (cancelled, with its own delivery id).
  backend.append(session.id, { type: "turn.started", data: { sequence: 9, turnId: "turn_9" }, deliveryIds: ["dlv_other"] });
  backend.append(session.id, { type: "turn.cancelled", data: { sequence: 9, turnId: "turn_9" }, deliveryIds: ["dlv_other"] });
  backend.append(session.id, { type: "session.waiting", data: { continuationToken: session.id, wait: "next-user-message" }, deliveryIds: ["dlv_other"] });
  assert.equal(await rt.send("two"), true);
  await until("second snapshot", () => (backend.chat("chat1").snapshots ?? 0) >= 2 && idle(rt));
  const send = backend.to(`/eve/v1/session/${session.id}`, "POST").find((r) => r.body?.message === "two")!;
  assert.deepEqual(send.body, { message: "two", clientContext: "Connections the user enabled for this turn: Notion." });
  const chat = backend.chat("chat1");
  assert.deepEqual(chat.slots, session.log);
  assert.equal(chat.slots.at(-1).type, "session.waiting");
  assert.deepEqual(chat.slots.at(-1).meta.deliveryIds, ["dlv_1"], "settled on its own turn's boundary");
  assert.equal(chat.session.streamIndex, session.log.length);
});

test("a dropped stream reconnects from the cursor; nothing is lost or doubled", async () => {
  const { backend, runtime } = setup({ dropAfter: 3, dropConnections: 2 });
  const rt = runtime();
  rt.primeFromCreate("tell me");
  await until("snapshot", () => (backend.chat("chat1").snapshots ?? 0) >= 1);
  const [session] = [...backend.sessions.values()];
  assert.deepEqual(ids(backend.chat("chat1").slots), ids(session.log));
  const starts = backend.to(`/eve/v1/session/${session.id}/stream`).map((r) => new URL(r.path, "http://x").searchParams.get("startIndex") ?? "0");
  assert.deepEqual(starts.slice(0, 3), ["0", "3", "6"]);
});

test("lease renewals and keep-alives: the stream is reopened at once from the cursor", async () => {
  const turn = ({ seq, turnId }: { seq: number; turnId: string }) => [
    { type: "step.started", data: { modelId: "fake", sequence: seq, stepIndex: 0, turnId } },
    { type: "message.appended", data: { messageDelta: "slow ", sequence: seq, stepIndex: 0, turnId } },
    { wait: 120 },
    { type: "message.appended", data: { messageDelta: "answer", sequence: seq, stepIndex: 0, turnId } },
    { wait: 120 },
    ...defaultTurn({ seq, turnId }, "slow answer").slice(2),
  ];
  const { backend, runtime, toasts } = setup({ turns: [turn], leaseMs: 60, keepAliveMs: 10 });
  const rt = runtime();
  rt.primeFromCreate("slow");
  await until("snapshot", () => (backend.chat("chat1").snapshots ?? 0) >= 1, 8000);
  const [session] = [...backend.sessions.values()];
  assert.deepEqual(ids(backend.chat("chat1").slots), ids(session.log));
  assert.ok(backend.to(`/eve/v1/session/${session.id}/stream`).length >= 3, "renewed several times");
  assert.deepEqual(toasts, []);
});

test("a refresh mid-turn resumes from the saved cursor and applies each event once", async () => {
  const turn = ({ seq, turnId }: { seq: number; turnId: string }) => [
    { type: "step.started", data: { modelId: "fake", sequence: seq, stepIndex: 0, turnId } },
    { type: "message.appended", data: { messageDelta: "part one ", sequence: seq, stepIndex: 0, turnId } },
    { wait: 400 },
    ...defaultTurn({ seq, turnId }, "part one part two").slice(2),
  ];
  const { backend, runtime } = setup({ turns: [turn] });
  const first = runtime();
  first.primeFromCreate("go");
  await until("persisted partial turn", () => backend.chat("chat1").slots.filter(Boolean).length >= 4);
  // The page reloads: a new runtime loads the chat while the turn still runs.
  const second = runtime();
  await second.load();
  assert.equal(second.getState().phase, "resuming");
  await until("resumed turn settles", () => idle(second) && (backend.chat("chat1").snapshots ?? 0) >= 1, 8000);
  const [session] = [...backend.sessions.values()];
  const resumed = backend.to(`/eve/v1/session/${session.id}/stream`).at(-1)!;
  assert.match(resumed.path, /streamControlVersion=1/);
  assert.deepEqual(ids(second.getState().events), ids(session.log), "each event once, in order");
  assert.equal(hasOpenTurn(second.getState().events), false);
});

test("stop: the UI is free at once, eve gets POST …/cancel with the turn id, the cancel is recorded", async () => {
  const turn = ({ seq, turnId }: { seq: number; turnId: string }) => [
    { type: "step.started", data: { modelId: "fake", sequence: seq, stepIndex: 0, turnId } },
    { type: "action.input.appended", data: { callId: "c1", inputTextDelta: "{}", sequence: seq, stepIndex: 0, toolName: "slow", turnId } },
    { type: "actions.requested", data: { actions: [{ callId: "c1", input: {}, kind: "tool-call", toolName: "slow" }], sequence: seq, stepIndex: 0, turnId } },
    { hold: true },
  ];
  const { backend, runtime } = setup({ turns: [turn] });
  const rt = runtime();
  rt.primeFromCreate("run slow tool");
  await until("tool call running", () => rt.getState().events.some((e) => e.type === "actions.requested"));
  assert.equal(rt.busy, true);
  rt.stop();
  assert.equal(rt.getState().phase, "idle", "the composer is free in the same frame");
  const before = renderItems(rt.getState().log, rt.getState().stopped);
  assert.deepEqual(before.flatMap((i) => (i.kind === "assistant" ? i.parts.flatMap((p) => (p.kind === "tools" ? p.calls.map((c) => c.status) : [])) : [])), ["interrupted"]);
  await until("cancel recorded", () => (backend.chat("chat1").snapshots ?? 0) >= 1);
  const [session] = [...backend.sessions.values()];
  assert.deepEqual(backend.to(`/eve/v1/session/${session.id}/cancel`)[0]!.body, { turnId: "turn_0" });
  const saved = backend.chat("chat1").slots;
  assert.deepEqual(types(saved).slice(-2), ["turn.cancelled", "session.waiting"]);
  assert.equal(hasOpenTurn(saved), false, "a stopped turn is never resumed");
  // The tool call still shows, interrupted, after eve's cancel.
  const after = renderItems(rt.getState().log, false);
  assert.ok(after.some((i) => i.kind === "notice" && i.text === "Response stopped."));
  // The next turn works.
  assert.equal(await rt.send("and now?"), true);
  await until("next turn", () => (backend.chat("chat1").snapshots ?? 0) >= 2 && idle(rt));
  assert.equal(backend.chat("chat1").slots.at(-1).type, "session.waiting");
});

test("stop while the message is still being sent: the turn is cancelled as soon as its id shows", async () => {
  const turn = ({ seq, turnId }: { seq: number; turnId: string }) => [{ wait: 30 }, { type: "step.started", data: { modelId: "fake", sequence: seq, stepIndex: 0, turnId } }, { hold: true }];
  const { backend, runtime } = setup({ turns: [turn] });
  const rt = runtime();
  rt.primeFromCreate("oops");
  assert.equal(rt.getState().phase, "sending");
  rt.stop();
  assert.equal(rt.getState().phase, "idle");
  await until("cancel recorded", () => (backend.chat("chat1").snapshots ?? 0) >= 1);
  const [session] = [...backend.sessions.values()];
  assert.deepEqual(backend.to(`/eve/v1/session/${session.id}/cancel`)[0]!.body, { turnId: "turn_0" });
  assert.deepEqual(types(backend.chat("chat1").slots).slice(-2), ["turn.cancelled", "session.waiting"]);
});

const askTurn = ({ seq, turnId }: { seq: number; turnId: string }) => [
  { type: "step.started", data: { modelId: "fake", sequence: seq, stepIndex: 0, turnId } },
  { type: "actions.requested", data: { actions: [{ callId: "ask", input: { question: "City?" }, kind: "workflow-tool-call", toolName: "ask_question" }], sequence: seq, stepIndex: 0, turnId } },
  {
    type: "input.requested",
    data: {
      requests: [
        {
          action: { callId: "ask", input: { question: "City?" }, kind: "tool-call", toolName: "ask_question" },
          allowFreeform: true,
          kind: "question",
          options: [{ id: "paris", label: "Paris" }],
          prompt: "City?",
          requestId: "req_1",
        },
      ],
      sequence: seq,
      stepIndex: 0,
      turnId,
    },
  },
  { type: "turn.waiting", data: { on: "input", sequence: seq, turnId } },
  { hold: true },
];

test("a question settles the turn; the answer goes as inputResponses and the turn goes on", async () => {
  const answered = ({ seq, turnId, inputResponses }: { seq: number; turnId: string; inputResponses: { requestId: string; text?: string; optionId?: string }[] }) => [
    { type: "input.resolved", data: { resolutions: [{ kind: "question", outcome: "answered", requestId: "req_1", response: inputResponses[0] }], sequence: seq, stepIndex: 0, turnId } },
    { type: "step.started", data: { modelId: "fake", sequence: seq, stepIndex: 1, turnId } },
    { type: "action.result", data: { result: { callId: "ask", kind: "tool-result", output: { answer: "Lima" }, toolName: "ask_question" }, sequence: seq, status: "completed", stepIndex: 1, turnId } },
    ...defaultTurn({ seq, turnId }, "Lima it is.").slice(1).map((e) => (e.data?.stepIndex === 0 ? { ...e, data: { ...e.data, stepIndex: 2 } } : e)),
  ];
  const { backend, runtime } = setup({ turns: [askTurn], responses: [answered] });
  const rt = runtime();
  rt.primeFromCreate("plan a trip");
  await until("question", () => idle(rt) && rt.getState().openInputs.length === 1 && (backend.chat("chat1").snapshots ?? 0) >= 1);
  assert.equal(backend.chat("chat1").slots.at(-1).type, "turn.waiting");
  const q = rt.getState().openInputs[0]!;
  assert.deepEqual([q.requestId, q.prompt, q.allowFreeform], ["req_1", "City?", true]);
  await rt.answerInput("req_1", { text: "Lima" });
  await until("continued turn", () => idle(rt) && (backend.chat("chat1").snapshots ?? 0) >= 2);
  const [session] = [...backend.sessions.values()];
  const answer = backend.to(`/eve/v1/session/${session.id}`, "POST").find((r) => r.body?.inputResponses)!;
  assert.deepEqual(answer.body.inputResponses, [{ requestId: "req_1", text: "Lima" }]);
  assert.deepEqual(rt.getState().openInputs, []);
  assert.equal(backend.chat("chat1").slots.at(-1).type, "session.waiting");
  const card = renderItems(rt.getState().log, false).find((i) => i.kind === "input");
  assert.ok(card && card.kind === "input" && !card.open && card.answer === "Lima");
});

const signInTurn = ({ seq, turnId }: { seq: number; turnId: string }) => [
  { type: "step.started", data: { modelId: "fake", sequence: seq, stepIndex: 0, turnId } },
  { type: "actions.requested", data: { actions: [{ callId: "n1", input: { q: "x" }, kind: "tool-call", toolName: "notion__search" }], sequence: seq, stepIndex: 0, turnId } },
  {
    type: "authorization.required",
    data: { attemptId: "att_1", authorization: { displayName: "Notion", url: "/eve/v1/connections/notion/start?attempt=att_1" }, description: "Search pages", name: "notion", sequence: seq, stepIndex: 0, turnId, webhookUrl: "/eve/v1/cb/att_1" },
  },
  { type: "turn.waiting", data: { on: "input", sequence: seq, turnId } },
  { hold: true },
];

test("Skip: declined locally at once and saved through the skip route; eve's cancel declines it too", async () => {
  const { backend, runtime, toasts } = setup({ turns: [signInTurn] });
  const rt = runtime();
  rt.primeFromCreate("search notion");
  await until("sign-in card", () => idle(rt) && rt.getState().pendingAuthorizations.length === 1 && (backend.chat("chat1").snapshots ?? 0) >= 1);
  const auth = rt.getState().pendingAuthorizations[0]!;
  assert.equal(auth.connectUrl, "/eve/v1/connections/notion/start?attempt=att_1");
  assert.equal(await rt.send("ignore it"), false, "plain text is refused while the sign-in is pending");
  assert.match(toasts.at(-1)!, /authorization/);
  const skipping = rt.skipAuthorization(auth);
  await until("local decline", () => rt.getState().pendingAuthorizations.length === 0);
  await skipping;
  const [session] = [...backend.sessions.values()];
  const skip = backend.to("/api/chats/chat1/authorization/skip", "POST")[0]!;
  assert.deepEqual(skip.body.events.map((e: { event: EveEvent }) => [e.event.type, e.event.data.outcome ?? e.event.data.wait, e.event.meta?.local]), [
    ["authorization.completed", "declined", true],
    ["session.waiting", "next-user-message", true],
  ]);
  assert.deepEqual(backend.to(`/eve/v1/session/${session.id}/cancel`)[0]!.body, { turnId: "turn_0" });
  await until("eve's decline recorded", () => (backend.chat("chat1").snapshots ?? 0) >= 2);
  const saved = backend.chat("chat1").slots as EveEvent[];
  assert.deepEqual(types(saved).slice(-5), ["authorization.completed", "session.waiting", "authorization.completed", "turn.cancelled", "session.waiting"]);
  assert.equal(saved.filter((e) => e.meta?.local).length, 2, "the local events are merged into the snapshot");
  const card = renderItems(rt.getState().log, false).find((i) => i.kind === "authorization");
  assert.ok(card && card.kind === "authorization" && card.outcome === "declined");
  assert.equal(await rt.send("never mind"), true);
  await until("next turn", () => (backend.chat("chat1").snapshots ?? 0) >= 3 && idle(rt));
});

test("Skip whose saving fails: the sign-in card comes back, the failure is toasted, eve is not told", async () => {
  const { backend, runtime, toasts } = setup({ turns: [signInTurn], failSkip: true });
  const rt = runtime();
  rt.primeFromCreate("search notion");
  await until("sign-in card", () => idle(rt) && rt.getState().pendingAuthorizations.length === 1 && (backend.chat("chat1").snapshots ?? 0) >= 1);
  const auth = rt.getState().pendingAuthorizations[0]!;
  const before = rt.getState().events.length;
  const storedBefore = [...(backend.chat("chat1").slots as EveEvent[])];
  await rt.skipAuthorization(auth);
  assert.equal(backend.to("/api/chats/chat1/authorization/skip", "POST").length, 1, "the skip was tried");
  assert.equal(rt.getState().events.length, before, "the local decline is rolled back");
  assert.equal(rt.getState().pendingAuthorizations.length, 1, "the Connect / Skip card is back");
  assert.match(toasts.at(-1)!, /^Skip failed: /);
  const [session] = [...backend.sessions.values()];
  assert.equal(backend.to(`/eve/v1/session/${session.id}/cancel`).length, 0, "eve's turn is not cancelled");
  assert.deepEqual(backend.chat("chat1").slots, storedBefore, "nothing was stored");
  assert.ok(idle(rt));
});

test("Connect: the stream is followed until the agent continues the turn", async () => {
  const { backend, runtime } = setup({ turns: [signInTurn] });
  const rt = runtime();
  rt.primeFromCreate("search notion");
  await until("sign-in card", () => idle(rt) && rt.getState().pendingAuthorizations.length === 1 && (backend.chat("chat1").snapshots ?? 0) >= 1);
  rt.watchAfterConnect();
  assert.equal(rt.getState().phase, "connecting");
  const [session] = [...backend.sessions.values()];
  const d = { sequence: 0, turnId: "turn_0" };
  backend.append(session.id, { type: "authorization.completed", data: { attemptId: "att_1", name: "notion", outcome: "authorized", stepIndex: 0, ...d } });
  for (const e of defaultTurn({ seq: 0, turnId: "turn_0" }, "Found it.")) backend.append(session.id, e.data?.stepIndex === 0 ? { ...e, data: { ...e.data, stepIndex: 1 } } : e);
  await until("continued", () => idle(rt) && (backend.chat("chat1").snapshots ?? 0) >= 2);
  assert.deepEqual(rt.getState().pendingAuthorizations, []);
  assert.equal(backend.chat("chat1").slots.at(-1).type, "session.waiting");
});

test("a session the agent no longer knows: the next message starts a new one and the log goes on", async () => {
  const { backend, runtime } = setup();
  const c = backend.chat("chat1");
  const old = backend.newSession();
  for (const e of defaultTurn({ seq: 0, turnId: "turn_0" })) backend.append(old.id, e);
  c.slots = [...old.log];
  c.session = { sessionId: old.id, streamIndex: old.log.length };
  backend.endSession(old.id);
  const rt = runtime();
  await rt.load();
  assert.ok(idle(rt));
  assert.equal(await rt.send("still there?"), true);
  await until("new session turn", () => (c.snapshots ?? 0) >= 1 && idle(rt));
  const fresh = [...backend.sessions.values()].at(-1)!;
  assert.notEqual(fresh.id, old.id);
  assert.deepEqual(c.session, { sessionId: fresh.id, streamIndex: fresh.log.length });
  assert.deepEqual(ids(c.slots), [...ids(old.log), ...ids(fresh.log)]);
  assert.equal(rt.getState().log.segments.length, 2);
});

test("the stream reader reads what eve's own client reads: keep-alives, lease renewals, drops", async () => {
  for (const opts of [{}, { leaseMs: 40, keepAliveMs: 5 }, { dropAfter: 2, dropConnections: 3 }]) {
    const backend = fakeBackend(opts);
    restore = backend.install();
    const s = backend.newSession();
    const turn = defaultTurn({ seq: 0, turnId: "turn_0" }, "one two three four five six");
    for (const e of [{ type: "turn.started", data: { sequence: 0, turnId: "turn_0" } }, ...turn]) backend.append(s.id, e);
    setTimeout(() => backend.append(s.id, { type: "session.completed", data: {} }), 150);
    const ours: EveEvent[] = [];
    const end = await followStream(s.id, { startIndex: 0, signal: new AbortController().signal, onEvent: (e) => void ours.push(e) });
    const client = new Client({ host: "http://app.test" });
    const theirs: EveEvent[] = [];
    for await (const e of client.sessions.attach(s.id).stream({ startIndex: 0 })) theirs.push(e as EveEvent);
    assert.deepEqual(ours, theirs, JSON.stringify(opts));
    assert.deepEqual(ours, s.log);
    assert.equal(end, s.log.length);
    restore();
    restore = null;
  }
});

test("the stream reader refuses an unsupported stream version, like eve's client", async () => {
  for (const streamVersion of ["27", null]) {
    const backend = fakeBackend({ streamVersion });
    restore = backend.install();
    const s = backend.newSession();
    await assert.rejects(followStream(s.id, { startIndex: 0, signal: new AbortController().signal, onEvent: () => undefined }), /stream/);
    await assert.rejects(
      (async () => {
        for await (const _ of new Client({ host: "http://app.test" }).sessions.attach(s.id).stream({ startIndex: 0 })) break;
      })(),
    );
    restore();
    restore = null;
  }
});

test("a stream that keeps dropping without progress ends with the disconnect error", async () => {
  const backend = fakeBackend({ dropMs: 20 });
  restore = backend.install();
  const s = backend.newSession();
  const seen: EveEvent[] = [];
  await assert.rejects(
    followStream(s.id, { startIndex: 1, signal: new AbortController().signal, maxIdleReconnects: 2, onEvent: (e) => void seen.push(e) }),
    new RegExp(STREAM_DISCONNECTED.replace(/\./g, "\\.")),
  );
  assert.deepEqual(seen, []);
});

test("opening the stream of an unknown session fails with 404 after a few retries", async () => {
  const backend = fakeBackend();
  restore = backend.install();
  await assert.rejects(followStream("wrun_nope", { startIndex: 0, signal: new AbortController().signal, openAttempts: 2, onEvent: () => undefined }), (err: { status?: number }) => err.status === 404);
  assert.equal(backend.to("/eve/v1/session/wrun_nope/stream").length, 2);
});

test("streamed events are told to the page once per animation frame; the end of the turn at once", async () => {
  const frames: (() => void)[] = [];
  const g = globalThis as { requestAnimationFrame?: unknown; cancelAnimationFrame?: unknown };
  const saved = [g.requestAnimationFrame, g.cancelAnimationFrame];
  g.requestAnimationFrame = (cb: () => void) => frames.push(cb);
  g.cancelAnimationFrame = (id: number) => void (frames[id - 1] = () => undefined);
  try {
    const { runtime } = setup();
    const rt = runtime();
    let told = 0;
    let seen = 0;
    rt.subscribe(() => {
      told++;
      seen = rt.getState().events.length;
    });
    rt.primeFromCreate("hi there");
    await until("the turn's end", () => idle(rt) && rt.getState().optimistic === null);
    const streamed = rt.getState().events.length;
    assert.ok(streamed >= 5, `${streamed} events`);
    // No frame ran: only the phase and bubble changes were told, yet the last one saw every event.
    assert.ok(told < streamed, `told ${told} times for ${streamed} events`);
    assert.ok(frames.length >= 1);
    assert.equal(seen, streamed);
    for (const f of frames) f();
    assert.equal(seen, streamed);
  } finally {
    [g.requestAnimationFrame, g.cancelAnimationFrame] = saved;
  }
});
