// The composer's model switcher (issue 13 item 4): it lists the models the owner allows
// (llm_models, through /eve/v1/info), the chosen one answers, and each chat keeps its own.
// Item 6: each answer shows its tokens, the latest also the chat's.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { apiCall, launchBrowser, newPage, screenshot, startApp, startChat } from "./harness.mjs";

let app;
let browser;
before(async () => {
  app = await startApp({
    demo_pacing_ms: "1",
    llm_models: JSON.stringify([
      { provider: "demo", model: "one", label: "Demo One" },
      { provider: "demo", model: "two", label: "Demo Two" },
    ]),
  });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await app?.stop();
});

/** The `modelId` of every `step.started` the chat's stored log holds, once its turns settle. */
async function stepModels(chatId, turns) {
  for (let i = 0; i < 200; i++) {
    const r = await apiCall(app.baseUrl, "GET", `/api/chats/${chatId}`);
    assert.equal(r.status, 200, r.text);
    const events = r.json.events ?? [];
    if (events.filter((e) => e.type === "session.waiting").length >= turns) {
      return events.filter((e) => e.type === "step.started").map((e) => e.data.modelId);
    }
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`chat ${chatId} did not settle ${turns} turn(s)`);
}

test("the composer shows the allowed models; the chosen one answers and each chat keeps its own", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  const select = page.getByRole("combobox", { name: "Model" });
  await select.waitFor();
  assert.deepEqual(await select.locator("option").allTextContents(), ["Demo One", "Demo Two"]);
  assert.equal(await select.inputValue(), "demo/one", "the first listed is the default");
  await select.selectOption("demo/two");
  await screenshot(page, "composer-model-menu");

  const first = await startChat(page, "Hello from two");
  assert.deepEqual(await stepModels(first, 1), ["demo/two"]);
  // Item 6: the settled answer shows its tokens; the model is named on hover.
  const usage = page.locator(".usage-line").first();
  await usage.waitFor();
  assert.match(await usage.textContent(), /^[\d,]+ tokens$/);
  assert.match(await usage.getAttribute("title"), /^demo\/two · [\d,]+ in · [\d,]+ out$/);
  assert.equal(await page.getByRole("combobox", { name: "Model" }).inputValue(), "demo/two");

  // A second chat on the other model leaves the first one on its own.
  const second = await startChat(page, "Hello again");
  assert.equal(await page.getByRole("combobox", { name: "Model" }).inputValue(), "demo/two");
  await page.getByRole("combobox", { name: "Model" }).selectOption("demo/one");
  await page.waitForSelector(".composer:not(.is-disabled) #composer-input:not([disabled])");
  await page.waitForFunction(() => !document.querySelector(".icon-button.stop"));
  await page.fill("#composer-input", "Now with one");
  await page.keyboard.press("Enter");
  assert.deepEqual(await stepModels(second, 2), ["demo/two", "demo/one"]);
  // Two answers: the latest line also totals the chat.
  await page.waitForFunction(() => document.querySelectorAll(".usage-line").length === 2);
  assert.match(await page.locator(".usage-line").last().textContent(), /^[\d,]+ tokens · this chat [\d,]+$/);
  await screenshot(page, "composer-usage");

  await page.goto(`/chat/${first}`);
  const again = page.getByRole("combobox", { name: "Model" });
  await again.waitFor();
  await page.waitForFunction(() => document.querySelector('select[aria-label="Model"]')?.value === "demo/two");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
