// The settings page's skills section (issue 22, docs/skills.md): the caller's skills and the
// global ones with the caller's switch on each, an import (a SKILL.md or a zipped skill folder)
// and deleting one's own. A chunk of its own, loaded by the settings page.
import { useEffect, useState } from "preact/hooks";
import { errorFrom, request } from "../api";
import { describeError, fmt } from "../i18n";
import { ts } from "../i18n/skills-page";
import { useShell } from "../shell/context";

/** A skill as `/api/skills` answers it (eve_api::skills::Skill). */
export interface Skill {
  id: string;
  scope: "personal" | "global";
  name: string;
  description: string;
  deferred: boolean;
  enabled: boolean;
  shadowed?: boolean;
  editable: boolean;
}

interface SkillList {
  skills: Skill[];
  canManageGlobal: boolean;
}

/** How a picked file is posted: a zip as its bytes, a markdown file as `skillMd` (named by its
 * file unless it is a SKILL.md, whose name is its frontmatter's). */
export function importRequest(file: { name: string; type: string }, text: string | null, global: boolean): { path: string; body: BodyInit; contentType: string } {
  if (text === null) {
    return { path: global ? "/api/skills?global=true" : "/api/skills", body: file as unknown as Blob, contentType: "application/zip" };
  }
  const stem = file.name.replace(/\.md$/i, "");
  const named = file.name.toLowerCase() === "skill.md" ? {} : { name: stem };
  return { path: "/api/skills", body: JSON.stringify({ skillMd: text, global, ...named }), contentType: "application/json" };
}

export function SkillsSection() {
  const shell = useShell();
  const s = ts();
  const [list, setList] = useState<SkillList | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [global, setGlobal] = useState(false);
  const [busy, setBusy] = useState(false);

  const reload = () =>
    request<SkillList>("GET", "/api/skills").then(
      (r) => setList(r),
      (err) => setError(fmt(s.loadFailed, { error: describeError(err) })),
    );
  useEffect(() => void reload(), []);

  const act = async (work: () => Promise<unknown>, done?: string) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      if (done) shell.toast(done, "info");
      await reload();
    } catch (err) {
      setError(fmt(s.failed, { error: describeError(err) }));
    } finally {
      setBusy(false);
    }
  };

  const pick = async (e: Event) => {
    const input = e.currentTarget as HTMLInputElement;
    const file = input.files?.[0];
    input.value = "";
    if (!file) return;
    const zip = /\.zip$/i.test(file.name) || file.type.includes("zip");
    const post = importRequest(file, zip ? null : await file.text(), global);
    setBusy(true);
    setError(null);
    try {
      const res = await fetch(post.path, {
        method: "POST",
        credentials: "same-origin",
        headers: { accept: "application/json", "content-type": post.contentType },
        body: post.body,
      });
      if (!res.ok) throw await errorFrom(res);
      shell.toast(fmt(s.imported, { name: file.name }), "info");
      await reload();
    } catch (err) {
      setError(fmt(s.importFailed, { name: file.name, error: describeError(err) }));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel-section skills" aria-labelledby="skills-heading">
      <h2 id="skills-heading">{s.title}</h2>
      <p class="muted">{s.intro}</p>
      <div class="panel-form inline-form">
        <label class="button">
          {s.import}
          <input type="file" accept=".md,.zip,text/markdown,application/zip" class="sr-only" disabled={busy} onChange={pick} />
        </label>
        {list?.canManageGlobal && (
          <label>
            <input type="checkbox" checked={global} onChange={(e) => setGlobal((e.currentTarget as HTMLInputElement).checked)} /> {s.importGlobal}
          </label>
        )}
      </div>
      <p class="muted">{s.importHint}</p>
      <p class="form-error" role="alert">
        {error ?? ""}
      </p>
      {!list && !error && <p class="muted">{s.loading}</p>}
      {list && list.skills.length === 0 && <p class="muted">{s.none}</p>}
      {list && list.skills.length > 0 && (
        <div class="table-wrap">
          <table class="data-table skill-table">
            <thead>
              <tr>
                <th scope="col">{s.columns.name}</th>
                <th scope="col">{s.columns.description}</th>
                <th scope="col">{s.columns.scope}</th>
                <th scope="col">{s.columns.enabled}</th>
                <th scope="col">{s.columns.actions}</th>
              </tr>
            </thead>
            <tbody>
              {list.skills.map((k) => (
                <tr key={k.id} data-skill={k.name}>
                  <td>
                    <code>{k.name}</code>
                  </td>
                  <td>
                    {k.description}
                    {k.deferred && <span class="muted"> · {s.deferred}</span>}
                    {k.shadowed && <span class="muted"> · {s.shadowed}</span>}
                  </td>
                  <td>{k.scope === "global" ? s.global : s.personal}</td>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={fmt(s.enable, { name: k.name })}
                      checked={k.enabled}
                      disabled={busy}
                      onChange={(e) => act(() => request("PUT", `/api/skills/${encodeURIComponent(k.id)}/enabled`, { enabled: (e.currentTarget as HTMLInputElement).checked }))}
                    />
                  </td>
                  <td>
                    {k.editable && (
                      <button type="button" class="button" aria-label={fmt(s.deleteLabel, { name: k.name })} disabled={busy} onClick={() => act(() => request("DELETE", `/api/skills/${encodeURIComponent(k.id)}`), fmt(s.deleted, { name: k.name }))}>
                        {s.delete}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
