// The transcript: user bubbles, streamed assistant Markdown, collapsible reasoning, grouped tool
// calls, authorization cards, and the "Thinking..." presence row that fades out.
import { useMemo, useState } from "preact/hooks";
import type { AssistantPart, PendingAuthorization, RenderItem, ToolCall } from "../events";
import { renderMarkdown } from "../markdown";

export interface TranscriptProps {
  items: RenderItem[];
  optimistic: string | null;
  thinking: boolean;
  onConnect(auth: PendingAuthorization): void;
  onSkip(auth: PendingAuthorization): void;
  onAnswer(requestId: string, value: string): void;
  authBusy: boolean;
}

export function Transcript(props: TranscriptProps) {
  return (
    <div class="messages" role="log" aria-live="polite" aria-relevant="additions">
      {props.items.map((item) => {
        switch (item.kind) {
          case "user":
            return <UserBubble key={item.key} text={item.text} />;
          case "assistant":
            return <AssistantMessage key={item.key} parts={item.parts} />;
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
            return (
              <section key={item.key} class="input-card" aria-label="The agent asks">
                <div class="input-card-prompt">{item.prompt}</div>
                {item.open && item.options.length > 0 && (
                  <div class="input-card-options">
                    {item.options.map((o) => (
                      <button type="button" class="button small" key={o} onClick={() => props.onAnswer(item.requestId, o)}>
                        {o}
                      </button>
                    ))}
                  </div>
                )}
              </section>
            );
          case "notice":
            return (
              <div key={item.key} class={`notice ${item.tone}`} role={item.tone === "error" ? "alert" : "status"}>
                {item.text}
              </div>
            );
        }
      })}
      {props.optimistic !== null && <UserBubble key="optimistic" text={props.optimistic} pending />}
      <div class={`thinking-row${props.thinking ? " visible" : ""}`} aria-hidden={!props.thinking}>
        <span class="shimmer">Thinking...</span>
      </div>
    </div>
  );
}

function UserBubble({ text, pending }: { text: string; pending?: boolean }) {
  return (
    <div class={`message user${pending ? " pending" : ""}`} data-role="user">
      <div class="bubble">{text}</div>
    </div>
  );
}

function AssistantMessage({ parts }: { parts: AssistantPart[] }) {
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

function MarkdownBlock({ text }: { text: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  return <div class="markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}

function Reasoning({ text, done }: { text: string; done: boolean }) {
  return (
    <details class="reasoning">
      <summary>{done ? "Thought process" : <span class="shimmer">Thinking...</span>}</summary>
      <div class="reasoning-text">{text}</div>
    </details>
  );
}

function toolLabel(call: ToolCall): string {
  return call.name.replace(/[_-]+/g, " ");
}

function ToolGroup({ calls }: { calls: ToolCall[] }) {
  const [open, setOpen] = useState(false);
  const running = calls.some((c) => c.status === "running");
  const waiting = calls.some((c) => c.status === "waiting");
  const declined = calls.some((c) => c.status === "declined");
  const interrupted = calls.some((c) => c.status === "interrupted");
  const failed = calls.some((c) => c.status === "error");
  const hasDetail = calls.some((c) => c.input || c.output !== undefined);
  const names = [...new Set(calls.map(toolLabel))].join(", ");
  const what = calls.length === 1 ? names : `${calls.length} tools: ${names}`;
  const asking = calls.some((c) => c.status === "asking");
  const status = running ? "running" : waiting ? "waiting" : asking ? "asking" : interrupted ? "interrupted" : declined ? "declined" : "done";
  const summary = {
    running: `Running ${names}…`,
    waiting: `Waiting for authorization: ${names}`,
    asking: `Waiting for your answer: ${names}`,
    interrupted: `Interrupted ${what}`,
    declined: `Not connected: ${names}`,
    done: `Used ${what}`,
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
      {open && (
        <ul class="tool-details">
          {calls.map((c) => (
            <li key={c.id}>
              <div class="tool-name">
                {toolLabel(c)} <span class={`tool-status ${c.status}`}>{c.status}</span>
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

function prettyJson(v: unknown): string {
  try {
    const parsed = typeof v === "string" ? JSON.parse(v) : v;
    return JSON.stringify(parsed, null, 2);
  } catch {
    return String(v);
  }
}

function AuthorizationCard(props: {
  auth: PendingAuthorization;
  outcome: "pending" | "granted" | "declined";
  busy: boolean;
  onConnect(auth: PendingAuthorization): void;
  onSkip(auth: PendingAuthorization): void;
}) {
  const { auth, outcome } = props;
  return (
    <section class={`auth-card ${outcome}`} aria-label={`Authorization for ${auth.displayName}`} data-connection={auth.connection}>
      <div class="auth-card-text">
        <div class="auth-card-title">{auth.displayName}</div>
        {auth.description && <div class="auth-card-description">{auth.description}</div>}
      </div>
      {outcome === "pending" ? (
        <div class="auth-card-actions">
          <button type="button" class="button primary" disabled={!auth.connectUrl || props.busy} title={auth.connectUrl ? `Connect ${auth.displayName}` : "No connect link was provided"} onClick={() => props.onConnect(auth)}>
            Connect
          </button>
          <button type="button" class="button" disabled={props.busy} onClick={() => props.onSkip(auth)}>
            Skip
          </button>
        </div>
      ) : (
        <div class="auth-card-outcome">{outcome === "granted" ? "Connected" : "Skipped"}</div>
      )}
    </section>
  );
}
