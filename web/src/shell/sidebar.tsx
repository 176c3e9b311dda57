// Sidebar history (seed): newest first, cursor pagination through an IntersectionObserver
// sentinel (only chats not already listed are appended), active row, search over titles and
// message text (`GET /api/chats?q=`, matches highlighted), rename, export, and delete with undo.
import { useEffect, useRef, useState } from "preact/hooks";
import { highlight } from "../chat/actions";
import { api } from "../api";
import { useShell } from "./context";
import { hasSignIn } from "../account/accounts";
import type { ChatSummary } from "../api/types";
import { chatsOutsideProjects, projectsApi, type Project } from "../projects/projects";
import { moveChat, projectOf } from "../projects/moving";
import { describeError, fmt, formatRelative, t } from "../i18n";

const SEARCH_DEBOUNCE_MS = 200;

/** Search results: the chats matching `query` (null while none is typed). */
function useSearch(query: string) {
  const shell = useShell();
  const [results, setResults] = useState<{ query: string; chats: ChatSummary[] } | null>(null);
  useEffect(() => {
    const q = query.trim();
    if (!q || !shell.viewer) {
      setResults(null);
      return;
    }
    const abort = new AbortController();
    const timer = setTimeout(() => {
      api.listChats(null, 50, q, abort.signal).then(
        (page) => setResults({ query: q, chats: page.chats }),
        (err: Error) => {
          if (!abort.signal.aborted) shell.toast(fmt(t.sidebar.searchFailed, { error: describeError(err) }));
        },
      );
    }, SEARCH_DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [query, shell.viewer]);
  // A chat deleted or renamed while its result shows follows the history list.
  const known = new Map([...shell.chats, ...shell.pinned].map((c) => [c.id, c]));
  const chats = results?.chats.flatMap((c) => (known.has(c.id) || !shell.chatsLoaded ? [known.get(c.id) ?? c] : [])) ?? null;
  return { results: results && chats ? { query: results.query, chats } : null, searching: !!query.trim() && results?.query !== query.trim() };
}

export function Sidebar(props: { onCloseDesktop(): void; onNavigated(): void }) {
  const shell = useShell();
  const activeId = shell.route.name === "chat" ? shell.route.id : null;
  const sentinel = useRef<HTMLLIElement>(null);
  const [query, setQuery] = useState("");
  const { results, searching } = useSearch(query);

  useEffect(() => {
    const el = sentinel.current;
    if (!el || !shell.nextCursor) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) shell.loadMoreChats();
    });
    io.observe(el);
    return () => io.disconnect();
  }, [shell.nextCursor, shell.chats.length, results === null]);

  const q = query.trim();
  const pinnedIds = new Set(shell.pinned.map((c) => c.id));
  return (
    <aside class="sidebar" id="sidebar" aria-label={t.shell.chatHistory}>
      <div class="sidebar-header">
        <a class="brand" href="/" onClick={(e) => go(e, "/", shell.navigate, props.onNavigated)}>
          <span class="brand-mark" aria-hidden="true">e</span>
          <span class="brand-name">eve chat</span>
        </a>
        <button type="button" class="icon-button ghost sidebar-collapse" aria-label={t.shell.closeSidebar} title={t.shell.closeSidebar} onClick={props.onCloseDesktop}>
          <span class="icon-sidebar" aria-hidden="true" />
        </button>
      </div>
      <a class="new-chat" href="/" onClick={(e) => go(e, "/", shell.navigate, props.onNavigated)}>
        <span class="plus" aria-hidden="true">+</span> {t.shell.newChat}
      </a>
      {/* Always rendered (prerendered too), so that nothing moves when the viewer is known. */}
      <div class="history-search">
        <input
            id="chat-search"
            type="search"
            disabled={!shell.viewer}
            placeholder={t.shell.searchChats}
            aria-label={t.shell.searchChats}
            title={t.shell.searchChatsTitle}
            value={query}
            maxLength={200}
            onInput={(e) => setQuery((e.currentTarget as HTMLInputElement).value)}
            onKeyDown={(e) => {
              if (e.key === "Escape" && query) {
                e.stopPropagation();
                setQuery("");
              }
            }}
          />
      </div>
      <nav class="history" aria-label={t.shell.chatsNav}>
        {shell.viewer === null && <p class="history-empty">{t.sidebar.signInToSee}</p>}
        {q ? (
          <>
            {searching && !results && <p class="history-empty">{t.sidebar.searching}</p>}
            {results && results.chats.length === 0 && <p class="history-empty">{fmt(t.sidebar.noResults, { query: results.query })}</p>}
            <ul class="search-results" aria-busy={searching}>
              {results?.chats.map((chat) => (
                <ChatRow key={chat.id} chat={chat} active={chat.id === activeId} query={results.query} onNavigated={props.onNavigated} />
              ))}
            </ul>
          </>
        ) : (
          <>
            {shell.viewer && shell.chatsLoaded && <ProjectsSection activeId={activeId} onNavigated={props.onNavigated} />}
            {shell.pinned.length > 0 && (
              <>
                <h2 class="history-heading">{t.sidebar.pinnedHeading}</h2>
                <ul class="pinned-chats" aria-label={t.sidebar.pinnedHeading}>
                  {shell.pinned.map((chat) => (
                    <ChatRow key={chat.id} chat={chat} active={chat.id === activeId} onNavigated={props.onNavigated} />
                  ))}
                </ul>
              </>
            )}
            {/* The history has a heading of its own, so a first chat does not read as a project. */}
            {shell.viewer && shell.chatsLoaded && <h2 class="history-heading chats-heading">{t.sidebar.historyHeading}</h2>}
            {shell.viewer && shell.chatsLoaded && shell.chats.length === 0 && <p class="history-empty">{t.sidebar.noChats}</p>}
            <ul>
              {chatsOutsideProjects(shell.chats, shell.chatProject).filter((c) => !pinnedIds.has(c.id)).map((chat) => (
                <ChatRow key={chat.id} chat={chat} active={chat.id === activeId} onNavigated={props.onNavigated} />
              ))}
              {shell.nextCursor && (
                <li ref={sentinel} class="history-sentinel" aria-hidden="true">
                  {t.sidebar.loading}
                </li>
              )}
            </ul>
          </>
        )}
      </nav>
      {/* Settings and, for admins, the admin page: once signed in (in local-dev the one
          local developer is an admin), below the history so that nothing above it moves. */}
      {shell.viewer && (hasSignIn(shell.viewer.mode) || shell.viewer.mode === "local-dev") && (
        <nav class="sidebar-footer" aria-label={t.account.settingsTitle}>
          <a class={`sidebar-link${shell.route.name === "settings" ? " active" : ""}`} href="/settings" onClick={(e) => go(e, "/settings", shell.navigate, props.onNavigated)}>
            {t.account.settingsTitle}
          </a>
          {shell.isAdmin && (
            <a class={`sidebar-link${shell.route.name === "admin" ? " active" : ""}`} href="/admin" onClick={(e) => go(e, "/admin", shell.navigate, props.onNavigated)}>
              {t.account.adminLink}
            </a>
          )}
        </nav>
      )}
    </aside>
  );
}

function go(e: MouseEvent, path: string, navigate: (p: string) => void, after: () => void) {
  if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
  e.preventDefault();
  navigate(path);
  after();
}

function Title({ text, query }: { text: string; query?: string }) {
  if (!query) return <>{text}</>;
  const runs = highlight(text, query);
  return (
    <>
      {runs.map((r, i) => (r.match ? <mark key={i}>{r.text}</mark> : r.text))}
      {!runs.some((r) => r.match) && <span class="match-hint">{t.sidebar.inMessages}</span>}
    </>
  );
}

function ChatRow({ chat, active, query, onNavigated }: { chat: ChatSummary; active: boolean; query?: string; onNavigated(): void }) {
  const shell = useShell();
  const [editing, setEditing] = useState(false);
  const [title, setTitle] = useState(chat.title);
  const [menuOpen, setMenuOpen] = useState(false);
  const menuRoot = useRef<HTMLSpanElement>(null);
  const href = `/chat/${chat.id}`;
  const isPinned = shell.pinned.some((c) => c.id === chat.id);
  const inProject = projectOf(shell, chat);

  useEffect(() => {
    if (!menuOpen) return;
    const onDoc = (e: MouseEvent) => {
      if (menuRoot.current && !menuRoot.current.contains(e.target as Node)) setMenuOpen(false);
    };
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && setMenuOpen(false);
    document.addEventListener("mousedown", onDoc);
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("mousedown", onDoc);
      document.removeEventListener("keydown", onKey);
    };
  }, [menuOpen]);

  const commitRename = async () => {
    setEditing(false);
    const next = title.trim();
    if (!next || next === chat.title) return setTitle(chat.title);
    const previous = chat.title;
    shell.updateChatTitle(chat.id, next);
    try {
      await api.renameChat(chat.id, next);
    } catch (err) {
      shell.updateChatTitle(chat.id, previous);
      shell.toast(fmt(t.sidebar.renameFailed, { error: describeError(err) }));
    }
  };

  if (editing) {
    return (
      <li class="chat-row editing">
        <input
          class="rename-input"
          aria-label={t.sidebar.titleLabel}
          value={title}
          maxLength={200}
          ref={(el) => el?.focus()}
          onInput={(e) => setTitle((e.currentTarget as HTMLInputElement).value)}
          onBlur={commitRename}
          onKeyDown={(e) => {
            if (e.key === "Enter") (e.currentTarget as HTMLInputElement).blur();
            if (e.key === "Escape") {
              setTitle(chat.title);
              setEditing(false);
            }
          }}
        />
      </li>
    );
  }
  return (
    <li class={`chat-row${active ? " active" : ""}${menuOpen ? " menu-open" : ""}${isPinned ? " pinned" : ""}`} data-chat-id={chat.id}>
      <a href={href} aria-current={active ? "page" : undefined} onClick={(e) => go(e, href, shell.navigate, onNavigated)} title={fmt(t.sidebar.rowTitle, { title: chat.title, when: formatRelative(chat.updatedAt) })}>
        <Title text={chat.title} query={query} />
      </a>
      <span class="row-actions" ref={menuRoot}>
        <button type="button" class="icon-button ghost small" aria-label={fmt(t.sidebar.renameLabel, { title: chat.title })} title={t.sidebar.rename} onClick={() => { setTitle(chat.title); setEditing(true); }}>
          <span class="icon-pencil" aria-hidden="true" />
        </button>
        <button type="button" class="icon-button ghost small" aria-label={fmt(t.sidebar.deleteLabel, { title: chat.title })} title={t.sidebar.delete} onClick={() => shell.deleteChat(chat)}>
          <span class="icon-trash" aria-hidden="true" />
        </button>
        <button type="button" class="icon-button ghost small" aria-label={fmt(t.sidebar.more, { title: chat.title })} aria-haspopup="menu" aria-expanded={menuOpen} title={t.sidebar.moreTitle} onClick={() => setMenuOpen(!menuOpen)}>
          <span aria-hidden="true">⋯</span>
        </button>
        {menuOpen && (
          <div class="menu row-menu" role="menu" aria-label={fmt(t.sidebar.more, { title: chat.title })}>
            {/* The export route answers with content-disposition: attachment, so these download. */}
            <button
              type="button"
              class="menu-item"
              role="menuitem"
              onClick={() => {
                setMenuOpen(false);
                shell.setPinned(chat, !isPinned);
              }}
            >
              {isPinned ? t.sidebar.unpin : t.sidebar.pin}
            </button>
            {shell.projects.filter((p) => p.id !== inProject).map((p) => (
              <button key={p.id} type="button" class="menu-item move-to" role="menuitem" data-project-id={p.id} onClick={() => { setMenuOpen(false); void moveChat(shell, chat, p); }}>
                {fmt(t.projects.moveTo, { name: p.name })}
              </button>
            ))}
            {inProject && (
              <button type="button" class="menu-item move-out" role="menuitem" onClick={() => { setMenuOpen(false); void moveChat(shell, chat, null); }}>
                {t.projects.moveOut}
              </button>
            )}
            <a class="menu-item" role="menuitem" href={api.exportUrl(chat.id, "md")} download onClick={() => setMenuOpen(false)}>
              {t.sidebar.exportMd}
            </a>
            <a class="menu-item" role="menuitem" href={api.exportUrl(chat.id, "json")} download onClick={() => setMenuOpen(false)}>
              {t.sidebar.exportJson}
            </a>
          </div>
        )}
      </span>
    </li>
  );
}

// ---- projects (issue 21, docs/projects.md) ---------------------------------------------------

function ProjectsSection({ activeId, onNavigated }: { activeId: string | null; onNavigated(): void }) {
  const shell = useShell();
  const [adding, setAdding] = useState(false);
  const [name, setName] = useState("");
  const create = async () => {
    const n = name.trim();
    setAdding(false);
    setName("");
    if (!n) return;
    try {
      const { project } = await projectsApi.create(n);
      shell.putProject(project);
      shell.navigate(`/project/${project.id}`);
      onNavigated();
    } catch (err) {
      shell.toast(fmt(t.projects.createFailed, { error: describeError(err) }));
    }
  };
  return (
    <section class="projects" aria-labelledby="projects-heading">
      <div class="history-heading-row">
        <h2 class="history-heading" id="projects-heading">{t.projects.heading}</h2>
        <button type="button" class="icon-button ghost small new-project" aria-label={t.projects.newProject} title={t.projects.newProject} onClick={() => setAdding(true)}>
          <span aria-hidden="true">+</span>
        </button>
      </div>
      {adding && (
        <input
          id="new-project-name"
          class="rename-input"
          aria-label={t.projects.namePlaceholder}
          placeholder={t.projects.namePlaceholder}
          maxLength={200}
          value={name}
          ref={(el) => el?.focus()}
          onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
          onBlur={() => void create()}
          onKeyDown={(e) => {
            if (e.key === "Enter") (e.currentTarget as HTMLInputElement).blur();
            if (e.key === "Escape") {
              setName("");
              setAdding(false);
            }
          }}
        />
      )}
      <ul class="project-list">
        {shell.projects.map((p) => (
          <ProjectGroup key={p.id} project={p} activeId={activeId} onNavigated={onNavigated} />
        ))}
      </ul>
    </section>
  );
}

function ProjectGroup({ project, activeId, onNavigated }: { project: Project; activeId: string | null; onNavigated(): void }) {
  const shell = useShell();
  const here = (shell.route.name === "project" && shell.route.id === project.id) || (!!activeId && shell.chatProject[activeId] === project.id);
  const [open, setOpen] = useState(here);
  const [loaded, setLoaded] = useState<ChatSummary[] | null>(null);
  useEffect(() => {
    if (here) setOpen(true);
  }, [here]);
  useEffect(() => {
    if (!open || loaded) return;
    projectsApi.chats(project.id).then(
      (page) => {
        shell.knowChats(project.id, page.chats.map((c) => c.id));
        setLoaded(page.chats);
      },
      (err: Error) => shell.toast(fmt(t.projects.loadFailed, { error: describeError(err) })),
    );
  }, [open]);
  // Its chats: those listed for it, and those this page created or moved into it since.
  const byId = new Map<string, ChatSummary>();
  for (const c of [...(loaded ?? []), ...shell.chats]) {
    if (projectOf(shell, c) === project.id && !byId.has(c.id)) byId.set(c.id, shell.chats.find((x) => x.id === c.id) ?? c);
  }
  const chats = [...byId.values()].sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  const href = `/project/${project.id}`;
  const current = shell.route.name === "project" && shell.route.id === project.id;
  return (
    <li class={`project-group${open ? " open" : ""}`} data-project-id={project.id}>
      <div class={`project-row${current ? " active" : ""}`}>
        <button type="button" class="icon-button ghost small project-toggle" aria-expanded={open} aria-label={fmt(open ? t.projects.hideChats : t.projects.showChats, { name: project.name })} onClick={() => setOpen(!open)}>
          <span class="chevron" aria-hidden="true" />
        </button>
        <a href={href} aria-current={current ? "page" : undefined} onClick={(e) => go(e, href, shell.navigate, onNavigated)}>
          <span class="project-icon" aria-hidden="true" />
          {project.name}
        </a>
      </div>
      {open && (
        <ul class="project-chats">
          {loaded && chats.length === 0 && <li class="history-empty">{t.projects.noChats}</li>}
          {chats.map((chat) => (
            <ChatRow key={chat.id} chat={chat} active={chat.id === activeId} onNavigated={onNavigated} />
          ))}
        </ul>
      )}
    </li>
  );
}
