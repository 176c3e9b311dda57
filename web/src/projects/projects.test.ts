import assert from "node:assert/strict";
import { test } from "node:test";
import { chatsOutsideProjects, upsertProject, type Project } from "./projects";
import { canMarkFinal, fileType, pastedName, sourceKey, uploadHeaders, upsertFile } from "./files";
import { projectPageCatalogues } from "../i18n/project-page";
import { en } from "../i18n/en";
import type { ProjectFile } from "./projects";

const chat = (id: string, projectId?: string | null) => ({ id, title: id, createdAt: "2026-01-01T00:00:00.000Z", updatedAt: "2026-01-01T00:00:00.000Z", projectId });

test("the history lists chats outside projects: the server's projectId, overridden by what this page knows", () => {
  const chats = [chat("a"), chat("b", "p1"), chat("c"), chat("d", "p2")];
  assert.deepEqual(chatsOutsideProjects(chats, {}).map((c) => c.id), ["a", "c"]);
  // Moved in (c) and moved out (d) on this page; a list of p1 said b is in it.
  assert.deepEqual(chatsOutsideProjects(chats, { c: "p1", d: null, b: "p1" }).map((c) => c.id), ["a", "d"]);
});

test("a changed project moves up, most recently updated first", () => {
  const p = (id: string, updatedAt: string): Project => ({ id, name: id, instructions: "", createdAt: updatedAt, updatedAt });
  const list = [p("x", "2026-01-03T00:00:00.000Z"), p("y", "2026-01-02T00:00:00.000Z")];
  assert.deepEqual(upsertProject(list, p("y", "2026-01-04T00:00:00.000Z")).map((q) => q.id), ["y", "x"]);
  assert.deepEqual(upsertProject(list, p("z", "2026-01-01T00:00:00.000Z")).map((q) => q.id), ["x", "y", "z"]);
});

test("files: source badges, mark final only for the agent's files, types, order, upload headers", () => {
  const f = (name: string, source: ProjectFile["source"], mediaType = "text/csv"): ProjectFile => ({
    id: name, name, mediaType, size: 1, source, preview: { kind: "other" }, downloadUrl: `/d/${name}`, createdAt: "", updatedAt: "",
  });
  assert.deepEqual(["user_upload", "temp", "final_output"].map((s) => sourceKey(s as ProjectFile["source"])), ["upload", "temp", "final"]);
  assert.equal(canMarkFinal(f("a", "temp")), true);
  assert.equal(canMarkFinal(f("a", "user_upload")) || canMarkFinal(f("a", "final_output")), false);
  assert.equal(fileType(f("data.csv", "temp")), "CSV");
  assert.equal(fileType(f("README", "temp", "text/markdown; charset=utf-8")), "MARKDOWN");
  assert.deepEqual(upsertFile([f("b", "temp"), f("c", "temp")], f("a", "final_output")).map((x) => x.name), ["a", "b", "c"]);
  assert.equal(upsertFile([f("a", "temp")], f("a", "final_output"))[0]!.source, "final_output");
  assert.deepEqual(uploadHeaders({ type: "", name: "年度 报告.csv" }), { accept: "application/json", "content-type": "application/octet-stream", "x-file-name": "%E5%B9%B4%E5%BA%A6%20%E6%8A%A5%E5%91%8A.csv" });
  assert.equal(pastedName("image/jpeg", Date.UTC(2026, 0, 2, 3, 4, 5)), "pasted-2026-01-02-03-04-05.jpg");
});

test("the project page's strings exist in both languages with the same placeholders", () => {
  const { en: pe, "zh-CN": pz } = projectPageCatalogues;
  const holes = (v: unknown): string[] => JSON.stringify(v).match(/\{\w+\}/g)?.sort() ?? [];
  for (const key of Object.keys(pe) as (keyof typeof pe)[]) {
    assert.ok(pz[key] !== undefined, key);
    if (typeof pe[key] === "string") assert.deepEqual(holes(pz[key]), holes(pe[key]), key);
  }
  assert.ok(en.projects.heading && en.projects.tools.write_file);
});
