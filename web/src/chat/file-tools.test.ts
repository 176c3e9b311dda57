import assert from "node:assert/strict";
import { test } from "node:test";
import { completedWrites, fileToolView } from "./file-tools";

test("file tool calls read as one line: tool, path, size written", () => {
  assert.deepEqual(fileToolView("write_file", { filePath: "/workspace/clean.csv", content: "a" }, { existed: false, path: "/workspace/clean.csv", size: 1234 }), { tool: "write_file", path: "/workspace/clean.csv", size: 1234 });
  // Still running: the input names the path; no size yet.
  assert.deepEqual(fileToolView("write_file", '{"filePath":"/workspace/x.md"}', undefined), { tool: "write_file", path: "/workspace/x.md" });
  assert.deepEqual(fileToolView("read_file", { filePath: "/workspace/in.csv" }, '{"content":"1: a","path":"/workspace/in.csv","totalLines":1}'), { tool: "read_file", path: "/workspace/in.csv" });
  assert.deepEqual(fileToolView("glob", { pattern: "**/*.csv" }, { count: 2 }), { tool: "glob", path: "**/*.csv" });
  assert.equal(fileToolView("web_search", { q: "x" }, {}), null);
  assert.deepEqual(fileToolView("read_file", "{not json", undefined), { tool: "read_file", path: "" });
});

test("a completed write is counted once it is done, so the file list is read again", () => {
  const w = fileToolView("write_file", { filePath: "/workspace/a" }, { path: "/workspace/a", size: 1 });
  const r = fileToolView("read_file", { filePath: "/workspace/a" }, {});
  assert.equal(completedWrites([{ file: w, status: "running" }, { file: r, status: "done" }, { file: null, status: "done" }]), 0);
  assert.equal(completedWrites([{ file: w, status: "done" }, { file: w, status: "error" }]), 1);
});
