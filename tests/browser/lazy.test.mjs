// Issue 35: what the first load leaves out loads when it is needed. The admin, settings
// (account and skills) and project pages are chunks that open from a cold load and after in-app
// navigation; Markdown's renderer (marked, DOMPurify) is a chunk fetched right after the first
// render, and a chat opened cold shows its answer as sanitised Markdown — or, while the renderer
// is held back, as plain text that nothing parses, then as sanitised Markdown once it arrives
// (web/src/markdown/view.tsx). The agent answers through tests/browser/fake-openai.mjs, so the
// Markdown, hostile markup included, is exactly what this file sends.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { apiCall, launchBrowser, newPage, screenshot, startApp, startChat, waitSettledOnServer } from "./harness.mjs";
import { fakeModelVariables, startFakeOpenAI } from "./fake-openai.mjs";
import { loadCatalogues } from "./catalogues.mjs";

const ANSWER = [
  "## Lazy heading",
  "",
  "Some **bold words** and a [link](https://example.com/docs).",
  "",
  "- first item",
  "- second item",
  "",
  'Hostile markup: <img src="x" onerror="window.__pwned = 1"> <script>window.__pwned = 2</script> [click](javascript:window.__pwned=3)',
  "",
].join("\n");

/** The chunks of pages most visits never open (esbuild names a chunk after its entry file). */
const PAGE_CHUNKS = ["page", "pages", "skills", "login", "settings-tab", "providers-tab", "mcp-tab"];

let fake;
let app;
let browser;
let cat;
let chatId;
let projectId;
before(async () => {
  fake = await startFakeOpenAI(() => ({ chunks: [ANSWER], delayMs: 5 }));
  app = await startApp(fakeModelVariables(fake));
  browser = await launchBrowser();
  cat = await loadCatalogues();
  const made = await apiCall(app.baseUrl, "POST", "/api/projects", { name: "Lazy project" });
  assert.equal(made.status, 201, made.text);
  projectId = made.json.project.id;
  const page = await newPage(browser, app.baseUrl);
  chatId = await startChat(page, "markdown with hostile markup, please");
  await waitSettledOnServer(app.baseUrl, chatId, 60000);
  await page.context().close();
});
after(async () => {
  await browser?.close();
  await app?.stop();
  await fake?.close();
});

/** The app's scripts this page has fetched, by chunk name (`page-AB12CD.js` → `page`). */
const scriptsFetched = (page) =>
  page.evaluate(() =>
    performance
      .getEntriesByType("resource")
      .map((r) => new URL(r.name).pathname)
      .filter((p) => /^\/assets\/.+\.js$/.test(p))
      .map((p) => p.slice("/assets/".length).replace(/-[A-Z0-9]+\.js$/, "")),
  );

/**
 * Before any script of the page runs: records every element the page ever inserts that would be
 * unsafe (a script in the app, an `on*` handler, a `javascript:` URL), and what an assistant
 * answer looked like the first time its words were on screen (`markdown`: rendered; `plain`: its
 * source as text).
 */
async function watchInsertions(page) {
  await page.addInitScript(() => {
    window.__unsafe = [];
    window.__firstAnswer = null;
    const check = (el) => {
      if (!(el instanceof Element)) return;
      for (const e of [el, ...el.querySelectorAll("*")]) {
        if (e.tagName === "SCRIPT" && e.closest("#app")) window.__unsafe.push(e.outerHTML);
        for (const a of e.attributes) {
          if (/^on/i.test(a.name) || /^\s*javascript:/i.test(a.value)) window.__unsafe.push(`${e.tagName} ${a.name}=${a.value}`);
        }
      }
    };
    new MutationObserver((records) => {
      for (const r of records) r.addedNodes.forEach(check);
      if (window.__firstAnswer) return;
      const md = document.querySelector(".message.assistant .markdown");
      if (md?.textContent.includes("bold words")) window.__firstAnswer = md.querySelector("strong") ? "markdown" : "plain";
    }).observe(document, { childList: true, subtree: true, characterData: true });
  });
}

/** The answer is Markdown, sanitised: structure kept, links safe, hostile markup gone. */
async function assertSanitisedMarkdown(page) {
  const md = page.locator(".message.assistant .markdown").last();
  await md.locator("strong").waitFor({ timeout: 30000 });
  assert.equal(await md.getAttribute("class"), "markdown", "the plain-text fallback is gone");
  assert.equal((await md.locator("h2").textContent()).trim(), "Lazy heading");
  assert.equal((await md.locator("strong").textContent()).trim(), "bold words");
  assert.equal(await md.locator("li").count(), 2);
  const link = md.locator('a[href="https://example.com/docs"]');
  assert.equal(await link.getAttribute("target"), "_blank");
  assert.equal(await link.getAttribute("rel"), "noopener noreferrer");
  assert.equal(await md.locator("script, [onerror], a[href^='javascript:']").count(), 0, "hostile markup sanitised");
  assert.match(await md.textContent(), /Hostile markup:/);
  assert.deepEqual(await page.evaluate(() => window.__unsafe), [], "nothing unsafe was ever inserted");
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
}

test("the first load fetches no page chunk, and Markdown's renderer right after the first render", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  await page.waitForSelector(".auth-slot .viewer-name");
  await page.waitForFunction(() => performance.getEntriesByType("resource").some((r) => /\/assets\/markdown-[A-Z0-9]+\.js$/.test(r.name)), null, { timeout: 30000 });
  const fetched = await scriptsFetched(page);
  assert.deepEqual(fetched.filter((n) => PAGE_CHUNKS.includes(n)), [], `no page chunk on the home page: ${fetched.join(", ")}`);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

const PAGES = () => [
  { path: "/admin", ready: ".tabs [role=tab].active", chunks: ["page", "settings-tab"] },
  { path: "/settings", ready: "#skills-heading", chunks: ["pages", "skills"] },
  { path: `/project/${projectId}`, ready: `.project-page[data-project-id="${projectId}"]`, chunks: ["page"] },
];

test("each lazy page opens from a cold load (admin, settings with account and skills, project)", async () => {
  for (const { path, ready, chunks } of PAGES()) {
    const page = await newPage(browser, app.baseUrl);
    await page.goto(path);
    await page.waitForSelector(ready, { timeout: 30000 });
    const fetched = await scriptsFetched(page);
    for (const c of chunks) assert.ok(fetched.includes(c), `${path} fetched its chunk ${c}: ${fetched.join(", ")}`);
    assert.equal(await page.locator(".page .form-error:not(:empty)").count(), 0, `${path}: no load error`);
    await screenshot(page, `lazy-cold${path.replace(/\W+/g, "-")}`);
    assert.deepEqual(page.problems, [], path);
    await page.context().close();
  }
  const settings = await newPage(browser, app.baseUrl);
  await settings.goto("/settings");
  await settings.locator("#skills-heading", { hasText: cat.en.skills.title }).waitFor();
  await settings.context().close();
});

test("the lazy pages open after in-app navigation from a chat, and back to the chat", async () => {
  const page = await newPage(browser, app.baseUrl);
  await watchInsertions(page);
  await page.goto(`/chat/${chatId}`);
  await assertSanitisedMarkdown(page);
  // Set on this document: still there after the clicks proves no page was reloaded.
  await page.evaluate(() => (window.__sameDocument = true));
  const before = await scriptsFetched(page);
  assert.deepEqual(before.filter((n) => PAGE_CHUNKS.includes(n)), [], `a chat fetches no page chunk: ${before.join(", ")}`);

  await page.click('.sidebar-footer a[href="/settings"]');
  await page.waitForURL(/\/settings$/);
  await page.locator("#skills-heading", { hasText: cat.en.skills.title }).waitFor({ timeout: 30000 });
  await page.click('.sidebar-footer a[href="/admin"]');
  await page.waitForURL(/\/admin$/);
  await page.waitForSelector(".tabs [role=tab].active", { timeout: 30000 });
  await page.click(`.project-row a[href="/project/${projectId}"]`);
  await page.waitForSelector(`.project-page[data-project-id="${projectId}"]`, { timeout: 30000 });
  const fetched = await scriptsFetched(page);
  for (const c of ["pages", "skills", "page", "settings-tab"]) assert.ok(fetched.includes(c), `navigation fetched ${c}: ${fetched.join(", ")}`);

  await page.click(`.chat-row[data-chat-id="${chatId}"] a`);
  await page.waitForURL(`**/chat/${chatId}`);
  await assertSanitisedMarkdown(page);
  assert.equal(await page.evaluate(() => window.__sameDocument), true, "no reload on the way");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("a chat opened cold shows its answer as sanitised Markdown", async () => {
  const page = await newPage(browser, app.baseUrl);
  await watchInsertions(page);
  await page.goto(`/chat/${chatId}`);
  await assertSanitisedMarkdown(page);
  await screenshot(page, "lazy-cold-chat-markdown");
  // The renderer is asked for before the app asks who is signed in, and the chat only after
  // that answer; the first answer on screen is then Markdown (view.tsx). Recorded, and printed,
  // rather than required: on a loaded machine the plain-text fallback is allowed to win.
  const first = await page.evaluate(() => window.__firstAnswer);
  assert.ok(first === "markdown" || first === "plain", `the answer was seen: ${first}`);
  console.log(`# first paint of the answer on a cold load: ${first}`);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});

test("while the renderer is held back the answer is plain text, then sanitised Markdown", async () => {
  const page = await newPage(browser, app.baseUrl);
  await watchInsertions(page);
  let release;
  const released = new Promise((r) => (release = r));
  // Both Markdown chunks (ours and highlight.js's grammar, unused here) by name.
  await page.route(/\/assets\/markdown-[A-Z0-9]+\.js$/, async (route) => {
    await released;
    await route.continue();
  });
  await page.goto(`/chat/${chatId}`);
  const plain = page.locator(".message.assistant .markdown.markdown-plain");
  await plain.waitFor({ timeout: 30000 });
  const text = await plain.textContent();
  assert.match(text, /\*\*bold words\*\*/, "the source, as text");
  assert.match(text, /<script>window.__pwned = 2<\/script>/, "markup shown as text, not parsed");
  assert.equal(await plain.evaluate((el) => el.childElementCount), 0, "no element inside: nothing was parsed");
  assert.equal(await plain.evaluate((el) => getComputedStyle(el).whiteSpace), "pre-wrap", "its line breaks kept");
  await screenshot(page, "lazy-held-renderer-plain");
  release();
  await assertSanitisedMarkdown(page);
  assert.equal(await page.evaluate(() => window.__firstAnswer), "plain");
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
