// Seed 000 checklist 1 (root page renders with no layout shift) and the Shell-First rules: the
// sidebar frame, auth control and composer paint before the app's script or any data; the
// desktop sidebar state from the `eve-chat-sidebar` cookie applies before first paint; the
// session route puts the composer at the bottom from the first frame.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { holdAppScript, launchBrowser, newPage, screenshot, startApp } from "./harness.mjs";

let app;
let browser;
before(async () => {
  // One configured connection for the menu (nothing here calls its tools).
  app = await startApp({ mcp_connections: JSON.stringify([{ name: "notes", displayName: "Notes", url: "http://127.0.0.1:9/mcp" }]) });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await app?.stop();
});

test("checklist 1: the root page paints the shell before the app script and shifts nothing when data lands", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.addInitScript(() => {
    window.__cls = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (!e.hadRecentInput) window.__cls += e.value;
    }).observe({ type: "layout-shift", buffered: true });
  });
  const release = await holdAppScript(page);
  await page.goto("/", { waitUntil: "commit" });
  await page.waitForSelector(".composer-box");
  // Shell on screen with no app code run yet.
  const before = await page.evaluate(() => {
    const box = (sel) => {
      const r = document.querySelector(sel)?.getBoundingClientRect();
      return r ? { x: Math.round(r.x), y: Math.round(r.y), w: Math.round(r.width), h: Math.round(r.height) } : null;
    };
    return { sidebar: box(".sidebar"), composer: box(".composer-box"), auth: box(".auth-slot"), logo: box(".logo") };
  });
  assert.ok(before.sidebar && before.sidebar.w > 200, "sidebar frame painted");
  assert.ok(before.composer && before.composer.h > 40, "composer painted");
  assert.ok(before.auth, "auth control slot painted");
  await screenshot(page, "shell-before-script");
  release();
  await page.waitForSelector(".auth-slot .viewer-name");
  await page.waitForSelector(".history-empty, .chat-row");
  await page.waitForTimeout(300);
  const afterBoxes = await page.evaluate(() => {
    const box = (sel) => {
      const r = document.querySelector(sel)?.getBoundingClientRect();
      return r ? { x: Math.round(r.x), y: Math.round(r.y), w: Math.round(r.width), h: Math.round(r.height) } : null;
    };
    return { sidebar: box(".sidebar"), composer: box(".composer-box"), auth: box(".auth-slot"), logo: box(".logo") };
  });
  assert.deepEqual(afterBoxes, before, "nothing moved when the app and its data arrived");
  const cls = await page.evaluate(() => window.__cls);
  assert.ok(cls < 0.01, `cumulative layout shift ${cls}`);
  assert.deepEqual(page.problems, []);
  await screenshot(page, "home");
  await page.context().close();
});

test("a closed sidebar cookie hides the sidebar from the first frame, and toggling writes the cookie", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.context().addCookies([{ name: "eve-chat-sidebar", value: "closed", url: app.baseUrl }]);
  const release = await holdAppScript(page);
  await page.goto("/", { waitUntil: "commit" });
  await page.waitForSelector(".composer-box");
  assert.equal(await page.isVisible(".sidebar"), false, "closed before any app code ran");
  assert.equal(await page.evaluate(() => document.documentElement.classList.contains("sidebar-closed")), true);
  release();
  await page.waitForSelector(".auth-slot .viewer-name");
  assert.equal(await page.isVisible(".sidebar"), false);
  await page.click("button.sidebar-open");
  assert.equal(await page.isVisible(".sidebar"), true);
  const cookies = await page.context().cookies();
  assert.equal(cookies.find((c) => c.name === "eve-chat-sidebar")?.value, "open");
  await page.click("button.sidebar-collapse");
  assert.equal(await page.isVisible(".sidebar"), false);
  assert.equal((await page.context().cookies()).find((c) => c.name === "eve-chat-sidebar")?.value, "closed");
  await page.context().close();
});

test("the session route docks the composer at the bottom from the first frame", async () => {
  const page = await newPage(browser, app.baseUrl);
  const release = await holdAppScript(page);
  await page.goto("/chat/not-loaded-yet", { waitUntil: "commit" });
  await page.waitForSelector(".composer-box");
  const early = await page.evaluate(() => document.querySelector(".composer-box").getBoundingClientRect().bottom);
  assert.ok(early > 800 - 40, `composer bottom at ${early}`);
  assert.equal(await page.isVisible(".hero"), false, "the root page's logo never shows on a chat URL");
  release();
  await page.waitForSelector(".transcript");
  const late = await page.evaluate(() => document.querySelector(".composer-box").getBoundingClientRect().bottom);
  assert.equal(Math.round(late), Math.round(early));
  await page.context().close();
});

test("mobile: the sidebar is a drawer opened from the menu button", async () => {
  const page = await newPage(browser, app.baseUrl, { viewport: { width: 390, height: 780 } });
  await page.goto("/");
  await page.waitForSelector(".auth-slot .viewer-name");
  const hidden = await page.evaluate(() => document.querySelector(".sidebar").getBoundingClientRect().right);
  assert.ok(hidden <= 0, "drawer off-canvas");
  await page.click("button.drawer-toggle");
  await page.waitForTimeout(300);
  const shown = await page.evaluate(() => document.querySelector(".sidebar").getBoundingClientRect().left);
  assert.equal(Math.round(shown), 0);
  await screenshot(page, "mobile-drawer");
  await page.click(".drawer-backdrop", { position: { x: 370, y: 400 } });
  await page.waitForTimeout(300);
  assert.ok((await page.evaluate(() => document.querySelector(".sidebar").getBoundingClientRect().right)) <= 0);
  await page.context().close();
});

test("dark mode follows prefers-color-scheme", async () => {
  const page = await newPage(browser, app.baseUrl, { colorScheme: "dark" });
  await page.goto("/");
  await page.waitForSelector(".auth-slot .viewer-name");
  const bg = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  assert.equal(bg, "rgb(22, 22, 24)");
  await screenshot(page, "home-dark");
  await page.context().close();
});

test("keyboard: every control is labelled, the composer is focused, and the connections menu works without a mouse", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  await page.waitForSelector(".auth-slot .viewer-name");
  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll("button, a[href], textarea, input")]
      .filter((el) => !(el.getAttribute("aria-label") || el.textContent.trim() || el.labels?.length || el.getAttribute("title")))
      .map((el) => el.outerHTML.slice(0, 80)),
  );
  assert.deepEqual(unlabelled, []);
  await page.waitForFunction(() => document.activeElement?.id === "composer-input");
  await page.keyboard.press("Shift+Tab");
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement?.id), "composer-input");
  await page.keyboard.press("Tab");
  assert.match(await page.evaluate(() => document.activeElement?.textContent), /Connections/);
  await page.keyboard.press("Enter");
  await page.waitForSelector("[role=menu] input[type=checkbox]");
  await page.keyboard.press("Tab");
  await page.keyboard.press("Space");
  const saved = await page.evaluate(() => JSON.parse(localStorage.getItem("eve-chat-connections")));
  assert.equal(saved.notes, false, "the first toggle (Notes) was switched off by keyboard");
  await page.keyboard.press("Escape");
  await page.waitForSelector("[role=menu]", { state: "detached" });
  await page.context().close();
});
