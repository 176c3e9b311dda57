// eve's own CLI (eve 0.80.1, this folder's node_modules) against eve-chat in password mode with
// an API token (issue 20, docs/accounts.md "Tokens"): a browser signs in and creates the token,
// then
//
//   eve remote info   --url <app> -H 'Authorization: Bearer <token>'
//   eve remote invoke --url <app> -H … "hello"          and a follow-up with --resume
//   EVE_EVAL_AUTH_TOKEN=<token> eve eval --url <app>    (cli-eval/evals/count.eval.ts)
//
// succeed as the token's principal; without the token, and after it is revoked, eve reports
// that the target refused its credentials.
//
//   EVE_CHAT_URL=http://127.0.0.1:P EVE_CHAT_PASSWORD=… node --test cli-token.check.mjs
//
// Needs Node >= 24 (eve's CLI). Not a *.test.mjs: it needs a password-mode server, so `run`
// does not pick it up for others. run-all runs it as the part `cli/token`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { trimSlash } from "./lib.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const APP = trimSlash(process.env.EVE_CHAT_URL || "");
const PASSWORD = process.env.EVE_CHAT_PASSWORD || "";
const EVE = path.join(here, "node_modules", "eve", "bin", "eve.js");
const CLI_TIMEOUT_MS = 120_000;

/** Runs eve's CLI; resolves to {code, stdout, stderr} (never rejects on a non-zero exit). */
function eve(args, { stdin, env = {}, cwd = here } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [EVE, ...args], {
      cwd,
      env: { ...process.env, EVE_TELEMETRY_DISABLED: "1", NO_COLOR: "1", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`eve ${args.join(" ")} did not finish in ${CLI_TIMEOUT_MS} ms\n${stdout}\n${stderr}`));
    }, CLI_TIMEOUT_MS);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(stdin ?? "");
  });
}

const show = (r) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

/** The JSON document eve printed (the last line that parses as an object). */
function printedJson(r) {
  const lines = r.stdout.trim().split("\n").reverse();
  for (const line of lines) {
    try {
      const v = JSON.parse(line);
      if (v && typeof v === "object") return v;
    } catch {}
  }
  try {
    return JSON.parse(r.stdout);
  } catch {
    assert.fail(`eve printed no JSON\n${show(r)}`);
  }
}

/** A same-origin request as the app's own pages send it. */
async function browser(method, route, { cookie, json } = {}) {
  const headers = { origin: APP, "sec-fetch-site": "same-origin" };
  if (cookie) headers.cookie = cookie;
  if (json !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${APP}${route}`, {
    method,
    headers,
    body: json === undefined ? undefined : JSON.stringify(json),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

let cookie;
let token;
let tokenId;

/** A copy of cli-eval/ outside the repository (eve eval writes .eve/ and caches beside its
 *  evals), resolving `eve` from this folder's node_modules. */
function evalProject() {
  const dir = mkdtempSync(path.join(tmpdir(), "eve-chat-cli-eval-"));
  cpSync(path.join(here, "cli-eval"), dir, { recursive: true });
  symlinkSync(path.join(here, "node_modules"), path.join(dir, "node_modules"), "dir");
  return dir;
}
const evalDir = evalProject();
process.on("exit", () => rmSync(evalDir, { recursive: true, force: true }));

test("the app is up in password mode and a browser creates a token", async () => {
  assert.ok(APP, "EVE_CHAT_URL names the app");
  assert.ok(PASSWORD, "EVE_CHAT_PASSWORD is its chat_password");
  const login = await browser("POST", "/api/auth/login", { json: { password: PASSWORD } });
  assert.equal(login.status, 200, JSON.stringify(login.body));
  cookie = login.headers.get("set-cookie").split(";")[0];
  const created = await browser("POST", "/api/tokens", { cookie, json: { name: "eve CLI", expiresInDays: 1 } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  token = created.body.token;
  tokenId = created.body.info.id;
  assert.match(token, /^evc_[0-9a-f]{24}_[A-Za-z0-9_-]{43}$/);
});

test("eve remote info with the token", async () => {
  const r = await eve(["remote", "info", "--url", APP, "-H", `Authorization: Bearer ${token}`, "--json"]);
  assert.equal(r.code, 0, show(r));
  const info = printedJson(r);
  assert.equal(info.agent?.config?.binding?.backing?.registryId, "eve-chat", show(r));
});

test("eve remote info without a token is refused", async () => {
  const r = await eve(["remote", "info", "--url", APP, "--json"]);
  assert.notEqual(r.code, 0, show(r));
});

test("eve remote invoke with the token, and a follow-up with --resume", async () => {
  const auth = `Authorization: Bearer ${token}`;
  const first = await eve(["remote", "invoke", "--url", APP, "-H", auth, "hello"]);
  assert.equal(first.code, 0, show(first));
  const result = printedJson(first);
  assert.equal(result.status, "ready", show(first));
  assert.equal(result.outcome.status, "completed", show(first));
  assert.ok(result.outcome.message, show(first));
  const sessionId = result.resume.session.sessionId;
  assert.match(sessionId, /^wrun_/);

  const next = await eve(["remote", "invoke", "--url", APP, "-H", auth, "--resume", "count to 3"], {
    stdin: JSON.stringify(result),
  });
  assert.equal(next.code, 0, show(next));
  const followUp = printedJson(next);
  assert.equal(followUp.status, "ready", show(next));
  assert.equal(followUp.resume.session.sessionId, sessionId, "the same session continued");
  assert.match(followUp.outcome.message, /1 2 3/, show(next));
});

test("eve eval --url with EVE_EVAL_AUTH_TOKEN runs one small eval", async () => {
  const r = await eve(["eval", "--url", APP, "--json"], {
    cwd: evalDir,
    env: { EVE_EVAL_AUTH_TOKEN: token },
  });
  assert.equal(r.code, 0, show(r));
  const report = JSON.parse(r.stdout);
  assert.deepEqual(
    report.results.map((e) => e.id),
    ["count"],
    show(r),
  );
  assert.match(report.results[0].result.finalMessage, /1 2 3/, show(r));
});

test("after the token is revoked, eve reports the refusal", async () => {
  const revoked = await browser("DELETE", `/api/tokens/${tokenId}`, { cookie });
  assert.equal(revoked.status, 204);
  const info = await eve(["remote", "info", "--url", APP, "-H", `Authorization: Bearer ${token}`, "--json"]);
  assert.notEqual(info.code, 0, show(info));
  const invoke = await eve(["remote", "invoke", "--url", APP, "-H", `Authorization: Bearer ${token}`, "hello"]);
  assert.notEqual(invoke.code, 0, show(invoke));
  const result = printedJson(invoke);
  assert.equal(result.status, "authentication-required", show(invoke));
  const evaluated = await eve(["eval", "--url", APP, "--json"], {
    cwd: evalDir,
    env: { EVE_EVAL_AUTH_TOKEN: token },
  });
  assert.notEqual(evaluated.code, 0, show(evaluated));
});
