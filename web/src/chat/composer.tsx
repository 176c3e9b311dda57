// The composer (seed composer.tsx): fully controlled by its page. Enter sends, Shift+Enter adds a
// newline, 8000-character limit, autofocus on the next frame, a stop button while busy, a
// spinner while preparing, and a tooltip that always says why it is disabled. Files (item 7):
// a paperclip, drag-and-drop onto the composer and paste add them as chips before sending.
import type { ComponentChildren } from "preact";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { type DraftFiles } from "./attachments";
import { MAX_MESSAGE_CHARS, MESSAGE_FIELD_MAX_LENGTH, messageChars } from "./events";
import { fmt, formatSize, t } from "../i18n";

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
  /** The files to send with the message; unset, the composer takes none. */
  files?: DraftFiles;
  /** Shown before the paperclip (a project chat's file picker). */
  extra?: ComponentChildren;
}

const MAX_HEIGHT_PX = 240;

export function Composer(props: ComposerProps) {
  const { value, disabled, busy, preparing } = props;
  const ref = useRef<HTMLTextAreaElement>(null);
  const reason = disabled ? props.disabledReason ?? t.composer.unavailable : null;
  const inputLocked = disabled || preparing;
  // Characters as the server counts them (code points of the trimmed text), not UTF-16 units.
  const chars = messageChars(value);
  const over = chars > MAX_MESSAGE_CHARS;
  const near = chars > MAX_MESSAGE_CHARS * 0.9;
  const files = props.files;
  const hasFiles = !!files && files.files.length > 0;
  const empty = !value.trim() && !hasFiles;
  const fileInput = useRef<HTMLInputElement>(null);
  const [dropping, setDropping] = useState(false);
  const takesFiles = !!files && !inputLocked;

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
    if (inputLocked || busy || empty || over) return;
    props.onSubmit(value);
  };

  const sendBlockReason = over
    ? fmt(t.composer.tooLong, { max: MAX_MESSAGE_CHARS })
    : empty
      ? t.shell.typeToSend
      : reason;

  return (
    <div class={`composer${disabled ? " is-disabled" : ""}`} data-reason={reason ?? undefined} title={reason ?? undefined}>
      <form
        class={`composer-box${dropping ? " is-dropping" : ""}`}
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
        onDragOver={(e) => {
          if (!takesFiles || !e.dataTransfer?.types.includes("Files")) return;
          e.preventDefault();
          setDropping(true);
        }}
        onDragLeave={() => setDropping(false)}
        onDrop={(e) => {
          setDropping(false);
          if (!takesFiles || !e.dataTransfer?.files.length) return;
          e.preventDefault();
          files.add(Array.from(e.dataTransfer.files));
        }}
      >
        {hasFiles && (
          <ul class="composer-files" aria-label={t.attachments.list}>
            {files.files.map((f) => (
              <li key={f.id} class="file-chip">
                {f.preview && <img src={f.preview} alt="" />}
                <span class="file-chip-name">{f.name}</span>
                <span class="file-chip-size">{formatSize(f.size)}</span>
                <button type="button" class="file-chip-remove" aria-label={fmt(t.attachments.remove, { name: f.name })} title={fmt(t.attachments.remove, { name: f.name })} onClick={() => files.remove(f.id)}>
                  ×
                </button>
              </li>
            ))}
          </ul>
        )}
        <label class="sr-only" for="composer-input">
          {t.shell.messageLabel}
        </label>
        <textarea
          id="composer-input"
          ref={ref}
          rows={1}
          value={value}
          maxLength={MESSAGE_FIELD_MAX_LENGTH}
          disabled={inputLocked}
          placeholder={props.placeholder ?? t.shell.placeholderHome}
          aria-describedby={reason ? "composer-reason" : undefined}
          onInput={(e) => props.onChange((e.currentTarget as HTMLTextAreaElement).value)}
          onPaste={(e) => {
            const pasted = e.clipboardData?.files;
            if (!takesFiles || !pasted?.length) return;
            e.preventDefault();
            files.add(Array.from(pasted));
          }}
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
          <div class="composer-footer-start">
            {props.footerStart}
          </div>
          <div class="composer-footer-end">
            {files && (
              <>
                {props.extra}
                <button type="button" class="icon-button attach" aria-label={t.shell.attachFiles} title={t.shell.attachFilesTitle} disabled={inputLocked} onClick={() => fileInput.current?.click()}>
                  <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
                    <path d="M16.5 6.5 8.6 14.4a2 2 0 0 0 2.8 2.8l7.9-7.9a4 4 0 0 0-5.7-5.7l-8 8a6 6 0 0 0 8.5 8.5l6.4-6.4" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" />
                  </svg>
                </button>
                <input
                  ref={fileInput}
                  type="file"
                  multiple
                  hidden
                  tabIndex={-1}
                  aria-label={t.shell.attachFiles}
                  data-testid="attach-input"
                  onChange={(e) => {
                    const input = e.currentTarget as HTMLInputElement;
                    if (input.files?.length) files.add(Array.from(input.files));
                    input.value = "";
                  }}
                />
              </>
            )}
            {near && (
              <span class={`char-count${over ? " over" : ""}`} aria-live="polite">
                {fmt(t.composer.charCount, { count: chars, max: MAX_MESSAGE_CHARS })}
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
                disabled={inputLocked || empty || over}
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
