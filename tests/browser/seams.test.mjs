// Issue 35's two seams, as a new user meets them: the sidebar's chats have a heading of their
// own under the projects (a first chat does not read as a project), and a path that names
// nothing is a not-found view inside the app shell (status 404, styled, in the user's language).
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { apiCall, launchBrowser, newPage, screenshot } from "./harness.mjs";
import { startApp } from "./harness.mjs";
import { loadCatalogues } from "./catalogues.mjs";

let app;
let browser;
let cat;
before(async () => {
  app = await startApp();
  browser = await launchBrowser();
  cat = await loadCatalogues();
});
after(async () => {
  await browser?.close();
  await app?.stop();
});

test("the sidebar lists chats under a Chats heading of their own, below the projects", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  await page.waitForSelector(".chats-heading");
  assert.equal((await page.locator(".chats-heading").textContent()).trim(), cat.en.sidebar.historyHeading, "heading before any chat");
  const r = await apiCall(app.baseUrl, "POST", "/api/chats", { pendingUserMessage: "My first chat" });
  assert.equal(r.status, 201, r.text);
  await page.reload();
  await page.waitForSelector(".chat-row");
  const order = await page.locator("nav.history").evaluate((nav) =>
    [...nav.querySelectorAll("#projects-heading, .chats-heading, .chat-row")].map((el) => (el.classList.contains("chat-row") ? "row" : el.id === "projects-heading" ? "projects" : "chats")),
  );
  assert.deepEqual(order.slice(0, 3), ["projects", "chats", "row"], "projects, then the Chats heading, then the chat");
  await screenshot(page, "seams-sidebar-chats-heading.png");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

for (const lang of ["en", "zh-CN"]) {
  test(`an unknown path is a 404 with the not-found view inside the app shell (${lang})`, async () => {
    const res = await fetch(app.baseUrl + "/projects");
    assert.equal(res.status, 404);
    assert.match(res.headers.get("content-type") ?? "", /text\/html/);
    const page = await newPage(browser, app.baseUrl, { locale: lang === "en" ? "en-US" : "zh-CN" });
    const c = cat[lang];
    const answer = await page.goto("/projects");
    assert.equal(answer.status(), 404);
    await page.waitForSelector(".empty-state.not-found h1");
    assert.equal((await page.locator(".not-found h1").textContent()).trim(), c.shell.notFound);
    assert.equal((await page.locator(".not-found-body").textContent()).trim(), c.shell.notFoundBody);
    assert.equal(await page.locator("aside.sidebar").count(), 1, "inside the shell: the sidebar is there");
    assert.equal(await page.evaluate(() => document.documentElement.lang), lang);
    // Styled: the app's stylesheet applies (a bare page has the browser's serif h1 and no layout).
    const styled = await page.locator(".not-found .button").evaluate((a) => getComputedStyle(a).display !== "inline");
    assert.ok(styled, "the link is the app's button");
    await screenshot(page, `seams-${lang}-not-found.png`);
    await page.locator(".not-found .button").click();
    await page.waitForURL(app.baseUrl + "/");
    await page.waitForSelector("textarea");
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });
}
