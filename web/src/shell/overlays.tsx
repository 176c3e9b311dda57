// Toasts, the auth control, the shortcut sheet and the connections menu. (The login modal is
// account/login.tsx, a chunk of its own.)
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api";
import { useShell } from "./context";
import { SHORTCUTS } from "../chat/actions";
import type { McpConnectionInfo } from "../api/types";
import { describeError, fmt, t } from "../i18n";
import { hasSignIn } from "../account/accounts";

export interface ToastAction {
  label: string;
  run(): void;
}

export interface Toast {
  id: number;
  message: string;
  tone: "error" | "info";
  /** A button in the toast (Undo); pressing it also dismisses the toast. */
  action?: ToastAction;
}

export function Toasts({ toasts, dismiss }: { toasts: Toast[]; dismiss(id: number): void }) {
  return (
    <div class="toasts" aria-live="assertive">
      {toasts.map((toast) => (
        <div key={toast.id} class={`toast ${toast.tone}`} role={toast.tone === "error" ? "alert" : "status"}>
          <span class="toast-text">{toast.message}</span>
          {toast.action && (
            <button
              type="button"
              class="button small toast-action"
              onClick={() => {
                toast.action!.run();
                dismiss(toast.id);
              }}
            >
              {toast.action.label}
            </button>
          )}
          <button type="button" class="icon-button ghost small" aria-label={t.app.dismiss} onClick={() => dismiss(toast.id)}>
            ×
          </button>
        </div>
      ))}
    </div>
  );
}

/** The sign-in dialog: the deployment password, or (accounts mode) email and password with a
 * way to sign up. */
export function AuthControl({ onSignOut }: { onSignOut(): void }) {
  const shell = useShell();
  const v = shell.viewer;
  if (v === undefined) return <div class="auth-slot" aria-busy="true" />;
  if (v === null) {
    const label = shell.authMode === "unconfigured" ? t.auth.setupNeeded : t.auth.signIn;
    return (
      <div class="auth-slot">
        <button type="button" class="button small" onClick={() => shell.requestSignIn()} disabled={shell.authMode === "unconfigured"} title={shell.authMode === "unconfigured" ? t.auth.notConfiguredTitle : undefined}>
          {label}
        </button>
      </div>
    );
  }
  // The local-dev principal's name is the server's fixed English label: shown in the UI's language.
  const name = v.mode === "local-dev" ? t.auth.localDeveloper : shell.account?.displayName || v.name || v.email || t.auth.signedIn;
  return (
    <div class="auth-slot">
      {hasSignIn(v.mode) ? (
        // The user menu's entry: the settings page (account, password, API tokens).
        <a
          class="viewer-name"
          href="/settings"
          title={`${v.email ?? name} · ${t.account.settingsTitle}`}
          onClick={(e) => {
            if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
            e.preventDefault();
            shell.navigate("/settings");
          }}
        >
          {name}
        </a>
      ) : (
        <span class="viewer-name" title={v.email ?? name}>
          {name}
        </span>
      )}
      {v.mode !== "local-dev" && (
        <button type="button" class="button small ghost" onClick={onSignOut}>
          {t.auth.signOut}
        </button>
      )}
    </div>
  );
}

/** The `?` sheet: every keyboard shortcut. */
export function ShortcutSheet({ onClose }: { onClose(): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = dialog.current;
    if (d && !d.open) d.showModal();
  }, []);
  return (
    <dialog ref={dialog} class="shortcut-sheet" aria-labelledby="shortcuts-title" onCancel={(e) => { e.preventDefault(); onClose(); }}>
      <h2 id="shortcuts-title">{t.shortcuts.title}</h2>
      <dl class="shortcut-list">
        {SHORTCUTS.map((s) => (
          <div key={s.action} class="shortcut">
            <dt>
              <kbd>{s.keys === "↑" ? t.shortcuts.emptyComposer : s.keys}</kbd>
            </dt>
            <dd>{t.shortcuts[s.what]}</dd>
          </div>
        ))}
      </dl>
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onClose} autoFocus>
          {t.shortcuts.close}
        </button>
      </div>
    </dialog>
  );
}

/** Seed IntegrationsMenu: per-turn toggles for the configured MCP servers (`GET
 * /eve/v1/connections`, read when the menu opens; each is on until switched off), with
 * Disconnect for a server the user is signed in to. */
export function ConnectionsMenu() {
  const shell = useShell();
  const [open, setOpen] = useState(false);
  const [mcp, setMcp] = useState<McpConnectionInfo[]>([]);
  const root = useRef<HTMLDivElement>(null);
  const isOn = (name: string) => shell.connections[name] ?? true;
  const count = mcp.filter((c) => isOn(c.name)).length;
  const reload = () =>
    api
      .connections()
      .then((r) => setMcp(r.connections))
      .catch(() => setMcp([]));
  const disconnect = (c: McpConnectionInfo) =>
    api
      .revokeConnection(c.name)
      .then(() => {
        shell.toast(fmt(t.connections.disconnected, { name: c.displayName }));
        return reload();
      })
      .catch((err: Error) => shell.toast(fmt(t.connections.disconnectFailed, { name: c.displayName, error: describeError(err) }), "error"));

  useEffect(() => {
    if (open) void reload();
  }, [open]);

  useEffect(() => {
    if (!open) return;
    const onDoc = (e: MouseEvent) => {
      if (root.current && !root.current.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && setOpen(false);
    document.addEventListener("mousedown", onDoc);
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("mousedown", onDoc);
      document.removeEventListener("keydown", onKey);
    };
  }, [open]);

  return (
    <div class="connections" ref={root}>
      <button type="button" class="chip" aria-haspopup="menu" aria-expanded={open} onClick={() => setOpen(!open)} title={t.shell.connectionsTitle}>
        <span class="icon-plug" aria-hidden="true" /> {t.shell.connections}
        {count ? ` · ${count}` : ""}
      </button>
      {open && (
        <div class="menu" role="menu" aria-label={t.connections.menuLabel}>
          {mcp.length === 0 && <p class="menu-item muted">{t.connections.none}</p>}
          {mcp.map((c) => (
            <label key={c.name} class="menu-item" role="menuitemcheckbox" aria-checked={isOn(c.name)} title={c.description}>
              <input type="checkbox" checked={isOn(c.name)} onChange={(e) => shell.setConnection(c.name, (e.currentTarget as HTMLInputElement).checked)} />
              <span>{c.displayName}</span>
            </label>
          ))}
          {mcp
            .filter((c) => c.revocable)
            .map((c) => (
              <button key={`revoke-${c.name}`} type="button" class="menu-item button small ghost" data-revoke={c.name} onClick={() => void disconnect(c)}>
                {fmt(t.connections.disconnect, { name: c.displayName })}
              </button>
            ))}
        </div>
      )}
    </div>
  );
}
