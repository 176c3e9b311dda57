// The app shell (seed AgentChatShell): sidebar frame, top bar with the auth control, and the
// routed page paint at once; setup, viewer and the first history page land afterwards without
// moving anything.
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { PENDING_DELETES_KEY, UNDO_DELETE_MS, parsePendingDeletes, shortcutFor, type PendingDelete } from "../chat/actions";
import { api } from "../api";
import { ShellContext, saveDraft, type Shell } from "./context";
import { createConnectionClientContext } from "../chat/events";
import { parseRoute, ROUTE_CLASSES, routeClass, sidebarClosedFromCookie, sidebarCookie, type Route } from "./layout";
import { knownModels, modelForMessage, setAccountDefaultModel } from "../chat/models";
import { accountsApi, type AccountSettings } from "../account/accounts";
import { projectsApi, upsertProject, type Project, type ProjectChat } from "../projects/projects";
import { lazyPage, lazyPart } from "../ui/lazy";
import { RuntimeRegistry } from "../chat/runtime";
import { resetSession } from "../chat/eve";
import type { AuthMode, ChatSummary, EnabledConnections, SetupStatus, Viewer } from "../api/types";
import { LOCALES } from "../i18n";
import { HomePage, NotFoundPage, SessionPage } from "../chat/pages";
import { AuthControl, ShortcutSheet, Toasts, type Toast, type ToastAction } from "./overlays";
import { Sidebar } from "./sidebar";
import { LanguageSwitch } from "./language";
import { describeAuthError, describeError, fmt, locale as currentLocale, onLocaleChange, setLocale, t, type Locale } from "../i18n";

const CONNECTIONS_KEY = "eve-chat-connections";

// Pages most visits never open are chunks of their own, loaded when their route is.
const AdminPage = lazyPage(() => import("../admin/page").then((m) => m.AdminPage));
const SettingsPage = lazyPage(() => import("../account/pages").then((m) => m.SettingsPage));
const SignupPage = lazyPage(() => import("../account/pages").then((m) => m.SignupPage));
const LoginModal = lazyPart(() => import("../account/login").then((m) => m.LoginModal));
const ResetPage = lazyPage(() => import("../account/pages").then((m) => m.ResetPage));
const ProjectPage = lazyPage(() => import("../projects/page").then((m) => m.ProjectPage));
// Every configured connection is on until the user switches it off.
const DEFAULT_CONNECTIONS: EnabledConnections = {};

function readPendingDeletes(): PendingDelete[] {
  try {
    return parsePendingDeletes(localStorage.getItem(PENDING_DELETES_KEY));
  } catch {
    return [];
  }
}

function writePendingDeletes(list: PendingDelete[]): void {
  try {
    if (list.length) localStorage.setItem(PENDING_DELETES_KEY, JSON.stringify(list));
    else localStorage.removeItem(PENDING_DELETES_KEY);
  } catch {
    // Storage disabled: a delete still waiting when the page goes is sent on pagehide only.
  }
}

/** Newest first, as the server lists them: where a restored chat goes back. */
function insertByRecency(list: ChatSummary[], chat: ChatSummary): ChatSummary[] {
  const rest = list.filter((c) => c.id !== chat.id);
  const at = rest.findIndex((c) => c.updatedAt < chat.updatedAt);
  return at < 0 ? [...rest, chat] : [...rest.slice(0, at), chat, ...rest.slice(at)];
}

function loadConnections(): EnabledConnections {
  try {
    const saved = JSON.parse(localStorage.getItem(CONNECTIONS_KEY) ?? "null");
    if (saved && typeof saved === "object") return { ...DEFAULT_CONNECTIONS, ...saved };
  } catch {
    // Unreadable: defaults.
  }
  return { ...DEFAULT_CONNECTIONS };
}

export interface AppProps {
  /** The initial path (the prerender has none: it renders the root layout). */
  initialPath: string;
  /** Prerendering: no effects run, nothing is fetched. */
  prerender?: boolean;
}

export function App({ initialPath, prerender }: AppProps) {
  const [route, setRoute] = useState<Route>(() => parseRoute(initialPath));
  const [viewer, setViewer] = useState<Viewer | null | undefined>(undefined);
  const [authMode, setAuthMode] = useState<AuthMode | undefined>(undefined);
  const [setup, setSetup] = useState<SetupStatus | undefined>(undefined);
  const [account, setAccountState] = useState<AccountSettings | null | undefined>(undefined);
  const [chats, setChats] = useState<ChatSummary[]>([]);
  const [pinned, setPinnedList] = useState<ChatSummary[]>([]);
  const pinnedRef = useRef(pinned);
  pinnedRef.current = pinned;
  const [chatsLoaded, setChatsLoaded] = useState(false);
  const [projects, setProjects] = useState<Project[]>([]);
  // Which project this page knows each chat is in (null: none), from project lists, creates
  // and moves; the history lists only chats outside projects.
  const [chatProject, setChatProjectMap] = useState<Record<string, string | null>>({});
  const chatProjectRef = useRef(chatProject);
  chatProjectRef.current = chatProject;
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [connections, setConnections] = useState<EnabledConnections>(() => (prerender ? { ...DEFAULT_CONNECTIONS } : loadConnections()));
  const [toasts, setToasts] = useState<Toast[]>([]);
  const [loginOpen, setLoginOpen] = useState(false);
  const [shortcutsOpen, setShortcutsOpen] = useState(false);
  const [lang, setLang] = useState<Locale>(currentLocale);
  // Deletes inside their undo window: chat id → the timer that sends the DELETE.
  const pendingDeletes = useRef(new Map<string, ReturnType<typeof setTimeout>>());
  const [signInCount, setSignInCount] = useState(0);
  const [drawerOpen, setDrawerOpen] = useState(false);
  const [sidebarClosed, setSidebarClosed] = useState(() => (prerender ? false : sidebarClosedFromCookie(document.cookie)));
  const loadingMore = useRef(false);
  const toastId = useRef(0);
  const connectionsRef = useRef(connections);
  connectionsRef.current = connections;

  const toast = useCallback((message: string, tone: "error" | "info" = "error", opts: { action?: ToastAction; ms?: number } = {}) => {
    const id = ++toastId.current;
    setToasts((t) => [...t.slice(-3), { id, message, tone, action: opts.action }]);
    setTimeout(() => setToasts((t) => t.filter((x) => x.id !== id)), opts.ms ?? 6000);
  }, []);

  const touchChat = useCallback((chat: ChatSummary) => {
    setChats((list) => [chat, ...list.filter((c) => c.id !== chat.id)]);
    setPinnedList((list) => list.map((c) => (c.id === chat.id ? chat : c)));
  }, []);

  const runtimes = useMemo(
    () =>
      new RuntimeRegistry({
        toast: (m) => toast(m),
        touchChat,
        clientContext: () => createConnectionClientContext(connectionsRef.current),
        model: (chatId) => modelForMessage(knownModels(), chatId),
      }),
    [],
  );

  const navigate = useCallback((path: string, opts: { replace?: boolean } = {}) => {
    if (path !== location.pathname + location.search) {
      if (opts.replace) history.replaceState(null, "", path);
      else history.pushState(null, "", path);
    }
    setRoute(parseRoute(path.split(/[?#]/)[0]!));
  }, []);

  /** The account's own settings apply to this browser: its language and default model. */
  const setAccount = useCallback((a: AccountSettings) => {
    setAccountState(a);
    setAccountDefaultModel(a.defaultModel);
    const wanted = LOCALES.find((l) => l === a.language);
    if (wanted && wanted !== currentLocale) void setLocale(wanted, true).catch(() => undefined);
  }, []);

  // Accounts mode: the account (role, language, default model) once someone is signed in.
  const loadAccount = useCallback((v: Viewer | null, mode: AuthMode | undefined) => {
    if (!v || mode !== "accounts") {
      setAccountState(null);
      setAccountDefaultModel(null);
      return;
    }
    accountsApi.account().then(setAccount, (err: Error) => {
      setAccountState(null);
      toast(fmt(t.account.loadFailed, { error: describeError(err) }));
    });
  }, []);

  /** Sends a delete whose undo window is over: eve forgets the session, then the chat goes. */
  const commitDelete = useCallback(async (chat: ChatSummary) => {
    pendingDeletes.current.delete(chat.id);
    try {
      const session = runtimes.get(chat.id).getState().session ?? (await api.getChat(chat.id).then((d) => d.session).catch(() => null));
      if (session) await resetSession(session.sessionId).catch(() => undefined);
      await api.deleteChat(chat.id);
      runtimes.forget(chat.id);
    } catch (err) {
      setChats((list) => insertByRecency(list, chat));
      void api.listPinned().then((p) => setPinnedList(p.chats), () => undefined);
      toast(fmt(t.app.deleteFailed, { error: describeError(err) }));
    } finally {
      writePendingDeletes(readPendingDeletes().filter((d) => d.id !== chat.id));
    }
  }, []);

  const loadFirstPage = useCallback(async () => {
    try {
      // Projects arrive with the first page, so the sidebar draws both at once (nothing moves).
      // A deployment without the projects routes lists none.
      const [page, pins, projectList] = await Promise.all([
        api.listChats(null),
        api.listPinned(),
        projectsApi.list().then((r) => r.projects, () => [] as Project[]),
      ]);
      setProjects(projectList);
      // Deletes that a closed or reloaded page (or another tab) left inside their undo window
      // were meant: they are not listed, and are sent when their window ends unless that other
      // tab's Undo took them out of the list by then.
      const left = readPendingDeletes().filter((d) => !pendingDeletes.current.has(d.id));
      for (const d of left) {
        const finish = () => {
          if (!readPendingDeletes().some((p) => p.id === d.id)) return;
          void api
            .deleteChat(d.id)
            .catch(() => undefined)
            .finally(() => writePendingDeletes(readPendingDeletes().filter((p) => p.id !== d.id)));
        };
        setTimeout(finish, Math.max(0, d.due - Date.now()));
      }
      const gone = new Set(left.map((d) => d.id));
      setChats(page.chats.filter((c) => !gone.has(c.id)));
      setPinnedList(pins.chats.filter((c) => !gone.has(c.id)));
      setNextCursor(page.nextCursor);
    } catch (err) {
      toast(fmt(t.app.historyFailed, { error: describeError(err) }));
    } finally {
      setChatsLoaded(true);
    }
  }, []);

  // Bootstrap: setup and viewer in parallel, then the first history page.
  useEffect(() => {
    if (prerender) return;
    api.setup().then(setSetup, () => undefined);
    api.session().then(
      (s) => {
        setViewer(s.viewer);
        setAuthMode(s.authMode);
        loadAccount(s.viewer, s.authMode);
        if (s.viewer) void loadFirstPage();
      },
      (err: Error) => {
        setViewer(null);
        toast(fmt(t.app.sessionCheckFailed, { error: describeError(err) }));
      },
    );
    const params = new URLSearchParams(location.search);
    const authError = params.get("authError");
    if (authError) {
      toast(fmt(t.app.signInFailed, { reason: describeAuthError(authError) }));
      history.replaceState(null, "", location.pathname);
    }
    const onPop = () => setRoute(parseRoute(location.pathname));
    addEventListener("popstate", onPop);
    const offLocale = onLocaleChange(setLang);
    return () => {
      removeEventListener("popstate", onPop);
      offLocale();
    };
  }, []);

  // Closing or reloading the page inside a delete's undo window sends the delete: the user
  // asked for it and did not undo. `keepalive` lets the request outlive the page.
  useEffect(() => {
    if (prerender) return;
    const onHide = () => {
      for (const id of pendingDeletes.current.keys()) {
        void fetch(`/api/chats/${encodeURIComponent(id)}`, { method: "DELETE", credentials: "same-origin", keepalive: true }).catch(() => undefined);
      }
    };
    addEventListener("pagehide", onHide);
    return () => removeEventListener("pagehide", onHide);
  }, []);

  // Keep the early route class in sync for the composer placement.
  useEffect(() => {
    if (prerender) return;
    const root = document.documentElement;
    root.classList.remove(...ROUTE_CLASSES);
    root.classList.add(routeClass(location.pathname));
    setDrawerOpen(false);
  }, [route]);

  useEffect(() => {
    if (prerender) return;
    document.documentElement.classList.toggle("sidebar-closed", sidebarClosed);
  }, [sidebarClosed]);

  const setSidebar = (open: boolean) => {
    document.documentElement.classList.toggle("sidebar-closed", !open);
    setSidebarClosed(!open);
    document.cookie = sidebarCookie(open, location.protocol === "https:");
  };

  const shell: Shell = {
    route,
    navigate,
    viewer,
    authMode,
    setup,
    account,
    setAccount,
    // In local-dev the one local developer is an admin (the server says the same).
    isAdmin: (account?.role ?? viewer?.role) === "admin" || viewer?.mode === "local-dev",
    signedIn: (v) => onSignedIn(v),
    refreshSetup: () => void api.setup().then(setSetup, () => undefined),
    chats,
    pinned,
    setPinned: (chat, on) => {
      const before = pinnedRef.current;
      setPinnedList((list) => (on ? [chat, ...list.filter((c) => c.id !== chat.id)] : list.filter((c) => c.id !== chat.id)));
      api.setPinned(chat.id, on).catch((err: Error) => {
        setPinnedList(before);
        toast(fmt(t.app.pinFailed, { error: describeError(err) }));
      });
    },
    chatsLoaded,
    projects,
    chatProject,
    setChatProject: (chatId, projectId) => setChatProjectMap((m) => ({ ...m, [chatId]: projectId })),
    knowChats: (projectId, ids) => setChatProjectMap((m) => ({ ...m, ...Object.fromEntries(ids.map((id) => [id, projectId])) })),
    putProject: (p) => setProjects((list) => upsertProject(list, p)),
    dropProject: (id) => {
      setProjects((list) => list.filter((p) => p.id !== id));
      // Its chats are gone with it (docs/projects.md).
      const m = chatProjectRef.current;
      const gone = new Set(Object.keys(m).filter((c) => m[c] === id));
      setChats((list) => list.filter((c) => !gone.has(c.id) && (c as ProjectChat).projectId !== id));
      setPinnedList((list) => list.filter((c) => !gone.has(c.id) && (c as ProjectChat).projectId !== id));
      if (route.name === "project" && route.id === id) navigate("/", { replace: true });
    },
    nextCursor,
    loadMoreChats: () => {
      if (!nextCursor || loadingMore.current) return;
      loadingMore.current = true;
      api
        .listChats(nextCursor)
        .then((page) => {
          setChats((list) => {
            const seen = new Set(list.map((c) => c.id));
            return [...list, ...page.chats.filter((c) => !seen.has(c.id))];
          });
          setNextCursor(page.nextCursor);
        })
        .catch((err: Error) => toast(fmt(t.app.moreChatsFailed, { error: describeError(err) })))
        .finally(() => (loadingMore.current = false));
    },
    touchChat,
    removeChat: (id) => {
      setChats((list) => list.filter((c) => c.id !== id));
      setPinnedList((list) => list.filter((c) => c.id !== id));
    },
    deleteChat: (chat) => {
      // The pin stays on the server until the delete is sent, so Undo puts the chat back pinned.
      const pinnedAt = pinnedRef.current.findIndex((c) => c.id === chat.id);
      setChats((list) => list.filter((c) => c.id !== chat.id));
      setPinnedList((list) => list.filter((c) => c.id !== chat.id));
      if (route.name === "chat" && route.id === chat.id) navigate("/", { replace: true });
      writePendingDeletes([...readPendingDeletes().filter((d) => d.id !== chat.id), { id: chat.id, due: Date.now() + UNDO_DELETE_MS }]);
      pendingDeletes.current.set(
        chat.id,
        setTimeout(() => void commitDelete(chat), UNDO_DELETE_MS),
      );
      toast(fmt(t.app.deleted, { title: chat.title }), "info", {
        ms: UNDO_DELETE_MS,
        action: {
          label: t.app.undo,
          run: () => {
            const timer = pendingDeletes.current.get(chat.id);
            if (timer === undefined) return;
            clearTimeout(timer);
            pendingDeletes.current.delete(chat.id);
            writePendingDeletes(readPendingDeletes().filter((d) => d.id !== chat.id));
            setChats((list) => insertByRecency(list, chat));
            if (pinnedAt >= 0) setPinnedList((list) => [...list.slice(0, pinnedAt), chat, ...list.slice(pinnedAt)]);
          },
        },
      });
    },
    updateChatTitle: (id, title) => {
      setChats((list) => list.map((c) => (c.id === id ? { ...c, title } : c)));
      setPinnedList((list) => list.map((c) => (c.id === id ? { ...c, title } : c)));
    },
    connections,
    setConnection: (id, on) => {
      const next = { ...connections, [id]: on };
      setConnections(next);
      try {
        localStorage.setItem(CONNECTIONS_KEY, JSON.stringify(next));
      } catch {
        // Storage disabled: the toggle lasts for this page.
      }
    },
    toast,
    requestSignIn: (draft) => {
      if (draft) saveDraft(draft);
      if (authMode === "oidc") {
        location.href = `/api/auth/oidc/start?returnTo=${encodeURIComponent(location.pathname)}`;
        return;
      }
      if (authMode === "unconfigured") {
        toast(t.app.signInNotConfigured);
        return;
      }
      setLoginOpen(true);
    },
    signInCount,
    runtimes,
  };

  const signOut = async () => {
    try {
      await api.logout();
    } catch (err) {
      toast(fmt(t.app.signOutFailed, { error: describeError(err) }));
      return;
    }
    setViewer(null);
    setAccountState(null);
    setAccountDefaultModel(null);
    setChats([]);
    setPinnedList([]);
    setNextCursor(null);
    navigate("/");
  };

  function onSignedIn(v: Viewer) {
    setLoginOpen(false);
    setViewer(v);
    setAuthMode(v.mode);
    loadAccount(v, v.mode);
    setSignInCount((n) => n + 1);
    void loadFirstPage();
  }

  const shellRef = useRef(shell);
  shellRef.current = shell;
  useEffect(() => {
    if (prerender) return;
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      const inTextField = !!target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
      const action = shortcutFor({ key: e.key, ctrlKey: e.ctrlKey, metaKey: e.metaKey, shiftKey: e.shiftKey, altKey: e.altKey, inTextField });
      if (!action || e.isComposing) return;
      const s = shellRef.current;
      switch (action) {
        case "stop": {
          // Esc also closes dialogs and menus; it stops a response only when one is running.
          if (s.route.name !== "chat" || document.querySelector("dialog[open]")) return;
          const rt = s.runtimes.get(s.route.id);
          if (!rt.busy) return;
          e.preventDefault();
          rt.stop();
          return;
        }
        case "new-chat":
          e.preventDefault();
          s.navigate("/");
          requestAnimationFrame(() => document.getElementById("composer-input")?.focus());
          return;
        case "search":
          e.preventDefault();
          if (matchMedia("(max-width: 767px)").matches) setDrawerOpen(true);
          else setSidebar(true);
          requestAnimationFrame(() => document.getElementById("chat-search")?.focus());
          return;
        case "help":
          e.preventDefault();
          setShortcutsOpen(true);
          return;
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  return (
    <ShellContext.Provider value={shell}>
      {/* A language switch re-mounts the tree (state that matters lives in the shell and the
          runtimes), so that every string, including those rendered imperatively, is redrawn. */}
      <div key={lang} class={`app${drawerOpen ? " drawer-open" : ""}`}>
        <Sidebar onCloseDesktop={() => setSidebar(false)} onNavigated={() => setDrawerOpen(false)} />
        <div class="drawer-backdrop" onClick={() => setDrawerOpen(false)} aria-hidden="true" />
        <main class="main">
          <header class="topbar">
            <button type="button" class="icon-button ghost drawer-toggle" aria-label={t.shell.openMenu} aria-controls="sidebar" aria-expanded={drawerOpen} onClick={() => setDrawerOpen(true)}>
              <span class="icon-menu" aria-hidden="true" />
            </button>
            <button type="button" class="icon-button ghost sidebar-open" aria-label={t.shell.openSidebar} title={t.shell.openSidebar} aria-controls="sidebar" onClick={() => setSidebar(true)}>
              <span class="icon-sidebar" aria-hidden="true" />
            </button>
            <div class="topbar-title">{route.name === "chat" ? chats.find((c) => c.id === route.id)?.title ?? "" : ""}</div>
            <LanguageSwitch
              value={lang}
              onChange={(l) => {
                void setLocale(l, true).catch((err) => toast(describeError(err)));
                // An account keeps its language, so that the next page load does not switch back.
                if (account && account.language !== l) accountsApi.updateAccount({ language: l }).then(setAccountState, () => undefined);
              }}
            />
            <AuthControl onSignOut={signOut} />
          </header>
          {route.name === "home" && <HomePage />}
          {route.name === "chat" && <SessionPage key={route.id} chatId={route.id} />}
          {route.name === "not-found" && <NotFoundPage />}
          {route.name === "admin" && <AdminPage />}
          {route.name === "settings" && <SettingsPage />}
          {route.name === "signup" && <SignupPage />}
          {route.name === "invite" && <SignupPage invitation />}
          {route.name === "reset" && <ResetPage />}
          {route.name === "project" && <ProjectPage key={route.id} projectId={route.id} />}
        </main>
        <Toasts toasts={toasts} dismiss={(id) => setToasts((t) => t.filter((x) => x.id !== id))} />
        {shortcutsOpen && <ShortcutSheet onClose={() => setShortcutsOpen(false)} />}
        {loginOpen && (
          <LoginModal
            accounts={authMode === "accounts"}
            onClose={() => setLoginOpen(false)}
            onSignedIn={onSignedIn}
            onSignup={() => {
              setLoginOpen(false);
              navigate("/signup");
            }}
          />
        )}
      </div>
    </ShellContext.Provider>
  );
}
