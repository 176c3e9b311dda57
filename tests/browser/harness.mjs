// Starts the local host with the real components (or uses EVE_CHAT_BASE_URL) and a real headless
// Chromium (Debian's /usr/bin/chromium) driven by playwright-core.
import { spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdtempSync, mkdirSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const artifactsDir = join(repoRoot, "tests", "browser", "artifacts");
mkdirSync(artifactsDir, { recursive: true });

const HOST_BIN = process.env.SPIN_LOCAL_BIN ?? join(repoRoot, "target", "host", "spin-local");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * The app under test. With EVE_CHAT_BASE_URL set (an instance started elsewhere, e.g. `spin up`)
 * it is used as is and `variables` are ignored; otherwise the local host is started on a free
 * port with a fresh state directory and the given Spin variables.
 */
export async function startApp(variables = {}) {
  if (process.env.EVE_CHAT_BASE_URL) {
    return { baseUrl: process.env.EVE_CHAT_BASE_URL.replace(/\/$/, ""), external: true, stop: async () => {} };
  }
  if (!existsSync(HOST_BIN)) {
    throw new Error(`${HOST_BIN} is missing: build it with \`cargo build --profile host -p spin-local\``);
  }
  const stateDir = mkdtempSync(join(tmpdir(), "eve-chat-browser-"));
  const args = ["up", "--quiet", "--listen", "127.0.0.1:0", "--state-dir", stateDir];
  const vars = { auth_mode: "local-dev", llm_provider: "demo", ...variables };
  // As scripts/run does: with a session secret and no eve_jwt_secret (required outside
  // local-dev since the agent gets no session secret), the key the app used to derive from it.
  if (vars.session_secret && vars.eve_jwt_secret === undefined) {
    vars.eve_jwt_secret = createHmac("sha256", vars.session_secret).update("eve-chat upstream jwt").digest("hex");
  }
  for (const [k, v] of Object.entries(vars)) args.push("--variable", `${k}=${v}`);
  // In a process group of its own: `up` serves through a child (`trigger`), as `spin up` does,
  // and a kill of the parent alone would leave that child serving.
  const child = spawn(HOST_BIN, args, { cwd: repoRoot, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let output = "";
  const baseUrl = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`host did not start in 60 s:\n${output}`)), 60_000);
    const onData = (chunk) => {
      output += chunk;
      const m = /Serving (?:[^\n]* on )?(http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`host exited with ${code}:\n${output}`));
    });
  });
  child.removeAllListeners("exit");
  return {
    baseUrl,
    external: false,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await new Promise((r) => {
          const t = setTimeout(() => {
            // SIGTERM reaches the trigger through `up`; what outlives it goes with the group.
            try {
              process.kill(-child.pid, "SIGKILL");
            } catch {
              child.kill("SIGKILL");
            }
            r();
          }, 5000);
          child.once("exit", () => {
            clearTimeout(t);
            r();
          });
        });
      }
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/**
 * Headless Chromium. A Chromium that dies before it ever connected (seen once in CI: SIGSEGV
 * at start-up on a loaded machine, before any page of the app was opened) is launched once
 * more, and said so on stderr; a second failure fails the suite. What the app does is never
 * retried: only the browser's own start.
 */
export async function launchBrowser() {
  const launch = () => chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    return await launch();
  } catch (e) {
    console.error(`tests/browser: Chromium did not start, launching it once more: ${String(e.message).split("\n")[0]}`);
    return launch();
  }
}

/** A new page (own cookies and storage) that fails the test on any CSP violation or page error. */
/** Holds back the app bundle so that what is on screen is the prerendered shell alone. */
export async function holdAppScript(page) {
  let release;
  const released = new Promise((r) => (release = r));
  await page.route(/\/assets\/app-[^/]+\.js$/, async (route) => {
    await released;
    await route.continue();
  });
  return release;
}

export async function newPage(browser, baseUrl, opts = {}) {
  // The browser's language decides the UI's (docs/web.md): English unless a test asks for another.
  const locale = opts.locale ?? "en-US";
  const context = await browser.newContext({ baseURL: baseUrl, viewport: opts.viewport ?? { width: 1280, height: 800 }, colorScheme: opts.colorScheme ?? "light", locale });
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (err) => problems.push(`pageerror: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error" && /Content Security Policy|Refused to/.test(msg.text())) problems.push(`csp: ${msg.text()}`);
  });
  page.problems = problems;
  return page;
}

export async function screenshot(page, name) {
  await page.screenshot({ path: join(artifactsDir, `${name}.png`) });
}

/** JSON call to the app from Node, same-origin headers included for state-changing methods. */
export async function apiCall(baseUrl, method, path, body, cookie) {
  const headers = { accept: "application/json", origin: baseUrl };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (cookie) headers.cookie = cookie;
  const res = await fetch(baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** Collapses whitespace, as text read back from rendered Markdown needs. */
export const squash = (s) => s.replace(/\s+/g, " ").trim();

/** Starts a chat from the root page (`inApp`: with the sidebar's New chat link, no reload);
 * the new chat's id. */
export async function startChat(page, message, { inApp = false } = {}) {
  if (inApp) {
    await page.click("a.new-chat");
    await page.waitForURL(/\/$/);
  } else {
    await page.goto("/");
  }
  await page.waitForSelector(".auth-slot .viewer-name");
  await page.fill("#composer-input", message);
  await page.keyboard.press("Enter");
  await page.waitForURL(/\/chat\/[A-Za-z0-9_-]+$/);
  return page.url().split("/chat/")[1];
}

/** The chat `id` as the server keeps it, once settled for the browser (docs/web.md: the session
 * parked or ended, or the turn parked on a person) and `also(chat)` holds; throws after `timeout`. */
export async function waitSettledOnServer(baseUrl, id, timeout = 30000, also = () => true) {
  const end = Date.now() + timeout;
  for (;;) {
    const chat = (await apiCall(baseUrl, "GET", `/api/chats/${id}`)).json;
    const last = chat.events.at(-1);
    if (last && (["session.completed", "session.failed", "session.waiting"].includes(last.type) || (last.type === "turn.waiting" && last.data?.on === "input")) && also(chat)) return chat;
    if (Date.now() > end) throw new Error(`chat ${id} not settled on the server: ${JSON.stringify(chat.events.slice(-3))}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** One eve session of `turns` question-and-answer turns (11 events each), as the agent streams them (eve v26). */
export function longSession(turns) {
  const events = [];
  let n = 0;
  const e = (type, data) => {
    n += 1;
    events.push({ type, data, meta: { at: new Date(Date.UTC(2026, 11, 1, 8, 0, 0, n)).toISOString(), id: `evt_long_${String(n).padStart(6, "0")}` } });
  };
  e("session.started", { runtime: { agentId: "eve-chat", eveVersion: "0.80.1" } });
  for (let seq = 0; seq < turns; seq++) {
    const turnId = `turn_${seq}`;
    e("turn.started", { sequence: seq, turnId });
    e("message.received", { message: `question ${seq}`, sequence: seq, turnId });
    e("step.started", { modelId: "demo/demo", sequence: seq, stepIndex: 0, turnId });
    for (const d of ["answer ", `${seq} `, "in ", "parts."]) e("message.appended", { messageDelta: d, sequence: seq, stepIndex: 0, turnId });
    e("message.completed", { finishReason: "stop", message: `answer ${seq} in parts.`, sequence: seq, stepIndex: 0, turnId });
    e("step.completed", { finishReason: "stop", sequence: seq, stepIndex: 0, turnId });
    e("turn.completed", { sequence: seq, turnId });
    e("session.waiting", { continuationToken: "long", wait: "next-user-message" });
  }
  return events;
}

/** A chat whose log is `longSession(turns)`, written 1,000 events per request (the app needs
 * `chat_event_writes_per_minute` raised for long ones); its id and events. */
export async function longChat(baseUrl, turns) {
  const created = await apiCall(baseUrl, "POST", "/api/chats", {});
  if (created.status !== 201) throw new Error(`create: ${created.text}`);
  const id = created.json.chat.id;
  const events = longSession(turns);
  for (let start = 0; start < events.length; start += 1000) {
    const batch = events.slice(start, start + 1000).map((event, i) => ({ eventIndex: start + i, event }));
    const r = await apiCall(baseUrl, "POST", `/api/chats/${id}/events`, { events: batch });
    if (r.status !== 200) throw new Error(`append: ${r.text}`);
  }
  return { id, events };
}
