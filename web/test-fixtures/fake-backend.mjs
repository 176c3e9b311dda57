// An in-process stand-in for the app's backend, installed as `globalThis.fetch`: the chat store
// routes the browser app uses (/api/chats/:id, events, snapshot, pending, session, skip) and an
// eve v1 agent (/eve/v1/session…) that behaves as the recordings show eve 0.80.1 behaving:
// 202 + sessionId (+ deliveryId on sends), one durable stream per session served from any
// `startIndex` (a leading blank line, `x-eve-stream-version: 26`, held open for new events,
// keep-alive lines, `{"$eve":"stream.lease-ended","version":1}` when the lease ends), cancel
// (`turn.cancelled` + `session.waiting`, declining a held sign-in first), and 409
// `session_not_active` for an unknown session.
//
// Turns are scripted: `turns` is a list of functions, one per message, called with
// `{ turnId, seq, sessionId, message }` and returning event specs `{ type, data }` (turn-scoped
// fields filled in by the caller), `{ wait: ms }` pauses, or `{ hold: true }` (the turn stays
// running until cancelled). `responses` scripts what follows an `inputResponses` answer.

export function fakeBackend(opts = {}) {
  const turns = [...(opts.turns ?? [])];
  const responses = [...(opts.responses ?? [])];
  const leaseMs = opts.leaseMs ?? 60_000;
  const version = "streamVersion" in opts ? opts.streamVersion : "26";
  const chats = new Map();
  const sessions = new Map();
  const requests = [];
  let sessionCounter = 0;
  let eventCounter = 0;
  let deliveryCounter = 0;
  let streamCount = 0;

  const json = (status, body, headers = {}) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

  function chat(id) {
    if (!chats.has(id)) chats.set(id, { id, title: "Chat", slots: [], session: null, pendingUserMessage: null });
    return chats.get(id);
  }
  const summary = (c) => ({ id: c.id, title: c.title, createdAt: "2026-12-01T00:00:00.000Z", updatedAt: "2026-12-01T00:00:00.000Z" });

  function append(s, event) {
    eventCounter += 1;
    const meta = { at: new Date(Date.UTC(2026, 11, 1, 9, 0, 0, eventCounter)).toISOString(), id: `evt_fake_${String(eventCounter).padStart(5, "0")}` };
    if (event.deliveryIds) meta.deliveryIds = event.deliveryIds;
    const e = event.data === undefined ? { type: event.type, meta } : { data: event.data, type: event.type, meta };
    s.log.push(e);
    if (e.type === "turn.started") s.active = { turnId: e.data.turnId, seq: e.data.sequence, deliveryIds: event.deliveryIds };
    if (e.type === "turn.completed" || e.type === "turn.cancelled" || e.type === "turn.failed") s.active = null;
    if (e.type === "authorization.required") s.signIns.push(e.data);
    if (e.type === "authorization.completed") s.signIns = s.signIns.filter((a) => (a.attemptId ?? a.name) !== (e.data.attemptId ?? e.data.name));
    for (const fn of [...s.listeners]) fn();
  }

  /** Plays a scripted turn into the session's log: events now, `{wait}` later, `{hold}` stops. */
  function play(s, specs, ctx, deliveryIds) {
    s.playing = (async () => {
      for (const spec of specs) {
        if (spec.wait) {
          await new Promise((r) => setTimeout(r, spec.wait));
          continue;
        }
        if (spec.hold) return;
        if (s.cancelled === ctx.turnId) return;
        append(s, { ...spec, deliveryIds });
      }
    })();
  }

  function startTurn(s, message, deliveryId) {
    const seq = s.nextSeq++;
    const turnId = `turn_${seq}`;
    const deliveryIds = [deliveryId ?? `dlv_create_${s.id}`];
    const script = opts.turnFor?.(message) ?? turns.shift() ?? ((t) => defaultTurn(t));
    const ctx = { turnId, seq, sessionId: s.id, message };
    const specs = [
      { type: "turn.started", data: { sequence: seq, turnId } },
      { type: "message.received", data: { message, parts: [{ text: message, type: "text" }], sequence: seq, turnId } },
      ...script(ctx),
    ];
    play(s, specs, ctx, deliveryIds);
  }

  function newSession() {
    sessionCounter += 1;
    const s = { id: `wrun_fake${sessionCounter}`, log: [], listeners: new Set(), nextSeq: 0, active: null, signIns: [], cancelled: null, ended: false };
    sessions.set(s.id, s);
    append(s, { type: "session.started", data: { runtime: { agentId: "fake", eveVersion: "0.80.1" } }, deliveryIds: [`dlv_create_${s.id}`] });
    return s;
  }

  function streamResponse(s, startIndex, controlVersion, signal) {
    streamCount += 1;
    const connection = streamCount;
    const enc = new TextEncoder();
    let cursor = startIndex;
    let closed = false;
    let sent = 0;
    let cleanup = () => {};
    const body = new ReadableStream({
      start(controller) {
        const close = () => {
          if (closed) return;
          closed = true;
          cleanup();
          try {
            controller.close();
          } catch {
            // already closed
          }
        };
        const pump = () => {
          if (closed) return;
          while (cursor < s.log.length) {
            const e = s.log[cursor++];
            controller.enqueue(enc.encode(JSON.stringify(e) + "\n"));
            sent += 1;
            if (opts.dropAfter && connection <= (opts.dropConnections ?? 1) && sent >= opts.dropAfter) {
              // The connection breaks mid-stream: it just ends, with no lease record and no
              // terminal event.
              return close();
            }
            if (e.type === "session.completed" || e.type === "session.failed") return close();
          }
        };
        controller.enqueue(enc.encode("\n"));
        s.listeners.add(pump);
        const keepAlive = setInterval(() => !closed && controller.enqueue(enc.encode("\n")), opts.keepAliveMs ?? 50);
        keepAlive.unref?.();
        const lease = setTimeout(() => {
          if (closed) return;
          if (controlVersion === "1") controller.enqueue(enc.encode(JSON.stringify({ $eve: "stream.lease-ended", version: 1 }) + "\n"));
          close();
        }, leaseMs);
        lease.unref?.();
        // `dropMs`: every response just ends after this long (a proxy cutting idle connections).
        const drop = opts.dropMs ? setTimeout(close, opts.dropMs) : null;
        drop?.unref?.();
        const onAbort = () => close();
        signal?.addEventListener("abort", onAbort, { once: true });
        cleanup = () => {
          s.listeners.delete(pump);
          clearInterval(keepAlive);
          clearTimeout(lease);
          if (drop) clearTimeout(drop);
          signal?.removeEventListener("abort", onAbort);
        };
        pump();
      },
      cancel() {
        closed = true;
        cleanup();
      },
    });
    const headers = { "content-type": "application/x-ndjson; charset=utf-8", "cache-control": "no-store, no-transform", "x-eve-session-id": s.id, "x-eve-stream-format": "ndjson" };
    if (version !== null) headers["x-eve-stream-version"] = version;
    return new Response(body, { status: 200, headers });
  }

  async function handle(url, init) {
    const method = (init.method ?? "GET").toUpperCase();
    const body = init.body ? JSON.parse(init.body) : undefined;
    requests.push({ method, path: url.pathname + url.search, body });
    const p = url.pathname;
    let m;
    // ---- eve
    if (p === "/eve/v1/session" && method === "POST") {
      if (opts.failCreate) return json(opts.failCreate.status, opts.failCreate.body);
      const s = newSession();
      startTurn(s, body.message);
      return json(202, { ok: true, sessionId: s.id, status: "accepted" }, { "x-eve-session-id": s.id });
    }
    if ((m = /^\/eve\/v1\/session\/([^/]+)\/cancel$/.exec(p)) && method === "POST") {
      const s = sessions.get(decodeURIComponent(m[1]));
      if (!s || s.ended || !s.active || (body?.turnId && body.turnId !== s.active.turnId)) return json(200, { ok: true, status: "no_active_turn" });
      const { turnId, seq, deliveryIds } = s.active;
      s.cancelled = turnId;
      setTimeout(() => {
        for (const a of s.signIns) append(s, { type: "authorization.completed", data: { ...(a.attemptId ? { attemptId: a.attemptId } : {}), name: a.name, outcome: "declined", sequence: a.sequence, stepIndex: a.stepIndex, turnId: a.turnId }, deliveryIds });
        append(s, { type: "turn.cancelled", data: { sequence: seq, turnId }, deliveryIds });
        append(s, { type: "session.waiting", data: { continuationToken: s.id, wait: "next-user-message" }, deliveryIds });
      }, opts.cancelDelayMs ?? 20);
      return json(202, { ok: true, sessionId: s.id, status: "accepted" });
    }
    if ((m = /^\/eve\/v1\/session\/([^/]+)\/stream$/.exec(p)) && method === "GET") {
      const s = sessions.get(decodeURIComponent(m[1]));
      if (!s) return json(404, { error: "Session not found.", ok: false });
      const startIndex = Number(url.searchParams.get("startIndex") ?? 0);
      return streamResponse(s, startIndex, url.searchParams.get("streamControlVersion"), init.signal);
    }
    if ((m = /^\/eve\/v1\/session\/([^/]+)$/.exec(p)) && method === "POST") {
      const s = sessions.get(decodeURIComponent(m[1]));
      if (!s || s.ended) return json(409, { code: "session_not_active", error: "The session is no longer active.", ok: false });
      if (body.inputResponses) {
        const script = opts.responseFor?.(body.inputResponses) ?? responses.shift() ?? (() => []);
        const active = s.active ?? { turnId: `turn_${s.nextSeq - 1}`, seq: s.nextSeq - 1 };
        const ctx = { turnId: active.turnId, seq: active.seq, sessionId: s.id, inputResponses: body.inputResponses };
        play(s, script(ctx), ctx, active.deliveryIds);
        return json(202, { ok: true, sessionId: s.id, status: "accepted" });
      }
      deliveryCounter += 1;
      const deliveryId = `dlv_${deliveryCounter}`;
      startTurn(s, body.message, deliveryId);
      return json(202, { ok: true, sessionId: s.id, status: "accepted", deliveryId }, { "x-eve-session-id": s.id });
    }
    // ---- the chat store
    if ((m = /^\/api\/chats\/([^/]+)(\/.*)?$/.exec(p))) {
      const c = chat(decodeURIComponent(m[1]));
      const rest = m[2] ?? "";
      if (rest === "" && method === "GET") {
        return json(200, { chat: summary(c), events: c.slots.filter((e) => e !== undefined), session: c.session, pendingUserMessage: c.pendingUserMessage });
      }
      if (rest === "/events" && method === "POST") {
        if (opts.failAppend) return json(500, { error: { code: "internal", message: "nope" } });
        for (const { eventIndex, event } of body.events) c.slots[eventIndex] = event;
        return json(200, { ok: true });
      }
      if (rest === "/snapshot" && method === "PUT") {
        c.slots = [...body.events];
        c.session = body.session;
        c.pendingUserMessage = null;
        c.snapshots = (c.snapshots ?? 0) + 1;
        return json(200, { chat: summary(c) });
      }
      if (rest === "/pending" && method === "PUT") {
        c.pendingUserMessage = body.message;
        return json(200, { chat: summary(c) });
      }
      if (rest === "/session" && method === "PUT") {
        c.session = body.session;
        return json(200, { ok: true });
      }
      if (rest === "/authorization/skip" && method === "POST") {
        if (opts.failSkip) return json(500, { error: { code: "internal", message: "the store is down" } });
        for (const { eventIndex, event } of body.events) c.slots[eventIndex] = event;
        c.session = body.session;
        c.pendingUserMessage = null;
        return json(200, { chat: summary(c) });
      }
    }
    return json(404, { error: { code: "not_found", message: `no route ${method} ${p}` } });
  }

  const backend = {
    chats,
    sessions,
    requests,
    chat,
    newSession,
    append: (sessionId, event) => append(sessions.get(sessionId), event),
    endSession(sessionId) {
      sessions.get(sessionId).ended = true;
    },
    fetch: async (input, init = {}) => {
      const url = new URL(typeof input === "string" ? input : input.url, "http://app.test");
      if (init.signal?.aborted) throw new DOMException("aborted", "AbortError");
      return handle(url, init);
    },
    install() {
      const previous = globalThis.fetch;
      globalThis.fetch = backend.fetch;
      return () => {
        globalThis.fetch = previous;
      };
    },
    /** Requests to a path (prefix match), in order. */
    to(prefix, method) {
      return requests.filter((r) => r.path.startsWith(prefix) && (!method || r.method === method));
    },
  };
  return backend;
}

/** A plain answer: one step of text, then the turn and the session settle. */
export function defaultTurn({ seq, turnId }, text = "Hello from the fake agent.") {
  return [
    { type: "step.started", data: { modelId: "fake", sequence: seq, stepIndex: 0, turnId } },
    ...text.split(/(?<= )/).map((d) => ({ type: "message.appended", data: { messageDelta: d, sequence: seq, stepIndex: 0, turnId } })),
    { type: "message.completed", data: { finishReason: "stop", message: text, sequence: seq, stepIndex: 0, turnId } },
    { type: "step.completed", data: { finishReason: "stop", sequence: seq, stepIndex: 0, turnId } },
    { type: "turn.completed", data: { sequence: seq, turnId } },
    { type: "session.waiting", data: { continuationToken: "", wait: "next-user-message" } },
  ];
}
