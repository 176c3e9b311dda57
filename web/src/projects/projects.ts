// Projects and their files (issue 21, docs/projects.md): the wire shapes (eve_api::projects,
// camelCase), the calls, and the pure decisions the sidebar, the project page and the
// transcript make — which chats the history lists outside projects, what a file tool call
// shows, when a turn wrote a file, how a file's source and type read.
import { request } from "../api";
import type { ChatPage, ChatSummary } from "../api/types";
import type { Shell } from "../shell/context";
import { describeError, fmt, t } from "../i18n";

// ---- shapes ------------------------------------------------------------------------------

export interface Project {
  id: string;
  name: string;
  instructions: string;
  createdAt: string;
  updatedAt: string;
}

export type FileSource = "user_upload" | "temp" | "final_output";

export type FilePreview =
  | { kind: "image"; thumbnailUrl?: string | null }
  | { kind: "text"; text: string }
  | { kind: "pdf"; pages: number }
  | { kind: "other" };

export interface ProjectFile {
  id: string;
  name: string;
  mediaType: string;
  size: number;
  source: FileSource;
  preview: FilePreview;
  downloadUrl: string;
  createdAt: string;
  updatedAt: string;
}

/** A chat as the list may carry it: `projectId` when the server reports it (absent: unknown). */
export type ProjectChat = ChatSummary & { projectId?: string | null };

// ---- calls -------------------------------------------------------------------------------

const enc = encodeURIComponent;
export const projectPath = (id: string) => `/api/projects/${enc(id)}`;

export const projectsApi = {
  list: () => request<{ projects: Project[] }>("GET", "/api/projects"),
  create: (name: string, instructions?: string) => request<{ project: Project }>("POST", "/api/projects", instructions ? { name, instructions } : { name }),
  chats: (id: string, cursor: string | null = null, limit = 50) =>
    request<ChatPage>("GET", `/api/chats?projectId=${enc(id)}&limit=${limit}${cursor ? `&cursor=${enc(cursor)}` : ""}`),
  createChat: (projectId: string, pendingUserMessage?: string) =>
    request<{ chat: ChatSummary }>("POST", "/api/chats", pendingUserMessage ? { pendingUserMessage, projectId } : { projectId }),
  /** Moves a chat into a project, or out of any (`null`). */
  moveChat: (chatId: string, projectId: string | null) => request<{ chat: ChatSummary }>("PATCH", `/api/chats/${enc(chatId)}`, { projectId }),
};

// ---- the sidebar -------------------------------------------------------------------------

/**
 * The history outside projects: chats the server says are in a project (`projectId`), or that
 * this page knows are (`known`: listed in a project, created or moved there), are left out.
 */
export function chatsOutsideProjects(chats: ProjectChat[], known: Record<string, string | null>): ProjectChat[] {
  return chats.filter((c) => {
    const local = known[c.id];
    if (local !== undefined) return local === null;
    return !c.projectId;
  });
}

/** Most recently updated first (the server's order), a changed project moved up in place. */
export function upsertProject(list: Project[], p: Project): Project[] {
  return [p, ...list.filter((x) => x.id !== p.id)].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
}

// ---- moving chats ------------------------------------------------------------------------

type ShellOf = Shell;

/** The project a chat is in, as far as this page knows (null: none). */
export function projectOf(shell: ShellOf, chat: ProjectChat): string | null {
  const known = shell.chatProject[chat.id];
  return known !== undefined ? known : chat.projectId ?? null;
}

/** Moves a chat into a project or out of one: at once in the sidebar, back on a refusal. */
export async function moveChat(shell: ShellOf, chat: ChatSummary, to: Project | null): Promise<void> {
  const from = projectOf(shell, chat);
  const fromName = shell.projects.find((p) => p.id === from)?.name ?? "";
  shell.setChatProject(chat.id, to?.id ?? null);
  try {
    await projectsApi.moveChat(chat.id, to?.id ?? null);
    shell.toast(to ? fmt(t.projects.moved, { name: to.name }) : fmt(t.projects.movedOut, { name: fromName }), "info");
  } catch (err) {
    shell.setChatProject(chat.id, from);
    shell.toast(fmt(t.projects.moveFailed, { error: describeError(err) }));
  }
}

// ---- file tools in the transcript --------------------------------------------------------

/** eve's file tools (docs/projects.md, "The agent"). */
export const FILE_TOOLS = ["read_file", "write_file", "glob", "grep"] as const;
export type FileTool = (typeof FILE_TOOLS)[number];

export interface FileToolView {
  tool: FileTool;
  /** `/workspace/<name>`, a glob pattern, or a grep pattern's scope. */
  path: string;
  /** write_file: the bytes written. */
  size?: number;
}

const parse = (v: unknown): Record<string, unknown> | null => {
  if (v && typeof v === "object") return v as Record<string, unknown>;
  if (typeof v !== "string" || !v.trim().startsWith("{")) return null;
  try {
    const o: unknown = JSON.parse(v);
    return o && typeof o === "object" ? (o as Record<string, unknown>) : null;
  } catch {
    return null;
  }
};
const str = (v: unknown) => (typeof v === "string" && v ? v : undefined);
const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** What a file tool call shows in one line (name, path, size), or null for another tool. */
export function fileToolView(toolName: string, input: unknown, output: unknown): FileToolView | null {
  if (!(FILE_TOOLS as readonly string[]).includes(toolName)) return null;
  const tool = toolName as FileTool;
  const i = parse(input) ?? {};
  const o = parse(output) ?? {};
  const path =
    str(o.path) ??
    (tool === "read_file" || tool === "write_file" ? str(i.filePath) : tool === "glob" ? str(i.pattern) : str(i.pattern) ?? str(i.path)) ??
    "";
  const view: FileToolView = { tool, path };
  const size = tool === "write_file" ? num(o.size) : undefined;
  if (size !== undefined) view.size = size;
  return view;
}

/**
 * How many file writes of a transcript have completed: when the number grows, a turn wrote a
 * file and the project's file list is read again (no reload, no polling).
 */
export function completedWrites(calls: { file?: FileToolView | null; status: string }[]): number {
  return calls.filter((c) => c.file?.tool === "write_file" && c.status === "done").length;
}
