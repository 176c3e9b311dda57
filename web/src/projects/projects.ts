// Projects (issue 21, docs/projects.md): the wire shapes (eve_api::projects, camelCase), the
// calls, and the pure decisions the sidebar makes — which chats the history lists outside
// projects, where a changed project goes in the list. What a file tool call shows in the
// transcript is the chat's (chat/file-tools.ts); moving a chat is projects/moving.ts.
import { request } from "../api";
import type { ChatPage, ChatSummary } from "../api/types";

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
