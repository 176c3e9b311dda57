// Issue 22 in the browser (docs/runtime.md, "Model providers"): the admin page's Providers tab,
// in English and then in Simplified Chinese (Chromium's `locale`), against the app in accounts
// mode with `secrets_key` set and a local OpenAI-compatible server allowed past the outbound
// guard. The deployment's own model is listed read-only; an admin adds a provider (the key
// field is write-only: never shown again, never in the page); "Test connection" shows the
// provider's answer and adds a model it lists; a model's switch turns it off for the agent; a
// wrong key's test shows the provider's own error text; the provider is removed after a
// confirmation, and the audit log names each action. Every string read is the language's own, from the tab's catalogue.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import { apiCall, launchBrowser, newPage, screenshot, startApp } from "./harness.mjs";
import { fill } from "./catalogues.mjs";

const SETUP_TOKEN = "browser-setup-token-0123456789abcdef";
const API_KEY = "sk-browser-SECRET-5b7e2c";
const WRONG_KEY = "Incorrect API key provided: sk-wrong.";
const PASSES = [
  { locale: "en-US", lang: "en", admin: "admin@example.com" },
  { locale: "zh-CN", lang: "zh-CN", admin: "guanliyuan@example.com" },
];

/** The tab's catalogue, compiled with the web build's esbuild (the strings the app ships). */
async function providerStrings() {
  const webDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "web");
  const { build } = await import(join(webDir, "node_modules", "esbuild", "lib", "main.js"));
  const out = await build({ entryPoints: [join(webDir, "src", "i18n", "admin-providers.ts")], bundle: true, write: false, format: "esm", platform: "neutral", logLevel: "warning" });
  const mod = await import(`data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString("base64")}`);
  return mod.adminProvidersCatalogues;
}

/** An OpenAI-compatible server: GET /v1/models lists two models for the right key, and answers
 * OpenAI's 401 error body to any other. */
async function startProvider() {
  const server = createServer((req, res) => {
    const ok = req.headers.authorization === `Bearer ${API_KEY}`;
    res.setHeader("content-type", "application/json");
    if (!ok) {
      res.writeHead(401);
      return res.end(JSON.stringify({ error: { message: WRONG_KEY, type: "invalid_request_error", code: "invalid_api_key" } }));
    }
    if (req.method === "GET" && req.url === "/v1/models") {
      return res.end(JSON.stringify({ object: "list", data: [{ id: "fake-1", object: "model" }, { id: "fake-2", object: "model" }] }));
    }
    res.writeHead(404);
    res.end(JSON.stringify({ error: { message: "no such route" } }));
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  return { server, host: `127.0.0.1:${port}`, base: `http://127.0.0.1:${port}/v1` };
}

let browser;
let strings;
let provider;
before(async () => {
  strings = await providerStrings();
  browser = await launchBrowser();
  provider = await startProvider();
});
after(async () => {
  await browser?.close();
  provider?.server.close();
});

for (const pass of PASSES) {
  describe(`the Providers tab in ${pass.lang}`, () => {
    let app;
    let page;
    let s;
    before(async () => {
      s = strings[pass.lang];
      app = await startApp({ auth_mode: "accounts", session_secret: "s".repeat(48), admin_setup_token: SETUP_TOKEN, secrets_key: "ab".repeat(32), outbound_allowed_hosts: provider.host });
      page = await newPage(browser, app.baseUrl, { locale: pass.locale });
      await page.goto("/");
      const status = await page.evaluate(async (body) => {
        const r = await fetch("/api/auth/signup", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        return r.status;
      }, { email: pass.admin, password: "admin password 0123", setupToken: SETUP_TOKEN });
      assert.equal(status, 201);
    });
    after(async () => {
      await page?.context().close();
      await app?.stop();
    });

    /** The providers as the server keeps them, read with the page's own session. */
    const listed = () => page.evaluate(async () => (await fetch("/api/admin/providers")).json());

    test("the deployment's models are listed read-only and a provider is added with a write-only key", async () => {
      await page.goto("/admin?tab=providers");
      await page.getByRole("tab", { name: s.tab }).waitFor();
      assert.equal(await page.getByRole("tab", { name: s.tab }).getAttribute("aria-selected"), "true");
      await page.getByRole("heading", { name: s.bootstrapTitle }).waitFor();
      assert.equal(await page.locator('.bootstrap-models li[data-model="demo/eve-demo"]').count(), 1);
      await page.locator(".providers-none", { hasText: s.none }).waitFor();

      await page.getByRole("button", { name: s.add }).click();
      await page.getByRole("heading", { name: s.form.titleNew }).waitFor();
      await page.getByLabel(s.form.name, { exact: true }).fill("fake");
      await page.getByLabel(s.form.baseUrl, { exact: true }).fill(provider.base);
      await page.getByLabel(s.form.apiKey, { exact: true }).fill(API_KEY);
      await page.getByLabel(s.form.models, { exact: true }).fill("fake-1");
      await page.getByRole("button", { name: s.form.save }).click();
      const card = page.locator('.provider-card[data-provider="fake"]');
      await card.waitFor();
      await card.locator(".provider-key", { hasText: s.keyStored }).waitFor();
      assert.equal(await page.locator("#provider-key").count(), 0, "the form closed");
      assert.ok(!(await page.content()).includes(API_KEY), "the key is nowhere in the page");
      const list = await listed();
      assert.equal(list.providers[0].hasKey, true);
      assert.ok(!JSON.stringify(list).includes(API_KEY));
      await screenshot(page, `admin-providers-added-${pass.lang}`);
    });

    test("Test connection shows the provider's answer and adds a model it lists; a switch turns a model off", async () => {
      const card = page.locator('.provider-card[data-provider="fake"]');
      await card.getByRole("button", { name: fill(s.testLabel, { name: "fake" }) }).click();
      const result = card.locator(".provider-test-result.ok");
      await result.waitFor();
      assert.match(await result.textContent(), new RegExp(s.testOk.replace(/[.]/g, "\\.")));
      await card.getByRole("button", { name: fill(s.addModel, { model: "fake-2" }) }).click();
      await card.locator('input[data-model="fake-2"]').waitFor();
      await card.getByLabel(fill(s.enabledLabel, { model: "fake-1" }), { exact: true }).uncheck();
      await page.waitForFunction(async () => {
        const r = await (await fetch("/api/admin/providers")).json();
        return r.providers[0].models.find((m) => m.model === "fake-1")?.enabled === false;
      });
      const models = (await listed()).providers[0].models.map((m) => [m.model, m.enabled]);
      assert.deepEqual(models, [["fake-1", false], ["fake-2", true]]);
      const info = await page.evaluate(async () => (await fetch("/eve/v1/info")).json());
      assert.deepEqual(info.agent.model.providerOptions.models.map((m) => m.id), ["demo/eve-demo", "fake/fake-2"]);
    });

    test("a wrong key's test shows the provider's error text", async () => {
      const card = page.locator('.provider-card[data-provider="fake"]');
      await card.getByRole("button", { name: fill(s.editLabel, { name: "fake" }) }).click();
      await page.getByRole("heading", { name: fill(s.form.titleEdit, { name: "fake" }) }).waitFor();
      assert.equal(await page.getByLabel(s.form.apiKey, { exact: true }).inputValue(), "", "a stored key is never shown");
      assert.equal(await page.getByLabel(s.form.apiKey, { exact: true }).getAttribute("placeholder"), s.form.apiKeyKeep);
      await page.getByLabel(s.form.apiKey, { exact: true }).fill("sk-wrong");
      await page.getByRole("button", { name: s.form.save }).click();
      await page.locator("#provider-key").waitFor({ state: "detached" });
      await card.getByRole("button", { name: fill(s.testLabel, { name: "fake" }) }).click();
      const failed = card.locator(".provider-test-result.failed");
      await failed.waitFor();
      assert.ok((await failed.textContent()).includes(WRONG_KEY));
      assert.ok((await failed.textContent()).includes(s.testFailed));
      await screenshot(page, `admin-providers-test-failed-${pass.lang}`);
    });

    test("a provider is removed after a confirmation", async () => {
      const card = page.locator('.provider-card[data-provider="fake"]');
      await card.getByRole("button", { name: fill(s.removeLabel, { name: "fake" }) }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByText(s.removeBody).waitFor();
      await dialog.getByRole("button", { name: s.remove }).click();
      await card.waitFor({ state: "detached" });
      await page.locator(".providers-none", { hasText: s.none }).waitFor();
      assert.deepEqual((await listed()).providers, []);
      await page.goto("/admin?tab=audit");
      for (const action of ["provider_created", "provider_updated", "provider_tested", "provider_deleted"]) {
        await page.locator(`tr[data-action="${action}"]`, { hasText: s.auditActions[action] }).first().waitFor();
      }
      assert.ok(!(await page.content()).includes(API_KEY), "the audit log names no key");
      const r = await apiCall(app.baseUrl, "GET", "/api/admin/providers");
      assert.equal(r.status, 401, "signed out: no access");
      assert.deepEqual(page.problems, []);
    });
  });
}
