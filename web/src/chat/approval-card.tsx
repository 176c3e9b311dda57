// The card of a tool call that waits for the user's approval (issue 23, docs/approvals.md): the
// tool, its input, Approve / Deny with an optional note (the agent reads it in the denial). A
// chunk of its own, loaded when a chat first shows one. Everything it shows comes from the
// session's stream, so after a refresh the same card is back, open or answered.
import { useState } from "preact/hooks";
import { ta } from "../i18n/approval-card";
import type { InputOption, InputView } from "./events";

export interface ApprovalCardProps {
  item: InputView;
  busy: boolean;
  onAnswer(requestId: string, option: InputOption, note?: string): void;
}

export default function ApprovalCard({ item, busy, onAnswer }: ApprovalCardProps) {
  const s = ta();
  const [note, setNote] = useState("");
  const option = (id: string, label: string): InputOption => item.options.find((o) => o.id === id) ?? { id, label };
  const noteId = `approval-note-${item.requestId}`;
  return (
    <section class={`input-card approval-card${item.open ? " open" : ""}`} aria-label={s.title} data-request-id={item.requestId} data-kind="tool-approval">
      <div class="approval-title">{s.title}</div>
      <div class="input-card-prompt">{item.prompt}</div>
      <dl class="approval-facts">
        <dt>{s.tool}</dt>
        <dd class="approval-tool">{item.toolName}</dd>
        {item.toolInput && (
          <>
            <dt>{s.input}</dt>
            <dd>
              <pre class="tool-io approval-input">{item.toolInput}</pre>
            </dd>
          </>
        )}
      </dl>
      {item.open && (
        <>
          <label class="approval-note" for={noteId}>
            {s.note}
          </label>
          <textarea id={noteId} rows={2} value={note} placeholder={s.notePlaceholder} onInput={(e) => setNote((e.target as HTMLTextAreaElement).value)} />
          <div class="input-card-options">
            <button type="button" class="button small primary" disabled={busy} onClick={() => onAnswer(item.requestId, option("approve", s.approve))}>
              {s.approve}
            </button>
            <button type="button" class="button small danger" disabled={busy} onClick={() => onAnswer(item.requestId, option("cancel", s.deny), note.trim() || undefined)}>
              {s.deny}
            </button>
          </div>
        </>
      )}
      {!item.open && item.answer && <div class="input-card-answer">{item.answer}</div>}
    </section>
  );
}
