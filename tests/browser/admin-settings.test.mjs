// Issue 22's settings in the browser (docs/runtime.md "Settings"). In each language (English,
// then Simplified Chinese, Chromium's `locale`), in accounts mode: the admin opens the admin
// page's Settings tab, sees what applies where nothing is set (the deployment's variables),
// changes how tool calls are shown and the default daily tokens, saves (the server keeps them),
// returns one to its default; a bad value is refused inline and nothing changes; the chat then
// shows a tool call in full, and collapsed again once the setting is reset. A member sees no
// admin link, "not allowed" on /admin, and 403 from the API. In local-dev the one local
// developer is an admin: the sidebar links the admin page, whose tabs are the ones without
// accounts.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { apiCall, launchBrowser, newPage, screenshot, startApp, startChat } from "./harness.mjs";
import { fill, loadCatalogues } from "./catalogues.mjs";

const SETUP_TOKEN = "browser-setup-token-0123456789abcdef";
const PASSWORD = "admin password 0123";
const ACCOUNTS = { auth_mode: "accounts", session_secret: "s".repeat(48), admin_setup_token: SETUP_TOKEN, signup_allowed_domains: "open.example", quota_tokens_per_day: "500000", demo_pacing_ms: "1" };
const PASSES = [
  { locale: "en-US", lang: "en" },
  { locale: "zh-CN", lang: "zh-CN" },
];

let browser;
let cat;
before(async () => {
  cat = await loadCatalogues();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

/** A page signed in as a new account (`body`: the sign-up's), through the page's own cookie
 * jar; the page and its `cookie` header for Node-side calls. */
async function signedUpPage(app, locale, body) {
  const page = await newPage(browser, app.baseUrl, { locale });
  const res = await page.context().request.post(`${app.baseUrl}/api/auth/signup`, { data: body, headers: { origin: app.baseUrl } });
  assert.equal(res.status(), 201, await res.text());
  const cookie = (await page.context().cookies()).map((k) => `${k.name}=${k.value}`).join("; ");
  assert.ok(cookie, "signed in");
  return { page, cookie };
}

async function toast(page, text) {
  await page.locator(".toast", { hasText: text }).first().waitFor();
}

for (const pass of PASSES) {
  describe(`admin settings in ${pass.lang}`, () => {
    let app;
    let c;
    let s;
    let adminCookie;
    let page;
    before(async () => {
      c = cat[pass.lang];
      s = c.adminSettings;
      app = await startApp(ACCOUNTS);
      ({ page, cookie: adminCookie } = await signedUpPage(app, pass.locale, { email: "boss@example.com", password: PASSWORD, setupToken: SETUP_TOKEN }));
    });
    after(async () => {
      await page?.context().close();
      await app?.stop();
    });

    test("the admin sees the defaults, saves settings, returns one to its default; a bad value changes nothing", async () => {
      await page.goto("/");
      await page.click(`.sidebar-footer a:has-text("${c.account.adminLink}")`);
      await page.waitForURL(/\/admin$/);
      await page.click("#tab-settings");
      assert.equal(await page.locator("#tab-settings").textContent(), s.tab);
      await page.waitForURL(/\/admin\?tab=settings$/);
      const domains = page.locator('[data-setting="signupDomains"]');
      await domains.waitFor();
      for (const [key, label] of Object.entries(s.labels)) assert.equal(await page.locator(`[data-setting="${key}"] label`).textContent(), label);
      assert.equal(await page.inputValue("#setting-signupDomains"), "open.example", "the variable applies");
      assert.match(await domains.locator(".setting-state").textContent(), new RegExp(s.isDefault.replace(/[()（）]/g, ".")));
      assert.match(await page.locator('[data-setting="defaultTokensPerDay"] .setting-state').textContent(), /500/);
      assert.ok((await page.inputValue("#setting-instructions")).startsWith("You are eve"), "the built-in instructions");
      await screenshot(page, `admin-settings-${pass.lang}-defaults`);

      // A bad value: refused by the server inline, nothing stored.
      await page.fill("#setting-signupDomains", "not a domain!");
      await page.click(".settings-save");
      await page.locator(".admin-settings .form-error", { hasText: "signupDomains" }).waitFor();
      assert.deepEqual((await apiCall(app.baseUrl, "GET", "/api/admin/settings", undefined, adminCookie)).json.settings.signupDomains, null);
      // One the form can tell: refused before anything is sent.
      await page.fill("#setting-signupDomains", "open.example");
      await page.fill("#setting-defaultTokensPerDay", "lots");
      await page.click(".settings-save");
      await page.locator(".admin-settings .form-error", { hasText: s.badTokens }).waitFor();

      await page.fill("#setting-defaultTokensPerDay", "250000");
      await page.selectOption("#setting-toolDisplay", "full");
      await page.click(".settings-save");
      await toast(page, s.saved);
      await page.locator('[data-setting="toolDisplay"][data-set="true"]').waitFor();
      const stored = (await apiCall(app.baseUrl, "GET", "/api/admin/settings", undefined, adminCookie)).json.settings;
      assert.equal(stored.toolDisplay, "full");
      assert.equal(stored.defaultTokensPerDay, 250000);
      assert.equal(stored.signupDomains, null, "unchanged fields are not sent");
      await screenshot(page, `admin-settings-${pass.lang}-saved`);

      await page.click('[data-setting="defaultTokensPerDay"] .setting-reset');
      await toast(page, fill(s.resetDone, { name: s.labels.defaultTokensPerDay }));
      await page.locator('[data-setting="defaultTokensPerDay"][data-set="false"]').waitFor();
      assert.equal(await page.inputValue("#setting-defaultTokensPerDay"), "500000");
      assert.deepEqual(page.problems, []);
    });

    test("the chat shows tool calls as the setting says", async () => {
      const id = await startChat(page, "weather in Paris");
      // Settled: the tool call and the answer are in the chat's log.
      for (let i = 0; ; i++) {
        const chat = (await apiCall(app.baseUrl, "GET", `/api/chats/${id}`, undefined, adminCookie)).json;
        if (chat?.events?.some((e) => e.type === "session.waiting" || e.type === "session.completed")) break;
        assert.ok(i < 150, `not settled: ${JSON.stringify(chat?.events?.slice(-2))}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      await page.reload();
      await page.locator(".tool-group .tool-details").waitFor();
      assert.equal(await page.getAttribute(".tool-summary", "aria-expanded"), "true", "full: open from the start");
      const reset = await apiCall(app.baseUrl, "PATCH", "/api/admin/settings", { toolDisplay: null }, adminCookie);
      assert.equal(reset.status, 200, reset.text);
      await page.reload();
      await page.locator(".tool-group .tool-summary").waitFor();
      assert.equal(await page.getAttribute(".tool-summary", "aria-expanded"), "false", "collapsed by default");
      assert.equal(await page.locator(".tool-details").count(), 0);
    });

    test("a member sees no admin link, is not allowed on /admin, and the API answers 403", async () => {
      const { page, cookie } = await signedUpPage(app, pass.locale, { email: `m.${pass.lang}@open.example`, password: PASSWORD });
      await page.goto("/");
      await page.locator(`.sidebar-footer a:has-text("${c.account.settingsTitle}")`).waitFor();
      assert.equal(await page.locator(`.sidebar-footer a:has-text("${c.account.adminLink}")`).count(), 0);
      await page.goto("/admin?tab=settings");
      await page.locator(".admin-not-allowed", { hasText: c.admin.notAllowed }).waitFor();
      assert.equal(await page.locator("#tab-settings").count(), 0);
      for (const [method, body] of [["GET"], ["PATCH", { toolDisplay: "full" }]]) {
        const r = await apiCall(app.baseUrl, method, "/api/admin/settings", body, cookie);
        assert.equal(r.status, 403, `${method}: ${r.text}`);
        assert.equal(r.json.error.code, "forbidden");
      }
      await page.context().close();
    });
  });
}

describe("local-dev: the local developer is an admin", () => {
  let app;
  before(async () => {
    app = await startApp({});
  });
  after(async () => {
    await app?.stop();
  });

  for (const pass of PASSES) {
    test(`the admin page without accounts in ${pass.lang}`, async () => {
      const c = cat[pass.lang];
      const page = await newPage(browser, app.baseUrl, { locale: pass.locale });
      await page.goto("/");
      await page.click(`.sidebar-footer a:has-text("${c.account.adminLink}")`);
      await page.waitForURL(/\/admin$/);
      await page.locator("#tab-settings").waitFor();
      const tabs = await page.locator('[role="tab"]').evaluateAll((els) => els.map((e) => e.id));
      assert.deepEqual(tabs, ["tab-settings", "tab-providers", "tab-mcp", "tab-usage", "tab-audit"]);
      await page.locator('[data-setting="toolDisplay"]').waitFor();
      await page.check("#setting-logModelRequests");
      await page.click(".settings-save");
      await toast(page, c.adminSettings.saved);
      assert.equal((await apiCall(app.baseUrl, "GET", "/api/admin/settings")).json.settings.logModelRequests, true);
      await page.click('[data-setting="logModelRequests"] .setting-reset');
      await page.locator('[data-setting="logModelRequests"][data-set="false"]').waitFor();
      await screenshot(page, `admin-settings-${pass.lang}-local-dev`);
      assert.deepEqual(page.problems, []);
      await page.context().close();
    });
  }
});
