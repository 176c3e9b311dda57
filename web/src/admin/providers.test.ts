import assert from "node:assert/strict";
import { test } from "node:test";
import { modelsFromText, parseMaxTokens, withEnabled, withModel } from "./providers";
import { adminProvidersCatalogues } from "../i18n/admin-providers";

test("typed models keep their order, appear once and keep what the provider had", () => {
  const current = [{ model: "a", label: "A", enabled: false, shadowed: true }];
  assert.deepEqual(modelsFromText(" b\na, b\n\n c ", current), [
    { model: "b", enabled: true },
    { model: "a", label: "A", enabled: false },
    { model: "c", enabled: true },
  ]);
  assert.deepEqual(modelsFromText(""), []);
});

test("a switch changes one model and a tested model is added once", () => {
  const models = [{ model: "a", enabled: true }, { model: "b", enabled: true }];
  assert.deepEqual(withEnabled(models, "b", false), [{ model: "a", enabled: true }, { model: "b", enabled: false }]);
  assert.equal(withModel(models, "a").length, 2);
  assert.deepEqual(withModel(models, "c").at(-1), { model: "c", enabled: true });
});

test("max tokens is empty for the default or a positive whole number", () => {
  assert.equal(parseMaxTokens(" "), null);
  assert.equal(parseMaxTokens("512"), 512);
  for (const bad of ["0", "-1", "1.5", "lots"]) assert.equal(parseMaxTokens(bad), undefined, bad);
});

test("the Providers tab's strings exist in both languages with the same placeholders", () => {
  const { en, "zh-CN": zh } = adminProvidersCatalogues;
  const holes = (v: unknown): string[] => JSON.stringify(v).match(/\{\w+\}/g)?.sort() ?? [];
  const walk = (a: Record<string, unknown>, b: Record<string, unknown>, path: string) => {
    for (const key of Object.keys(a)) {
      const at = `${path}${key}`;
      assert.ok(b[key] !== undefined, at);
      if (typeof a[key] === "object") walk(a[key] as Record<string, unknown>, b[key] as Record<string, unknown>, `${at}.`);
      else {
        assert.deepEqual(holes(b[key]), holes(a[key]), at);
        if (!/HTTP|Anthropic/.test(String(a[key]))) assert.notEqual(b[key], a[key], at);
      }
    }
  };
  walk(en, zh, "");
  const actions = ["provider_created", "provider_updated", "provider_deleted", "provider_tested", "secrets_rotated"];
  assert.deepEqual(Object.keys(en.auditActions).sort(), actions.sort());
  assert.deepEqual(Object.keys(zh.auditActions).sort(), actions.sort());
});
