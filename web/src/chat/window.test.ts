import assert from "node:assert/strict";
import { test } from "node:test";
import { branchAt, branchEvent, conversation, currentSeed } from "./branches";
import { reduceLog, type EveEvent } from "./events";
import { fromSlot, needsWholeLog, opensInsideOpenTurn, reduceHeld, reductionInput, type Held } from "./window";
import { eveStream } from "../../test-fixtures/generated.mjs";

const ORIGIN = "https://chat.example";

/** One eve session answering each message with "re: <message>". */
function session(id: string, messages: string[]): EveEvent[] {
  const s = eveStream(id);
  s.e("session.started", { sessionId: id });
  messages.forEach((m, seq) => {
    s.turn(seq, m);
    s.step(seq, 0).text(seq, 0, `re: ${m}`).textDone(seq, 0, `re: ${m}`).stepDone(seq, 0).endTurn(seq).waiting();
  });
  return s.events;
}

type Item = ReturnType<typeof conversation>["items"][number];
const text = (i: Item) => (i.kind === "user" ? `U:${i.text}` : i.kind === "assistant" ? `A:${i.parts.map((p) => (p.kind === "text" ? p.text : "")).join("")}` : "");
const texts = (items: Item[]) => items.map(text).filter(Boolean);

const held = (events: EveEvent[], offset: number, branchBefore: EveEvent | null = null): Held => ({ offset, events: events.slice(offset), branchBefore });

test("a window of a branchless chat shows the exact tail of its conversation", () => {
  const log = session("s1", Array.from({ length: 12 }, (_, i) => `m${i}`));
  const whole = texts(conversation(reduceLog(log), null, false, ORIGIN).items);
  for (let offset = 1; offset < log.length; offset += 7) {
    const shown = texts(conversation(reduceHeld(held(log, offset)), null, false, ORIGIN).items);
    // The first item may be a part of a message that started before the window; the rest is exact.
    assert.deepEqual(shown.slice(1), whole.slice(whole.length - shown.length + 1), `offset ${offset}`);
  }
});

test("earlier pages prepended keep the keys of what was shown, so the page does not re-render or jump", () => {
  const log = [...session("s1", ["a", "b", "c"]), ...session("s2", ["d", "e"]), ...session("s3", ["f", "g", "h"])];
  let previous = reduceHeld(held(log, log.length - 20));
  const keysOf = (l: ReturnType<typeof reduceHeld>) => conversation(l, null, false, ORIGIN).items.map((i) => `${i.key}|${text(i)}`);
  for (let offset = log.length - 40; offset > -20; offset -= 20) {
    const before = keysOf(previous).slice(2);
    const next = reduceHeld(held(log, Math.max(0, offset)), previous, true);
    const after = keysOf(next);
    assert.deepEqual(after.slice(after.length - before.length), before, `offset ${offset}`);
    previous = next;
  }
  assert.deepEqual(texts(conversation(previous, null, false, ORIGIN).items), texts(conversation(reduceLog(log), null, false, ORIGIN).items));
});

test("a window after a branch continues that branch: its tail and its seed are the whole log's", () => {
  const main = session("s1", ["one", "two", "three"]);
  const log0 = reduceLog(main);
  const req = branchAt(log0, conversation(log0, null, false, ORIGIN), 1);
  const marker = branchEvent({ ...req, context: "User: one" });
  const log = [...main, marker, ...session("s2", ["two, edited", "four", "five"])];
  const whole = conversation(reduceLog(log), null, false, ORIGIN);
  const offset = log.indexOf(marker) + 9;
  const h = held(log, offset, marker);
  assert.equal(reductionInput(h)[0], marker);
  assert.equal(needsWholeLog(h), false);
  const shown = conversation(reduceHeld(h), null, false, ORIGIN);
  assert.deepEqual(texts(shown.items).slice(1), texts(whole.items).slice(-texts(shown.items).length + 1));
  assert.equal(currentSeed(reduceHeld(h)), currentSeed(reduceLog(log)));
  assert.equal(shown.switchers.size, 0);
});

test("a window that holds a branch marker but not the log's start must read the earlier pages", () => {
  const main = session("s1", ["one", "two"]);
  const marker = branchEvent({ parent: "root", at: 1, context: "" });
  const log = [...main, marker, ...session("s2", ["two again"])];
  assert.equal(needsWholeLog(held(log, log.indexOf(marker) - 2)), true);
  assert.equal(needsWholeLog(held(log, 0)), false);
  assert.equal(needsWholeLog(held(log, log.indexOf(marker) + 1, marker)), false);
});

test("the stored events of the slots a runtime holds, from a window that starts before or after them", () => {
  const ev = (n: number): EveEvent => ({ type: "x", data: { n } });
  const page = [ev(10), ev(11), ev(12), ev(13)];
  assert.deepEqual(fromSlot(10, page, 12), [ev(12), ev(13)]);
  assert.deepEqual(fromSlot(10, page, 8), page);
  assert.deepEqual(fromSlot(10, page, 20), []);
});

test("a window that starts inside the open turn a resume re-reads must reach back to its start", () => {
  const s = eveStream("s1");
  s.turn(0, "one");
  s.step(0, 0).text(0, 0, "re: one").textDone(0, 0, "re: one").stepDone(0, 0).endTurn(0).waiting();
  s.turn(1, "a long answer");
  s.step(1, 0).text(1, 0, ...Array.from({ length: 30 }, (_, i) => `${i} `));
  const log = s.events;
  const start = log.findIndex((e) => e.type === "turn.started" && e.data?.turnId === "turn_1");
  assert.equal(opensInsideOpenTurn(log.slice(start + 5)), true);
  assert.equal(opensInsideOpenTurn(log.slice(start)), false);
  assert.equal(opensInsideOpenTurn(log.slice(start - 2)), false);
  // A settled chat resumes nothing, wherever its window starts.
  s.textDone(1, 0, "…").stepDone(1, 0).endTurn(1).waiting();
  assert.equal(opensInsideOpenTurn(s.events.slice(start + 5)), false);
});
