import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { accountsApi, hasSignIn, looksLikeEmail, parseTokenDays, passwordProblem, inviteTokenFrom, refusalKey, resetTokenFrom, sortTokens, tokenState, type ApiTokenInfo } from "./accounts";
import { accountIdOf, adminApi, byModel, chartBars, enabledAdmins, lastDays, MB, parseQuota, quotaInput, userListReducer, type UserList } from "../admin/data";
import { ApiError } from "../api";
import { describeError, formatBytes, formatCompact, formatDate, formatDay, setLocale } from "../i18n";
import { en } from "../i18n/en";
import { zhCN } from "../i18n/zh-CN";
import { adminPageCatalogues } from "../i18n/admin-page";
import { parseRoute, routeClass } from "../shell/layout";
import { chosenModel, setAccountDefaultModel } from "../chat/models";

// ---- the calls: method, path and body as docs/accounts.md names them ------------------------

interface Sent {
  method: string;
  url: string;
  body: unknown;
}
const realFetch = globalThis.fetch;
afterEach(() => {
  globalThis.fetch = realFetch;
});
/** Records the requests made and answers each with `reply` (JSON, 200 unless a status is given). */
function recordFetch(reply: unknown = {}, status = 200): Sent[] {
  const sent: Sent[] = [];
  globalThis.fetch = (async (url: string, init: RequestInit) => {
    sent.push({ method: init.method ?? "GET", url, body: init.body ? JSON.parse(String(init.body)) : undefined });
    return new Response(status === 204 ? null : JSON.stringify(reply), { status, headers: { "content-type": "application/json" } });
  }) as typeof fetch;
  return sent;
}

test("the account and token calls use the contract's routes and bodies", async () => {
  const sent = recordFetch({ viewer: null, authMode: "accounts" });
  await accountsApi.login("a@example.com", "pw");
  await accountsApi.signup({ email: "a@example.com", password: "0123456789", setupToken: "s" });
  await accountsApi.invite("tok/&=");
  await accountsApi.reset("r1", "0123456789");
  await accountsApi.changePassword("old", "new-password");
  await accountsApi.account();
  await accountsApi.updateAccount({ language: "zh-CN", defaultModel: null });
  await accountsApi.tokens();
  await accountsApi.createToken("cli", 30);
  await accountsApi.revokeToken("t 1");
  assert.deepEqual(
    sent.map((s) => `${s.method} ${s.url}`),
    [
      "POST /api/auth/login",
      "POST /api/auth/signup",
      "POST /api/auth/invite",
      "POST /api/auth/reset",
      "POST /api/auth/password",
      "GET /api/auth/account",
      "PATCH /api/auth/account",
      "GET /api/tokens",
      "POST /api/tokens",
      "DELETE /api/tokens/t%201",
    ],
  );
  assert.deepEqual(sent[0]!.body, { email: "a@example.com", password: "pw" });
  assert.deepEqual(sent[1]!.body, { email: "a@example.com", password: "0123456789", setupToken: "s" });
  assert.deepEqual(sent[2]!.body, { token: "tok/&=" }, "the invitation's token in the body, never the URL");
  assert.deepEqual(sent[3]!.body, { token: "r1", newPassword: "0123456789" });
  assert.deepEqual(sent[4]!.body, { currentPassword: "old", newPassword: "new-password" });
  assert.deepEqual(sent[6]!.body, { language: "zh-CN", defaultModel: null });
  assert.deepEqual(sent[8]!.body, { name: "cli", expiresInDays: 30 });
});

test("the admin calls use the contract's routes and bodies", async () => {
  const sent = recordFetch({});
  await adminApi.users("", null);
  await adminApi.users("ann b", "c1");
  await adminApi.updateUser("u1", { disabled: true });
  await adminApi.deleteUser("u1");
  await adminApi.resetLink("u1");
  await adminApi.createInvite("member");
  await adminApi.createInvite("admin", "x@example.com");
  await adminApi.invites();
  await adminApi.revokeInvite("i1");
  await adminApi.audit(null);
  await adminApi.audit("a9");
  await adminApi.usage();
  await adminApi.userUsage("u1");
  await adminApi.setQuota("u1", { tokensPerDay: 1000, storageBytes: null });
  await adminApi.models();
  await adminApi.setModels(null);
  assert.deepEqual(
    sent.map((s) => `${s.method} ${s.url}`),
    [
      "GET /api/admin/users",
      "GET /api/admin/users?q=ann%20b&cursor=c1",
      "PATCH /api/admin/users/u1",
      "DELETE /api/admin/users/u1",
      "POST /api/admin/users/u1/reset",
      "POST /api/admin/invites",
      "POST /api/admin/invites",
      "GET /api/admin/invites",
      "DELETE /api/admin/invites/i1",
      "GET /api/admin/audit",
      "GET /api/admin/audit?cursor=a9",
      "GET /api/admin/usage?days=30",
      "GET /api/admin/users/u1/usage?days=30",
      "PUT /api/admin/users/u1/quota",
      "GET /api/admin/models",
      "PUT /api/admin/models",
    ],
  );
  assert.deepEqual(sent[2]!.body, { disabled: true });
  assert.deepEqual(sent[5]!.body, { role: "member" }, "no email key for an open invite");
  assert.deepEqual(sent[6]!.body, { role: "admin", email: "x@example.com" });
  assert.deepEqual(sent[13]!.body, { tokensPerDay: 1000, storageBytes: null });
  assert.deepEqual(sent[15]!.body, { memberModels: null });
});

test("an error answer becomes an ApiError with the server's code, shown from the catalogue", async () => {
  recordFetch({ error: { code: "signup_closed", message: "sign-up is closed" } }, 403);
  await setLocale("en");
  const err = await accountsApi.signup({ email: "a@b.co", password: "0123456789" }).then(
    () => assert.fail("resolved"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ApiError);
  assert.equal(err.status, 403);
  assert.equal(err.code, "signup_closed");
  assert.equal(describeError(err), en.errors.signup_closed);
  await setLocale("zh-CN");
  try {
    assert.equal(describeError(err), zhCN.errors.signup_closed);
  } finally {
    await setLocale("en");
  }
});

test("every error code of docs/accounts.md has a text in both languages", async () => {
  const codes = ["signup_closed", "invalid_credentials", "invite_invalid", "last_admin", "forbidden", "quota_exceeded", "model_not_allowed", "unauthorized"];
  for (const code of codes) {
    assert.equal(typeof (en.errors as Record<string, unknown>)[code], "string", code);
    assert.equal(typeof (zhCN.errors as Record<string, unknown>)[code], "string", code);
  }
  // The quota's 429 names the limit: English shows the server's text, Chinese the catalogue's.
  const quota = new ApiError(429, "quota_exceeded", "quota exceeded: tokens per day (1000)");
  await setLocale("en");
  assert.equal(describeError(quota), "quota exceeded: tokens per day (1000)");
  await setLocale("zh-CN");
  try {
    assert.equal(describeError(quota), zhCN.errors.quota_exceeded);
  } finally {
    await setLocale("en");
  }
  // Every audit action has a name in both languages.
  const actions = ["signin", "signin_failed", "signup", "invite_created", "invite_revoked", "user_updated", "user_deleted", "reset_created", "password_changed", "token_created", "token_revoked", "quota_updated", "models_updated"];
  assert.deepEqual(Object.keys(adminPageCatalogues.en.auditActions).sort(), [...actions].sort());
  assert.deepEqual(Object.keys(adminPageCatalogues["zh-CN"].auditActions).sort(), [...actions].sort());
});

// ---- forms ---------------------------------------------------------------------------------

test("passwords are 10 to 256 characters counted as code points, and must be repeated exactly", () => {
  assert.equal(passwordProblem("short"), "tooShort");
  assert.equal(passwordProblem("0123456789"), null);
  assert.equal(passwordProblem("😀".repeat(10)), null, "ten emoji are ten characters");
  assert.equal(passwordProblem("x".repeat(256)), null);
  assert.equal(passwordProblem("x".repeat(257)), "tooLong");
  assert.equal(passwordProblem("0123456789", "0123456780"), "mismatch");
  assert.equal(passwordProblem("0123456789", "0123456789"), null);
});

test("emails, token days and quota inputs are read as the server wants them", () => {
  assert.ok(looksLikeEmail(" ann@example.com "));
  for (const bad of ["", "ann", "ann@", "@example.com", "ann@example", "a b@example.com"]) assert.equal(looksLikeEmail(bad), false, bad);
  assert.equal(parseTokenDays("90"), 90);
  assert.equal(parseTokenDays(" 1 "), 1);
  assert.equal(parseTokenDays("365"), 365);
  for (const bad of ["0", "366", "1.5", "-3", "", "ten", "1e2"]) assert.equal(parseTokenDays(bad), null, bad);
  assert.equal(parseQuota(""), null, "empty: the default");
  assert.equal(parseQuota("  "), null);
  assert.equal(parseQuota("50,000"), 50000);
  assert.equal(parseQuota("0"), 0);
  assert.equal(parseQuota("1.5", MB), 1572864);
  assert.equal(parseQuota("abc"), undefined);
  assert.equal(parseQuota("-5"), undefined);
  assert.equal(quotaInput(null), "");
  assert.equal(quotaInput(50000), "50000");
  assert.equal(quotaInput(1572864, MB), "1.5");
  assert.equal(quotaInput(100 * MB, MB), "100");
});

test("invitation and reset links carry their token in the fragment; the pages are client routes", () => {
  assert.equal(inviteTokenFrom("#token=abc_-1", ""), "abc_-1");
  assert.equal(inviteTokenFrom("", "?invite=abc"), "abc");
  assert.equal(inviteTokenFrom("#token=", ""), null);
  assert.equal(inviteTokenFrom("", ""), null);
  assert.equal(resetTokenFrom("#token=r%2B1", ""), "r+1");
  assert.equal(resetTokenFrom("", "?token=q"), "q");
  assert.equal(resetTokenFrom("#x=1", "?x=1"), null);
  assert.deepEqual(parseRoute("/invite"), { name: "invite" });
  assert.deepEqual(parseRoute("/project/p_1"), { name: "project", id: "p_1" });
  assert.equal(routeClass("/project/p_1"), "route-page");
  for (const name of ["admin", "settings", "signup", "invite", "reset"] as const) {
    assert.deepEqual(parseRoute(`/${name}`), { name });
    assert.equal(routeClass(`/${name}`), "route-page");
  }
  assert.deepEqual(parseRoute("/admin/users"), { name: "not-found" });
  assert.equal(routeClass("/"), "route-home");
  assert.equal(hasSignIn("password") && hasSignIn("oidc") && hasSignIn("accounts"), true);
  assert.equal(hasSignIn("local-dev") || hasSignIn("unconfigured") || hasSignIn(undefined), false);
});

// ---- tokens ----------------------------------------------------------------------------------

test("tokens: active ones first, newest first; expired and revoked after", () => {
  const now = Date.parse("2026-12-01T12:00:00Z");
  const tok = (id: string, created: string, expires: string, revokedAt?: string): ApiTokenInfo => ({ id, name: id, createdAt: created, expiresAt: expires, revokedAt });
  const list = [
    tok("old", "2026-10-01T00:00:00Z", "2027-01-01T00:00:00Z"),
    tok("expired", "2026-11-30T00:00:00Z", "2026-12-01T11:59:59Z"),
    tok("revoked", "2026-11-29T00:00:00Z", "2027-01-01T00:00:00Z", "2026-11-30T00:00:00Z"),
    tok("new", "2026-11-20T00:00:00Z", "2027-02-01T00:00:00Z"),
  ];
  assert.equal(tokenState(list[0]!, now), "active");
  assert.equal(tokenState(list[1]!, now), "expired");
  assert.equal(tokenState(list[2]!, now), "revoked");
  assert.deepEqual(sortTokens(list, now).map((t) => t.id), ["new", "old", "expired", "revoked"]);
});

// ---- admin state -----------------------------------------------------------------------------

const user = (id: string, role: "admin" | "member" = "member", disabled = false) => ({ id, email: `${id}@example.com`, displayName: null, role, disabled, createdAt: "2026-11-01T00:00:00Z" });

test("the users list: pages append without duplicates, changes replace in place, a stale search's page is ignored", () => {
  let s: UserList = { users: [], nextCursor: null, q: "" };
  s = userListReducer(s, { type: "page", q: "", page: { users: [user("a"), user("b")], nextCursor: "c1" }, append: false });
  s = userListReducer(s, { type: "page", q: "", page: { users: [user("b"), user("c")], nextCursor: null }, append: true });
  assert.deepEqual(s.users.map((u) => u.id), ["a", "b", "c"]);
  assert.equal(s.nextCursor, null);
  s = userListReducer(s, { type: "updated", user: { ...user("b"), disabled: true } });
  assert.deepEqual(s.users.map((u) => [u.id, u.disabled]), [["a", false], ["b", true], ["c", false]]);
  s = userListReducer(s, { type: "removed", id: "a" });
  assert.deepEqual(s.users.map((u) => u.id), ["b", "c"]);
  s = userListReducer(s, { type: "page", q: "ann", page: { users: [user("ann")] }, append: false });
  assert.deepEqual(s, { q: "ann", users: [user("ann")], nextCursor: null });
  const before = s;
  assert.equal(userListReducer(s, { type: "page", q: "", page: { users: [user("zed")] }, append: true }), before, "a page of another search");
  assert.equal(enabledAdmins([user("a", "admin"), user("b", "admin", true), user("c")]), 1);
  assert.equal(accountIdOf("user:abc"), "abc");
  assert.equal(accountIdOf("eve-chat-user"), null);
});

test("the 30-day chart: every UTC day up to today, rows of a day summed, bars scaled to the largest day", () => {
  const now = Date.parse("2026-12-01T23:30:00Z");
  const days = lastDays(
    [
      { day: "2026-12-01", tokensIn: 100, tokensOut: 50 },
      { day: "2026-12-01", tokensIn: 10, tokensOut: 5 },
      { day: "2026-11-02", tokensIn: 1, tokensOut: 1 },
      { day: "2026-11-01", tokensIn: 999, tokensOut: 999 },
    ],
    30,
    now,
  );
  assert.equal(days.length, 30);
  assert.equal(days[0]!.day, "2026-11-02");
  assert.equal(days[29]!.day, "2026-12-01");
  assert.deepEqual(days[29], { day: "2026-12-01", tokensIn: 110, tokensOut: 55 });
  assert.deepEqual(days[0], { day: "2026-11-02", tokensIn: 1, tokensOut: 1 });
  assert.equal(days.filter((d) => d.tokensIn === 0).length, 28, "missing days are zero; the day out of the window is left out");
  const { bars, max } = chartBars(days, 600, 120);
  assert.equal(max, 165);
  assert.equal(bars.length, 30);
  assert.equal(bars[29]!.inHeight + bars[29]!.outHeight, 120);
  assert.equal(bars[29]!.inHeight, 80);
  assert.equal(bars[1]!.inHeight, 0);
  assert.equal(bars[1]!.x, 20 + 1);
  const empty = chartBars(lastDays([], 30, now), 600, 120);
  assert.equal(empty.max, 0);
  assert.ok(empty.bars.every((b) => b.inHeight === 0 && b.outHeight === 0), "an empty month draws no bars");
  assert.deepEqual(
    byModel([
      { day: "d1", model: "a", tokensIn: 1, tokensOut: 1, calls: 1 },
      { day: "d2", model: "b", tokensIn: 5, tokensOut: 5, calls: 2 },
      { day: "d2", model: "a", tokensIn: 1, tokensOut: 0, calls: 1 },
    ]),
    [
      { model: "b", tokensIn: 5, tokensOut: 5, calls: 2 },
      { model: "a", tokensIn: 2, tokensOut: 1, calls: 2 },
    ],
  );
});

// ---- formatting ------------------------------------------------------------------------------

test("bytes, token counts, days and dates are formatted in both languages", async () => {
  await setLocale("en");
  assert.equal(formatBytes(512), "512 B");
  assert.equal(formatBytes(1536), "1.5 KB");
  assert.equal(formatBytes(5 * MB), "5.0 MB");
  assert.equal(formatBytes(3 * 1024 * MB), "3.0 GB");
  assert.equal(formatCompact(9999), "9,999");
  assert.equal(formatCompact(123456), "123.5K");
  assert.equal(formatCompact(2_500_000), "2.5M");
  assert.equal(formatDay("2026-12-01"), "Dec 1");
  assert.equal(formatDay("not-a-day"), "not-a-day");
  assert.equal(formatDate("2026-12-01T10:00:00Z"), "Dec 1, 2026");
  await setLocale("zh-CN");
  try {
    assert.equal(formatBytes(3 * 1024 * MB), "3.0 GB");
    assert.equal(formatCompact(123456), "12.3万");
    assert.equal(formatCompact(9999), "9,999");
    assert.equal(formatDay("2026-12-01"), "12月1日");
    assert.equal(formatDate("2026-12-01T10:00:00Z"), "2026年12月1日");
  } finally {
    await setLocale("en");
  }
});

test("the composer's model: this browser's choice first, then the account's default", () => {
  const models = [
    { id: "a", label: "A", provider: "x" },
    { id: "b", label: "B", provider: "x" },
  ];
  const store = new Map<string, string>();
  const storage = { getItem: (k: string) => store.get(k) ?? null, setItem: (k: string, v: string) => void store.set(k, v) } as unknown as Storage;
  try {
    assert.equal(chosenModel(models, null, storage)?.id, "a");
    setAccountDefaultModel("b");
    assert.equal(chosenModel(models, null, storage)?.id, "b");
    store.set("eve-chat.model", "a");
    assert.equal(chosenModel(models, null, storage)?.id, "a", "the browser's last choice wins");
    store.set("eve-chat.model", "gone");
    assert.equal(chosenModel(models, null, storage)?.id, "b", "a model no longer listed falls back to the account's");
    setAccountDefaultModel("also-gone");
    assert.equal(chosenModel(models, null, storage)?.id, "a");
  } finally {
    setAccountDefaultModel(null);
  }
});

test("refusals read in the words of the form that was refused (docs/accounts.md, as built)", () => {
  assert.equal(refusalKey("conflict", 409, "open"), "email_taken");
  assert.equal(refusalKey("conflict", 409, "invite"), "email_taken");
  assert.equal(refusalKey("forbidden", 403, "invite"), "email_mismatch");
  assert.equal(refusalKey("forbidden", 403, "setup"), "setup_token_invalid");
  assert.equal(refusalKey("signup_closed", 403, "open"), null);
  assert.equal(refusalKey("invite_invalid", 404, "invite"), null);
  assert.equal(refusalKey("invite_invalid", 404, "reset"), "reset_invalid");
  assert.equal(refusalKey("bad_request", 400, "reset"), null);
  assert.equal(refusalKey("conflict", 409, "token"), "token_limit");
  assert.equal(refusalKey("forbidden", 403, "token"), null);
});
