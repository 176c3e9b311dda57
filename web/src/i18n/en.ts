// The English message catalogue: every user-visible string of the web app. Its type is the key
// set every other catalogue must have exactly (zh-CN.ts is typed `Messages`; i18n.test.ts checks
// the placeholders match). `{name}` is a placeholder filled by `fmt`; a `Plural` is chosen by
// `Intl.PluralRules` for its `{count}`. Sections are separate exports so that the early script
// can bundle the prerendered shell's strings without the rest.
import type { Plural } from "./format";

/** Strings of the prerendered shell (also translated by the early script before first paint). */
export const shell = {
  notFound: "Page not found",
  goToNewChat: "Go to a new chat",
  notFoundBody: "Nothing lives at this address.",
  documentTitle: "eve chat",
  openMenu: "Open menu",
  openSidebar: "Open sidebar",
  closeSidebar: "Close sidebar",
  chatHistory: "Chat history",
  newChat: "New chat",
  searchChats: "Search chats",
  searchChatsTitle: "Search chats (Ctrl/⌘ + K)",
  chatsNav: "Chats",
  heroTitle: "What can I help with?",
  homeFooter: "Durable, resumable chat on Spin. Responses can be wrong; check what matters.",
  messageLabel: "Message",
  placeholderHome: "Ask anything",
  sendMessage: "Send message",
  typeToSend: "Type a message to send",
  connections: "Connections",
  connectionsTitle: "Connections this turn may use",
  language: "Language",
  attachFiles: "Attach files",
  attachFilesTitle: "Attach files (or drop or paste them here)",
};

export const app = {
  deleted: "Deleted “{title}”.",
  undo: "Undo",
  deleteFailed: "Delete failed: {error}",
  pinFailed: "Pin failed: {error}",
  historyFailed: "Chat history could not be loaded: {error}",
  moreChatsFailed: "More chats could not be loaded: {error}",
  sessionCheckFailed: "Could not check sign-in: {error}",
  signInFailed: "Sign-in failed ({reason}).",
  signInNotConfigured: "Sign-in is not configured on this server.",
  signOutFailed: "Sign out failed: {error}",
  startNewChat: "Start a new chat",
  dismiss: "Dismiss",
  /** Why an OIDC sign-in failed, by the `authError` code it returned with (docs/auth.md). */
  authErrors: {
    not_configured: "sign-in is not configured on this server",
    discovery_failed: "the identity provider could not be reached",
    invalid_state: "this sign-in was not started in this browser; start again",
    flow_expired: "the sign-in took longer than 10 minutes; start again",
    flow_used: "this sign-in link was already used; start again",
    unavailable: "the server could not check the sign-in; try again shortly",
    provider_error: "the identity provider refused the sign-in",
    token_exchange_failed: "the identity provider did not accept the sign-in code",
    invalid_id_token: "the identity provider's answer could not be verified",
    userinfo_failed: "the identity provider did not say who you are",
    email_required: "the identity provider gave no email address",
    https_required: "sign-in needs https",
    account_exists: "an account with this email address signs in with its password; sign in with the password",
  },
};

export const auth = {
  signIn: "Sign in",
  signingIn: "Signing in…",
  signOut: "Sign out",
  setupNeeded: "Setup needed",
  notConfiguredTitle: "Sign-in is not configured on this server",
  localDeveloper: "Local developer",
  signedIn: "Signed in",
  loginIntro: "Enter the deployment password to continue. Your message is kept.",
  password: "Password",
  cancel: "Cancel",
  incomplete: "Sign-in did not complete.",
  wrongPassword: "That password is not correct.",
};

export const pages = {
  setupNeededTitle: "Setup needed.",
  setupMissing: "Missing: {missing}.",
  setupNotConfigured: "The server is not configured.",
  setupIncomplete: "Setup incomplete: {missing}",
  serverNotConfigured: "the server is not configured",
  messageTooLong: "Messages are limited to {max} characters.",
  authPending: "Connect or skip the pending authorization to continue this chat",
  loadingChat: "Loading chat…",
  placeholderChat: "Reply to eve",
  earlierMessages: "Show earlier messages",
  loadingEarlier: "Loading earlier messages…",
};

export const composer = {
  unavailable: "Unavailable right now",
  tooLong: "Messages are limited to {max} characters",
  sending: "Sending",
  sendingTitle: "Sending…",
  sendTitle: "Send (Enter)",
  stop: "Stop response",
  stopTitle: "Stop",
  charCount: "{count} / {max}",
};

export const sidebar = {
  searching: "Searching…",
  noResults: "No chats match “{query}”.",
  inMessages: "Matches in messages",
  searchFailed: "Search failed: {error}",
  more: "More for {title}",
  moreTitle: "More",
  exportMd: "Export as Markdown",
  exportJson: "Export as JSON",
  pin: "Pin to top",
  unpin: "Unpin",
  pinnedHeading: "Pinned",
  historyHeading: "Chats",
  signInToSee: "Sign in to see your chats.",
  noChats: "No chats yet.",
  loading: "Loading…",
  rename: "Rename",
  renameLabel: "Rename {title}",
  delete: "Delete",
  deleteLabel: "Delete {title}",
  titleLabel: "Chat title",
  renameFailed: "Rename failed: {error}",
  /** The row's tooltip: the title and when the chat last changed. */
  rowTitle: "{title}\nUpdated {when}",
};

export const shortcuts = {
  title: "Keyboard shortcuts",
  close: "Close",
  stop: "Stop the running response",
  newChat: "New chat",
  search: "Search chats",
  editLast: "Edit your last message",
  emptyComposer: "↑ (empty composer)",
  help: "Show these shortcuts",
};

export const connections = {
  menuLabel: "Connections",
  none: "No connections are configured.",
  disconnect: "Disconnect {name}",
  disconnected: "{name} disconnected",
  disconnectFailed: "{name} could not be disconnected: {error}",
};

export const messages = {
  thinking: "Thinking...",
  thoughtProcess: "Thought process",
  agentAsks: "The agent asks",
  orType: "Or type your answer below.",
  attachments: "Attachments",
  image: "image",
  toolsCount: "{count} tools: {names}",
  toolRunning: "Running {names}…",
  toolWaiting: "Waiting for authorization: {names}",
  toolAsking: "Waiting for your answer: {names}",
  toolInterrupted: "Interrupted {what}",
  toolDeclined: "Not connected: {names}",
  toolDenied: "Declined {what}",
  toolDone: "Used {what}",
  toolStatus: { running: "running", waiting: "waiting", asking: "asking", done: "done", error: "error", declined: "declined", denied: "denied", interrupted: "interrupted" } as Record<string, string>,
  authFor: "Authorization for {name}",
  connect: "Connect",
  connectTitle: "Connect {name}",
  noConnectLink: "No sign-in link on this site was provided",
  skip: "Skip",
  outcomeAuthorized: "Connected",
  outcomeDeclined: "Skipped",
  outcomeFailed: "Failed",
  outcomeTimedOut: "Timed out",
  answerApproved: "Approved",
  answerDenied: "Declined",
  answerCancelled: "Withdrawn",
  answerIgnored: "Skipped",
  answerInvalid: "Invalid answer",
};

/** Notices in the transcript, rendered from their id so that a language switch applies at once. */
export const notices = {
  responseFailed: "The response failed.",
  sessionFailed: "The session failed.",
  responseStopped: "Response stopped.",
  contextCleared: "Context cleared: the agent no longer sees the messages above.",
  compacted: "Earlier messages were summarised to fit the context.",
  sessionEnded: "This session has ended; your next message starts a new one.",
};

export const actions = {
  copy: "Copy",
  copied: "Copied",
  copyLabel: "Copy answer",
  copyFailed: "Copy failed: the browser did not allow the clipboard.",
  retry: "Retry",
  retryFailed: "Retry the failed response",
  retryStopped: "Retry the stopped response",
  edit: "Edit",
  editLabel: "Edit message",
  save: "Send",
  cancel: "Cancel",
  regenerate: "Regenerate",
  regenerateLabel: "Regenerate answer",
  previous: "Previous version",
  next: "Next version",
  version: "Version {index} of {count}",
};

export const markdown = {
  copy: "Copy",
  copied: "Copied",
  copyFailed: "Copy failed",
  copyLabel: "Copy code",
};

export const models = {
  menuLabel: "Model",
  menuTitle: "The model that answers in this chat",
};

export const attachments = {
  remove: "Remove {name}",
  list: "Attachments",
  tooLarge: "{name} is larger than {limit}, the limit per file.",
  wrongType: "{name} cannot be attached: this type of file is not accepted.",
  tooMany: "At most {max} files per message.",
  unreadable: "{name} could not be read.",
  unnamed: "file",
};

export const usage = {
  tokens: { one: "{count} token", other: "{count} tokens" } as Plural,
  detail: "{input} in · {output} out",
  chat: "this chat {count}",
};

export const runtime = {
  chatNotFound: "This chat does not exist or was deleted.",
  authPendingSend: "Connect or skip the pending authorization before sending a message.",
  sessionNotFound: "The agent session was not found.",
  partlyUnsaved: "Some events could not be saved yet; they will be saved when the response finishes.",
  saveFailed: "The chat could not be saved: {error}",
  stopFailed: "Stop failed: {error}",
  skipFailed: "Skip failed: {error}",
};

/** Accounts mode as the first load shows it: the sign-in modal, the links to settings and admin
 * (docs/accounts.md). The pages' own strings are the lazy catalogue account-page.ts. */
export const account = {
  email: "Email",
  password: "Password",
  loginIntro: "Sign in with your email and password. Your message is kept.",
  noAccount: "No account yet?",
  createAccount: "Create an account",
  forgotPassword: "Forgot your password? Ask an admin for a reset link.",
  badEmail: "Enter a valid email address.",
  roles: { admin: "admin", member: "member" } as Record<string, string>,
  settingsTitle: "Settings",
  adminLink: "Admin",
  loadFailed: "Could not load your settings: {error}",
};

/** Words the pages' shared widgets (ui/) and lazy parts use: loading, copy, cancel, table columns. */
export const ui = {
  loading: "Loading…",
  loadFailed: "Could not load: {error}",
  cancel: "Cancel",
  actions: "Actions",
  status: "Status",
  copy: "Copy",
  copied: "Copied",
  copyFailed: "Copy failed: select the text and copy it yourself.",
  done: "Done",
};

/** Server errors by their code (the app's envelope and eve's); the server's text is the fallback. */
export const errors = {
  network: "The server could not be reached. Check your connection.",
  stream_disconnected: "Stream disconnected before the response completed.",
  unauthorized: "Your sign-in has ended. Sign in again to continue.",
  forbidden: "You are not allowed to do that.",
  rate_limited: "Too many requests.",
  too_many_streams: "Too many responses are running at once. Wait for one to finish.",
  storage_full: "Your storage is full: delete chats to free space.",
  payload_too_large: "This is over the storage limit: shorten it, or start a new chat and delete chats you no longer need.",
  unsupported_media_type: "That type of file cannot be sent.",
  not_configured: "The server is not configured for this yet.",
  upstream: "The model provider did not answer. Try again.",
  stream_version: "The agent streams in a version this app does not support.",
  internal: "Something went wrong on the server.",
  /** A rate limit's text with the wait the server asked for. */
  retryIn: "{error} Try again in {wait}.",
  seconds: { one: "{count} second", other: "{count} seconds" } as Plural,
  minutes: { one: "{count} minute", other: "{count} minutes" } as Plural,
  requestFailed: "Request failed ({status}).",
  // Accounts, tokens and admin (docs/accounts.md).
  invalid_credentials: "That email and password do not match an account.",
  signup_closed: "Sign-up is closed here: ask an admin for an invitation.",
  invite_invalid: "This invitation is not valid: it was used, revoked or has expired. Ask for a new one.",
  reset_invalid: "This reset link is not valid: it was used or has expired. Ask an admin for a new one.",
  setup_token_invalid: "That setup token is not correct, or the first admin already exists.",
  email_taken: "An account with this email already exists.",
  email_mismatch: "This invitation is for another email address.",
  weak_password: "The password must have 10 to 256 characters.",
  wrong_password: "The current password is not correct.",
  last_admin: "The last enabled admin cannot be demoted or disabled.",
  quota_exceeded: "You have used your tokens for today. Try again tomorrow or ask an admin.",
  model_not_allowed: "This model is not allowed for your account. Choose another one.",
  token_limit: "You have too many tokens: revoke one first.",
};
/** Projects and their files (issue 21, docs/projects.md). */
export const projects = {
  heading: "Projects",
  newProject: "New project",
  namePlaceholder: "Project name",
  createFailed: "Could not create the project: {error}",
  loadFailed: "Could not load the project: {error}",
  showChats: "Show the chats of {name}",
  hideChats: "Hide the chats of {name}",
  noChats: "No chats in this project yet.",
  files: "Files",
  moveTo: "Move to {name}",
  moveOut: "Move out of the project",
  moved: "Moved to {name}.",
  movedOut: "Moved out of {name}.",
  moveFailed: "Could not move the chat: {error}",
  tools: { read_file: "Read", write_file: "Wrote", glob: "Listed", grep: "Searched" } as Record<string, string>,
};

export const en = { shell, app, auth, pages, composer, sidebar, shortcuts, connections, messages, notices, actions, markdown, models, attachments, usage, runtime, account, ui, errors, projects };

export type Messages = typeof en;
