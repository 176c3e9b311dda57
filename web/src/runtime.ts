// One ChatRuntime per chat id: the client bridge of seed 000. It owns that chat's event log,
// eve session cursor and stream, persists every event (batched) and the merged snapshot at the
// end of a turn, resumes after a refresh, and keeps running when the user looks at another
// chat — events are only ever appended to the runtime whose stream produced them, so two
// chats never mix.

import { api, ApiError } from "./api";
import { answerInput, declineAuthorization, delay, interrupt, readStream, sendMessage, STREAM_DISCONNECTED } from "./eve";
import {
  buildSnapshot,
  EVENT,
  getPendingAuthorizations,
  hasLatestUserMessage,
  hasOpenTurn,
  isSettlingEvent,
  MAX_MESSAGE_CHARS,
  resumeStreamIndex,
  type PendingAuthorization,
} from "./events";
import type { ChatDetail, ChatSummary, ClientSessionState, EveEvent, IndexedEvent } from "./types";

export type Phase = "loading" | "idle" | "sending" | "streaming" | "resuming" | "connecting";

export interface RuntimeState {
  chatId: string;
  phase: Phase;
  loadError: string | null;
  events: EveEvent[];
  session: ClientSessionState | null;
  /** The optimistic user bubble, shown until the agent's user event arrives. */
  optimistic: string | null;
  /** Log length at a user stop: tool calls still running render as interrupted. */
  stoppedAt: number | null;
  pendingAuthorizations: PendingAuthorization[];
}

export interface RuntimeHost {
  toast(message: string): void;
  touchChat(chat: ChatSummary): void;
  clientContext(): string;
}

/** Events are sent to the server in batches of at most this many, this often. */
const PERSIST_BATCH = 32;
const PERSIST_DELAY_MS = 120;
/** How long a stopped turn is followed for the agent's synthetic results before giving up. */
const DRAIN_AFTER_STOP_MS = 8000;
/** How long Connect waits for the agent to continue after the user authorizes. */
const CONNECT_WATCH_MS = 10 * 60 * 1000;

export class ChatRuntime {
  private state: RuntimeState;
  private listeners = new Set<() => void>();
  /** The log as loaded from the server (seed knownInitialEvents). */
  private known: EveEvent[] = [];
  /** Locally synthesised events (authorization skip) at their slots. */
  private local: IndexedEvent[] = [];
  private queue: IndexedEvent[] = [];
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private persistWarned = false;
  private turn: Promise<void> | null = null;
  private streamAbort: AbortController | null = null;
  private stopRequested = false;
  private pendingMessage: string | null = null;
  private pendingConsumed = false;
  private optimisticSince = 0;
  private cursor = 0;

  constructor(
    readonly chatId: string,
    private host: RuntimeHost,
  ) {
    this.state = {
      chatId,
      phase: "loading",
      loadError: null,
      events: [],
      session: null,
      optimistic: null,
      stoppedAt: null,
      pendingAuthorizations: [],
    };
  }

  // --- subscription -------------------------------------------------------------------------

  getState = (): RuntimeState => this.state;

  subscribe = (fn: () => void): (() => void) => {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  };

  private set(patch: Partial<RuntimeState>) {
    this.state = { ...this.state, ...patch };
    if (patch.events) this.state.pendingAuthorizations = getPendingAuthorizations(this.state.events);
    for (const fn of this.listeners) fn();
  }

  get busy(): boolean {
    const p = this.state.phase;
    return p === "sending" || p === "streaming" || p === "resuming";
  }

  get waitingForAuthorization(): boolean {
    return this.state.pendingAuthorizations.length > 0;
  }

  // --- loading ------------------------------------------------------------------------------

  /** A chat just created by the root page: nothing to fetch, its first message is pending. */
  primeFromCreate(message: string): void {
    this.known = [];
    this.pendingMessage = message;
    this.set({ phase: "idle", events: [], session: null, loadError: null });
    this.consumePending();
  }

  /** Loads the chat from the server unless a turn is running here (then the runtime is newer). */
  async load(): Promise<void> {
    if (this.busy || this.turn) return;
    if (this.state.phase !== "loading") this.set({ phase: "loading" });
    let detail: ChatDetail;
    try {
      detail = await api.getChat(this.chatId);
    } catch (err) {
      const message = err instanceof ApiError && err.status === 404 ? "This chat does not exist or was deleted." : (err as Error).message;
      this.set({ phase: "idle", loadError: message });
      return;
    }
    if (this.busy || this.turn) return;
    this.known = [...detail.events];
    this.local = [];
    this.pendingMessage = detail.pendingUserMessage;
    this.set({ phase: "idle", loadError: null, events: [...detail.events], session: detail.session, stoppedAt: null, optimistic: null });
    if (detail.session && hasOpenTurn(detail.events)) {
      this.pendingConsumed = true;
      this.cursor = resumeStreamIndex(detail.events, detail.session.streamIndex);
      this.startTurn("resuming", false);
    } else {
      this.consumePending();
    }
  }

  /** Seed: the pending message is sent exactly once, when nothing else is running. */
  private consumePending(): void {
    const message = this.pendingMessage;
    if (!message || this.pendingConsumed || this.busy || this.waitingForAuthorization) return;
    this.pendingConsumed = true;
    void this.send(message, { alreadyPending: true });
  }

  // --- sending ------------------------------------------------------------------------------

  /**
   * Sends a message: optimistic bubble at once, mark it pending on the chat row, start or
   * continue the eve session, save the session, then stream the turn. Returns false (and
   * toasts why) when the message cannot be sent now; the caller then keeps the draft.
   */
  async send(text: string, opts: { alreadyPending?: boolean } = {}): Promise<boolean> {
    const message = text.trim();
    if (!message || this.busy) return false;
    if (message.length > MAX_MESSAGE_CHARS) {
      this.host.toast(`Messages are limited to ${MAX_MESSAGE_CHARS.toLocaleString("en")} characters.`);
      return false;
    }
    if (this.waitingForAuthorization) {
      this.host.toast("Connect or skip the pending authorization before sending a message.");
      return false;
    }
    this.optimisticSince = this.state.events.length;
    this.stopRequested = false;
    this.set({ phase: "sending", optimistic: message, stoppedAt: null });
    // The previous turn may still be saving its snapshot, or draining the agent's synthetic
    // results after a stop: let it finish first so that writes stay in order.
    if (this.turn) await Promise.race([this.turn, delay(DRAIN_AFTER_STOP_MS)]);
    if (this.turn) this.streamAbort?.abort();
    try {
      if (!opts.alreadyPending) {
        const saved = await api.markPending(this.chatId, message);
        if (saved?.chat) this.host.touchChat(saved.chat);
      }
      const session = await sendMessage(this.state.session, message, this.host.clientContext());
      this.cursor = session.streamIndex;
      this.set({ session });
      await api.saveSession(this.chatId, session).catch(() => {
        // The snapshot at the end of the turn saves the session again.
      });
    } catch (err) {
      this.set({ phase: "idle", optimistic: null });
      this.host.toast((err as Error).message);
      return false;
    }
    this.pendingMessage = null;
    if (this.stopRequested) {
      void interrupt(this.state.session!.sessionId).catch(() => undefined);
      this.set({ stoppedAt: this.state.events.length });
    }
    this.startTurn(this.stopRequested ? "idle" : "streaming", this.stopRequested);
    return true;
  }

  // --- streaming ----------------------------------------------------------------------------

  private startTurn(phase: Phase, stopped: boolean): void {
    const abort = new AbortController();
    this.streamAbort = abort;
    this.set({ phase });
    const run = this.followStream(abort.signal, stopped ? DRAIN_AFTER_STOP_MS : null).finally(() => {
      if (this.turn === run) this.turn = null;
      if (this.streamAbort === abort) this.streamAbort = null;
    });
    this.turn = run;
  }

  /**
   * Reads the stream until a settling event, reconnecting from the next unread index when the
   * connection drops; then saves the snapshot. `deadlineMs` bounds a drain after a stop.
   */
  private async followStream(signal: AbortSignal, deadlineMs: number | null): Promise<void> {
    const session = this.state.session;
    if (!session) return;
    const deadline = deadlineMs === null ? null : Date.now() + deadlineMs;
    let idleReconnects = 0;
    let settled = false;
    let failure: string | null = null;
    while (!settled && !signal.aborted) {
      let progressed = false;
      try {
        const timer = deadline === null ? null : setTimeout(() => this.streamAbort?.abort(), Math.max(0, deadline - Date.now()));
        try {
          await readStream(session.sessionId, this.cursor, (event) => {
            progressed = true;
            this.appendStreamEvent(event);
            if (isSettlingEvent(event)) {
              settled = true;
              return false;
            }
          }, signal);
        } finally {
          if (timer) clearTimeout(timer);
        }
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof ApiError && err.status !== 0 && !progressed) {
          failure = err.status === 404 ? "The agent session was not found." : err.message;
          break;
        }
      }
      if (settled || signal.aborted) break;
      idleReconnects = progressed ? 0 : idleReconnects + 1;
      if (idleReconnects >= 3) {
        failure = STREAM_DISCONNECTED;
        break;
      }
      await delay(400 * idleReconnects, signal).catch(() => undefined);
    }
    const wasStopped = this.state.stoppedAt !== null;
    if (!settled && wasStopped) {
      // The agent did not confirm the stop in time: close the turn locally so that a stopped
      // turn is never resumed on the next load.
      this.appendLocalEvent({ type: EVENT.sessionWaiting, local: true, reason: "interrupted" });
      settled = true;
    }
    // The UI is free as soon as the turn settled; the snapshot is saved behind it (a next
    // message waits for this promise before it starts).
    if (this.state.phase !== "sending") this.set({ phase: "idle", optimistic: null });
    if (failure && !wasStopped) this.host.toast(failure);
    if (settled) await this.saveSnapshot();
    else await this.flush();
    if (this.state.phase !== "sending") this.consumePending();
  }

  private appendStreamEvent(event: EveEvent): void {
    this.cursor = Math.max(this.cursor, (event.index ?? this.cursor - 1) + 1);
    const eventIndex = this.state.events.length;
    const events = [...this.state.events, event];
    const patch: Partial<RuntimeState> = { events };
    if (this.state.session) patch.session = { ...this.state.session, streamIndex: this.cursor };
    if (this.state.optimistic && hasLatestUserMessage(events, this.state.optimistic, this.optimisticSince)) patch.optimistic = null;
    if (this.state.phase === "connecting" || this.state.phase === "idle") {
      if (this.state.stoppedAt === null) patch.phase = "streaming";
    }
    this.set(patch);
    this.enqueue({ eventIndex, event });
  }

  private appendLocalEvent(event: EveEvent): IndexedEvent {
    const entry = { eventIndex: this.state.events.length, event };
    this.local.push(entry);
    this.set({ events: [...this.state.events, event] });
    return entry;
  }

  // --- persistence --------------------------------------------------------------------------

  private enqueue(entry: IndexedEvent): void {
    this.queue.push(entry);
    if (this.queue.length >= PERSIST_BATCH) void this.flush();
    else if (!this.flushTimer) this.flushTimer = setTimeout(() => void this.flush(), PERSIST_DELAY_MS);
  }

  /** Sends queued events, one request at a time and in order, retrying a failed batch. */
  flush(): Promise<void> {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    this.flushing = this.flushing.then(async () => {
      while (this.queue.length) {
        const batch = this.queue.slice(0, PERSIST_BATCH);
        let ok = false;
        for (let attempt = 0; attempt < 3 && !ok; attempt++) {
          try {
            await api.appendEvents(this.chatId, batch);
            ok = true;
          } catch {
            await delay(300 * (attempt + 1));
          }
        }
        this.queue.splice(0, batch.length);
        if (!ok && !this.persistWarned) {
          // The snapshot at the end of the turn writes every event again.
          this.persistWarned = true;
          this.host.toast("Some events could not be saved yet; they will be saved when the response finishes.");
        }
      }
    });
    return this.flushing;
  }

  private async saveSnapshot(): Promise<void> {
    await this.flush();
    const observed = this.state.events.filter((e) => e.local !== true).slice(this.known.filter((e) => e.local !== true).length);
    const events = buildSnapshot(this.known.filter((e) => e.local !== true), observed, this.localEntries());
    const session = this.state.session ? { ...this.state.session, streamIndex: this.cursor } : null;
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const saved = await api.saveSnapshot(this.chatId, events, session);
        this.known = events;
        this.local = [];
        if (saved?.chat) this.host.touchChat(saved.chat);
        return;
      } catch (err) {
        if (attempt === 2) this.host.toast(`The chat could not be saved: ${(err as Error).message}`);
        else await delay(400 * (attempt + 1));
      }
    }
  }

  /** Local events with their slots in the current log (loaded ones included). */
  private localEntries(): IndexedEvent[] {
    const out: IndexedEvent[] = [];
    this.state.events.forEach((event, eventIndex) => {
      if (event.local === true) out.push({ eventIndex, event });
    });
    return out;
  }

  // --- stop, authorization ------------------------------------------------------------------

  /**
   * Stops the running turn. The UI reacts at once (seed 003): the composer is free, running
   * tool calls show as interrupted, the thinking row goes. The interrupt request and the
   * agent's synthetic results follow in the background; the turn is then saved, never resumed.
   */
  stop(): void {
    if (!this.busy) return;
    const phase = this.state.phase;
    this.set({ phase: "idle", stoppedAt: this.state.events.length, optimistic: phase === "sending" ? this.state.optimistic : null });
    if (phase === "sending") {
      this.stopRequested = true;
      return;
    }
    const session = this.state.session;
    if (session) {
      interrupt(session.sessionId).catch((err: Error) => this.host.toast(`Stop failed: ${err.message}`));
    }
    // Bound the drain: the stream is followed only until the agent settles or the deadline.
    const abort = this.streamAbort;
    setTimeout(() => abort?.abort(), DRAIN_AFTER_STOP_MS);
  }

  /** Seed handleSkipAuthorization: ends the wait locally with a declined outcome. */
  async skipAuthorization(auth: PendingAuthorization): Promise<void> {
    this.streamAbort?.abort();
    const before = this.state.events;
    const beforeLocal = [...this.local];
    const completed = this.appendLocalEvent({
      type: EVENT.authorizationCompleted,
      authorizationId: auth.id,
      connection: auth.connection,
      outcome: "declined",
      local: true,
    });
    const waiting = this.appendLocalEvent({ type: EVENT.sessionWaiting, local: true, reason: "authorization-skipped" });
    this.set({ phase: "idle", optimistic: null });
    try {
      const saved = await api.skipAuthorization(this.chatId, [completed, waiting], this.state.session);
      // The agent ends its own wait too; its declined events are past this chat's cursor and
      // the next message's turn starts after them.
      if (this.state.session) void declineAuthorization(this.state.session.sessionId, auth.id).catch(() => undefined);
      this.known = [...this.state.events];
      this.local = [];
      this.pendingMessage = null;
      if (saved?.chat) this.host.touchChat(saved.chat);
    } catch (err) {
      this.local = beforeLocal;
      this.set({ events: before });
      this.host.toast(`Skip failed: ${(err as Error).message}`);
    }
  }

  /** Answers the agent's structured input request and follows the continued turn. */
  async answerInput(requestId: string, value: string): Promise<void> {
    const session = this.state.session;
    if (!session || this.busy) return;
    this.set({ phase: "sending", stoppedAt: null });
    if (this.turn) await Promise.race([this.turn, delay(DRAIN_AFTER_STOP_MS)]);
    try {
      const next = await answerInput(session, requestId, value);
      this.cursor = Math.max(this.cursor, next.streamIndex);
    } catch (err) {
      this.set({ phase: "idle" });
      this.host.toast((err as Error).message);
      return;
    }
    this.startTurn("streaming", false);
  }

  /** After the user opened the Connect URL: follow the stream for the agent's continuation. */
  watchAfterConnect(): void {
    if (this.turn || !this.state.session) return;
    this.set({ phase: "connecting" });
    const abort = new AbortController();
    this.streamAbort = abort;
    const started = Date.now();
    const run = (async () => {
      let settledAgain = false;
      while (!abort.signal.aborted && Date.now() - started < CONNECT_WATCH_MS && !settledAgain) {
        try {
          await readStream(this.state.session!.sessionId, this.cursor, (event) => {
            this.appendStreamEvent(event);
            if (isSettlingEvent(event)) {
              settledAgain = true;
              return false;
            }
          }, abort.signal);
        } catch {
          if (abort.signal.aborted) break;
        }
        if (!settledAgain) await delay(1500, abort.signal).catch(() => undefined);
      }
      if (settledAgain) await this.saveSnapshot();
      else await this.flush();
      if (this.state.phase !== "idle") this.set({ phase: "idle" });
    })().finally(() => {
      if (this.turn === run) this.turn = null;
      if (this.streamAbort === abort) this.streamAbort = null;
    });
    this.turn = run;
  }
}

/** All runtimes of this page, by chat id: a stream left in the background keeps its runtime. */
export class RuntimeRegistry {
  private runtimes = new Map<string, ChatRuntime>();
  constructor(private host: RuntimeHost) {}

  get(chatId: string): ChatRuntime {
    let rt = this.runtimes.get(chatId);
    if (!rt) {
      rt = new ChatRuntime(chatId, this.host);
      this.runtimes.set(chatId, rt);
    }
    return rt;
  }

  forget(chatId: string): void {
    this.runtimes.get(chatId)?.stop();
    this.runtimes.delete(chatId);
  }
}
