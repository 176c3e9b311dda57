// Sidebar history (seed): newest first, cursor pagination through an IntersectionObserver
// sentinel (only chats not already listed are appended), active row, rename and delete.
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api";
import { resetSession } from "../eve";
import { useShell } from "../context";
import type { ChatSummary } from "../types";

export function Sidebar(props: { onCloseDesktop(): void; onNavigated(): void }) {
  const shell = useShell();
  const activeId = shell.route.name === "chat" ? shell.route.id : null;
  const sentinel = useRef<HTMLLIElement>(null);

  useEffect(() => {
    const el = sentinel.current;
    if (!el || !shell.nextCursor) return;
    const io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) shell.loadMoreChats();
    });
    io.observe(el);
    return () => io.disconnect();
  }, [shell.nextCursor, shell.chats.length]);

  return (
    <aside class="sidebar" id="sidebar" aria-label="Chat history">
      <div class="sidebar-header">
        <a class="brand" href="/" onClick={(e) => go(e, "/", shell.navigate, props.onNavigated)}>
          <span class="brand-mark" aria-hidden="true">e</span>
          <span class="brand-name">eve chat</span>
        </a>
        <button type="button" class="icon-button ghost sidebar-collapse" aria-label="Close sidebar" title="Close sidebar" onClick={props.onCloseDesktop}>
          <span class="icon-sidebar" aria-hidden="true" />
        </button>
      </div>
      <a class="new-chat" href="/" onClick={(e) => go(e, "/", shell.navigate, props.onNavigated)}>
        <span class="plus" aria-hidden="true">+</span> New chat
      </a>
      <nav class="history" aria-label="Chats">
        {shell.viewer === null && <p class="history-empty">Sign in to see your chats.</p>}
        {shell.viewer && shell.chatsLoaded && shell.chats.length === 0 && <p class="history-empty">No chats yet.</p>}
        <ul>
          {shell.chats.map((chat) => (
            <ChatRow key={chat.id} chat={chat} active={chat.id === activeId} onNavigated={props.onNavigated} />
          ))}
          {shell.nextCursor && (
            <li ref={sentinel} class="history-sentinel" aria-hidden="true">
              Loading…
            </li>
          )}
        </ul>
      </nav>
    </aside>
  );
}

function go(e: MouseEvent, path: string, navigate: (p: string) => void, after: () => void) {
  if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
  e.preventDefault();
  navigate(path);
  after();
}

function ChatRow({ chat, active, onNavigated }: { chat: ChatSummary; active: boolean; onNavigated(): void }) {
  const shell = useShell();
  const [editing, setEditing] = useState(false);
  const [title, setTitle] = useState(chat.title);
  const href = `/chat/${chat.id}`;

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
      shell.toast(`Rename failed: ${(err as Error).message}`);
    }
  };

  const remove = async () => {
    if (!confirm(`Delete “${chat.title}”? This cannot be undone.`)) return;
    shell.removeChat(chat.id);
    if (active) shell.navigate("/", { replace: true });
    try {
      const session =
        shell.runtimes.get(chat.id).getState().session ?? (await api.getChat(chat.id).then((d) => d.session).catch(() => null));
      if (session) await resetSession(session.sessionId).catch(() => undefined);
      await api.deleteChat(chat.id);
      shell.runtimes.forget(chat.id);
    } catch (err) {
      shell.touchChat(chat);
      shell.toast(`Delete failed: ${(err as Error).message}`);
    }
  };

  if (editing) {
    return (
      <li class="chat-row editing">
        <input
          class="rename-input"
          aria-label="Chat title"
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
    <li class={`chat-row${active ? " active" : ""}`} data-chat-id={chat.id}>
      <a href={href} aria-current={active ? "page" : undefined} onClick={(e) => go(e, href, shell.navigate, onNavigated)} title={chat.title}>
        {chat.title}
      </a>
      <span class="row-actions">
        <button type="button" class="icon-button ghost small" aria-label={`Rename ${chat.title}`} title="Rename" onClick={() => { setTitle(chat.title); setEditing(true); }}>
          <span class="icon-pencil" aria-hidden="true" />
        </button>
        <button type="button" class="icon-button ghost small" aria-label={`Delete ${chat.title}`} title="Delete" onClick={remove}>
          <span class="icon-trash" aria-hidden="true" />
        </button>
      </span>
    </li>
  );
}
