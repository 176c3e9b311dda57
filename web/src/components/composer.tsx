// The composer (seed composer.tsx): fully controlled by its page. Enter sends, Shift+Enter adds a
// newline, 8000-character limit, autofocus on the next frame, a stop button while busy, a
// spinner while preparing, and a tooltip that always says why it is disabled.
import type { ComponentChildren } from "preact";
import { useEffect, useLayoutEffect, useRef } from "preact/hooks";
import { MAX_MESSAGE_CHARS } from "../events";
import { fmt, t } from "../i18n";

export interface ComposerProps {
  value: string;
  onChange(value: string): void;
  onSubmit(value: string): void;
  onStop?(): void;
  disabled?: boolean;
  disabledReason?: string | null;
  busy?: boolean;
  preparing?: boolean;
  placeholder?: string;
  footerStart?: ComponentChildren;
  /** ↑ in the empty composer (edits the last message). */
  onArrowUpEmpty?(): void;
}

const MAX_HEIGHT_PX = 240;

export function Composer(props: ComposerProps) {
  const { value, disabled, busy, preparing } = props;
  const ref = useRef<HTMLTextAreaElement>(null);
  const reason = disabled ? props.disabledReason ?? t.composer.unavailable : null;
  const inputLocked = disabled || preparing;
  const over = value.length > MAX_MESSAGE_CHARS;
  const near = value.length > MAX_MESSAGE_CHARS * 0.9;

  useEffect(() => {
    if (inputLocked) return;
    const id = requestAnimationFrame(() => ref.current?.focus({ preventScroll: true }));
    return () => cancelAnimationFrame(id);
  }, [inputLocked]);

  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    // Empty: the stylesheet's one-line height (as prerendered), so nothing moves on load.
    el.style.height = "";
    if (value) el.style.height = `${Math.min(el.scrollHeight, MAX_HEIGHT_PX)}px`;
  }, [value]);

  const submit = () => {
    if (inputLocked || busy || !value.trim() || over) return;
    props.onSubmit(value);
  };

  const sendBlockReason = over
    ? fmt(t.composer.tooLong, { max: MAX_MESSAGE_CHARS })
    : !value.trim()
      ? t.shell.typeToSend
      : reason;

  return (
    <div class={`composer${disabled ? " is-disabled" : ""}`} data-reason={reason ?? undefined} title={reason ?? undefined}>
      <form
        class="composer-box"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <label class="sr-only" for="composer-input">
          {t.shell.messageLabel}
        </label>
        <textarea
          id="composer-input"
          ref={ref}
          rows={1}
          value={value}
          maxLength={MAX_MESSAGE_CHARS}
          disabled={inputLocked}
          placeholder={props.placeholder ?? t.shell.placeholderHome}
          aria-describedby={reason ? "composer-reason" : undefined}
          onInput={(e) => props.onChange((e.currentTarget as HTMLTextAreaElement).value)}
          onKeyDown={(e) => {
            if (e.key === "ArrowUp" && !value && props.onArrowUpEmpty && !e.shiftKey && !e.altKey && !e.ctrlKey && !e.metaKey) {
              e.preventDefault();
              props.onArrowUpEmpty();
              return;
            }
            if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              submit();
            }
          }}
        />
        <div class="composer-footer">
          <div class="composer-footer-start">{props.footerStart}</div>
          <div class="composer-footer-end">
            {near && (
              <span class={`char-count${over ? " over" : ""}`} aria-live="polite">
                {fmt(t.composer.charCount, { count: value.length, max: MAX_MESSAGE_CHARS })}
              </span>
            )}
            {busy ? (
              <button type="button" class="icon-button stop" aria-label={t.composer.stop} title={t.composer.stopTitle} onClick={() => props.onStop?.()}>
                <span class="stop-square" aria-hidden="true" />
              </button>
            ) : (
              <button
                type="submit"
                class="icon-button send"
                aria-label={preparing ? t.composer.sending : t.shell.sendMessage}
                title={preparing ? t.composer.sendingTitle : sendBlockReason ?? t.composer.sendTitle}
                disabled={inputLocked || !value.trim() || over}
              >
                {preparing ? <span class="spinner" aria-hidden="true" /> : <span class="send-arrow" aria-hidden="true" />}
              </button>
            )}
          </div>
        </div>
      </form>
      {reason && (
        <span id="composer-reason" class="sr-only">
          {reason}
        </span>
      )}
    </div>
  );
}
