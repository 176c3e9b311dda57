// The app shell (seed AgentChatShell): sidebar frame, top bar with the auth control, and the
// routed page paint at once; setup, viewer and the first history page land afterwards without
// moving anything.
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api } from "./api";
import { ShellContext, saveDraft, type Shell } from "./context";
import { createConnectionClientContext } from "./events";
import { parseRoute, routeClass, sidebarClosedFromCookie, sidebarCookie, type Route } from "./layout";
import { knownModels, modelForMessage } from "./models";
import { RuntimeRegistry } from "./runtime";
import type { AuthMode, ChatSummary, EnabledConnections, SetupStatus, Viewer } from "./types";
import { HomePage, NotFoundPage, SessionPage } from "./components/pages";
import { AuthControl, LoginModal, Toasts, type Toast } from "./components/overlays";
import { Sidebar } from "./components/sidebar";

const CONNECTIONS_KEY = "eve-chat-connections";
const DEFAULT_CONNECTIONS: EnabledConnections = { notion: true, linear: false, sentry: false };

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
  const [chats, setChats] = useState<ChatSummary[]>([]);
  const [chatsLoaded, setChatsLoaded] = useState(false);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [connections, setConnections] = useState<EnabledConnections>(() => (prerender ? { ...DEFAULT_CONNECTIONS } : loadConnections()));
  const [toasts, setToasts] = useState<Toast[]>([]);
  const [loginOpen, setLoginOpen] = useState(false);
  const [signInCount, setSignInCount] = useState(0);
  const [drawerOpen, setDrawerOpen] = useState(false);
  const [sidebarClosed, setSidebarClosed] = useState(() => (prerender ? false : sidebarClosedFromCookie(document.cookie)));
  const loadingMore = useRef(false);
  const toastId = useRef(0);
  const connectionsRef = useRef(connections);
  connectionsRef.current = connections;

  const toast = useCallback((message: string, tone: "error" | "info" = "error") => {
    const id = ++toastId.current;
    setToasts((t) => [...t.slice(-3), { id, message, tone }]);
    setTimeout(() => setToasts((t) => t.filter((x) => x.id !== id)), 6000);
  }, []);

  const touchChat = useCallback((chat: ChatSummary) => {
    setChats((list) => [chat, ...list.filter((c) => c.id !== chat.id)]);
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
    if (path !== location.pathname) {
      if (opts.replace) history.replaceState(null, "", path);
      else history.pushState(null, "", path);
    }
    setRoute(parseRoute(path));
  }, []);

  const loadFirstPage = useCallback(async () => {
    try {
      const page = await api.listChats(null);
      setChats(page.chats);
      setNextCursor(page.nextCursor);
    } catch (err) {
      toast(`Chat history could not be loaded: ${(err as Error).message}`);
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
        if (s.viewer) void loadFirstPage();
      },
      (err: Error) => {
        setViewer(null);
        toast(`Could not check sign-in: ${err.message}`);
      },
    );
    const params = new URLSearchParams(location.search);
    const authError = params.get("authError");
    if (authError) {
      toast(`Sign-in failed (${authError.replace(/_/g, " ")}).`);
      history.replaceState(null, "", location.pathname);
    }
    const onPop = () => setRoute(parseRoute(location.pathname));
    addEventListener("popstate", onPop);
    return () => removeEventListener("popstate", onPop);
  }, []);

  // Keep the early route class in sync for the composer placement.
  useEffect(() => {
    if (prerender) return;
    const root = document.documentElement;
    root.classList.remove("route-home", "route-chat");
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
    chats,
    chatsLoaded,
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
        .catch((err: Error) => toast(`More chats could not be loaded: ${err.message}`))
        .finally(() => (loadingMore.current = false));
    },
    touchChat,
    removeChat: (id) => setChats((list) => list.filter((c) => c.id !== id)),
    updateChatTitle: (id, title) => setChats((list) => list.map((c) => (c.id === id ? { ...c, title } : c))),
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
        toast("Sign-in is not configured on this server.");
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
      toast(`Sign out failed: ${(err as Error).message}`);
      return;
    }
    setViewer(null);
    setChats([]);
    setNextCursor(null);
    navigate("/");
  };

  return (
    <ShellContext.Provider value={shell}>
      <div class={`app${drawerOpen ? " drawer-open" : ""}`}>
        <Sidebar onCloseDesktop={() => setSidebar(false)} onNavigated={() => setDrawerOpen(false)} />
        <div class="drawer-backdrop" onClick={() => setDrawerOpen(false)} aria-hidden="true" />
        <main class="main">
          <header class="topbar">
            <button type="button" class="icon-button ghost drawer-toggle" aria-label="Open menu" aria-controls="sidebar" aria-expanded={drawerOpen} onClick={() => setDrawerOpen(true)}>
              <span class="icon-menu" aria-hidden="true" />
            </button>
            <button type="button" class="icon-button ghost sidebar-open" aria-label="Open sidebar" title="Open sidebar" aria-controls="sidebar" onClick={() => setSidebar(true)}>
              <span class="icon-sidebar" aria-hidden="true" />
            </button>
            <div class="topbar-title">{route.name === "chat" ? chats.find((c) => c.id === route.id)?.title ?? "" : ""}</div>
            <AuthControl onSignOut={signOut} />
          </header>
          {route.name === "home" && <HomePage />}
          {route.name === "chat" && <SessionPage key={route.id} chatId={route.id} />}
          {route.name === "not-found" && <NotFoundPage />}
        </main>
        <Toasts toasts={toasts} dismiss={(id) => setToasts((t) => t.filter((x) => x.id !== id))} />
        {loginOpen && (
          <LoginModal
            onClose={() => setLoginOpen(false)}
            onSignedIn={(v) => {
              setLoginOpen(false);
              setViewer(v);
              setAuthMode(v.mode);
              setSignInCount((n) => n + 1);
              void loadFirstPage();
            }}
          />
        )}
      </div>
    </ShellContext.Provider>
  );
}
