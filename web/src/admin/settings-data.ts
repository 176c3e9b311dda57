// The admin page's Settings tab (docs/runtime.md "Settings"): the wire shapes of
// `/api/admin/settings`, the form's draft (text as typed) made from them, and the PATCH a
// saved draft sends — only the keys that changed; a key the admin returns to the default is
// `null`. The tab (components/admin-settings.tsx) only renders these.
import { request } from "../api";

export type ToolDisplay = "collapsed" | "full";
export type ToolApproval = "never" | "once" | "always";

export interface Settings {
  instructions: string | null;
  defaultModel: string | null;
  toolDisplay: ToolDisplay | null;
  logModelRequests: boolean | null;
  signupDomains: string[] | null;
  defaultTokensPerDay: number | null;
  toolApprovals: Record<string, ToolApproval> | null;
  outboundAllowedHosts: string[] | null;
}

export type SettingKey = keyof Settings;

export const SETTING_KEYS: SettingKey[] = [
  "instructions",
  "defaultModel",
  "toolDisplay",
  "logModelRequests",
  "signupDomains",
  "defaultTokensPerDay",
  "toolApprovals",
  "outboundAllowedHosts",
];

export interface SettingsView {
  settings: Settings;
  bootstrap: Settings;
}

export const settingsApi = {
  get: () => request<SettingsView>("GET", "/api/admin/settings"),
  patch: (patch: Partial<Settings>) => request<SettingsView>("PATCH", "/api/admin/settings", patch),
};

/** Every field as the form holds it: text, except the switch. */
export interface Draft {
  instructions: string;
  defaultModel: string;
  toolDisplay: ToolDisplay;
  logModelRequests: boolean;
  signupDomains: string;
  defaultTokensPerDay: string;
  toolApprovals: string;
  outboundAllowedHosts: string;
}

const list = (items: string[] | null | undefined) => (items ?? []).join(", ");
const approvals = (map: Record<string, ToolApproval> | null | undefined) =>
  Object.entries(map ?? {})
    .map(([tool, p]) => `${tool} = ${p}`)
    .join("\n");

/** What applies to `key`: its stored value, else the bootstrap. */
export function effective<K extends SettingKey>(view: SettingsView, key: K): Settings[K] {
  return view.settings[key] ?? view.bootstrap[key];
}

/** The form's fields for what applies now. */
export function draftOf(view: SettingsView): Draft {
  return {
    instructions: effective(view, "instructions") ?? "",
    defaultModel: view.settings.defaultModel ?? "",
    toolDisplay: effective(view, "toolDisplay") ?? "collapsed",
    logModelRequests: effective(view, "logModelRequests") ?? false,
    signupDomains: list(effective(view, "signupDomains")),
    defaultTokensPerDay: String(effective(view, "defaultTokensPerDay") ?? 0),
    toolApprovals: approvals(effective(view, "toolApprovals")),
    outboundAllowedHosts: list(effective(view, "outboundAllowedHosts")),
  };
}

/** A comma-, space- or line-separated list. */
export function parseList(text: string): string[] {
  return text
    .split(/[,\s]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `name = policy` lines; the number of the first bad line instead. */
export function parseApprovals(text: string): Record<string, ToolApproval> | { badLine: number } {
  const out: Record<string, ToolApproval> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line) continue;
    const m = /^([^=\s]+)\s*[=:]\s*(never|once|always)$/.exec(line);
    if (!m) return { badLine: i + 1 };
    out[m[1]] = m[2] as ToolApproval;
  }
  return out;
}

export type PatchResult = { patch: Partial<Settings> } | { error: "approvals"; line: number } | { error: "tokens" };

/**
 * The PATCH of `draft` over `view`: only the fields whose value differs from what applies now
 * (the server checks each again; a bad one is refused whole).
 */
export function patchOf(view: SettingsView, draft: Draft): PatchResult {
  const before = draftOf(view);
  const patch: Partial<Settings> = {};
  if (draft.instructions !== before.instructions) patch.instructions = draft.instructions;
  if (draft.defaultModel !== before.defaultModel) patch.defaultModel = draft.defaultModel || null;
  if (draft.toolDisplay !== before.toolDisplay) patch.toolDisplay = draft.toolDisplay;
  if (draft.logModelRequests !== before.logModelRequests) patch.logModelRequests = draft.logModelRequests;
  if (list(parseList(draft.signupDomains)) !== before.signupDomains) patch.signupDomains = parseList(draft.signupDomains);
  if (draft.defaultTokensPerDay.trim() !== before.defaultTokensPerDay) {
    const s = draft.defaultTokensPerDay.trim().replace(/[,_\s]/g, "");
    if (!/^\d+$/.test(s) || !Number.isSafeInteger(Number(s))) return { error: "tokens" };
    patch.defaultTokensPerDay = Number(s);
  }
  if (draft.toolApprovals.trim() !== before.toolApprovals) {
    const parsed = parseApprovals(draft.toolApprovals);
    if ("badLine" in parsed) return { error: "approvals", line: parsed.badLine as number };
    patch.toolApprovals = parsed;
  }
  if (list(parseList(draft.outboundAllowedHosts)) !== before.outboundAllowedHosts) patch.outboundAllowedHosts = parseList(draft.outboundAllowedHosts);
  return { patch };
}
