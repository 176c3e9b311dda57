// Issue 13 item 2 and the code-block copy button, in real Chromium against the real components
// (the agent with the OpenAI provider pointed at tests/browser/fake-openai.mjs, so the streamed
// Markdown is exactly what each test sends): code blocks highlighted once complete with grammars
// loaded lazily, unknown languages plain, everything sanitised, a copy button per block, and
// completed blocks rendered once while the tail streams.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { launchBrowser, newPage, screenshot, startApp, startChat } from "./harness.mjs";
import { fakeModelVariables, startFakeOpenAI } from "./fake-openai.mjs";

const JS = "function greet(name) {\n  return `hello ${name}`; // a comment\n}\nconst n = 42;";
const ANSWER = [
  "## Code samples",
  "",
  "First paragraph, rendered once.",
  "",
  "```javascript",
  JS,
  "```",
  "",
  "A block in a language the app does not know:",
  "",
  "```klingon",
  "qaStaH nuq? <b>not bold</b>",
  "```",
  "",
  'Hostile markup: <img src="x" onerror="window.__pwned = 1"> <script>window.__pwned = 2</script> [click](javascript:window.__pwned=3)',
  "",
  "```html",
  '<script>window.__pwned = 4</script><img src=x onerror="window.__pwned = 5">',
  "```",
  "",
  "Last, a block that ends the answer:",
  "",
  "```rs",
  'fn main() { println!("done"); }',
  "```",
  "",
].join("\n");

/** The answer in ~12-character deltas, slow enough that the page renders between them. */
const chunked = (text, size = 12) => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

let fake;
let app;
let browser;
before(async () => {
  fake = await startFakeOpenAI((text) => (text.includes("code please") ? { chunks: chunked(ANSWER), delayMs: 15 } : { chunks: ["Plain ", "answer."], delayMs: 5 }));
  app = await startApp(fakeModelVariables(fake));
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await app?.stop();
  await fake?.close();
});

const lastAnswer = (page) => page.locator(".message.assistant .markdown").last();

async function waitAnswerComplete(page) {
  await page.waitForFunction(() => {
    const md = [...document.querySelectorAll(".message.assistant .markdown")].at(-1);
    return md && md.textContent.includes('println!("done")') && md.querySelector('code[data-highlighted="rust"]');
  }, null, { timeout: 60000 });
}

test("code blocks: highlighted once complete, grammars loaded lazily, unknown languages plain, all sanitised", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  await page.waitForSelector(".auth-slot .viewer-name");
  const loadedBefore = await page.evaluate(() => performance.getEntriesByType("resource").map((r) => r.name).filter((n) => /\/assets\/(core|javascript|rust)-/.test(n)));
  assert.deepEqual(loadedBefore, [], "the highlighter is not part of the first load");

  await startChat(page, "code please", { inApp: true });
  // Streaming: the fence that is still open is shown as plain text, never half-highlighted.
  await page.waitForFunction(() => [...document.querySelectorAll(".markdown pre code")].some((c) => c.textContent.includes("function")), null, { timeout: 60000 });
  await waitAnswerComplete(page);
  const md = lastAnswer(page);

  const js = md.locator('code[data-highlighted="javascript"]');
  assert.equal(await js.textContent(), JS + "\n", "highlighting keeps the code's text");
  assert.ok((await js.locator("span.hljs-keyword").count()) >= 2, "keywords are marked up");
  assert.ok((await js.locator("span.hljs-comment").count()) >= 1, "comments are marked up");
  assert.equal(await md.locator(".code-block .code-lang").first().textContent(), "javascript");

  const unknown = md.locator("code.language-klingon");
  assert.equal(await unknown.textContent(), "qaStaH nuq? <b>not bold</b>\n");
  assert.equal(await unknown.locator("*").count(), 0, "an unknown language stays plain text");
  assert.equal(await unknown.getAttribute("data-highlighted"), null);

  const html = md.locator('code[data-highlighted="xml"]');
  assert.match(await html.textContent(), /<script>window.__pwned = 4<\/script>/, "markup in a code block is shown as text");

  assert.equal(await md.locator("script, img[onerror], [onerror], a[href^='javascript:']").count(), 0, "nothing executable survives");
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await md.locator(".code-block").count(), 4, "every fenced block gets the code frame");
  await screenshot(page, "render-code-blocks");

  const loadedAfter = await page.evaluate(() => performance.getEntriesByType("resource").map((r) => r.name.split("/").pop()).filter((n) => /^(core|javascript|rust|xml)-/.test(n)).map((n) => n.split("-")[0]).sort());
  assert.deepEqual(loadedAfter, ["core", "javascript", "rust", "xml"], "core and only the grammars the answer used were fetched");

  // A reload renders the finished answer from history the same way.
  await page.reload();
  await waitAnswerComplete(page);
  assert.equal(await lastAnswer(page).locator('code[data-highlighted="javascript"] span.hljs-keyword').count(), await js.locator("span.hljs-keyword").count());
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("streaming renders each completed block once: earlier blocks keep their DOM nodes while the tail grows", async () => {
  const page = await newPage(browser, app.baseUrl);
  await startChat(page, "code please");
  // Tag the first paragraph as soon as it is complete (the fence after it has started).
  await page.waitForFunction(() => {
    const md = [...document.querySelectorAll(".message.assistant .markdown")].at(-1);
    const p = md && [...md.querySelectorAll("p")].find((x) => x.textContent === "First paragraph, rendered once.");
    if (!p || !md.querySelector("pre")) return false;
    p.__renderMark = "kept";
    md.querySelector("h2").__renderMark = "kept";
    return true;
  }, null, { timeout: 60000, polling: "raf" });
  const marksWhileStreaming = await page.evaluate(() => !document.querySelector(".message.assistant .markdown").textContent.includes('println!("done")'));
  assert.ok(marksWhileStreaming, "the nodes were tagged while the answer was still streaming");
  await page.waitForFunction(() => [...document.querySelectorAll(".message.assistant .markdown")].at(-1)?.textContent.includes('println!("done")'), null, { timeout: 60000 });
  const kept = await page.evaluate(() => {
    const md = [...document.querySelectorAll(".message.assistant .markdown")].at(-1);
    const p = [...md.querySelectorAll("p")].find((x) => x.textContent === "First paragraph, rendered once.");
    return [p?.__renderMark, md.querySelector("h2")?.__renderMark, md.querySelectorAll("p").length];
  });
  assert.deepEqual(kept, ["kept", "kept", 4], "the heading and first paragraph were never re-rendered, and nothing was duplicated");
  await page.context().close();
});

test("copy button: copies the block's code, shows Copied, then returns to Copy", async () => {
  const context = await browser.newContext({ baseURL: app.baseUrl, viewport: { width: 1280, height: 800 } });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: app.baseUrl });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await startChat(page, "code please");
  await waitAnswerComplete(page);
  const block = lastAnswer(page).locator(".code-block").first();
  const button = block.locator("button.code-copy");
  assert.equal(await button.textContent(), "Copy");
  assert.equal(await button.getAttribute("aria-label"), "Copy code");
  await button.click();
  await page.waitForFunction(() => document.querySelector(".markdown button.code-copy.copied")?.textContent === "Copied");
  await screenshot(page, "render-code-copied");
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), JS + "\n", "the clipboard holds exactly the code");
  // The second block's button copies the second block.
  await lastAnswer(page).locator(".code-block").nth(1).locator("button.code-copy").click();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), "qaStaH nuq? <b>not bold</b>\n");
  await page.waitForFunction(() => [...document.querySelectorAll(".markdown button.code-copy")][0].textContent === "Copy", null, { timeout: 10000 });
  assert.deepEqual(errors, []);
  await context.close();
});

test("copy button without clipboard permission says Copy failed instead of pretending", async () => {
  const context = await browser.newContext({ baseURL: app.baseUrl });
  const page = await context.newPage();
  await page.addInitScript(() => {
    Object.defineProperty(navigator, "clipboard", { value: { writeText: () => Promise.reject(new DOMException("denied", "NotAllowedError")) } });
  });
  await startChat(page, "code please");
  await waitAnswerComplete(page);
  await lastAnswer(page).locator("button.code-copy").first().click();
  await page.waitForFunction(() => document.querySelector(".markdown button.code-copy.failed")?.textContent === "Copy failed");
  await context.close();
});
