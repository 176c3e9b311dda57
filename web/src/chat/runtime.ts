// One ChatRuntime per chat id: the client bridge of seed 000, speaking eve v1. It owns that
// chat's event log (eve events verbatim), the eve session cursor (`{sessionId, streamIndex}`,
// streamIndex = events of that session's stream consumed) and the stream; it persists every
// event (batched) and the merged snapshot when a turn settles, resumes after a refresh, and
// keeps running when the user looks at another chat — events are only ever appended to the
// runtime whose stream produced them, so two chats never mix.

import { api, ApiError } from "../api";
import { pendingLabel, type FilePart } from "./attachments";
import { branchEvent, currentSeed, withSeed, type BranchRequest } from "./branches";
import { cancelTurn, delay, followStream, isSessionGone, respond, sendMessage, type InputResponse } from "./eve";
import { describeError, fmt, t } from "../i18n";
import {
  activeTurnId,
  appendToLog,
  buildSnapshot,
  getPendingAuthorizations,
  hasLatestUserMessage,
  hasOpenTurn,
  isLocal,
  localWaiting,
  MAX_MESSAGE_CHARS,
  messageChars,
  openInputs,
  rebaseLog,
  reduceLog,
  skipEvents,
  TurnWatch,
  type AuthorizationView,
  type InputView,
  type ReducedLog,
} from "./events";
import { fromSlot, heldOf, needsWholeLog, opensInsideOpenTurn, readOf, reduceHeld, type Read } from "./window";
import type { ChatDetail, ChatSummary, ClientSessionState, EveEvent, IndexedEvent } from "../api/types";

export type Phase = "loading" | "idle" | "sending" | "streaming" | "resuming" | "connecting";

export interface RuntimeState {
  chatId: string;
  phase: Phase;
  loadError: string | null;
  /** The log from slot `offset` on: a long chat opens at its latest window (window.ts). */
  events: EveEvent[];
  offset: number;
  /** Earlier events exist on the server; `loadEarlier()` prepends the page before `offset`. */
  hasEarlier: boolean;
  loadingEarlier: boolean;
  /** The log reduced by eve's message reducer (kept incrementally). */
  log: ReducedLog;
  session: ClientSessionState | null;
  /** The optimistic user bubble, shown until eve's `message.received` arrives. */
  optimistic: string | null;
  /** An edit or regenerate on its way: the page shows the conversation cut where it branches. */
  branching: BranchRequest | null;
  /** The user pressed stop: anything still running renders as interrupted at once. */
  stopped: boolean;
  pendingAuthorizations: AuthorizationView[];
  openInputs: InputView[];
}

export interface RuntimeHost {
  toast(message: string): void;
  touchChat(chat: ChatSummary): void;
  clientContext(): string;
  /** The model this chat's next message names, if the user has a choice. */
  model?(chatId: string): string | undefined;
}

/** Events are sent to the server in batches of at most this many, this often. */
const PERSIST_BATCH = 32;
const PERSIST_DELAY_MS = 120;
/** How long a stopped or skipped turn is followed for eve's `turn.cancelled` / `session.waiting`. */
const DRAIN_MS = 8000;
/** How long Connect waits for the agent to continue after the user authorizes. */
const CONNECT_WATCH_MS = 10 * 60 * 1000;

type Mode = "turn" | "drain" | "connect";

export class ChatRuntime {
  private state: RuntimeState;
  private listeners = new Set<() => void>();
  private frame = 0;
  /** The log as loaded from the server (seed knownInitialEvents). */
  private known: EveEvent[] = [];
  /** `meta.id`s of the log: an event read twice (reconnect, resume overlap) is applied once. */
  private ids = new Set<string>();
  private queue: IndexedEvent[] = [];
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private persistWarned = false;
  private turn: Promise<void> | null = null;
  private streamAbort: AbortController | null = null;
  private stopRequested = false;
  /** Stop was pressed before the turn's id was known: cancel it as soon as `turn.started` shows. */
  private cancelWanted = false;
  private watch = new TurnWatch();
  private mode: Mode = "turn";
  /** The run the user stopped (its drain may close the turn locally). */
  private stoppedRun: AbortController | null = null;
  private pendingMessage: string | null = null;
  /** The files of the message a new chat starts with (in memory only: a reload drops them). */
  private pendingFiles: FilePart[] | undefined;
  private pendingConsumed = false;
  private optimisticSince = 0;
  private cursor = 0;
  /** The length of the chat's stored log as far as this tab knows: the base of its next write. */
  private serverLength = 0;
  /** The server's cursor to the page before `offset`, and the newest branch marker before it. */
  private beforeCursor: string | null = null;
  private branchBefore: EveEvent | null = null;
  private earlier: Promise<void> | null = null;
  /** The loaded log was in the old dialect: the converted log is saved before the first write. */

  constructor(
    readonly chatId: string,
    private host: RuntimeHost,
  ) {
    this.state = {
      chatId,
      phase: "loading",
      loadError: null,
      events: [],
      offset: 0,
      hasEarlier: false,
      loadingEarlier: false,
      log: reduceLog([]),
      session: null,
      optimistic: null,
      branching: null,
      stopped: false,
      pendingAuthorizations: [],
      openInputs: [],
    };
  }

  // --- subscription -------------------------------------------------------------------------

  getState = (): RuntimeState => this.state;

  subscribe = (fn: () => void): (() => void) => {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  };

  /** `defer`: tell the listeners on the next animation frame (see appendStreamEvent). */
  private set(patch: Partial<RuntimeState>, defer = false) {
    this.state = { ...this.state, ...patch };
    if (patch.log) {
      this.state.pendingAuthorizations = getPendingAuthorizations(this.state.log);
      this.state.openInputs = openInputs(this.state.log);
    }
    if (defer && typeof requestAnimationFrame === "function") {
      this.frame ||= requestAnimationFrame(() => {
        this.frame = 0;
        this.notify();
      });
      return;
    }
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.notify();
  }

  private notify() {
    for (const fn of this.listeners) fn();
  }

  /**
   * Replaces the events held (load, rollback, rebase, earlier pages); the render keys continue
   * the log shown until now (`prepended`: earlier pages arrived in front, see window.ts).
   */
  private setEvents(events: EveEvent[], patch: Partial<RuntimeState> = {}, prepended = false) {
    this.ids = new Set(events.flatMap((e) => (e.meta?.id ? [e.meta.id] : [])));
    const offset = patch.offset ?? this.state.offset;
    this.set({ ...patch, events, log: reduceHeld({ offset, events, branchBefore: this.branchBefore }, this.state.log, prepended) });
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
  primeFromCreate(message: string, files?: FilePart[]): void {
    this.known = [];
    this.serverLength = 0;
    this.beforeCursor = null;
    this.branchBefore = null;
    this.pendingMessage = message;
    this.pendingFiles = files?.length ? files : undefined;
    this.setEvents([], { phase: "idle", session: null, loadError: null, offset: 0, hasEarlier: false });
    this.consumePending();
  }

  /** Loads the chat from the server unless a turn is running here (then the runtime is newer). */
  async load(): Promise<void> {
    if (this.busy || this.turn) return;
    if (this.state.phase !== "loading") this.set({ phase: "loading" });
    let detail: ChatDetail;
    let read: Read;
    try {
      detail = await api.getChat(this.chatId);
      // A window that cannot be shown exactly on its own, or that a resume would re-read from
      // before its start, reads on (window.ts).
      const resumes = detail.session !== null;
      read = await readBack(this.chatId, readOf(detail), (r) => needsWholeLog(heldOf(r)) || (resumes && opensInsideOpenTurn(r.events)));
    } catch (err) {
      const message = err instanceof ApiError && err.status === 404 ? t.runtime.chatNotFound : describeError(err);
      this.set({ phase: "idle", loadError: message });
      return;
    }
    if (this.busy || this.turn) return;
    // Chats of the earlier dialect were rewritten into eve events by migration 0004.
    const events = read.events;
    this.known = [...events];
    this.serverLength = read.count;
    this.beforeCursor = read.cursor;
    this.branchBefore = read.branchBefore;
    this.pendingMessage = detail.pendingUserMessage;
    this.cursor = detail.session?.streamIndex ?? 0;
    const at = { offset: read.first, hasEarlier: read.cursor !== null, loadingEarlier: false };
    this.setEvents([...events], { phase: "idle", loadError: null, session: detail.session, stopped: false, optimistic: null, ...at });
    // A turn left open (a refresh mid-response) is resumed from the saved cursor; what was
    // already persisted is recognised by `meta.id`.
    if (detail.session && hasOpenTurn(events)) {
      this.pendingConsumed = true;
      this.watch = new TurnWatch();
      this.startTurn("resuming", "turn");
    } else {
      this.consumePending();
    }
  }

  /**
   * Prepends the page before the events held (the reader scrolled up): one request at a time;
   * the events shown keep their keys, so the page does not re-render or jump. A page that
   * brings a branch marker reads on until the view is exact (window.ts).
   */
  loadEarlier(): Promise<void> {
    if (!this.beforeCursor) return Promise.resolve();
    this.earlier ||= this.prependEarlier().finally(() => {
      this.earlier = null;
    });
    return this.earlier;
  }

  /** Every earlier page (before a branch is made: its cut counts the conversation from the start). */
  async loadAll(): Promise<void> {
    while (this.beforeCursor) {
      const cursor = this.beforeCursor;
      await this.loadEarlier();
      if (this.beforeCursor === cursor) return;
    }
  }

  private async prependEarlier(): Promise<void> {
    const cursor = this.beforeCursor;
    const offset = this.state.offset;
    if (!cursor) return;
    this.set({ loadingEarlier: true });
    let read: Read;
    try {
      const start: Read = { first: offset, events: [], cursor, branchBefore: this.branchBefore, count: this.serverLength };
      read = await readBack(this.chatId, start, (r) => r.first === offset || needsWholeLog(heldOf({ ...r, events: [...r.events, ...this.state.events] })));
    } catch (err) {
      this.set({ loadingEarlier: false });
      this.host.toast(describeError(err));
      return;
    }
    if (this.beforeCursor !== cursor || this.state.offset !== offset) {
      // The chat was read again meanwhile (a reload, a rebase): that read is newer.
      this.set({ loadingEarlier: false });
      return;
    }
    // Only the slots before the ones held: the log may have changed since they were read.
    const older = read.events.slice(0, Math.max(0, offset - read.first));
    this.known = [...older, ...this.known];
    this.beforeCursor = read.cursor;
    this.branchBefore = read.branchBefore;
    const at = { offset: read.first, hasEarlier: read.cursor !== null, loadingEarlier: false };
    this.setEvents([...older, ...this.state.events], at, true);
  }

  /** Seed: the pending message is sent exactly once, when nothing else is running. */
  private consumePending(): void {
    const message = this.pendingMessage;
    const files = this.pendingFiles;
    if ((!message && !files) || this.pendingConsumed || this.busy || this.waitingForAuthorization) return;
    this.pendingConsumed = true;
    this.pendingFiles = undefined;
    void this.send(message ?? "", { alreadyPending: true, files });
  }

  // --- sending ------------------------------------------------------------------------------

  /**
   * Sends a message: optimistic bubble at once, mark it pending on the chat row, start or
   * continue the eve session, save the session, then stream the turn. Returns false (and
   * toasts why) when the message cannot be sent now; the caller then keeps the draft.
   */
  async send(text: string, opts: { alreadyPending?: boolean; branch?: BranchRequest; files?: FilePart[] } = {}): Promise<boolean> {
    const message = text.trim();
    const files = opts.files?.length ? opts.files : undefined;
    if ((!message && !files) || this.busy) return false;
    if (messageChars(message) > MAX_MESSAGE_CHARS) {
      this.host.toast(fmt(t.pages.messageTooLong, { max: MAX_MESSAGE_CHARS }));
      return false;
    }
    if (this.waitingForAuthorization) {
      this.host.toast(t.runtime.authPendingSend);
      return false;
    }
    this.optimisticSince = this.state.offset + this.state.events.length;
    this.stopRequested = false;
    const branch = opts.branch ?? null;
    this.set({ phase: "sending", optimistic: message || pendingLabel(files), stopped: false, branching: branch });
    // The previous turn may still be saving its snapshot, or draining eve's cancel after a
    // stop: let it finish first so that writes stay in order.
    await this.settlePrevious();
    let marked = opts.alreadyPending === true;
    try {
      if (!opts.alreadyPending) {
        const saved = await api.markPending(this.chatId, message || pendingLabel(files));
        marked = true;
        if (saved?.chat) this.host.touchChat(saved.chat);
      }
      let sent;
      try {
        // A branch starts a new eve session seeded with the turns before it (eve has no
        // regenerate route); later messages of a branch carry the same seed.
        const context = withSeed(this.host.clientContext(), branch ? branch.context : currentSeed(this.state.log));
        sent = await sendMessage(branch ? null : this.state.session, message, context, this.host.model?.(this.chatId), files, this.chatId);
      } catch (err) {
        // Not accepted (a 429, the agent down): the chat must not keep it as pending, or the
        // next page load would send it behind the user's back.
        if (marked) await api.clearPending(this.chatId, message || pendingLabel(files)).catch(() => undefined);
        throw err;
      }
      this.cursor = sent.created ? 0 : this.cursor;
      if (branch) {
        // The marker goes before the new session's first event, and is saved at once so that
        // a reload mid-answer still shows the branch.
        this.enqueue(this.appendLocalEvent(branchEvent(branch)));
        this.set({ branching: null });
      }
      const session = { sessionId: sent.session.sessionId, streamIndex: this.cursor };
      // A new session's stream holds only this turn; an existing one's may have events of other
      // turns after the cursor: wait for the one carrying this message's delivery id.
      this.watch = new TurnWatch(sent.created ? undefined : sent.deliveryId);
      this.set({ session });
      await api.saveSession(this.chatId, session).catch(() => {
        // The snapshot at the end of the turn saves the session again.
      });
    } catch (err) {
      this.set({ phase: "idle", optimistic: null, branching: null });
      this.host.toast(describeError(err));
      return false;
    }
    this.pendingMessage = null;
    if (this.stopRequested) {
      // Stop was pressed while the message was on its way: cancel its turn once it shows.
      this.cancelWanted = true;
      this.startTurn("idle", "drain", DRAIN_MS);
      this.stoppedRun = this.streamAbort;
    } else {
      this.startTurn("streaming", "turn");
    }
    return true;
  }

  private async settlePrevious(): Promise<void> {
    if (this.turn) {
      const timeout = new AbortController();
      await Promise.race([this.turn, delay(DRAIN_MS, timeout.signal).catch(() => undefined)]);
      timeout.abort();
    }
    if (this.turn) this.streamAbort?.abort();
  }

  // --- streaming ----------------------------------------------------------------------------

  private startTurn(phase: Phase, mode: Mode, deadlineMs: number | null = null): void {
    const abort = new AbortController();
    this.streamAbort = abort;
    this.mode = mode;
    this.set({ phase });
    const run = this.follow(abort, mode, deadlineMs).finally(() => {
      // The run is over: release what still waits on its signal (drain timers).
      abort.abort();
      if (this.turn === run) this.turn = null;
      if (this.streamAbort === abort) this.streamAbort = null;
    });
    this.turn = run;
  }

  /** After `ms`: a cancel still waiting for its turn id is sent unguarded, and the stream is let go. */
  private armDrain(abort: AbortController | null, ms: number): void {
    const sessionId = this.state.session?.sessionId;
    const timer = setTimeout(() => {
      if (this.cancelWanted && sessionId && this.streamAbort === abort) {
        this.cancelWanted = false;
        void cancelTurn(sessionId).catch(() => undefined);
      }
      abort?.abort();
    }, ms);
    // The timer goes with the run it bounds.
    abort?.signal.addEventListener("abort", () => clearTimeout(timer), { once: true });
  }

  /**
   * Reads the session's stream from the cursor until this turn settles (eve.followStream
   * reconnects from the cursor on its own), then saves the snapshot.
   */
  private async follow(abort: AbortController, mode: Mode, deadlineMs: number | null): Promise<void> {
    const session = this.state.session;
    if (!session) return;
    const signal = abort.signal;
    const watch = this.watch;
    if (deadlineMs !== null) this.armDrain(abort, deadlineMs);
    let settled = false;
    let failure: string | null = null;
    try {
      await followStream(session.sessionId, {
        startIndex: this.cursor,
        signal,
        maxIdleReconnects: mode === "connect" ? Infinity : 5,
        onEvent: (event, cursor) => {
          if (signal.aborted) return false;
          this.cursor = cursor;
          if (!this.appendStreamEvent(event)) return;
          const { ours, ends } = watch.observe(event);
          if (this.cancelWanted && ours && event.type === "turn.started" && typeof event.data?.turnId === "string") {
            this.cancelWanted = false;
            void cancelTurn(session.sessionId, event.data.turnId).catch(() => undefined);
          }
          if (ends) {
            settled = true;
            return false;
          }
        },
      });
    } catch (err) {
      if (!signal.aborted) {
        const e = err as ApiError;
        failure = e.code === "stream_disconnected" ? t.errors.stream_disconnected : e.status === 404 ? t.runtime.sessionNotFound : describeError(e);
      }
    }
    const wasStopped = this.stoppedRun === abort;
    if (wasStopped) this.stoppedRun = null;
    if (!settled && wasStopped && this.state.session?.sessionId === session.sessionId) {
      // eve did not confirm the stop in time: close the turn locally so that a stopped turn is
      // never resumed on the next load.
      this.appendLocalEvent(localWaiting(session.sessionId));
      settled = true;
    }
    if (this.streamAbort !== abort && this.streamAbort !== null) {
      // Another run took over (a skip, a newer send): it saves what it reads.
      await this.flush();
      return;
    }
    // The UI is free as soon as the turn settled; the snapshot is saved behind it (a next
    // message waits for this promise before it starts).
    if (this.state.phase !== "sending") this.set({ phase: "idle", optimistic: null });
    // A drain (after a stop or a Skip) is best effort: the UI already moved on.
    if (failure && !wasStopped && mode !== "drain") this.host.toast(failure);
    if (settled) await this.saveSnapshot();
    else await this.flush();
    if (this.state.phase !== "sending") this.consumePending();
  }

  /** Appends a stream event unless the log has it already (same `meta.id`). */
  private appendStreamEvent(event: EveEvent): boolean {
    const id = event.meta?.id;
    if (id && this.ids.has(id)) return false;
    if (id) this.ids.add(id);
    const eventIndex = this.state.offset + this.state.events.length;
    const events = [...this.state.events, event];
    const patch: Partial<RuntimeState> = { events, log: appendToLog(this.state.log, event) };
    if (this.state.session) patch.session = { ...this.state.session, streamIndex: this.cursor };
    if (this.state.optimistic && hasLatestUserMessage(events, this.state.optimistic, this.optimisticSince - this.state.offset)) patch.optimistic = null;
    // After Connect, the agent's continuation makes the chat busy again.
    if (this.state.phase === "connecting" && this.mode === "connect") patch.phase = "streaming";
    // A fast stream brings many deltas per frame: the page renders once per frame, not per delta
    // (getState() is always current; only what changes the phase is told at once).
    this.set(patch, patch.phase === undefined && patch.optimistic === undefined);
    this.enqueue({ eventIndex, event });
    return true;
  }

  private appendLocalEvent(event: EveEvent): IndexedEvent {
    const entry = { eventIndex: this.state.offset + this.state.events.length, event };
    if (event.meta?.id) this.ids.add(event.meta.id);
    this.set({ events: [...this.state.events, event], log: appendToLog(this.state.log, event) });
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
      let rebases = 0;
      while (this.queue.length) {
        const batch = this.queue.slice(0, PERSIST_BATCH);
        let ok = false;
        let conflict = false;
        for (let attempt = 0; attempt < 3 && !ok && !conflict; attempt++) {
          try {
            // The batch extends the log up to its first slot.
            await api.appendEvents(this.chatId, batch, batch[0]!.eventIndex);
            ok = true;
          } catch (err) {
            if (err instanceof ApiError && err.status === 409) conflict = true;
            else await delay(300 * (attempt + 1));
          }
        }
        if (conflict && rebases++ < 3 && (await this.rebase())) continue;
        this.queue.splice(0, batch.length);
        if (ok) {
          this.serverLength = Math.max(this.serverLength, ...batch.map((e) => e.eventIndex + 1));
        } else if (!this.persistWarned) {
          // The snapshot at the end of the turn writes every event again.
          this.persistWarned = true;
          this.host.toast(t.runtime.partlyUnsaved);
        }
      }
    });
    return this.flushing;
  }

  /**
   * Another tab or client wrote this chat since we read it (409): read the stored log, keep all
   * of it, put our events it lacks after it, and queue those at their new slots. Nothing is
   * lost and the user sees both; no error is shown. False when the chat cannot be read.
   */
  private async rebase(): Promise<boolean> {
    const offset = this.state.offset;
    let stored: EveEvent[];
    let count: number;
    try {
      // The stored log from the first slot this tab holds (usually the latest window has it).
      const read = await readBack(this.chatId, readOf(await api.getChat(this.chatId)), (r) => r.first > offset);
      stored = fromSlot(read.first, read.events, offset);
      count = Math.max(read.count, offset + stored.length);
    } catch {
      return false;
    }
    if (this.state.offset !== offset) return false;
    const merged = rebaseLog(stored, this.state.events);
    this.known = [...stored];
    this.serverLength = count;
    this.setEvents(merged);
    const at = offset + stored.length;
    this.queue = merged.slice(stored.length).map((event, i) => ({ eventIndex: at + i, event }));
    return true;
  }

  private async saveSnapshot(): Promise<void> {
    await this.flush();
    for (let attempt = 0; attempt < 3; attempt++) {
      const known = this.known.filter((e) => !isLocal(e));
      const observed = this.state.events.filter((e) => !isLocal(e)).slice(known.length);
      const events = buildSnapshot(known, observed, this.localEntries());
      const session = this.state.session ? { ...this.state.session, streamIndex: this.cursor } : null;
      // The snapshot is of the slots this tab holds; the ones before them stay as stored.
      const from = this.state.offset;
      try {
        const saved = await api.saveSnapshot(this.chatId, events, session, this.serverLength, from);
        // Earlier pages may have arrived meanwhile: they stay in front.
        this.known = [...this.known.slice(0, from - this.state.offset), ...events];
        this.serverLength = from + events.length;
        if (saved?.chat) this.host.touchChat(saved.chat);
        return;
      } catch (err) {
        if (err instanceof ApiError && err.status === 409 && attempt < 2 && (await this.rebase())) {
          // The snapshot carries everything: nothing is left to append.
          this.queue = [];
          continue;
        }
        if (attempt === 2) this.host.toast(fmt(t.runtime.saveFailed, { error: describeError(err) }));
        else await delay(400 * (attempt + 1));
      }
    }
  }

  /** Local events with their slots in the current log (loaded ones included). */
  private localEntries(): IndexedEvent[] {
    const out: IndexedEvent[] = [];
    this.state.events.forEach((event, eventIndex) => {
      if (isLocal(event)) out.push({ eventIndex, event });
    });
    return out;
  }

  // --- stop, authorization, input -------------------------------------------------------------

  /**
   * Stops the running turn. The UI reacts at once (seed 003): the composer is free, running
   * tool calls show as interrupted, the thinking row goes. `POST …/cancel` (with the turn's id)
   * follows in the background, and the stream is followed until eve confirms with
   * `turn.cancelled` + `session.waiting`; the turn is then saved, never resumed.
   */
  stop(): void {
    if (!this.busy) return;
    const phase = this.state.phase;
    this.set({ phase: "idle", stopped: true, optimistic: phase === "sending" ? this.state.optimistic : null });
    if (phase === "sending") {
      this.stopRequested = true;
      return;
    }
    this.mode = "drain";
    this.stoppedRun = this.streamAbort;
    const session = this.state.session;
    if (session) {
      const turnId = activeTurnId(this.state.log);
      if (turnId) cancelTurn(session.sessionId, turnId).catch((err: Error) => this.host.toast(fmt(t.runtime.stopFailed, { error: describeError(err) })));
      else this.cancelWanted = true;
    }
    this.armDrain(this.streamAbort, DRAIN_MS);
  }

  /**
   * Seed handleSkipAuthorization, in eve's terms: the wait ends locally at once (a local
   * `authorization.completed` declined + `session.waiting`, saved through the skip route), and
   * eve is told the eve way — cancelling the held turn declines its sign-in — then its own
   * events are recorded as they arrive.
   */
  async skipAuthorization(auth: AuthorizationView): Promise<void> {
    this.streamAbort?.abort();
    const session = this.state.session;
    const before = this.state.events;
    await this.flush();
    const [completedEvent, waitingEvent] = skipEvents(auth, session?.sessionId ?? "");
    const completed = this.appendLocalEvent(completedEvent);
    const waiting = this.appendLocalEvent(waitingEvent);
    this.set({ phase: "idle", optimistic: null });
    try {
      let saved: { chat: ChatSummary } | undefined;
      try {
        saved = await api.skipAuthorization(this.chatId, [completed, waiting], session, this.serverLength);
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 409 && (await this.rebase()))) throw err;
        // Our two events moved behind what the other tab wrote; the queue holds them and any
        // other unsaved ones, so the skip writes them all.
        const slots = this.queue;
        this.queue = [];
        saved = await api.skipAuthorization(this.chatId, slots, session, this.serverLength);
      }
      this.known = [...this.state.events];
      this.serverLength = this.state.offset + this.state.events.length;
      this.pendingMessage = null;
      if (saved?.chat) this.host.touchChat(saved.chat);
    } catch (err) {
      this.setEvents(before);
      this.host.toast(fmt(t.runtime.skipFailed, { error: describeError(err) }));
      return;
    }
    if (!session) return;
    void cancelTurn(session.sessionId, auth.turnId).catch(() => undefined);
    await this.settlePrevious();
    this.watch = new TurnWatch();
    this.startTurn("idle", "drain", DRAIN_MS);
  }

  /**
   * Answers an open input request (`inputResponses`: an option by id, or free text) and follows
   * the continued turn. When the session is gone, the answer is sent as a message instead.
   */
  async answerInput(requestId: string, answer: { optionId: string; label: string; text?: string } | { text: string }): Promise<void> {
    const session = this.state.session;
    if (!session || this.busy) return;
    this.set({ phase: "sending", stopped: false });
    await this.settlePrevious();
    // An option may carry a note (an approval's denial): eve quotes it to the model.
    const response: InputResponse =
      "optionId" in answer
        ? { requestId, optionId: answer.optionId, ...(answer.text ? { text: answer.text } : {}) }
        : { requestId, text: answer.text };
    try {
      await respond(session.sessionId, [response], this.host.clientContext());
    } catch (err) {
      this.set({ phase: "idle" });
      if (isSessionGone(err)) {
        void this.send("optionId" in answer ? answer.label : answer.text);
        return;
      }
      this.host.toast(describeError(err));
      return;
    }
    this.watch = new TurnWatch();
    this.startTurn("streaming", "turn");
  }

  /** After the user opened the Connect link: follow the stream for the agent's continuation. */
  watchAfterConnect(): void {
    if (this.turn || !this.state.session) return;
    this.watch = new TurnWatch();
    this.startTurn("connecting", "connect", CONNECT_WATCH_MS);
  }
}

/** Reads the pages before `read` while `more` says so and the log has any. */
async function readBack(chatId: string, read: Read, more: (r: Read) => boolean): Promise<Read> {
  let r = read;
  while (r.cursor && more(r)) {
    const page = readOf(await api.getChat(chatId, undefined, { before: r.cursor }));
    r = { ...page, events: [...page.events, ...r.events], count: Math.max(r.count, page.count) };
  }
  return r;
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
