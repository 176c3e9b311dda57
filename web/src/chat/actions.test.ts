import assert from "node:assert/strict";
import { test } from "node:test";
import { answerText, highlight, lastUserText, parsePendingDeletes, retryableOutcome, shortcutFor, type KeyInput } from "./actions";
import { reduceLog, renderItems, type EveEvent } from "./events";
import { eveStream, generatedStreams } from "../../test-fixtures/generated.mjs";

const gen = (name: string): EveEvent[] => generatedStreams().find((s: { name: string }) => s.name === name)!.events;

test("retry is offered after a failed or a cancelled turn, not while one runs or after it completed", () => {
  const failed = gen("gen-failures");
  // The first turn fails retryably (session.waiting follows); the second fails the session.
  const firstEnd = failed.findIndex((e) => e.type === "session.waiting");
  assert.equal(retryableOutcome(reduceLog(failed.slice(0, firstEnd + 1))), "failed");
  assert.equal(retryableOutcome(reduceLog(failed)), "failed");
  assert.equal(retryableOutcome(reduceLog(gen("gen-cancels"))), "cancelled");

  const s = eveStream("ok");
  s.turn(0, "hi");
  s.step(0, 0).text(0, 0, "Hel");
  assert.equal(retryableOutcome(reduceLog(s.events)), null, "a running turn");
  s.text(0, 0, "lo").textDone(0, 0, "Hello").stepDone(0, 0).endTurn(0, "turn.completed").waiting();
  assert.equal(retryableOutcome(reduceLog(s.events)), null, "a completed turn");
  assert.equal(retryableOutcome(reduceLog([])), null);
});

test("retry resends the latest user message; copy takes the answer's text parts only", () => {
  const items = renderItems(reduceLog(gen("gen-failures")), false, "https://chat.example");
  assert.equal(lastUserText(items), "fail hard");
  assert.equal(lastUserText([]), null);
  const answer = {
    kind: "assistant" as const,
    key: "a",
    parts: [
      { kind: "reasoning" as const, text: "thinking", done: true },
      { kind: "text" as const, text: "First paragraph.\n" },
      { kind: "tools" as const, calls: [] },
      { kind: "text" as const, text: "```js\nx()\n```" },
    ],
  };
  assert.equal(answerText(answer), "First paragraph.\n\n```js\nx()\n```");
});

test("highlight marks every occurrence of the whole query, ASCII case-insensitively, as the server matches", () => {
  assert.deepEqual(highlight("Paris and paris", "PARIS"), [
    { text: "Paris", match: true },
    { text: " and ", match: false },
    { text: "paris", match: true },
  ]);
  assert.deepEqual(highlight("天气 in 北京", "北京"), [
    { text: "天气 in ", match: false },
    { text: "北京", match: true },
  ]);
  assert.deepEqual(highlight("no match here", "zzz"), [{ text: "no match here", match: false }]);
  assert.deepEqual(highlight("title", "  "), [{ text: "title", match: false }]);
  assert.deepEqual(highlight("aaaa", "aa"), [
    { text: "aa", match: true },
    { text: "aa", match: true },
  ]);
  // Only ASCII folds, as SQLite's LIKE does: "É" does not match "é".
  assert.deepEqual(highlight("École", "é"), [{ text: "École", match: false }]);
});

test("pending deletes: only well-formed entries survive a reload", () => {
  assert.deepEqual(parsePendingDeletes(null), []);
  assert.deepEqual(parsePendingDeletes("not json"), []);
  assert.deepEqual(parsePendingDeletes('{"id":"x"}'), []);
  assert.deepEqual(parsePendingDeletes('[{"id":"a","due":5},{"id":3,"due":1},null,{"id":"b"}]'), [{ id: "a", due: 5 }]);
});

test("shortcuts: Esc, Ctrl/Cmd+Shift+O, Ctrl/Cmd+K, and ? outside text fields", () => {
  const key = (k: Partial<KeyInput>): KeyInput => ({ key: "", ctrlKey: false, metaKey: false, shiftKey: false, altKey: false, inTextField: false, ...k });
  assert.equal(shortcutFor(key({ key: "Escape" })), "stop");
  assert.equal(shortcutFor(key({ key: "O", ctrlKey: true, shiftKey: true })), "new-chat");
  assert.equal(shortcutFor(key({ key: "o", metaKey: true, shiftKey: true })), "new-chat");
  assert.equal(shortcutFor(key({ key: "o", ctrlKey: true })), null, "Ctrl+O is the browser's");
  assert.equal(shortcutFor(key({ key: "k", ctrlKey: true })), "search");
  assert.equal(shortcutFor(key({ key: "k", metaKey: true, inTextField: true })), "search");
  assert.equal(shortcutFor(key({ key: "?", shiftKey: true })), "help");
  assert.equal(shortcutFor(key({ key: "?", shiftKey: true, inTextField: true })), null, "? types in the composer");
  assert.equal(shortcutFor(key({ key: "k" })), null);
});
