// Issue 21 in the browser (docs/projects.md, docs/web.md "Projects"): in each language
// (English, then Simplified Chinese, Chromium's `locale`), password mode with a fake model that
// writes a file with `write_file`: a project is created from the sidebar; its instructions are
// saved; files are uploaded by the paperclip, by drag-and-drop and by paste, listed with type,
// size, preview and source; a chat started in the project is grouped under it; the agent's
// `write_file` shows as one line (name, path, size) and its file appears in the chat's file
// list without a reload; the file is marked final and downloaded; a file is deleted; a chat is
// moved out of the project and back in; a project file is named in a message with the
// composer's picker (the model receives its bytes; nothing is uploaded again); the project is
// deleted with its chats.
// Needs the `projects` component and the `chats` changes of branch `projects`.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { launchBrowser, newPage, screenshot, startApp } from "./harness.mjs";
import { fill, loadCatalogues } from "./catalogues.mjs";
import { fakeModelVariables, startFakeOpenAI } from "./fake-openai.mjs";

const PASSWORD = "browser-projects-password";
const WRITTEN = "clean.csv";
const PASSES = [
  { locale: "en-US", lang: "en", project: "Supplier reconciliation", renamed: "Supplier reconciliation 2025", message: "Clean the data into a new file" },
  { locale: "zh-CN", lang: "zh-CN", project: "供应商对账", renamed: "供应商对账 2025", message: "把数据整理成一个新文件" },
];

let browser;
let cat;
let fake;
/** The user messages with files (content arrays) the fake model received. */
const withFiles = [];
before(async () => {
  cat = await loadCatalogues();
  browser = await launchBrowser();
  // First call of a turn: write the file; after the tool result: a short answer. A message with
  // files (a project file it names) is answered at once.
  fake = await startFakeOpenAI((_text, body) => {
    const last = body.messages?.[body.messages.length - 1];
    if (last?.role === "tool") return { chunks: ["Done: ", WRITTEN] };
    if (Array.isArray(last?.content)) {
      withFiles.push(last.content);
      return { chunks: ["Read ", "suppliers.csv"] };
    }
    return { toolCalls: [{ name: "write_file", arguments: { filePath: `/workspace/${WRITTEN}`, content: "name,amount\nACME,12\n" } }] };
  });
});
after(async () => {
  await browser?.close();
  await fake?.close();
});

async function signIn(page, c) {
  await page.goto("/");
  await page.click(`.auth-slot button:has-text("${c.auth.signIn}")`);
  await page.fill("#login-password", PASSWORD);
  await page.click("dialog.login-modal button[type=submit]");
  await page.waitForSelector("dialog.login-modal", { state: "detached" });
}

const fileRow = (page, name) => page.locator(`.file-table tr[data-file-name="${name}"]`);

for (const pass of PASSES) {
  describe(`projects in ${pass.lang}`, () => {
    let app;
    let c;
    let page;
    let projectId;
    before(async () => {
      c = cat[pass.lang];
      app = await startApp({ auth_mode: "password", chat_password: PASSWORD, session_secret: "p".repeat(48), ...fakeModelVariables(fake) });
      page = await newPage(browser, app.baseUrl, { locale: pass.locale });
      await signIn(page, c);
    });
    after(async () => {
      await page?.context().close();
      await app?.stop();
    });

    test("a project is created from the sidebar and its instructions are saved", async () => {
      await page.locator("#projects-heading", { hasText: c.projects.heading }).waitFor();
      await page.click("button.new-project");
      await page.fill("#new-project-name", pass.project);
      await page.press("#new-project-name", "Enter");
      await page.waitForURL(/\/project\/[A-Za-z0-9_-]+$/);
      projectId = new URL(page.url()).pathname.split("/")[2];
      await page.locator("h1.project-title", { hasText: pass.project }).waitFor();
      await page.locator(`.project-group[data-project-id="${projectId}"] .project-row a`, { hasText: pass.project }).waitFor();
      await page.fill("#project-instructions", "Amounts are in EUR.");
      await page.click(".instructions-form button[type=submit]");
      await page.locator(".instructions-form .form-ok").waitFor();
      const saved = await page.evaluate(async (id) => (await (await fetch(`/api/projects/${id}`)).json()).project.instructions, projectId);
      assert.equal(saved, "Amounts are in EUR.");
      // Renamed in place, in the sidebar too.
      await page.click(".project-rename");
      await page.fill("#project-name", pass.renamed);
      await page.press("#project-name", "Enter");
      await page.locator("h1.project-title", { hasText: pass.renamed }).waitFor();
      await page.locator(`.project-group[data-project-id="${projectId}"] .project-row a`, { hasText: pass.renamed }).waitFor();
      assert.deepEqual(page.problems, []);
    });

    test("files are uploaded by the paperclip, drag-and-drop and paste, and listed with type, size, preview and source", async () => {
      await page.locator(".files-empty").waitFor();
      await page.setInputFiles("#project-file-input", { name: "suppliers.csv", mimeType: "text/csv", buffer: Buffer.from("name,amount\nACME,12\nGlobex,7\n") });
      const csv = fileRow(page, "suppliers.csv");
      await csv.waitFor();
      assert.equal((await csv.locator(".file-type").textContent()).trim(), "CSV");
      assert.equal((await csv.locator(".source-badge").textContent()).trim(), c.projects.sources.upload);
      assert.match(await csv.locator(".file-text-preview").textContent(), /ACME,12/);
      assert.equal(await csv.locator(".file-final").count(), 0, "an upload cannot be marked final");
      // Drag-and-drop onto the files section.
      await page.evaluate(() => {
        const dt = new DataTransfer();
        dt.items.add(new File(["dropped notes"], "notes.txt", { type: "text/plain" }));
        const target = document.querySelector(".project-files");
        target.dispatchEvent(new DragEvent("dragover", { bubbles: true, cancelable: true, dataTransfer: dt }));
        target.dispatchEvent(new DragEvent("drop", { bubbles: true, cancelable: true, dataTransfer: dt }));
      });
      await fileRow(page, "notes.txt").waitFor();
      // Paste (a file on the clipboard) onto the page.
      await page.evaluate(() => {
        const dt = new DataTransfer();
        dt.items.add(new File(["pasted text"], "pasted.txt", { type: "text/plain" }));
        document.querySelector(".project-files").dispatchEvent(new ClipboardEvent("paste", { bubbles: true, cancelable: true, clipboardData: dt }));
      });
      await fileRow(page, "pasted.txt").waitFor();
      // Download: the file's own URL, its bytes as uploaded.
      const href = await csv.locator("a.file-download").getAttribute("href");
      const bytes = await page.evaluate(async (u) => (await fetch(u)).text(), href);
      assert.equal(bytes, "name,amount\nACME,12\nGlobex,7\n");
      // Delete with a confirmation.
      await fileRow(page, "pasted.txt").locator(".file-delete").click();
      await page.click("dialog.confirm-dialog button[type=submit]");
      await fileRow(page, "pasted.txt").waitFor({ state: "detached" });
      await screenshot(page, `projects-${pass.lang}-files`);
      assert.deepEqual(page.problems, []);
    });

    test("a chat in the project: grouped under it, the agent's write shown in one line and its file listed without a reload", async () => {
      await page.fill("#project-chat-input", pass.message);
      await page.press("#project-chat-input", "Enter");
      await page.waitForURL(/\/chat\//);
      const chatId = new URL(page.url()).pathname.split("/")[2];
      await page.locator(`.project-group[data-project-id="${projectId}"] .project-chats li[data-chat-id="${chatId}"]`).waitFor();
      assert.equal(await page.locator(`nav.history > ul > li[data-chat-id="${chatId}"]`).count(), 0, "not in the history outside projects");
      // Open the project's files of the chat before the turn ends: the written file arrives.
      await page.click(".project-bar summary");
      await fileRow(page, "suppliers.csv").waitFor();
      const line = page.locator(`.file-tool[data-tool="write_file"]`);
      await line.waitFor({ timeout: 60000 });
      assert.equal((await line.locator(".file-tool-name").textContent()).trim(), c.projects.tools.write_file);
      assert.equal((await line.locator(".file-tool-path").textContent()).trim(), `/workspace/${WRITTEN}`);
      await line.locator(".file-tool-size").waitFor();
      const written = fileRow(page, WRITTEN);
      await written.waitFor({ timeout: 60000 });
      assert.equal((await written.locator(".source-badge").textContent()).trim(), c.projects.sources.temp);
      await screenshot(page, `projects-${pass.lang}-chat`);
      // Mark it final: the badge changes and the button goes.
      await written.locator(".file-final").click();
      await written.locator(".source-badge", { hasText: c.projects.sources.final }).waitFor();
      assert.equal(await written.locator(".file-final").count(), 0);

      // A project file named in a message: picked next to the paperclip, not uploaded again;
      // the model receives its bytes as the provider's parts.
      await page.locator(".message.assistant", { hasText: `Done: ${WRITTEN}` }).waitFor();
      const picker = page.locator("button.pick-project-files");
      assert.equal(await picker.getAttribute("aria-label"), c.projects.pickFiles);
      await picker.click();
      await page.click('.project-file-option[data-file-name="suppliers.csv"]');
      await page.locator(".composer-files .file-chip", { hasText: "suppliers.csv" }).waitFor();
      const sent = withFiles.length;
      await page.fill("#composer-input", pass.message);
      await page.press("#composer-input", "Enter");
      const named = page.locator(".message.user .attachment a.attachment-name", { hasText: "suppliers.csv" });
      await named.waitFor();
      assert.match(await named.getAttribute("href"), new RegExp(`^/api/projects/${projectId}/files/file_[\\w-]+/download$`));
      await page.locator(".message.assistant", { hasText: "Read suppliers.csv" }).waitFor({ timeout: 60000 });
      assert.equal(withFiles.length, sent + 1);
      const model = JSON.stringify(withFiles[sent]);
      assert.ok(model.includes("Attached file suppliers.csv (text/csv):\\n\\nname,amount\\nACME,12\\nGlobex,7"), model);
      // Nothing was uploaded again: the project still has one suppliers.csv.
      const listed = await page.evaluate(async (id) => (await (await fetch(`/api/projects/${id}/files`)).json()).files.map((f) => f.name), projectId);
      assert.equal(listed.filter((n) => n === "suppliers.csv").length, 1);
      await screenshot(page, `projects-${pass.lang}-named-file`);

      // Move the chat out of the project, then back in (the row's menu).
      const row = page.locator(`.project-chats li[data-chat-id="${chatId}"]`);
      await row.hover();
      await row.locator('button[aria-haspopup="menu"]').click();
      // The sidebar moves the row at once; the server has it when the PATCH has answered.
      const patched = () => page.waitForResponse((r) => r.url().endsWith(`/api/chats/${chatId}`) && r.request().method() === "PATCH");
      const movedOut = patched();
      await row.locator(".menu-item.move-out").click();
      await page.locator(`nav.history > ul > li[data-chat-id="${chatId}"]`).waitFor();
      assert.equal((await movedOut).status(), 200);
      const out = await page.evaluate(async (id) => (await fetch(`/api/chats?projectId=${id}`)).json(), projectId);
      assert.equal(out.chats.some((x) => x.id === chatId), false);
      const back = page.locator(`nav.history > ul > li[data-chat-id="${chatId}"]`);
      await back.hover();
      await back.locator('button[aria-haspopup="menu"]').click();
      await back.locator(`.menu-item.move-to[data-project-id="${projectId}"]`).click();
      await page.locator(`.toast`, { hasText: fill(c.projects.moved, { name: pass.renamed }) }).waitFor();
      const inside = await page.evaluate(async (id) => (await fetch(`/api/chats?projectId=${id}`)).json(), projectId);
      assert.equal(inside.chats.some((x) => x.id === chatId), true);
      assert.deepEqual(page.problems, []);
    });

    test("deleting the project (its name typed) takes its chats and files", async () => {
      await page.click(`.project-group[data-project-id="${projectId}"] .project-row a`);
      await page.waitForURL(new RegExp(`/project/${projectId}$`));
      await page.click(".project-delete");
      await page.waitForSelector("dialog.confirm-dialog[open]");
      const confirm = page.locator("dialog.confirm-dialog button[type=submit]");
      assert.equal(await confirm.isDisabled(), true);
      await page.fill("#confirm-typed", pass.renamed);
      await confirm.click();
      await page.waitForURL((u) => u.pathname === "/");
      assert.equal(await page.locator(`.project-group[data-project-id="${projectId}"]`).count(), 0);
      const gone = await page.evaluate(async (id) => (await fetch(`/api/projects/${id}`)).status, projectId);
      assert.equal(gone, 404);
      assert.deepEqual(page.problems, []);
    });
  });
}
