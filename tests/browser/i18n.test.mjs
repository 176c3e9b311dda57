// Issue 13 item 9: the UI in English and Simplified Chinese. For each language (Chromium's
// `locale`, which sets navigator.languages and Accept-Language) the main checklist — sign-in
// page, prerendered shell, empty state, a sent message and its answer, the sidebar row menu, the
// shortcut sheet — shows the strings of that language's catalogue, and in the zh-CN pass no
// English is left in the app's own text. Switching in the top bar's language menu changes the
// language at once and survives a reload.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { holdAppScript, launchBrowser, newPage, screenshot, squash, startApp } from "./harness.mjs";
import { fill, loadCatalogues } from "./catalogues.mjs";

const PASSWORD = "correct horse battery staple 42";
const PASSES = [
  { locale: "en-US", lang: "en", message: "Say hello in two words" },
  { locale: "zh-CN", lang: "zh-CN", message: "用两个词打个招呼" },
];

let browser;
let cat;
let app;
let passwordApp;
before(async () => {
  cat = await loadCatalogues();
  browser = await launchBrowser();
  app = await startApp();
  passwordApp = await startApp({ auth_mode: "password", chat_password: PASSWORD, session_secret: "s".repeat(48) });
});
after(async () => {
  await browser?.close();
  await app?.stop();
  await passwordApp?.stop();
});

const idle = (page, timeout = 60000) => page.waitForFunction(() => !document.querySelector(".composer button.stop"), null, { timeout });

/**
 * ASCII words in the app's own visible text and in the labels of visible elements (placeholder,
 * aria-label, title), outside what users, servers and models wrote (messages, chat titles, the
 * model list) and outside names written the same in Chinese.
 */
async function englishLeft(page) {
  const ALLOWED = ["eve", "chat", "Spin", "Markdown", "JSON", "Ctrl", "Shift", "Esc", "Enter", "token", "English", "KB", "MB"];
  return page.evaluate((allowed) => {
    const skip = ".message, .chat-row a, .model-menu, .topbar-title";
    const words = [];
    const take = (s, where) => {
      for (const w of s.match(/[A-Za-z]{2,}/g) ?? []) if (!allowed.includes(w)) words.push(`${w} (${where})`);
    };
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.nodeType === Node.TEXT_NODE ? n.parentElement : n;
      if (!el || el.closest(skip) || el.closest("noscript, script, style")) continue;
      if (!el.checkVisibility()) continue;
      if (n.nodeType === Node.TEXT_NODE) take(n.nodeValue, el.className || el.tagName);
      else for (const a of ["placeholder", "aria-label", "title"]) if (el.hasAttribute(a) && !el.matches(".usage-line")) take(el.getAttribute(a), `${el.tagName}[${a}]`);
    }
    take(document.title, "title");
    return words;
  }, ALLOWED);
}

async function assertLanguage(page, pass) {
  assert.equal(await page.evaluate(() => document.documentElement.lang), pass.lang);
  if (pass.lang === "zh-CN") assert.deepEqual(await englishLeft(page), [], "no English left in the zh-CN UI");
}

for (const pass of PASSES) {
  describe(`the checklist in ${pass.lang}`, () => {
    const m = () => cat[pass.lang];

    test(`${pass.lang}: the sign-in page and the login modal`, async () => {
      const page = await newPage(browser, passwordApp.baseUrl, { locale: pass.locale });
      await page.goto("/");
      await page.getByRole("button", { name: m().auth.signIn, exact: true }).waitFor();
      assert.equal(await page.locator(".sidebar").getByText(m().sidebar.signInToSee).count(), 1);
      await assertLanguage(page, pass);
      await page.getByRole("button", { name: m().auth.signIn, exact: true }).click();
      const modal = page.locator("dialog.login-modal[open]");
      await modal.waitFor();
      assert.equal(await modal.locator("h2").textContent(), m().auth.signIn);
      assert.equal(await modal.locator("label").textContent(), m().auth.password);
      await assertLanguage(page, pass);
      await screenshot(page, `i18n-${pass.lang}-login`);
      await page.fill("#login-password", "wrong password");
      await page.click("dialog button[type=submit]");
      await page.waitForSelector(".form-error:not(:empty)");
      assert.equal(await page.textContent(".form-error"), m().auth.wrongPassword);
      await assertLanguage(page, pass);
      assert.deepEqual(page.problems, []);
      await page.context().close();
    });

    test(`${pass.lang}: the prerendered shell is in the language before the app runs`, async () => {
      const page = await newPage(browser, app.baseUrl, { locale: pass.locale });
      const release = await holdAppScript(page);
      await page.goto("/", { waitUntil: "commit" });
      await page.waitForSelector(".composer-box");
      assert.equal(await page.textContent(".hero-title"), m().shell.heroTitle);
      assert.equal(await page.getAttribute("#composer-input", "placeholder"), m().shell.placeholderHome);
      assert.equal(await page.getAttribute("#chat-search", "placeholder"), m().shell.searchChats);
      assert.equal(squash(await page.textContent("a.new-chat")), `+ ${m().shell.newChat}`);
      assert.equal(await page.title(), m().shell.documentTitle);
      await assertLanguage(page, pass);
      await screenshot(page, `i18n-${pass.lang}-shell-before-script`);
      release();
      await page.waitForSelector(".auth-slot .viewer-name");
      assert.equal(await page.textContent(".hero-title"), m().shell.heroTitle);
      assert.deepEqual(page.problems, []);
      await page.context().close();
    });

    test(`${pass.lang}: empty state, a sent message and its answer, the row menu, the shortcut sheet`, async () => {
      const page = await newPage(browser, app.baseUrl, { locale: pass.locale });
      await page.goto("/");
      assert.equal(await page.textContent(".auth-slot .viewer-name", { timeout: 15000 }), m().auth.localDeveloper);
      await page.waitForSelector(".history-empty, .chat-row");
      await assertLanguage(page, pass);
      await screenshot(page, `i18n-${pass.lang}-home`);

      await page.fill("#composer-input", pass.message);
      await page.keyboard.press("Enter");
      await page.waitForURL(/\/chat\/[A-Za-z0-9_-]+$/);
      await page.waitForFunction(() => document.querySelector(".message.assistant .markdown")?.textContent.trim(), null, { timeout: 60000 });
      await idle(page);
      const usage = page.locator(".usage-line .usage-turn").last();
      await usage.waitFor();
      const tokens = pass.lang === "en" ? /^[\d,]+ tokens?$/ : /^[\d,]+ 个 token$/;
      assert.match(await usage.textContent(), tokens);
      assert.equal(await page.getAttribute("#composer-input", "placeholder"), m().pages.placeholderChat);
      assert.equal(await page.locator(".copy-answer").last().textContent(), m().actions.copy);
      assert.equal(await page.locator(".regenerate-answer").textContent(), m().actions.regenerate);
      await assertLanguage(page, pass);
      await screenshot(page, `i18n-${pass.lang}-answer`);

      const row = page.locator(".chat-row").first();
      await row.hover();
      const title = squash(await row.locator("a").textContent());
      await page.getByRole("button", { name: fill(m().sidebar.more, { title }) }).click();
      const menu = page.getByRole("menu", { name: fill(m().sidebar.more, { title }) });
      await menu.waitFor();
      assert.deepEqual((await menu.getByRole("menuitem").allTextContents()).map(squash), [m().sidebar.pin, m().sidebar.exportMd, m().sidebar.exportJson]);
      await assertLanguage(page, pass);
      await screenshot(page, `i18n-${pass.lang}-row-menu`);
      await page.keyboard.press("Escape");
      await menu.waitFor({ state: "detached" });

      await page.locator("body").click({ position: { x: 900, y: 120 } });
      await page.keyboard.press("?");
      const sheet = page.locator("dialog.shortcut-sheet[open]");
      await sheet.waitFor();
      assert.equal(await sheet.locator("h2").textContent(), m().shortcuts.title);
      const text = squash(await sheet.textContent());
      for (const k of ["stop", "newChat", "search", "editLast", "help", "emptyComposer", "close"]) assert.ok(text.includes(m().shortcuts[k]), `${k} in: ${text}`);
      await assertLanguage(page, pass);
      await screenshot(page, `i18n-${pass.lang}-shortcuts`);
      await page.keyboard.press("Escape");
      await sheet.waitFor({ state: "detached" });
      assert.deepEqual(page.problems, []);
      await page.context().close();
    });
  });
}

test("the language menu switches the language at once, and the choice survives a reload", async () => {
  const page = await newPage(browser, app.baseUrl, { locale: "en-US" });
  await page.goto("/");
  await page.waitForSelector(".auth-slot .viewer-name");
  assert.equal(await page.textContent(".hero-title"), cat.en.shell.heroTitle);
  const menu = page.getByRole("combobox", { name: cat.en.shell.language });
  assert.deepEqual((await menu.locator("option").allTextContents()).map(squash), ["English", "简体中文"]);
  await menu.selectOption("zh-CN");
  await page.waitForFunction((t) => document.querySelector(".hero-title")?.textContent === t, cat["zh-CN"].shell.heroTitle);
  assert.equal(await page.textContent(".auth-slot .viewer-name"), cat["zh-CN"].auth.localDeveloper);
  await assertLanguage(page, { lang: "zh-CN" });
  assert.equal(await page.title(), cat["zh-CN"].shell.documentTitle);
  await screenshot(page, "i18n-switched-zh-CN");

  // Reloaded, the stored choice beats the browser's English, from the prerendered shell on.
  const release = await holdAppScript(page);
  await page.reload({ waitUntil: "commit" });
  await page.waitForSelector(".composer-box");
  assert.equal(await page.textContent(".hero-title"), cat["zh-CN"].shell.heroTitle);
  release();
  await page.waitForSelector(".auth-slot .viewer-name");
  assert.equal(await page.getByRole("combobox", { name: cat["zh-CN"].shell.language }).inputValue(), "zh-CN");
  await assertLanguage(page, { lang: "zh-CN" });

  // And back: English again, remembered as well.
  await page.unroute(/\/assets\/app-[^/]+\.js$/);
  await page.getByRole("combobox", { name: cat["zh-CN"].shell.language }).selectOption("en");
  await page.waitForFunction((t) => document.querySelector(".hero-title")?.textContent === t, cat.en.shell.heroTitle);
  assert.equal(await page.evaluate(() => document.documentElement.lang), "en");
  await page.reload();
  await page.waitForSelector(".auth-slot .viewer-name");
  assert.equal(await page.textContent(".hero-title"), cat.en.shell.heroTitle);
  assert.deepEqual(page.problems, []);
  await page.context().close();
});
