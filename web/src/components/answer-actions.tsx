// Actions under the answers: copy a whole answer (its Markdown source), and retry the latest
// user message after its turn failed or was stopped.
import { useEffect, useState } from "preact/hooks";
import { answerText } from "../actions";
import type { RenderItem } from "../events";

// UI strings of the message actions, kept together for the message catalogue.
const TEXT = {
  copy: "Copy",
  copied: "Copied",
  copyLabel: "Copy answer",
  copyFailed: "Copy failed: the browser did not allow the clipboard.",
  retry: "Retry",
  retryFailed: "Retry the failed response",
  retryStopped: "Retry the stopped response",
};

export function CopyAnswer({ item, onError }: { item: Extract<RenderItem, { kind: "assistant" }>; onError(message: string): void }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const t = setTimeout(() => setCopied(false), 1500);
    return () => clearTimeout(t);
  }, [copied]);
  const text = answerText(item);
  if (!text) return null;
  return (
    <div class="message-actions" data-for={item.key}>
      <button
        type="button"
        class="button small ghost copy-answer"
        aria-label={TEXT.copyLabel}
        onClick={() =>
          navigator.clipboard.writeText(text).then(
            () => setCopied(true),
            () => onError(TEXT.copyFailed),
          )
        }
      >
        {copied ? TEXT.copied : TEXT.copy}
      </button>
    </div>
  );
}

export function RetryTurn({ outcome, onRetry }: { outcome: "failed" | "cancelled"; onRetry(): void }) {
  return (
    <div class="message-actions retry-row">
      <button type="button" class="button small retry-turn" title={outcome === "failed" ? TEXT.retryFailed : TEXT.retryStopped} onClick={onRetry}>
        {TEXT.retry}
      </button>
    </div>
  );
}
