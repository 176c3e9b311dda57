// Accounts, API tokens and the admin API (docs/accounts.md): the wire shapes the web app reads
// (defined once in eve-api, camelCase), the calls, and the pure decisions the pages make —
// which form a path names, what a password or quota input means, the admin lists' state, and
// the 30-day chart. The pages (components/account.tsx, components/admin.tsx) only render these.
import { request } from "../api";
import type { Role, SessionResponse } from "../api/types";

// ---- shapes ------------------------------------------------------------------------------

export interface AccountSettings {
  id: string;
  email: string;
  displayName: string | null;
  role: Role;
  language: string | null;
  defaultModel: string | null;
}

export interface AccountPatch {
  displayName?: string;
  language?: string | null;
  defaultModel?: string | null;
}

export interface InviteInfo {
  role: Role;
  email?: string | null;
  expiresAt: string;
}

export interface SignupBody {
  email: string;
  password: string;
  displayName?: string;
  setupToken?: string;
  inviteToken?: string;
}

export interface ApiTokenInfo {
  id: string;
  name: string;
  createdAt: string;
  expiresAt: string;
  lastUsedAt?: string | null;
  revokedAt?: string | null;
}

export interface CreatedToken {
  token: string;
  info: ApiTokenInfo;
}

export interface AdminUser {
  id: string;
  email: string;
  displayName: string | null;
  role: Role;
  disabled: boolean;
  createdAt: string;
  lastActiveAt?: string | null;
}

export interface UserPage {
  users: AdminUser[];
  nextCursor?: string | null;
}

export interface CreatedInvite {
  id: string;
  token: string;
  url: string;
  role: Role;
  email?: string | null;
  expiresAt: string;
}

export interface InviteSummary {
  id: string;
  role: Role;
  email?: string | null;
  createdAt: string;
  expiresAt: string;
  usedAt?: string | null;
}

export interface ResetLink {
  token: string;
  url: string;
  expiresAt: string;
}

export interface AuditEntry {
  id: number | string;
  /** ISO time (a Unix-ms number is read too). */
  at: string | number;
  actor?: string | null;
  action: string;
  target?: string | null;
  detail?: unknown;
}

export interface AuditPage {
  entries: AuditEntry[];
  nextCursor?: string | null;
}

export interface QuotaLimits {
  tokensPerDay?: number | null;
  storageBytes?: number | null;
}

export interface UserUsage {
  principal: string;
  email?: string | null;
  chats: number;
  storageBytes: number;
  attachmentBytes: number;
  tokensIn: number;
  tokensOut: number;
  lastActiveAt?: string | null;
  quota: QuotaLimits;
}

export interface DayTokens {
  day: string;
  tokensIn: number;
  tokensOut: number;
}

export interface UsageReport {
  users: UserUsage[];
  days: DayTokens[];
  /** The deployment defaults (`quota_tokens_per_day`, `principal_max_bytes`), when reported. */
  defaults?: QuotaLimits;
}

export interface ModelDay extends DayTokens {
  model: string;
  calls: number;
}

export interface ModelAccess {
  memberModels: string[] | null;
  /** The configured models to choose from (`MemberModels.models`). */
  models?: { id: string; label: string }[];
}

// ---- calls -------------------------------------------------------------------------------

const enc = encodeURIComponent;

export const accountsApi = {
  login: (email: string, password: string) => request<SessionResponse>("POST", "/api/auth/login", { email, password }),
  signup: (body: SignupBody) => request<SessionResponse>("POST", "/api/auth/signup", body),
  // In the body, not the query: a URL's query ends up in access logs (issue 32).
  invite: (token: string) => request<InviteInfo>("POST", "/api/auth/invite", { token }),
  reset: (token: string, newPassword: string) => request<SessionResponse>("POST", "/api/auth/reset", { token, newPassword }),
  changePassword: (currentPassword: string, newPassword: string) => request<void>("POST", "/api/auth/password", { currentPassword, newPassword }),
  account: () => request<AccountSettings>("GET", "/api/auth/account"),
  updateAccount: (patch: AccountPatch) => request<AccountSettings>("PATCH", "/api/auth/account", patch),
  tokens: () => request<{ tokens: ApiTokenInfo[] }>("GET", "/api/tokens"),
  createToken: (name: string, expiresInDays: number) => request<CreatedToken>("POST", "/api/tokens", { name, expiresInDays }),
  revokeToken: (id: string) => request<void>("DELETE", `/api/tokens/${enc(id)}`),
};


// ---- forms -------------------------------------------------------------------------------

/** Passwords: 10–256 characters (code points, as the server counts them). */
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 256;

export type PasswordProblem = "tooShort" | "tooLong" | "mismatch" | null;

/** Why a new password (and its repetition) cannot be sent, or null. */
export function passwordProblem(password: string, repeat?: string): PasswordProblem {
  const n = [...password].length;
  if (n < PASSWORD_MIN) return "tooShort";
  if (n > PASSWORD_MAX) return "tooLong";
  if (repeat !== undefined && repeat !== password) return "mismatch";
  return null;
}

/** A plausible email address: something@something.something, no spaces. */
export function looksLikeEmail(s: string): boolean {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s.trim());
}

/** Token lifetimes: 1–365 days, 90 by default (docs/accounts.md). */
export const TOKEN_DAYS_DEFAULT = 90;

/** The days of a token-expiry input, or null when it is not a whole number in 1–365. */
export function parseTokenDays(input: string): number | null {
  const s = input.trim();
  if (!/^\d{1,3}$/.test(s)) return null;
  const n = Number(s);
  return n >= 1 && n <= 365 ? n : null;
}

// ---- routes ------------------------------------------------------------------------------

/**
 * The one-time token of an invitation or reset link. Links are `<base>/invite#token=…` and
 * `<base>/reset#token=…` (docs/accounts.md: the fragment never reaches a server log or a
 * `Referer`); `?token=` (and the sign-up page's old `?invite=`) are read too.
 */
export function linkToken(hash: string, search: string, ...names: string[]): string | null {
  const read = (params: URLSearchParams) => {
    for (const n of names) {
      const v = params.get(n)?.trim();
      if (v) return v;
    }
    return null;
  };
  return read(new URLSearchParams(hash.replace(/^#/, ""))) ?? read(new URLSearchParams(search));
}

/** The invitation a page was opened for: `/invite#token=…` (or `/signup?invite=…`). */
export function inviteTokenFrom(hash: string, search: string): string | null {
  return linkToken(hash, search, "token", "invite");
}

/** The reset link's token: `/reset#token=…`. */
export function resetTokenFrom(hash: string, search: string): string | null {
  return linkToken(hash, search, "token");
}

// ---- refusals ------------------------------------------------------------------------------

/** How a sign-up was attempted: the refusal codes mean different things for each. */
export type SignupWay = "invite" | "setup" | "open";

/**
 * The `t.errors` key of a refused sign-up, reset or token creation (docs/accounts.md, "as
 * built"), or null to show the server's error as usual. The server says `forbidden` both for
 * a wrong setup token and for an invitation bound to another email, `conflict` for a taken
 * email (and for a 51st token), and `invite_invalid` for a spent reset link as well.
 */
export function refusalKey(
  code: string,
  status: number,
  what: SignupWay | "reset" | "token",
): "email_taken" | "email_mismatch" | "setup_token_invalid" | "reset_invalid" | "token_limit" | null {
  if (what === "reset") return code === "invite_invalid" || status === 404 || status === 410 ? "reset_invalid" : null;
  if (what === "token") return code === "conflict" ? "token_limit" : null;
  if (code === "conflict") return "email_taken";
  if (code === "forbidden" && what === "invite") return "email_mismatch";
  if (code === "forbidden" && what === "setup") return "setup_token_invalid";
  return null;
}

// ---- tokens --------------------------------------------------------------------------------

export type TokenState = "active" | "expired" | "revoked";

export function tokenState(t: ApiTokenInfo, now: number): TokenState {
  if (t.revokedAt) return "revoked";
  const exp = Date.parse(t.expiresAt);
  return Number.isFinite(exp) && exp <= now ? "expired" : "active";
}

/** Active tokens first (newest first), then expired and revoked ones. */
export function sortTokens(list: ApiTokenInfo[], now: number): ApiTokenInfo[] {
  const rank = (t: ApiTokenInfo) => (tokenState(t, now) === "active" ? 0 : 1);
  return [...list].sort((a, b) => rank(a) - rank(b) || Date.parse(b.createdAt) - Date.parse(a.createdAt));
}

/** Which modes have a sign-in, and so API tokens (local-dev has neither). */
export function hasSignIn(mode: string | undefined): boolean {
  return mode === "password" || mode === "oidc" || mode === "accounts";
}
