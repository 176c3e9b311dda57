// Issue 13 items 1 and 3 on the real components (the agent with the demo provider, prompts in
// docs/eve-protocol.md): copy a whole answer, retry after a stopped or failed turn without
// retyping, the keyboard shortcuts (Esc stops, Ctrl+Shift+O new chat, ? sheet), and search
// matching message text rather than the title.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { apiCall, launchBrowser, newPage, screenshot, squash, startApp, startChat } from "./harness.mjs";

let app;
let browser;
before(async () => {
  app = await startApp();
  browser = await launchBrowser();
  const probe = await apiCall(app.baseUrl, "POST", "/eve/v1/session", { message: "ping" });
  assert.equal(probe.status, 202, `the agent answers eve's create: ${probe.text}`);
});
after(async () => {
  await browser?.close();
  await app?.stop();
});

const idle = (page, timeout = 60000) => page.waitForFunction(() => !document.querySelector("button[aria-label='Stop response']"), null, { timeout });
const userTexts = async (page) => (await page.locator(".message.user .bubble").allTextContents()).map(squash);

test("copy puts the whole answer's Markdown on the clipboard", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
  await startChat(page, "count to 12");
  await idle(page);
  const copy = page.getByRole("button", { name: "Copy answer" });
  await copy.waitFor();
  await copy.click();
  await page.waitForSelector(".copy-answer >> text=Copied");
  const clip = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(squash(clip), "1 2 3 4 5 6 7 8 9 10 11 12.");
  await screenshot(page, "answer-copied");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("Esc stops a running turn; Retry sends the same message again and the answer completes", async () => {
  const page = await newPage(browser, app.baseUrl);
  const chatId = await startChat(page, "count to 400");
  await page.waitForFunction(() => (document.querySelector(".message.assistant .markdown")?.textContent ?? "").includes(" 5 "), null, { timeout: 30000 });
  await page.locator("body").click({ position: { x: 640, y: 300 } });
  await page.keyboard.press("Escape");
  await idle(page, 5000);
  const retry = page.getByRole("button", { name: "Retry" });
  await retry.waitFor({ timeout: 15000 });
  assert.equal(await page.locator(".notice >> text=Response stopped.").count(), 1);
  await screenshot(page, "answer-retry-after-stop");
  await retry.click();
  await page.waitForSelector("button[aria-label='Stop response']", { timeout: 5000 });
  await idle(page, 120000);
  assert.deepEqual(await userTexts(page), ["count to 400", "count to 400"], "the message was sent again, not retyped");
  const last = squash((await page.locator(".message.assistant .markdown").last().textContent()) ?? "");
  assert.match(last, /398 399 400\.$/);
  assert.equal(await page.getByRole("button", { name: "Retry" }).count(), 0, "no retry after a completed turn");
  // The chat on the server has both turns.
  const chat = (await apiCall(app.baseUrl, "GET", `/api/chats/${chatId}`)).json;
  assert.deepEqual(chat.events.filter((e) => e.type === "message.received").map((e) => e.data.message), ["count to 400", "count to 400"]);
  await page.context().close();
});

test("Retry after a failed turn sends the message again (the failure stays on screen above it)", async () => {
  const page = await newPage(browser, app.baseUrl);
  await startChat(page, "please fail");
  await idle(page);
  await page.waitForSelector(".notice.error");
  await page.getByRole("button", { name: "Retry" }).click();
  await page.waitForFunction(() => document.querySelectorAll(".message.user").length === 2, null, { timeout: 15000 });
  await idle(page);
  assert.deepEqual(await userTexts(page), ["please fail", "please fail"]);
  // The demo provider fails this prompt every time: two failures, and Retry is offered again.
  assert.equal(await page.locator(".notice.error").count(), 2);
  await page.getByRole("button", { name: "Retry" }).waitFor();
  await page.context().close();
});

test("Ctrl+Shift+O opens a new chat; ? opens the shortcut sheet (not while typing)", async () => {
  const page = await newPage(browser, app.baseUrl);
  await startChat(page, "count to 3");
  await idle(page);
  await page.locator("#composer-input").focus();
  await page.keyboard.type("?");
  assert.equal(await page.locator("dialog.shortcut-sheet").count(), 0, "? types into the composer");
  assert.equal(await page.inputValue("#composer-input"), "?");
  await page.fill("#composer-input", "");
  await page.keyboard.press("Control+Shift+O");
  await page.waitForURL(/\/$/);
  await page.waitForFunction(() => document.activeElement?.id === "composer-input");
  await page.locator("body").click({ position: { x: 900, y: 120 } });
  await page.keyboard.press("?");
  const sheet = page.locator("dialog.shortcut-sheet[open]");
  await sheet.waitFor();
  const text = squash(await sheet.textContent());
  for (const s of ["Esc", "Ctrl/⌘ + Shift + O", "Ctrl/⌘ + K", "Stop the running response", "New chat", "Search chats"]) assert.ok(text.includes(s), `${s} in: ${text}`);
  await screenshot(page, "shortcut-sheet");
  await page.keyboard.press("Escape");
  await sheet.waitFor({ state: "detached" });
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("search finds a chat by its message text when the title does not match, and says so", async () => {
  const page = await newPage(browser, app.baseUrl);
  const chatId = await startChat(page, "count to 7 for the zebra");
  await idle(page);
  const renamed = await apiCall(app.baseUrl, "PATCH", `/api/chats/${chatId}`, { title: "Untitled thing" });
  assert.equal(renamed.status, 200, renamed.text);
  // The title no longer matches: the server finds it by its text, stored with the turn's
  // snapshot, which is saved just after the UI is free.
  for (let end = Date.now() + 30000; ; ) {
    const found = await apiCall(app.baseUrl, "GET", "/api/chats?q=zebra");
    if (found.json?.chats?.some((c) => c.id === chatId)) break;
    if (Date.now() > end) throw new Error(`the server never found the chat by its text: ${found.text}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  await page.reload();
  await page.waitForSelector(".chat-row");
  await page.fill("#chat-search", "zebra");
  const row = page.locator(`.search-results .chat-row[data-chat-id="${chatId}"]`);
  await row.waitFor();
  assert.equal(await row.locator("mark").count(), 0);
  assert.match(await row.textContent(), /Untitled thing\s*Matches in messages/);
  await row.locator("a").click();
  await page.waitForURL(`**/chat/${chatId}`);
  await page.context().close();
});

const lastAnswer = async (page) => squash((await page.locator(".message.assistant .markdown").last().textContent()) ?? "");
const versionOf = (page, i = 0) => page.locator(".branch-count").nth(i).textContent();

test("edit and resend branches onto a new eve session seeded with the turns before it; ‹ › switches, a reload keeps both", async () => {
  const page = await newPage(browser, app.baseUrl);
  const creates = [];
  page.on("request", (r) => {
    if (r.method() === "POST" && new URL(r.url()).pathname === "/eve/v1/session") creates.push(JSON.parse(r.postData() ?? "{}"));
  });
  const chatId = await startChat(page, "count to 3");
  await idle(page);
  await page.fill("#composer-input", "count to 5");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.querySelectorAll(".message.assistant").length === 2, null, { timeout: 30000 });
  await idle(page);
  assert.equal(creates.length, 1, "one session so far");

  // Edit the second message.
  await page.locator(".message.user").nth(1).hover();
  await page.getByRole("button", { name: "Edit message" }).nth(1).click();
  await page.fill(".edit-input", "count to 4");
  await screenshot(page, "answer-editing");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.querySelector(".branch-count")?.textContent === "2/2", null, { timeout: 30000 });
  await idle(page);
  assert.deepEqual(await userTexts(page), ["count to 3", "count to 4"]);
  assert.equal(await lastAnswer(page), "1 2 3 4.");
  assert.equal(creates.length, 2, "the edit started a new eve session");
  assert.match(creates[1].clientContext, /The conversation so far[^]*User: count to 3\nAssistant: 1 2 3\./, "seeded with the turns before it");
  assert.doesNotMatch(creates[1].clientContext, /count to 5/, "not with the replaced message");
  await screenshot(page, "answer-branch-2-of-2");

  // ‹ shows the earlier branch, whole.
  await page.getByRole("button", { name: "Previous version" }).click();
  await page.waitForFunction(() => document.querySelector(".branch-count")?.textContent === "1/2");
  assert.deepEqual(await userTexts(page), ["count to 3", "count to 5"]);
  assert.equal(await lastAnswer(page), "1 2 3 4 5.");

  // A reload shows the latest branch, with the earlier one still reachable.
  await page.reload();
  await page.waitForSelector(".branch-count");
  assert.equal(await versionOf(page), "2/2");
  assert.deepEqual(await userTexts(page), ["count to 3", "count to 4"]);
  const chat = (await apiCall(app.baseUrl, "GET", `/api/chats/${chatId}`)).json;
  const markers = chat.events.filter((e) => e.type === "eve-chat.branch");
  assert.equal(markers.length, 1, "the branch is saved with the chat");
  assert.deepEqual([markers[0].data.parent, markers[0].data.at], ["root", 1]);
  const markerAt = chat.events.indexOf(markers[0]);
  assert.equal(chat.events[markerAt + 1].type, "session.started", "the new session's stream follows its marker");
  assert.equal(chat.events.filter((e) => e.type === "session.started").length, 2);

  // Regenerate the last answer: a third version of the message, same text.
  await page.getByRole("button", { name: "Regenerate answer" }).click();
  await page.waitForFunction(() => document.querySelector(".branch-count")?.textContent === "3/3", null, { timeout: 30000 });
  await idle(page);
  assert.deepEqual(await userTexts(page), ["count to 3", "count to 4"]);
  assert.equal(await lastAnswer(page), "1 2 3 4.");

  // A message typed while an older branch is shown continues that branch.
  await page.getByRole("button", { name: "Previous version" }).click();
  await page.getByRole("button", { name: "Previous version" }).click();
  await page.waitForFunction(() => document.querySelector(".branch-count")?.textContent === "1/3");
  await page.fill("#composer-input", "count to 2");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.querySelectorAll(".message.user").length === 3, null, { timeout: 30000 });
  await idle(page);
  assert.deepEqual(await userTexts(page), ["count to 3", "count to 5", "count to 2"]);
  assert.equal(await lastAnswer(page), "1 2.");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("↑ in the empty composer edits the last message; Esc cancels the edit", async () => {
  const page = await newPage(browser, app.baseUrl);
  await startChat(page, "count to 2");
  await idle(page);
  await page.locator("#composer-input").focus();
  await page.keyboard.press("ArrowUp");
  const box = page.locator(".edit-input");
  await box.waitFor();
  assert.equal(await box.inputValue(), "count to 2");
  // The box takes the focus once it is mounted, a frame after it appears.
  await page.waitForFunction(() => document.activeElement?.className === "edit-input");
  await page.keyboard.press("Escape");
  await box.waitFor({ state: "detached" });
  assert.deepEqual(await userTexts(page), ["count to 2"]);
  await page.context().close();
});
