// A full MCP turn in the browser: the demo model calls a tool of a real MCP server that wants
// OAuth (tests/mcp-servers/protected.mjs, built with the official SDK's auth router and bearer
// middleware), the chat shows the sign-in card, Connect runs the real flow in a popup
// (discovery, dynamic client registration, PKCE) against that server, and the same turn
// resumes and shows the server's result. The menu lists the connection and Disconnect revokes.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, test } from "node:test";
import { launchBrowser, newPage, screenshot, startApp, startChat, waitSettledOnServer } from "./harness.mjs";

const serversDir = join(dirname(fileURLToPath(import.meta.url)), "..", "mcp-servers");

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

/** Starts protected.mjs; fails loudly if it does not say it listens within 30 s. */
async function startProtected() {
  const port = await freePort();
  const child = spawn(process.execPath, ["protected.mjs"], { cwd: serversDir, env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  let output = "";
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`protected.mjs did not start in 30 s:\n${output}`)), 30_000);
    child.stderr.on("data", (chunk) => {
      output += chunk;
      if (output.includes("protected MCP server listening")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`protected.mjs exited with ${code} (run scripts/prepare: npm ci in tests/mcp-servers):\n${output}`));
    });
  });
  child.removeAllListeners("exit");
  return { port, stop: () => child.kill("SIGTERM") };
}

let server;
let app;
let browser;
before(async () => {
  server = await startProtected();
  const connections = [{ name: "notes", displayName: "Notes", url: `http://127.0.0.1:${server.port}/mcp`, description: "The user's notes." }];
  app = await startApp({ mcp_connections: JSON.stringify(connections), demo_pacing_ms: "5" });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await app?.stop();
  server?.stop();
});

test("an MCP tool that needs sign-in: Connect signs in against the server and the turn shows its result", async () => {
  const page = await newPage(browser, app.baseUrl);
  await page.goto("/");
  await page.waitForSelector("#composer-input");
  await page.click("button.chip:has-text('Connections')");
  await page.waitForSelector("[role=menu] label:has-text('Notes') input:checked");
  await page.keyboard.press("Escape");

  await startChat(page, 'call tool notes__read_notes {"topic":"the roadmap"}');
  await page.waitForSelector(".auth-card.pending", { timeout: 30000 });
  assert.match(await page.textContent(".auth-card"), /Notes/);
  const [popup] = await Promise.all([page.context().waitForEvent("page"), page.click(".auth-card button:has-text('Connect')")]);
  // connect page → the server's /authorize → the app's callback, all by redirects.
  await popup.waitForURL(/\/eve\/v1\/connections\/callback/, { timeout: 30000 });
  await popup.waitForSelector("text=connected", { timeout: 30000 });
  await page.waitForSelector(".auth-card.authorized", { timeout: 30000 });
  await page.waitForSelector(".message.assistant >> text=Notes on the roadmap", { timeout: 30000 });
  await page.waitForFunction(() => !document.querySelector("button[aria-label='Stop response']"), null, { timeout: 30000 });
  await screenshot(page, "mcp-signed-in-result");

  // The menu offers Disconnect now; it revokes, and the button goes.
  await page.click("button.chip:has-text('Connections')");
  await page.click("[role=menu] button[data-revoke='notes']");
  await page.waitForSelector("[role=menu] button[data-revoke='notes']", { state: "detached", timeout: 10000 });
  const stats = await (await fetch(`http://127.0.0.1:${server.port}/stats`)).json();
  assert.equal(stats.revoked, 2, "access and refresh token revoked at the server");
  await page.context().close();
});

test("a pending sign-in disables only its chat; Skip declines it and the chat is usable again", async () => {
  const statsUrl = `http://127.0.0.1:${server.port}/stats`;
  const before = await (await fetch(statsUrl)).json();
  const page = await newPage(browser, app.baseUrl);
  const chatId = await startChat(page, 'call tool notes__read_notes {"topic":"skipped"}');
  await page.waitForSelector(".auth-card.pending", { timeout: 30000 });
  assert.match(await page.textContent(".auth-card-title"), /Notes/);
  assert.match(await page.textContent(".tool-group"), /Waiting for authorization/);
  assert.equal(await page.isDisabled("#composer-input"), true);

  await page.click("a.new-chat");
  await page.waitForURL(`${app.baseUrl}/`);
  assert.equal(await page.isDisabled("#composer-input"), false, "other chats are not blocked");
  await page.click(`.chat-row[data-chat-id="${chatId}"] a`);
  await page.waitForSelector(".auth-card.pending");

  await page.click(".auth-card button:has-text('Skip')");
  await page.waitForSelector(".auth-card.declined");
  assert.equal(await page.isDisabled("#composer-input"), false);
  await page.fill("#composer-input", "Hello instead");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => document.querySelectorAll(".message.assistant").length >= 1, null, { timeout: 30000 });
  await page.waitForFunction(() => !document.querySelector("button[aria-label='Stop response']"), null, { timeout: 30000 });
  const chat = await waitSettledOnServer(app.baseUrl, chatId);
  assert.ok(chat.events.some((e) => e.type === "authorization.completed" && e.data.outcome === "declined" && e.meta.local === true), "the local decline");
  assert.ok(chat.events.some((e) => e.type === "authorization.completed" && e.data.outcome === "declined" && !e.meta.local), "eve's decline after the cancel");
  assert.equal(chat.events.filter((e) => e.type === "message.received").length, 2);
  const stats = await (await fetch(statsUrl)).json();
  assert.equal(stats.tokenCalls, before.tokenCalls, "Skip signed nothing in");
  await page.context().close();
});
