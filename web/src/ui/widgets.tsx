// Small pieces the settings, admin and project pages share: a secret shown once with a copy
// button, a confirmation dialog (optionally asking for a typed word), the page frame, and a
// table of records. Only those lazy chunks import this module (not first-load JavaScript).
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { t } from "../i18n";

export function PanelPage({ title, children, wide }: { title: string; children: ComponentChildren; wide?: boolean }) {
  return (
    <div class="page page-panel">
      <div class={`panel${wide ? " wide" : ""}`}>
        <h1 class="panel-title">{title}</h1>
        {children}
      </div>
    </div>
  );
}

/** A value shown once (a token, an invitation or reset link): read-only, selected on focus,
 * with a Copy button and the warning that it will not be shown again. */
export function OnceSecret({ title, label, value, warning, onDone, doneLabel }: { title?: string; label: string; value: string; warning: string; onDone?(): void; doneLabel?: string }) {
  const [copied, setCopied] = useState<null | "ok" | "failed">(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied("ok");
    } catch {
      setCopied("failed");
    }
  };
  return (
    <div class="once-secret" role="status">
      {title && <p class="once-title">{title}</p>}
      <p class="once-warning">{warning}</p>
      <div class="once-row">
        <input class="once-value" readOnly aria-label={label} value={value} onFocus={(e) => (e.currentTarget as HTMLInputElement).select()} />
        <button type="button" class="button small once-copy" onClick={() => void copy()}>
          {copied === "ok" ? t.ui.copied : t.ui.copy}
        </button>
        {onDone && (
          <button type="button" class="button small ghost" onClick={onDone}>
            {doneLabel ?? t.ui.done}
          </button>
        )}
      </div>
      {copied === "failed" && <p class="form-error">{t.ui.copyFailed}</p>}
    </div>
  );
}

/** A modal confirmation. With `typed`, the confirm button stays disabled until exactly that
 * text is typed (deleting an account). */
export function ConfirmDialog(props: {
  title: string;
  body: string;
  confirmLabel: string;
  typed?: string;
  typedLabel?: string;
  danger?: boolean;
  busy?: boolean;
  error?: string | null;
  onConfirm(): void;
  onCancel(): void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [text, setText] = useState("");
  useEffect(() => {
    const d = dialog.current;
    if (d && !d.open) d.showModal();
  }, []);
  const ready = !props.busy && (props.typed === undefined || text.trim() === props.typed);
  return (
    <dialog ref={dialog} class="login-modal confirm-dialog" aria-labelledby="confirm-title" onCancel={(e) => { e.preventDefault(); props.onCancel(); }}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (ready) props.onConfirm();
        }}
      >
        <h2 id="confirm-title">{props.title}</h2>
        <p class="muted">{props.body}</p>
        {props.typed !== undefined && (
          <>
            <label for="confirm-typed">{props.typedLabel}</label>
            <input id="confirm-typed" autoComplete="off" value={text} autoFocus onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)} />
          </>
        )}
        <p class="form-error" role="alert">
          {props.error ?? ""}
        </p>
        <div class="dialog-actions">
          <button type="button" class="button" onClick={props.onCancel}>
            {t.ui.cancel}
          </button>
          <button type="submit" class={`button ${props.danger ? "danger" : "primary"}`} disabled={!ready} autoFocus={props.typed === undefined}>
            {props.confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}

/** A column of a [`DataTable`]: its heading, right-aligned for numbers; `hidden` is read by
 * screen readers only (a column of buttons). */
export type Column = string | { label: string; num?: boolean; hidden?: boolean };

/** A table of records (`kind`: its class, e.g. `user-table`) in a frame that scrolls
 * sideways on a narrow screen; `children` are its rows. */
export function DataTable({ kind, columns, children }: { kind: string; columns: Column[]; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table class={`data-table ${kind}`}>
        <thead>
          <tr>
            {columns.map((c) => {
              const col = typeof c === "string" ? { label: c } : c;
              return (
                <th key={col.label} scope="col" class={col.num ? "num" : undefined}>
                  {col.hidden ? <span class="sr-only">{col.label}</span> : col.label}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
