// MCP servers as data (issue 22, docs/runtime.md "MCP servers"): the admin API's shapes and
// calls, and the pure decisions of the admin page's tab (what a form's edit sends, which
// annotations a tool shows). Only the admin chunk imports this module.
import { request } from "../api";

export type McpAuth = "none" | "bearer" | "oauth";

export interface McpServerTool {
  name: string;
  description: string;
  annotations: Record<string, unknown> | null;
}

export interface McpServer {
  id: string;
  name: string;
  displayName: string;
  description: string;
  url: string;
  auth: McpAuth;
  hasToken: boolean;
  keyUnreadable: boolean;
  enabled: boolean;
  tools: McpServerTool[];
  toolsAt: string | null;
  toolsError: string | null;
  readOnly: boolean;
}

export interface McpServerList {
  bootstrap: McpServer[];
  servers: McpServer[];
}

/** What the add / edit form holds (the token is typed, never loaded). */
export interface McpForm {
  name: string;
  displayName: string;
  description: string;
  url: string;
  auth: McpAuth;
  token: string;
}

export type McpPatch = Partial<Omit<McpForm, "name">> & { enabled?: boolean };

const enc = encodeURIComponent;
const base = "/api/admin/mcp-servers";

export const mcpApi = {
  list: () => request<McpServerList>("GET", base),
  create: (body: Record<string, string>) => request<McpServer>("POST", base, body),
  update: (id: string, patch: McpPatch) => request<McpServer>("PATCH", `${base}/${enc(id)}`, patch),
  remove: (id: string) => request<void>("DELETE", `${base}/${enc(id)}`),
  refresh: (id: string) => request<McpServer>("POST", `${base}/${enc(id)}/tools`, {}),
};

export const emptyForm: McpForm = { name: "", displayName: "", description: "", url: "", auth: "none", token: "" };

/** The form of an existing server (its token left empty: typing one replaces it). */
export const formOf = (s: McpServer): McpForm => ({ name: s.name, displayName: s.displayName, description: s.description, url: s.url, auth: s.auth, token: "" });

/** The body of `POST`: what was typed, empty optional fields left out, a token only for bearer. */
export function createBody(f: McpForm): Record<string, string> {
  const body: Record<string, string> = { name: f.name.trim(), url: f.url.trim(), auth: f.auth };
  if (f.displayName.trim()) body.displayName = f.displayName.trim();
  if (f.description.trim()) body.description = f.description.trim();
  if (f.auth === "bearer" && f.token.trim()) body.token = f.token.trim();
  return body;
}

/** The body of `PATCH`: only the fields that differ from `s` (an empty token keeps the stored one). */
export function patchBody(s: McpServer, f: McpForm): McpPatch {
  const patch: McpPatch = {};
  if (f.displayName.trim() !== s.displayName) patch.displayName = f.displayName.trim();
  if (f.description.trim() !== s.description) patch.description = f.description.trim();
  if (f.url.trim() !== s.url) patch.url = f.url.trim();
  if (f.auth !== s.auth) patch.auth = f.auth;
  if (f.auth === "bearer" && f.token.trim()) patch.token = f.token.trim();
  return patch;
}

const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;

/** The hints a tool's annotations set to true, in the spec's order (what the tab shows as badges). */
export function annotationBadges(annotations: Record<string, unknown> | null | undefined): string[] {
  if (!annotations || typeof annotations !== "object") return [];
  return HINTS.filter((h) => annotations[h] === true);
}

/** A tool's title from its annotations, if it has one other than its name. */
export function toolTitle(t: McpServerTool): string | null {
  const title = t.annotations?.title;
  return typeof title === "string" && title.trim() && title !== t.name ? title : null;
}
