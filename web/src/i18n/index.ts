// The app's language: the catalogue in use (`t`, a live binding that `setLocale` swaps), the
// locale-aware formatters, and server errors shown by their code. English is in the first-load
// bundle; another language's catalogue is a chunk of its own, loaded before the app renders in
// it (the early script has already put the prerendered shell into that language, so nothing
// flashes) or when the user switches to it.
import { ApiError } from "../api";
import { en, type Messages } from "./en";
import { fmt as fill, plural as pick, type Plural, type Vars } from "./format";
import { DEFAULT_LOCALE, LOCALE_KEY, initialLocale, type Locale } from "./detect";

export type { Messages } from "./en";
export type { Locale } from "./detect";
export { LOCALES, detectLocale } from "./detect";

const loaded: Partial<Record<Locale, Messages>> = { en };
const loaders: Record<Locale, () => Promise<Messages>> = {
  en: async () => en,
  "zh-CN": () => import("./zh-CN").then((m) => m.zhCN),
};

/** The catalogue of `l`, loaded on first use. */
export async function loadCatalogue(l: Locale): Promise<Messages> {
  return (loaded[l] ??= await loaders[l]());
}

/**
 * The accessor of a lazy catalogue (a page's own strings, in every language, shipped in that
 * page's chunk): its strings in the current language, read at render time.
 */
export function inLocale<T>(catalogues: Record<Locale, T>): () => T {
  return () => catalogues[locale];
}

/** How each language names itself in the switcher. */
export const LANGUAGE_NAMES: Record<Locale, string> = { en: "English", "zh-CN": "简体中文" };

/** The current catalogue. */
export let t: Messages = en;
export let locale: Locale = DEFAULT_LOCALE;

const listeners = new Set<(l: Locale) => void>();

/**
 * Switches the UI language (and `<html lang>`, the document title) once its catalogue is
 * loaded; `remember` keeps the choice. A catalogue that cannot be loaded leaves the language as
 * it was and rejects.
 */
export async function setLocale(next: Locale, remember = false): Promise<void> {
  const messages = await loadCatalogue(next);
  locale = next;
  t = messages;
  if (typeof document !== "undefined") {
    document.documentElement.lang = next;
    document.title = t.shell.documentTitle;
  }
  if (remember) {
    try {
      localStorage.setItem(LOCALE_KEY, next);
    } catch {
      // Storage refused: the choice lasts for this page.
    }
  }
  for (const l of listeners) l(next);
}

export function onLocaleChange(fn: (l: Locale) => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** The locale the page starts in (stored choice, else the browser's languages). */
export function startLocale(): Locale {
  let store: Storage | null = null;
  try {
    store = localStorage;
  } catch {
    // Storage disabled.
  }
  return initialLocale(store, typeof navigator === "undefined" ? [] : navigator.languages ?? [navigator.language]);
}

/** A catalogue string with its placeholders filled, numbers in the current locale. */
export function fmt(template: string, vars?: Vars): string {
  return fill(template, vars, locale);
}

/** The plural form for `count`, filled. */
export function plural(forms: Plural, count: number, vars?: Vars): string {
  return pick(forms, count, vars, locale);
}

export function formatNumber(n: number): string {
  return new Intl.NumberFormat(locale).format(n);
}

/** Bytes as B / KB / MB, numbers localised. */
export function formatSize(n: number): string {
  const num = (v: number, digits: number) => new Intl.NumberFormat(locale, { maximumFractionDigits: digits, minimumFractionDigits: digits }).format(v);
  return n < 1024 ? `${num(n, 0)} B` : n < 1024 * 1024 ? `${num(n / 1024, 1)} KB` : `${num(n / 1024 / 1024, 1)} MB`;
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["year", 365 * 86400],
  ["month", 30 * 86400],
  ["week", 7 * 86400],
  ["day", 86400],
  ["hour", 3600],
  ["minute", 60],
];

/** "3 hours ago" / "3小时前" for `iso` relative to `now`; an unreadable date is returned as is. */
export function formatRelative(iso: string, now = Date.now()): string {
  const when = Date.parse(iso);
  if (!Number.isFinite(when)) return iso;
  const secs = Math.round((when - now) / 1000);
  const rtf = new Intl.RelativeTimeFormat(locale, { numeric: "auto" });
  for (const [unit, size] of UNITS) if (Math.abs(secs) >= size) return rtf.format(Math.round(secs / size), unit);
  return rtf.format(0, "minute");
}

/** A date and time for tooltips, in the current locale. */
export function formatDateTime(iso: string): string {
  const when = Date.parse(iso);
  if (!Number.isFinite(when)) return iso;
  return new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "short" }).format(when);
}

/** A wait in seconds as the catalogue says it (minutes from two minutes on). */
export function formatWait(seconds: number): string {
  return seconds >= 120 ? plural(t.errors.minutes, Math.ceil(seconds / 60)) : plural(t.errors.seconds, seconds);
}

/** Codes whose server text carries specifics (which limit, how full) in English: an English UI
 * shows it as sent, another language its catalogue's general text. */
const SPECIFIC_IN_ENGLISH = new Set(["payload_too_large", "too_many_streams", "quota_exceeded"]);

/**
 * What to tell the user about a failed call: the catalogue's text for the error's code, the
 * server's own text when the catalogue has none (it is the more specific), with the wait of a
 * rate limit appended.
 */
/**
 * Why an OIDC sign-in failed, from the `authError` code the callback redirected with: the
 * catalogue's words for a known code, else the code itself as words (`some_code` → "some code").
 */
export function describeAuthError(code: string): string {
  const known = (t.app.authErrors as Record<string, string>)[code];
  return Object.hasOwn(t.app.authErrors, code) && known ? known : code.replace(/_/g, " ");
}

export function describeError(err: unknown): string {
  if (!(err instanceof ApiError)) return err instanceof Error ? err.message : String(err);
  const specific = locale === "en" && SPECIFIC_IN_ENGLISH.has(err.code) && !!err.message;
  const known = specific ? undefined : (t.errors as Record<string, unknown>)[err.code];
  // api.ts's text for an error response without a readable body.
  const generic = !err.message || err.message === `Request failed (${err.status}).`;
  let text = typeof known === "string" ? known : generic ? fmt(t.errors.requestFailed, { status: err.status }) : err.message;
  if (err.status === 429 && err.retryAfter) text = fmt(t.errors.retryIn, { error: text, wait: formatWait(err.retryAfter) });
  return text;
}

/** Storage amounts: B, KB, MB, GB (binary units, as the server's limits are), localised. */
export function formatBytes(n: number): string {
  if (n >= 1024 ** 3) {
    return `${new Intl.NumberFormat(locale, { maximumFractionDigits: 1, minimumFractionDigits: 1 }).format(n / 1024 ** 3)} GB`;
  }
  return formatSize(n);
}

/** Large counts short, as the language writes them: 12.3K / 1.2万 (exact below 10,000). */
export function formatCompact(n: number): string {
  if (Math.abs(n) < 10_000) return formatNumber(n);
  return new Intl.NumberFormat(locale, { notation: "compact", maximumFractionDigits: 1 }).format(n);
}

/** A UTC day `YYYY-MM-DD` as month and day ("Dec 1" / "12月1日"); unreadable: as is. */
export function formatDay(day: string): string {
  const when = Date.parse(`${day}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || !Number.isFinite(when)) return day;
  return new Intl.DateTimeFormat(locale, { month: "short", day: "numeric", timeZone: "UTC" }).format(when);
}

/** A date without the time ("Dec 1, 2026" / "2026年12月1日"); unreadable: as is. */
export function formatDate(iso: string): string {
  const when = Date.parse(iso);
  if (!Number.isFinite(when)) return iso;
  return new Intl.DateTimeFormat(locale, { dateStyle: "medium" }).format(when);
}
