// A small OpenAI-compatible Chat Completions server (streaming SSE only) that answers with
// whatever Markdown the test or benchmark gives it, in the chunks it gives, so the real agent
// streams exactly that text through the real app. The agent reaches it with
// llm_provider=openai, llm_base_url=<baseUrl> (loopback is in the agent's allowed hosts).
import { createServer } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * `answer(lastUserText, body)` → { chunks: string[], delayMs?: number } or, for a tool call,
 * { toolCalls: [{ name, arguments }] } (the agent runs the tools and calls again; `body.messages`
 * then ends with the tool results).
 */
export async function startFakeOpenAI(answer) {
  const server = createServer(async (req, res) => {
    let raw = "";
    for await (const part of req) raw += part;
    if (req.method !== "POST" || !req.url.replace(/\/+$/, "").endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: "only POST /v1/chat/completions" } }));
    }
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      res.writeHead(400, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: "bad json" } }));
    }
    const user = [...(body.messages ?? [])].reverse().find((m) => m.role === "user");
    const text = typeof user?.content === "string" ? user.content : (user?.content ?? []).filter((p) => p.type === "text").map((p) => p.text).join("\n");
    const { chunks = [], delayMs = 0, toolCalls } = answer(text, body);
    const id = `chatcmpl-${Date.now()}`;
    const chunk = (delta, finish = null) => ({ id, object: "chat.completion.chunk", created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] });
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    if (toolCalls?.length) {
      const calls = toolCalls.map((c, index) => ({ index, id: `call_${Date.now()}_${index}`, type: "function", function: { name: c.name, arguments: JSON.stringify(c.arguments) } }));
      res.write(`data: ${JSON.stringify(chunk({ role: "assistant", content: null, tool_calls: calls }))}\n\n`);
      res.write(`data: ${JSON.stringify(chunk({}, "tool_calls"))}\n\n`);
      return res.end("data: [DONE]\n\n");
    }
    let gone = false;
    res.on("close", () => (gone = !res.writableFinished));
    const send = (v) => !gone && res.write(`data: ${JSON.stringify(v)}\n\n`);
    send(chunk({ role: "assistant", content: "" }));
    for (const c of chunks) {
      if (delayMs) await sleep(delayMs);
      if (gone) return;
      send(chunk({ content: c }));
    }
    send(chunk({}, "stop"));
    if (body.stream_options?.include_usage) send({ id, object: "chat.completion.chunk", created: 0, model: body.model, choices: [], usage: { prompt_tokens: 1, completion_tokens: chunks.length, total_tokens: chunks.length + 1 } });
    res.end("data: [DONE]\n\n");
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
    close: () => new Promise((r) => server.close(r)),
  };
}

/** The Spin variables that point the app's agent at `fake`. */
export const fakeModelVariables = (fake) => ({ llm_provider: "openai", llm_base_url: fake.baseUrl, llm_api_key: "sk-test", llm_model: "fake-model" });
