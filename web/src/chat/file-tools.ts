// eve's workspace file tools (read_file, write_file, glob, grep) as the transcript shows them:
// one line per call with the tool, the path and a write's size, and how many writes of a
// transcript have completed (a project chat reads its file list again when that grows).

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
