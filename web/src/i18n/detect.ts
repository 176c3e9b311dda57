// Which language the UI speaks: the one chosen in the account menu (localStorage), else the
// browser's. Dependency-free: the early script runs it before first paint.

export type Locale = "en" | "zh-CN";
export const LOCALES: readonly Locale[] = ["en", "zh-CN"];
export const DEFAULT_LOCALE: Locale = "en";
/** localStorage key of the language chosen in the account menu. */
export const LOCALE_KEY = "eve-chat.locale";

/** The supported locale for a list of BCP 47 tags, first match wins: any Simplified Chinese
 * (zh, zh-CN, zh-SG, zh-Hans-*) is zh-CN; Traditional Chinese (zh-TW, zh-HK, zh-MO, zh-Hant)
 * and everything else is English. */
export function detectLocale(languages: readonly string[]): Locale {
  for (const raw of languages) {
    const tag = raw.trim().toLowerCase().replace(/_/g, "-");
    if (!tag) continue;
    if (tag === "en" || tag.startsWith("en-")) return "en";
    if (tag === "zh" || tag.startsWith("zh-")) {
      if (/^zh-(hant|tw|hk|mo)(-|$)/.test(tag)) continue;
      return "zh-CN";
    }
  }
  return DEFAULT_LOCALE;
}

export function isLocale(v: unknown): v is Locale {
  return typeof v === "string" && (LOCALES as readonly string[]).includes(v);
}

/** The stored choice, if any and still supported. */
export function storedLocale(store: Pick<Storage, "getItem"> | null): Locale | null {
  try {
    const v = store?.getItem(LOCALE_KEY);
    return isLocale(v) ? v : null;
  } catch {
    return null;
  }
}

/** The locale this page starts in. */
export function initialLocale(store: Pick<Storage, "getItem"> | null, languages: readonly string[]): Locale {
  return storedLocale(store) ?? detectLocale(languages);
}
