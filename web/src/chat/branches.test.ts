import assert from "node:assert/strict";
import { test } from "node:test";
import { branchAt, branchEvent, conversation, currentSeed, cutBefore, runsOf, seedContext, withSeed, ROOT_RUN } from "./branches";
import { appendToLog, reduceLog, renderItems, type EveEvent } from "./events";
import { eveStream, generatedStreams } from "../../test-fixtures/generated.mjs";

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

const texts = (events: EveEvent[], view: string | null = null) =>
  conversation(reduceLog(events), view, false, ORIGIN).items.flatMap((i) => (i.kind === "user" ? [`U:${i.text}`] : i.kind === "assistant" ? [`A:${i.parts.map((p) => (p.kind === "text" ? p.text : "")).join("")}`] : []));

test("a log without branches is one conversation, exactly as renderItems shows it", () => {
  for (const { name, events } of generatedStreams()) {
    const log = reduceLog(events);
    const conv = conversation(log, null, false, ORIGIN);
    assert.deepEqual(conv.items, renderItems(log, false, ORIGIN), name);
    assert.equal(conv.switchers.size, 0, name);
    assert.ok(conv.latest);
  }
});

test("an edit branches: the new session continues the prefix; both versions stay reachable with ‹ i/n ›", () => {
  const main = session("s1", ["one", "two", "three"]);
  let log = reduceLog(main);
  const conv = conversation(log, null, false, ORIGIN);
  assert.equal(conv.userCount, 3);
  // Edit message number 1 ("two").
  const req = branchAt(log, conv, 1);
  assert.equal(req.parent, ROOT_RUN);
  assert.equal(req.at, 1);
  assert.equal(req.context.split("\n").slice(1).join("|"), "User: one|Assistant: re: one");
  const marker = branchEvent(req);
  const events = [...main, marker, ...session("s2", ["TWO"])];
  log = reduceLog(events);
  assert.deepEqual(texts(events), ["U:one", "A:re: one", "U:TWO", "A:re: TWO"]);
  const latest = conversation(log, null, false, ORIGIN);
  assert.equal(latest.run, marker.meta!.id);
  const twoKey = [...latest.positions].find(([, k]) => k === 1)![0];
  assert.deepEqual(latest.switchers.get(twoKey), { index: 1, count: 2, targets: [ROOT_RUN, marker.meta!.id] });
  assert.equal(latest.switchers.size, 1, "only the edited message has versions");
  // ‹ shows the original branch, whole.
  assert.deepEqual(texts(events, ROOT_RUN), ["U:one", "A:re: one", "U:two", "A:re: two", "U:three", "A:re: three"]);
  const original = conversation(log, ROOT_RUN, false, ORIGIN);
  assert.equal(original.latest, false);
  assert.equal([...original.switchers.values()][0]!.index, 0);
  // New turns go to the latest run, whose seed is the prefix.
  assert.equal(currentSeed(log), req.context);
  assert.equal(runsOf(log).length, 2);
});

test("a second edit of the same message is a sibling (1/3), and an edit of the edit's later message nests", () => {
  const main = session("s1", ["one", "two"]);
  let events = [...main];
  let log = reduceLog(events);
  const b1 = branchEvent(branchAt(log, conversation(log, null), 1));
  events = [...events, b1, ...session("s2", ["TWO", "after"])];
  log = reduceLog(events);
  // Edit "TWO" again (it belongs to branch b1, which started at 1): a sibling under the root.
  const r2 = branchAt(log, conversation(log, null), 1);
  assert.equal(r2.parent, ROOT_RUN);
  const b2 = branchEvent(r2);
  events = [...events, b2, ...session("s3", ["Two!"])];
  log = reduceLog(events);
  const conv = conversation(log, null);
  assert.deepEqual([...conv.switchers.values()].map((s) => [s.index, s.count]), [[2, 3]]);
  // Back to b1 and edit its "after" (message 2): nested under b1.
  const b1conv = conversation(log, b1.meta!.id);
  assert.deepEqual(texts(events, b1.meta!.id), ["U:one", "A:re: one", "U:TWO", "A:re: TWO", "U:after", "A:re: after"]);
  const r3 = branchAt(log, b1conv, 2);
  assert.equal(r3.parent, b1.meta!.id);
  events = [...events, branchEvent(r3), ...session("s4", ["AFTER"])];
  assert.deepEqual(texts(events), ["U:one", "A:re: one", "U:TWO", "A:re: TWO", "U:AFTER", "A:re: AFTER"]);
  const nested = conversation(reduceLog(events), null);
  assert.deepEqual([...nested.switchers.values()].map((s) => [s.index, s.count]), [[1, 3], [1, 2]]);
});

test("a message typed while an older branch is shown continues that branch at its end", () => {
  const main = session("s1", ["one", "two"]);
  let log = reduceLog(main);
  const b1 = branchEvent(branchAt(log, conversation(log, null), 1));
  const events = [...main, b1, ...session("s2", ["TWO"])];
  log = reduceLog(events);
  const old = conversation(log, ROOT_RUN);
  const req = branchAt(log, old, old.userCount);
  assert.deepEqual([req.parent, req.at], [ROOT_RUN, 2]);
  const all = [...events, branchEvent(req), ...session("s3", ["three"])];
  assert.deepEqual(texts(all), ["U:one", "A:re: one", "U:two", "A:re: two", "U:three", "A:re: three"]);
});

test("a session replaced without a marker continues the same conversation; a bad marker falls back to the root", () => {
  const events = [...session("s1", ["one"]), ...session("s2", ["two"])];
  assert.deepEqual(texts(events), ["U:one", "A:re: one", "U:two", "A:re: two"]);
  const bad: EveEvent = { type: "eve-chat.branch", data: { parent: "nope", at: 0 }, meta: { id: "local_x", local: true } };
  const withBad = [...session("s1", ["one"]), bad, ...session("s2", ["uno"])];
  assert.deepEqual(texts(withBad), ["U:uno", "A:re: uno"]);
  const malformed: EveEvent = { type: "eve-chat.branch", data: { parent: "root", at: -1 }, meta: { id: "local_y", local: true } };
  assert.deepEqual(texts([...session("s1", ["one"]), malformed, ...session("s2", ["two"])]), ["U:one", "A:re: one", "U:two", "A:re: two"]);
});

test("cutBefore shows the conversation an edit on its way continues", () => {
  const log = reduceLog(session("s1", ["one", "two"]));
  const cut = cutBefore(conversation(log, null), 1);
  assert.equal(cut.items.filter((i) => i.kind === "user").length, 1);
  assert.equal(cut.userCount, 1);
});

test("the seed keeps the most recent turns within its budget, and fits next to the app's clientContext", () => {
  const items = renderItems(reduceLog(session("s1", ["a".repeat(100), "b".repeat(100), "c".repeat(100)])));
  const seed = seedContext(items, 400);
  assert.ok(seed.length <= 400, String(seed.length));
  assert.match(seed, /User: c{100}\nAssistant: re: c{100}$/);
  assert.doesNotMatch(seed, /User: a{100}/);
  assert.equal(seedContext([]), "");
  const ctx = "x".repeat(3900);
  assert.ok(withSeed(ctx, seed).length <= 4000);
  assert.equal(withSeed("ctx", ""), "ctx");
  assert.equal(withSeed("ctx", "seed"), "ctx\n\nseed");
});

test("while a later session streams, the earlier session's render items keep their identity (and all items stay right)", () => {
  const first = session("s1", ["one", "two"]);
  const live = session("s2", ["three"]);
  let log = reduceLog(first);
  const before = conversation(log, null, false, ORIGIN).items;
  const earlier = new Set(before);
  assert.ok(earlier.size >= 4);
  for (const e of live) {
    log = appendToLog(log, e);
    const items = conversation(log, null, false, ORIGIN).items;
    // Only the live segment is rendered again: a streamed delta costs what changed, not the chat.
    // (The chat's total rides on the latest usage line, a fresh copy whenever the total is shown.)
    before.forEach((item, i) => {
      if (!(item.kind === "usage" && item.chat)) assert.equal(items[i], item, `item ${i} after ${e.type}`);
    });
    assert.deepEqual(items, conversation(reduceLog([...first, ...live.slice(0, live.indexOf(e) + 1)]), null, false, ORIGIN).items);
  }
  assert.deepEqual(texts([...first, ...live]), ["U:one", "A:re: one", "U:two", "A:re: two", "U:three", "A:re: three"]);
});
