// The old-dialect → eve converter (legacy.ts): pure, deterministic, and its output renders
// through the same eve reducer as a live chat.
import assert from "node:assert/strict";
import { test } from "node:test";
import { getPendingAuthorizations, hasOpenTurn, openInputs, reduceLog, renderItems, type RenderItem } from "./events";
import { convertLegacyLog, isEveShaped, isLegacyLog, type StoredEvent } from "./legacy";
import { generatedStreams } from "../test-fixtures/generated.mjs";

const ORIGIN = "https://chat.example";

// A chat as the old agent wrote it (crates/eve-api/src/eve.rs before the switch), with indexes.
const indexed = (events: Record<string, unknown>[]): StoredEvent[] => events.map((e, index) => ({ ...e, index }) as StoredEvent);
const oldChat = indexed([
  { type: "user.message", text: "weather in Paris?" },
  { type: "assistant.reasoning.delta", delta: "Need a tool." },
  { type: "tool.call.started", toolCallId: "c1", toolName: "get_weather" },
  { type: "tool.call.input.delta", toolCallId: "c1", delta: '{"city":' },
  { type: "tool.call.input.delta", toolCallId: "c1", delta: '"Paris"}' },
  { type: "tool.call.ready", toolCallId: "c1", toolName: "get_weather", input: { city: "Paris" } },
  { type: "tool.call.result", toolCallId: "c1", toolName: "get_weather", output: { tempC: 18 }, isError: false },
  { type: "assistant.text.delta", delta: "It is " },
  { type: "assistant.text.delta", delta: "**18 °C**." },
  { type: "usage", inputTokens: 10, outputTokens: 5 },
  { type: "session.completed", finishReason: "stop" },
  { type: "user.message", text: "search notion" },
  { type: "tool.call.started", toolCallId: "c2", toolName: "notion_search" },
  { type: "authorization.required", authorizationId: "auth-1", connection: "notion", displayName: "Notion", description: "Search pages", connectUrl: "/connect/notion", toolCallId: "c2" },
]);
const skipped = [
  ...oldChat,
  { type: "authorization.completed", authorizationId: "auth-1", connection: "notion", outcome: "declined", local: true },
  { type: "session.waiting", local: true, reason: "authorization-skipped" },
] as StoredEvent[];

test("old-dialect logs are recognised; eve logs are not", () => {
  assert.equal(isLegacyLog(oldChat), true);
  assert.equal(isLegacyLog([]), false);
  for (const s of generatedStreams()) assert.equal(isLegacyLog(s.events), false, s.name);
  assert.equal(isEveShaped({ type: "session.waiting", local: true } as StoredEvent), false);
  assert.equal(isEveShaped({ type: "session.waiting", data: {}, meta: { id: "evt_1", at: "x" } }), true);
});

test("the converter is pure and deterministic, and leaves eve events alone", () => {
  const a = convertLegacyLog(oldChat);
  const b = convertLegacyLog(JSON.parse(JSON.stringify(oldChat)));
  assert.deepEqual(a, b);
  assert.ok(a.every(isEveShaped));
  assert.equal(new Set(a.map((e) => e.meta!.id)).size, a.length, "ids are unique");
  assert.ok(a.every((e) => /^evt_legacy_\d+_\d+$/.test(e.meta!.id!)));
  const eve = generatedStreams()[0]!.events;
  assert.deepEqual(convertLegacyLog(eve), eve);
  // A chat continued after the switch: old prefix converted, eve suffix passed through.
  const mixed = convertLegacyLog([...oldChat.slice(0, 11), ...eve]);
  assert.deepEqual(mixed.slice(-eve.length), eve);
});

test("a converted chat renders like the live one: text, reasoning, tools, sign-in", () => {
  const log = reduceLog(convertLegacyLog(oldChat));
  const items = renderItems(log, false, ORIGIN);
  assert.deepEqual(items.map((i) => i.kind), ["user", "assistant", "user", "assistant", "authorization"]);
  const first = items[1] as Extract<RenderItem, { kind: "assistant" }>;
  assert.deepEqual(
    first.parts.map((p) => (p.kind === "tools" ? p.calls.map((c) => [c.name, c.status, c.input, c.output]) : [p.kind, p.text])),
    [["reasoning", "Need a tool."], [["Get weather", "done", '{"city":"Paris"}', { tempC: 18 }]], ["text", "It is **18 °C**."]],
  );
  const second = items[3] as Extract<RenderItem, { kind: "assistant" }>;
  assert.deepEqual(second.parts.map((p) => p.kind === "tools" && p.calls.map((c) => c.status)), [["waiting"]]);
  const pending = getPendingAuthorizations(log, ORIGIN);
  assert.deepEqual(pending.map((a) => [a.id, a.name, a.displayName, a.description, a.connectUrl]), [["auth-1", "notion", "Notion", "Search pages", null]]);
  assert.equal(hasOpenTurn(convertLegacyLog(oldChat)), false, "a sign-in wait is settled");
});

test("a locally skipped old authorization stays local and declined", () => {
  const events = convertLegacyLog(skipped);
  const log = reduceLog(events);
  assert.deepEqual(getPendingAuthorizations(log, ORIGIN), []);
  const card = renderItems(log, false, ORIGIN).find((i) => i.kind === "authorization");
  assert.ok(card && card.kind === "authorization");
  assert.equal(card.outcome, "declined");
  assert.deepEqual(
    events.filter((e) => e.meta?.local).map((e) => e.type),
    ["authorization.completed", "turn.cancelled", "session.waiting"],
  );
  assert.equal(hasOpenTurn(events), false);
});

test("old questions, failures, interrupts and discarded fragments", () => {
  const events = convertLegacyLog(
    indexed([
      { type: "user.message", text: "ask me" },
      { type: "tool.call.started", toolCallId: "t1", toolName: "ask_user" },
      { type: "input.requested", requestId: "q1", prompt: "Which city?", options: ["Paris", "Lima"] },
      { type: "session.waiting", reason: "input" },
      { type: "assistant.text.delta", delta: "Paris, then." },
      { type: "session.completed" },
      { type: "user.message", text: "fail" },
      { type: "session.failed", message: "provider down", code: "upstream" },
      { type: "user.message", text: "slow" },
      { type: "tool.call.started", toolCallId: "t2", toolName: "slow" },
      { type: "tool.call.input.delta", toolCallId: "t2", delta: "{" },
      { type: "tool.call.result", toolCallId: "t2", toolName: "slow", output: null, isError: true, discarded: true },
      { type: "tool.call.started", toolCallId: "t3", toolName: "slow" },
      { type: "tool.call.ready", toolCallId: "t3", toolName: "slow", input: {} },
      { type: "session.waiting", reason: "interrupted", local: true },
      { type: "user.message", text: "open" },
      { type: "input.requested", requestId: "q2", prompt: "Name?" },
      { type: "session.waiting", reason: "input" },
    ]),
  );
  const log = reduceLog(events);
  const items = renderItems(log, false, ORIGIN);
  const questions = items.filter((i): i is Extract<RenderItem, { kind: "input" }> => i.kind === "input");
  assert.deepEqual(questions.map((q) => [q.requestId, q.open, q.options.map((o) => o.label), q.allowFreeform]), [
    ["q1", false, ["Paris", "Lima"], false],
    ["q2", true, [], true],
  ]);
  assert.deepEqual(openInputs(log).map((q) => q.requestId), ["q2"]);
  assert.deepEqual(
    items.filter((i) => i.kind === "notice").map((i) => i.kind === "notice" && [i.tone, i.text]),
    [["error", "provider down"], ["info", "Response stopped."]],
  );
  const statuses = items.flatMap((i) => (i.kind === "assistant" ? i.parts.flatMap((p) => (p.kind === "tools" ? p.calls.map((c) => [c.id, c.status]) : [])) : []));
  // t1 asked and was answered; t2 was a discarded fragment and t3 never ran before the stop; a
  // question with no tool call of its own gets one (eve attaches every request to a call).
  assert.deepEqual(statuses, [["t1", "done"], ["t2", "interrupted"], ["t3", "interrupted"], ["legacy_ask_16", "asking"]]);
  assert.equal(hasOpenTurn(events), false);
});
