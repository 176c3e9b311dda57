// The admin page's data (docs/accounts.md): the admin API calls and the pure decisions of the
// page — the users list's state, quota inputs, the 30-day chart's days and bars. Only the admin
// chunk imports this module, so none of it is first-load JavaScript.
import { query, request } from "../api";
import type { Role } from "../api/types";
import type {
  AdminUser,
  AuditPage,
  CreatedInvite,
  DayTokens,
  InviteSummary,
  ModelAccess,
  ModelDay,
  QuotaLimits,
  ResetLink,
  UsageReport,
  UserPage,
} from "../account/accounts";

const enc = encodeURIComponent;

export const adminApi = {
  users: (q: string, cursor: string | null) => request<UserPage>("GET", `/api/admin/users${query({ q, cursor })}`),
  updateUser: (id: string, patch: { role?: Role; disabled?: boolean }) => request<AdminUser>("PATCH", `/api/admin/users/${enc(id)}`, patch),
  deleteUser: (id: string) => request<void>("DELETE", `/api/admin/users/${enc(id)}`),
  resetLink: (id: string) => request<ResetLink>("POST", `/api/admin/users/${enc(id)}/reset`, {}),
  createInvite: (role: Role, email?: string) => request<CreatedInvite>("POST", "/api/admin/invites", email ? { role, email } : { role }),
  invites: () => request<{ invites: InviteSummary[] }>("GET", "/api/admin/invites"),
  revokeInvite: (id: string) => request<void>("DELETE", `/api/admin/invites/${enc(id)}`),
  audit: (cursor: string | null) => request<AuditPage>("GET", `/api/admin/audit${query({ cursor })}`),
  usage: (days = 30) => request<UsageReport>("GET", `/api/admin/usage${query({ days })}`),
  userUsage: (id: string, days = 30) => request<{ days: ModelDay[] }>("GET", `/api/admin/users/${enc(id)}/usage${query({ days })}`),
  setQuota: (id: string, quota: { tokensPerDay: number | null; storageBytes: number | null }) => request<QuotaLimits>("PUT", `/api/admin/users/${enc(id)}/quota`, quota),
  models: () => request<ModelAccess>("GET", "/api/admin/models"),
  setModels: (memberModels: string[] | null) => request<ModelAccess>("PUT", "/api/admin/models", { memberModels }),
};

/**
 * A quota field as typed: empty is "the default" (null), else a whole non-negative number
 * times `unit` (storage is typed in MB); `undefined` means the input is not a number.
 */
export function parseQuota(input: string, unit = 1): number | null | undefined {
  const s = input.trim().replace(/[,_\s]/g, "");
  if (!s) return null;
  if (!/^\d+(\.\d+)?$/.test(s)) return undefined;
  const n = Math.round(Number(s) * unit);
  return Number.isSafeInteger(n) ? n : undefined;
}

export const MB = 1024 * 1024;

/** A stored quota as its input text (storage in MB). */
export function quotaInput(value: number | null | undefined, unit = 1): string {
  if (value === null || value === undefined) return "";
  const v = value / unit;
  return Number.isInteger(v) ? String(v) : v.toFixed(2).replace(/\.?0+$/, "");
}

// ---- admin lists ---------------------------------------------------------------------------

export interface UserList {
  users: AdminUser[];
  nextCursor: string | null;
  /** The search the list answers. */
  q: string;
}

export type UserListAction =
  | { type: "page"; q: string; page: UserPage; append: boolean }
  | { type: "updated"; user: AdminUser }
  | { type: "removed"; id: string };

/** The users list as the admin page keeps it: pages appended without duplicates, a changed
 * user replaced in place, a deleted one gone; a page for an older search is ignored. */
export function userListReducer(state: UserList, action: UserListAction): UserList {
  switch (action.type) {
    case "page": {
      const cursor = action.page.nextCursor ?? null;
      if (!action.append) return { q: action.q, users: action.page.users, nextCursor: cursor };
      if (action.q !== state.q) return state;
      const seen = new Set(state.users.map((u) => u.id));
      return { ...state, users: [...state.users, ...action.page.users.filter((u) => !seen.has(u.id))], nextCursor: cursor };
    }
    case "updated":
      return { ...state, users: state.users.map((u) => (u.id === action.user.id ? action.user : u)) };
    case "removed":
      return { ...state, users: state.users.filter((u) => u.id !== action.id) };
  }
}

/** Enabled admins in the list: the page warns before the last one is demoted or disabled
 * (the server refuses it anyway with 409 `last_admin`). */
export function enabledAdmins(users: AdminUser[]): number {
  return users.filter((u) => u.role === "admin" && !u.disabled).length;
}

/** The account id of a principal `user:<id>` (usage rows are keyed by principal). */
export function accountIdOf(principal: string): string | null {
  return principal.startsWith("user:") ? principal.slice(5) : null;
}

// ---- usage chart -------------------------------------------------------------------------

/** `YYYY-MM-DD` of a time, in UTC (usage days are UTC days). */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export interface ChartDay {
  day: string;
  tokensIn: number;
  tokensOut: number;
}

/**
 * The last `n` UTC days up to the day of `now`, oldest first, each with the tokens the report
 * lists for it (rows for the same day — e.g. one per model — are summed; days without a row
 * are zero; rows outside the window are left out).
 */
export function lastDays(rows: DayTokens[], n: number, now: number): ChartDay[] {
  const sums = new Map<string, ChartDay>();
  for (const r of rows) {
    const d = sums.get(r.day) ?? { day: r.day, tokensIn: 0, tokensOut: 0 };
    d.tokensIn += r.tokensIn || 0;
    d.tokensOut += r.tokensOut || 0;
    sums.set(r.day, d);
  }
  const out: ChartDay[] = [];
  for (let i = n - 1; i >= 0; i--) {
    const day = utcDay(now - i * 86_400_000);
    out.push(sums.get(day) ?? { day, tokensIn: 0, tokensOut: 0 });
  }
  return out;
}

export interface Bar {
  day: string;
  x: number;
  width: number;
  /** The input part (bottom) and output part (on top), in pixels. */
  inHeight: number;
  outHeight: number;
  total: number;
}

/** Bar geometry for a chart `width` × `height` px: one bar per day, scaled to the largest day
 * (an empty month draws no bars, not a division by zero). */
export function chartBars(days: ChartDay[], width: number, height: number, gap = 2): { bars: Bar[]; max: number } {
  const max = Math.max(0, ...days.map((d) => d.tokensIn + d.tokensOut));
  const slot = days.length ? width / days.length : 0;
  const scale = max > 0 ? height / max : 0;
  const bars = days.map((d, i) => ({
    day: d.day,
    x: i * slot + gap / 2,
    width: Math.max(1, slot - gap),
    inHeight: d.tokensIn * scale,
    outHeight: d.tokensOut * scale,
    total: d.tokensIn + d.tokensOut,
  }));
  return { bars, max };
}

/** Per model over a user's days: total tokens in, out and calls, most tokens first. */
export function byModel(rows: ModelDay[]): { model: string; tokensIn: number; tokensOut: number; calls: number }[] {
  const m = new Map<string, { model: string; tokensIn: number; tokensOut: number; calls: number }>();
  for (const r of rows) {
    const v = m.get(r.model) ?? { model: r.model, tokensIn: 0, tokensOut: 0, calls: 0 };
    v.tokensIn += r.tokensIn || 0;
    v.tokensOut += r.tokensOut || 0;
    v.calls += r.calls || 0;
    m.set(r.model, v);
  }
  return [...m.values()].sort((a, b) => b.tokensIn + b.tokensOut - (a.tokensIn + a.tokensOut) || a.model.localeCompare(b.model));
}

