// The proof that the app's own reducer (eve-reducer.ts) is eve's: every recorded stream of the
// real eve 0.80.1 agent (test-fixtures/recordings, copied from ../shared/eve-reference) and every
// generated stream (test-fixtures/generated.mjs) goes through both, event by event, and the
// messages and the session projection must be identical after each event; the whole stream
// must also give the same messages as eve's EveAgentStore (which de-duplicates by meta.id).
import assert from "node:assert/strict";
import { test } from "node:test";
import { conversationReducer, defaultMessageReducer, EveAgentStore } from "eve/client";
import { initialEveState, reduceEveEvent, reduceEveEvents, type EveEvent } from "./eve-reducer";
import { loadStreams } from "../../test-fixtures/recordings.mjs";
import { generatedStreams } from "../../test-fixtures/generated.mjs";

interface Stream {
  name: string;
  events: EveEvent[];
}

const recorded: Stream[] = loadStreams();
const generated: Stream[] = generatedStreams();

function eveProjection(data: object): unknown {
  const sym = Object.getOwnPropertySymbols(data).find((s) => s.description === "eve.conversationProjection");
  assert.ok(sym, "eve keeps its session projection on the reducer data");
  return (data as Record<symbol, unknown>)[sym];
}

test("every recorded eve stream is in the fixtures", () => {
  assert.ok(recorded.length >= 34, `only ${recorded.length} recorded streams`);
  const events = recorded.reduce((n, r) => n + r.events.length, 0);
  assert.ok(events > 400, `only ${events} recorded events`);
  for (const r of recorded) assert.ok(r.events.every((e) => typeof e.type === "string" && e.meta), r.name);
});

for (const stream of [...recorded, ...generated]) {
  test(`same messages and projection as eve's defaultMessageReducer, event by event: ${stream.name}`, () => {
    const reducer = defaultMessageReducer();
    let theirs = reducer.initial();
    let ours = initialEveState();
    stream.events.forEach((event, i) => {
      theirs = reducer.reduce(theirs, event as never);
      ours = reduceEveEvent(ours, event);
      assert.deepStrictEqual(ours.messages, theirs.messages, `messages after event ${i} (${event.type})`);
      assert.deepStrictEqual(ours.projection, eveProjection(theirs), `projection after event ${i} (${event.type})`);
    });
  });

  test(`same messages as eve's EveAgentStore, replayed with duplicates: ${stream.name}`, () => {
    // The store drops an event whose meta.id it has applied already (a reconnect overlap).
    const replay = [...stream.events, ...stream.events.slice(0, Math.ceil(stream.events.length / 2))];
    const store = new EveAgentStore({ initialEvents: replay as never, reducer: conversationReducer });
    const byDefault = new EveAgentStore({ initialEvents: replay as never, reducer: defaultMessageReducer() });
    const seen = new Set<string>();
    const deduped = replay.filter((e) => !e.meta?.id || (!seen.has(e.meta.id) && !!seen.add(e.meta.id)));
    const ours = reduceEveEvents(deduped);
    assert.deepStrictEqual(ours.messages, store.snapshot.data.messages);
    assert.deepStrictEqual(ours.messages, byDefault.snapshot.data.messages);
    assert.deepStrictEqual(store.snapshot.events.length, deduped.length);
  });
}

test("the generated streams cover what the recordings do not", () => {
  const types = new Set([...recorded, ...generated].flatMap((s) => s.events.map((e) => e.type)));
  for (const t of [
    "reasoning.appended",
    "reasoning.completed",
    "action.input.appended",
    "actions.requested",
    "action.partial",
    "action.result",
    "input.requested",
    "input.resolved",
    "approval.candidate",
    "approval.settled",
    "authorization.required",
    "authorization.completed",
    "turn.waiting",
    "turn.cancelled",
    "turn.failed",
    "step.failed",
    "session.failed",
    "context.cleared",
    "compaction.requested",
    "compaction.completed",
    "session.completed",
    "task.started",
    "task.settled",
    "agent.started",
    "result.completed",
  ]) {
    assert.ok(types.has(t), t);
  }
});

test("keepUnsettledTools differs from eve only by the tool calls a turn ended without a result", () => {
  for (const stream of [...recorded, ...generated]) {
    const exact = reduceEveEvents(stream.events);
    const kept = reduceEveEvents(stream.events, { keepUnsettledTools: true });
    const exactIds = new Set(exact.messages.flatMap((m) => m.parts.flatMap((p) => (p.type === "dynamic-tool" ? [p.toolCallId] : []))));
    const pruned = kept.messages.map((m) => ({ ...m, parts: m.parts.filter((p) => p.type !== "dynamic-tool" || exactIds.has(p.toolCallId)) }));
    assert.deepStrictEqual(pruned, exact.messages, stream.name);
    assert.deepStrictEqual(kept.projection, exact.projection, stream.name);
  }
  const cancels = generated.find((s) => s.name === "gen-cancels")!;
  const kept = reduceEveEvents(cancels.events, { keepUnsettledTools: true });
  const tools = kept.messages[1]!.parts.filter((p) => p.type === "dynamic-tool");
  assert.deepStrictEqual(
    tools.map((p) => p.type === "dynamic-tool" && [p.toolCallId, p.state]),
    [
      ["s_1", "input-streaming"],
      ["s_2", "input-available"],
      ["s_3", "input-streaming"],
    ],
  );
});
