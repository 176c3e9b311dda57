// Seed 000 checklist 7 and 8: sidebar history visible with the right active row, cursor
// pagination loads older chats (only new ones appended), rename and delete; a chat title with
// markup is shown as text, never run.
import assert from "node:assert/strict";
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

  page.once("dialog", (d) => d.accept());
  await page.locator(`.chat-row[data-chat-id="${victim.id}"]`).hover();
  await page.locator(`.chat-row[data-chat-id="${victim.id}"]`).getByRole("button", { name: /Delete/ }).click();
  await page.waitForSelector(`.chat-row[data-chat-id="${victim.id}"]`, { state: "detached" });
  await page.waitForTimeout(300);
  assert.equal((await apiCall(app.baseUrl, "GET", `/api/chats/${victim.id}`)).status, 404);
  await page.context().close();
});
