// The transcript: user bubbles (with attachments), streamed assistant Markdown, collapsible
// reasoning, grouped tool calls, sign-in cards, questions, notices, and the "Thinking..."
// presence row that fades out. Everything comes from eve events through events.renderItems.
import { Component, Fragment } from "preact";
import { useContext, useState } from "preact/hooks";
import type { AssistantPart, AuthorizationView, FileView, InputOption, RenderItem, ToolCall } from "./events";
import { isThumbnailUrl } from "./attachments";
import { MarkdownBlock } from "../markdown/view";
import type { Switcher } from "./branches";
import { CopyAnswer, EditMessage, RegenerateAnswer, RetryTurn, UserActions } from "./answer-actions";
import { type TurnUsage } from "./usage";
import { fmt, formatBytes, formatNumber, formatSize, plural, t } from "../i18n";
import type { FileToolView } from "./file-tools";
import { ShellContext } from "../shell/context";
import { lazyPart } from "../ui/lazy";
import type { ApprovalCardProps } from "./approval-card";

/** A tool call waiting for approval: a chunk of its own, loaded when a chat first shows one. */
const ApprovalCard = lazyPart<ApprovalCardProps>(() => import("./approval-card").then((m) => m.default));

export interface TranscriptProps {
  items: RenderItem[];
  optimistic: string | null;
  thinking: boolean;
  onConnect(auth: AuthorizationView): void;
  onSkip(auth: AuthorizationView): void;
  /** `note`: what the person wrote with a denial (an approval card's Deny). */
  onAnswer(requestId: string, option: InputOption, note?: string): void;
  authBusy: boolean;
  /** The chat is running a turn: the answer still streaming gets no actions yet. */
  busy?: boolean;
  /** The latest turn failed or was stopped: Retry sends its message again. */
  retry?: { outcome: "failed" | "cancelled"; run(): void } | null;
  onError?(message: string): void;
  /** Edit and resend, regenerate, and the ‹ i/n › switchers of a chat's branches. */
  branch?: BranchProps;
}

export interface BranchProps {
  switchers: Map<string, Switcher>;
  /** The user message being edited (its key), if any. */
  editing: string | null;
  disabled: boolean;
  onEdit(key: string | null): void;
  onSend(key: string, text: string): void;
  onSwitch(target: string): void;
  onRegenerate(): void;
}

export function Transcript(props: TranscriptProps) {
  const branch = props.branch;
  const lastAssistant = props.items.findLast((i) => i.kind === "assistant")?.key;
  return (
    <div class="messages" role="log" aria-live="polite" aria-relevant="additions">
      {props.items.map((item) => {
        switch (item.kind) {
          case "user":
            if (branch?.editing === item.key) {
              return <EditMessage key={item.key} text={item.text} onSend={(t) => branch.onSend(item.key, t)} onCancel={() => branch.onEdit(null)} />;
            }
            return (
              <Fragment key={item.key}>
                <UserBubble text={item.text} files={item.files} />
                {branch && <UserActions switcher={branch.switchers.get(item.key)} disabled={branch.disabled} onEdit={() => branch.onEdit(item.key)} onSwitch={branch.onSwitch} />}
              </Fragment>
            );
          case "assistant":
            return (
              <Fragment key={item.key}>
                <AssistantMessage parts={item.parts} />
                {!(props.busy && item === props.items[props.items.length - 1]) && (
                  <CopyAnswer item={item} onError={(m) => props.onError?.(m)}>
                    {branch && !branch.disabled && item.key === lastAssistant && <RegenerateAnswer onRegenerate={branch.onRegenerate} />}
                  </CopyAnswer>
                )}
              </Fragment>
            );
          case "usage":
            return <UsageLine key={item.key} usage={item.usage} chat={item.chat} />;
          case "authorization":
            return (
              <AuthorizationCard
                key={item.key}
                auth={item.authorization}
                outcome={item.outcome}
                busy={props.authBusy}
                onConnect={props.onConnect}
                onSkip={props.onSkip}
              />
            );
          case "input":
            if (item.requestKind === "tool-approval") {
              return <ApprovalCard key={item.key} item={item} busy={props.authBusy} onAnswer={props.onAnswer} />;
            }
            return (
              <section key={item.key} class={`input-card${item.open ? " open" : ""}`} aria-label={t.messages.agentAsks} data-request-id={item.requestId}>
                <div class="input-card-prompt">{item.prompt}</div>
                {item.open && item.options.length > 0 && (
                  <div class="input-card-options">
                    {item.options.map((o) => (
                      <button
                        type="button"
                        class={`button small${o.style === "primary" ? " primary" : o.style === "danger" ? " danger" : ""}`}
                        key={o.id}
                        title={o.description}
                        disabled={props.authBusy}
                        onClick={() => props.onAnswer(item.requestId, o)}
                      >
                        {o.label}
                      </button>
                    ))}
                  </div>
                )}
                {item.open && item.allowFreeform && <div class="input-card-hint">{t.messages.orType}</div>}
                {!item.open && item.answer && <div class="input-card-answer">{item.answer}</div>}
              </section>
            );
          case "notice":
            return (
              <div key={item.key} class={`notice ${item.tone}`} role={item.tone === "error" ? "alert" : "status"}>
                {item.id ? t.notices[item.id] : item.text}
              </div>
            );
        }
      })}
      {props.retry && !props.busy && props.optimistic === null && <RetryTurn outcome={props.retry.outcome} onRetry={props.retry.run} />}
      {props.optimistic !== null && <UserBubble key="optimistic" text={props.optimistic} pending />}
      <div class={`thinking-row${props.thinking ? " visible" : ""}`} aria-hidden={!props.thinking}>
        <span class="shimmer">{t.messages.thinking}</span>
      </div>
    </div>
  );
}

interface UserBubbleProps {
  text: string;
  files?: FileView[];
  pending?: boolean;
}

// Messages re-render only when their content changed: while an answer streams, every other
// message of a long transcript is skipped (render items of unchanged segments keep identity).
class UserBubble extends Component<UserBubbleProps> {
  shouldComponentUpdate(next: UserBubbleProps) {
    const p = this.props;
    return p.text !== next.text || p.files !== next.files || p.pending !== next.pending;
  }
  render() {
    return <UserBubbleView {...this.props} />;
  }
}

function UserBubbleView({ text, files, pending }: UserBubbleProps) {
  return (
    <div class={`message user${pending ? " pending" : ""}`} data-role="user">
      {files && files.length > 0 && (
        <ul class="attachments" aria-label={t.messages.attachments}>
          {files.map((f, i) => (
            <li key={i} class="attachment">
              {isThumbnailUrl(f.url) && f.mediaType.startsWith("image/") ? (
                <a href={f.url} target="_blank" rel="noopener" class="attachment-thumb">
                  <img src={f.url} alt={f.filename ?? t.messages.image} loading="lazy" decoding="async" />
                </a>
              ) : null}
              {isThumbnailUrl(f.url) && !f.mediaType.startsWith("image/") ? (
                <a class="attachment-name" href={f.url} download={f.filename ?? true}>
                  {f.filename ?? f.mediaType}
                </a>
              ) : (
                <span class="attachment-name">{f.filename ?? f.mediaType}</span>
              )}
              {f.size !== undefined && <span class="attachment-size">{formatSize(f.size)}</span>}
            </li>
          ))}
        </ul>
      )}
      {text && <div class="bubble">{text}</div>}
    </div>
  );
}

/** Whether two answers show the same thing (the live answer's parts are new objects per delta). */
export function sameParts(a: readonly AssistantPart[], b: readonly AssistantPart[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  return a.every((x, i) => {
    const y = b[i]!;
    if (x.kind === "text") return y.kind === "text" && x.text === y.text;
    if (x.kind === "reasoning") return y.kind === "reasoning" && x.text === y.text && x.done === y.done;
    if (y.kind !== "tools" || x.calls.length !== y.calls.length) return false;
    return x.calls.every((c, j) => {
      const d = y.calls[j]!;
      return c.id === d.id && c.name === d.name && c.input === d.input && c.status === d.status && c.output === d.output;
    });
  });
}

class AssistantMessage extends Component<{ parts: AssistantPart[] }> {
  shouldComponentUpdate(next: { parts: AssistantPart[] }) {
    return !sameParts(this.props.parts, next.parts);
  }
  render() {
    return <AssistantMessageView parts={this.props.parts} />;
  }
}

function AssistantMessageView({ parts }: { parts: AssistantPart[] }) {
  return (
    <div class="message assistant" data-role="assistant">
      {parts.map((part, i) => {
        if (part.kind === "text") return <MarkdownBlock key={i} text={part.text} />;
        if (part.kind === "reasoning") return <Reasoning key={i} text={part.text} done={part.done} />;
        return <ToolGroup key={i} calls={part.calls} />;
      })}
    </div>
  );
}

function Reasoning({ text, done }: { text: string; done: boolean }) {
  return (
    <details class="reasoning">
      <summary>{done ? t.messages.thoughtProcess : <span class="shimmer">{t.messages.thinking}</span>}</summary>
      <div class="reasoning-text">{text}</div>
    </details>
  );
}

function toolLabel(call: ToolCall): string {
  return call.name.replace(/[_-]+/g, " ");
}

function ToolGroup({ calls }: { calls: ToolCall[] }) {
  // The admins' `toolDisplay` setting (read with /api/setup): tool calls start open when "full".
  const full = useContext(ShellContext)?.setup?.toolDisplay === "full";
  const [open, setOpen] = useState(full);
  const running = calls.some((c) => c.status === "running");
  const waiting = calls.some((c) => c.status === "waiting");
  const declined = calls.some((c) => c.status === "declined");
  const interrupted = calls.some((c) => c.status === "interrupted");
  const failed = calls.some((c) => c.status === "error");
  const hasDetail = calls.some((c) => c.input || c.output !== undefined);
  const names = [...new Set(calls.map(toolLabel))].join(", ");
  const m = t.messages;
  const what = calls.length === 1 ? names : fmt(m.toolsCount, { count: calls.length, names });
  const asking = calls.some((c) => c.status === "asking");
  const denied = calls.some((c) => c.status === "denied");
  const status = running ? "running" : waiting ? "waiting" : asking ? "asking" : interrupted ? "interrupted" : declined ? "declined" : denied ? "denied" : "done";
  const summary = {
    running: fmt(m.toolRunning, { names }),
    waiting: fmt(m.toolWaiting, { names }),
    asking: fmt(m.toolAsking, { names }),
    interrupted: fmt(m.toolInterrupted, { what }),
    declined: fmt(m.toolDeclined, { names }),
    denied: fmt(m.toolDenied, { what }),
    done: fmt(m.toolDone, { what }),
  }[status];
  return (
    <div class={`tool-group ${status}${failed ? " failed" : ""}`} data-status={status}>
      <button
        type="button"
        class="tool-summary"
        aria-expanded={open}
        disabled={!hasDetail}
        onClick={() => setOpen(!open)}
      >
        <span class={`tool-dot${running ? " pulse" : ""}`} aria-hidden="true" />
        <span>{summary}</span>
        {hasDetail && <span class="chevron" aria-hidden="true" />}
      </button>
      {calls.some((c) => c.file) && (
        <ul class="file-tools">
          {calls.flatMap((c) => (c.file ? [<FileToolLine key={c.id} file={c.file} status={c.status} />] : []))}
        </ul>
      )}
      {open && (
        <ul class="tool-details">
          {calls.map((c) => (
            <li key={c.id}>
              <div class="tool-name">
                {toolLabel(c)} <span class={`tool-status ${c.status}`}>{m.toolStatus[c.status] ?? c.status}</span>
              </div>
              {c.input && <pre class="tool-io">{prettyJson(c.input)}</pre>}
              {c.output !== undefined && <pre class="tool-io">{prettyJson(c.output)}</pre>}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** A file tool call in one line: the tool, the path, and the size written. */
function FileToolLine({ file, status }: { file: FileToolView; status: string }) {
  const p = t.projects;
  return (
    <li class={`file-tool ${status}`} data-tool={file.tool}>
      <span class="file-tool-name">{p.tools[file.tool]}</span>
      <code class="file-tool-path">{file.path}</code>
      {file.size !== undefined && <span class="file-tool-size">{formatBytes(file.size)}</span>}
    </li>
  );
}

function prettyJson(v: unknown): string {
  try {
    const parsed = typeof v === "string" ? JSON.parse(v) : v;
    return JSON.stringify(parsed, null, 2);
  } catch {
    return String(v);
  }
}

const outcomeText = (o: AuthorizationView["outcome"]): string =>
  ({ pending: "", authorized: t.messages.outcomeAuthorized, declined: t.messages.outcomeDeclined, failed: t.messages.outcomeFailed, "timed-out": t.messages.outcomeTimedOut })[o];

function AuthorizationCard(props: {
  auth: AuthorizationView;
  outcome: AuthorizationView["outcome"];
  busy: boolean;
  onConnect(auth: AuthorizationView): void;
  onSkip(auth: AuthorizationView): void;
}) {
  const { auth, outcome } = props;
  return (
    <section class={`auth-card ${outcome}`} aria-label={fmt(t.messages.authFor, { name: auth.displayName })} data-connection={auth.name}>
      <div class="auth-card-text">
        <div class="auth-card-title">{auth.displayName}</div>
        {auth.description && <div class="auth-card-description">{auth.description}</div>}
        {outcome === "pending" && auth.instructions && <div class="auth-card-description">{auth.instructions}</div>}
        {outcome === "pending" && auth.userCode && <code class="auth-card-code">{auth.userCode}</code>}
      </div>
      {outcome === "pending" ? (
        <div class="auth-card-actions">
          <button type="button" class="button primary" disabled={!auth.connectUrl || props.busy} title={auth.connectUrl ? fmt(t.messages.connectTitle, { name: auth.displayName }) : t.messages.noConnectLink} onClick={() => props.onConnect(auth)}>
            {t.messages.connect}
          </button>
          <button type="button" class="button" disabled={props.busy} onClick={() => props.onSkip(auth)}>
            {t.messages.skip}
          </button>
        </div>
      ) : (
        <div class="auth-card-outcome">{outcomeText(outcome)}</div>
      )}
    </section>
  );
}

/** Tokens of one answer (and, on the latest, of the whole chat); the model on hover. */
function UsageLine({ usage, chat }: { usage: TurnUsage; chat?: TurnUsage }) {
  const total = usage.inputTokens + usage.outputTokens;
  const detail = fmt(t.usage.detail, { input: usage.inputTokens, output: usage.outputTokens });
  return (
    <div class="usage-line" title={usage.model ? `${usage.model} · ${detail}` : detail}>
      <span class="usage-turn">{plural(t.usage.tokens, total)}</span>
      {chat && <span class="usage-chat"> · {fmt(t.usage.chat, { count: formatNumber(chat.inputTokens + chat.outputTokens) })}</span>}
    </div>
  );
}
