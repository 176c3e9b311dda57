#!/usr/bin/env node
// The Slack channel side by side (issue 23): eve 0.80.1's own `slackChannel` (a per-run copy of
// tests/eve-reference with agent/channels/slack.ts = reference-slack.ts) and eve-chat's `slack`
// component (target/host/spin-local), both at the deterministic fake model and each at its own
// Slack Web API simulator (slack-sim.mjs). Both get the same signed requests; the simulators'
// call logs are normalised (timestamps named by first appearance) and compared.
//
//   tests/slack/run-side-by-side        (sets up Node >= 24 and runs this)
//
// Needs target/host/spin-local, the components built, and the reference's packages in
// target/eve-reference/node_modules (tests/eve-client/run-all installs them). Prints both logs
// and every difference; exits 1 when they differ or something does not start.
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");
const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const TOKEN = "xoxb-test";
const run = fs.mkdtempSync(path.join(os.tmpdir(), "slack-sbs-"));
const children = [];

function start(name, cmd, args, opts, ready) {
  const child = spawn(cmd, args, { ...opts, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  const log = fs.createWriteStream(path.join(run, `${name}.log`));
  let seen = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start; it printed:\n${seen.slice(-3000)}`)), 240_000);
    const on = (chunk) => {
      log.write(chunk);
      seen += chunk;
      const m = seen.match(ready);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on("data", on);
    child.stderr.on("data", on);
    child.on("exit", (code) => reject(new Error(`${name} exited (${code}):\n${seen.slice(-3000)}`)));
  });
}

function stopAll() {
  for (const c of children) {
    try {
      process.kill(-c.pid, "SIGTERM");
    } catch {}
  }
}
process.on("exit", stopAll);
process.on("SIGINT", () => process.exit(130));

const sim = (name) =>
  start(name, process.execPath, [path.join(here, "slack-sim.mjs"), "--port", "0"], { env: { ...process.env, SLACK_BOT_TOKEN: TOKEN } }, /listening on (http:\/\/127\.0\.0\.1:\d+)/);

async function waitHttp(url) {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${url} never answered`);
}

function sign(body, ts, secret = SECRET) {
  return `v0=${crypto.createHmac("sha256", secret).update(`v0:${ts}:${body}`).digest("hex")}`;
}

async function post(base, body, { secret = SECRET, ts = Math.floor(Date.now() / 1000), type = "application/json", headers = {} } = {}) {
  const r = await fetch(`${base}/eve/v1/slack`, {
    method: "POST",
    headers: { "content-type": type, "x-slack-request-timestamp": String(ts), "x-slack-signature": sign(body, ts, secret), ...headers },
    body,
  });
  return { status: r.status, text: await r.text() };
}

function envelope(eventId, event) {
  return JSON.stringify({
    token: "legacy", team_id: "T1", api_app_id: "A1", event, type: "event_callback", event_id: eventId,
    event_time: Math.floor(Date.now() / 1000),
    authorizations: [{ enterprise_id: null, team_id: "T1", user_id: "UBOT", is_bot: true, is_enterprise_install: false }],
    is_ext_shared_channel: false,
  });
}

const mention = (user, text, ts, thread) => ({ type: "app_mention", user, text: `<@UBOT> ${text}`, ts, team: "T1", channel: "C1", event_ts: ts, ...(thread ? { thread_ts: thread } : {}) });

async function calls(simBase) {
  return (await fetch(`${simBase}/_calls`)).json();
}

// Waits until the thread has `n` replies and the status was cleared after the last one.
async function turnsDone(simBase, thread, n) {
  for (let i = 0; i < 1200; i++) {
    const c = await calls(simBase);
    const idx = c.map((x, j) => (x.method === "chat.postMessage" && x.body.thread_ts === thread ? j : -1)).filter((j) => j >= 0);
    if (idx.length >= n && c.slice(idx[n - 1]).some((x) => x.method === "assistant.threads.setStatus" && x.body.status === "")) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`thread ${thread} never got ${n} replies at ${simBase}: ${JSON.stringify(await calls(simBase), null, 1)}`);
}

function sortedJson(text) {
  const sort = (v) =>
    Array.isArray(v) ? v.map(sort) : v && typeof v === "object" ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort(v[k])])) : v;
  try {
    return JSON.stringify(sort(JSON.parse(text)));
  } catch {
    return text;
  }
}

function normalise(log) {
  const names = new Map();
  const name = (v) => {
    if (!names.has(v)) names.set(v, `<ts${names.size + 1}>`);
    return names.get(v);
  };
  return log.map(({ method, contentType, authorized, body }) => {
    const b = { ...body };
    for (const k of ["ts", "thread_ts"]) if (typeof b[k] === "string") b[k] = /^\d+\.\d+$/.test(b[k]) ? name(b[k]) : b[k];
    if (method === "upload") delete b.fileId;
    // An approval's request id is each agent's own (eve's a random `aitxt-…`, ours
    // `approval_<callId>`); clients treat it as opaque.
    if (typeof b.blocks === "string") b.blocks = b.blocks.replace(/eve_input:tool-approval:[^:"]+:button/g, "eve_input:tool-approval:<request>:button");
    // Blocks are compared as JSON values: eve-chat writes an object's keys sorted, eve in its
    // own order, and Slack reads them alike.
    if (typeof b.blocks === "string") b.blocks = sortedJson(b.blocks);
    // get_time answers the clock (the reference's tool a fixed time).
    if (typeof b.markdown_text === "string") b.markdown_text = b.markdown_text.replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, "<time>");
    // A failure's hint and error id are the agent's words (its failure event), not the
    // channel's: eve's provider error names itself and carries an id, eve-chat's agent says
    // "The model provider returned an error." — the frame around them is compared.
    if (typeof b.markdown_text === "string")
      b.markdown_text = b.markdown_text.replace(/ \([^\n]*\)\.\n\n/, " (<error>).\n\n").replace(/\n\n_Error id: `[^`]*`_$/, "");
    return { method, contentType: contentType.split(";")[0], authorized, body: b };
  });
}

async function main() {
  const host = path.join(repo, "target/host/spin-local");
  const refModules = path.join(repo, "target/eve-reference/node_modules");
  if (!fs.existsSync(host)) throw new Error(`${host} is missing`);
  if (!fs.existsSync(path.join(refModules, ".bin/eve"))) throw new Error(`${refModules} is missing: run tests/eve-client/run-all once`);
  // One fake model per side, so each side's model requests are recorded apart.
  const fakeModel = (name) =>
    start(name, process.execPath, [path.join(repo, "tests/eve-client/fake-model.mjs"), "--port", "0"], { env: { ...process.env, FAKE_MODEL_LOG: path.join(run, `${name}.jsonl`) } }, /listening on (http:\/\/127\.0\.0\.1:\d+\/v1)/);
  const [model, modelOurs] = [await fakeModel("model-reference"), await fakeModel("model-eve-chat")];
  const [simRef, simOurs] = [await sim("sim-reference"), await sim("sim-eve-chat")];

  const ref = path.join(run, "reference");
  fs.mkdirSync(ref);
  fs.copyFileSync(path.join(repo, "tests/eve-reference/package.json"), path.join(ref, "package.json"));
  fs.cpSync(path.join(repo, "tests/eve-reference/agent"), path.join(ref, "agent"), { recursive: true });
  fs.copyFileSync(path.join(here, "reference-slack.ts"), path.join(ref, "agent/channels/slack.ts"));
  fs.symlinkSync(refModules, path.join(ref, "node_modules"));
  const refPort = 20000 + Math.floor(Math.random() * 20000);
  const refEnv = { ...process.env, EVE_TELEMETRY_DISABLED: "1", FAKE_MODEL_BASE_URL: model, SLACK_BOT_TOKEN: TOKEN, SLACK_SIGNING_SECRET: SECRET, SLACK_API_BASE_URL: `${simRef}/api` };
  const refReady = start("reference", path.join(ref, "node_modules/.bin/eve"), ["dev", "--no-ui", "--host", "127.0.0.1", "--port", String(refPort), "--no-default-extensions", "--logs", "all"], { cwd: ref, env: refEnv }, /([\s\S])/);
  const vars = { auth_mode: "local-dev", llm_provider: "openai", llm_base_url: modelOurs, llm_model: "fake-model", chat_send_per_hour: "100000", slack_bot_token: TOKEN, slack_signing_secret: SECRET, slack_api_base_url: `${simOurs}/api`, tool_approvals: '{"get_weather":"always"}' };
  const args = ["up", "--listen", "127.0.0.1:0", "--state-dir", path.join(run, "state")];
  for (const [k, v] of Object.entries(vars)) args.push("--variable", `${k}=${v}`);
  const ours = await start("eve-chat", host, args, { cwd: repo }, /Serving (http:\/\/127\.0\.0\.1:\d+)/);
  await refReady;
  const theirs = `http://127.0.0.1:${refPort}`;
  await waitHttp(`${theirs}/eve/v1/health`);
  await waitHttp(`${ours}/eve/v1/health`);
  console.error(`reference ${theirs} (Slack at ${simRef}); eve-chat ${ours} (Slack at ${simOurs}); logs in ${run}`);

  const sides = [
    ["reference", theirs, simRef],
    ["eve-chat", ours, simOurs],
  ];
  const answers = { reference: [], "eve-chat": [] };
  const both = async (label, fn) => {
    for (const [side, base, simBase] of sides) answers[side].push([label, await fn(base, simBase)]);
  };
  const first = envelope("Ev1", mention("U1", "hello", "1700000100.000100"));
  await both("bad signature", (b) => post(b, first, { secret: "wrong" }));
  await both("stale timestamp", (b) => post(b, first, { ts: Math.floor(Date.now() / 1000) - 301 }));
  await both("a GET", async (b) => {
    const r = await fetch(`${b}/eve/v1/slack`);
    // (eve dev's 404 body is a development stack trace: the status is compared.)
    return { status: r.status };
  });
  await both("challenge", (b) => post(b, JSON.stringify({ token: "t", challenge: "chal-123", type: "url_verification" })));
  await both("mention", async (b, s) => {
    const r = await post(b, first);
    await turnsDone(s, "1700000100.000100", 1);
    return r;
  });
  await both("timeout retry", (b) => post(b, first, { headers: { "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" } }));
  await both("duplicate event_id", (b) => post(b, first));
  await both("the app's own message", (b) => post(b, envelope("Ev3", mention("UBOT", "echo", "1700000300.000100"))));
  await both("second message in the thread", async (b, s) => {
    const r = await post(b, envelope("Ev2", mention("U1", "and again", "1700000200.000100", "1700000100.000100")));
    await turnsDone(s, "1700000100.000100", 2);
    return r;
  });
  await both("a tool turn", async (b, s) => {
    const r = await post(b, envelope("Ev4", mention("U2", "use the tool please", "1700000400.000100")));
    await turnsDone(s, "1700000400.000100", 1);
    return r;
  });
  // A tool approval (the reference's get_weather is always(), ours under
  // tool_approvals={"get_weather":"always"}): the turn waits on the card; clicks come back as
  // Slack sends them, naming the message and blocks that side posted. First someone other than
  // the requester clicks (refused in the thread, the card stays), then the requester.
  const clickAs = async (b, s, ts, user, option) => {
    const card = (await calls(s)).filter((x) => x.method === "chat.postMessage" && x.body.thread_ts === ts)[1];
    const blocks = JSON.parse(card.body.blocks);
    const button = blocks[0].actions.find((a) => a.value === option);
    const payload = {
      type: "block_actions", user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: "T1" }, api_app_id: "A1",
      token: "legacy", container: { type: "message", message_ts: card.ts, channel_id: "C1", is_ephemeral: false, thread_ts: ts },
      trigger_id: "1.2.3", team: { id: "T1", domain: "t1" }, channel: { id: "C1", name: "general" },
      message: { type: "message", user: "UBOT", ts: card.ts, thread_ts: ts, bot_id: "BBOT", text: card.body.text, blocks },
      response_url: "http://127.0.0.1:9/unused", actions: [{ ...button, block_id: "b1", action_ts: "1700000999.000001" }],
    };
    return post(b, `payload=${encodeURIComponent(JSON.stringify(payload))}`, { type: "application/x-www-form-urlencoded" });
  };
  const approval = (eventId, ts, option, intruder) =>
    both(`an approval, ${option}`, async (b, s) => {
      const answers = [await post(b, envelope(eventId, mention("U1", "approval always please", ts)))];
      let posts = 2; // the tool input, the card, and the status cleared after them
      await turnsDone(s, ts, posts);
      if (intruder) {
        answers.push(await clickAs(b, s, ts, "U2", option));
        await turnsDone(s, ts, ++posts); // "Only the person who requested this action …"
      }
      answers.push(await clickAs(b, s, ts, "U1", option));
      await turnsDone(s, ts, ++posts);
      return answers;
    });
  await approval("Ev6", "1700000600.000100", "approve", true);
  await approval("Ev7", "1700000700.000100", "cancel", false);
  await both("an approval, passed over by a message", async (b, s) => {
    const ts = "1700000800.000100";
    const asked = await post(b, envelope("Ev8", mention("U1", "approval always please", ts)));
    await turnsDone(s, ts, 2);
    const steered = await post(b, envelope("Ev9", mention("U1", "never mind", "1700000800.000200", ts)));
    await turnsDone(s, ts, 3); // the card no longer needed, the turn answering the message
    return [asked, steered];
  });
  await both("a failing model", async (b, s) => {
    const r = await post(b, envelope("Ev5", mention("U1", "please fail now", "1700000500.000100")));
    for (let i = 0; i < 1200; i++) {
      const c = await calls(s);
      if (c.some((x) => x.method === "chat.postMessage" && x.body.thread_ts === "1700000500.000100")) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    return r;
  });

  let same = true;
  if (JSON.stringify(answers.reference) !== JSON.stringify(answers["eve-chat"])) {
    same = false;
    console.log("HTTP answers differ:\n", JSON.stringify(answers, null, 1));
  } else console.log("HTTP answers: identical", JSON.stringify(answers.reference));
  // What eve does that eve-chat deliberately does not (docs/slack.md, "What differs").
  const known = new Map([
    ["conversations.replies", "eve reads the thread to collect files posted since the last mention; eve-chat's Slack channel takes no attachments"],
  ]);
  const all = normalise(await calls(simRef));
  for (const [method, why] of known) {
    const count = all.filter((c) => c.method === method).length;
    if (count > 0) console.log(`known difference: the reference's ${count} ${method} call(s) are not compared (${why})`);
  }
  const [a, b] = [all.filter((c) => !known.has(c.method)), normalise(await calls(simOurs)).filter((c) => !known.has(c.method))];
  fs.writeFileSync(path.join(run, "calls-reference.json"), JSON.stringify(a, null, 1));
  fs.writeFileSync(path.join(run, "calls-eve-chat.json"), JSON.stringify(b, null, 1));
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const [x, y] = [JSON.stringify(a[i] ?? null), JSON.stringify(b[i] ?? null)];
    console.log(`${x === y ? "  same" : "* DIFF"} #${i}\n    reference: ${x}\n    eve-chat:  ${y}`);
    if (x !== y) same = false;
  }
  // What each model was asked: the last user message of every request (the <slack_message>),
  // and the tool's result when the request follows a call (an approved call's output, a
  // refused one's "Tool execution was denied."; the clock's time named).
  const textOf = (c) => (typeof c === "string" ? c : (c ?? []).filter((p) => p.type === "text").map((p) => p.text).join("\n"));
  const asked = (name) =>
    fs.readFileSync(path.join(run, `${name}.jsonl`), "utf8").split("\n").filter(Boolean).map((l) => {
      const messages = JSON.parse(l).body.messages;
      // eve adds a "[Pending approvals]" context message to the history of a turn that waited
      // on an approval; eve-chat's agent does not (docs/approvals.md, deliberate differences).
      const user = textOf(messages.filter((m) => m.role === "user" && !textOf(m.content).startsWith("[Pending approvals]")).at(-1)?.content);
      const last = messages.at(-1);
      return last?.role === "tool" ? `${user}\n[tool] ${textOf(last.content).replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, "<time>")}` : user;
    });
  const [askedRef, askedOurs] = [asked("model-reference"), asked("model-eve-chat")];
  for (let i = 0; i < Math.max(askedRef.length, askedOurs.length); i++) {
    const [x, y] = [JSON.stringify(askedRef[i] ?? null), JSON.stringify(askedOurs[i] ?? null)];
    console.log(`${x === y ? "  same" : "* DIFF"} model request #${i}\n    reference: ${x}\n    eve-chat:  ${y}`);
    if (x !== y) same = false;
  }
  console.log(same ? "side by side: the Slack call logs and the model's inputs are identical" : "side by side: they differ");
  process.exitCode = same ? 0 : 1;
}

main().catch((e) => {
  console.error(`side-by-side failed: ${e.stack ?? e}`);
  process.exitCode = 1;
}).finally(() => {
  stopAll();
  setTimeout(() => {
    // The reference's .eve/ (its compiled agent and dev state) is large: it goes; the logs and
    // the two call records stay when something differed.
    fs.rmSync(process.exitCode ? path.join(run, "reference/.eve") : run, { recursive: true, force: true });
    process.exit();
  }, 500);
});
