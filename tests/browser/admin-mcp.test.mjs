// The admin page's MCP servers tab in the browser (issue 22, docs/runtime.md "MCP servers"),
// in English and again in Simplified Chinese (Chromium's `locale`): the app in accounts mode
// with a bootstrap server in mcp_connections (shown read-only), loopback allowed by
// outbound_allowed_hosts and a sealing key. The admin adds a server at a link-local address
// and reads the guard's refusal beside the form (nothing stored), adds the MCP reference server
// (tests/mcp-servers), refreshes its tools and sees their annotations, switches it off, edits
// it, removes it with a confirmation, and finds each action in the audit log.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import { apiCall, launchBrowser, newPage, screenshot, startApp } from "./harness.mjs";
import { fill, loadCatalogues, loadChunkCatalogues } from "./catalogues.mjs";

const serversDir = join(dirname(fileURLToPath(import.meta.url)), "..", "mcp-servers");
const SETUP_TOKEN = "browser-setup-token-0123456789abcdef";
const PASSWORD = "admin password 0123";
const KEY = "7f3c2a9d1e0b4c5f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b";
const PASSES = [
  { locale: "en-US", lang: "en", admin: "admin@example.com" },
  { locale: "zh-CN", lang: "zh-CN", admin: "guanliyuan@example.com" },
];

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** The MCP reference server in Streamable HTTP mode; fails loudly if it does not start. */
async function startEverything() {
  const port = await freePort();
  const script = "node_modules/@modelcontextprotocol/server-everything/dist/index.js";
  const child = spawn(process.execPath, [script, "streamableHttp"], { cwd: serversDir, env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  let output = "";
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server-everything did not start in 30 s:\n${output}`)), 30_000);
    child.stderr.on("data", (chunk) => {
      output += chunk;
      if (output.includes("listening on port")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited with ${code} (npm ci in tests/mcp-servers):\n${output}`));
    });
  });
  child.removeAllListeners("exit");
  return { port, stop: () => child.kill("SIGTERM") };
}

let browser;
let cat;
let mc;
let server;
before(async () => {
  cat = await loadCatalogues();
  mc = await loadChunkCatalogues("admin-mcp.ts", "adminMcpCatalogues");
  server = await startEverything();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  server?.stop();
});

const cookieOf = async (page) => (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join("; ");

for (const pass of PASSES) {
  describe(`the MCP servers tab in ${pass.lang}`, () => {
    let app;
    let page;
    let m;
    let c;
    before(async () => {
      c = cat[pass.lang];
      m = mc[pass.lang];
      const bootstrap = [{ name: "boot", displayName: "Boot docs", url: "https://mcp.example.com/mcp" }];
      app = await startApp({ auth_mode: "accounts", session_secret: "s".repeat(48), admin_setup_token: SETUP_TOKEN, mcp_connections: JSON.stringify(bootstrap), outbound_allowed_hosts: "127.0.0.1", secrets_key: KEY, demo_pacing_ms: "1" });
      page = await newPage(browser, app.baseUrl, { locale: pass.locale });
      await page.goto("/");
      const signup = await page.evaluate(async (body) => {
        const r = await fetch("/api/auth/signup", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
        return r.status;
      }, { email: pass.admin, password: PASSWORD, setupToken: SETUP_TOKEN });
      assert.ok(signup < 300, `sign-up answered ${signup}`);
    });
    after(async () => {
      await page?.context().close();
      await app?.stop();
    });

    test("the tab lists the bootstrap server read-only and the guard's refusal is shown with nothing stored", async () => {
      await page.goto("/admin?tab=mcp");
      assert.equal(await page.locator("#tab-mcp").textContent(), m.tab);
      const boot = page.locator('.mcp-server[data-name="boot"]');
      await boot.locator(".mcp-readonly", { hasText: m.readOnly }).waitFor();
      assert.equal(await boot.locator(".mcp-edit").count(), 0, "no edit for a bootstrap server");
      await page.locator(".mcp-none", { hasText: m.none }).waitFor();
      await page.click(".mcp-add");
      await page.fill("#mcp-name", "docs");
      await page.fill("#mcp-url", "https://169.254.169.254/latest");
      await page.click(".mcp-form button[type=submit]");
      const error = page.locator(".mcp-form-error:not(:empty)");
      await error.waitFor();
      const text = await error.textContent();
      assert.ok(text.startsWith(fill(m.refused, { error: "" })), text);
      assert.match(text, /169\.254\.169\.254 is a local or private address/);
      await screenshot(page, `admin-mcp-${pass.lang}-refused`);
      const listed = (await apiCall(app.baseUrl, "GET", "/api/admin/mcp-servers", undefined, await cookieOf(page))).json;
      assert.deepEqual(listed.servers, [], "nothing stored");
    });

    test("a server is added, its tools refreshed with their annotations, switched off, edited and removed", async () => {
      await page.fill("#mcp-url", `http://127.0.0.1:${server.port}/mcp`);
      await page.fill("#mcp-displayName", "Everything");
      await page.click(".mcp-form button[type=submit]");
      const card = page.locator('.mcp-server[data-name="docs"]');
      await card.waitFor();
      await card.locator(".mcp-auth", { hasText: m.auth.none }).waitFor();
      await card.locator(".mcp-tools-at", { hasText: m.toolsNever }).waitFor();
      await card.locator(".mcp-refresh").click();
      const echo = card.locator('li[data-tool="echo"]');
      await echo.waitFor();
      assert.equal(await echo.locator('.mcp-badge[data-hint="readOnlyHint"]').textContent(), m.annotations.readOnlyHint);
      assert.equal(await echo.locator('.mcp-badge[data-hint="destructiveHint"]').count(), 0, "destructiveHint is false");
      await screenshot(page, `admin-mcp-${pass.lang}-tools`);

      // A click, not uncheck(): the switch shows the server's answer, so it stays on until the
      // PATCH answers (uncheck() would click again meanwhile).
      await card.locator(".mcp-enabled").click();
      await page.waitForFunction(() => !document.querySelector('.mcp-server[data-name="docs"] .mcp-enabled')?.checked);
      const cookie = await cookieOf(page);
      let listed = (await apiCall(app.baseUrl, "GET", "/api/admin/mcp-servers", undefined, cookie)).json;
      assert.equal(listed.servers[0].enabled, false);

      await card.locator(".mcp-edit").click();
      assert.equal(await page.locator("#mcp-name").getAttribute("readonly"), "");
      await page.fill("#mcp-displayName", "Reference");
      await page.click(".mcp-form button[type=submit]");
      await card.locator("h3", { hasText: "Reference" }).waitFor();
      listed = (await apiCall(app.baseUrl, "GET", "/api/admin/mcp-servers", undefined, cookie)).json;
      assert.equal(listed.servers[0].displayName, "Reference");

      await card.locator(".mcp-remove").click();
      await page.locator("dialog.confirm-dialog #confirm-title", { hasText: fill(m.removeTitle, { name: "Reference" }) }).waitFor();
      await page.click("dialog.confirm-dialog button[type=submit]");
      await card.waitFor({ state: "detached" });
      assert.deepEqual(page.problems, []);
    });

    test("the audit log names each action in the UI's language", async () => {
      await page.click("#tab-audit");
      for (const action of ["mcp_server_created", "mcp_server_tools_refreshed", "mcp_server_updated", "mcp_server_deleted"]) {
        const row = page.locator(`tr[data-action="${action}"]`).first();
        await row.waitFor();
        assert.equal(await row.locator("td").nth(2).textContent(), m.auditActions[action]);
      }
      assert.equal(await page.locator("#tab-users").textContent(), c.admin.tabs.users);
    });
  });
}
