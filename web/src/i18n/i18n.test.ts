import assert from "node:assert/strict";
import { test } from "node:test";
import { en } from "./en";
import { zhCN } from "./zh-CN";
import { fmt, placeholders, plural, type Plural } from "./format";
import { detectLocale, initialLocale, LOCALE_KEY, type Locale } from "./detect";
import { accountPageCatalogues } from "./account-page";
import { adminPageCatalogues } from "./admin-page";
import { adminMcpCatalogues } from "./admin-mcp";
import { adminProvidersCatalogues } from "./admin-providers";
import { adminSettingsCatalogues } from "./admin-settings";
import { approvalCardCatalogues } from "./approval-card";
import { projectPageCatalogues } from "./project-page";
import { skillsPageCatalogues } from "./skills-page";
import { describeAuthError, describeError, formatRelative, formatSize, formatWait, setLocale, t } from "./";
import { ApiError } from "../api";
import { renderItems, reduceLog } from "../chat/events";
import type { EveEvent } from "../api/types";

const isPlural = (v: unknown): v is Plural => !!v && typeof v === "object" && "other" in v && Object.keys(v).every((k) => ["zero", "one", "two", "few", "many", "other"].includes(k));

/** Every leaf of a catalogue: path → string (a plural's forms as path.form). */
function leaves(obj: unknown, path = ""): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(obj as Record<string, unknown>)) {
    const p = path ? `${path}.${k}` : k;
    if (typeof v === "string") out.set(p, v);
    else if (isPlural(v)) for (const [form, s] of Object.entries(v)) out.set(`${p}#${form}`, s as string);
    else if (v && typeof v === "object") for (const [q, s] of leaves(v, p)) out.set(q, s);
    else assert.fail(`${p}: not a string, plural or section`);
  }
  return out;
}

const messageKeys = (m: Map<string, string>) => new Set([...m.keys()].map((k) => k.split("#")[0]!));

/** Every catalogue the app ships: the first-load one and each page's lazy one (en, zh-CN). */
const CATALOGUES: [string, Record<Locale, unknown>][] = [
  ["the first-load catalogue", { en, "zh-CN": zhCN }],
  ["account-page.ts", accountPageCatalogues],
  ["admin-page.ts", adminPageCatalogues],
  ["admin-mcp.ts", adminMcpCatalogues],
  ["admin-providers.ts", adminProvidersCatalogues],
  ["admin-settings.ts", adminSettingsCatalogues],
  ["approval-card.ts", approvalCardCatalogues],
  ["project-page.ts", projectPageCatalogues],
  ["skills-page.ts", skillsPageCatalogues],
];

test("every catalogue: the Chinese one has exactly the English key set", () => {
  let total = 0;
  for (const [name, c] of CATALOGUES) {
    const a = messageKeys(leaves(c.en));
    const b = messageKeys(leaves(c["zh-CN"]));
    assert.deepEqual([...b].filter((k) => !a.has(k)), [], `${name}: keys only in zh-CN`);
    assert.deepEqual([...a].filter((k) => !b.has(k)), [], `${name}: keys missing from zh-CN`);
    assert.ok(a.size > 0, name);
    total += a.size;
  }
  assert.ok(total > 150, `real catalogues (${total} messages)`);
});

test("every catalogue: each Chinese message has the placeholders of its English one, and plurals have `other`", () => {
  for (const [name, c] of CATALOGUES) {
    const e = leaves(c.en);
    const z = leaves(c["zh-CN"]);
    for (const [key, zh] of z) {
      const base = key.split("#")[0]!;
      const english = e.get(key) ?? e.get(`${base}#other`);
      assert.ok(english !== undefined, `${name}: ${key}`);
      assert.deepEqual(placeholders(zh), placeholders(english!), `${name}: placeholders of ${key}`);
    }
    for (const key of messageKeys(e)) {
      if (!e.has(key)) assert.ok(z.has(`${key}#other`), `${name}: ${key} has an "other" form in zh-CN`);
    }
  }
});

test("every Chinese catalogue is Chinese: no English words left outside names and keys", () => {
  // Product, protocol and key names that are written the same in a Chinese UI.
  const allowed = new Set(["eve", "chat", "Spin", "Markdown", "JSON", "Ctrl", "Enter", "token", "KB", "MB", "GB", "API"]);
  // The admin and settings pages also name what an operator types: protocols, providers, file
  // formats and the values of a setting (`name = never, once or always`).
  const operatorNames = new Set(["MCP", "OAuth", "Bearer", "HTTP", "https", "Streamable", "URL", "ID", "OpenAI", "Anthropic", "KiB", "UTC", "PDF", "SKILL", "host", "never", "once", "always"]);
  // ...and configuration keys and paths (`llm_models`, `docs/runtime.md`, `host:port`), names as written.
  const code = /[\w./:-]*[_./:][\w./:-]*/g;
  for (const [name, c] of CATALOGUES) {
    const firstLoad = c.en === en;
    for (const [key, zh] of leaves(c["zh-CN"])) {
      const text = zh.replace(/\{\w+\}/g, "");
      const words = (firstLoad ? text : text.replace(code, "")).match(/[A-Za-z]{2,}/g) ?? [];
      assert.deepEqual(words.filter((w) => !allowed.has(w) && (firstLoad || !operatorNames.has(w))), [], `${name}: ${key}: ${zh}`);
      // A page's message may be a name alone (a provider's kind, `HTTP {status}`).
      const namesOnly = firstLoad ? ["shell.documentTitle", "composer.charCount"].includes(key) : !/[^\s\p{P}]/u.test(text.replace(/[A-Za-z]+/g, ""));
      if (!namesOnly) assert.match(zh, /[\u4e00-\u9fff]/, `${name}: ${key} has Chinese text`);
    }
  }
});

test("placeholders are filled, numbers in the locale's format, unknown names left visible", () => {
  assert.equal(fmt("Deleted “{title}”.", { title: "Plans" }), "Deleted “Plans”.");
  assert.equal(fmt("{count} / {max}", { count: 7600, max: 8000 }, "en"), "7,600 / 8,000");
  assert.equal(fmt("{count} / {max}", { count: 7600, max: 8000 }, "de"), "7.600 / 8.000");
  assert.equal(fmt("Hi {name}", {}), "Hi {name}");
  assert.deepEqual(placeholders("{b} and {a} and {b}"), ["a", "b"]);
});

test("plural forms follow Intl.PluralRules: English one/other, Chinese other only", () => {
  assert.equal(plural(en.usage.tokens, 1, {}, "en"), "1 token");
  assert.equal(plural(en.usage.tokens, 2, {}, "en"), "2 tokens");
  assert.equal(plural(en.usage.tokens, 12345, {}, "en"), "12,345 tokens");
  assert.equal(plural(zhCN.usage.tokens, 1, {}, "zh-CN"), "1 个 token");
  assert.equal(plural(zhCN.usage.tokens, 12345, {}, "zh-CN"), "12,345 个 token");
});

test("language detection: any Simplified Chinese tag is zh-CN, the first supported language wins", () => {
  for (const tag of ["zh", "zh-CN", "zh-SG", "zh-Hans", "zh-Hans-CN", "ZH-cn", "zh_CN"]) assert.equal(detectLocale([tag]), "zh-CN", tag);
  for (const tag of ["en", "en-US", "de-DE", "zh-TW", "zh-HK", "zh-Hant", "zh-Hant-TW", ""]) assert.equal(detectLocale([tag]), "en", tag);
  assert.equal(detectLocale(["en-GB", "zh-CN"]), "en");
  assert.equal(detectLocale(["fr", "zh-CN", "en"]), "zh-CN");
  assert.equal(detectLocale(["zh-TW", "zh-CN"]), "zh-CN");
  assert.equal(detectLocale([]), "en");
});

test("a language chosen in the account menu wins over the browser's; a bad stored value is ignored", () => {
  const store = (v: string | null) => ({ getItem: (k: string) => (k === LOCALE_KEY ? v : null) });
  assert.equal(initialLocale(store("en"), ["zh-CN"]), "en");
  assert.equal(initialLocale(store("zh-CN"), ["en-US"]), "zh-CN");
  assert.equal(initialLocale(store("klingon"), ["zh-CN"]), "zh-CN");
  assert.equal(initialLocale(null, ["zh-SG"]), "zh-CN");
  const throwing = { getItem: () => { throw new Error("denied"); } };
  assert.equal(initialLocale(throwing, ["zh"]), "zh-CN");
});

test("a failed OIDC sign-in is explained by its code in both languages, unknown codes as words", async () => {
  // Every code the auth component redirects with (eve_auth::oidc::OidcError::code, docs/auth.md).
  const codes = ["not_configured", "discovery_failed", "invalid_state", "flow_expired", "flow_used", "unavailable", "provider_error", "token_exchange_failed", "invalid_id_token", "userinfo_failed", "email_required", "https_required", "account_exists"];
  await setLocale("en");
  assert.deepEqual(Object.keys(en.app.authErrors).sort(), [...codes].sort());
  assert.equal(describeAuthError("flow_used"), "this sign-in link was already used; start again");
  assert.equal(describeAuthError("some_new_code"), "some new code");
  assert.equal(describeAuthError("toString"), "toString", "only the catalogue's own codes");
  await setLocale("zh-CN");
  for (const code of codes) assert.equal(describeAuthError(code), zhCN.app.authErrors[code as keyof typeof zhCN.app.authErrors]);
  assert.equal(describeAuthError("flow_used"), "此登录链接已被使用，请重新开始");
  await setLocale("en");
});

test("server errors are shown by code from the catalogue, the server's text as the fallback", async () => {
  await setLocale("en");
  assert.equal(describeError(new ApiError(507, "storage_full", "quota exceeded")), en.errors.storage_full);
  assert.equal(describeError(new ApiError(429, "rate_limited", "too many requests; try again later", 30)), "Too many requests. Try again in 30 seconds.");
  assert.equal(describeError(new ApiError(429, "rate_limited", "x", 600)), "Too many requests. Try again in 10 minutes.");
  assert.equal(describeError(new ApiError(400, "bad_request", "title must not be empty")), "title must not be empty");
  const full = "this chat is full: it may store 1 MB and holds 1 MB; start a new chat or delete old ones";
  assert.equal(describeError(new ApiError(413, "payload_too_large", full)), full, "English keeps the server's specifics");
  assert.equal(describeError(new ApiError(500, "http_500", "Request failed (500).")), "Request failed (500).");
  await setLocale("zh-CN");
  try {
    assert.equal(t, zhCN);
    assert.equal(describeError(new ApiError(507, "storage_full", "quota exceeded")), zhCN.errors.storage_full);
    assert.equal(describeError(new ApiError(401, "unauthorized", "sign in required")), "登录已失效，请重新登录后继续。");
    assert.equal(describeError(new ApiError(429, "rate_limited", "x", 1)), "请求过于频繁。请在 1 秒后重试。");
    assert.equal(describeError(new ApiError(500, "http_500", "Request failed (500).")), "请求失败（500）。");
    assert.equal(describeError(new ApiError(413, "payload_too_large", "this chat is full")), zhCN.errors.payload_too_large);
    // A code the catalogue does not know: the server's words, untranslated, rather than nothing.
    assert.equal(describeError(new ApiError(409, "conflict", "the chat changed")), "the chat changed");
    assert.equal(formatWait(45), "45 秒");
  } finally {
    await setLocale("en");
  }
});

test("dates, relative times and sizes are localised", async () => {
  const now = Date.parse("2026-12-01T12:00:00Z");
  assert.equal(formatRelative("2026-12-01T09:00:00Z", now), "3 hours ago");
  assert.equal(formatRelative("2026-11-30T12:00:00Z", now), "yesterday");
  assert.equal(formatRelative("not a date", now), "not a date");
  assert.equal(formatSize(1536), "1.5 KB");
  await setLocale("zh-CN");
  try {
    assert.equal(formatRelative("2026-12-01T09:00:00Z", now), "3小时前");
    assert.equal(formatRelative("2026-11-30T12:00:00Z", now), "昨天");
    assert.equal(formatSize(3 * 1024 * 1024), "3.0 MB");
  } finally {
    await setLocale("en");
  }
});

test("the app's own notices follow the language; a server's failure text is kept as sent", async () => {
  const ev = (type: string, data: Record<string, unknown>, i: number): EveEvent => ({ type, data, meta: { id: `e${i}` } }) as unknown as EveEvent;
  const events = [
    ev("session.started", { sessionId: "s" }, 0),
    ev("turn.started", { turnId: "turn_0", sequence: 0 }, 1),
    ev("message.received", { turnId: "turn_0", message: "hi", parts: [{ type: "text", text: "hi" }] }, 2),
    ev("turn.cancelled", { turnId: "turn_0" }, 3),
    ev("turn.started", { turnId: "turn_1", sequence: 1 }, 4),
    ev("message.received", { turnId: "turn_1", message: "again", parts: [{ type: "text", text: "again" }] }, 5),
    ev("turn.failed", { turnId: "turn_1", message: "provider said no" }, 6),
  ];
  const notices = () => renderItems(reduceLog(events)).filter((i) => i.kind === "notice");
  const [stopped, failed] = notices();
  assert.equal(stopped?.kind === "notice" && stopped.id, "responseStopped");
  assert.equal(failed?.kind === "notice" && failed.text, "provider said no");
  assert.equal(failed?.kind === "notice" && failed.id, undefined);
  assert.equal(t.notices.responseStopped, "Response stopped.");
  await setLocale("zh-CN");
  try {
    assert.equal(t.notices.responseStopped, "已停止回答。");
  } finally {
    await setLocale("en");
  }
});
