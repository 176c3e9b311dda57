#!/usr/bin/env node
// A local Slack Web API simulator: the methods eve's slackChannel calls, on Slack's real wire
// format (POST /api/<method>, `Authorization: Bearer <bot token>`, form or JSON bodies,
// `{"ok":true,…}` or `{"ok":false,"error":"…"}` answers, HTTP 200 either way), plus the file
// upload URL files.getUploadURLExternal hands out. It records every call, in order:
//
//   GET  /_calls   the record: [{method, contentType, body, authorized}] (uploads: method
//                  "upload", body {fileId, length, text}; a chat.postMessage Slack accepted
//                  also has the `ts` it was given, which a button click names)
//   POST /_reset   forgets it
//
// Usage: node slack-sim.mjs [--port N]   (PORT env too; 0 picks one). Prints
// "slack simulator listening on http://127.0.0.1:<port>" on stderr when ready.
// SLACK_BOT_TOKEN (default xoxb-test) is the token it accepts; SLACK_SIM_LOG appends each
// call as a JSON line to that file.
import http from "node:http";
import fs from "node:fs";

const args = process.argv.slice(2);
const portArg = args.indexOf("--port");
const port = Number(portArg >= 0 ? args[portArg + 1] : (process.env.PORT ?? 0));
const token = process.env.SLACK_BOT_TOKEN ?? "xoxb-test";
const logFile = process.env.SLACK_SIM_LOG;

let calls = [];
let ts = 1700000000;
let files = 0;
const nextTs = () => `${++ts}.000100`;

function record(call) {
  calls.push(call);
  if (logFile) fs.appendFileSync(logFile, JSON.stringify(call) + "\n");
}

function parseBody(raw, contentType) {
  if (contentType.includes("application/json")) {
    try {
      return JSON.parse(raw);
    } catch {
      return { _invalid: raw };
    }
  }
  return Object.fromEntries(new URLSearchParams(raw));
}

// What Slack answers each method with (the fields eve reads).
function answer(method, body, base) {
  const channel = body.channel ?? body.channel_id;
  switch (method) {
    case "auth.test":
      return { ok: true, user_id: "UBOT", team_id: "T1", bot_id: "BBOT" };
    case "assistant.threads.setStatus":
      return { ok: true };
    case "chat.postMessage": {
      // A post whose text carries `[[slack-sim:<error>` is refused with that error (tests of
      // the reply's fallbacks; a quoting model may cut the closing brackets).
      const refused = String(body.markdown_text ?? body.text ?? "").match(/\[\[slack-sim:([a-z_]+)/);
      if (refused) return { ok: false, error: refused[1] };
      const t = nextTs();
      return { ok: true, channel, ts: t, message: { type: "message", text: body.text ?? body.markdown_text ?? "", user: "UBOT", bot_id: "BBOT", ts: t, thread_ts: body.thread_ts } };
    }
    case "chat.update":
      return { ok: true, channel, ts: body.ts, text: body.text ?? "" };
    case "chat.delete":
      return { ok: true, channel, ts: body.ts };
    case "chat.postEphemeral":
      return { ok: true, message_ts: nextTs() };
    case "conversations.info":
      return { ok: true, channel: { id: channel, is_im: String(channel).startsWith("D"), is_private: false, is_mpim: false } };
    case "conversations.replies":
      return { ok: true, messages: [], has_more: false, response_metadata: { next_cursor: "" } };
    case "views.open":
      if (!body.trigger_id) return { ok: false, error: "invalid_trigger_id" };
      return { ok: true, view: { id: "V00000001", ...(typeof body.view === "string" ? JSON.parse(body.view) : body.view) } };
    case "files.getUploadURLExternal": {
      const id = `F${String(++files).padStart(8, "0")}`;
      return { ok: true, upload_url: `${base}/upload/${id}`, file_id: id };
    }
    case "files.completeUploadExternal": {
      let list = body.files;
      if (typeof list === "string") {
        try {
          list = JSON.parse(list);
        } catch {
          return { ok: false, error: "invalid_arguments" };
        }
      }
      return { ok: true, files: (list ?? []).map((f) => ({ id: f.id, title: f.title })) };
    }
    default:
      return { ok: false, error: "unknown_method" };
  }
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url, "http://x");
    const send = (status, value, type = "application/json") => {
      res.writeHead(status, { "content-type": type });
      res.end(typeof value === "string" ? value : JSON.stringify(value));
    };
    if (req.method === "GET" && url.pathname === "/_calls") return send(200, calls);
    if (req.method === "POST" && url.pathname === "/_reset") {
      calls = [];
      return send(200, { ok: true });
    }
    const authorized = req.headers.authorization === `Bearer ${token}`;
    const upload = url.pathname.match(/^\/upload\/(F\d+)$/);
    if (req.method === "POST" && upload) {
      record({ method: "upload", contentType: req.headers["content-type"] ?? "", authorized, body: { fileId: upload[1], length: raw.length, text: raw.toString("utf8") } });
      return send(200, `OK - ${raw.length}`, "text/plain");
    }
    const m = url.pathname.match(/^\/api\/([A-Za-z.]+)$/);
    if (req.method !== "POST" || !m) return send(404, { ok: false, error: "unknown_method" });
    const contentType = req.headers["content-type"] ?? "";
    const body = parseBody(raw.toString("utf8"), contentType);
    const call = { method: m[1], contentType, authorized, body };
    record(call);
    if (!authorized) return send(200, { ok: false, error: "invalid_auth" });
    const base = `http://${req.headers.host}`;
    const a = answer(m[1], body, base);
    if (m[1] === "chat.postMessage" && a.ok) call.ts = a.ts;
    return send(200, a);
  });
});

server.listen(port, "127.0.0.1", () => {
  process.stderr.write(`slack simulator listening on http://127.0.0.1:${server.address().port}\n`);
});
for (const s of ["SIGTERM", "SIGINT"]) process.on(s, () => server.close(() => process.exit(0)));
