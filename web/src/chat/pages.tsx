// The two routes. Both render the same composer in different places (root: centred under the
// logo; session: docked at the bottom), and the same outer structure, so that the prerendered
// shell and the early route class put everything where it ends up: no layout shift.
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { api } from "../api";
import { pendingLabel, toFileParts, useDraftFiles, type DraftFiles, type FilePart } from "./attachments";
import { readSavedDraft, saveDraft, setupBlockReason, useRuntime, useShell, type Shell } from "../shell/context";
import { lastUserText, retryableOutcome } from "./actions";
import { branchAt, conversation, cutBefore } from "./branches";
import { MAX_MESSAGE_CHARS, messageChars, type AssistantPart, type AuthorizationView, type RenderItem } from "./events";
import { Composer } from "./composer";
import { Transcript } from "./messages";
import { ModelMenu } from "./model-menu";
import { ConnectionsMenu } from "../shell/overlays";
import { describeError, fmt, t } from "../i18n";
import { lazyPart } from "../ui/lazy";
import type { ProjectChat } from "../projects/projects";
import { completedWrites } from "./file-tools";

const ProjectBar = lazyPart(() => import("../projects/page").then((m) => m.ProjectBar));
const ProjectFilePicker = lazyPart(() => import("../projects/page").then((m) => m.ProjectFilePicker));

/** The file tool calls of a transcript (to notice a completed write). */
function toolCalls(items: RenderItem[]) {
  return items.flatMap((i) => (i.kind === "assistant" ? i.parts.flatMap((p: AssistantPart) => (p.kind === "tools" ? p.calls : [])) : []));
}



/** Checks that gate any send: setup, then sign-in (keeping the draft). */
function gate(shell: Shell, message: string): boolean {
  const blocked = setupBlockReason(shell);
  if (blocked) {
    shell.toast(blocked);
    return false;
  }
  if (!shell.viewer) {
    shell.requestSignIn(message);
    return false;
  }
  if (messageChars(message) > MAX_MESSAGE_CHARS) {
    shell.toast(fmt(t.pages.messageTooLong, { max: MAX_MESSAGE_CHARS }));
    return false;
  }
  return true;
}

/** The composer's files as eve's parts (cleared once read); `null` (toasted) when one is unreadable. */
async function takeFiles(shell: Shell, drafts: DraftFiles): Promise<FilePart[] | null> {
  if (!drafts.files.length) return [];
  try {
    return await toFileParts(drafts.files);
  } catch {
    shell.toast(fmt(t.attachments.unreadable, { name: drafts.files.map((f) => f.name).join(", ") }));
    return null;
  }
}

/** The draft: restored from sessionStorage on mount and after a sign-in. */
function useDraft(resetKey: string) {
  const shell = useShell();
  const [draft, setDraft] = useState("");
  useEffect(() => {
    setDraft(readSavedDraft());
  }, [resetKey, shell.signInCount]);
  return [draft, setDraft] as const;
}

export function HomePage() {
  const shell = useShell();
  const [draft, setDraft] = useDraft("home");
  const [creating, setCreating] = useState(false);
  const blocked = setupBlockReason(shell);
  const drafts = useDraftFiles(shell.toast);

  const submit = async (value: string) => {
    const message = value.trim();
    if ((!message && !drafts.files.length) || creating || !gate(shell, message)) return;
    setCreating(true);
    try {
      const files = await takeFiles(shell, drafts);
      if (!files) {
        setCreating(false);
        return;
      }
      const { chat } = await api.createChat(message || pendingLabel(files));
      saveDraft("");
      drafts.clear();
      shell.touchChat(chat);
      shell.runtimes.get(chat.id).primeFromCreate(message, files);
      shell.navigate(`/chat/${chat.id}`);
    } catch (err) {
      shell.toast(describeError(err));
      setCreating(false);
    }
  };

  return (
    <div class="page page-home">
      <div class="hero">
        <div class="logo" aria-hidden="true">
          eve
        </div>
        <h1 class="hero-title">{t.shell.heroTitle}</h1>
      </div>
      <div class="composer-dock">
        <Composer
          value={draft}
          onChange={setDraft}
          onSubmit={submit}
          disabled={!!blocked}
          disabledReason={blocked}
          preparing={creating}
          files={drafts}
          footerStart={
            <>
              <ConnectionsMenu />
              <ModelMenu chatId={null} />
            </>
          }
        />
        {shell.setup && !shell.setup.appReady && (
          <div class="setup-panel" role="status">
            <strong>{t.pages.setupNeededTitle}</strong> {shell.setup.missing.length ? fmt(t.pages.setupMissing, { missing: shell.setup.missing.join("; ") }) : t.pages.setupNotConfigured}
          </div>
        )}
      </div>
      <footer class="home-footer">{t.shell.homeFooter}</footer>
    </div>
  );
}

/** How near the top of the transcript the reader scrolls before the earlier page is read. */
const EARLIER_MARGIN_PX = 800;

export function SessionPage({ chatId }: { chatId: string }) {
  const shell = useShell();
  const runtime = useMemo(() => shell.runtimes.get(chatId), [chatId, shell.runtimes]);
  const state = useRuntime(runtime)!;
  const [draft, setDraft] = useDraft(chatId);
  const drafts = useDraftFiles(shell.toast);
  const scroller = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  useEffect(() => {
    if (shell.viewer && runtime.getState().phase === "loading") void runtime.load();
  }, [runtime, shell.viewer]);

  // Which branch is shown (null: the latest, where new turns go), and the message being edited.
  const [view, setView] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const conv = useMemo(() => {
    const b = state.branching;
    // An edit on its way: the conversation it continues, cut where it branches.
    return b ? cutBefore(conversation(state.log, b.parent), b.at) : conversation(state.log, view, state.stopped);
  }, [state.log, state.stopped, state.branching, view]);
  const items = conv.items;
  const busy = state.phase === "sending" || state.phase === "streaming" || state.phase === "resuming";
  const last = items[items.length - 1];
  // The presence row shows while busy until the answer's own text is visible (seed ThinkingMessage).
  const answerVisible = state.optimistic === null && last?.kind === "assistant" && last.parts.some((p) => p.kind === "text" && p.text.trim());
  const thinking = busy && !answerVisible;
  const waiting = state.pendingAuthorizations.length > 0;

  const blocked = setupBlockReason(shell);
  const disabledReason = blocked ?? (waiting ? t.pages.authPending : state.phase === "loading" && shell.viewer ? t.pages.loadingChat : null);

  // Stick to the bottom at most once per frame, in the frame's own layout: reading scrollHeight
  // right after each render forced a layout of the whole transcript per streamed delta.
  const scrollFrame = useRef(0);
  useLayoutEffect(() => {
    if (!stick.current || scrollFrame.current) return;
    scrollFrame.current = requestAnimationFrame(() => {
      scrollFrame.current = 0;
      const el = scroller.current;
      if (el && stick.current) el.scrollTop = el.scrollHeight;
    });
  }, [items, state.optimistic, thinking]);
  useEffect(() => () => cancelAnimationFrame(scrollFrame.current), []);

  // A long chat opens at its latest window; scrolling near the top prepends the page before it.
  // The distance from the bottom is kept across the prepend, so what the reader looks at stays.
  const fromBottom = useRef<number | null>(null);
  const loadEarlier = () => {
    const el = scroller.current;
    if (!el || !state.hasEarlier || state.loadingEarlier) return;
    fromBottom.current = el.scrollHeight - el.scrollTop;
    void runtime.loadEarlier();
  };
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el || fromBottom.current === null || state.loadingEarlier) return;
    el.scrollTop = el.scrollHeight - fromBottom.current;
    fromBottom.current = null;
  }, [state.offset, state.loadingEarlier]);

  /**
   * The conversation and user message number `at` in it with the whole log read: a branch's cut
   * counts the conversation's user messages from its start (window.ts). Positions counted from
   * the end do not change when earlier pages arrive in front.
   */
  const wholeConversation = async (at: number): Promise<{ conv: typeof conv; at: number }> => {
    if (!runtime.getState().hasEarlier) return { conv, at };
    const fromEnd = conv.userCount - at;
    await runtime.loadAll();
    const whole = conversation(runtime.getState().log, view, runtime.getState().stopped);
    return { conv: whole, at: whole.userCount - fromEnd };
  };

  const submit = async (value: string) => {
    const message = value.trim();
    if ((!message && !drafts.files.length) || !gate(shell, message)) return;
    const files = await takeFiles(shell, drafts);
    if (!files) return;
    const kept = drafts.files;
    setDraft("");
    saveDraft("");
    drafts.clear();
    stick.current = true;
    // An open question that takes free text is answered by the next message typed (eve: a
    // message answers the first open prompt); it is sent as `inputResponses: [{requestId, text}]`.
    if (!conv.latest) {
      // An older branch is shown: the message continues it, on a branch of its own.
      const whole = await wholeConversation(conv.userCount);
      const branch = branchAt(runtime.getState().log, whole.conv, whole.at);
      setView(null);
      const sent = await runtime.send(message, { branch, files });
      if (!sent) restore(message, kept);
      return;
    }
    const question = state.openInputs.find((q) => q.allowFreeform);
    if (question && !busy && !files.length) {
      await runtime.answerInput(question.requestId, { text: message });
      return;
    }
    const sent = await runtime.send(message, { files });
    if (!sent) restore(message, kept);
  };
  // A message that was not sent goes back into the composer, its files too (as they were).
  const restore = (message: string, files: DraftFiles["files"]) => {
    setDraft(message);
    drafts.put(files);
  };

  // Retry sends the latest user message again, as a new message of this chat.
  const outcome = useMemo(() => retryableOutcome(state.log), [state.log]);
  const retryText = outcome ? lastUserText(items) : null;
  const retry =
    outcome && retryText && !disabledReason && conv.latest
      ? {
          outcome,
          run: () => {
            stick.current = true;
            void runtime.send(retryText);
          },
        }
      : null;

  /** Resends user message number `at` of the shown conversation (edited, or as it was) on a new branch. */
  const resend = async (at: number, text: string) => {
    const message = text.trim();
    if (!message || busy || !gate(shell, message)) return;
    const whole = await wholeConversation(at);
    const branch = branchAt(runtime.getState().log, whole.conv, whole.at);
    setEditing(null);
    setView(null);
    stick.current = true;
    void runtime.send(message, { branch });
  };
  const lastUserKey = items.findLast((i) => i.kind === "user")?.key ?? null;
  const branchProps = {
    switchers: conv.switchers,
    editing,
    disabled: busy || !!disabledReason,
    onEdit: setEditing,
    onSend: (key: string, text: string) => {
      const at = conv.positions.get(key);
      if (at !== undefined) void resend(at, text);
    },
    onSwitch: (target: string) => {
      setEditing(null);
      setView(target);
    },
    onRegenerate: () => {
      const last = items.findLast((i) => i.kind === "user");
      const at = last ? conv.positions.get(last.key) : undefined;
      if (last?.kind === "user" && at !== undefined) void resend(at, last.text);
    },
  };

  const onConnect = (auth: AuthorizationView) => {
    if (auth.connectUrl) window.open(auth.connectUrl, "_blank", "noopener,noreferrer");
    runtime.watchAfterConnect();
  };

  const summary = shell.chats.find((c) => c.id === chatId) as ProjectChat | undefined;
  const projectId = shell.chatProject[chatId] !== undefined ? shell.chatProject[chatId] : summary?.projectId ?? null;
  const writes = projectId ? completedWrites(toolCalls(items)) : 0;
  return (
    <div class="page page-chat">
      {projectId && <ProjectBar projectId={projectId} writes={writes} />}
      <div
        class="transcript"
        ref={scroller}
        onScroll={(e) => {
          const el = e.currentTarget as HTMLDivElement;
          stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
          if (el.scrollTop < EARLIER_MARGIN_PX) loadEarlier();
        }}
      >
        {state.hasEarlier && !state.loadError && (
          <div class="transcript-earlier">
            <button type="button" class="button" disabled={state.loadingEarlier} onClick={loadEarlier} aria-busy={state.loadingEarlier}>
              {state.loadingEarlier ? t.pages.loadingEarlier : t.pages.earlierMessages}
            </button>
          </div>
        )}
        {state.loadError ? (
          <div class="empty-state" role="alert">
            <p>{state.loadError}</p>
            <a href="/" class="button" onClick={(e) => { e.preventDefault(); shell.navigate("/"); }}>
              {t.app.startNewChat}
            </a>
          </div>
        ) : (
          <Transcript
            items={items}
            optimistic={state.optimistic}
            thinking={thinking}
            onConnect={onConnect}
            onSkip={(auth) => void runtime.skipAuthorization(auth)}
            onAnswer={(requestId, option, note) => void runtime.answerInput(requestId, { optionId: option.id, label: option.label, text: note })}
            authBusy={state.phase === "sending"}
            busy={busy}
            retry={retry}
            branch={branchProps}
            onError={(m) => shell.toast(m)}
          />
        )}
      </div>
      <div class="composer-dock">
        <Composer
          value={draft}
          onChange={setDraft}
          onSubmit={submit}
          onStop={() => runtime.stop()}
          busy={busy}
          preparing={false}
          disabled={!!disabledReason}
          disabledReason={disabledReason}
          placeholder={t.pages.placeholderChat}
          files={drafts}
          extra={projectId && <ProjectFilePicker projectId={projectId} drafts={drafts} disabled={!!disabledReason} />}
          onArrowUpEmpty={lastUserKey && !busy ? () => setEditing(lastUserKey) : undefined}
          footerStart={
            <>
              <ConnectionsMenu />
              <ModelMenu chatId={chatId} />
            </>
          }
        />
      </div>
    </div>
  );
}

export function NotFoundPage() {
  const shell = useShell();
  return (
    <div class="page page-home">
      <div class="empty-state not-found">
        <h1>{t.shell.notFound}</h1>
        <p class="not-found-body">{t.shell.notFoundBody}</p>
        <a href="/" class="button" onClick={(e) => { e.preventDefault(); shell.navigate("/"); }}>
          {t.shell.goToNewChat}
        </a>
      </div>
    </div>
  );
}
