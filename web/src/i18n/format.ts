// Filling catalogue strings: `{name}` placeholders, plural forms by `Intl.PluralRules`, numbers
// by `Intl.NumberFormat` of the chosen locale. Dependency-free (the early script imports it).

/** Plural forms of one message: `other` always, the rest as the language needs them. */
export type Plural = Partial<Record<Intl.LDMLPluralRule, string>> & { other: string };

export type Vars = Record<string, string | number>;

/** `template` with every `{name}` replaced; numbers are formatted for `locale`. Unknown names stay. */
export function fmt(template: string, vars: Vars = {}, locale = "en"): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const v = vars[name];
    if (v === undefined) return whole;
    return typeof v === "number" ? new Intl.NumberFormat(locale).format(v) : v;
  });
}

/** The form of `forms` for `count` in `locale`, filled (`{count}` included). */
export function plural(forms: Plural, count: number, vars: Vars = {}, locale = "en"): string {
  const rule = new Intl.PluralRules(locale).select(count);
  return fmt(forms[rule] ?? forms.other, { count, ...vars }, locale);
}

/** The placeholder names of a template, sorted (the catalogues must agree on them). */
export function placeholders(template: string): string[] {
  return [...new Set([...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!))].sort();
}
