import assert from "node:assert/strict";
import { test } from "node:test";
import { renderItems, reduceLog } from "./events";
import type { EveEvent } from "../api/types";

const ev = (type: string, data: Record<string, unknown>): EveEvent => ({ type, data, meta: { id: `${type}:${Math.random()}` } }) as unknown as EveEvent;

function turn(sequence: number, text: string, steps: Array<[number, number]>): EveEvent[] {
  const turnId = `turn_${sequence}`;
  const out: EveEvent[] = [ev("turn.started", { sequence, turnId }), ev("message.received", { turnId, message: `q${sequence}`, parts: [{ type: "text", text: `q${sequence}` }] })];
  steps.forEach(([input, output], stepIndex) => {
    out.push(ev("step.started", { turnId, stepIndex, modelId: "openai/m" }));
    if (stepIndex === steps.length - 1) out.push(ev("message.appended", { turnId, stepIndex, messageDelta: text }), ev("message.completed", { turnId, stepIndex, message: text }));
    out.push(ev("step.completed", { turnId, stepIndex, finishReason: "stop", usage: { inputTokens: input, outputTokens: output } }));
  });
  out.push(ev("turn.completed", { turnId, sequence }), ev("session.waiting", { continuationToken: "s", wait: "next-user-message", usage: {} }));
  return out;
}

test("each settled answer gets its tokens (every step counted), the latest also the chat's", () => {
  const events = [ev("session.started", { sessionId: "s" }), ...turn(0, "one", [[100, 20], [150, 30]]), ...turn(1, "two", [[400, 5]])];
  const usage = renderItems(reduceLog(events)).filter((i) => i.kind === "usage");
  assert.equal(usage.length, 2);
  assert.deepEqual(usage[0], { kind: "usage", key: "s0:usage:turn_0", usage: { inputTokens: 250, outputTokens: 50, model: "openai/m" } });
  assert.equal(usage[0]!.kind === "usage" && usage[0]!.chat, undefined);
  assert.deepEqual(usage[1]!.kind === "usage" && usage[1]!.chat, { inputTokens: 650, outputTokens: 55 });
});

test("a running answer shows no usage yet", () => {
  const events = [ev("session.started", { sessionId: "s" }), ...turn(0, "one", [[100, 20]]).slice(0, -2)];
  assert.equal(renderItems(reduceLog(events)).filter((i) => i.kind === "usage").length, 0);
});
