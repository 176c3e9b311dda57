import assert from "node:assert/strict";
import { test } from "node:test";
import { adminMcpCatalogues } from "../i18n/admin-mcp";
import { annotationBadges, createBody, emptyForm, formOf, patchBody, toolTitle, type McpServer } from "./mcp-servers";

const server: McpServer = {
  id: "mcp_1",
  name: "docs",
  displayName: "Docs",
  description: "",
  url: "https://mcp.example.com/mcp",
  auth: "bearer",
  hasToken: true,
  keyUnreadable: false,
  enabled: true,
  tools: [],
  toolsAt: null,
  toolsError: null,
  readOnly: false,
};

test("a new server is posted with what was typed, a token only for bearer", () => {
  const body = createBody({ ...emptyForm, name: " docs ", url: "https://mcp.example.com/mcp ", token: "t" });
  assert.deepEqual(body, { name: "docs", url: "https://mcp.example.com/mcp", auth: "none" });
  const bearer = createBody({ ...emptyForm, name: "d", url: "https://a.example/", auth: "bearer", token: " k ", displayName: "D" });
  assert.deepEqual(bearer, { name: "d", url: "https://a.example/", auth: "bearer", token: "k", displayName: "D" });
});

test("an edit sends only what changed, and an empty token keeps the stored one", () => {
  assert.deepEqual(patchBody(server, formOf(server)), {});
  assert.deepEqual(patchBody(server, { ...formOf(server), url: "https://b.example/mcp", token: "new" }), { url: "https://b.example/mcp", token: "new" });
  assert.deepEqual(patchBody(server, { ...formOf(server), auth: "oauth", token: "ignored" }), { auth: "oauth" });
});

test("a tool shows the annotations its server set to true, and its title", () => {
  assert.deepEqual(annotationBadges({ readOnlyHint: true, destructiveHint: false, openWorldHint: true, idempotentHint: "yes" }), ["readOnlyHint", "openWorldHint"]);
  assert.deepEqual(annotationBadges(null), []);
  assert.equal(toolTitle({ name: "echo", description: "", annotations: { title: "Echo Tool" } }), "Echo Tool");
  assert.equal(toolTitle({ name: "echo", description: "", annotations: null }), null);
});

test("the MCP servers tab's strings exist in both languages with the same placeholders", () => {
  const { en, "zh-CN": zh } = adminMcpCatalogues;
  const holes = (v: unknown): string[] => JSON.stringify(v).match(/\{\w+\}/g)?.sort() ?? [];
  for (const key of Object.keys(en) as (keyof typeof en)[]) {
    assert.ok(zh[key] !== undefined, key);
    assert.deepEqual(holes(zh[key]), holes(en[key]), key);
    if (typeof en[key] === "string") assert.notEqual(zh[key], en[key], key);
    if (typeof en[key] === "object") assert.deepEqual(Object.keys(zh[key]).sort(), Object.keys(en[key]).sort(), key);
  }
});
