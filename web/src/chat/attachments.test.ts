import assert from "node:assert/strict";
import { test } from "node:test";
import { isAllowedType, isThumbnailUrl, mediaTypeOf, messageOf, pendingLabel, policyFromInfo, refusal, toFileParts, withMediaType, MAX_ATTACHMENT_BYTES } from "./attachments";

test("media types come from the browser, else from the extension", () => {
  assert.equal(mediaTypeOf("a.png", "image/PNG"), "image/png");
  assert.equal(mediaTypeOf("notes.md", ""), "text/markdown");
  assert.equal(mediaTypeOf("data.CSV", ""), "text/csv");
  assert.equal(mediaTypeOf("blob", ""), "application/octet-stream");
});

test("the allowed types match exactly or by a type/* pattern, as the agent's policy", () => {
  assert.ok(isAllowedType("image/webp"));
  assert.ok(isAllowedType("text/csv"));
  assert.ok(isAllowedType("text/plain; charset=utf-8"));
  assert.ok(isAllowedType("application/pdf"));
  assert.ok(isAllowedType("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"));
  assert.ok(isAllowedType("application/vnd.openxmlformats-officedocument.wordprocessingml.document"));
  assert.ok(isAllowedType(mediaTypeOf("march.ods", "")));
  assert.ok(!isAllowedType("application/zip"));
  assert.ok(!isAllowedType("video/mp4"));
  assert.ok(isAllowedType("video/mp4", ["video/*"]));
});

test("a file is refused for its type first, then for its size, with a clear message", () => {
  assert.equal(refusal("a.png", "image/png", 10), null);
  assert.match(refusal("a.zip", "application/zip", MAX_ATTACHMENT_BYTES + 1)!, /^a\.zip cannot be attached/);
  assert.equal(refusal("big.png", "image/png", MAX_ATTACHMENT_BYTES + 1), "big.png is larger than 5.0 MB, the limit per file.");
  assert.equal(refusal("ok.png", "image/png", MAX_ATTACHMENT_BYTES), null);
});

test("the message is the text alone without files, else eve's parts", () => {
  assert.equal(messageOf("hi", undefined), "hi");
  assert.equal(messageOf("hi", []), "hi");
  const f = { type: "file" as const, mediaType: "image/png", filename: "a.png", data: "data:image/png;base64,AA==" };
  assert.deepEqual(messageOf("hi", [f]), [{ type: "text", text: "hi" }, f]);
  assert.deepEqual(messageOf("", [f]), [f]);
  assert.equal(pendingLabel([f, { ...f, filename: "b.png" }]), "a.png, b.png");
});

test("data URLs carry the part's media type; only our attachment URLs become thumbnails", () => {
  assert.equal(withMediaType("data:application/octet-stream;base64,QUJD", "text/markdown"), "data:text/markdown;base64,QUJD");
  assert.ok(isThumbnailUrl("/eve/v1/attachments/att_0123456789abcdef0123456789abcdef"));
  assert.ok(isThumbnailUrl("blob:http://localhost/x"));
  assert.ok(!isThumbnailUrl("https://evil.example/x.png"));
  assert.ok(!isThumbnailUrl("/eve/v1/attachments/att_1/../../api"));
  assert.ok(!isThumbnailUrl(undefined));
  // A project file a message named is served by the projects component (docs/projects.md).
  assert.ok(isThumbnailUrl("/api/projects/prj_a1/files/file_b2/download"));
  assert.ok(!isThumbnailUrl("/api/projects/prj_a1/files/file_b2/download/../x"));
  assert.ok(!isThumbnailUrl("//evil.example/api/projects/p/download"));
});

test("the agent's policy comes from its info document; anything else keeps the defaults", () => {
  const info = { agent: { model: { providerOptions: { uploadPolicy: { maxBytes: 10, allowedMediaTypes: ["Video/*"] } } } } };
  const p = policyFromInfo(info)!;
  assert.deepEqual(p, { maxBytes: 10, allowedMediaTypes: ["video/*"] });
  assert.equal(refusal("a.mp4", "video/mp4", 10, p), null);
  assert.match(refusal("a.mp4", "video/mp4", 11, p)!, /larger than 10 B/);
  assert.match(refusal("a.png", "image/png", 1, p)!, /cannot be attached/);
  assert.equal(refusal("x.bin", "application/octet-stream", 1, { maxBytes: 5, allowedMediaTypes: "*" }), null);
  assert.match(refusal("x.bin", "application/octet-stream", 1, { maxBytes: 0, allowedMediaTypes: "*" })!, /cannot be attached/);
  assert.equal(policyFromInfo({ agent: { model: { id: "openai/x" } } }), null);
  assert.equal(policyFromInfo({ agent: { model: { providerOptions: { uploadPolicy: { maxBytes: "big" } } } } }), null);
});

test("a project file is named by its id, and no bytes are read or sent", async () => {
  const unreadable = { arrayBuffer: () => Promise.reject(new Error("read")) } as unknown as Blob;
  const parts = await toFileParts([{ id: "p-file_1", name: "data.csv", mediaType: "text/csv", size: 8, file: unreadable, projectFileId: "file_1" }]);
  assert.deepEqual(JSON.parse(JSON.stringify(parts)), [{ type: "file", mediaType: "text/csv", filename: "data.csv", projectFileId: "file_1" }]);
});
