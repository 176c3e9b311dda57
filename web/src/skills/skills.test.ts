import assert from "node:assert/strict";
import { test } from "node:test";
import { importRequest } from "./skills";
import { skillsPageCatalogues } from "../i18n/skills-page";

test("an imported file is posted as the skills API takes it", () => {
  const zip = importRequest({ name: "review.zip", type: "application/zip" }, null, true);
  assert.deepEqual([zip.path, zip.contentType], ["/api/skills?global=true", "application/zip"]);
  const md = importRequest({ name: "SKILL.md", type: "text/markdown" }, "---\ndescription: d\n---\n", false);
  assert.deepEqual([md.path, md.contentType], ["/api/skills", "application/json"]);
  assert.deepEqual(JSON.parse(md.body as string), { skillMd: "---\ndescription: d\n---\n", global: false });
  const named = importRequest({ name: "release-notes.md", type: "" }, "x", false);
  assert.equal(JSON.parse(named.body as string).name, "release-notes");
});

test("the skills section's strings exist in both languages with the same placeholders", () => {
  const { en, "zh-CN": zh } = skillsPageCatalogues;
  const holes = (v: unknown): string[] => JSON.stringify(v).match(/\{\w+\}/g)?.sort() ?? [];
  for (const key of Object.keys(en) as (keyof typeof en)[]) {
    assert.ok(zh[key] !== undefined, key);
    assert.deepEqual(holes(zh[key]), holes(en[key]), key);
    if (typeof en[key] === "string") assert.notEqual(zh[key], en[key], key);
  }
});
