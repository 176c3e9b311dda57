// Attachments (issue 13 item 7) in the browser: the paperclip, drag-and-drop onto the composer
// and paste add files as chips (name, size, remove); a refused file says why and is not
// added (the page checks against the policy the agent reports in /eve/v1/info); the sent message
// shows an image's thumbnail and a file chip for others, loaded from the agent
// (/eve/v1/attachments/:id), also after a reload. The agent's upload cap is set low so that the
// refusals need no large files.
import assert from "node:assert/strict";
import zlib from "node:zlib";
import { after, before, test } from "node:test";
import { launchBrowser, newPage, screenshot, waitSettledOnServer } from "./harness.mjs";

let app;
let browser;
before(async () => {
  const { startApp } = await import("./harness.mjs");
  app = await startApp({ demo_pacing_ms: "1", chat_send_per_hour: "1000", attachment_max_bytes: "200000" });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await app?.stop();
});

/** A real w×h RGB PNG (a colour gradient), so the thumbnail has something to show. */
function makePng(w, h) {
  const rows = [];
  for (let y = 0; y < h; y++) {
    const row = Buffer.alloc(1 + w * 3);
    for (let x = 0; x < w; x++) row.set([(x * 4) % 256, (y * 6) % 256, 180], 1 + x * 3);
    rows.push(row);
  }
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(Buffer.concat([Buffer.from(type), data])));
    return Buffer.concat([len, Buffer.from(type), data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr), chunk("IDAT", zlib.deflateSync(Buffer.concat(rows))), chunk("IEND", Buffer.alloc(0))]);
}
const PNG = makePng(64, 40);

/** The root page, once the agent's info (its upload policy) has arrived. */
async function openHome(page) {
  const info = page.waitForResponse((r) => r.url().endsWith("/eve/v1/info"));
  await page.goto("/");
  await page.waitForSelector(".auth-slot .viewer-name");
  assert.equal((await (await info).json()).agent.model.providerOptions.uploadPolicy.maxBytes, 200000);
}

/** Dispatches a drop of `files` ({name, type, b64 | text}) on `selector`, as a real drag does. */
async function dropFiles(page, selector, files) {
  await page.evaluate(
    ({ selector, files }) => {
      const dt = new DataTransfer();
      for (const f of files) {
        const bytes = f.b64 ? Uint8Array.from(atob(f.b64), (c) => c.charCodeAt(0)) : new TextEncoder().encode(f.text);
        dt.items.add(new File([bytes], f.name, { type: f.type }));
      }
      const target = document.querySelector(selector);
      target.dispatchEvent(new DragEvent("dragover", { dataTransfer: dt, bubbles: true, cancelable: true }));
      target.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
    },
    { selector, files },
  );
}

async function pasteFiles(page, files) {
  await page.evaluate((files) => {
    const dt = new DataTransfer();
    for (const f of files) dt.items.add(new File([new TextEncoder().encode(f.text)], f.name, { type: f.type }));
    const ta = document.querySelector("#composer-input");
    ta.focus();
    ta.dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
  }, files);
}

const chipNames = (page) => page.locator(".composer-files .file-chip-name").allTextContents();

test("paperclip, drop and paste add chips; a sent image shows as a thumbnail, also after a reload", async () => {
  const page = await newPage(browser, app.baseUrl);
  await openHome(page);
  // The paperclip opens the file picker.
  const chooser = page.waitForEvent("filechooser");
  await page.getByRole("button", { name: "Attach files" }).click();
  await (await chooser).setFiles({ name: "dot.png", mimeType: "image/png", buffer: PNG });
  await dropFiles(page, ".composer-box", [{ name: "notes.md", type: "", text: "# Notes\nremember the milk" }]);
  await pasteFiles(page, [{ name: "pasted.txt", type: "text/plain", text: "from the clipboard" }]);
  assert.deepEqual(await chipNames(page), ["dot.png", "notes.md", "pasted.txt"]);
  const size = PNG.length < 1024 ? `${PNG.length} B` : `${(PNG.length / 1024).toFixed(1)} KB`;
  assert.equal(await page.locator(".composer-files .file-chip").first().textContent(), `dot.png${size}×`);
  await screenshot(page, "attachments-composer-chips");
  // A chip's × removes it.
  await page.getByRole("button", { name: "Remove pasted.txt" }).click();
  assert.deepEqual(await chipNames(page), ["dot.png", "notes.md"]);

  await page.fill("#composer-input", "What is in these files?");
  await page.keyboard.press("Enter");
  await page.waitForURL(/\/chat\/[A-Za-z0-9_-]+$/);
  const chatId = page.url().split("/chat/")[1];
  const chat = await waitSettledOnServer(app.baseUrl, chatId);
  const received = chat.events.find((e) => e.type === "message.received");
  const files = received.data.parts.filter((p) => p.type === "file");
  assert.deepEqual(
    files.map((f) => [f.filename, f.mediaType]),
    [
      ["dot.png", "image/png"],
      ["notes.md", "text/markdown"],
    ],
  );
  assert.ok(files.every((f) => !("data" in f) && /^\/eve\/v1\/attachments\/att_/.test(f.url)));
  assert.equal(await page.locator(".composer-files").count(), 0, "the chips are gone once sent");

  const checkThumbnail = async () => {
    const img = page.locator(".message.user .attachment img").first();
    await img.waitFor();
    assert.equal(await img.getAttribute("src"), files[0].url);
    // Loaded for real from the agent, not only referenced.
    await page.waitForFunction(() => {
      const i = document.querySelector(".message.user .attachment img");
      return i && i.complete && i.naturalWidth === 64;
    });
    const link = page.locator(".message.user a.attachment-name", { hasText: "notes.md" });
    assert.equal(await link.getAttribute("href"), files[1].url);
  };
  await checkThumbnail();
  await screenshot(page, "attachments-sent-thumbnail");
  await page.reload();
  await checkThumbnail();
  assert.deepEqual(page.problems, []);
});

test("a refused file says why and is not added; a file alone can be sent", async () => {
  const page = await newPage(browser, app.baseUrl);
  await openHome(page);
  await dropFiles(page, ".composer-box", [{ name: "archive.zip", type: "application/zip", text: "PK" }]);
  const toast = page.locator(".toast", { hasText: "archive.zip cannot be attached" });
  await toast.waitFor();
  await screenshot(page, "attachments-refused-type");
  assert.deepEqual(await chipNames(page), []);
  // Over the agent's cap (attachment_max_bytes, which the page has from /eve/v1/info).
  await page.evaluate(() => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(200001)], "huge.png", { type: "image/png" }));
    const box = document.querySelector(".composer-box");
    box.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
  });
  await page.locator(".toast", { hasText: "huge.png is larger than 195.3 KB, the limit per file." }).waitFor();
  assert.deepEqual(await chipNames(page), []);

  // Files without text: the send button is enabled by the file alone.
  await pasteFiles(page, [{ name: "only.txt", type: "text/plain", text: "just a file" }]);
  const sendButton = page.getByRole("button", { name: "Send message" });
  assert.equal(await sendButton.isDisabled(), false);
  await sendButton.click();
  await page.waitForURL(/\/chat\/[A-Za-z0-9_-]+$/);
  const chatId = page.url().split("/chat/")[1];
  const chat = await waitSettledOnServer(app.baseUrl, chatId);
  const parts = chat.events.find((e) => e.type === "message.received").data.parts;
  assert.deepEqual(
    parts.map((p) => [p.type, p.filename]),
    [["file", "only.txt"]],
  );
  await page.locator(".message.user .attachment", { hasText: "only.txt" }).waitFor();
  assert.deepEqual(page.problems, []);
});
