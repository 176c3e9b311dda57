// Issue 31, "Long chats stay fast", in the browser: a chat of ~4,000 events opens at its end from
// one bounded window (GET /api/chats/:id answers the latest events and a cursor), and scrolling
// up prepends the earlier pages without moving what the reader looks at, until the chat's first
// message. Regenerate in such a chat reads the whole log first, so its branch is cut at the
// message's true position, and the chat reopens on that branch. A refresh in the middle of an
// answer longer than a window resumes it exactly once.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { apiCall, launchBrowser, longChat as storeLongChat, newPage, screenshot, squash, startApp } from "./harness.mjs";

const TURNS = 400;

let app;
let browser;
before(async () => {
  app = await startApp({ demo_pacing_ms: "0", chat_event_writes_per_minute: "100000" });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await app?.stop();
});

const longChat = () => storeLongChat(app.baseUrl, TURNS);

const questions = async (page) => (await page.locator(".message.user .bubble").allTextContents()).map(squash);
const idle = (page, timeout = 60000) => page.waitForFunction(() => !document.querySelector("button[aria-label='Stop response']"), null, { timeout });

/** Where the message with `text` sits in the transcript's viewport, in px from its top. */
const topOf = (page, text) =>
  page.evaluate((text) => {
    const scroller = document.querySelector(".transcript");
    const bubble = [...document.querySelectorAll(".message.user .bubble")].find((b) => b.textContent.trim() === text);
    return bubble.getBoundingClientRect().top - scroller.getBoundingClientRect().top;
  }, text);

test("a long chat opens at its end from one window, and scrolling up loads earlier events without a jump", async () => {
  const { id, events } = await longChat();
  const page = await newPage(browser, app.baseUrl);
  const reads = [];
  page.on("response", async (res) => {
    const url = new URL(res.url());
    if (url.pathname === `/api/chats/${id}` && res.request().method() === "GET") reads.push({ query: url.search, body: await res.body() });
  });
  await page.goto(`/chat/${id}`);
  await page.waitForSelector(`.message.user .bubble >> text=question ${TURNS - 1}`);
  await page.waitForFunction(() => {
    const el = document.querySelector(".transcript");
    return el.scrollHeight > el.clientHeight * 3 && el.scrollHeight - el.scrollTop - el.clientHeight < 100;
  });
  // One bounded read: the latest window, not the log.
  assert.equal(reads.length, 1);
  const first = JSON.parse(reads[0].body.toString());
  assert.equal(first.eventCount, events.length);
  assert.ok(first.firstEventIndex > 0 && first.events.length <= 1000, `window starts at ${first.firstEventIndex}`);
  assert.ok(reads[0].body.length < 300 * 1024, `${reads[0].body.length} bytes`);
  let shown = await questions(page);
  assert.equal(shown.at(-1), `question ${TURNS - 1}`);
  assert.ok(!shown.includes("question 0"));
  await page.waitForSelector("button >> text=Show earlier messages");
  await screenshot(page, "long-chat-opened");

  // Scroll to the top, page after page: what was at the top stays where it was.
  while (!shown.includes("question 0")) {
    const anchor = shown[0];
    await page.evaluate(() => {
      document.querySelector(".transcript").scrollTop = 0;
    });
    const before = await topOf(page, anchor);
    await page.waitForFunction((n) => document.querySelectorAll(".message.user").length > n && !document.querySelector(".transcript-earlier [aria-busy='true']"), shown.length, { timeout: 30000 });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const after = await topOf(page, anchor);
    assert.ok(Math.abs(after - before) <= 2, `"${anchor}" moved from ${before} to ${after} px`);
    shown = await questions(page);
  }
  assert.deepEqual(shown, Array.from({ length: TURNS }, (_, i) => `question ${i}`));
  assert.equal(await page.locator(".transcript-earlier").count(), 0);
  assert.ok(reads.slice(1).every((r) => r.query.startsWith("?before=")), JSON.stringify(reads.map((r) => r.query)));
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("regenerate in a long chat branches at the message's true position, and the chat reopens on that branch", async () => {
  const { id } = await longChat();
  const page = await newPage(browser, app.baseUrl);
  await page.goto(`/chat/${id}`);
  await page.waitForSelector(`.message.user .bubble >> text=question ${TURNS - 1}`);
  await page.getByRole("button", { name: "Regenerate answer" }).click();
  await page.waitForFunction(() => document.querySelector(".branch-count")?.textContent === "2/2", null, { timeout: 60000 });
  await idle(page);
  const stored = (await apiCall(app.baseUrl, "GET", `/api/chats/${id}/export?format=json`)).json.events;
  const markers = stored.filter((e) => e.type === "eve-chat.branch");
  assert.equal(markers.length, 1);
  assert.deepEqual([markers[0].data.parent, markers[0].data.at], ["root", TURNS - 1]);
  assert.match(markers[0].data.context, new RegExp(`User: question ${TURNS - 2}\\nAssistant: answer ${TURNS - 2} in parts\\.`));

  // Reopened, the latest window holds the marker: the chat reads on and shows the branch whole.
  await page.reload();
  await page.waitForFunction(() => document.querySelector(".branch-count")?.textContent === "2/2", null, { timeout: 60000 });
  const shown = await questions(page);
  assert.deepEqual(shown, Array.from({ length: TURNS }, (_, i) => `question ${i}`));
  await page.getByRole("button", { name: "Previous version" }).click();
  await page.waitForFunction(() => document.querySelector(".branch-count")?.textContent === "1/2");
  assert.equal(squash(await page.locator(".message.assistant").last().textContent()), `answer ${TURNS - 1} in parts.`);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("a refresh in the middle of an answer longer than a window resumes it exactly once", async () => {
  const own = await startApp({ demo_pacing_ms: "3" });
  try {
    const page = await newPage(browser, own.baseUrl);
    await page.goto("/");
    await page.waitForSelector(".auth-slot .viewer-name");
    await page.fill("#composer-input", "count to 2500");
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/chat\/[A-Za-z0-9_-]+$/);
    const id = page.url().split("/chat/")[1];
    // Enough of the answer stored that the latest window starts inside it.
    for (;;) {
      const w = (await apiCall(own.baseUrl, "GET", `/api/chats/${id}`)).json;
      if (w.firstEventIndex > 50) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // The chat's reads and the stream's, in the order the page made them.
    const reads = [];
    page.on("request", (req) => {
      const url = new URL(req.url());
      if (url.pathname === `/api/chats/${id}` && req.method() === "GET") reads.push(url.search || "latest");
      if (url.pathname.endsWith("/stream")) reads.push("stream");
    });
    await page.reload();
    await page.waitForSelector("button[aria-label='Stop response']", { timeout: 10000 });
    await idle(page, 120000);
    // The resume re-reads the turn from its start: the page reads back to it before the stream.
    const stream = reads.indexOf("stream");
    assert.ok(reads[0] === "latest" && stream > 1 && reads.slice(1, stream).every((q) => q.startsWith("?before=")), JSON.stringify(reads));
    const countText = Array.from({ length: 2500 }, (_, i) => i + 1).join(" ");
    assert.equal(squash(await page.locator(".message.assistant .markdown").last().textContent()), `${countText}.`);
    let stored;
    for (let i = 0; i < 100; i++) {
      stored = (await apiCall(own.baseUrl, "GET", `/api/chats/${id}/export?format=json`)).json;
      if (stored.session?.streamIndex === stored.events.filter((e) => !e.meta.local).length) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const text = stored.events.filter((e) => e.type === "message.appended").map((e) => e.data.messageDelta).join("");
    assert.equal(squash(text).match(/\d+/g).join(" "), countText, "no event lost or stored twice");
    const ids = stored.events.map((e) => e.meta.id);
    assert.equal(new Set(ids).size, ids.length, "each eve event (meta.id) once");
    assert.deepEqual(page.problems, []);
    await page.context().close();
  } finally {
    await own.stop();
  }
});
