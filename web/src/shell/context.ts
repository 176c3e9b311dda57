// The shell's shared state (seed AgentChatShell): viewer, setup, sidebar history, connections,
// toasts, sign-in requests and navigation, provided to every page.
import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";
import type { Route } from "./layout";
import type { ChatRuntime, RuntimeRegistry, RuntimeState } from "../chat/runtime";
import type { ChatSummary, EnabledConnections, SetupStatus, Viewer, AuthMode } from "../api/types";
import type { AccountSettings } from "../account/accounts";
import type { Project } from "../projects/projects";
import { fmt, t } from "../i18n";

export interface Shell {
  route: Route;
  navigate(path: string, opts?: { replace?: boolean }): void;
  /** `undefined` until /api/auth/session answered. */
  viewer: Viewer | null | undefined;
  authMode: AuthMode | undefined;
  setup: SetupStatus | undefined;
  /** Accounts mode: the signed-in account's settings (`GET /api/auth/account`); null elsewhere. */
  account: AccountSettings | null | undefined;
  setAccount(account: AccountSettings): void;
  /** The account's role is admin (the server checks it again on every admin route). */
  isAdmin: boolean;
  /** A sign-up or reset link signed the browser in: the shell takes the viewer as a login's. */
  signedIn(viewer: Viewer): void;
  /** Reads `/api/setup` again (the first admin's sign-up changes it). */
  refreshSetup(): void;
  chats: ChatSummary[];
  /** Pinned chats, most recently pinned first: listed above the history, not in it. */
  pinned: ChatSummary[];
  setPinned(chat: ChatSummary, pinned: boolean): void;
  chatsLoaded: boolean;
  /** The principal's projects, most recently updated first (loaded with the first history page). */
  projects: Project[];
  /** Chat id → its project id (null: none), as far as this page knows. */
  chatProject: Record<string, string | null>;
  setChatProject(chatId: string, projectId: string | null): void;
  /** A project's chat list arrived: these chats are in it. */
  knowChats(projectId: string, chatIds: string[]): void;
  putProject(project: Project): void;
  /** A project was deleted: it, its chats and (on its page) the page go. */
  dropProject(id: string): void;
  nextCursor: string | null;
  loadMoreChats(): void;
  touchChat(chat: ChatSummary): void;
  removeChat(id: string): void;
  /**
   * Deletes a chat with a 5 s undo: the row goes at once, the DELETE is sent when the undo
   * window ends (or when the page is closed or reloaded before that).
   */
  deleteChat(chat: ChatSummary): void;
  updateChatTitle(id: string, title: string): void;
  connections: EnabledConnections;
  setConnection(id: keyof EnabledConnections, on: boolean): void;
  toast(message: string, tone?: "error" | "info", opts?: { action?: { label: string; run(): void }; ms?: number }): void;
  /** Opens sign-in, keeping `draft` in sessionStorage (`eve-chat-draft`). */
  requestSignIn(draft?: string): void;
  /** Bumped when a sign-in completes so that pages restore the saved draft. */
  signInCount: number;
  runtimes: RuntimeRegistry;
}

export const ShellContext = createContext<Shell | null>(null);

export function useShell(): Shell {
  const shell = useContext(ShellContext);
  if (!shell) throw new Error("useShell outside the shell");
  return shell;
}

/** Re-renders on every change of a chat runtime's state. */
export function useRuntime(rt: ChatRuntime | null): RuntimeState | null {
  const [, setTick] = useState(0);
  useEffect(() => {
    if (!rt) return;
    setTick((t) => t + 1);
    return rt.subscribe(() => setTick((t) => t + 1));
  }, [rt]);
  return rt ? rt.getState() : null;
}

export const DRAFT_KEY = "eve-chat-draft";

export function readSavedDraft(): string {
  try {
    return sessionStorage.getItem(DRAFT_KEY) ?? "";
  } catch {
    return "";
  }
}

export function saveDraft(text: string): void {
  try {
    if (text) sessionStorage.setItem(DRAFT_KEY, text);
    else sessionStorage.removeItem(DRAFT_KEY);
  } catch {
    // Storage disabled: the draft stays in the composer only.
  }
}

/** Why the composer is disabled by setup or sign-in, or null when it is usable. */
export function setupBlockReason(shell: Shell): string | null {
  const setup = shell.setup;
  if (!setup) return null;
  if (!setup.appReady) {
    const missing = setup.missing.length ? setup.missing.join("; ") : t.pages.serverNotConfigured;
    return fmt(t.pages.setupIncomplete, { missing });
  }
  return null;
}
