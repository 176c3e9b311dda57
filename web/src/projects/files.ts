// A project's files (issue 21, docs/projects.md): the calls and the pure decisions of the
// file list. Only the project page's chunk imports this module (not first-load JavaScript).
import { ApiError, errorFrom, request } from "../api";
import { projectPath, type FileSource, type Project, type ProjectFile } from "./projects";

const enc = encodeURIComponent;
const filePath = (projectId: string, fileId: string) => `${projectPath(projectId)}/files/${enc(fileId)}`;

export const filesApi = {
  get: (id: string) => request<{ project: Project }>("GET", projectPath(id)),
  update: (id: string, patch: { name?: string; instructions?: string }) => request<{ project: Project }>("PATCH", projectPath(id), patch),
  remove: (id: string) => request<void>("DELETE", projectPath(id)),
  files: (id: string) => request<{ files: ProjectFile[] }>("GET", `${projectPath(id)}/files`),
  upload: (id: string, file: Blob & { name?: string }) => uploadFile(`${projectPath(id)}/files`, file),
  markFinal: (projectId: string, fileId: string) => request<{ file: ProjectFile }>("POST", `${filePath(projectId, fileId)}/final`, {}),
  removeFile: (projectId: string, fileId: string) => request<void>("DELETE", filePath(projectId, fileId)),
};

/** The upload's headers: the bytes are the body as they are (no base64, no multipart). */
export function uploadHeaders(file: { type?: string; name?: string }): Record<string, string> {
  return { accept: "application/json", "content-type": file.type || "application/octet-stream", "x-file-name": enc(file.name || "pasted") };
}

async function uploadFile(url: string, file: Blob & { name?: string }): Promise<{ file: ProjectFile }> {
  let res: Response;
  try {
    res = await fetch(url, { method: "POST", credentials: "same-origin", body: file, headers: uploadHeaders(file) });
  } catch {
    throw new ApiError(0, "network", "The server could not be reached. Check your connection.");
  }
  if (!res.ok) throw await errorFrom(res);
  return (await res.json()) as { file: ProjectFile };
}

/** A pasted image has no useful name (`image.png`): name it by the time, keeping its type. */
export function pastedName(type: string, now: number): string {
  const ext = (/^image\/(png|jpeg|gif|webp)$/.exec(type)?.[1] ?? "bin").replace("jpeg", "jpg");
  return `pasted-${new Date(now).toISOString().slice(0, 19).replace(/[:T]/g, "-")}.${ext}`;
}

// ---- files -------------------------------------------------------------------------------

/** The i18n key of a file's source badge. */
export function sourceKey(source: FileSource): "upload" | "temp" | "final" {
  return source === "user_upload" ? "upload" : source === "final_output" ? "final" : "temp";
}

/** Only a file the agent wrote (`temp`) can be marked final (the server answers 409 otherwise). */
export const canMarkFinal = (f: ProjectFile) => f.source === "temp";

/** A short type for the list: the extension, else the media type's subtype. */
export function fileType(f: { name: string; mediaType: string }): string {
  const ext = /\.([A-Za-z0-9]{1,8})$/.exec(f.name)?.[1];
  if (ext) return ext.toUpperCase();
  const sub = f.mediaType.split("/")[1]?.split(/[;+]/)[0];
  return (sub || f.mediaType || "?").toUpperCase();
}

/** The files as the list shows them: by name, as the server sends them, a changed one replaced. */
export function upsertFile(list: ProjectFile[], f: ProjectFile): ProjectFile[] {
  return [...list.filter((x) => x.id !== f.id), f].sort((a, b) => a.name.localeCompare(b.name));
}

