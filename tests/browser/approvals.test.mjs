// Tool approvals in the browser (issue 23, docs/approvals.md), in English and in Simplified
// Chinese (Chromium's `locale`): the owner gates the built-in get_weather with `always`
// (tool_approvals), the demo model calls it for "weather in CITY", and the chat shows the
// approval card — the tool, its input, Approve / Deny with a note. The card is back after a
// reload; Approve runs the tool; Deny with a note gives the model eve's denial quoting it.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { launchBrowser, newPage, screenshot, startApp, startChat, waitSettledOnServer } from "./harness.mjs";

const PASSES = [
  { locale: "en-US", title: "Approval needed", approve: "Approve", deny: "Deny", approved: "Approved", denied: "Declined" },
  { locale: "zh-CN", title: "需要批准", approve: "批准", deny: "拒绝", approved: "已批准", denied: "已拒绝" },
];

let app;
let browser;
before(async () => {
  app = await startApp({ tool_approvals: JSON.stringify({ get_weather: "always" }), demo_pacing_ms: "5" });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await app?.stop();
});

/** Waits for the open approval card of the page's chat; its text. */
async function openCard(page, pass) {
  await page.waitForSelector(".approval-card.open", { timeout: 30000 });
  assert.equal(await page.getAttribute(".approval-card", "aria-label"), pass.title);
  assert.equal((await page.textContent(".approval-tool")).trim(), "get_weather");
  return await page.textContent(".approval-card");
}

for (const pass of PASSES) {
  test(`an approval card (${pass.locale}): the tool and its input, kept over a reload, Approve runs it`, async () => {
    const page = await newPage(browser, app.baseUrl, { locale: pass.locale });
    const chatId = await startChat(page, "weather in Paris");
    const text = await openCard(page, pass);
    assert.match(await page.textContent(".approval-input"), /"city": "Paris"/);
    assert.match(text, new RegExp(pass.approve));
    assert.match(text, new RegExp(pass.deny));
    await screenshot(page, `approval-card-${pass.locale}`);

    await page.reload();
    await openCard(page, pass);
    await page.click(`.approval-card button:has-text('${pass.approve}')`);
    await page.waitForSelector(".approval-card:not(.open)", { timeout: 30000 });
    await page.waitForFunction(() => !document.querySelector("button[aria-label='Stop response'], button[aria-label='停止回答']"), null, { timeout: 30000 });
    const chat = await waitSettledOnServer(app.baseUrl, chatId, 30000, (c) => c.events.at(-1).type === "session.waiting");
    const result = chat.events.find((e) => e.type === "action.result");
    assert.equal(result.data.status, "completed");
    assert.ok(chat.events.some((e) => e.type === "approval.settled" && e.data.outcome === "approved"));
    assert.equal((await page.textContent(".approval-card .input-card-answer")).trim(), pass.approved);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test(`an approval card (${pass.locale}): Deny with a note refuses the call and tells the model`, async () => {
    const page = await newPage(browser, app.baseUrl, { locale: pass.locale });
    const chatId = await startChat(page, "weather in Tokyo");
    await openCard(page, pass);
    await page.fill(".approval-card textarea", "not today");
    await page.click(`.approval-card button:has-text('${pass.deny}')`);
    await page.waitForSelector(".approval-card:not(.open)", { timeout: 30000 });
    const chat = await waitSettledOnServer(app.baseUrl, chatId, 30000, (c) => c.events.at(-1).type === "session.waiting");
    const result = chat.events.find((e) => e.type === "action.result");
    assert.equal(result.data.status, "rejected");
    assert.equal(result.data.error.message, 'Tool execution was denied. The person who denied it wrote: "not today"');
    await page.waitForSelector(`.approval-card .input-card-answer:has-text('${pass.denied}')`, { timeout: 30000 });
    assert.match(await page.textContent(".approval-card .input-card-answer"), /not today/);
    // After a reload the card reads the same, from the stream alone.
    await page.reload();
    await page.waitForSelector(`.approval-card .input-card-answer:has-text('${pass.denied}')`, { timeout: 30000 });
    assert.match(await page.textContent(".approval-card .input-card-answer"), /not today/);
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });
}

test("two approvals of one step: two cards, each answered on its own, then the turn goes on", async () => {
  const pass = PASSES[0];
  const page = await newPage(browser, app.baseUrl, { locale: pass.locale });
  const chatId = await startChat(page, "weather in Paris and Tokyo");
  await page.waitForFunction(() => document.querySelectorAll(".approval-card.open").length === 2, null, { timeout: 30000 });
  await page.click(`.approval-card.open >> nth=0 >> button:has-text('${pass.approve}')`);
  await page.waitForFunction(() => document.querySelectorAll(".approval-card.open").length === 1, null, { timeout: 30000 });
  await page.click(`.approval-card.open button:has-text('${pass.deny}')`);
  const chat = await waitSettledOnServer(app.baseUrl, chatId, 30000, (c) => c.events.at(-1).type === "session.waiting");
  const statuses = chat.events.filter((e) => e.type === "action.result").map((e) => e.data.status);
  assert.deepEqual(statuses.sort(), ["completed", "rejected"]);
  await page.waitForFunction(() => document.querySelectorAll(".approval-card.open").length === 0, null, { timeout: 30000 });
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
