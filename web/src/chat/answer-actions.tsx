// Actions under the answers: copy a whole answer (its Markdown source), and retry the latest
// user message after its turn failed or was stopped.
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { answerText } from "./actions";
import { MESSAGE_FIELD_MAX_LENGTH, type RenderItem } from "./events";
import { fmt, t } from "../i18n";

export function CopyAnswer({ item, onError, children }: { item: Extract<RenderItem, { kind: "assistant" }>; onError(message: string): void; children?: ComponentChildren }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const t = setTimeout(() => setCopied(false), 1500);
    return () => clearTimeout(t);
  }, [copied]);
  const text = answerText(item);
  if (!text && !children) return null;
  return (
    <div class="message-actions" data-for={item.key}>
      {text && <button
        type="button"
        class="button small ghost copy-answer"
        aria-label={t.actions.copyLabel}
        onClick={() =>
          navigator.clipboard.writeText(text).then(
            () => setCopied(true),
            () => onError(t.actions.copyFailed),
          )
        }
      >
        {copied ? t.actions.copied : t.actions.copy}
      </button>}
      {children}
    </div>
  );
}

export function RetryTurn({ outcome, onRetry }: { outcome: "failed" | "cancelled"; onRetry(): void }) {
  return (
    <div class="message-actions retry-row">
      <button type="button" class="button small retry-turn" title={outcome === "failed" ? t.actions.retryFailed : t.actions.retryStopped} onClick={onRetry}>
        {t.actions.retry}
      </button>
    </div>
  );
}

export function RegenerateAnswer({ onRegenerate }: { onRegenerate(): void }) {
  return (
    <button type="button" class="button small ghost regenerate-answer" aria-label={t.actions.regenerateLabel} onClick={onRegenerate}>
      {t.actions.regenerate}
    </button>
  );
}

/** Under a user message: Edit, and ‹ i/n › when the message has other versions. */
export function UserActions(props: {
  switcher?: { index: number; count: number; targets: string[] };
  disabled: boolean;
  onEdit(): void;
  onSwitch(target: string): void;
}) {
  const sw = props.switcher;
  return (
    <div class="message-actions user-actions">
      {sw && (
        <span class="branch-switcher" role="group" aria-label={fmt(t.actions.version, { index: sw.index + 1, count: sw.count })}>
          <button type="button" class="button small ghost" aria-label={t.actions.previous} disabled={props.disabled || sw.index === 0} onClick={() => props.onSwitch(sw.targets[sw.index - 1]!)}>
            ‹
          </button>
          <span class="branch-count">
            {sw.index + 1}/{sw.count}
          </span>
          <button type="button" class="button small ghost" aria-label={t.actions.next} disabled={props.disabled || sw.index === sw.count - 1} onClick={() => props.onSwitch(sw.targets[sw.index + 1]!)}>
            ›
          </button>
        </span>
      )}
      <button type="button" class="button small ghost edit-message" aria-label={t.actions.editLabel} disabled={props.disabled} onClick={props.onEdit}>
        {t.actions.edit}
      </button>
    </div>
  );
}

/** The inline editor of a user message: Enter (or Send) resends it as a new branch, Esc cancels. */
export function EditMessage(props: { text: string; onSend(text: string): void; onCancel(): void }) {
  const [value, setValue] = useState(props.text);
  const input = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    const el = input.current;
    if (!el) return;
    el.focus();
    el.setSelectionRange(el.value.length, el.value.length);
  }, []);
  const send = () => {
    const v = value.trim();
    if (v) props.onSend(v);
  };
  return (
    <div class="message user editing" data-role="user">
      <textarea
        class="edit-input"
        aria-label={t.actions.editLabel}
        value={value}
        maxLength={MESSAGE_FIELD_MAX_LENGTH}
        ref={input}
        onInput={(e) => setValue((e.currentTarget as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            send();
          }
          if (e.key === "Escape") {
            e.preventDefault();
            e.stopPropagation();
            props.onCancel();
          }
        }}
      />
      <div class="message-actions">
        <button type="button" class="button small" onClick={props.onCancel}>
          {t.actions.cancel}
        </button>
        <button type="button" class="button small primary" disabled={!value.trim()} onClick={send}>
          {t.actions.save}
        </button>
      </div>
    </div>
  );
}
