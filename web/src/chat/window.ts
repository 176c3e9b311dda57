// A long chat opens at its latest window (GET /api/chats/:id answers the newest events and a
// cursor to the ones before them; docs/chat-store.md, "Opening a chat"). The runtime holds a
// contiguous suffix of the log — `events` from slot `offset` on — and prepends earlier pages as
// the reader scrolls up. What is shown must stay exact at every step: these are the rules for
// reducing a suffix, pure and unit-tested in window.test.ts.

import { BRANCH_EVENT, hasOpenTurn, isSettlingEvent, reduceLog, type EveEvent, type ReducedLog } from "./events";
import type { ChatDetail } from "../api/types";

/** The suffix of the log a runtime holds. */
export interface Held {
  /** The slot of `events[0]`. */
  offset: number;
  events: readonly EveEvent[];
  /** The newest branch marker before `offset` (the server names it; null when none). */
  branchBefore: EveEvent | null;
}

const isBranch = (e: EveEvent) => e.type === BRANCH_EVENT;

/**
 * Whether the suffix cannot be shown exactly: it starts after slot 0 and holds a branch marker,
 * so the branch continues a conversation cut at a user message the suffix may not reach (the
 * cut counts that conversation's user messages from the start). Such a chat reads its earlier
 * pages before it shows: the cost falls on chats with a branch inside their latest window.
 */
export function needsWholeLog(held: Held): boolean {
  return held.offset > 0 && held.events.some(isBranch);
}

/**
 * What the reducer reads for a suffix. Without a marker inside it, every event of the suffix
 * belongs to the run new turns go to (the latest branch, or the chat's root): the server's
 * `branchBefore` is put in front, so that run is recognised (its seed goes with the next
 * message) and its items start where the suffix starts — an exact tail of the conversation.
 */
export function reductionInput(held: Held): readonly EveEvent[] {
  if (held.offset === 0 || !held.branchBefore || held.events.some(isBranch)) return held.events;
  return [held.branchBefore, ...held.events];
}

/**
 * The suffix reduced with render keys that continue `previous`'s. `prepended`: earlier events
 * arrived in front, so the segments `previous` had keep their numbers (the first one may grow:
 * it was a part); otherwise the log changed at its end (a rebase, a rollback).
 */
export function reduceHeld(held: Held, previous?: ReducedLog, prepended = false): ReducedLog {
  const input = reductionInput(held);
  const base = previous?.base ?? 0;
  const fresh = reduceLog(input, base);
  if (!previous || !prepended) return fresh;
  const next = base - (fresh.segments.length - previous.segments.length);
  return next === base ? fresh : reduceLog(input, next);
}

/**
 * Whether the suffix ends in an open turn whose start it does not hold. A resume re-reads the
 * open turn's stream from its start and recognises what is stored by `meta.id`, so the suffix
 * must reach back to that start, or the events before it would be appended a second time.
 */
export function opensInsideOpenTurn(events: readonly EveEvent[]): boolean {
  if (!hasOpenTurn(events)) return false;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === "turn.started" || e.type === "session.started" || isSettlingEvent(e)) return false;
  }
  return true;
}

/**
 * The events of a window read from the server (starting at slot `first`) from slot `offset` on:
 * what the store holds of the slots a runtime holds.
 */
export function fromSlot(first: number, events: readonly EveEvent[], offset: number): EveEvent[] {
  return events.slice(Math.max(0, offset - first));
}

/** What reading a chat's pages gave: the events from slot `first` on, and the cursor before them. */
export interface Read {
  first: number;
  events: EveEvent[];
  cursor: string | null;
  branchBefore: EveEvent | null;
  /** The log's length. */
  count: number;
}

/** One answer of GET /api/chats/:id as a Read (an older server answers the whole log). */
export function readOf(detail: ChatDetail): Read {
  const first = detail.firstEventIndex ?? 0;
  return {
    first,
    events: detail.events,
    cursor: detail.beforeCursor ?? null,
    branchBefore: detail.branchBefore?.event ?? null,
    count: Math.max(detail.eventCount ?? 0, first + detail.events.length),
  };
}

export const heldOf = (r: Read): Held => ({ offset: r.first, events: r.events, branchBefore: r.branchBefore });
