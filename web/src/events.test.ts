import assert from "node:assert/strict";
import { test } from "node:test";
import {
  areEqualJsonValues,
  buildSnapshot,
  createConnectionClientContext,
  createFallbackTitle,
  EVENT,
  getPendingAuthorizations,
  hasOpenTurn,
  isSettlingEvent,
  mergeLocalEvents,
  preserveKnownInitialEvents,
  renderItems,
  resumeStreamIndex,
} from "./events";
import { parseRoute, routeClass, sidebarClosedFromCookie, sidebarCookie } from "./layout";
import type { EveEvent } from "./types";

const user = (index: number, text: string): EveEvent => ({ type: EVENT.userMessage, index, text });
const delta = (index: number, text: string): EveEvent => ({ type: EVENT.textDelta, index, delta: text });
const completed = (index: number): EveEvent => ({ type: EVENT.sessionCompleted, index });
const authRequired = (index: number, id = "notion"): EveEvent => ({
  type: EVENT.authorizationRequired,
  index,
  authorizationId: id,
  connection: id,
  displayName: "Notion",
  description: "Search pages",
  connectUrl: "/connect/notion",
});

test("settling events are completed, failed, waiting and authorization required", () => {
  for (const type of [EVENT.sessionCompleted, EVENT.sessionFailed, EVENT.sessionWaiting, EVENT.authorizationRequired]) {
    assert.equal(isSettlingEvent({ type }), true, type);
  }
  assert.equal(isSettlingEvent({ type: EVENT.textDelta }), false);
});

test("a turn is open after a user message until a settling event", () => {
  assert.equal(hasOpenTurn([]), false);
  assert.equal(hasOpenTurn([user(0, "hi")]), true);
  assert.equal(hasOpenTurn([user(0, "hi"), delta(1, "he")]), true);
  assert.equal(hasOpenTurn([user(0, "hi"), delta(1, "he"), completed(2)]), false);
});

test("a locally skipped authorization closes the turn", () => {
  const events = [user(0, "hi"), authRequired(1), { type: EVENT.authorizationCompleted, authorizationId: "notion", outcome: "declined", local: true }, { type: EVENT.sessionWaiting, local: true }];
  assert.equal(hasOpenTurn(events), false);
});

test("resume starts after the last persisted stream event of the open turn", () => {
  const events = [user(0, "a"), delta(1, "x"), completed(2), user(3, "b"), delta(4, "y")];
  assert.equal(resumeStreamIndex(events, 3), 5);
  assert.equal(resumeStreamIndex(events, 7), 7);
  assert.equal(resumeStreamIndex([user(0, "a"), completed(1)], 2), 2);
});

test("pending authorizations are those required and not completed", () => {
  const events = [user(0, "a"), authRequired(1, "notion"), authRequired(2, "linear")];
  assert.deepEqual(getPendingAuthorizations(events).map((a) => a.id), ["notion", "linear"]);
  const done = [...events, { type: EVENT.authorizationCompleted, index: 3, authorizationId: "notion", outcome: "granted" }];
  assert.deepEqual(getPendingAuthorizations(done).map((a) => a.id), ["linear"]);
});

test("streamed deltas append to the current assistant message without replacing older ones", () => {
  const events = [user(0, "a"), delta(1, "Hel"), delta(2, "lo"), completed(3), user(4, "b"), delta(5, "Second")];
  const items = renderItems(events);
  assert.deepEqual(
    items.map((i) => i.kind),
    ["user", "assistant", "user", "assistant"],
  );
  const first = items[1] as Extract<(typeof items)[number], { kind: "assistant" }>;
  assert.deepEqual(first.parts, [{ kind: "text", text: "Hello" }]);
});

test("consecutive tool calls are grouped into one part and reasoning closes when text follows", () => {
  const events: EveEvent[] = [
    user(0, "weather?"),
    { type: EVENT.reasoningDelta, index: 1, delta: "thinking" },
    { type: EVENT.toolCallStarted, index: 2, toolCallId: "t1", name: "get_weather" },
    { type: EVENT.toolInputDelta, index: 3, toolCallId: "t1", delta: '{"city":"Paris"}' },
    { type: EVENT.toolCallStarted, index: 4, toolCallId: "t2", name: "remember" },
    { type: EVENT.toolResult, index: 5, toolCallId: "t1", output: { temp: 20 } },
    delta(6, "Sunny"),
  ];
  const [, assistant] = renderItems(events);
  assert.ok(assistant && assistant.kind === "assistant");
  assert.equal(assistant.parts.length, 3);
  assert.deepEqual(assistant.parts[0], { kind: "reasoning", text: "thinking", done: true });
  const tools = assistant.parts[1];
  assert.ok(tools && tools.kind === "tools");
  assert.deepEqual(tools.calls.map((c) => [c.id, c.status]), [["t1", "done"], ["t2", "running"]]);
  assert.equal(tools.calls[0]!.input, '{"city":"Paris"}');
});

test("a user stop shows running tool calls as interrupted at once", () => {
  const events: EveEvent[] = [user(0, "go"), { type: EVENT.toolCallStarted, index: 1, toolCallId: "t1", name: "slow" }];
  const [, assistant] = renderItems(events, events.length);
  assert.ok(assistant && assistant.kind === "assistant");
  const tools = assistant.parts[0];
  assert.ok(tools && tools.kind === "tools");
  assert.equal(tools.calls[0]!.status, "interrupted");
});

test("authorization cards render pending and then their outcome", () => {
  const events = [user(0, "notion?"), authRequired(1)];
  const card = renderItems(events)[1];
  assert.ok(card && card.kind === "authorization");
  assert.equal(card.outcome, "pending");
  assert.equal(card.authorization.displayName, "Notion");
  const skipped = renderItems([...events, { type: EVENT.authorizationCompleted, authorizationId: "notion", outcome: "declined", local: true }])[1];
  assert.ok(skipped && skipped.kind === "authorization");
  assert.equal(skipped.outcome, "declined");
});

test("JSON equality ignores key order and compares by value", () => {
  assert.equal(areEqualJsonValues({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }), true);
  assert.equal(areEqualJsonValues({ a: 1 }, { a: 2 }), false);
  assert.equal(areEqualJsonValues([1, 2], [2, 1]), false);
  assert.equal(areEqualJsonValues({ a: null }, {}), false);
  assert.equal(areEqualJsonValues(null, {}), false);
});

test("snapshot keeps the known prefix when the observed events already contain it", () => {
  const known = [user(0, "a"), completed(1)];
  const observed = [{ index: 0, text: "a", type: EVENT.userMessage }, completed(1), user(2, "b"), completed(3)];
  assert.deepEqual(preserveKnownInitialEvents(observed, known), observed);
});

test("snapshot keeps an overlap between known and observed events once", () => {
  const known = [user(0, "a"), delta(1, "x")];
  const observed = [delta(1, "x"), completed(2)];
  assert.deepEqual(preserveKnownInitialEvents(observed, known), [user(0, "a"), delta(1, "x"), completed(2)]);
});

test("snapshot appends observed events that continue the known log", () => {
  const known = [user(0, "a"), completed(1)];
  const observed = [user(2, "b"), completed(3)];
  assert.deepEqual(preserveKnownInitialEvents(observed, known), [...known, ...observed]);
});

test("locally synthesised skip events are merged into the final snapshot once", () => {
  const skip = { type: EVENT.authorizationCompleted, authorizationId: "notion", outcome: "declined", local: true };
  const waiting = { type: EVENT.sessionWaiting, local: true };
  const log = [user(0, "a"), authRequired(1)];
  const merged = mergeLocalEvents(log, [{ eventIndex: 2, event: skip }, { eventIndex: 3, event: waiting }]);
  assert.deepEqual(merged, [...log, skip, waiting]);
  assert.deepEqual(mergeLocalEvents(merged, [{ eventIndex: 2, event: skip }]), merged);
  assert.deepEqual(buildSnapshot(log, [], [{ eventIndex: 2, event: skip }]), [...log, skip]);
});

test("the client context names enabled and disabled connections", () => {
  const ctx = createConnectionClientContext({ notion: true, linear: false, sentry: true });
  assert.match(ctx, /enabled for this turn: Notion, Sentry\./);
  assert.match(ctx, /disabled \(do not use them\): Linear\./);
  assert.match(createConnectionClientContext({}), /no connections/);
});

test("fallback titles come from the first message and are bounded", () => {
  assert.equal(createFallbackTitle("  hello\n world "), "hello world");
  assert.ok(createFallbackTitle("x".repeat(200)).length <= 58);
});

test("routes: root and chat ids, anything else not found", () => {
  assert.deepEqual(parseRoute("/"), { name: "home" });
  assert.deepEqual(parseRoute("/chat/abc-1_2"), { name: "chat", id: "abc-1_2" });
  assert.deepEqual(parseRoute("/chat/a/b"), { name: "not-found" });
  assert.equal(routeClass("/chat/x"), "route-chat");
  assert.equal(routeClass("/"), "route-home");
});

test("the sidebar cookie is read and written as open or closed", () => {
  assert.equal(sidebarClosedFromCookie("a=b; eve-chat-sidebar=closed"), true);
  assert.equal(sidebarClosedFromCookie("eve-chat-sidebar=open"), false);
  assert.equal(sidebarClosedFromCookie(""), false);
  assert.match(sidebarCookie(false, true), /^eve-chat-sidebar=closed; Path=\/; Max-Age=\d+; SameSite=Lax; Secure$/);
});

test("a tool call behind an authorization waits, then is declined or runs on", () => {
  const base: EveEvent[] = [
    user(0, "search notion"),
    { type: EVENT.toolCallStarted, index: 1, toolCallId: "c1", toolName: "notion_search" },
    { ...authRequired(2), toolCallId: "c1" },
  ];
  const statusOf = (events: EveEvent[]) => {
    const a = renderItems(events)[1];
    assert.ok(a && a.kind === "assistant");
    const part = a.parts[0];
    assert.ok(part && part.kind === "tools");
    return part.calls[0]!.status;
  };
  assert.equal(statusOf(base), "waiting");
  assert.equal(statusOf([...base, { type: EVENT.authorizationCompleted, authorizationId: "notion", outcome: "declined", local: true }]), "declined");
  assert.equal(statusOf([...base, { type: EVENT.authorizationCompleted, index: 3, authorizationId: "notion", outcome: "granted" }]), "running");
});

test("a settled turn shows a tool call without a result as interrupted", () => {
  const events: EveEvent[] = [user(0, "go"), { type: EVENT.toolCallStarted, index: 1, toolCallId: "t1", toolName: "wait" }, { type: EVENT.sessionWaiting, index: 2 }];
  const a = renderItems(events)[1];
  assert.ok(a && a.kind === "assistant" && a.parts[0]!.kind === "tools");
  assert.equal(a.parts[0].calls[0]!.status, "interrupted");
});

test("a tool call that asked the user is waiting for the answer, not interrupted", () => {
  const events: EveEvent[] = [
    user(0, "ask me"),
    { type: EVENT.toolCallStarted, index: 1, toolCallId: "t1", toolName: "ask_user" },
    { type: EVENT.inputRequested, index: 2, requestId: "q1", prompt: "Which city?", options: ["Paris", "Lima"] },
    { type: EVENT.sessionWaiting, index: 3, reason: "input" },
  ];
  const items = renderItems(events);
  const a = items[1];
  assert.ok(a && a.kind === "assistant" && a.parts[0]!.kind === "tools");
  assert.equal(a.parts[0].calls[0]!.status, "asking");
  const q = items[2];
  assert.ok(q && q.kind === "input");
  assert.equal(q.open, true);
  assert.deepEqual(q.options, ["Paris", "Lima"]);
  const answered = renderItems([...events, user(4, "Paris")])[2];
  assert.ok(answered && answered.kind === "input");
  assert.equal(answered.open, false);
});
