// Pure logic behind the message actions, the sidebar search and the keyboard shortcuts: which
// turn can be retried, what "copy" copies, how a title is split into highlighted matches, which
// deletes are still waiting for their undo window, and which key does what. No DOM, no network:
// unit-tested in actions.test.ts.

import type { ReducedLog, RenderItem } from "./events";

/**
 * How the chat's latest turn ended, when it ended in a way the user may want to retry: eve
 * failed it (`turn.failed`) or it was cancelled (Stop). Null while it runs, after it completed,
 * or when the log has no turn.
 */
export function retryableOutcome(log: ReducedLog): "failed" | "cancelled" | null {
  const seg = log.segments[log.segments.length - 1];
  if (!seg) return null;
  const proj = seg.state.projection;
  const last = seg.turnOrder[seg.turnOrder.length - 1];
  const status = last === undefined ? undefined : proj.turns[last]?.status;
  if (status === "failed") return "failed";
  if (status === "cancelled") return "cancelled";
  return null;
}

/** The text of the latest user message on screen (what Retry sends again), or null. */
export function lastUserText(items: readonly RenderItem[]): string | null {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.kind === "user" && item.text.trim()) return item.text;
  }
  return null;
}

/**
 * What "Copy" puts on the clipboard for one answer: its Markdown source as the model wrote it
 * (text parts only; reasoning and tool calls are not part of the answer), paragraphs apart.
 */
export function answerText(item: Extract<RenderItem, { kind: "assistant" }>): string {
  return item.parts
    .flatMap((p) => (p.kind === "text" ? [p.text.trim()] : []))
    .filter(Boolean)
    .join("\n\n");
}

// ---------------------------------------------------------------------------------------------
// Search highlighting

export interface Highlighted {
  text: string;
  match: boolean;
}

/**
 * Splits `text` into runs, marking every occurrence of the query. The server matches the whole
 * query as one substring (SQLite LIKE: ASCII case-insensitive, exact otherwise), so the same
 * rule marks it here; a title that does not contain it matched in the message text.
 */
export function highlight(text: string, query: string): Highlighted[] {
  const q = query.trim();
  if (!q) return [{ text, match: false }];
  const fold = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());
  const hay = fold(text);
  const needle = fold(q);
  const out: Highlighted[] = [];
  let at = 0;
  for (let i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + needle.length)) {
    if (i > at) out.push({ text: text.slice(at, i), match: false });
    out.push({ text: text.slice(i, i + needle.length), match: true });
    at = i + needle.length;
  }
  if (at < text.length || out.length === 0) out.push({ text: text.slice(at), match: false });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Delete with undo

/** How long a deleted chat can be restored before the DELETE is sent. */
export const UNDO_DELETE_MS = 5000;
export const PENDING_DELETES_KEY = "eve-chat-pending-deletes";

export interface PendingDelete {
  id: string;
  /** When the undo window ends (ms since the epoch). */
  due: number;
}

/** Parses the stored list of deletes whose undo window had not ended; anything malformed is dropped. */
export function parsePendingDeletes(raw: string | null): PendingDelete[] {
  if (!raw) return [];
  try {
    const value: unknown = JSON.parse(raw);
    if (!Array.isArray(value)) return [];
    return value.filter((d): d is PendingDelete => !!d && typeof d.id === "string" && typeof d.due === "number");
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------------------------------------
// Keyboard shortcuts

export type ShortcutAction = "stop" | "new-chat" | "search" | "help";

export interface KeyInput {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
  /** Focus is in a text field (the `?` key types a question mark there). */
  inTextField: boolean;
}

/** The shortcut a key press triggers, or null (the key is left to the page). */
export function shortcutFor(k: KeyInput): ShortcutAction | null {
  const mod = k.ctrlKey || k.metaKey;
  if (k.key === "Escape" && !mod && !k.altKey) return "stop";
  if (mod && k.shiftKey && !k.altKey && k.key.toLowerCase() === "o") return "new-chat";
  if (mod && !k.shiftKey && !k.altKey && k.key.toLowerCase() === "k") return "search";
  if (k.key === "?" && !mod && !k.altKey && !k.inTextField) return "help";
  return null;
}

/** The `?` sheet: every shortcut, as the user presses it; `what` names its catalogue entry
 * (`shortcuts.*`), and "↑" is shown with the catalogue's "(empty composer)". */
export const SHORTCUTS: { action: ShortcutAction | "edit-last"; keys: string; what: "stop" | "newChat" | "search" | "editLast" | "help" }[] = [
  { action: "stop", keys: "Esc", what: "stop" },
  { action: "new-chat", keys: "Ctrl/⌘ + Shift + O", what: "newChat" },
  { action: "search", keys: "Ctrl/⌘ + K", what: "search" },
  { action: "edit-last", keys: "↑", what: "editLast" },
  { action: "help", keys: "?", what: "help" },
];
