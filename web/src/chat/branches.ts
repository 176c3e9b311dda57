// Branches of a chat: edit-and-resend and regenerate. eve has no "regenerate" route, so an edit
// or a regenerate continues on a NEW eve session, seeded with the turns before it, and the chat
// keeps both branches (docs/web.md, "Edit, regenerate and branches").
//
// The chat's log stays append-only: a branch is a local `eve-chat.branch` event followed by the
// new session's events. The log therefore reads as "runs": the root run (the chat's first
// session and any session that replaced it), and one run per branch marker, each continuing the
// conversation of its parent run cut before user message number `at`. What the user sees is one
// run's conversation: its parent's prefix, then its own messages. No DOM, no network:
// unit-tested in branches.test.ts.

import { BRANCH_EVENT, localMeta, renderSegment, withChatTotal, type EveEvent, type ReducedLog, type RenderItem } from "./events";
import { answerText } from "./actions";

export const ROOT_RUN = "root";

export interface Run {
  id: string;
  parent: string | null;
  at: number;
  context?: string;
  segments: number[];
}

/** The runs of a log, in the order they were created; the last one is where new turns go. */
export function runsOf(log: ReducedLog): Run[] {
  const runs: Run[] = [{ id: ROOT_RUN, parent: null, at: 0, segments: [] }];
  const known = new Set([ROOT_RUN]);
  log.segments.forEach((seg, si) => {
    const b = seg.branch;
    // A marker naming a run that does not exist (yet) continues from the root instead.
    if (b && !known.has(b.id)) {
      runs.push({ id: b.id, parent: known.has(b.parent) ? b.parent : ROOT_RUN, at: b.at, context: b.context, segments: [si] });
      known.add(b.id);
    } else {
      runs[runs.length - 1]!.segments.push(si);
    }
  });
  return runs;
}

export interface Switcher {
  /** 0-based position of the shown alternative, and how many there are. */
  index: number;
  count: number;
  /** The run to show for each alternative. */
  targets: string[];
}

export interface Conversation {
  /** The run shown. */
  run: string;
  items: RenderItem[];
  /** For each user item (by key): its position among the conversation's user messages. */
  positions: Map<string, number>;
  /** For each user item (by key) that has alternatives: the ‹ i/n › switcher. */
  switchers: Map<string, Switcher>;
  /** How many user messages the conversation has. */
  userCount: number;
  /** The run shown is the latest one (where new turns of the current session go). */
  latest: boolean;
}

interface Display {
  items: RenderItem[];
  owners: string[];
}

/**
 * The conversation of run `view` (the latest run when null or unknown): the items the user
 * sees, with the position of each user message and the branch switchers.
 */
export function conversation(log: ReducedLog, view: string | null, stopped = false, origin?: string): Conversation {
  const runs = runsOf(log);
  const byId = new Map(runs.map((r) => [r.id, r]));
  const latest = runs[runs.length - 1]!.id;
  const shown = view && byId.has(view) ? view : latest;
  const base = log.base ?? 0;
  const segItems = log.segments.map((seg, si) => renderSegment(seg, base + si, stopped && runOfSegment(runs, si) === latest, origin));
  const memo = new Map<string, Display>();
  const display = (id: string): Display => {
    const hit = memo.get(id);
    if (hit) return hit;
    const run = byId.get(id)!;
    const own = run.segments.flatMap((si) => segItems[si]!);
    let items: RenderItem[] = [];
    let owners: string[] = [];
    if (run.parent !== null) {
      const base = display(run.parent);
      const cut = userIndex(base.items, run.at);
      items = base.items.slice(0, cut);
      owners = base.owners.slice(0, cut);
    }
    const out = { items: [...items, ...own], owners: [...owners, ...own.map(() => id)] };
    memo.set(id, out);
    return out;
  };
  const shownDisplay = display(shown);
  const owners = shownDisplay.owners;
  const items = withChatTotal(shownDisplay.items, log);
  const positions = new Map<string, number>();
  const switchers = new Map<string, Switcher>();
  let k = 0;
  items.forEach((item, i) => {
    if (item.kind !== "user") return;
    positions.set(item.key, k);
    const owner = byId.get(owners[i]!)!;
    const base = owner.parent !== null && owner.at === k ? owner.parent : owner.id;
    const targets: string[] = [];
    const b = display(base);
    const bi = userIndex(b.items, k);
    if (bi < b.items.length && b.owners[bi] === base) targets.push(base);
    for (const r of runs) if (r.parent === base && r.at === k) targets.push(r.id);
    if (targets.length > 1) switchers.set(item.key, { index: Math.max(0, targets.indexOf(owner.id)), count: targets.length, targets });
    k++;
  });
  return { run: shown, items, positions, switchers, userCount: k, latest: shown === latest };
}

/** The conversation cut before user message number `at` (what a branch on its way continues). */
export function cutBefore(conv: Conversation, at: number): Conversation {
  const items = conv.items.slice(0, userIndex(conv.items, at));
  const keys = new Set(items.map((i) => i.key));
  const keep = <V>(m: Map<string, V>) => new Map([...m].filter(([key]) => keys.has(key)));
  return { ...conv, items, positions: keep(conv.positions), switchers: keep(conv.switchers), userCount: Math.min(conv.userCount, at) };
}

function runOfSegment(runs: Run[], si: number): string | undefined {
  return runs.find((r) => r.segments.includes(si))?.id;
}

/** The index in `items` of user message number `k`, or the length when there is none. */
function userIndex(items: RenderItem[], k: number): number {
  let n = 0;
  for (let i = 0; i < items.length; i++) {
    if (items[i]!.kind === "user") {
      if (n === k) return i;
      n++;
    }
  }
  return items.length;
}

// ---------------------------------------------------------------------------------------------
// Making a branch

/** Room for the seeded turns inside eve's `clientContext` (4000 characters on our agent). */
export const SEED_CONTEXT_CHARS = 3000;
const SEED_HEADER =
  "The conversation so far (the user edited or regenerated a later message, so this is a new session; continue from here):";

export interface BranchRequest {
  parent: string;
  at: number;
  /** The earlier turns as text, for the new session's `clientContext`; empty at the start. */
  context: string;
}

/**
 * The branch that replaces user message number `at` of the shown conversation (an edit, or a
 * regenerate that sends the same text), or that continues it at its end (a message typed while
 * an older branch is shown). The parent is the run the cut point belongs to, so that all
 * alternatives of one message are siblings.
 */
export function branchAt(log: ReducedLog, conv: Conversation, at: number): BranchRequest {
  const runs = runsOf(log);
  const byId = new Map(runs.map((r) => [r.id, r]));
  let parent = conv.run;
  const userKey = [...conv.positions].find(([, k]) => k === at)?.[0];
  if (userKey) {
    const owner = ownerOf(log, conv.run, userKey) ?? conv.run;
    const run = byId.get(owner)!;
    parent = run.parent !== null && run.at === at ? run.parent : owner;
  }
  const cut = userIndex(conv.items, at);
  return { parent, at, context: seedContext(conv.items.slice(0, cut)) };
}

function ownerOf(log: ReducedLog, view: string, key: string): string | null {
  const runs = runsOf(log);
  // The owner is the deepest run on the view's ancestry whose own items hold the key.
  const byId = new Map(runs.map((r) => [r.id, r]));
  for (let id: string | null = view; id !== null; id = byId.get(id)?.parent ?? null) {
    const run = byId.get(id);
    if (!run) return null;
    const own = run.segments.flatMap((si) => renderSegment(log.segments[si]!, (log.base ?? 0) + si));
    if (own.some((i) => i.key === key)) return id;
  }
  return null;
}

/** The earlier turns as plain text, the most recent that fit, oldest first. */
export function seedContext(items: readonly RenderItem[], max = SEED_CONTEXT_CHARS): string {
  const lines: string[] = [];
  for (const item of items) {
    if (item.kind === "user" && item.text.trim()) lines.push(`User: ${item.text.trim()}`);
    if (item.kind === "assistant") {
      const text = answerText(item);
      if (text) lines.push(`Assistant: ${text}`);
    }
  }
  if (!lines.length) return "";
  const kept: string[] = [];
  let size = SEED_HEADER.length;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (size + line.length + 1 > max) {
      // The oldest turn that does not fit whole is cut from its start.
      const room = max - size - 2;
      if (room > 40) kept.unshift(`…${line.slice(line.length - room)}`);
      break;
    }
    kept.unshift(line);
    size += line.length + 1;
  }
  return [SEED_HEADER, ...kept].join("\n");
}

/** The seed of the session new turns go to (the latest run's), if it is a branch. */
export function currentSeed(log: ReducedLog): string {
  const runs = runsOf(log);
  return runs[runs.length - 1]!.context ?? "";
}

/** The app's `clientContext` with a branch's seed after it, within eve's 4000 characters. */
export function withSeed(clientContext: string, seed: string, max = 4000): string {
  if (!seed) return clientContext;
  const room = max - clientContext.length - 2;
  if (room <= 0) return clientContext;
  const s = seed.length > room ? seed.slice(seed.length - room) : seed;
  return clientContext ? `${clientContext}\n\n${s}` : s;
}

/** The local event that opens a branch (saved with the chat, never sent to eve). */
export function branchEvent(req: BranchRequest, meta = localMeta()): EveEvent {
  const data: Record<string, unknown> = { parent: req.parent, at: req.at };
  if (req.context) data.context = req.context;
  return { type: BRANCH_EVENT, data, meta };
}
