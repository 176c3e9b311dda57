import assert from "node:assert/strict";
import { test } from "node:test";
import { draftOf, parseApprovals, patchOf, type SettingsView } from "./settings-data";
import { adminSettingsCatalogues } from "../i18n/admin-settings";

const view: SettingsView = {
  settings: { instructions: null, defaultModel: null, toolDisplay: "full", logModelRequests: null, signupDomains: null, defaultTokensPerDay: null, toolApprovals: null, outboundAllowedHosts: null },
  bootstrap: { instructions: "You are eve.", defaultModel: "demo/eve-demo", toolDisplay: "collapsed", logModelRequests: false, signupDomains: ["open.example"], defaultTokensPerDay: 0, toolApprovals: {}, outboundAllowedHosts: [] },
};

test("the draft shows what applies: the stored value, else the bootstrap", () => {
  const d = draftOf(view);
  assert.equal(d.instructions, "You are eve.");
  assert.equal(d.toolDisplay, "full");
  assert.equal(d.signupDomains, "open.example");
  assert.equal(d.defaultTokensPerDay, "0");
  assert.equal(d.defaultModel, "", "no model chosen: the first applies");
});

test("a saved draft sends only what changed", () => {
  const d = draftOf(view);
  assert.deepEqual(patchOf(view, d), { patch: {} });
  const changed = { ...d, signupDomains: "a.example,  b.example", defaultTokensPerDay: "1,000", toolApprovals: "get_weather = always\n\nremember: once", logModelRequests: true };
  assert.deepEqual(patchOf(view, changed), {
    patch: { signupDomains: ["a.example", "b.example"], defaultTokensPerDay: 1000, toolApprovals: { get_weather: "always", remember: "once" }, logModelRequests: true },
  });
  assert.deepEqual(patchOf(view, { ...d, defaultTokensPerDay: "-1" }), { error: "tokens" });
  assert.deepEqual(patchOf(view, { ...d, toolApprovals: "a = always\nb = maybe" }), { error: "approvals", line: 2 });
  assert.deepEqual(parseApprovals("x=never"), { x: "never" });
});

test("the settings tab's strings exist in both languages with the same placeholders", () => {
  const { en, "zh-CN": zh } = adminSettingsCatalogues;
  const holes = (v: unknown): string[] => JSON.stringify(v).match(/\{\w+\}/g)?.sort() ?? [];
  for (const key of Object.keys(en) as (keyof typeof en)[]) {
    assert.ok(zh[key] !== undefined, key);
    assert.deepEqual(holes(zh[key]), holes(en[key]), key);
    if (typeof en[key] === "string") assert.notEqual(zh[key], en[key], key);
  }
  for (const key of Object.keys(en.labels)) assert.ok(zh.labels[key] && zh.hints[key], key);
});
