// Issue 12, data: what two tabs on one chat and a refused message do to the stored chat.
// - two pages on one chat, the stale one sends: nothing of the other's turn is lost (writes
//   carry their base; a 409 re-reads and re-applies, with no error shown)
// - a 429 on send leaves no pending message that the next page load would send
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { apiCall, launchBrowser, newPage, startApp, startChat } from "./harness.mjs";

let app;
let browser;
before(async () => {
  // Two sends per hour: the refusal test spends them; the two-tab test runs on its own app.
  app = await startApp({ demo_pacing_ms: "0", chat_send_per_hour: "2" });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await app?.stop();
});

const userMessages = (chat) => chat.events.filter((e) => e.type === "message.received").map((e) => e.data?.message);

async function waitOnServer(baseUrl, id, ok, what, timeout = 30000) {
  const end = Date.now() + timeout;
  for (;;) {
    const chat = (await apiCall(baseUrl, "GET", `/api/chats/${id}`)).json;
    const last = chat?.events?.at(-1);
    if (last && ["session.waiting", "session.completed", "session.failed"].includes(last.type) && ok(chat)) return chat;
    if (Date.now() > end) throw new Error(`${what}: ${JSON.stringify(chat?.events?.map((e) => e.type))}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function send(page, text) {
  await page.waitForSelector("#composer-input:not([disabled])");
  await page.fill("#composer-input", text);
  await page.keyboard.press("Enter");
}

test("two pages on one chat: the stale one sends, and neither turn is lost", async () => {
  const own = await startApp({ demo_pacing_ms: "0", chat_send_per_hour: "100" });
  try {
    const a = await newPage(browser, own.baseUrl);
    const id = await startChat(a, "first message");
    await waitOnServer(own.baseUrl, id, (c) => userMessages(c).length === 1, "first turn");
    const b = await newPage(browser, own.baseUrl);
    await b.goto(`/chat/${id}`);
    await b.waitForSelector(".message.user >> text=first message");
    // The chat's eve session ends (reset elsewhere): each tab's next send starts a new
    // session, so B's stream never shows A's turn, and B's log diverges from the stored one.
    const detail = (await apiCall(own.baseUrl, "GET", `/api/chats/${id}`)).json;
    const reset = await apiCall(own.baseUrl, "POST", `/eve/v1/session/${detail.session.sessionId}/reset`, {});
    assert.ok(reset.status < 300, reset.text);

    await a.reload();
    await send(a, "second, from tab A");
    await waitOnServer(own.baseUrl, id, (c) => userMessages(c).includes("second, from tab A"), "A's turn");

    // B still shows only the first turn, and writes on it.
    await send(b, "third, from tab B");
    const saved = await waitOnServer(own.baseUrl, id, (c) => userMessages(c).includes("third, from tab B"), "B's turn");
    assert.deepEqual(userMessages(saved), ["first message", "second, from tab A", "third, from tab B"]);
    // B recovered by re-reading: it shows A's turn too, and no error was toasted.
    await b.waitForSelector(".message.user >> text=second, from tab A");
    assert.equal(await b.locator(".toast").count(), 0, await b.locator(".toast").allTextContents().then(String));
    // And what B saved is what a fresh load shows.
    await a.reload();
    await a.waitForSelector(".message.user >> text=third, from tab B");
    assert.deepEqual([...a.problems, ...b.problems], []);
  } finally {
    await own.stop();
  }
});

test("a 429 on send leaves no pending message for the next page load to send", async () => {
  const page = await newPage(browser, app.baseUrl);
  // Spend the hour's sends.
  const first = await startChat(page, "one");
  await waitOnServer(app.baseUrl, first, (c) => userMessages(c).length === 1, "turn one");
  await send(page, "two");
  await waitOnServer(app.baseUrl, first, (c) => userMessages(c).length === 2, "turn two");

  // The third is refused: a clear toast, and the chat does not keep it as pending.
  await send(page, "three, refused");
  await page.waitForSelector(".toast >> text=/Try again in/", { timeout: 15000 });
  const after429 = (await apiCall(app.baseUrl, "GET", `/api/chats/${first}`)).json;
  assert.equal(after429.pendingUserMessage, null, "the refused message is not pending");

  // A new chat's first message refused the same way (it was stored with the chat).
  const fresh = await startChat(page, "four, refused too");
  await page.waitForSelector(".toast >> text=/Try again in/", { timeout: 15000 });
  for (let i = 0; i < 50 && (await apiCall(app.baseUrl, "GET", `/api/chats/${fresh}`)).json.pendingUserMessage !== null; i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal((await apiCall(app.baseUrl, "GET", `/api/chats/${fresh}`)).json.pendingUserMessage, null);

  // Reloading either chat sends nothing.
  const turns = [];
  page.on("request", (req) => {
    if (req.method() === "POST" && new URL(req.url()).pathname.startsWith("/eve/v1/session")) turns.push(req.url());
  });
  for (const id of [first, fresh]) {
    await page.goto(`/chat/${id}`);
    await page.waitForSelector("#composer-input:not([disabled])");
    await page.waitForTimeout(1500);
  }
  assert.deepEqual(turns, [], "no message was sent on load");
  assert.deepEqual(userMessages((await apiCall(app.baseUrl, "GET", `/api/chats/${first}`)).json), ["one", "two"]);
  assert.deepEqual(page.problems, []);
});
