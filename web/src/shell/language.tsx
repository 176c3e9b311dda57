// The language switch in the top bar, next to the account control: English / 简体中文. Each
// language is named in itself, so the switch reads the same before and after.
import { LANGUAGE_NAMES, LOCALES, t, type Locale } from "../i18n";

export function LanguageSwitch({ value, onChange }: { value: Locale; onChange(l: Locale): void }) {
  return (
    <label class="chip language-switch" title={t.shell.language}>
      <span class="sr-only">{t.shell.language}</span>
      <select
        id="language-switch"
        aria-label={t.shell.language}
        value={value}
        onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value as Locale)}
      >
        {LOCALES.map((l) => (
          <option key={l} value={l} lang={l}>
            {LANGUAGE_NAMES[l]}
          </option>
        ))}
      </select>
    </label>
  );
}
