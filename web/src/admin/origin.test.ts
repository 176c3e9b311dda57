import assert from "node:assert/strict";
import { test } from "node:test";
import { leavesOrigin } from "./origin";

test("a URL leaves its origin when the scheme, host or port changes", () => {
  const saved = "https://llm.example.com/v1";
  assert.equal(leavesOrigin(saved, "https://llm.example.com:443/v2/"), false);
  assert.equal(leavesOrigin(saved, " https://llm.example.com/v1/ "), false);
  assert.equal(leavesOrigin(saved, ""), false, "an empty field is not a change");
  for (const other of ["http://llm.example.com/v1", "https://llm.example.com:8443/v1", "https://evil.example/v1", "not a url"]) {
    assert.equal(leavesOrigin(saved, other), true, other);
  }
});
