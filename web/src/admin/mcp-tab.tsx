// The admin page's MCP servers tab (issue 22, docs/runtime.md "MCP servers"): the servers of
// the mcp_connections variable read-only, the ones admins added with their enable switch,
// edit, remove, and their tools (cached, refreshable, with each tool's annotations). A refusal
// (the outbound guard's words for a local or private URL) is shown beside the form. A chunk of
// its own, loaded when the tab opens.
import { useEffect, useState } from "preact/hooks";
import { useShell } from "../shell/context";
import { describeError, fmt, formatDateTime, t } from "../i18n";
import { tm } from "../i18n/admin-mcp";
import { annotationBadges, createBody, emptyForm, formOf, mcpApi, patchBody, toolTitle, type McpAuth, type McpForm, type McpServer, type McpServerList } from "./mcp-servers";
import { ConfirmDialog } from "../ui/widgets";
import { leavesOrigin } from "./origin";

const AUTHS: McpAuth[] = ["none", "bearer", "oauth"];

export function McpServersTab() {
  const shell = useShell();
  const [list, setList] = useState<McpServerList | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<McpServer | "new" | null>(null);
  const [removing, setRemoving] = useState<McpServer | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    mcpApi.list().then(setList, (err) => setError(fmt(t.ui.loadFailed, { error: describeError(err) })));
  }, []);
  if (!list) return error ? <p class="form-error" role="alert">{error}</p> : <p class="muted">{t.ui.loading}</p>;
  const replace = (s: McpServer) => setList((l) => l && { ...l, servers: l.servers.some((x) => x.id === s.id) ? l.servers.map((x) => (x.id === s.id ? s : x)) : [...l.servers, s].sort((a, b) => a.name.localeCompare(b.name)) });
  const act = async (run: () => Promise<void>) => {
    if (busy) return;
    setBusy(true);
    try {
      await run();
    } catch (err) {
      shell.toast(fmt(tm().failed, { error: describeError(err) }));
    } finally {
      setBusy(false);
    }
  };
  const remove = (s: McpServer) =>
    act(async () => {
      await mcpApi.remove(s.id);
      setList((l) => l && { ...l, servers: l.servers.filter((x) => x.id !== s.id) });
      setRemoving(null);
      shell.toast(fmt(tm().removed, { name: s.displayName }), "info");
    });
  return (
    <div class="admin-mcp">
      <p class="muted">{tm().intro}</p>
      <section class="panel-section" aria-labelledby="mcp-bootstrap-heading">
        <h2 id="mcp-bootstrap-heading">{tm().bootstrapTitle}</h2>
        <p class="muted">{list.bootstrap.length ? tm().bootstrapIntro : tm().bootstrapNone}</p>
        {list.bootstrap.map((s) => (
          <ServerCard key={s.id} server={s} />
        ))}
      </section>
      <section class="panel-section" aria-labelledby="mcp-servers-heading">
        <h2 id="mcp-servers-heading">{tm().serversTitle}</h2>
        {list.servers.length === 0 && <p class="muted mcp-none">{tm().none}</p>}
        {list.servers.map((s) => (
          <ServerCard key={s.id} server={s} busy={busy} onToggle={(on) => act(async () => replace(await mcpApi.update(s.id, { enabled: on })))} onEdit={() => setEditing(s)} onRemove={() => setRemoving(s)} onRefresh={() => act(async () => {
            const next = await mcpApi.refresh(s.id);
            replace(next);
            if (!next.toolsError) shell.toast(fmt(tm().refreshed, { name: next.displayName }), "info");
          })} />
        ))}
        {editing === null ? (
          <button type="button" class="button primary mcp-add" onClick={() => setEditing("new")}>
            {tm().add}
          </button>
        ) : (
          <ServerForm key={editing === "new" ? "new" : editing.id} server={editing === "new" ? null : editing} onDone={(s) => {
            setEditing(null);
            if (s) replace(s);
          }} />
        )}
      </section>
      {removing && (
        <ConfirmDialog title={fmt(tm().removeTitle, { name: removing.displayName })} body={tm().removeBody} confirmLabel={tm().remove} danger busy={busy} onConfirm={() => void remove(removing)} onCancel={() => setRemoving(null)} />
      )}
    </div>
  );
}

interface CardProps {
  server: McpServer;
  busy?: boolean;
  onToggle?(on: boolean): void;
  onEdit?(): void;
  onRemove?(): void;
  onRefresh?(): void;
}

/** One server: what it is, its switch and buttons (not for a bootstrap one), its tools. */
function ServerCard({ server: s, busy, onToggle, onEdit, onRemove, onRefresh }: CardProps) {
  const m = tm();
  return (
    <article class="mcp-server" data-name={s.name} aria-labelledby={`mcp-${s.id}`}>
      <h3 id={`mcp-${s.id}`}>
        {s.displayName} <code>{s.name}</code> {s.readOnly && <span class="chip mcp-readonly">{m.readOnly}</span>}
      </h3>
      {s.description && <p class="muted">{s.description}</p>}
      <p class="mcp-meta">
        <code class="mcp-url">{s.url}</code> · <span class="mcp-auth">{m.auth[s.auth] ?? s.auth}</span>
        {s.hasToken && !s.keyUnreadable && <> · {m.tokenStored}</>}
        {s.keyUnreadable && <span class="form-error"> · {m.tokenUnreadable}</span>}
      </p>
      {!s.readOnly && (
        <div class="row-buttons">
          <label class="check">
            <input type="checkbox" class="mcp-enabled" checked={s.enabled} disabled={busy} aria-label={fmt(m.enable, { name: s.displayName })} onChange={(e) => onToggle?.((e.currentTarget as HTMLInputElement).checked)} />
            {m.enabled}
          </label>
          <button type="button" class="button mcp-refresh" disabled={busy} onClick={onRefresh}>
            {m.refresh}
          </button>
          <button type="button" class="button mcp-edit" disabled={busy} onClick={onEdit}>
            {m.edit}
          </button>
          <button type="button" class="button danger mcp-remove" disabled={busy} onClick={onRemove}>
            {m.remove}
          </button>
        </div>
      )}
      {!s.readOnly && <ToolList server={s} />}
    </article>
  );
}

function ToolList({ server: s }: { server: McpServer }) {
  const m = tm();
  return (
    <div class="mcp-tools-block">
      {s.toolsError && (
        <p class="form-error mcp-tools-error" role="alert">
          {fmt(m.toolsError, { error: s.toolsError })}
        </p>
      )}
      <p class="muted mcp-tools-at">{s.toolsAt ? fmt(m.toolsAt, { when: formatDateTime(s.toolsAt) }) : m.toolsNever}</p>
      {s.toolsAt && s.tools.length === 0 && <p class="muted">{m.noTools}</p>}
      {s.tools.length > 0 && (
        <ul class="mcp-tools">
          {s.tools.map((tool) => (
            <li key={tool.name} data-tool={tool.name}>
              <code>{tool.name}</code>
              {toolTitle(tool) && <> {toolTitle(tool)}</>}
              {annotationBadges(tool.annotations).map((h) => (
                <span key={h} class="chip mcp-badge" data-hint={h}>
                  {m.annotations[h] ?? h}
                </span>
              ))}
              {tool.description && <span class="muted"> — {tool.description}</span>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** Adds a server (`server` null) or edits one; `onDone` gets the saved server, or null. */
function ServerForm({ server, onDone }: { server: McpServer | null; onDone(s: McpServer | null): void }) {
  const shell = useShell();
  const m = tm();
  const [form, setForm] = useState<McpForm>(server ? formOf(server) : emptyForm);
  const tokenAgain = !!server?.hasToken && form.auth === "bearer" && !form.token.trim() && leavesOrigin(server.url, form.url);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (key: keyof McpForm) => (e: Event) => setForm({ ...form, [key]: (e.currentTarget as HTMLInputElement).value });
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const saved = server ? await mcpApi.update(server.id, patchBody(server, form)) : await mcpApi.create(createBody(form));
      shell.toast(fmt(server ? m.saved : m.added, { name: saved.displayName }), "info");
      onDone(saved);
    } catch (err) {
      setError(fmt(m.refused, { error: describeError(err) }));
    } finally {
      setBusy(false);
    }
  };
  const field = (key: "name" | "displayName" | "description" | "url", label: string, hint?: string) => (
    <div class="field">
      <label for={`mcp-${key}`}>{label}</label>
      <input id={`mcp-${key}`} value={form[key]} readOnly={key === "name" && !!server} required={key === "name" || key === "url"} autoComplete="off" onInput={set(key)} />
      {hint && <p class="field-hint muted">{hint}</p>}
    </div>
  );
  return (
    <form class="panel-form mcp-form" onSubmit={submit} aria-label={server ? fmt(m.editTitle, { name: server.displayName }) : m.add}>
      <h3>{server ? fmt(m.editTitle, { name: server.displayName }) : m.add}</h3>
      {field("name", m.name, m.nameHint)}
      {field("displayName", m.displayName)}
      {field("description", m.description)}
      {field("url", m.url, m.urlHint)}
      <div class="field">
        <label for="mcp-auth">{m.authLabel}</label>
        <select id="mcp-auth" value={form.auth} onChange={set("auth")}>
          {AUTHS.map((a) => (
            <option key={a} value={a}>
              {m.auth[a]}
            </option>
          ))}
        </select>
      </div>
      {form.auth === "bearer" && (
        <div class="field">
          <label for="mcp-token">{m.token}</label>
          <input id="mcp-token" type="password" value={form.token} autoComplete="off" required={!server?.hasToken || tokenAgain} onInput={set("token")} />
          {server?.hasToken && !tokenAgain && <p class="field-hint muted">{m.tokenKeep}</p>}
          {tokenAgain && (
            <p class="field-hint form-error mcp-token-again" role="status">
              {m.tokenAgain}
            </p>
          )}
        </div>
      )}
      <p class="form-error mcp-form-error" role="alert">
        {error ?? ""}
      </p>
      <div class="dialog-actions">
        <button type="button" class="button" onClick={() => onDone(null)}>
          {t.ui.cancel}
        </button>
        <button type="submit" class="button primary" disabled={busy}>
          {m.save}
        </button>
      </div>
    </form>
  );
}
