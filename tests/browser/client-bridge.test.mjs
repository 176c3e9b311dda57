// The client bridge against the real app API (chats, events, auth components in the local host)
// with the eve v1 endpoints scripted inside the page (eve 0.80.1's shapes), so that each protocol situation is exact and
// repeatable: persistence of every event and the merged snapshot, the pending message consumed
// exactly once, rendering (Markdown, reasoning, grouped tools), inert HTML in messages,
// authorization cards with Skip, and a stream that drops before settling.
// The same flows against the real agent (demo provider) are in chat.test.mjs.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { apiCall, launchBrowser, newPage, screenshot, startApp, startChat } from "./harness.mjs";

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
 * Scripts /eve/v1/* for one page as an eve 0.80.1 agent answers (see
 * ../shared/eve-reference/recordings): 202 `{ok, sessionId, status}` on create, plus `deliveryId`
 * on a follow-up; one stream per session served from `startIndex` with `x-eve-stream-version:
 * 26` and a leading blank line; cancel appends what eve appends. `turns` is a list of functions,
 * one per message, returning the turn's events after `turn.started` and `message.received` as
 * `[type, data]` pairs (turn-scoped fields are added); `meta` is stamped as eve does.
 */
async function scriptAgent(page, turns, opts = {}) {
  const sessionId = "wrun_test1";
  const log = [];
  const calls = { sends: [], responses: [], cancels: [], streams: [] };
  let turn = 0;
  let active = null;
  const push = (type, data, deliveryIds) => {
    const meta = { at: new Date(Date.UTC(2026, 11, 1, 10, 0, 0, log.length)).toISOString(), id: `evt_script_${String(log.length).padStart(4, "0")}`, deliveryIds };
    log.push(data === undefined ? { type, meta } : { data, type, meta });
    if (type === "turn.started") active = { turnId: data.turnId, seq: data.sequence, deliveryIds };
    if (type === "turn.cancelled" || type === "turn.completed" || type === "turn.failed") active = null;
  };
  const startTurn = (message, deliveryId) => {
    const seq = turn;
    const turnId = `turn_${seq}`;
    const ids = [deliveryId];
    push("turn.started", { sequence: seq, turnId }, ids);
    push("message.received", { message, parts: [{ text: message, type: "text" }], sequence: seq, turnId }, ids);
    for (const [type, data] of (turns[turn++] ?? (() => []))({ seq, turnId })) {
      push(type, data && type !== "session.waiting" ? { ...data, sequence: seq, turnId } : data, ids);
    }
  };
  await page.route(/\/eve\/v1\/session(\/[^/?]+)?(\/cancel|\/stream)?(\?.*)?$/, async (route) => {
    const url = new URL(route.request().url());
    const method = route.request().method();
    const body = route.request().postData() ? JSON.parse(route.request().postData()) : undefined;
    const json = (status, value) => route.fulfill({ status, contentType: "application/json", headers: { "x-eve-session-id": sessionId }, body: JSON.stringify(value) });
    if (method === "POST" && url.pathname.endsWith("/cancel")) {
      calls.cancels.push(body ?? null);
      if (!active) return json(200, { ok: true, status: "no_active_turn" });
      const { seq, turnId, deliveryIds } = active;
      for (const e of log.filter((e) => e.type === "authorization.required" && e.data.turnId === turnId)) {
        push("authorization.completed", { attemptId: e.data.attemptId, name: e.data.name, outcome: "declined", sequence: seq, stepIndex: e.data.stepIndex, turnId }, deliveryIds);
      }
      push("turn.cancelled", { sequence: seq, turnId }, deliveryIds);
      push("session.waiting", { continuationToken: sessionId, wait: "next-user-message" }, deliveryIds);
      return json(202, { ok: true, sessionId, status: "accepted" });
    }
    if (method === "POST" && body?.inputResponses) {
      calls.responses.push(body.inputResponses);
      return json(202, { ok: true, sessionId, status: "accepted" });
    }
    if (method === "POST" && url.pathname === "/eve/v1/session") {
      calls.sends.push(body);
      push("session.started", { runtime: { agentId: "script", eveVersion: "0.80.1" } }, ["dlv_create"]);
      startTurn(body.message, "dlv_create");
      return json(202, { ok: true, sessionId, status: "accepted" });
    }
    if (method === "POST") {
      calls.sends.push(body);
      const deliveryId = `dlv_${calls.sends.length}`;
      startTurn(body.message, deliveryId);
      return json(202, { ok: true, sessionId, status: "accepted", deliveryId });
    }
    const startIndex = Number(url.searchParams.get("startIndex") ?? 0);
    calls.streams.push(startIndex);
    // A stream that breaks for good at `cutAt`: no reader ever gets past it.
    const events = log.slice(startIndex, opts.cutAt === undefined ? undefined : Math.max(startIndex, opts.cutAt));
    return route.fulfill({
      status: 200,
      headers: { "content-type": "application/x-ndjson; charset=utf-8", "x-eve-stream-version": "26", "x-eve-stream-format": "ndjson", "x-eve-session-id": sessionId },
      body: "\n" + events.map((e) => JSON.stringify(e) + "\n").join(""),
    });
  });
  return { calls, log };
}

const step = (stepIndex) => ["step.started", { modelId: "script", stepIndex }];
const text = (messageDelta, stepIndex = 0) => ["message.appended", { messageDelta, stepIndex }];
const done = (message, stepIndex = 0) => [
  ["message.completed", { finishReason: "stop", message, stepIndex }],
  ["step.completed", { finishReason: "stop", stepIndex }],
  ["turn.completed", {}],
  ["session.waiting", { continuationToken: "wrun_test1", wait: "next-user-message" }],
];
const answer = (...deltas) => () => [step(0), ...deltas.map((d) => text(d)), ...done(deltas.join(""))];

test("checklist 3-5: first message creates the chat, navigates, streams, and every event plus the snapshot is saved", async () => {
  const page = await newPage(browser, app.baseUrl);
  const { calls, log } = await scriptAgent(page, [
    () => [step(0), ["reasoning.appended", { reasoningDelta: "The user greets me.", stepIndex: 0 }], text("**Hi!** How can "), text("I help?"), ...done("**Hi!** How can I help?")],
    answer("Second answer"),
  ]);
  const chatId = await startChat(page, "Hello there");
  await page.waitForSelector(".message.assistant .markdown strong");
  await page.waitForSelector(`.chat-row.active[data-chat-id="${chatId}"]`);
  assert.equal((await page.textContent(".message.assistant .markdown")).trim(), "Hi! How can I help?");
  assert.equal(await page.locator(".reasoning summary").textContent(), "Thought process");
  assert.equal(calls.sends.length, 1, "the pending message was sent exactly once");
  assert.equal(calls.sends[0].message, "Hello there");
  assert.match(calls.sends[0].clientContext, /every configured connection on/);

  await page.fill("#composer-input", "Second");
  await page.keyboard.press("Enter");
  await page.waitForSelector("text=Second answer");
  const texts = await page.locator(".message").allTextContents();
  assert.deepEqual(texts.map((t) => t.trim()).filter(Boolean).slice(0, 4).map((t) => t.slice(0, 12)), ["Hello there", "Thought proc", "Second", "Second answe"]);

  await page.waitForTimeout(500);
  const saved = await apiCall(app.baseUrl, "GET", `/api/chats/${chatId}`);
  assert.deepEqual(saved.json.events, log, "the chat's log is eve's stream, verbatim, each event once");
  assert.equal(saved.json.pendingUserMessage, null);
  assert.deepEqual(saved.json.session, { sessionId: "wrun_test1", streamIndex: log.length });
  assert.equal(calls.sends[1].message, "Second");
  assert.deepEqual(page.problems, []);
  await screenshot(page, "chat-scripted");
  await page.context().close();
});

test("HTML and script in a message are rendered inert", async () => {
  const page = await newPage(browser, app.baseUrl);
  const evil = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`;
  await scriptAgent(page, [answer(`Echo: ${evil} [link](javascript:alert(1))`)]);
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
  await scriptAgent(page, [
    () => [
      step(0),
      ["action.input.appended", { callId: "t1", inputTextDelta: '{"city":"Paris"}', stepIndex: 0, toolName: "get_weather" }],
      ["action.input.appended", { callId: "t2", inputTextDelta: '{"city":"Rome"}', stepIndex: 0, toolName: "get_weather" }],
      ["actions.requested", { actions: [{ callId: "t1", input: { city: "Paris" }, kind: "tool-call", toolName: "get_weather" }, { callId: "t2", input: { city: "Rome" }, kind: "tool-call", toolName: "get_weather" }], stepIndex: 0 }],
      ["action.result", { result: { callId: "t1", kind: "tool-result", output: { tempC: 18 }, toolName: "get_weather" }, status: "completed", stepIndex: 0 }],
      ["action.result", { result: { callId: "t2", kind: "tool-result", output: { tempC: 24 }, toolName: "get_weather" }, status: "completed", stepIndex: 0 }],
      ["step.completed", { finishReason: "tool-calls", stepIndex: 0 }],
      step(1),
      text("Paris 18 °C, Rome 24 °C.", 1),
      ...done("Paris 18 °C, Rome 24 °C.", 1),
    ],
  ]);
  await startChat(page, "Weather in Paris and Rome?");
  await page.waitForSelector("text=Paris 18 °C, Rome 24 °C.");
  assert.equal(await page.locator(".tool-group").count(), 1);
  assert.match(await page.textContent(".tool-summary"), /Used 2 tools: Get weather/);
  await page.click(".tool-summary");
  assert.equal(await page.locator(".tool-details li").count(), 2);
  assert.match(await page.textContent(".tool-details"), /"city": "Rome"/);
  await screenshot(page, "tools-expanded");
  await page.context().close();
});

test("checklist 9 and 10: a pending authorization disables only that chat; Skip makes it usable and is saved", async () => {
  const page = await newPage(browser, app.baseUrl);
  const { calls } = await scriptAgent(page, [
    () => [
      step(0),
      ["actions.requested", { actions: [{ callId: "n1", input: { query: "roadmap" }, kind: "tool-call", toolName: "notion__search" }], stepIndex: 0 }],
      ["authorization.required", { attemptId: "att-1", authorization: { displayName: "Notion", url: "/eve/v1/connections/notion/authorize?attempt=att-1" }, description: "Search and edit pages", name: "notion", stepIndex: 0, webhookUrl: "/eve/v1/callbacks/att-1" }],
      ["turn.waiting", { on: "input" }],
    ],
    answer("Okay."),
  ]);
  const chatId = await startChat(page, "Search my Notion");
  await page.waitForSelector(".auth-card.pending");
  assert.equal(await page.textContent(".auth-card-title"), "Notion");
  assert.equal(await page.isDisabled("#composer-input"), true);
  assert.match(await page.getAttribute(".composer", "data-reason"), /authorization/);
  assert.match(await page.textContent(".tool-group"), /Waiting for authorization/);
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
  await page.waitForTimeout(1000);
  const saved = await apiCall(app.baseUrl, "GET", `/api/chats/${chatId}`);
  const tail = saved.json.events.slice(-5).map((e) => [e.type, e.data?.outcome ?? null, e.meta?.local === true]);
  assert.deepEqual(tail, [
    ["authorization.completed", "declined", true],
    ["session.waiting", null, true],
    ["authorization.completed", "declined", false],
    ["turn.cancelled", null, false],
    ["session.waiting", null, false],
  ]);
  assert.deepEqual(calls.cancels, [{ turnId: "turn_0" }], "eve is told the eve way: the held turn is cancelled");

  await page.reload();
  await page.waitForSelector(".auth-card.declined");
  await page.fill("#composer-input", "Never mind");
  await page.keyboard.press("Enter");
  await page.waitForSelector("text=Okay.");
  await page.context().close();
});

test("checklist 6: a stream that drops before settling ends with a clear error", async () => {
  const page = await newPage(browser, app.baseUrl);
  await scriptAgent(page, [answer("Once upon", " a time")], { cutAt: 5 });
  await startChat(page, "Tell me a story");
  await page.waitForSelector(".toast:has-text('Stream disconnected before the response completed.')", { timeout: 15000 });
  assert.equal(await page.locator("button[aria-label='Stop response']").count(), 0, "no longer busy");
  assert.equal(await page.isDisabled("#composer-input"), false);
  await page.context().close();
});
