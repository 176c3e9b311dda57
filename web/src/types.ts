// Wire shapes of the app API (crates/eve-api/src/{chat,auth}.rs) and the eve protocol.

export type AuthMode = "local-dev" | "password" | "oidc" | "unconfigured";

export interface Viewer {
  id: string;
  mode: AuthMode;
  name?: string;
  email?: string;
}

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

/** One eve stream event: a JSON object with a string `type` and its stream `index`. */
export interface EveEvent {
  type: string;
  index?: number;
  [key: string]: unknown;
}

/** The eve `ClientSessionState`, stored on the chat row. */
export interface ClientSessionState {
  sessionId: string;
  streamIndex: number;
}

export interface ChatDetail {
  chat: ChatSummary;
  events: EveEvent[];
  session: ClientSessionState | null;
  pendingUserMessage: string | null;
  pendingUserMessageCreatedAt?: string | null;
}

export interface IndexedEvent {
  eventIndex: number;
  event: EveEvent;
}

export type ConnectionId = "notion" | "linear" | "sentry";
export type EnabledConnections = Record<ConnectionId, boolean>;
