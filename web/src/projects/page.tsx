// The project page (`/project/:id`, issue 21, docs/projects.md): name (rename), delete,
// instructions, a new chat in the project, its chats, and its files — list with type, size,
// preview and source; upload by the paperclip, drag-and-drop and paste; download, mark final,
// delete. `FilesPanel` is also the files drawer of a project's chat, and `ProjectFilePicker` its
// composer's picker of project files. A chunk of its own.
import { useEffect, useRef, useState } from "preact/hooks";
import { useShell } from "../shell/context";
import { describeError, fmt, formatBytes, formatSize, plural, t } from "../i18n";
import { projectsApi, type Project, type ProjectFile } from "./projects";
import { moveChat } from "./moving";
import { canMarkFinal, filesApi, fileType, pastedName, sourceKey, upsertFile } from "./files";
import type { ChatSummary } from "../api/types";
import { ConfirmDialog, DataTable } from "../ui/widgets";
import { MAX_FILES, type DraftFile, type DraftFiles } from "../chat/attachments";
import { tp } from "../i18n/project-page";

/** The project strings: the catalogue's (shared with the sidebar) and the page's own. */
const s = () => ({ ...t.projects, ...tp() });

export function ProjectPage({ projectId }: { projectId: string }) {
  const shell = useShell();
  const [project, setProject] = useState<Project | null>(() => shell.projects.find((p) => p.id === projectId) ?? null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (!shell.viewer) return;
    filesApi.get(projectId).then(
      (r) => {
        setProject(r.project);
        shell.putProject(r.project);
      },
      (err) => setError(err?.status === 404 ? s().notFound : fmt(s().loadFailed, { error: describeError(err) })),
    );
  }, [projectId, shell.viewer]);
  if (error) {
    return (
      <div class="page page-panel project-page">
        <p class="form-error" role="alert">{error}</p>
      </div>
    );
  }
  if (!project) {
    return (
      <div class="page page-panel project-page" aria-busy="true">
        <p class="muted">{t.ui.loading}</p>
      </div>
    );
  }
  const changed = (p: Project) => {
    setProject(p);
    shell.putProject(p);
  };
  return (
    <div class="page page-panel project-page" data-project-id={project.id}>
      <div class="panel wide">
        <ProjectHeader project={project} onChanged={changed} />
        <NewChat project={project} />
        <Instructions project={project} onChanged={changed} />
        <ProjectChats project={project} />
        <FilesPanel projectId={project.id} />
      </div>
    </div>
  );
}

function ProjectHeader({ project, onChanged }: { project: Project; onChanged(p: Project): void }) {
  const shell = useShell();
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(project.name);
  const [confirm, setConfirm] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const rename = async () => {
    setEditing(false);
    const next = name.trim();
    if (!next || next === project.name) return setName(project.name);
    try {
      onChanged((await filesApi.update(project.id, { name: next })).project);
      shell.toast(s().renamed, "info");
    } catch (err) {
      setName(project.name);
      shell.toast(describeError(err));
    }
  };
  const remove = async () => {
    setBusy(true);
    try {
      await filesApi.remove(project.id);
      setConfirm(false);
      shell.dropProject(project.id);
      shell.toast(fmt(s().deleted, { name: project.name }), "info");
    } catch (err) {
      setError(describeError(err));
      setBusy(false);
    }
  };
  return (
    <div class="project-header">
      {editing ? (
        <input
          id="project-name"
          class="rename-input project-name-input"
          aria-label={s().renameLabel}
          maxLength={200}
          value={name}
          ref={(el) => el?.focus()}
          onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)}
          onBlur={() => void rename()}
          onKeyDown={(e) => {
            if (e.key === "Enter") (e.currentTarget as HTMLInputElement).blur();
            if (e.key === "Escape") {
              setName(project.name);
              setEditing(false);
            }
          }}
        />
      ) : (
        <h1 class="panel-title project-title">{project.name}</h1>
      )}
      <div class="project-actions">
        <button type="button" class="button project-rename" onClick={() => setEditing(true)}>
          {s().rename}
        </button>
        <button type="button" class="button danger project-delete" onClick={() => { setError(null); setConfirm(true); }}>
          {s().delete}
        </button>
      </div>
      {confirm && (
        <ConfirmDialog
          title={fmt(s().deleteTitle, { name: project.name })}
          body={s().deleteBody}
          confirmLabel={s().delete}
          typed={project.name}
          typedLabel={s().renameLabel}
          danger
          busy={busy}
          error={error}
          onConfirm={() => void remove()}
          onCancel={() => setConfirm(false)}
        />
      )}
    </div>
  );
}

function NewChat({ project }: { project: Project }) {
  const shell = useShell();
  const [draft, setDraft] = useState("");
  const [creating, setCreating] = useState(false);
  const submit = async (value: string) => {
    const message = value.trim();
    if (!message || creating) return;
    if (!shell.viewer) return shell.requestSignIn(message);
    setCreating(true);
    try {
      const { chat } = await projectsApi.createChat(project.id, message);
      shell.setChatProject(chat.id, project.id);
      shell.touchChat(chat);
      shell.runtimes.get(chat.id).primeFromCreate(message);
      shell.navigate(`/chat/${chat.id}`);
    } catch (err) {
      shell.toast(describeError(err));
      setCreating(false);
    }
  };
  return (
    <section class="panel-section project-new-chat" aria-label={s().newChat}>
      <form
        class="panel-form new-chat-form"
        onSubmit={(e) => {
          e.preventDefault();
          void submit(draft);
        }}
      >
        <textarea
          id="project-chat-input"
          rows={2}
          aria-label={s().newChat}
          placeholder={fmt(s().composerPlaceholder, { name: project.name })}
          value={draft}
          onInput={(e) => setDraft((e.currentTarget as HTMLTextAreaElement).value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
              e.preventDefault();
              void submit(draft);
            }
          }}
        />
        <div class="dialog-actions">
          <button type="submit" class="button primary" disabled={creating || !draft.trim()}>
            {s().newChat}
          </button>
        </div>
      </form>
    </section>
  );
}

function Instructions({ project, onChanged }: { project: Project; onChanged(p: Project): void }) {
  const [text, setText] = useState(project.instructions);
  const [state, setState] = useState<"idle" | "saving" | "saved">("idle");
  const [error, setError] = useState<string | null>(null);
  const save = async (e: Event) => {
    e.preventDefault();
    setState("saving");
    setError(null);
    try {
      const p = (await filesApi.update(project.id, { instructions: text })).project;
      onChanged(p);
      setText(p.instructions);
      setState("saved");
    } catch (err) {
      setError(describeError(err));
      setState("idle");
    }
  };
  return (
    <section class="panel-section project-instructions" aria-labelledby="instructions-heading">
      <h2 id="instructions-heading">{s().instructions}</h2>
      <form class="panel-form instructions-form" onSubmit={save}>
        <p class="muted">{s().instructionsHint}</p>
        <textarea
          id="project-instructions"
          aria-labelledby="instructions-heading"
          rows={5}
          maxLength={8000}
          placeholder={s().instructionsPlaceholder}
          value={text}
          onInput={(e) => {
            setText((e.currentTarget as HTMLTextAreaElement).value);
            setState("idle");
          }}
        />
        <p class="form-error" role="alert">{error ?? ""}</p>
        <div class="dialog-actions">
          {state === "saved" && <span class="form-ok">{s().saved}</span>}
          <button type="submit" class="button primary" disabled={state === "saving" || text === project.instructions}>
            {state === "saving" ? s().saving : s().save}
          </button>
        </div>
      </form>
    </section>
  );
}

function ProjectChats({ project }: { project: Project }) {
  const shell = useShell();
  const [loaded, setLoaded] = useState<ChatSummary[] | null>(null);
  useEffect(() => {
    projectsApi.chats(project.id).then(
      (page) => {
        shell.knowChats(project.id, page.chats.map((c) => c.id));
        setLoaded(page.chats);
      },
      () => setLoaded([]),
    );
  }, [project.id]);
  if (!loaded) return null;
  const chats = [...loaded, ...shell.chats.filter((c) => !loaded.some((l) => l.id === c.id))].filter((c) => shell.chatProject[c.id] === project.id);
  return (
    <section class="panel-section project-chat-list" aria-labelledby="project-chats-heading">
      <h2 id="project-chats-heading">{s().chats}</h2>
      {chats.length === 0 ? (
        <p class="muted">{s().noChats}</p>
      ) : (
        <ul class="link-list">
          {chats.map((c) => (
            <li key={c.id} data-chat-id={c.id}>
              <a
                href={`/chat/${c.id}`}
                onClick={(e) => {
                  e.preventDefault();
                  shell.navigate(`/chat/${c.id}`);
                }}
              >
                {shell.chats.find((x) => x.id === c.id)?.title ?? c.title}
              </a>
              <button type="button" class="link-button move-out" onClick={() => void moveChat(shell, c, null)}>
                {s().moveOut}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

// ---- files -------------------------------------------------------------------------------

/**
 * A project's files. `refreshKey` changes when a turn of a chat in the project completed a file
 * write: the list is read again, so the agent's file appears without a reload.
 */
export function FilesPanel({ projectId, refreshKey = 0, title }: { projectId: string; refreshKey?: number; title?: string }) {
  const shell = useShell();
  const [files, setFiles] = useState<ProjectFile[] | null>(null);
  const [dragging, setDragging] = useState(false);
  const [busy, setBusy] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<ProjectFile | null>(null);
  const picker = useRef<HTMLInputElement>(null);
  const reload = () =>
    filesApi.files(projectId).then(
      (r) => setFiles(r.files),
      (err) => shell.toast(fmt(s().loadFailed, { error: describeError(err) })),
    );
  useEffect(() => void reload(), [projectId, refreshKey]);

  const upload = async (list: File[]) => {
    for (const file of list) {
      setBusy(fmt(s().uploading, { name: file.name }));
      try {
        const { file: stored } = await filesApi.upload(projectId, file);
        setFiles((fs) => upsertFile(fs ?? [], stored));
        shell.toast(fmt(s().uploaded, { name: stored.name }), "info");
      } catch (err) {
        shell.toast(fmt(s().uploadFailed, { name: file.name, error: describeError(err) }));
      }
    }
    setBusy(null);
  };
  const onPaste = (e: ClipboardEvent) => {
    const pasted = [...(e.clipboardData?.files ?? [])];
    if (!pasted.length) return;
    e.preventDefault();
    const now = Date.now();
    void upload(pasted.map((f) => (f.name && f.name !== "image.png" ? f : new File([f], pastedName(f.type, now), { type: f.type }))));
  };
  // Paste anywhere on the page (not into a text field) adds the pasted files.
  useEffect(() => {
    const onDocPaste = (e: ClipboardEvent) => {
      const target = e.target as HTMLElement | null;
      if (target?.closest("input, textarea, [contenteditable]")) return;
      onPaste(e);
    };
    document.addEventListener("paste", onDocPaste);
    return () => document.removeEventListener("paste", onDocPaste);
  }, [projectId]);

  const markFinal = async (f: ProjectFile) => {
    try {
      const { file } = await filesApi.markFinal(projectId, f.id);
      setFiles((fs) => upsertFile(fs ?? [], file));
      shell.toast(fmt(s().markedFinal, { name: file.name }), "info");
    } catch (err) {
      shell.toast(describeError(err));
    }
  };
  const remove = async (f: ProjectFile) => {
    setConfirm(null);
    try {
      await filesApi.removeFile(projectId, f.id);
      setFiles((fs) => (fs ?? []).filter((x) => x.id !== f.id));
      shell.toast(fmt(s().fileDeleted, { name: f.name }), "info");
    } catch (err) {
      shell.toast(describeError(err));
    }
  };

  return (
    <section
      class={`panel-section project-files${dragging ? " dragging" : ""}`}
      aria-labelledby="files-heading"
      onDragOver={(e) => {
        if (!e.dataTransfer?.types.includes("Files")) return;
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={(e) => {
        if (!(e.currentTarget as HTMLElement).contains(e.relatedTarget as Node | null)) setDragging(false);
      }}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        void upload([...(e.dataTransfer?.files ?? [])]);
      }}
      onPaste={onPaste}
    >
      <div class="files-heading-row">
        <h2 id="files-heading">{title ?? s().files}</h2>
        <button type="button" class="icon-button ghost attach-button files-upload" aria-label={s().upload} title={s().upload} onClick={() => picker.current?.click()}>
          <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
            <path d="M16.5 6.5 8.6 14.4a2 2 0 0 0 2.8 2.8l7.9-7.9a4 4 0 0 0-5.7-5.7l-8 8a6 6 0 0 0 8.5 8.5l6.4-6.4" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" />
          </svg>
        </button>
        <input
          ref={picker}
          type="file"
          multiple
          class="sr-only"
          id="project-file-input"
          tabIndex={-1}
          onChange={(e) => {
            const input = e.currentTarget as HTMLInputElement;
            const chosen = [...(input.files ?? [])];
            input.value = "";
            void upload(chosen);
          }}
        />
      </div>
      {busy && <p class="muted files-busy" role="status">{busy}</p>}
      {dragging && <p class="drop-hint">{s().dropHere}</p>}
      {files && files.length === 0 && <p class="muted files-empty">{s().noFiles}</p>}
      {files && files.length > 0 && <FileTable files={files} onFinal={(f) => void markFinal(f)} onDelete={setConfirm} />}
      {confirm && (
        <ConfirmDialog
          title={fmt(s().deleteFileTitle, { name: confirm.name })}
          body={s().deleteFileBody}
          confirmLabel={s().deleteFile}
          danger
          onConfirm={() => void remove(confirm)}
          onCancel={() => setConfirm(null)}
        />
      )}
    </section>
  );
}

function FileTable({ files, onFinal, onDelete }: { files: ProjectFile[]; onFinal(f: ProjectFile): void; onDelete(f: ProjectFile): void }) {
  const c = s().columns;
  return (
    <DataTable kind="file-table" columns={[c.preview, c.name, c.type, c.size, c.source, { label: c.actions, hidden: true }]}>
      {files.map((f) => {
        const key = sourceKey(f.source);
        return (
          <tr key={f.id} data-file-id={f.id} data-file-name={f.name} data-source={f.source}>
            <td class="file-preview"><Preview file={f} /></td>
            <td class="file-name">{f.name}</td>
            <td class="file-type" title={f.mediaType}>{fileType(f)}</td>
            <td class="file-size">{formatBytes(f.size)}</td>
            <td>
              <span class={`source-badge ${key}`} title={s().sourceHints[key]}>{s().sources[key]}</span>
            </td>
            <td class="file-actions">
              <a class="button small file-download" href={f.downloadUrl} download={f.name} aria-label={fmt(s().downloadLabel, { name: f.name })}>
                {s().download}
              </a>
              {canMarkFinal(f) && (
                <button type="button" class="button small file-final" onClick={() => onFinal(f)}>
                  {s().markFinal}
                </button>
              )}
              <button type="button" class="button small danger file-delete" aria-label={fmt(s().deleteFileLabel, { name: f.name })} onClick={() => onDelete(f)}>
                {s().deleteFile}
              </button>
            </td>
          </tr>
        );
      })}
    </DataTable>
  );
}

function Preview({ file }: { file: ProjectFile }) {
  const p = file.preview;
  switch (p.kind) {
    case "image":
      return p.thumbnailUrl ? <img class="file-thumb" src={p.thumbnailUrl} alt="" loading="lazy" /> : <span class="muted">{s().noPreview}</span>;
    case "text":
      return <pre class="file-text-preview">{p.text}</pre>;
    case "pdf":
      return <span class="file-pdf">{p.pages > 0 ? plural(s().pdfPages, p.pages) : s().pdfUnknown}</span>;
    default:
      return <span class="muted">{s().noPreview}</span>;
  }
}

/** A chat in a project: the project's name (a link to its page) and its files, which are read
 * again when a turn of this chat completes a file write (the agent's file shows at once). */
export function ProjectBar({ projectId, writes }: { projectId: string; writes: number }) {
  const shell = useShell();
  const project = shell.projects.find((p) => p.id === projectId);
  const [open, setOpen] = useState(false);
  if (!project) return null;
  const href = `/project/${project.id}`;
  return (
    <details class="project-bar" open={open} onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary>
        <span class="project-icon" aria-hidden="true" />
        <a href={href} onClick={(e) => { e.preventDefault(); shell.navigate(href); }}>
          {fmt(s().inProject, { name: project.name })}
        </a>
        <span class="muted"> · {s().files}</span>
      </summary>
      {open && <FilesPanel projectId={project.id} refreshKey={writes} title={fmt(s().filesOf, { name: project.name })} />}
    </details>
  );
}

// ---- a project chat's file picker (docs/projects.md "A message names project files"): next to
// the paperclip, it lists the project's files; a chosen one becomes a chip like an attachment,
// but the message only names it (`projectFileId`): nothing is uploaded again.

/** A project file as a composer chip: named, not read (an image shows its own thumbnail). */
export function draftOf(f: ProjectFile): DraftFile {
  const preview = (f.preview.kind === "image" && f.preview.thumbnailUrl) || undefined;
  return { id: `p-${f.id}`, name: f.name, mediaType: f.mediaType, size: f.size, preview, file: new Blob([]), projectFileId: f.id };
}

export function ProjectFilePicker({ projectId, drafts, disabled }: { projectId: string; drafts: DraftFiles; disabled?: boolean }) {
  const [open, setOpen] = useState(false);
  const [files, setFiles] = useState<ProjectFile[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const root = useRef<HTMLDivElement>(null);
  const { toast } = useShell();
  const s = tp();

  useEffect(() => {
    if (!open) return;
    let live = true;
    setError(null);
    filesApi
      .files(projectId)
      .then((r) => live && setFiles(r.files))
      .catch((err: unknown) => live && setError(describeError(err)));
    const onDoc = (e: MouseEvent) => root.current && !root.current.contains(e.target as Node) && setOpen(false);
    const onKey = (e: KeyboardEvent) => e.key === "Escape" && setOpen(false);
    document.addEventListener("mousedown", onDoc);
    document.addEventListener("keydown", onKey);
    return () => {
      live = false;
      document.removeEventListener("mousedown", onDoc);
      document.removeEventListener("keydown", onKey);
    };
  }, [open, projectId]);

  const chosen = new Set(drafts.files.map((f) => f.projectFileId));
  return (
    <div class="project-picker" ref={root}>
      <button type="button" class="icon-button pick-project-files" aria-haspopup="menu" aria-expanded={open} aria-label={s.pickFiles} title={s.pickFilesTitle} disabled={disabled} onClick={() => setOpen(!open)}>
        <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
          <path d="M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linejoin="round" />
        </svg>
      </button>
      {open && (
        <div class="menu project-file-menu" role="menu" aria-label={s.pickFiles}>
          {error && <p class="menu-item form-error">{error}</p>}
          {!error && files === null && <p class="menu-item muted">{s.pickLoading}</p>}
          {files?.length === 0 && <p class="menu-item muted">{s.pickNone}</p>}
          {files?.map((f) => (
            <button
              key={f.id}
              type="button"
              role="menuitem"
              class="menu-item project-file-option"
              data-file-id={f.id}
              data-file-name={f.name}
              disabled={chosen.has(f.id)}
              title={chosen.has(f.id) ? s.pickAdded : fmt(s.pickOne, { name: f.name })}
              onClick={() => {
                setOpen(false);
                if (drafts.files.length >= MAX_FILES) return toast(fmt(t.attachments.tooMany, { max: MAX_FILES }));
                drafts.put([draftOf(f)]);
              }}
            >
              <span class="file-chip-name">{f.name}</span>
              <span class="muted">{formatSize(f.size)}</span>
            </button>
          ))}
        </div>
      )}
    </div>
  );
}
