// Issue 20 in the browser (docs/accounts.md, docs/web.md "Accounts, settings and the admin
// page"): the app in `auth_mode = "accounts"` with a setup token. In each language (English,
// then the whole flow again in Simplified Chinese, Chromium's `locale`): the first admin signs
// up with the setup token (a wrong one is refused inline); the admin page invites a member, who
// signs up from the link (role and email shown); a member sees "not allowed" on /admin and the
// server answers 403; role change, disable (the member is out on the next request) and enable;
// a reset link sets a new password; the usage view (30-day chart with today's tokens, one row
// per account); API tokens created (shown once, working as a Bearer), revoked with a
// confirmation (401 after); delete with a typed confirmation; open sign-up closed and a wrong
// login explained inline.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { apiCall, launchBrowser, newPage, screenshot, startApp } from "./harness.mjs";
import { fill, loadCatalogues } from "./catalogues.mjs";

const SETUP_TOKEN = "browser-setup-token-0123456789abcdef";
const PASSWORD = "admin password 0123";
const MEMBER_PASSWORD = "member password 4567";
const ACCOUNTS = { auth_mode: "accounts", session_secret: "s".repeat(48), admin_setup_token: SETUP_TOKEN };

const PASSES = [
  { locale: "en-US", lang: "en", admin: "admin@example.com", member: "member@example.com", name: "Ada Admin", message: "Say hello in two words" },
  { locale: "zh-CN", lang: "zh-CN", admin: "guanliyuan@example.com", member: "chengyuan@example.com", name: "管理员小王", message: "用两个词打个招呼" },
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

/** The session cookie of a page's context, as a `cookie` header for Node-side calls. */
async function cookieOf(page) {
  return (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
}

/** A link the app showed once (invite, reset), as a path on the app under test. */
async function shownLink(page) {
  const value = await page.locator(".once-secret .once-value").inputValue();
  const url = new URL(value, "http://placeholder");
  return url.pathname + url.search + url.hash;
}

async function toastText(page, text) {
  await page.locator(".toast", { hasText: text }).first().waitFor();
}

async function userRow(page, email) {
  const row = page.locator(`tr[data-email="${email}"]`);
  await row.waitFor();
  return row;
}

for (const pass of PASSES) {
  describe(`accounts mode in ${pass.lang}`, () => {
    let app;
    let c;
    let adminPage;
    let memberPage;
    before(async () => {
      c = cat[pass.lang];
      app = await startApp(ACCOUNTS);
    });
    after(async () => {
      await adminPage?.context().close();
      await memberPage?.context().close();
      await app?.stop();
    });

    test("the first admin signs up with the setup token; a wrong token is refused inline", async () => {
      const setup = (await apiCall(app.baseUrl, "GET", "/api/setup")).json;
      assert.equal(setup.authMode, "accounts");
      assert.equal(setup.accountsNeedAdmin, true);
      adminPage = await newPage(browser, app.baseUrl, { locale: pass.locale });
      const page = adminPage;
      await page.goto("/");
      assert.equal(await page.evaluate(() => document.documentElement.lang), pass.lang);
      await page.click(`.auth-slot button:has-text("${c.auth.signIn}")`);
      await page.waitForSelector("dialog.login-modal[open] #login-email");
      await page.click("dialog .signup-link");
      await page.waitForURL(/\/signup$/);
      await page.locator("h1.panel-title", { hasText: c.account.firstAdminTitle }).waitFor();
      await page.fill("#setup-token", "not the token");
      await page.fill("#signup-email", pass.admin);
      await page.fill("#signup-name", pass.name);
      await page.fill("#new-password", PASSWORD);
      await page.fill("#repeat-password", PASSWORD);
      // A password under 10 characters is refused before anything is sent.
      await page.fill("#repeat-password", "short");
      await page.click(".signup-form button[type=submit]");
      assert.equal(await page.locator(".signup-form .form-error").textContent(), c.account.mismatch);
      await page.fill("#repeat-password", PASSWORD);
      await page.click(".signup-form button[type=submit]");
      await page.waitForSelector(".signup-form .form-error:not(:empty)");
      assert.match(page.url(), /\/signup$/, "still on the form");
      await screenshot(page, `accounts-${pass.lang}-signup-first-admin`);
      await page.fill("#setup-token", SETUP_TOKEN);
      await page.click(".signup-form button[type=submit]");
      await page.waitForURL((u) => u.pathname === "/");
      await page.locator(".auth-slot .viewer-name", { hasText: pass.name }).waitFor();
      assert.equal((await apiCall(app.baseUrl, "GET", "/api/setup")).json.accountsNeedAdmin, false);
      const account = (await apiCall(app.baseUrl, "GET", "/api/auth/account", undefined, await cookieOf(page))).json;
      assert.equal(account.role, "admin");
      assert.equal(account.email, pass.admin);
      // The setup token works once.
      const again = await apiCall(app.baseUrl, "POST", "/api/auth/signup", { email: `x.${pass.admin}`, password: PASSWORD, setupToken: SETUP_TOKEN });
      assert.ok(again.status >= 400 && again.status < 500, `${again.status} ${again.text}`);
      assert.deepEqual(page.problems, []);
    });

    test("the admin invites a member, who signs up from the link; a member is not allowed on /admin", async () => {
      const page = adminPage;
      await page.click(`.sidebar-footer a:has-text("${c.account.adminLink}")`);
      await page.waitForURL(/\/admin$/);
      await page.locator("h1.panel-title", { hasText: c.admin.title }).waitFor();
      for (const tab of ["users", "usage", "quotas", "models", "audit"]) assert.equal(await page.locator(`#tab-${tab}`).textContent(), c.admin.tabs[tab]);
      await userRow(page, pass.admin);
      await page.selectOption("#invite-role", "member");
      await page.fill("#invite-email", pass.member);
      await page.click(".invite-form button[type=submit]");
      await page.waitForSelector(".once-secret .once-value");
      await page.locator(".once-secret .once-warning", { hasText: c.account.roles.member }).waitFor();
      const invite = await shownLink(page);
      assert.match(invite, /^\/invite#token=/, "the token is in the fragment (docs/accounts.md)");
      await page.locator(".invite-list li").first().waitFor();
      await screenshot(page, `accounts-${pass.lang}-invite-link`);

      memberPage = await newPage(browser, app.baseUrl, { locale: pass.locale });
      const member = memberPage;
      await member.goto(invite);
      await member.locator(".invite-info", { hasText: fill(c.account.inviteIntro, { role: c.account.roles.member }) }).waitFor();
      // The invitation is bound to its address: another one is refused in the form's words.
      await member.evaluate(() => document.querySelector("#signup-email")?.removeAttribute("readonly"));
      await member.fill("#signup-email", `other.${pass.member}`);
      await member.fill("#new-password", MEMBER_PASSWORD);
      await member.fill("#repeat-password", MEMBER_PASSWORD);
      await member.click(".signup-form button[type=submit]");
      await member.locator(".signup-form .form-error", { hasText: c.errors.email_mismatch }).waitFor();
      await member.reload();
      await member.locator(".invite-info", { hasText: fill(c.account.inviteIntro, { role: c.account.roles.member }) }).waitFor();
      assert.equal(await member.inputValue("#signup-email"), pass.member);
      assert.equal(await member.locator("#signup-email").getAttribute("readonly"), "", "the invitation's address is fixed");
      assert.equal(await member.locator("#setup-token").count(), 0);
      await member.fill("#new-password", MEMBER_PASSWORD);
      await member.fill("#repeat-password", MEMBER_PASSWORD);
      await member.click(".signup-form button[type=submit]");
      await member.waitForURL((u) => u.pathname === "/");
      await member.locator(".auth-slot .viewer-name", { hasText: pass.member }).waitFor();
      assert.equal(await member.locator(`.sidebar-footer a:has-text("${c.account.adminLink}")`).count(), 0, "no admin link for a member");
      // The invitation is spent.
      const reused = await apiCall(app.baseUrl, "POST", "/api/auth/invite", { token: new URLSearchParams(invite.split("#")[1]).get("token") });
      assert.equal(reused.status, 404);
      assert.equal(reused.json.error.code, "invite_invalid");
      const other = await newPage(browser, app.baseUrl, { locale: pass.locale });
      await other.goto(invite);
      await other.locator(".signup-error", { hasText: c.errors.invite_invalid }).waitFor();
      await other.context().close();

      await member.goto("/admin");
      await member.locator(".admin-not-allowed", { hasText: c.admin.notAllowed }).waitFor();
      const refused = await member.evaluate(async () => {
        const r = await fetch("/api/admin/users");
        return { status: r.status, body: await r.json() };
      });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.code, "forbidden");
      await screenshot(member, `accounts-${pass.lang}-member-not-allowed`);
      assert.deepEqual(member.problems, []);
    });

    test("role change, disable (the member is out at once) and enable", async () => {
      const page = adminPage;
      await page.reload();
      let row = await userRow(page, pass.member);
      await row.locator("select.user-role").selectOption("admin");
      await toastText(page, fill(c.admin.roleChanged, { email: pass.member, role: c.account.roles.admin }));
      assert.equal((await apiCall(app.baseUrl, "GET", "/api/auth/account", undefined, await cookieOf(memberPage))).json.role, "admin");
      await row.locator("select.user-role").selectOption("member");
      await toastText(page, fill(c.admin.roleChanged, { email: pass.member, role: c.account.roles.member }));
      assert.equal((await apiCall(app.baseUrl, "GET", "/api/auth/account", undefined, await cookieOf(memberPage))).json.role, "member");

      // The last enabled admin cannot be demoted: the server's 409 is explained.
      row = await userRow(page, pass.admin);
      await row.locator("select.user-role").selectOption("member");
      await toastText(page, c.errors.last_admin);
      await page.reload();
      assert.equal(await (await userRow(page, pass.admin)).locator("select.user-role").inputValue(), "admin");

      row = await userRow(page, pass.member);
      await row.locator(".user-toggle").click();
      await row.locator(".user-status", { hasText: c.admin.disabled }).waitFor();
      await toastText(page, fill(c.admin.disabledDone, { email: pass.member }));
      await screenshot(page, `accounts-${pass.lang}-admin-users`);
      await memberPage.reload();
      await memberPage.waitForSelector(`.auth-slot button:has-text("${c.auth.signIn}")`);
      // A disabled account cannot sign in either, with the same text as a wrong password.
      await memberPage.click(`.auth-slot button:has-text("${c.auth.signIn}")`);
      await memberPage.fill("#login-email", pass.member);
      await memberPage.fill("#login-password", MEMBER_PASSWORD);
      await memberPage.click("dialog button[type=submit]");
      await memberPage.locator("dialog .form-error", { hasText: c.errors.invalid_credentials }).waitFor();
      await memberPage.keyboard.press("Escape");

      await row.locator(".user-toggle").click();
      await row.locator(".user-status", { hasText: c.admin.active }).waitFor();
    });

    test("a reset link sets a new password and signs the member in", async () => {
      const page = adminPage;
      const row = await userRow(page, pass.member);
      await row.locator(".user-reset").click();
      await page.waitForSelector(".once-secret .once-value");
      const link = await shownLink(page);
      assert.match(link, /^\/reset#token=/, "the token is in the fragment (docs/accounts.md)");
      const member = memberPage;
      await member.goto(link);
      await member.locator("h1.panel-title", { hasText: c.account.resetTitle }).waitFor();
      await member.fill("#new-password", "short");
      await member.fill("#repeat-password", "short");
      await member.click(".reset-form button[type=submit]");
      assert.equal(await member.locator(".reset-form .form-error").textContent(), fill(c.account.tooShort, { min: "10" }));
      await member.fill("#new-password", `${MEMBER_PASSWORD} new`);
      await member.fill("#repeat-password", `${MEMBER_PASSWORD} new`);
      await member.click(".reset-form button[type=submit]");
      await member.waitForURL((u) => u.pathname === "/");
      await member.locator(".auth-slot .viewer-name", { hasText: pass.member }).waitFor();
      // The link is spent.
      await member.goto(link);
      await member.fill("#new-password", `${MEMBER_PASSWORD} again`);
      await member.fill("#repeat-password", `${MEMBER_PASSWORD} again`);
      await member.click(".reset-form button[type=submit]");
      await member.locator(".reset-form .form-error", { hasText: c.errors.reset_invalid }).waitFor();
      assert.deepEqual(member.problems, []);
    });

    test("the usage view: today's tokens in the 30-day chart and a row per account", async () => {
      const page = adminPage;
      await page.goto("/");
      await page.waitForSelector(".auth-slot .viewer-name");
      await page.fill("#composer-input", pass.message);
      await page.keyboard.press("Enter");
      await page.waitForURL(/\/chat\//);
      await page.waitForSelector(".message.assistant .markdown", { timeout: 60000 });
      await page.waitForFunction(() => !document.querySelector(".composer button.stop"), null, { timeout: 60000 });
      await page.goto("/admin?tab=usage");
      await page.locator("#tab-usage[aria-selected=true]").waitFor();
      await page.locator(".token-chart figcaption", { hasText: c.admin.chartTitle }).waitFor();
      assert.equal(await page.locator(".token-chart g.bar").count(), 30);
      const today = new Date().toISOString().slice(0, 10);
      const todays = Number(await page.locator(`.token-chart g.bar[data-day="${today}"]`).getAttribute("data-total"));
      assert.ok(todays > 0, `today's bar counts the answer's tokens (${todays})`);
      const rows = page.locator(".usage-table tbody tr");
      assert.equal(await rows.count(), 2, "one row per account");
      const adminRow = page.locator(".usage-table tbody tr", { hasText: pass.admin });
      assert.equal(await adminRow.count(), 1);
      const headers = await page.locator(".usage-table th").allTextContents();
      assert.deepEqual(headers, [c.admin.user, c.admin.chats, c.admin.storage, c.admin.attachments, c.admin.tokensIn, c.admin.tokensOut, c.admin.lastActive]);
      assert.equal((await adminRow.locator("td").nth(1).textContent()).trim(), "1", "one chat");
      await adminRow.locator("button.link-button").click();
      await page.locator(".user-usage h2", { hasText: fill(c.admin.userUsageTitle, { user: pass.admin }) }).waitFor();
      // The detail's heading shows before its rows arrive: wait for the first row.
      await page.locator(".user-usage .model-table tbody tr").first().waitFor();
      assert.ok((await page.locator(".user-usage .model-table tbody tr").count()) >= 1, "per model");
      await screenshot(page, `accounts-${pass.lang}-usage`);
      assert.deepEqual(page.problems, []);
    });

    test("API tokens: created and shown once, working as a Bearer, revoked with a confirmation", async () => {
      const page = adminPage;
      await page.click(`.auth-slot .viewer-name`);
      await page.waitForURL(/\/settings$/);
      await page.locator("#tokens-heading", { hasText: c.tokens.title }).waitFor();
      await page.fill("#token-name", "eve cli");
      await page.fill("#token-days", "400");
      await page.click(".token-form button[type=submit]");
      assert.equal(await page.locator(".tokens .form-error").textContent(), c.tokens.daysInvalid);
      await page.fill("#token-days", "30");
      await page.click(".token-form button[type=submit]");
      const secret = await page.locator(".once-secret .once-value").inputValue();
      assert.match(secret, /^evc_/);
      assert.equal(await page.locator(".once-secret .once-warning").textContent(), c.tokens.newWarning);
      await screenshot(page, `accounts-${pass.lang}-token-created`);
      const row = page.locator(".token-table tbody tr", { hasText: "eve cli" });
      assert.equal(await row.locator(".token-state").textContent(), c.tokens.states.active);
      const viaToken = await fetch(`${app.baseUrl}/api/auth/account`, { headers: { authorization: `Bearer ${secret}` } });
      assert.equal(viaToken.status, 200);
      assert.equal((await viaToken.json()).email, pass.admin);
      // Shown once: the list never carries the secret, and a reload shows no secret.
      await page.reload();
      await page.locator(".token-table tbody tr", { hasText: "eve cli" }).waitFor();
      assert.equal(await page.locator(".once-secret").count(), 0);
      assert.equal((await page.content()).includes(secret), false);
      await page.locator(".token-table tbody tr", { hasText: "eve cli" }).locator("button.danger").click();
      await page.waitForSelector("dialog.confirm-dialog[open]");
      assert.equal(await page.locator("dialog.confirm-dialog p.muted").textContent(), fill(c.tokens.confirmRevoke, { name: "eve cli" }));
      await page.click("dialog.confirm-dialog button[type=submit]");
      await page.locator(".token-table tbody tr", { hasText: "eve cli" }).locator(".token-state", { hasText: c.tokens.states.revoked }).waitFor();
      const after = await fetch(`${app.baseUrl}/api/auth/account`, { headers: { authorization: `Bearer ${secret}` } });
      assert.equal(after.status, 401);
      assert.deepEqual(page.problems, []);
    });

    test("settings: display name, language and default model are saved on the account", async () => {
      const page = adminPage;
      await page.goto("/settings");
      await page.locator("#account-heading", { hasText: c.account.accountSection }).waitFor();
      assert.equal(await page.inputValue("#account-name"), pass.name);
      await page.fill("#account-name", `${pass.name} 2`);
      await page.selectOption("#account-language", pass.lang);
      await page.click(".account-form button[type=submit]");
      await page.locator(".account-form .form-ok", { hasText: c.account.saved }).waitFor();
      const account = (await apiCall(app.baseUrl, "GET", "/api/auth/account", undefined, await cookieOf(page))).json;
      assert.equal(account.displayName, `${pass.name} 2`);
      assert.equal(account.language, pass.lang);
      await page.locator(".auth-slot .viewer-name", { hasText: `${pass.name} 2` }).waitFor();
    });

    test("delete asks for the email typed out, then the account is gone", async () => {
      const page = adminPage;
      await page.goto("/admin");
      const row = await userRow(page, pass.member);
      await row.locator(".user-delete").click();
      await page.waitForSelector("dialog.confirm-dialog[open]");
      assert.equal(await page.locator("dialog.confirm-dialog h2").textContent(), fill(c.admin.deleteTitle, { email: pass.member }));
      const confirm = page.locator("dialog.confirm-dialog button[type=submit]");
      assert.equal(await confirm.isDisabled(), true);
      await page.fill("#confirm-typed", "someone@else.example");
      assert.equal(await confirm.isDisabled(), true);
      await page.fill("#confirm-typed", pass.member);
      await confirm.click();
      await toastText(page, fill(c.admin.deleted, { email: pass.member }));
      assert.equal(await page.locator(`tr[data-email="${pass.member}"]`).count(), 0);
      await memberPage.reload();
      await memberPage.waitForSelector(`.auth-slot button:has-text("${c.auth.signIn}")`);
      // The audit log lists what happened, newest first, in the UI's words.
      await page.click("#tab-audit");
      await page.locator(".audit-table tbody tr").first().waitFor();
      const actions = await page.locator(".audit-table tbody tr td:nth-child(3)").allTextContents();
      for (const a of ["signup", "invite_created", "user_updated", "reset_created", "token_created", "token_revoked", "user_deleted"]) {
        assert.ok(actions.includes(c.admin.auditActions[a]), `${a} in ${JSON.stringify(actions)}`);
      }
      assert.deepEqual(page.problems, []);
    });

    test("open sign-up is closed without allowed domains, and a wrong login is explained inline", async () => {
      const page = await newPage(browser, app.baseUrl, { locale: pass.locale });
      await page.goto("/signup");
      await page.locator("h1.panel-title", { hasText: c.account.signupTitle }).waitFor();
      assert.equal(await page.locator("#setup-token").count(), 0, "an admin exists: no setup token");
      await page.fill("#signup-email", "stranger@example.org");
      await page.fill("#new-password", PASSWORD);
      await page.fill("#repeat-password", PASSWORD);
      await page.click(".signup-form button[type=submit]");
      await page.locator(".signup-form .form-error", { hasText: c.errors.signup_closed }).waitFor();
      await page.goto("/");
      await page.click(`.auth-slot button:has-text("${c.auth.signIn}")`);
      await page.fill("#login-email", pass.admin);
      await page.fill("#login-password", "not the password");
      await page.click("dialog button[type=submit]");
      await page.locator("dialog .form-error", { hasText: c.errors.invalid_credentials }).waitFor();
      await page.fill("#login-password", PASSWORD);
      await page.click("dialog button[type=submit]");
      await page.waitForSelector("dialog.login-modal", { state: "detached" });
      await page.locator(".auth-slot .viewer-name", { hasText: pass.name }).waitFor();
      // The account's language (saved in settings above) applies in a new browser.
      await page.waitForFunction((l) => document.documentElement.lang === l, pass.lang);
      assert.deepEqual(page.problems, []);
      await page.context().close();
    });
  });
}
