#!/usr/bin/env node
// A deterministic OpenAI-compatible Chat Completions server (Node built-ins only) for the eve
// client suites: the eve reference agent (tests/eve-reference) and eve-chat
// (`llm_provider=openai`) both talk to it, so the two agents see identical model output.
//
//   node tests/eve-client/fake-model.mjs [--port N]     (or FAKE_MODEL_PORT; default 4010; 0 = any)
//   FAKE_MODEL_LOG=FILE   append every request body to FILE, one JSON object per line
//
// Once listening it prints `[fake-model] listening on http://127.0.0.1:PORT/v1` to stderr.
//
// Routes: GET …/models (one model, `fake-model`); POST …/chat/completions, streaming (SSE,
// `data: {chunk}` … `data: [DONE]`) or not. Anything else answers 404 with an OpenAI error body.
//
// What it answers is decided from the request, in this order:
//   1. the last message is a tool result (role "tool")  -> "The tool said: <its content>."
//   2. the last user message's text contains "fail"      -> HTTP 400, an OpenAI error body
//   3. … contains "slow"                                 -> "slow chunk 0. " … "slow chunk 19. ",
//                                                           20 chunks 200 ms apart
//   4. … contains "tool" and a `get_time` tool is offered -> one get_time({"timezone":"UTC"}) call
//   5. … contains "skill NAME" and an `eve__skill` tool is offered
//                                                        -> one eve__skill({"name":"NAME"}) call
//   6. … contains "approval always" and `get_weather` is offered
//                                                        -> one get_weather({"city":"Paris"}) call
//   7. … contains "approval once" and `recall` is offered -> one recall({}) call
//      … contains "approval both" -> get_weather({"city":"Paris"}) and recall({}) in one response
//      (issue 23: the reference gates them with always() / once(), eve-chat by tool_approvals)
//   8. anything else                                     -> "Hello from the reference model.",
//                                                           4 chunks 20 ms apart
// (case-insensitive). Usage is always 10 prompt + 5 completion tokens: in the body when not
// streaming, as a last choice-less chunk when the request asks `stream_options.include_usage`.
// A client that goes away mid-stream just ends that stream (a cancelled turn).
import { createServer } from "node:http";
import { appendFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";

const HELLO = ["Hello ", "from the ", "reference ", "model."];
const USAGE = Object.freeze({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
const FAILURE = {
  error: {
    message: "fake model refused: message contained 'fail'",
    type: "invalid_request_error",
    code: "fake_failure",
  },
};

function parsePort() {
  const i = process.argv.indexOf("--port");
  const text = i >= 0 ? process.argv[i + 1] : process.env.FAKE_MODEL_PORT ?? "4010";
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`[fake-model] bad port ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return port;
}

/** The text of a message's content: a string, or the text parts of a content array. */
function textOf(content) {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part) => part && typeof part === "object" && part.type === "text")
    .map((part) => (typeof part.text === "string" ? part.text : ""))
    .join("\n");
}

/**
 * What to answer: { kind: "text", chunks, delayMs } | { kind: "tool", call, delayMs } |
 * { kind: "fail" }; a call is { name, parts } (its arguments streamed in those parts).
 */
function plan(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : [];
  const last = messages.at(-1) ?? {};
  if (last?.role === "tool") {
    return { kind: "text", chunks: ["The tool ", "said: ", textOf(last.content), "."], delayMs: 20 };
  }
  const lastUser = [...messages].reverse().find((m) => m?.role === "user");
  const text = textOf(lastUser?.content).toLowerCase();
  const tools = Array.isArray(body?.tools) ? body.tools : [];
  if (text.includes("fail")) return { kind: "fail" };
  if (text.includes("slow")) {
    return { kind: "text", chunks: Array.from({ length: 20 }, (_, i) => `slow chunk ${i}. `), delayMs: 200 };
  }
  const offered = (name) => tools.some((t) => t?.function?.name === name);
  if (text.includes("tool") && offered("get_time")) {
    return { kind: "tool", call: { name: "get_time", parts: ['{"timezone"', ':"UTC"}'] }, delayMs: 20 };
  }
  const skill = /skill ([a-z0-9][a-z0-9_-]*)/.exec(text);
  if (skill && offered("eve__skill")) {
    return { kind: "tool", call: { name: "eve__skill", parts: ['{"name"', `:${JSON.stringify(skill[1])}}`] }, delayMs: 20 };
  }
  if (text.includes("approval both") && offered("get_weather") && offered("recall")) {
    const weather = { name: "get_weather", parts: ['{"city"', ':"Paris"}'] };
    return { kind: "tool", calls: [weather, { name: "recall", parts: ["{}"] }], delayMs: 20 };
  }
  if (text.includes("approval always") && offered("get_weather")) {
    return { kind: "tool", call: { name: "get_weather", parts: ['{"city"', ':"Paris"}'] }, delayMs: 20 };
  }
  if (text.includes("approval once") && offered("recall")) {
    return { kind: "tool", call: { name: "recall", parts: ["{}"] }, delayMs: 20 };
  }
  return { kind: "text", chunks: HELLO, delayMs: 20 };
}

function sendJson(res, status, value) {
  const data = Buffer.from(JSON.stringify(value));
  res.writeHead(status, { "content-type": "application/json", "content-length": data.length });
  res.end(data);
}

const isRoute = (url, suffix) => (url.split("?")[0].replace(/\/+$/, "")).endsWith(suffix);

let requests = 0;
const logFile = process.env.FAKE_MODEL_LOG;

async function completions(req, res, raw) {
  let body;
  try {
    body = raw.length ? JSON.parse(raw) : {};
  } catch {
    return sendJson(res, 400, { error: { message: "bad json" } });
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) body = {};
  const n = ++requests;
  if (logFile) {
    try {
      appendFileSync(logFile, JSON.stringify({ n, path: req.url, body }) + "\n");
    } catch (error) {
      console.error(`[fake-model] cannot write ${logFile}: ${error.message}`);
    }
  }
  if (!isRoute(req.url, "/chat/completions")) {
    return sendJson(res, 404, { error: { message: "only /v1/chat/completions is implemented" } });
  }
  const answer = plan(body);
  if (answer.kind === "fail") return sendJson(res, 400, FAILURE);

  const id = `chatcmpl-fake-${n}`;
  const callId = `call_fake_${n}`;
  const created = Math.floor(Date.now() / 1000);
  const model = body.model ?? "fake-model";
  // One call (`call`) or several in one response (`calls`); the first keeps the usual id.
  const calls = answer.calls ?? (answer.call ? [answer.call] : []);
  const idOf = (i) => (i === 0 ? callId : `${callId}_${i}`);
  const toolCalls = calls.map((c, i) => ({ id: idOf(i), type: "function", function: { name: c.name, arguments: c.parts.join("") } }));

  if (!body.stream) {
    const message =
      answer.kind === "tool"
        ? { role: "assistant", content: null, tool_calls: toolCalls }
        : { role: "assistant", content: answer.chunks.join("") };
    return sendJson(res, 200, {
      id,
      object: "chat.completion",
      created,
      model,
      choices: [{ index: 0, message, finish_reason: answer.kind === "tool" ? "tool_calls" : "stop" }],
      usage: USAGE,
    });
  }

  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "close" });
  res.flushHeaders();
  let gone = false;
  res.on("close", () => {
    if (!res.writableFinished) gone = true;
  });
  const send = (value) => {
    if (!gone) res.write(`data: ${JSON.stringify(value)}\n\n`);
  };
  const chunk = (delta, finish = null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  send(chunk({ role: "assistant", content: "" }));
  if (answer.kind === "tool") {
    for (const [index, call] of calls.entries()) {
      send(chunk({ tool_calls: [{ index, id: idOf(index), type: "function", function: { name: call.name, arguments: "" } }] }));
      for (const part of call.parts) {
        await sleep(answer.delayMs);
        if (gone) break;
        send(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
      }
    }
    send(chunk({}, "tool_calls"));
  } else {
    for (const text of answer.chunks) {
      await sleep(answer.delayMs);
      if (gone) break;
      send(chunk({ content: text }));
    }
    send(chunk({}, "stop"));
  }
  if (gone) {
    console.error(`[fake-model] client disconnected during request ${n}`);
    return;
  }
  if (body.stream_options?.include_usage) {
    send({ id, object: "chat.completion.chunk", created, model, choices: [], usage: USAGE });
  }
  res.end("data: [DONE]\n\n");
}

const server = createServer((req, res) => {
  const started = Date.now();
  res.on("finish", () => console.error(`[fake-model] ${req.method} ${req.url} ${res.statusCode} ${Date.now() - started}ms`));
  if (req.method === "GET") {
    if (isRoute(req.url, "/models")) {
      return sendJson(res, 200, { object: "list", data: [{ id: "fake-model", object: "model", owned_by: "local" }] });
    }
    return sendJson(res, 404, { error: { message: "not found" } });
  }
  if (req.method !== "POST") return sendJson(res, 501, { error: { message: `unsupported method ${req.method}` } });
  const parts = [];
  req.on("data", (part) => parts.push(part));
  req.on("end", () => {
    completions(req, res, Buffer.concat(parts).toString("utf8")).catch((error) => {
      console.error(`[fake-model] ${error.stack ?? error}`);
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error.message ?? error) } });
      else res.destroy();
    });
  });
});

const port = parsePort();
server.listen(port, "127.0.0.1", () => {
  console.error(`[fake-model] listening on http://127.0.0.1:${server.address().port}/v1`);
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(0));
