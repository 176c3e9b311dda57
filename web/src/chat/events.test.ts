import assert from "node:assert/strict";
import { test } from "node:test";
import {
  activeTurnId,
  appendToLog,
  areEqualJsonValues,
  buildSnapshot,
  createConnectionClientContext,
  createFallbackTitle,
  getPendingAuthorizations,
  hasLatestUserMessage,
  hasOpenTurn,
  isSettlingEvent,
  MAX_MESSAGE_CHARS,
  MESSAGE_FIELD_MAX_LENGTH,
  mergeLocalEvents,
  messageChars,
  openInputs,
  preserveKnownInitialEvents,
  reduceLog,
  renderItems,
  safeConnectUrl,
  rebaseLog,
  skipEvents,
  TurnWatch,
  type EveEvent,
  type RenderItem,
} from "./events";
import { parseRoute, routeClass, sidebarClosedFromCookie, sidebarCookie } from "../shell/layout";
import { eveStream, generatedStreams } from "../../test-fixtures/generated.mjs";
import { loadStreams } from "../../test-fixtures/recordings.mjs";

const ORIGIN = "https://chat.example";
const gen = (name: string): EveEvent[] => generatedStreams().find((s: { name: string }) => s.name === name)!.events;
const rec = (name: string): EveEvent[] => loadStreams().find((s: { name: string }) => s.name === name)!.events;
// Usage lines have their own tests (usage.test.ts).
const items = (events: EveEvent[], stopped = false) => renderItems(reduceLog(events), stopped, ORIGIN).filter((i) => i.kind !== "usage");
const ofKind = <K extends RenderItem["kind"]>(list: RenderItem[], kind: K) => list.filter((i): i is Extract<RenderItem, { kind: K }> => i.kind === kind);
const toolStatuses = (list: RenderItem[]) =>
  ofKind(list, "assistant").flatMap((a) => a.parts.flatMap((p) => (p.kind === "tools" ? p.calls.map((c) => [c.id, c.status]) : [])));

test("settling events: session waiting, failed, completed, and a turn parked on a person", () => {
  for (const e of [
    { type: "session.waiting", data: {} },
    { type: "session.failed", data: {} },
    { type: "session.completed" },
    { type: "turn.waiting", data: { on: "input" } },
  ]) {
    assert.equal(isSettlingEvent(e), true, e.type);
  }
  assert.equal(isSettlingEvent({ type: "turn.waiting", data: { on: "tasks" } }), false);
  assert.equal(isSettlingEvent({ type: "turn.completed", data: {} }), false);
  assert.equal(isSettlingEvent({ type: "message.completed", data: {} }), false);
});

test("a turn is open from its first event until a settling event", () => {
  const hi = rec("03a-stream-full-follow");
  assert.equal(hasOpenTurn([]), false);
  assert.equal(hasOpenTurn(hi.slice(0, 3)), true);
  assert.equal(hasOpenTurn(hi.slice(0, -1)), true, "turn.completed without session.waiting is still open");
  assert.equal(hasOpenTurn(hi), false);
  const question = gen("gen-question");
  assert.equal(hasOpenTurn(question), false, "a turn parked on a question is settled for the browser");
  const tasks = gen("gen-assorted");
  const parked = tasks.findIndex((e) => e.type === "turn.waiting");
  assert.equal(hasOpenTurn(tasks.slice(0, parked + 1)), true, "a turn waiting on tasks goes on by itself");
});

test("a locally skipped authorization closes the turn", () => {
  const log = gen("gen-authorizations");
  const upToWait = log.slice(0, log.findIndex((e) => e.type === "turn.waiting") + 1);
  const auth = getPendingAuthorizations(reduceLog(upToWait), ORIGIN)[0]!;
  const [completed, waiting] = skipEvents(auth, "gen_auth", new Date(0));
  assert.equal(hasOpenTurn([...upToWait, completed]), false);
  assert.equal(hasOpenTurn([...upToWait, completed, waiting]), false);
  assert.deepEqual(completed.data, {
    attemptId: "att_1",
    authorization: { displayName: "Notion", url: "/eve/v1/connections/notion/authorize?attempt=att_1" },
    name: "notion",
    outcome: "declined",
    sequence: 0,
    stepIndex: 0,
    turnId: "turn_0",
  });
  assert.equal(completed.meta?.local, true);
  assert.match(completed.meta!.id!, /^local_/);
  assert.deepEqual(waiting.data, { continuationToken: "gen_auth", wait: "next-user-message" });
});

test("after a send, only the boundary of that delivery ends the wait", () => {
  const s = eveStream("watch");
  s.turn(0, "old");
  s.endTurn(0, "turn.cancelled").waiting();
  s.delivery("mine");
  s.turn(1, "new");
  s.step(1, 0).text(1, 0, "hi").endTurn(1).waiting();
  const watch = new TurnWatch("mine");
  const ends = s.events.map((e: EveEvent) => watch.observe(e).ends);
  assert.deepEqual(ends.map((x: boolean, i: number) => (x ? s.events[i].type : null)).filter(Boolean), ["session.waiting"]);
  assert.equal(ends.lastIndexOf(true), s.events.length - 1, "the earlier turn's session.waiting is not ours");
  // Without a delivery id (a new session, an input response, a resume) the first boundary ends it.
  const any = new TurnWatch();
  assert.equal(s.events.findIndex((e: EveEvent) => any.observe(e).ends), 4);
  // A message that steered a running turn: that turn's later events are ours even if eve kept
  // only the first delivery's id on them, and the session parking ends the wait in any case.
  const steered = new TurnWatch("mine");
  steered.observe({ type: "message.received", data: { turnId: "turn_3" }, meta: { id: "a", deliveryIds: ["mine"] } });
  assert.equal(steered.observe({ type: "turn.waiting", data: { on: "tasks", turnId: "turn_3" }, meta: { id: "b", deliveryIds: ["first"] } }).ends, false);
  assert.equal(steered.observe({ type: "turn.waiting", data: { on: "input", turnId: "turn_4" }, meta: { id: "c", deliveryIds: ["other"] } }).ends, false);
  assert.equal(steered.observe({ type: "turn.waiting", data: { on: "input", turnId: "turn_3" }, meta: { id: "d", deliveryIds: ["first"] } }).ends, true);
  const parked = new TurnWatch("mine");
  parked.observe({ type: "message.received", data: { turnId: "turn_3" }, meta: { id: "a", deliveryIds: ["mine"] } });
  assert.equal(parked.observe({ type: "session.waiting", data: {}, meta: { id: "c", deliveryIds: ["first"] } }).ends, true);
  // A session that ends before our turn shows still ends the wait.
  const late = new TurnWatch("never");
  assert.equal(late.observe({ type: "session.failed", data: {}, meta: { id: "x", deliveryIds: ["other"] } }).ends, true);
});

test("pending authorizations: required and not completed, in the current session", () => {
  const log = gen("gen-authorizations");
  const at = (type: string, n = 1) => {
    let seen = 0;
    return log.findIndex((e) => e.type === type && ++seen === n) + 1;
  };
  const pending = getPendingAuthorizations(reduceLog(log.slice(0, at("turn.waiting"))), ORIGIN);
  assert.equal(pending.length, 1);
  assert.deepEqual(
    { id: pending[0]!.id, name: pending[0]!.name, displayName: pending[0]!.displayName, connectUrl: pending[0]!.connectUrl, description: pending[0]!.description },
    { id: "att_1", name: "notion", displayName: "Notion", connectUrl: "/eve/v1/connections/notion/authorize?attempt=att_1", description: "Authorization required for Notion" },
  );
  assert.deepEqual(getPendingAuthorizations(reduceLog(log.slice(0, at("authorization.completed"))), ORIGIN), []);
  const linear = getPendingAuthorizations(reduceLog(log.slice(0, at("turn.waiting", 2))), ORIGIN);
  assert.deepEqual(linear.map((a) => [a.id, a.userCode, a.instructions, a.connectUrl]), [["linear", "ABCD-1234", "Ask an admin.", null]]);
  assert.deepEqual(getPendingAuthorizations(reduceLog(log), ORIGIN), []);
});

test("Connect only ever opens a same-origin /eve/v1/ link", () => {
  assert.equal(safeConnectUrl("/eve/v1/connections/notion/authorize?a=1#x", ORIGIN), "/eve/v1/connections/notion/authorize?a=1#x");
  assert.equal(safeConnectUrl("https://chat.example/eve/v1/cb", ORIGIN), "/eve/v1/cb");
  assert.equal(safeConnectUrl("https://evil.example/eve/v1/cb", ORIGIN), null);
  assert.equal(safeConnectUrl("//evil.example/eve/v1/cb", ORIGIN), null);
  assert.equal(safeConnectUrl("/connect/notion", ORIGIN), null);
  assert.equal(safeConnectUrl("javascript:alert(1)", ORIGIN), null);
  assert.equal(safeConnectUrl("/eve/v1/../api/chats", ORIGIN), null);
  assert.equal(safeConnectUrl("/eve/v1/..%2f..%2fapi/chats", ORIGIN), null);
  assert.equal(safeConnectUrl("/eve/v1/%2E%2E%5Capi", ORIGIN), null);
  assert.equal(safeConnectUrl(undefined, ORIGIN), null);
});

test("questions: open until input.resolved; the answer shows afterwards", () => {
  const log = gen("gen-question");
  const firstWait = log.findIndex((e) => e.type === "turn.waiting") + 1;
  const open = openInputs(reduceLog(log.slice(0, firstWait)));
  assert.deepEqual(
    open.map((q) => [q.requestId, q.requestKind, q.prompt, q.allowFreeform, q.options.map((o) => o.label)]),
    [["req_1", "question", "Which city?", true, ["Paris", "Lima"]]],
  );
  const asked = items(log.slice(0, firstWait));
  assert.deepEqual(toolStatuses(asked), [["ask_1", "asking"]]);
  assert.equal(ofKind(asked, "input")[0]!.open, true);
  const all = items(log);
  const cards = ofKind(all, "input");
  assert.deepEqual(cards.map((c) => [c.requestId, c.open, c.answer]), [
    ["req_1", false, "Kyoto"],
    ["req_2", true, null],
  ]);
  assert.equal(cards[1]!.allowFreeform, false);
  assert.deepEqual(openInputs(reduceLog(log)).map((q) => q.requestId), ["req_2"]);
});

test("render: user text and files, streamed text, authoritative completion, reasoning, grouped tools", () => {
  const list = items(gen("gen-reasoning-and-tools"));
  assert.deepEqual(list.map((i) => i.kind), ["user", "assistant", "user", "assistant"]);
  const [, first] = list;
  assert.ok(first?.kind === "assistant");
  assert.deepEqual(
    first.parts.map((p) => (p.kind === "tools" ? p.calls.map((c) => `${c.name}:${c.status}:${c.input}`) : p.kind === "reasoning" ? `R:${p.text}:${p.done}` : p.text)),
    ["R:The user wants two cities.:true", "Let me check.", ["Checked Paris:done:{\"city\":\"Paris\"}", "Get weather:done:{\"city\":\"Rome\"}"], "Paris 18 °C, Rome 24 °C."],
  );
  const assorted = items(gen("gen-assorted"));
  const user = ofKind(assorted, "user")[0]!;
  assert.equal(user.text, "see attached");
  assert.deepEqual(user.files, [
    { filename: "a.txt", mediaType: "text/plain", size: 12, url: undefined },
    { filename: undefined, mediaType: "image/png", size: undefined, url: "data:image/png;base64,iVBORw0KGgo=" },
  ]);
  const last = ofKind(assorted, "assistant").at(-1)!;
  // message.completed is authoritative for its block; a later delta opens a new block (as in eve).
  assert.deepEqual(last.parts, [
    { kind: "text", text: "Final answer" },
    { kind: "text", text: " more" },
  ]);
});

test("render while streaming: deltas append to the current message, never replace older ones", () => {
  const hi = rec("03a-stream-full-follow");
  const partial = hi.slice(0, hi.findIndex((e) => e.type === "message.completed"));
  const list = items(partial);
  assert.deepEqual(list.map((i) => i.kind), ["user", "assistant"]);
  assert.deepEqual((list[1] as Extract<RenderItem, { kind: "assistant" }>).parts, [{ kind: "text", text: "Hello from the reference model." }]);
  const steer = items(rec("13c-stream-steer"));
  assert.deepEqual(ofKind(steer, "user").map((u) => u.text), ["slow please", "actually say hello"]);
  assert.equal(ofKind(steer, "assistant").length, 2);
});

test("tool calls: running, interrupted at a stop at once, interrupted after a cancel", () => {
  const log = gen("gen-cancels");
  const beforeCancel = log.slice(0, log.findIndex((e) => e.type === "turn.cancelled"));
  assert.deepEqual(toolStatuses(items(beforeCancel)), [["s_1", "running"], ["s_2", "running"], ["s_3", "running"]]);
  assert.deepEqual(toolStatuses(items(beforeCancel, true)), [["s_1", "interrupted"], ["s_2", "interrupted"], ["s_3", "interrupted"]]);
  const after = items(log);
  assert.deepEqual(toolStatuses(after), [["s_1", "interrupted"], ["s_2", "interrupted"], ["s_3", "interrupted"]]);
  assert.deepEqual(ofKind(after, "notice").map((n) => n.text), ["Response stopped.", "Response stopped.", "Response stopped."]);
});

test("tool calls behind a sign-in wait, then run on or show as not connected", () => {
  const log = gen("gen-authorizations");
  const waitAt = log.findIndex((e) => e.type === "turn.waiting") + 1;
  assert.deepEqual(toolStatuses(items(log.slice(0, waitAt))), [["n_1", "waiting"]]);
  const list = items(log);
  assert.deepEqual(toolStatuses(list), [["n_1", "done"], ["l_1", "declined"]]);
  const cards = ofKind(list, "authorization");
  assert.deepEqual(cards.map((c) => [c.authorization.name, c.outcome]), [["notion", "authorized"], ["linear", "declined"], ["sentry", "failed"]]);
  assert.equal(ofKind(list, "notice").length, 0, "a turn cancelled to decline a sign-in adds no stop notice");
});

test("approvals: asking, approved and run, denied", () => {
  const log = gen("gen-approvals");
  const waitAt = log.findIndex((e) => e.type === "turn.waiting") + 1;
  assert.deepEqual(toolStatuses(items(log.slice(0, waitAt))), [["c_a", "asking"], ["c_b", "asking"]]);
  const list = items(log);
  assert.deepEqual(toolStatuses(list), [["c_a", "done"], ["c_b", "denied"]]);
  // An approval's card reads how it ended, with the denial's note (issue 23), and names the
  // tool and its input.
  assert.deepEqual(ofKind(list, "input").map((c) => [c.requestKind, c.open, c.answer]), [
    ["tool-approval", false, "Approved"],
    ["tool-approval", false, "Declined: “Only a.”"],
  ]);
  for (const c of ofKind(list, "input")) assert.ok(c.toolName && c.toolInput !== undefined, JSON.stringify(c));
});

test("failures: one notice per failed turn, the session failure only when it says more", () => {
  const list = items(gen("gen-failures"));
  assert.deepEqual(ofKind(list, "notice").map((n) => [n.tone, n.text]), [
    ["error", "upstream 500"],
    ["error", "bad request"],
  ]);
  assert.deepEqual(list.map((i) => i.kind), ["user", "assistant", "notice", "user", "notice"]);
  const recorded = items(rec("12b-stream-fail-turn"));
  assert.deepEqual(ofKind(recorded, "notice").map((n) => n.text), ["fake model refused: message contained 'fail'"]);
});

test("clear, compaction and the end of a session are noted in place", () => {
  const list = items(gen("gen-controls"));
  assert.deepEqual(list.map((i) => (i.kind === "notice" ? i.text.split(":")[0]!.split(";")[0] : i.kind)), [
    "user",
    "assistant",
    "Context cleared",
    "Earlier messages were summarised to fit the context.",
    "This session has ended",
  ]);
  const full = items(rec("08s-full-history-after-reset"));
  assert.ok(ofKind(full, "notice").some((n) => n.text.startsWith("Context cleared")));
});

test("a chat whose session was replaced renders both sessions' turn_0 separately", () => {
  const a = eveStream("first");
  a.turn(0, "one");
  a.step(0, 0).text(0, 0, "first answer").endTurn(0).waiting();
  const b = eveStream("second");
  b.turn(0, "two");
  b.step(0, 0).text(0, 0, "second answer").endTurn(0).waiting();
  const log = reduceLog([...a.events, ...b.events]);
  assert.equal(log.segments.length, 2);
  const list = renderItems(log, false, ORIGIN);
  assert.deepEqual(list.map((i) => (i.kind === "user" ? i.text : i.kind === "assistant" && i.parts[0]?.kind === "text" ? i.parts[0].text : i.kind)), [
    "one",
    "first answer",
    "two",
    "second answer",
  ]);
  assert.equal(new Set(list.map((i) => i.key)).size, list.length, "keys are unique");
});

test("the log is reduced incrementally to the same result", () => {
  const events = [...gen("gen-question"), ...gen("gen-authorizations")];
  let log = reduceLog([]);
  for (const e of events) log = appendToLog(log, e);
  assert.deepEqual(log, reduceLog(events));
  assert.equal(activeTurnId(reduceLog(gen("gen-question"))), "turn_1");
  assert.equal(activeTurnId(reduceLog(rec("03a-stream-full-follow"))), undefined);
});

test("the optimistic bubble goes when eve's message.received for it arrives", () => {
  const hi = rec("03a-stream-full-follow");
  assert.equal(hasLatestUserMessage(hi, "hi", 0), true);
  assert.equal(hasLatestUserMessage(hi, "hello", 0), false);
  assert.equal(hasLatestUserMessage(hi, "hi", 5), false);
});

test("JSON equality ignores key order and compares by value", () => {
  assert.equal(areEqualJsonValues({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }), true);
  assert.equal(areEqualJsonValues({ a: 1 }, { a: 2 }), false);
  assert.equal(areEqualJsonValues([1, 2], [2, 1]), false);
  assert.equal(areEqualJsonValues({ a: null }, {}), false);
  assert.equal(areEqualJsonValues(null, {}), false);
});

const hiEvents = () => rec("03a-stream-full-follow");

test("snapshot keeps the known prefix when the observed events already contain it", () => {
  const known = hiEvents().slice(0, 4);
  const observed = hiEvents().map((e) => JSON.parse(JSON.stringify({ meta: e.meta, type: e.type, data: e.data })));
  assert.deepEqual(preserveKnownInitialEvents(observed, known), observed);
});

test("snapshot keeps an overlap between known and observed events once", () => {
  const all = hiEvents();
  assert.deepEqual(preserveKnownInitialEvents(all.slice(3), all.slice(0, 5)), all);
});

test("snapshot appends observed events that continue the known log", () => {
  const all = hiEvents();
  assert.deepEqual(preserveKnownInitialEvents(all.slice(6), all.slice(0, 6)), all);
});

test("locally synthesised skip events are merged into the final snapshot once", () => {
  const log = gen("gen-authorizations");
  const upToWait = log.slice(0, log.findIndex((e) => e.type === "turn.waiting") + 1);
  const [skip, waiting] = skipEvents(getPendingAuthorizations(reduceLog(upToWait), ORIGIN)[0]!, "gen_auth");
  const n = upToWait.length;
  const merged = mergeLocalEvents(upToWait, [{ eventIndex: n, event: skip }, { eventIndex: n + 1, event: waiting }]);
  assert.deepEqual(merged, [...upToWait, skip, waiting]);
  assert.deepEqual(mergeLocalEvents(merged, [{ eventIndex: n, event: skip }]), merged);
  assert.deepEqual(buildSnapshot(upToWait, [], [{ eventIndex: n, event: skip }]), [...upToWait, skip]);
});

test("the client context names the connections switched on and off, by name", () => {
  const ctx = createConnectionClientContext({ notion: true, linear: false, sentry: true });
  assert.match(ctx, /enabled for this turn: notion, sentry\./);
  assert.match(ctx, /disabled \(do not use them\): linear\./);
  const off = createConnectionClientContext({ notes: false, everything: false });
  assert.match(off, /disabled \(do not use them\): notes, everything\./);
  assert.doesNotMatch(off, /enabled/);
});

test("with nothing switched every configured connection stays on", () => {
  const ctx = createConnectionClientContext({});
  assert.doesNotMatch(ctx, /no connections|disabled/);
});

test("fallback titles come from the first message and are bounded", () => {
  assert.equal(createFallbackTitle("  hello\n world "), "hello world");
  assert.ok(createFallbackTitle("x".repeat(200)).length <= 58);
});

test("the message limit counts characters (code points) of the trimmed text, as the server does", () => {
  // The server: eve-store validate::message and eve-agent protocol count `trim().chars()`.
  assert.equal(messageChars("héllo"), 5);
  assert.equal(messageChars("😀"), 1, "an emoji (a surrogate pair) is one character");
  assert.equal(messageChars("👍🏽"), 2, "skin tone: two code points, as Rust's chars() counts");
  assert.equal(messageChars("  padded \n"), 6);
  const emoji = "😀".repeat(MAX_MESSAGE_CHARS);
  assert.equal(emoji.length, 2 * MAX_MESSAGE_CHARS, "16,000 UTF-16 units");
  assert.equal(messageChars(emoji), MAX_MESSAGE_CHARS, "within the limit");
  assert.equal(messageChars(emoji + "😀"), MAX_MESSAGE_CHARS + 1, "one over");
  assert.equal(messageChars(` ${"a".repeat(MAX_MESSAGE_CHARS)} `), MAX_MESSAGE_CHARS, "surrounding spaces are trimmed first");
  assert.ok(MESSAGE_FIELD_MAX_LENGTH >= emoji.length, "the field's maxlength never cuts an accepted message");
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

test("rebaseLog keeps the stored log and appends only what it lacks, in our order", () => {
  const e = (id: string) => ({ type: "message.appended", data: { messageDelta: id }, meta: { id, at: "2024-01-01T00:00:00.000Z" } });
  const stored = [e("s0"), e("s1"), e("a2"), e("a3")];
  const mine = [e("s0"), e("s1"), e("a2"), e("b2"), e("b3")];
  assert.deepEqual(rebaseLog(stored, mine).map((x) => x.meta.id), ["s0", "s1", "a2", "a3", "b2", "b3"]);
  // Events without ids match by content.
  const bare = { type: "session.waiting", data: {} };
  assert.equal(rebaseLog([bare], [{ ...bare }]).length, 1);
  assert.deepEqual(rebaseLog([], mine), mine);
});

test("the approval card's strings exist in both languages, and differ", async () => {
  const { approvalCardCatalogues } = await import("../i18n/approval-card");
  const { en: e, "zh-CN": z } = approvalCardCatalogues;
  for (const key of Object.keys(e) as (keyof typeof e)[]) {
    assert.ok(e[key] && z[key], key);
    assert.notEqual(e[key], z[key], key);
  }
});
