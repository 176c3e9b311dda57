// The browser checklist again, with eve-chat in front of a REAL eve agent: our app (shell, auth,
// chats, eve-proxy) with `eve_upstream_url` at the eve 0.80.1 reference of tests/eve-reference/
// (its agent/channels/eve.ts verifies eve-proxy's HS256 bearer token with eve's `jwtHmac`),
// which talks to the deterministic fake model tests/eve-client/fake-model.mjs:
//   a prompt with "slow" → "slow chunk 0. " … "slow chunk 19. ", 20 chunks 200 ms apart;
//   anything else (no "tool", no "fail") → "Hello from the reference model." in 4 chunks.
//
// Opt-in: without EVE_UPSTREAM_REFERENCE_URL every test here is skipped, so a plain
// `npm test --prefix tests/browser` (our agent, demo model) does not depend on it.
// tests/eve-client/run-all runs it as the part `browser/eve-upstream`.
//
//   EVE_UPSTREAM_REFERENCE_URL  the eve reference, called directly (no token: its localDev())
//                               to check that every event the browser saved is the reference's
//   EVE_UPSTREAM_JWT_SECRET     the reference's EVE_JWT_SECRET; the host is then started here
//                               with eve_upstream_url + eve_jwt_secret
//   EVE_CHAT_BASE_URL           instead: an eve-chat already started that way (run-all does)
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { apiCall, launchBrowser, newPage, screenshot, squash, startApp, startChat } from "./harness.mjs";

const REFERENCE = process.env.EVE_UPSTREAM_REFERENCE_URL?.replace(/\/$/, "");
const SECRET = process.env.EVE_UPSTREAM_JWT_SECRET ?? "";
const SKIP = REFERENCE
  ? !process.env.EVE_CHAT_BASE_URL && !SECRET
    ? "EVE_UPSTREAM_JWT_SECRET (the reference's EVE_JWT_SECRET) or EVE_CHAT_BASE_URL is needed too"
    : false
  : "opt-in: set EVE_UPSTREAM_REFERENCE_URL (tests/eve-client/run-all runs this as browser/eve-upstream)";
const HELLO = "Hello from the reference model.";
const SLOW = Array.from({ length: 20 }, (_, i) => `slow chunk ${i}.`).join(" ");

let app;
let browser;
let referenceName;
before(async () => {
  if (SKIP) return;
  const info = await fetch(`${REFERENCE}/eve/v1/info`, { signal: AbortSignal.timeout(10_000) });
  assert.equal(info.status, 200, `the reference at ${REFERENCE} answers /eve/v1/info`);
  referenceName = (await info.json()).agent?.name;
  assert.ok(typeof referenceName === "string" && referenceName.length > 0, "the reference has an agent name");
  app = await startApp({ eve_upstream_url: REFERENCE, eve_jwt_secret: SECRET, chat_send_per_hour: "100000" });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await app?.stop();
});

function upstreamTest(name, fn) {
  test(name, { skip: SKIP }, fn);
}

const notBusy = (page, timeout = 30000) => page.waitForFunction(() => !document.querySelector("button[aria-label='Stop response']"), null, { timeout });

async function assistantTexts(page) {
  return (await page.locator(".message.assistant .markdown").allTextContents()).map(squash);
}

async function savedChat(id) {
  const r = await apiCall(app.baseUrl, "GET", `/api/chats/${id}`);
  assert.equal(r.status, 200, r.text);
  return r.json;
}

const eveEvents = (chat) => chat.events.filter((e) => !e.meta?.local);
const cursorSaved = (chat) => chat.session?.streamIndex === eveEvents(chat).length;

/** Polls the saved chat until its log settled (docs/web.md) and the final cursor is saved. */
/** `longerThan`: the log of an earlier turn's settle, so that a later turn waits for its own. */
async function waitSettledOnServer(id, timeout = 30000, longerThan = 0) {
  const end = Date.now() + timeout;
  for (;;) {
    const chat = await savedChat(id);
    const last = chat.events.at(-1);
    if (last && ["session.completed", "session.failed", "session.waiting"].includes(last.type) && cursorSaved(chat) && chat.events.length > longerThan) return chat;
    if (Date.now() > end) throw new Error(`chat ${id} not settled on the server: ${JSON.stringify(chat.events.slice(-3))} ${JSON.stringify(chat.session)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The session's whole stream, read from the reference itself (not through eve-chat). */
async function referenceStream(sessionId) {
  const res = await fetch(`${REFERENCE}/eve/v1/session/${sessionId}/stream?follow=false`, { signal: AbortSignal.timeout(15_000) });
  assert.equal(res.status, 200, `the reference knows session ${sessionId}`);
  return (await res.text())
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

/**
 * The chat's saved log is the reference's stream of its one session, event for event: the same
 * meta.ids in the same order (none lost, none twice) and the same content, from the reference
 * agent (its name in session.started), not from our agent.
 */
async function assertIsReferenceStream(chat) {
  const own = eveEvents(chat);
  assert.equal(own.filter((e) => e.type === "session.started").length, 1, "one eve session");
  assert.match(chat.session.sessionId, /^wrun_[0-9A-HJKMNP-TV-Z]{26}$/, "an eve workflow-run session id");
  const started = own.find((e) => e.type === "session.started");
  assert.equal(started.data.runtime.agentName, referenceName, "session.started names the reference agent");
  assert.notEqual(started.data.runtime.agentName, "eve-chat");
  const ids = own.map((e) => e.meta.id);
  assert.equal(new Set(ids).size, ids.length, "each eve event (meta.id) once");
  const upstream = await referenceStream(chat.session.sessionId);
  assert.deepEqual(ids, upstream.map((e) => e.meta.id), "the saved log is the reference's stream, in order");
  assert.deepEqual(own, upstream, "verbatim");
  return own;
}

const replyOf = (events, turnId) =>
  events
    .filter((e) => e.type === "message.appended" && (!turnId || e.data.turnId === turnId))
    .map((e) => e.data.messageDelta)
    .join("");

// Chats the sidebar test expects (id → first message, the title).
const titles = new Map();

upstreamTest("local-dev: the viewer is shown without a sign-in and the reference answers through eve-proxy", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  assert.equal(await page.textContent(".auth-slot .viewer-name", { timeout: 10000 }), "Local developer");
  assert.equal(await page.locator(".auth-slot button:has-text('Sign in')").count(), 0);
  assert.equal(await page.isDisabled("#composer-input"), false);
  const setup = await apiCall(app.baseUrl, "GET", "/api/setup");
  assert.equal(setup.json.appReady, true, setup.text);
  assert.deepEqual(setup.json.missing, []);
  // /eve/v1/info through the proxy is the reference's.
  const info = await apiCall(app.baseUrl, "GET", "/eve/v1/info");
  assert.equal(info.status, 200, info.text);
  assert.equal(info.json.agent.name, referenceName);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

upstreamTest("the first message creates the chat, navigates and streams the reference's reply; a follow-up is turn_1 of the same eve session", async () => {
  const page = await newPage(browser, app.baseUrl);
  const message = "Hello from the browser suite";
  const chatId = await startChat(page, message);
  titles.set(chatId, message);
  await page.waitForSelector(`.message.user >> text=${message}`, { timeout: 2000 });
  await page.waitForSelector(`.chat-row.active[data-chat-id="${chatId}"]`);
  await page.waitForFunction((t) => document.querySelector(".message.assistant .markdown")?.textContent.includes(t), HELLO, { timeout: 30000 });
  await notBusy(page);
  assert.deepEqual(await assistantTexts(page), [HELLO]);

  const first = await waitSettledOnServer(chatId);
  const sessionId = first.session.sessionId;
  const events = await assertIsReferenceStream(first);
  // Streamed: the fake model's four chunks are four message.appended, then eve's message.completed.
  assert.deepEqual(events.filter((e) => e.type === "message.appended").map((e) => e.data.messageDelta), ["Hello ", "from the ", "reference ", "model."]);
  assert.equal(events.find((e) => e.type === "message.completed").data.message, HELLO);
  assert.deepEqual(events.filter((e) => e.type === "message.received").map((e) => e.data.message), [message]);
  assert.deepEqual(events.slice(-2).map((e) => e.type), ["turn.completed", "session.waiting"]);
  assert.equal(first.pendingUserMessage, null);

  await page.fill("#composer-input", "And a second message");
  const t0 = Date.now();
  await page.keyboard.press("Enter");
  await page.waitForSelector(".message.user >> text=And a second message");
  assert.ok(Date.now() - t0 < 1000, "optimistic bubble at once");
  await page.waitForFunction(() => document.querySelectorAll(".message.assistant").length === 2, null, { timeout: 30000 });
  await notBusy(page);
  assert.deepEqual(await assistantTexts(page), [HELLO, HELLO]);
  assert.deepEqual(await page.locator(".message.user").allTextContents().then((l) => l.map(squash)), [message, "And a second message"]);

  const second = await waitSettledOnServer(chatId, 30000, first.events.length);
  assert.equal(second.session.sessionId, sessionId, "the same eve session");
  const all = await assertIsReferenceStream(second);
  const received = all.filter((e) => e.type === "message.received");
  assert.deepEqual(received.map((e) => [e.data.turnId, e.data.message]), [["turn_0", message], ["turn_1", "And a second message"]]);
  assert.equal(replyOf(all, "turn_1"), HELLO);
  assert.notDeepEqual(received[0].meta.deliveryIds, received[1].meta.deliveryIds, "each message its own delivery");
  assert.deepEqual(page.problems, []);
  await screenshot(page, "eve-upstream-chat");
  await page.context().close();
});

upstreamTest("a refresh in the middle of a slow reply resumes it from the saved cursor, exactly once", async () => {
  const page = await newPage(browser, app.baseUrl);
  const message = "Please be slow for the refresh";
  const chatId = await startChat(page, message);
  titles.set(chatId, message);
  await page.waitForFunction(() => (document.querySelector(".message.assistant .markdown")?.textContent ?? "").includes("slow chunk 2."), null, { timeout: 30000 });
  const before = squash((await page.locator(".message.assistant .markdown").first().textContent()) ?? "");
  assert.ok(!before.includes("slow chunk 19."), `reloading mid-reply (had: ${before})`);
  await page.reload();
  // Resumed: busy again, and the reply grows on to its end.
  await page.waitForSelector("button[aria-label='Stop response']", { timeout: 5000 });
  await page.waitForFunction(() => (document.querySelector(".message.assistant .markdown")?.textContent ?? "").includes("slow chunk 19."), null, { timeout: 30000 });
  await notBusy(page);
  assert.deepEqual(await assistantTexts(page), [SLOW]);
  assert.equal(await page.locator(".message.user").count(), 1, "the message is not sent again");

  const chat = await waitSettledOnServer(chatId);
  const events = await assertIsReferenceStream(chat);
  assert.equal(squash(replyOf(events)), SLOW, "no delta lost or twice in the saved log");
  assert.equal(events.filter((e) => e.type === "message.received").length, 1);
  assert.deepEqual(events.slice(-2).map((e) => e.type), ["turn.completed", "session.waiting"]);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

upstreamTest("Stop during a slow reply reacts at once; eve's turn.cancelled and session.waiting end the log; never resumed", async () => {
  const page = await newPage(browser, app.baseUrl);
  const message = "Please be slow, I will stop you";
  const chatId = await startChat(page, message);
  titles.set(chatId, message);
  await page.waitForFunction(() => (document.querySelector(".message.assistant .markdown")?.textContent ?? "").includes("slow chunk 2."), null, { timeout: 30000 });
  const reaction = await page.evaluate(async () => {
    const t0 = performance.now();
    document.querySelector("button[aria-label='Stop response']").click();
    await new Promise((r) => requestAnimationFrame(() => r()));
    return {
      ms: performance.now() - t0,
      stopGone: !document.querySelector("button[aria-label='Stop response']"),
      inputEnabled: !document.querySelector("#composer-input").disabled,
    };
  });
  assert.ok(reaction.stopGone, "stop button gone in the next frame");
  assert.ok(reaction.inputEnabled);
  assert.ok(reaction.ms < 100, `reacted in ${reaction.ms} ms`);

  const chat = await waitSettledOnServer(chatId, 15000);
  const events = await assertIsReferenceStream(chat);
  assert.deepEqual(chat.events.slice(-2).map((e) => e.type), ["turn.cancelled", "session.waiting"]);
  assert.ok(chat.events.every((e) => !e.meta.local), "eve confirmed the cancel itself (no local session.waiting)");
  const cut = squash(replyOf(events));
  assert.ok(cut.startsWith("slow chunk 0. slow chunk 1. slow chunk 2.") && !cut.includes("slow chunk 19."), `the reply was cut: ${cut}`);
  await page.waitForSelector("text=Response stopped.");
  await page.waitForTimeout(1500);
  assert.equal(squash((await page.locator(".message.assistant .markdown").first().textContent()) ?? ""), cut, "nothing more streams in after Stop");
  await screenshot(page, "eve-upstream-stopped");

  await page.reload();
  await page.waitForSelector(".message.user");
  await page.waitForTimeout(1000);
  assert.equal(await page.locator("button[aria-label='Stop response']").count(), 0, "a stopped turn is not resumed");
  await page.waitForSelector("text=Response stopped.");

  await page.fill("#composer-input", "Hello again after the stop");
  await page.keyboard.press("Enter");
  await page.waitForFunction((t) => [...document.querySelectorAll(".message.assistant .markdown")].some((m) => m.textContent.includes(t)), HELLO, { timeout: 30000 });
  await notBusy(page);
  const next = await waitSettledOnServer(chatId, 30000, chat.events.length);
  assert.equal(next.session.sessionId, chat.session.sessionId, "the same eve session goes on");
  const all = await assertIsReferenceStream(next);
  assert.equal(replyOf(all, "turn_1"), HELLO);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

upstreamTest("two chats at once stay separate: one streams in the background while the other answers", async () => {
  const page = await newPage(browser, app.baseUrl);
  const slowMessage = "Please be slow in the background";
  const first = await startChat(page, slowMessage);
  titles.set(first, slowMessage);
  await page.waitForFunction(() => (document.querySelector(".message.assistant .markdown")?.textContent ?? "").includes("slow chunk 1."), null, { timeout: 30000 });
  const quickMessage = "Hello from the second chat";
  const second = await startChat(page, quickMessage, { inApp: true });
  titles.set(second, quickMessage);
  await page.waitForFunction((t) => document.querySelector(".message.assistant .markdown")?.textContent.includes(t), HELLO, { timeout: 30000 });
  await notBusy(page);
  assert.deepEqual(await assistantTexts(page), [HELLO], "only the second chat's reply here");
  assert.deepEqual(await page.locator(".message.user").allTextContents().then((l) => l.map(squash)), [quickMessage]);

  const b = await waitSettledOnServer(second);
  const a = await waitSettledOnServer(first, 30000);
  assert.notEqual(a.session.sessionId, b.session.sessionId, "two eve sessions");
  const aEvents = await assertIsReferenceStream(a);
  const bEvents = await assertIsReferenceStream(b);
  assert.equal(squash(replyOf(aEvents)), SLOW, "the background chat was saved in full");
  assert.equal(replyOf(bEvents), HELLO);
  assert.deepEqual(aEvents.filter((e) => e.type === "message.received").map((e) => e.data.message), [slowMessage]);
  assert.deepEqual(bEvents.filter((e) => e.type === "message.received").map((e) => e.data.message), [quickMessage]);

  await page.click(`.chat-row[data-chat-id="${first}"] a`);
  await page.waitForURL(new RegExp(`/chat/${first}$`));
  await page.waitForFunction((t) => (document.querySelector(".message.assistant .markdown")?.textContent ?? "").includes(t), "slow chunk 19.");
  assert.deepEqual(await assistantTexts(page), [SLOW]);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

upstreamTest("the sidebar lists every chat with its title, and survives a reload", async () => {
  assert.ok(titles.size >= 4, "the chats of the tests above");
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  await page.waitForSelector(".chat-row");
  const rows = async () =>
    Object.fromEntries(await page.locator(".chat-row").evaluateAll((list) => list.map((r) => [r.dataset.chatId, r.querySelector("a").textContent.trim()])));
  const listed = await rows();
  for (const [id, title] of titles) assert.equal(listed[id], title, `chat ${id} listed with its title`);
  await page.reload();
  await page.waitForSelector(".chat-row");
  assert.deepEqual(await rows(), listed, "the same list after a reload");
  const [id, title] = [...titles][0];
  await page.click(`.chat-row[data-chat-id="${id}"] a`);
  await page.waitForSelector(`.chat-row.active[data-chat-id="${id}"]`);
  await page.waitForSelector(`.message.user >> text=${title}`);
  assert.equal(await page.textContent(".topbar-title"), title);
  await page.waitForFunction(() => document.querySelectorAll(".message.assistant").length === 2);
  assert.deepEqual(await assistantTexts(page), [HELLO, HELLO]);
  assert.deepEqual(page.problems, []);
  await screenshot(page, "eve-upstream-sidebar");
  await page.context().close();
});
