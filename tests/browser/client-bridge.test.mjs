// The client bridge against the real app API (chats, events, auth components in the local host)
// with the eve endpoints scripted inside the page, so that each protocol situation is exact and
// repeatable: persistence of every event and the merged snapshot, the pending message consumed
// exactly once, rendering (Markdown, reasoning, grouped tools), inert HTML in messages,
// authorization cards with Skip, and a stream that drops before settling.
// The same flows against the real agent (demo provider) are in chat.test.mjs.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { apiCall, launchBrowser, newPage, screenshot, startApp } from "./harness.mjs";

let app;
let browser;
before(async () => {
  app = await startApp();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await app?.stop();
});

/**
 * Scripts /eve/v1/* for one page. `turns` is a list of event lists (without `index`), one per
 * message sent; events are numbered on one session stream as the agent would.
 */
async function scriptAgent(page, turns, opts = {}) {
  const log = [];
  const calls = { sends: [], declines: [], interrupts: 0, streams: [] };
  let turn = 0;
  await page.route(/\/eve\/v1\/session(\/[^/?]+)?(\/interrupt|\/stream)?(\?.*)?$/, async (route) => {
    const url = new URL(route.request().url());
    const method = route.request().method();
    if (method === "POST" && url.pathname.endsWith("/interrupt")) {
      calls.interrupts++;
      return route.fulfill({ status: 200, contentType: "application/json", body: "{}" });
    }
    if (method === "POST" && JSON.parse(route.request().postData()).inputResponses) {
      calls.declines.push(JSON.parse(route.request().postData()).inputResponses);
      return route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify({ sessionId: "sess-1", streamIndex: log.length }) });
    }
    if (method === "POST") {
      calls.sends.push(JSON.parse(route.request().postData()));
      const start = log.length;
      for (const e of turns[turn++] ?? []) log.push({ ...e, index: log.length });
      return route.fulfill({
        status: 201,
        contentType: "application/json",
        headers: { "x-eve-session-id": "sess-1" },
        body: JSON.stringify({ sessionId: "sess-1", streamIndex: start }),
      });
    }
    const startIndex = Number(url.searchParams.get("startIndex") ?? 0);
    calls.streams.push(startIndex);
    let events = log.slice(startIndex);
    // A stream that breaks for good at `cutAt`: no reader ever gets past it.
    if (opts.cutAt !== undefined) events = events.filter((e) => e.index < opts.cutAt);
    return route.fulfill({
      status: 200,
      contentType: "application/x-ndjson",
      body: events.map((e) => JSON.stringify(e)).join("\n") + (events.length ? "\n" : ""),
    });
  });
  return calls;
}

const user = (text) => ({ type: "user.message", text });
const text = (delta) => ({ type: "assistant.text.delta", delta });
const done = { type: "session.completed" };

async function startChat(page, message) {
  await page.goto("/");
  await page.waitForSelector(".auth-slot .viewer-name");
  await page.fill("#composer-input", message);
  await page.keyboard.press("Enter");
  await page.waitForURL(/\/chat\/[A-Za-z0-9_-]+$/);
  return page.url().split("/chat/")[1];
}

test("checklist 3-5: first message creates the chat, navigates, streams, and every event plus the snapshot is saved", async () => {
  const page = await newPage(browser, app.baseUrl);
  const calls = await scriptAgent(page, [
    [user("Hello there"), { type: "assistant.reasoning.delta", delta: "The user greets me." }, text("**Hi!** How can "), text("I help?"), done],
    [user("Second"), text("Second answer"), done],
  ]);
  const chatId = await startChat(page, "Hello there");
  await page.waitForSelector(".message.assistant .markdown strong");
  await page.waitForSelector(`.chat-row.active[data-chat-id="${chatId}"]`);
  assert.equal((await page.textContent(".message.assistant .markdown")).trim(), "Hi! How can I help?");
  assert.equal(await page.locator(".reasoning summary").textContent(), "Thought process");
  assert.equal(calls.sends.length, 1, "the pending message was sent exactly once");
  assert.equal(calls.sends[0].message, "Hello there");
  assert.match(calls.sends[0].clientContext, /Notion/);

  await page.fill("#composer-input", "Second");
  await page.keyboard.press("Enter");
  await page.waitForSelector("text=Second answer");
  const texts = await page.locator(".message").allTextContents();
  assert.deepEqual(texts.map((t) => t.trim()).filter(Boolean).slice(0, 4).map((t) => t.slice(0, 12)), ["Hello there", "Thought proc", "Second", "Second answe"]);

  await page.waitForTimeout(500);
  const saved = await apiCall(app.baseUrl, "GET", `/api/chats/${chatId}`);
  assert.equal(saved.json.events.length, 8);
  assert.deepEqual(saved.json.events.map((e) => e.index), [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.equal(saved.json.pendingUserMessage, null);
  assert.deepEqual(saved.json.session, { sessionId: "sess-1", streamIndex: 8 });
  assert.deepEqual(page.problems, []);
  await screenshot(page, "chat-scripted");
  await page.context().close();
});

test("HTML and script in a message are rendered inert", async () => {
  const page = await newPage(browser, app.baseUrl);
  const evil = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`;
  await scriptAgent(page, [[user(evil), text(`Echo: ${evil} [link](javascript:alert(1))`), done]]);
  await startChat(page, evil);
  await page.waitForSelector(".message.assistant .markdown");
  await page.waitForTimeout(300);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator(".message.user .bubble").first().textContent(), evil);
  assert.equal(await page.locator(".markdown script, .markdown img[onerror], .markdown a[href^='javascript']").count(), 0);
  await page.context().close();
});

test("consecutive tool calls show as one compact expandable row", async () => {
  const page = await newPage(browser, app.baseUrl);
  await scriptAgent(page, [[
    user("Weather in Paris and Rome?"),
    { type: "tool.call.started", toolCallId: "t1", toolName: "get_weather" },
    { type: "tool.call.input.delta", toolCallId: "t1", delta: '{"city":"Paris"}' },
    { type: "tool.call.started", toolCallId: "t2", toolName: "get_weather" },
    { type: "tool.call.input.delta", toolCallId: "t2", delta: '{"city":"Rome"}' },
    { type: "tool.call.result", toolCallId: "t1", output: { tempC: 18 } },
    { type: "tool.call.result", toolCallId: "t2", output: { tempC: 24 } },
    text("Paris 18 °C, Rome 24 °C."),
    done,
  ]]);
  await startChat(page, "Weather in Paris and Rome?");
  await page.waitForSelector("text=Paris 18 °C, Rome 24 °C.");
  assert.equal(await page.locator(".tool-group").count(), 1);
  assert.match(await page.textContent(".tool-summary"), /Used 2 tools: get weather/);
  await page.click(".tool-summary");
  assert.equal(await page.locator(".tool-details li").count(), 2);
  assert.match(await page.textContent(".tool-details"), /"city": "Rome"/);
  await screenshot(page, "tools-expanded");
  await page.context().close();
});

test("checklist 9 and 10: a pending authorization disables only that chat; Skip makes it usable and is saved", async () => {
  const page = await newPage(browser, app.baseUrl);
  const calls = await scriptAgent(page, [
    [user("Search my Notion"), { type: "authorization.required", authorizationId: "auth-1", connection: "notion", displayName: "Notion", description: "Search and edit pages", connectUrl: "/connect/notion" }],
    [user("Never mind"), text("Okay."), done],
  ]);
  const chatId = await startChat(page, "Search my Notion");
  await page.waitForSelector(".auth-card.pending");
  assert.equal(await page.textContent(".auth-card-title"), "Notion");
  assert.equal(await page.isDisabled("#composer-input"), true);
  assert.match(await page.getAttribute(".composer", "data-reason"), /authorization/);
  await screenshot(page, "authorization-card");

  // Another chat is not affected.
  await page.click("a.new-chat");
  await page.waitForURL(`${app.baseUrl}/`);
  assert.equal(await page.isDisabled("#composer-input"), false);
  await page.click(`.chat-row[data-chat-id="${chatId}"] a`);
  await page.waitForSelector(".auth-card.pending");

  // A reload rebuilds the card from the saved log.
  await page.reload();
  await page.waitForSelector(".auth-card.pending");
  assert.equal(await page.isDisabled("#composer-input"), true);

  await page.click(".auth-card button:has-text('Skip')");
  await page.waitForSelector(".auth-card.declined");
  assert.equal(await page.isDisabled("#composer-input"), false);
  await page.waitForTimeout(300);
  const saved = await apiCall(app.baseUrl, "GET", `/api/chats/${chatId}`);
  const types = saved.json.events.map((e) => e.type);
  assert.deepEqual(types.slice(-2), ["authorization.completed", "session.waiting"]);
  assert.equal(saved.json.events.at(-2).outcome, "declined");
  assert.deepEqual(calls.declines, [[{ requestId: "auth-1", outcome: "declined" }]], "the agent is told too");

  await page.reload();
  await page.waitForSelector(".auth-card.declined");
  await page.fill("#composer-input", "Never mind");
  await page.keyboard.press("Enter");
  await page.waitForSelector("text=Okay.");
  await page.context().close();
});

test("checklist 6: a stream that drops before settling ends with a clear error", async () => {
  const page = await newPage(browser, app.baseUrl);
  await scriptAgent(page, [[user("Tell me a story"), text("Once upon"), text(" a time"), done]], { cutAt: 2 });
  await startChat(page, "Tell me a story");
  await page.waitForSelector(".toast:has-text('Stream disconnected before the response completed.')", { timeout: 15000 });
  assert.equal(await page.locator("button[aria-label='Stop response']").count(), 0, "no longer busy");
  assert.equal(await page.isDisabled("#composer-input"), false);
  await page.context().close();
});
