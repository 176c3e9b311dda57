// Files in the composer (issue 13 item 7): picked with the paperclip, dropped on the composer or
// pasted, shown as chips before sending, checked here against the same policy the agent
// applies (attachment_max_bytes / attachment_types; the agent's 413 / 415 stays the authority),
// and sent as eve's file parts `{type:"file", mediaType, filename, data}` with `data` a base64
// data: URL. The agent keeps the bytes; the stream's `message.received` names each file with
// the URL the thumbnails load from (`/eve/v1/attachments/:id`).
import { useCallback, useState } from "preact/hooks";
import { fmt, formatSize, t } from "../i18n";


/** The agent's defaults (spin.toml `attachment_max_bytes`, `attachment_types`). */
export const MAX_ATTACHMENT_BYTES = 5 * 1024 * 1024;
export const ALLOWED_TYPES = [
  "image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf", "text/*", "application/json", "application/xml", "application/yaml",
  // The office documents the agent reads (eve_documents::kinds::MEDIA_TYPES).
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  "application/vnd.ms-excel.sheet.macroenabled.12",
  "application/vnd.ms-excel.sheet.binary.macroenabled.12",
  "application/vnd.ms-excel",
  "application/vnd.oasis.opendocument.spreadsheet",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
];
/** Files per message: the agent accepts 16 parts, one of them the text. */
export const MAX_FILES = 8;

/** A text file's type where the browser reports none (common for .md, .csv, .yaml). */
const BY_EXTENSION: Record<string, string> = {
  md: "text/markdown",
  markdown: "text/markdown",
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  xls: "application/vnd.ms-excel",
  ods: "application/vnd.oasis.opendocument.spreadsheet",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  pdf: "application/pdf",
  txt: "text/plain",
  log: "text/plain",
  json: "application/json",
  yaml: "application/yaml",
  yml: "application/yaml",
  xml: "application/xml",
  ts: "text/plain",
  rs: "text/plain",
  py: "text/plain",
};

/** The media type a file is sent with: the browser's, else from its extension. */
export function mediaTypeOf(name: string, type: string): string {
  if (type) return type.toLowerCase();
  const ext = name.split(".").pop()?.toLowerCase() ?? "";
  return BY_EXTENSION[ext] ?? "application/octet-stream";
}

/** eve's `isMediaTypeAllowed`: exact, or a `type/*` pattern. */
export function isAllowedType(mediaType: string, allowed: readonly string[] = ALLOWED_TYPES): boolean {
  const m = mediaType.toLowerCase().split(";")[0].trim();
  return allowed.some((a) => a === m || (a.endsWith("/*") && m.startsWith(a.slice(0, -1))));
}

/** eve's `UploadPolicyConfig`: the agent reports its own in `/eve/v1/info`. */
export interface UploadPolicy {
  maxBytes: number;
  allowedMediaTypes: readonly string[] | "*";
}

export const DEFAULT_POLICY: UploadPolicy = { maxBytes: MAX_ATTACHMENT_BYTES, allowedMediaTypes: ALLOWED_TYPES };
let policy: UploadPolicy = DEFAULT_POLICY;

/** The policy an info document reports (`agent.model.providerOptions.uploadPolicy`), or null. */
export function policyFromInfo(info: unknown): UploadPolicy | null {
  const p = (info as { agent?: { model?: { providerOptions?: { uploadPolicy?: { maxBytes?: unknown; allowedMediaTypes?: unknown } } } } } | null)?.agent?.model?.providerOptions?.uploadPolicy;
  if (!p || typeof p.maxBytes !== "number" || !(p.maxBytes >= 0)) return null;
  const types = p.allowedMediaTypes;
  if (types === "*") return { maxBytes: p.maxBytes, allowedMediaTypes: "*" };
  if (Array.isArray(types) && types.every((t) => typeof t === "string")) return { maxBytes: p.maxBytes, allowedMediaTypes: types.map((t) => t.toLowerCase()) };
  return null;
}

/** Keeps the policy of the agent's info document (a foreign eve reports none: the defaults stay). */
export function rememberUploadPolicy(info: unknown): void {
  policy = policyFromInfo(info) ?? policy;
}

/** Why a file cannot be attached, or null. Type first, size second, as the agent checks. */
export function refusal(name: string, mediaType: string, size: number, p: UploadPolicy = policy): string | null {
  const allowed = p.allowedMediaTypes === "*" || isAllowedType(mediaType, p.allowedMediaTypes);
  if (!allowed || p.maxBytes === 0) return fmt(t.attachments.wrongType, { name });
  if (size > p.maxBytes) return fmt(t.attachments.tooLarge, { name, limit: formatSize(p.maxBytes) });
  return null;
}

export interface DraftFile {
  id: string;
  name: string;
  mediaType: string;
  size: number;
  /** A blob: URL (or a project image's own URL) for an image's chip preview. */
  preview?: string;
  file: Blob;
  /** A project file named instead of uploaded (docs/projects.md): its bytes stay on the server. */
  projectFileId?: string;
}

/** eve's file part: the bytes (`data`), or eve-chat's `projectFileId` naming a project file. */
export interface FilePart {
  type: "file";
  mediaType: string;
  filename: string;
  data?: string;
  projectFileId?: string;
}

/** A file's bytes as a base64 data: URL. */
export function readAsDataUrl(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result));
    r.onerror = () => reject(r.error ?? new Error("unreadable"));
    r.readAsDataURL(file);
  });
}

/** The data: URL with the part's media type (the browser labels some files differently). */
export function withMediaType(dataUrl: string, mediaType: string): string {
  const comma = dataUrl.indexOf(",");
  return comma < 0 ? dataUrl : `data:${mediaType};base64,${dataUrl.slice(comma + 1)}`;
}

export async function toFileParts(files: readonly DraftFile[]): Promise<FilePart[]> {
  return Promise.all(
    files.map(async (f) => ({ type: "file" as const, mediaType: f.mediaType, filename: f.name, projectFileId: f.projectFileId, data: f.projectFileId ? undefined : withMediaType(await readAsDataUrl(f.file), f.mediaType) })),
  );
}

/** The message body's `message`: the text alone, or text and file parts. */
export function messageOf(text: string, files: readonly FilePart[] | undefined): string | ({ type: "text"; text: string } | FilePart)[] {
  if (!files?.length) return text;
  return [...(text ? [{ type: "text" as const, text }] : []), ...files];
}

/** What stands for a message of files only where a text is needed (the pending mark). */
export function pendingLabel(files: readonly FilePart[] | undefined): string {
  return (files ?? []).map((f) => f.filename).join(", ");
}

let seq = 0;

/** The composer's files before sending: add (checked), remove, clear. */
export function useDraftFiles(toast: (message: string) => void) {
  const [files, setFiles] = useState<DraftFile[]>([]);
  const add = useCallback(
    (list: Iterable<File>) => {
      setFiles((current) => {
        const next = [...current];
        for (const file of list) {
          const name = file.name || t.attachments.unnamed;
          const mediaType = mediaTypeOf(name, file.type);
          const why = refusal(name, mediaType, file.size);
          if (why) {
            toast(why);
            continue;
          }
          if (next.length >= MAX_FILES) {
            toast(fmt(t.attachments.tooMany, { max: MAX_FILES }));
            break;
          }
          const preview = mediaType.startsWith("image/") && typeof URL.createObjectURL === "function" ? URL.createObjectURL(file) : undefined;
          next.push({ id: `f${++seq}`, name, mediaType, size: file.size, preview, file });
        }
        return next;
      });
    },
    [toast],
  );
  const remove = useCallback((id: string) => {
    setFiles((current) => {
      const gone = current.find((f) => f.id === id);
      if (gone?.preview) URL.revokeObjectURL(gone.preview);
      return current.filter((f) => f.id !== id);
    });
  }, []);
  const clear = useCallback(() => setFiles([]), []);
  /** Adds files kept elsewhere (a project's, checked by the picker): no bytes are read. */
  const put = useCallback((list: readonly DraftFile[]) => setFiles((current) => [...current, ...list]), []);
  return { files, add, remove, clear, put };
}

export type DraftFiles = ReturnType<typeof useDraftFiles>;

/** Only our own attachment and project file URLs (and local previews) are loaded as images. */
export function isThumbnailUrl(url: string | undefined): url is string {
  return !!url && (/^\/(eve\/v1\/attachments\/att_[0-9a-f]{32}|api\/projects\/[\w/-]+\/download)$/.test(url) || /^(data|blob):/.test(url));
}
