// Behaviours the web app claims that no other test checked (issue 19, "Tests that must not pass
// by skipping"): the composer's 8,000-character limit counts characters as the server does
// (code points, so emoji text is not refused at 4,000), the root page's composer shows a
// spinner while the chat is being created, and the "Thinking" row fades out (it stays in the
// page and its opacity transitions to 0) instead of vanishing. Skip's rollback when saving
// fails is checked in web/src/runtime.test.ts. No clock is asserted: requests are held back
// where a state must be seen, and deadlines only catch hangs.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { apiCall, launchBrowser, newPage, startApp, startChat, waitSettledOnServer } from "./harness.mjs";

let app;
let browser;
before(async () => {
  app = await startApp({ demo_pacing_ms: "5" });
  browser = await launchBrowser();
  const probe = await apiCall(app.baseUrl, "POST", "/eve/v1/session", { message: "ping" });
  assert.equal(probe.status, 202, `the agent answers eve's create: ${probe.text}`);
});
after(async () => {
  await browser?.close();
  await app?.stop();
});

const MAX = 8000;

/** Holds every non-GET request matching `pattern` until the returned `release` is called
 * (which removes every route of the page). */
async function holdRequests(page, pattern) {
  let release;
  const held = new Promise((resolve) => (release = resolve));
  let seen = 0;
  const handler = async (route) => {
    if (route.request().method() !== "GET") {
      seen++;
      await held;
    }
    await route.continue();
  };
  await page.route(pattern, handler);
  return {
    seen: () => seen,
    release: async () => {
      release();
      // Lets the held handlers continue their requests before the route goes.
      await page.unrouteAll({ behavior: "wait" });
    },
  };
}

test("the composer counts characters as the server does: 8,000 emoji may be sent, 8,001 may not", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  await page.waitForSelector(".auth-slot .viewer-name");
  const send = page.locator("button.send");
  const count = page.locator(".char-count");

  // 8,000 emoji are 16,000 UTF-16 units: the old limit (value.length, maxlength) refused them.
  const emoji = "😀".repeat(MAX);
  await page.fill("#composer-input", emoji);
  const kept = await page.inputValue("#composer-input");
  assert.equal(Array.from(kept).length, MAX, "the field keeps all 8,000 characters");
  assert.equal(kept === emoji, true);
  assert.equal(await count.textContent(), "8,000 / 8,000");
  assert.ok(!(await count.getAttribute("class")).includes("over"));
  assert.equal(await send.isEnabled(), true, "8,000 characters may be sent");

  // 7,999 emoji and two letters: 16,000 UTF-16 units too, but 8,001 characters.
  await page.fill("#composer-input", "😀".repeat(MAX - 1) + "ab");
  assert.equal(await count.textContent(), "8,001 / 8,000");
  assert.ok((await count.getAttribute("class")).includes("over"));
  assert.equal(await send.isEnabled(), false, "8,001 characters may not");
  assert.equal(await send.getAttribute("title"), "Messages are limited to 8,000 characters");

  // Spaces around the message are trimmed before counting, as the server trims.
  await page.fill("#composer-input", `  ${"a".repeat(MAX)}  \n`);
  assert.equal(await send.isEnabled(), true);

  // And the server takes exactly what the composer lets through.
  const created = await apiCall(app.baseUrl, "POST", "/api/chats", { pendingUserMessage: emoji });
  assert.equal(created.status, 201, created.text);
  const refused = await apiCall(app.baseUrl, "POST", "/api/chats", { pendingUserMessage: emoji + "😀" });
  assert.equal(refused.status, 400, refused.text);
  const eve = await apiCall(app.baseUrl, "POST", "/eve/v1/session", { message: emoji });
  assert.equal(eve.status, 202, eve.text);
  const eveRefused = await apiCall(app.baseUrl, "POST", "/eve/v1/session", { message: emoji + "😀" });
  assert.equal(eveRefused.status, 400, eveRefused.text);
  await page.context().close();
});

test("the root page's composer shows a spinner while the chat is being created", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  await page.waitForSelector(".auth-slot .viewer-name");
  const create = await holdRequests(page, "**/api/chats");
  await page.fill("#composer-input", "Hello, spinner");
  await page.keyboard.press("Enter");
  const send = page.locator("button.send");
  await page.waitForSelector("button.send .spinner", { timeout: 30000 });
  for (let i = 0; create.seen() === 0 && i < 300; i++) await page.waitForTimeout(100);
  assert.equal(create.seen(), 1, "the create is on its way (held)");
  assert.equal(await send.getAttribute("aria-label"), "Sending");
  assert.equal(await send.getAttribute("title"), "Sending…");
  assert.equal(await page.locator("#composer-input").isDisabled(), true, "the field is locked while it is sent");
  assert.match(page.url(), /\/$/, "still on the root page");
  await create.release();
  await page.waitForURL(/\/chat\/[A-Za-z0-9_-]+$/, { timeout: 30000 });
  await page.waitForSelector(".message.user >> text=Hello, spinner");
  assert.equal(await page.locator("button.send .spinner").count(), 0, "no spinner once the chat exists");
  await page.context().close();
});

test("the Thinking row shows while the agent works and fades out when the answer appears", async () => {
  const page = await newPage(browser, app.baseUrl);
  const chatId = await startChat(page, "Hello");
  await waitSettledOnServer(app.baseUrl, chatId);
  await page.waitForFunction(() => !document.querySelector("button[aria-label='Stop response']"), null, { timeout: 30000 });
  const row = page.locator(".thinking-row");
  assert.equal(await row.count(), 1);
  assert.equal(await row.getAttribute("aria-hidden"), "true", "hidden while idle");

  // Record how the row leaves: the moment its `visible` class goes, which transitions run.
  await page.evaluate(() => {
    const el = document.querySelector(".thinking-row");
    window.__thinkingFade = null;
    new MutationObserver(() => {
      if (el.classList.contains("visible") || window.__thinkingFade) return;
      const opacity = Number(getComputedStyle(el).opacity); // flushes style: the transition starts
      window.__thinkingFade = {
        opacity,
        transitions: el.getAnimations().map((a) => ({ property: a.transitionProperty, state: a.playState })),
      };
    }).observe(el, { attributes: true, attributeFilter: ["class"] });
  });

  // The message is held back, so the row is seen while the agent has not answered yet.
  const message = await holdRequests(page, "**/eve/v1/session/*");
  await page.fill("#composer-input", "count to 30");
  await page.keyboard.press("Enter");
  await page.waitForSelector(".thinking-row.visible", { timeout: 30000 });
  assert.equal(await row.getAttribute("aria-hidden"), "false");
  assert.equal(await row.locator(".shimmer").textContent(), "Thinking...");
  await page.waitForFunction(() => getComputedStyle(document.querySelector(".thinking-row")).opacity === "1", null, { timeout: 30000 });
  await message.release();

  // The answer's text appears: the row fades (an opacity transition) and stays in the page.
  await page.waitForFunction(() => window.__thinkingFade, null, { timeout: 30000 });
  const fade = await page.evaluate(() => window.__thinkingFade);
  assert.ok(fade.opacity > 0, `still visible as the fade starts: ${JSON.stringify(fade)}`);
  assert.ok(
    fade.transitions.some((t) => t.property === "opacity" && t.state === "running"),
    `an opacity transition runs: ${JSON.stringify(fade)}`,
  );
  await page.waitForFunction(() => getComputedStyle(document.querySelector(".thinking-row")).opacity === "0", null, { timeout: 30000 });
  assert.equal(await row.count(), 1, "the row stays in the page (no layout jump)");
  assert.equal(await row.getAttribute("aria-hidden"), "true");
  await waitSettledOnServer(app.baseUrl, chatId);
  await page.context().close();
});
