// The web app's message catalogues (web/src/i18n/*.ts), compiled with the web build's esbuild
// so that browser tests compare what they see with the very strings the app ships.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const webDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "web");

export async function loadCatalogues() {
  const { build } = await import(join(webDir, "node_modules", "esbuild", "lib", "main.js"));
  const out = {};
  for (const [locale, file, name] of [["en", "en.ts", "en"], ["zh-CN", "zh-CN.ts", "zhCN"]]) {
    const result = await build({ entryPoints: [join(webDir, "src", "i18n", file)], bundle: true, write: false, format: "esm", platform: "neutral", logLevel: "warning" });
    const code = result.outputFiles[0].text;
    const mod = await import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`);
    out[locale] = mod[name];
  }
  // The project page's own strings (a chunk of their own, web/src/i18n/project-page.ts) read as
  // part of `projects`, as the page shows them.
  const projectPageCatalogues = await loadChunkCatalogues("project-page.ts", "projectPageCatalogues");
  for (const locale of Object.keys(out)) out[locale].projects = { ...out[locale].projects, ...projectPageCatalogues[locale] };
  // The lazily loaded sections' own strings: the skills section (`skills`) and the admin
  // page's Settings tab (`adminSettings`).
  // The account pages' and the admin page's own strings (lazy since issue 35) read as the
  // sections they came from (`account`, `tokens`, `admin`), as the pages show them.
  const accountPage = await loadChunkCatalogues("account-page.ts", "accountPageCatalogues");
  const adminPage = await loadChunkCatalogues("admin-page.ts", "adminPageCatalogues");
  for (const locale of Object.keys(out)) {
    const { tokens, ...account } = accountPage[locale];
    out[locale].account = { ...out[locale].account, ...account };
    out[locale].tokens = tokens;
    out[locale].admin = adminPage[locale];
  }
  for (const [file, exported, key] of [["skills-page.ts", "skillsPageCatalogues", "skills"], ["admin-settings.ts", "adminSettingsCatalogues", "adminSettings"]]) {
    const built = await build({ entryPoints: [join(webDir, "src", "i18n", file)], bundle: true, write: false, format: "esm", platform: "neutral", logLevel: "warning" });
    const catalogues = (await import(`data:text/javascript;base64,${Buffer.from(built.outputFiles[0].text).toString("base64")}`))[exported];
    for (const locale of Object.keys(out)) out[locale][key] = catalogues[locale];
  }
  return out;
}

/** A lazily loaded catalogue of web/src/i18n (`file`), its export `name`: `{en, "zh-CN"}`. */
export async function loadChunkCatalogues(file, name) {
  const { build } = await import(join(webDir, "node_modules", "esbuild", "lib", "main.js"));
  const page = await build({ entryPoints: [join(webDir, "src", "i18n", file)], bundle: true, write: false, format: "esm", platform: "neutral", logLevel: "warning" });
  const mod = await import(`data:text/javascript;base64,${Buffer.from(page.outputFiles[0].text).toString("base64")}`);
  return mod[name];
}

/** `{name}` placeholders filled, as web/src/i18n/format.ts does (strings only). */
export const fill = (template, vars) => template.replace(/\{(\w+)\}/g, (whole, k) => (k in vars ? String(vars[k]) : whole));
