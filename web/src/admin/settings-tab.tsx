// The admin page's Settings tab (docs/runtime.md "Settings"): the system settings with what
// applies where none is set (the deployment's value), saved whole (the server refuses a bad
// value and changes nothing), each returnable to its default. A chunk of its own; its strings
// are in i18n/admin-settings.ts. The form's logic is settings-data.ts'.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { useShell } from "../shell/context";
import { describeError, fmt, formatNumber } from "../i18n";
import { tset } from "../i18n/admin-settings";
import { loadModels, type ModelOption } from "../chat/models";
import { draftOf, patchOf, settingsApi, type Draft, type SettingKey, type SettingsView } from "./settings-data";

const MAX_INSTRUCTIONS = 32 * 1024;
const bytes = (s: string) => new TextEncoder().encode(s).length;
const textOf = (e: Event) => (e.currentTarget as HTMLInputElement).value;

export function SettingsTab() {
  const shell = useShell();
  const s = tset();
  const [view, setView] = useState<SettingsView | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [models, setModels] = useState<ModelOption[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const show = (v: SettingsView) => {
    setView(v);
    setDraft(draftOf(v));
  };
  useEffect(() => {
    settingsApi.get().then(show, (err) => setError(fmt(s.loadFailed, { error: describeError(err) })));
    loadModels().then(setModels, () => {});
  }, []);
  if (!view || !draft) return error ? <p class="form-error" role="alert">{error}</p> : <p class="muted">{s.loading}</p>;

  const set = <K extends keyof Draft>(key: K, value: Draft[K]) => setDraft({ ...draft, [key]: value });
  const run = async (patch: Record<string, unknown>, done: string) => {
    setBusy(true);
    setError(null);
    try {
      show(await settingsApi.patch(patch));
      shell.toast(done, "info");
    } catch (err) {
      setError(fmt(s.saveFailed, { error: describeError(err) }));
    } finally {
      setBusy(false);
    }
  };
  const save = (e: Event) => {
    e.preventDefault();
    const result = patchOf(view, draft);
    if ("error" in result) return setError(result.error === "tokens" ? s.badTokens : fmt(s.badApprovals, { line: result.line }));
    if (Object.keys(result.patch).length === 0) return shell.toast(s.saved, "info");
    void run(result.patch, s.saved);
  };
  const field = (key: SettingKey, control: ComponentChildren, shown: string) => (
    <Setting key={key} name={key} view={view} busy={busy} shown={shown} onReset={() => void run({ [key]: null }, fmt(s.resetDone, { name: s.labels[key] }))}>
      {control}
    </Setting>
  );
  const b = view.bootstrap;
  const list = (items: string[] | null) => (items && items.length ? items.join(", ") : s.none);
  return (
    <form class="admin-settings panel-form" onSubmit={save}>
      <p class="muted">{s.intro}</p>
      {field(
        "instructions",
        <>
          <textarea id="setting-instructions" rows={10} value={draft.instructions} onInput={(e) => set("instructions", textOf(e))} />
          <span class={`muted${bytes(draft.instructions) > MAX_INSTRUCTIONS ? " form-error" : ""}`}>{fmt(s.bytes, { used: formatNumber(bytes(draft.instructions)), max: formatNumber(MAX_INSTRUCTIONS) })}</span>
        </>,
        s.isDefault,
      )}
      {field(
        "defaultModel",
        <select id="setting-defaultModel" value={draft.defaultModel} onChange={(e) => set("defaultModel", textOf(e))}>
          <option value="">{s.firstModel}</option>
          {models.map((m) => (
            <option key={m.id} value={m.id}>
              {m.label} ({m.id})
            </option>
          ))}
        </select>,
        b.defaultModel ?? s.none,
      )}
      {field(
        "toolDisplay",
        <select id="setting-toolDisplay" value={draft.toolDisplay} onChange={(e) => set("toolDisplay", textOf(e) as Draft["toolDisplay"])}>
          <option value="collapsed">{s.collapsed}</option>
          <option value="full">{s.full}</option>
        </select>,
        b.toolDisplay === "full" ? s.full : s.collapsed,
      )}
      {field(
        "logModelRequests",
        <input type="checkbox" id="setting-logModelRequests" checked={draft.logModelRequests} onChange={(e) => set("logModelRequests", (e.currentTarget as HTMLInputElement).checked)} />,
        b.logModelRequests ? s.on : s.off,
      )}
      {field("signupDomains", <input id="setting-signupDomains" value={draft.signupDomains} onInput={(e) => set("signupDomains", textOf(e))} />, list(b.signupDomains))}
      {field(
        "defaultTokensPerDay",
        <input id="setting-defaultTokensPerDay" inputMode="numeric" value={draft.defaultTokensPerDay} onInput={(e) => set("defaultTokensPerDay", textOf(e))} />,
        b.defaultTokensPerDay ? formatNumber(b.defaultTokensPerDay) : s.noLimit,
      )}
      {field("toolApprovals", <textarea id="setting-toolApprovals" rows={3} value={draft.toolApprovals} onInput={(e) => set("toolApprovals", textOf(e))} />, Object.keys(b.toolApprovals ?? {}).length ? Object.entries(b.toolApprovals ?? {}).map(([k, v]) => `${k} = ${v}`).join(", ") : s.none)}
      {field("outboundAllowedHosts", <input id="setting-outboundAllowedHosts" value={draft.outboundAllowedHosts} onInput={(e) => set("outboundAllowedHosts", textOf(e))} />, list(b.outboundAllowedHosts))}
      <p class="form-error" role="alert">
        {error ?? ""}
      </p>
      <div class="dialog-actions">
        <button type="submit" class="button primary settings-save" disabled={busy}>
          {busy ? s.saving : s.save}
        </button>
      </div>
    </form>
  );
}

/** One setting: its label and hint, the control, whether it is set here, and its default. */
function Setting(props: { name: SettingKey; view: SettingsView; busy: boolean; shown: string; onReset(): void; children: ComponentChildren }) {
  const s = tset();
  const isSet = props.view.settings[props.name] !== null && props.view.settings[props.name] !== undefined;
  const showDefault = props.name !== "instructions";
  return (
    <div class="field setting" data-setting={props.name} data-set={isSet ? "true" : "false"}>
      <label for={`setting-${props.name}`}>{s.labels[props.name]}</label>
      {props.children}
      <span class="hint muted">{s.hints[props.name]}</span>
      <span class="setting-state muted">
        {isSet ? s.isSet : s.isDefault}
        {showDefault && ` · ${fmt(s.defaultIs, { value: props.shown })}`}
      </span>
      {isSet && (
        <button type="button" class="button small setting-reset" disabled={props.busy} onClick={props.onReset}>
          {s.reset}
        </button>
      )}
    </div>
  );
}
