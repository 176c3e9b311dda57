// Wire shapes of the app API (crates/eve-api/src/{chat,auth}.rs) and the eve protocol.

import type { EveEvent } from "../chat/eve-reducer";

export type AuthMode = "local-dev" | "password" | "oidc" | "accounts" | "unconfigured";

export interface Viewer {
  id: string;
  mode: AuthMode;
  name?: string;
  email?: string;
  /** Accounts mode (docs/accounts.md); the server checks the role itself on every admin route. */
  role?: Role;
}

export type Role = "admin" | "member";

export interface SessionResponse {
  viewer: Viewer | null;
  authMode: AuthMode;
}

export interface SetupStatus {
  appReady: boolean;
  authMode: AuthMode;
  authReady: boolean;
  databaseConfigured?: boolean;
  databaseReady: boolean;
  databaseSchemaReady: boolean;
  rateLimitReady: boolean;
  storageMode: string;
  missing: string[];
  /** Accounts mode while no admin exists: the first sign-up must present the setup token. */
  accountsNeedAdmin?: boolean;
  /** How the chat shows tool calls (the admins' `toolDisplay` setting). */
  toolDisplay?: "collapsed" | "full";
}

export interface ChatSummary {
  id: string;
  title: string;
  createdAt: string;
  updatedAt: string;
}

export interface ChatPage {
  chats: ChatSummary[];
  nextCursor: string | null;
}

export type { EveEvent } from "../chat/eve-reducer";

/** The eve `ClientSessionState`, stored on the chat row: `streamIndex` = events consumed. */
export interface ClientSessionState {
  sessionId: string;
  streamIndex: number;
}

export interface ChatDetail {
  chat: ChatSummary;
  /**
   * One window of the log, eve v1 events verbatim (chats of the earlier dialect were rewritten
   * by migration 0004): `events[i]` is the event at slot `firstEventIndex + i`.
   */
  events: EveEvent[];
  /** Where the window starts (docs/chat-store.md, "Opening a chat"). */
  firstEventIndex?: number;
  /** The log's length: the base of the next write. */
  eventCount?: number;
  /** Pass back as `before` for the events just before the window; null at the log's start. */
  beforeCursor?: string | null;
  /** The newest branch marker before the window, when the window does not start the log. */
  branchBefore?: IndexedEvent | null;
  session: ClientSessionState | null;
  pendingUserMessage: string | null;
  pendingUserMessageCreatedAt?: string | null;
}

export interface IndexedEvent {
  eventIndex: number;
  event: EveEvent;
}

/** A configured MCP connection's name (`mcp_connections`). */
export type ConnectionId = string;
export type EnabledConnections = Record<ConnectionId, boolean>;

/** One configured MCP connection as `GET /eve/v1/connections` reports it for the caller. */
export interface McpConnectionInfo {
  name: string;
  displayName: string;
  description: string;
  url: string;
  connected: boolean;
  revocable: boolean;
}
