// Seed 000 checklist 7 and 8: sidebar history visible with the right active row, cursor
// pagination loads older chats (only new ones appended), rename and delete; a chat title with
// markup is shown as text, never run. Issue 13 item 8: delete with a 5 s undo (and a reload
// inside it), search with highlighted matches, export from the chat menu.
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, test } from "node:test";
import { apiCall, launchBrowser, newPage, screenshot, startApp } from "./harness.mjs";

let app;
let browser;
const created = [];
before(async () => {
  app = await startApp();
  browser = await launchBrowser();
  // 24 chats (the create limit is 25 per hour): more than one sidebar page of 20.
  for (let i = 0; i < 23; i++) {
    const r = await apiCall(app.baseUrl, "POST", "/api/chats", { pendingUserMessage: `Chat number ${String(i).padStart(2, "0")}` });
    assert.equal(r.status, 201, r.text);
    created.push(r.json.chat);
  }
  const xss = await apiCall(app.baseUrl, "POST", "/api/chats", { pendingUserMessage: `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> evil` });
  assert.equal(xss.status, 201, xss.text);
  created.push(xss.json.chat);
});
after(async () => {
  await browser?.close();
  await app?.stop();
});

test("checklist 7 and 8: history shows newest first, scrolling to the end loads the older page once", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  await page.waitForSelector(".chat-row");
  assert.equal(await page.locator(".chat-row").count(), 20, "first page");
  const titles = await page.locator(".chat-row a").allTextContents();
  assert.match(titles[0], /<img src=x/, "the newest chat is first");
  await page.locator(".history-sentinel").scrollIntoViewIfNeeded();
  await page.waitForFunction(() => document.querySelectorAll(".chat-row").length === 24);
  await page.waitForTimeout(300);
  const ids = await page.locator(".chat-row").evaluateAll((rows) => rows.map((r) => r.dataset.chatId));
  assert.equal(new Set(ids).size, 24, "no chat listed twice");
  assert.equal(await page.locator(".history-sentinel").count(), 0, "no more pages");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("a chat title with markup renders as inert text", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  await page.waitForSelector(".chat-row");
  const row = page.locator(".chat-row").first();
  assert.match(await row.textContent(), /<img src=x/);
  assert.equal(await row.locator("img, script").count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  await page.context().close();
});

test("the active chat row is marked and follows navigation", async () => {
  const page = await newPage(browser, app.baseUrl);
  const target = created[20];
  await page.goto(`/chat/${target.id}`);
  await page.waitForSelector(`.chat-row.active[data-chat-id="${target.id}"]`);
  assert.equal(await page.locator(".chat-row.active").count(), 1);
  assert.equal(await page.locator(`.chat-row.active a`).getAttribute("aria-current"), "page");
  const other = created[21];
  await page.click(`.chat-row[data-chat-id="${other.id}"] a`);
  await page.waitForURL(`**/chat/${other.id}`);
  await page.waitForSelector(`.chat-row.active[data-chat-id="${other.id}"]`);
  assert.equal(await page.locator(".chat-row.active").count(), 1);
  await screenshot(page, "sidebar-active");
  await page.context().close();
});

test("rename updates the row at once and on the server; delete removes it", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  const victim = created[22];
  const row = page.locator(`.chat-row[data-chat-id="${victim.id}"]`);
  await row.hover();
  await row.getByRole("button", { name: /Rename/ }).click();
  await page.fill(".rename-input", "Renamed by the browser");
  await page.keyboard.press("Enter");
  await page.waitForSelector(`.chat-row[data-chat-id="${victim.id}"] >> text=Renamed by the browser`);
  await page.waitForTimeout(300);
  const server = await apiCall(app.baseUrl, "GET", `/api/chats/${victim.id}`);
  assert.equal(server.json.chat.title, "Renamed by the browser");

  await page.locator(`.chat-row[data-chat-id="${victim.id}"]`).hover();
  await page.locator(`.chat-row[data-chat-id="${victim.id}"]`).getByRole("button", { name: /Delete/ }).click();
  await page.waitForSelector(`.chat-row[data-chat-id="${victim.id}"]`, { state: "detached" });
  // The DELETE goes when the 5 s undo window is over.
  await page.waitForSelector(".toast button:has-text('Undo')", { state: "detached", timeout: 10000 });
  await waitStatus(`/api/chats/${victim.id}`, 404);
  await page.context().close();
});

async function waitStatus(path, status, timeout = 10000) {
  const end = Date.now() + timeout;
  for (;;) {
    const r = await apiCall(app.baseUrl, "GET", path);
    if (r.status === status) return r;
    if (Date.now() > end) throw new Error(`${path}: ${r.status}, expected ${status}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

async function deleteRow(page, id) {
  const row = page.locator(`.chat-row[data-chat-id="${id}"]`);
  await row.hover();
  await row.getByRole("button", { name: /Delete/ }).click();
  await page.waitForSelector(`.chat-row[data-chat-id="${id}"]`, { state: "detached" });
}

test("delete shows Undo for 5 s: Undo puts the chat back in its place and nothing is deleted", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  await page.waitForSelector(".chat-row");
  const target = created[18];
  const before = await page.locator(".chat-row").evaluateAll((rows) => rows.map((r) => r.dataset.chatId));
  await deleteRow(page, target.id);
  await page.waitForSelector(".toast >> text=Deleted");
  await screenshot(page, "sidebar-undo-delete");
  await page.click(".toast button:has-text('Undo')");
  await page.waitForSelector(`.chat-row[data-chat-id="${target.id}"]`);
  assert.deepEqual(await page.locator(".chat-row").evaluateAll((rows) => rows.map((r) => r.dataset.chatId)), before, "back in its place");
  // Well past the undo window: the chat is still there, on the server and after a reload.
  await page.waitForTimeout(6500);
  assert.equal((await apiCall(app.baseUrl, "GET", `/api/chats/${target.id}`)).status, 200);
  await page.reload();
  await page.waitForSelector(`.chat-row[data-chat-id="${target.id}"]`);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("a reload inside the undo window does not bring a deleted chat back: the delete is sent", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  await page.waitForSelector(".chat-row");
  const target = created[17];
  await deleteRow(page, target.id);
  await page.reload();
  await page.waitForSelector(".chat-row");
  assert.equal(await page.locator(`.chat-row[data-chat-id="${target.id}"]`).count(), 0, "not listed after the reload");
  await waitStatus(`/api/chats/${target.id}`, 404);
  await page.waitForFunction(() => localStorage.getItem("eve-chat-pending-deletes") === null, null, { timeout: 10000 });
  await page.context().close();
});

test("another tab opened inside the undo window hides the chat but cannot overrule an Undo", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  await page.waitForSelector(".chat-row");
  const target = created[15];
  await deleteRow(page, target.id);
  const other = await page.context().newPage();
  await other.goto("/");
  await other.waitForSelector(".chat-row");
  assert.equal(await other.locator(`.chat-row[data-chat-id="${target.id}"]`).count(), 0, "the other tab does not list it");
  await page.click(".toast button:has-text('Undo')");
  await page.waitForSelector(`.chat-row[data-chat-id="${target.id}"]`);
  await page.waitForTimeout(6500);
  assert.equal((await apiCall(app.baseUrl, "GET", `/api/chats/${target.id}`)).status, 200, "undone: still there");
  await other.reload();
  await other.waitForSelector(`.chat-row[data-chat-id="${target.id}"]`);
  await page.context().close();
});

test("search: Ctrl+K focuses it, results come from ?q= with the matches highlighted, Esc clears it", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  await page.waitForSelector(".chat-row");
  await page.locator("#composer-input").focus();
  await page.keyboard.press("Control+k");
  await page.waitForFunction(() => document.activeElement?.id === "chat-search");
  await page.keyboard.type("NUMBER 1");
  await page.waitForSelector(".search-results .chat-row");
  const server = await apiCall(app.baseUrl, "GET", `/api/chats?limit=50&q=${encodeURIComponent("NUMBER 1")}`);
  const expected = server.json.chats.map((c) => c.id);
  assert.ok(expected.length >= 5, `the server finds them: ${expected.length}`);
  await page.waitForFunction((n) => document.querySelectorAll(".search-results .chat-row").length === n, expected.length);
  assert.deepEqual(await page.locator(".search-results .chat-row").evaluateAll((rows) => rows.map((r) => r.dataset.chatId)), expected);
  const marks = await page.locator(".search-results .chat-row mark").allTextContents();
  assert.equal(marks.length, expected.length, "one highlighted match per title");
  assert.ok(marks.every((m) => m === "number 1"), JSON.stringify(marks));
  await screenshot(page, "sidebar-search");

  await page.fill("#chat-search", "zzz-no-such-chat");
  await page.waitForSelector(".history-empty >> text=No chats match");
  await page.keyboard.press("Escape");
  await page.waitForSelector(".search-results", { state: "detached" });
  assert.ok((await page.locator(".chat-row").count()) >= 18, "the history is back");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("export: the chat menu downloads the chat as Markdown and as JSON", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  const target = created[16];
  const row = page.locator(`.chat-row[data-chat-id="${target.id}"]`);
  await row.hover();
  await row.getByRole("button", { name: /More for/ }).click();
  await screenshot(page, "sidebar-chat-menu");
  const [md] = await Promise.all([page.waitForEvent("download"), page.getByRole("menuitem", { name: "Export as Markdown" }).click()]);
  assert.match(md.suggestedFilename(), /\.md$/);
  const mdText = await readFile(await md.path(), "utf8");
  assert.match(mdText, new RegExp(target.title));
  await row.hover();
  await row.getByRole("button", { name: /More for/ }).click();
  const [json] = await Promise.all([page.waitForEvent("download"), page.getByRole("menuitem", { name: "Export as JSON" }).click()]);
  assert.match(json.suggestedFilename(), /\.json$/);
  const exported = JSON.parse(await readFile(await json.path(), "utf8"));
  assert.equal(exported.format, "eve-chat.export.v1");
  assert.equal(exported.chat.id, target.id);
  await page.context().close();
});

test("pin: the chat menu pins a chat to the top, it stays there after a reload, and unpins", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  await page.waitForSelector(".chat-row");
  const target = created[0];
  const menu = async () => {
    const row = page.locator(`.chat-row[data-chat-id="${target.id}"]`);
    await row.hover();
    await row.getByRole("button", { name: /More for/ }).click();
  };
  // The oldest chat: on a later page until it is pinned.
  if (await page.locator(".history-sentinel").count()) await page.locator(".history-sentinel").scrollIntoViewIfNeeded();
  await page.waitForSelector(`.chat-row[data-chat-id="${target.id}"]`);
  await menu();
  await page.getByRole("menuitem", { name: "Pin to top" }).click();
  await page.waitForSelector(`.pinned-chats .chat-row[data-chat-id="${target.id}"]`);
  assert.equal(await page.locator(`.chat-row[data-chat-id="${target.id}"]`).count(), 1, "listed once, under Pinned");
  const firstRow = await page.locator(".chat-row").first().getAttribute("data-chat-id");
  assert.equal(firstRow, target.id, "at the top");
  await screenshot(page, "sidebar-pinned");
  const pins = await waitStatus("/api/chats?pinned=1", 200);
  assert.deepEqual(pins.json.chats.map((c) => c.id), [target.id]);

  await page.reload();
  await page.waitForSelector(`.pinned-chats .chat-row[data-chat-id="${target.id}"]`);
  assert.equal(await page.locator(".chat-row").first().getAttribute("data-chat-id"), target.id, "still at the top after a reload");

  await menu();
  await page.getByRole("menuitem", { name: "Unpin" }).click();
  await page.waitForSelector(".pinned-chats", { state: "detached" });
  for (let end = Date.now() + 10000; ; ) {
    const now = await apiCall(app.baseUrl, "GET", "/api/chats?pinned=1");
    if (now.json.chats.length === 0) break;
    if (Date.now() > end) throw new Error(`still pinned: ${now.text}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("pin API: a foreign or unknown chat is a 404, a bad query a 400, and nothing changes", async () => {
  assert.equal((await apiCall(app.baseUrl, "PUT", "/api/chats/no-such-chat/pin")).status, 404);
  assert.equal((await apiCall(app.baseUrl, "DELETE", "/api/chats/no-such-chat/pin")).status, 404);
  assert.equal((await apiCall(app.baseUrl, "GET", "/api/chats?pinned=maybe")).status, 400);
  assert.equal((await apiCall(app.baseUrl, "GET", "/api/chats?pinned=1&q=x")).status, 400);
  assert.equal((await apiCall(app.baseUrl, "POST", `/api/chats/${created[2].id}/pin`)).status, 405);
  assert.deepEqual((await apiCall(app.baseUrl, "GET", "/api/chats?pinned=1")).json.chats, []);
});
