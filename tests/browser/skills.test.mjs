// The settings page's Skills section in the browser (issue 22, docs/skills.md), in local-dev
// (the one local developer manages global skills too), in each language (English, then
// Simplified Chinese, Chromium's `locale`): the sidebar links the settings page; the section
// starts empty; a SKILL.md is imported as the developer's own skill and listed with its
// description; one with bad frontmatter is refused inline with eve's reason and nothing is
// added; a global skill is imported; the developer's switch turns a skill off (the server
// keeps it) and on again; deleting one removes it.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { apiCall, launchBrowser, newPage, screenshot, startApp } from "./harness.mjs";
import { fill, loadCatalogues } from "./catalogues.mjs";

const PASSES = [
  { locale: "en-US", lang: "en", skill: "release-notes", global: "house-style" },
  { locale: "zh-CN", lang: "zh-CN", skill: "weekly-report", global: "team-glossary" },
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

const skillMd = (name, description) => `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\n1. Read the changes.\n2. Write them up.\n`;

async function importFile(page, name, text) {
  await page.setInputFiles(".skills input[type=file]", { name, mimeType: "text/markdown", buffer: Buffer.from(text) });
}

const skillsOnServer = async (app) => (await apiCall(app.baseUrl, "GET", "/api/skills")).json.skills;

for (const pass of PASSES) {
  describe(`the skills section in ${pass.lang}`, () => {
    let app;
    let c;
    let s;
    before(async () => {
      c = cat[pass.lang];
      s = c.skills;
      app = await startApp({});
    });
    after(async () => {
      await app?.stop();
    });

    test("import, refuse bad frontmatter, switch off and on, delete", async () => {
      const page = await newPage(browser, app.baseUrl, { locale: pass.locale });
      await page.goto("/");
      await page.click(`.sidebar-footer a:has-text("${c.account.settingsTitle}")`);
      await page.waitForURL(/\/settings$/);
      await page.locator("#skills-heading", { hasText: s.title }).waitFor();
      await page.locator(".skills .muted", { hasText: s.none }).waitFor();

      const description = pass.lang === "en" ? "Write release notes from merged changes" : "根据本周的变更写周报";
      await importFile(page, "SKILL.md", skillMd(pass.skill, description));
      await page.locator(".toast", { hasText: fill(s.imported, { name: "SKILL.md" }) }).first().waitFor();
      const row = page.locator(`tr[data-skill="${pass.skill}"]`);
      await row.waitFor();
      assert.match(await row.textContent(), new RegExp(description));
      assert.equal(await row.locator("td").nth(2).textContent(), s.personal);

      // Bad frontmatter: eve's reason, inline; nothing added.
      await importFile(page, "broken.md", "no frontmatter here\n");
      const error = page.locator(".skills .form-error");
      await error.filter({ hasText: "frontmatter" }).waitFor();
      assert.ok((await error.textContent()).startsWith(fill(s.importFailed, { name: "broken.md", error: "" }).trim().slice(0, 4)));
      assert.equal((await skillsOnServer(app)).length, 1);

      // A global skill (the local developer is an admin).
      await page.check(".skills .inline-form input[type=checkbox]");
      await importFile(page, "SKILL.md", skillMd(pass.global, "House style for every answer"));
      const globalRow = page.locator(`tr[data-skill="${pass.global}"]`);
      await globalRow.waitFor();
      assert.equal(await globalRow.locator("td").nth(2).textContent(), s.global);
      await screenshot(page, `skills-${pass.lang}-listed`);

      // The switch: off, kept by the server, on again.
      // Clicked, not `uncheck()`ed: the box shows the server's state, redrawn once it answers.
      const toggle = page.getByLabel(fill(s.enable, { name: pass.global }));
      await toggle.click();
      await page.waitForFunction((name) => !document.querySelector(`tr[data-skill="${name}"] input[type=checkbox]`)?.checked, pass.global);
      const off = (await skillsOnServer(app)).find((k) => k.name === pass.global);
      assert.equal(off.enabled, false);
      await page.reload();
      await page.locator(`tr[data-skill="${pass.global}"]`).waitFor();
      assert.equal(await page.getByLabel(fill(s.enable, { name: pass.global })).isChecked(), false);
      await page.getByLabel(fill(s.enable, { name: pass.global })).click();
      await page.waitForFunction((name) => document.querySelector(`tr[data-skill="${name}"] input[type=checkbox]`)?.checked, pass.global);
      assert.equal((await skillsOnServer(app)).find((k) => k.name === pass.global).enabled, true);

      // Delete one's own.
      await page.click(`button[aria-label="${fill(s.deleteLabel, { name: pass.skill })}"]`);
      await page.locator(".toast", { hasText: fill(s.deleted, { name: pass.skill }) }).first().waitFor();
      await page.locator(`tr[data-skill="${pass.skill}"]`).waitFor({ state: "detached" });
      assert.deepEqual((await skillsOnServer(app)).map((k) => k.name), [pass.global]);
      assert.deepEqual(page.problems, []);
      await page.context().close();
    });
  });
}
