// Seed 000 checklist 2 (a signed-out user can type, is then asked to sign in, and the draft
// survives the login) and 11 (setup blocks show a tooltip or an actionable page).
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { launchBrowser, newPage, screenshot, startApp } from "./harness.mjs";

const PASSWORD = "correct horse battery staple 42";

let browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

describe("password mode", () => {
  let app;
  before(async () => {
    app = await startApp({ auth_mode: "password", chat_password: PASSWORD, session_secret: "s".repeat(48) });
  });
  after(async () => {
    await app?.stop();
  });

  test("checklist 2: a signed-out draft opens the login modal and is still there after signing in", async () => {
    const page = await newPage(browser, app.baseUrl);
    await page.goto("/");
    await page.waitForSelector(".auth-slot button:has-text('Sign in')");
    assert.equal(await page.locator(".sidebar").getByText("Sign in to see your chats.").count(), 1);
    const draft = "Plan a three-day trip to Lisbon\nwith a budget";
    await page.click("#composer-input");
    await page.keyboard.type("Plan a three-day trip to Lisbon");
    await page.keyboard.press("Shift+Enter");
    await page.keyboard.type("with a budget");
    await page.keyboard.press("Enter");
    await page.waitForSelector("dialog.login-modal[open]");
    assert.equal(await page.evaluate(() => sessionStorage.getItem("eve-chat-draft")), draft);
    assert.equal(await page.inputValue("#composer-input"), draft, "Shift+Enter kept a newline; Enter did not send");
    await screenshot(page, "login-modal");

    await page.fill("#login-password", "wrong password");
    await page.click("dialog button[type=submit]");
    await page.waitForSelector(".form-error:not(:empty)");
    assert.equal(await page.isVisible("dialog.login-modal[open]"), true);

    // A reload in the middle of signing in keeps the draft too (sessionStorage).
    await page.reload();
    await page.waitForFunction((d) => document.querySelector("#composer-input")?.value === d, draft);
    await page.click(".auth-slot button:has-text('Sign in')");
    await page.fill("#login-password", PASSWORD);
    await page.click("dialog button[type=submit]");
    await page.waitForSelector("dialog.login-modal", { state: "detached" });
    await page.waitForSelector(".auth-slot .viewer-name");
    assert.equal(await page.inputValue("#composer-input"), draft);
    // Chromium keeps the __Host- cookie (Secure) on plain http because 127.0.0.1 is a secure
    // context; a reload stays signed in on it.
    const cookies = await page.context().cookies();
    const session = cookies.find((c) => c.name === "__Host-eve_chat_session");
    assert.ok(session, JSON.stringify(cookies.map((c) => c.name)));
    assert.equal(session.secure, true);
    assert.equal(session.path, "/");
    await page.reload();
    await page.waitForSelector(".auth-slot .viewer-name");
    assert.deepEqual(page.problems, []);
    await page.context().close();
  });

  test("signing out returns to the signed-out shell", async () => {
    const page = await newPage(browser, app.baseUrl);
    await page.goto("/");
    await page.click(".auth-slot button:has-text('Sign in')");
    await page.fill("#login-password", PASSWORD);
    await page.keyboard.press("Enter");
    await page.waitForSelector(".auth-slot .viewer-name");
    const [copied] = (await page.context().cookies()).filter((c) => c.name === "__Host-eve_chat_session");
    assert.ok(copied, "signed in with the __Host- cookie");
    await page.click(".auth-slot button:has-text('Sign out')");
    await page.waitForSelector(".auth-slot button:has-text('Sign in')");
    // Logout revokes: a copy of the cookie taken before signing out no longer signs anyone in.
    await page.context().addCookies([copied]);
    await page.reload();
    await page.waitForSelector(".auth-slot button:has-text('Sign in')");
    assert.equal(await page.locator(".auth-slot .viewer-name").count(), 0);
    await page.context().close();
  });
});

describe("unconfigured", () => {
  let app;
  before(async () => {
    app = await startApp({ auth_mode: "" });
  });
  after(async () => {
    await app?.stop();
  });

  test("checklist 11: setup blocks disable the composer with a tooltip and say what is missing", async () => {
    const page = await newPage(browser, app.baseUrl);
    await page.goto("/");
    await page.waitForSelector(".setup-panel");
    assert.match(await page.textContent(".setup-panel"), /Missing: .*(session_secret|sign-in)/);
    const reason = await page.getAttribute(".composer", "data-reason");
    assert.match(reason, /^Setup incomplete: /);
    assert.equal(await page.getAttribute(".composer", "title"), reason);
    assert.equal(await page.isDisabled("#composer-input"), true);
    await page.hover(".composer");
    await screenshot(page, "setup-needed");
    await page.context().close();
  });
});
