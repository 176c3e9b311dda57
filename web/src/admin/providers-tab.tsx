// The admin page's Providers tab (issue 22, docs/runtime.md): the deployment's own models
// (its Spin variables, read-only), and the providers admins add, edit, test and remove — an
// API key is written, never shown; each model has its switch; "Test connection" shows what
// the provider answered. A chunk of its own, loaded when the tab opens.
import { useEffect, useState } from "preact/hooks";
import { useShell } from "../shell/context";
import { describeError, fmt } from "../i18n";
import { tpv } from "../i18n/admin-providers";
import {
  modelsFromText,
  parseMaxTokens,
  PUBLIC_BASE_URL,
  providersApi,
  withEnabled,
  withModel,
  type Provider,
  type ProviderInput,
  type ProviderKind,
  type ProviderList,
  type ProviderTest,
} from "./providers";
import { ConfirmDialog } from "../ui/widgets";
import { leavesOrigin } from "./origin";

const KINDS: ProviderKind[] = ["openai", "anthropic"];
const inputValue = (e: Event) => (e.currentTarget as HTMLInputElement).value;

export function ProvidersTab() {
  const s = tpv();
  const [list, setList] = useState<ProviderList | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [editing, setEditing] = useState<Provider | "new" | null>(null);
  const load = () =>
    providersApi.list().then(setList, (err) => setError(fmt(s.loadFailed, { error: describeError(err) })));
  useEffect(() => void load(), []);
  if (error && !list) return <p class="form-error" role="alert">{error}</p>;
  if (!list) return <p class="muted">{s.loading}</p>;
  const replace = (p: Provider) => setList({ ...list, providers: list.providers.map((x) => (x.id === p.id ? p : x)) });
  const saved = (p: Provider) => {
    setEditing(null);
    void load();
    return p;
  };
  return (
    <div class="admin-providers">
      <p class="muted">{s.intro}</p>
      <section class="panel-section" aria-labelledby="providers-bootstrap">
        <h2 id="providers-bootstrap">{s.bootstrapTitle}</h2>
        <p class="muted">{s.bootstrapHint}</p>
        <ul class="bootstrap-models">
          {list.bootstrap.map((m) => (
            <li key={m.id} data-model={m.id}>
              {m.label} <span class="muted">{m.id}</span>
            </li>
          ))}
        </ul>
      </section>
      <section class="panel-section" aria-labelledby="providers-data">
        <h2 id="providers-data">{s.providersTitle}</h2>
        {!list.secretsKeySet && (
          <p class="notice no-secrets-key" role="note">
            {s.noSecretsKey}
          </p>
        )}
        {list.providers.length === 0 && <p class="muted providers-none">{s.none}</p>}
        {list.providers.map((p) => (
          <ProviderCard key={p.id} provider={p} onChanged={replace} onEdit={() => setEditing(p)} onRemoved={() => void load()} />
        ))}
        {editing === null && (
          <button type="button" class="button primary provider-add" onClick={() => setEditing("new")}>
            {s.add}
          </button>
        )}
        {editing !== null && <ProviderForm provider={editing === "new" ? null : editing} onSaved={saved} onCancel={() => setEditing(null)} />}
      </section>
    </div>
  );
}

function ProviderCard({ provider: p, onChanged, onEdit, onRemoved }: { provider: Provider; onChanged(p: Provider): void; onEdit(): void; onRemoved(): void }) {
  const s = tpv();
  const shell = useShell();
  const [busy, setBusy] = useState(false);
  const [test, setTest] = useState<ProviderTest | "running" | null>(null);
  const [removing, setRemoving] = useState(false);
  const [removeError, setRemoveError] = useState<string | null>(null);
  const change = async (input: ProviderInput) => {
    setBusy(true);
    // A switch shows its new state at once; the server's answer (or the old state) follows.
    if (input.models) onChanged({ ...p, models: input.models });
    try {
      onChanged(await providersApi.update(p.id, input));
    } catch (err) {
      onChanged(p);
      shell.toast(fmt(s.failed, { error: describeError(err) }));
    } finally {
      setBusy(false);
    }
  };
  const runTest = async () => {
    setTest("running");
    try {
      setTest(await providersApi.test(p.id));
    } catch (err) {
      setTest({ ok: false, message: describeError(err) });
    }
  };
  const remove = async () => {
    setBusy(true);
    try {
      await providersApi.remove(p.id);
      setRemoving(false);
      shell.toast(fmt(s.removed, { name: p.name }), "info");
      onRemoved();
    } catch (err) {
      setRemoveError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  const key = p.keyUnreadable ? s.keyUnreadable : p.hasKey ? s.keyStored : s.keyNone;
  return (
    <article class="provider-card" data-provider={p.name} aria-labelledby={`provider-${p.id}`}>
      <h3 id={`provider-${p.id}`}>
        {p.name} <span class="muted">{s.kinds[p.kind]}</span>
      </h3>
      <p class="muted provider-meta">
        <span class="provider-url">{p.baseUrl}</span> · <span class={`provider-key${p.keyUnreadable ? " form-error" : ""}`}>{key}</span>
      </p>
      <fieldset class="model-checks" disabled={busy}>
        <legend class="sr-only">{s.form.models}</legend>
        {p.models.map((m) => (
          <label key={m.model} class="check">
            <input type="checkbox" data-model={m.model} aria-label={fmt(s.enabledLabel, { model: m.model })} checked={m.enabled} onChange={(e) => void change({ models: withEnabled(p.models, m.model, (e.currentTarget as HTMLInputElement).checked) })} />
            {m.label ?? m.model} <span class="muted">{`${p.name}/${m.model}`}</span>
            {m.shadowed && <span class="muted model-shadowed"> · {s.shadowed}</span>}
          </label>
        ))}
      </fieldset>
      <div class="dialog-actions provider-actions">
        <button type="button" class="button small provider-test" aria-label={fmt(s.testLabel, { name: p.name })} disabled={test === "running"} onClick={() => void runTest()}>
          {test === "running" ? s.testing : s.test}
        </button>
        <button type="button" class="button small provider-edit" aria-label={fmt(s.editLabel, { name: p.name })} disabled={busy} onClick={onEdit}>
          {s.edit}
        </button>
        <button type="button" class="button small danger provider-remove" aria-label={fmt(s.removeLabel, { name: p.name })} disabled={busy} onClick={() => { setRemoveError(null); setRemoving(true); }}>
          {s.remove}
        </button>
      </div>
      {test && test !== "running" && <TestResult test={test} provider={p} busy={busy} onAdd={(model) => void change({ models: withModel(p.models, model) })} />}
      {removing && <ConfirmDialog title={fmt(s.removeTitle, { name: p.name })} body={s.removeBody} confirmLabel={s.remove} danger busy={busy} error={removeError} onConfirm={() => void remove()} onCancel={() => setRemoving(false)} />}
    </article>
  );
}

function TestResult({ test, provider, busy, onAdd }: { test: ProviderTest; provider: Provider; busy: boolean; onAdd(model: string): void }) {
  const s = tpv();
  const missing = (test.models ?? []).filter((m) => !provider.models.some((x) => x.model === m));
  return (
    <div class={`provider-test-result ${test.ok ? "ok" : "failed"}`} role="status">
      <p>
        <strong>{test.ok ? s.testOk : s.testFailed}</strong> {test.status !== undefined && <span class="muted">{fmt(s.testStatus, { status: test.status })} </span>}
        <span class="provider-test-message">{test.message}</span>
      </p>
      {missing.length > 0 && (
        <p class="provider-offered">
          {s.offered}{" "}
          {missing.map((m) => (
            <button key={m} type="button" class="button small ghost" data-add-model={m} disabled={busy} onClick={() => onAdd(m)}>
              {fmt(s.addModel, { model: m })}
            </button>
          ))}
        </p>
      )}
    </div>
  );
}

function ProviderForm({ provider, onSaved, onCancel }: { provider: Provider | null; onSaved(p: Provider): void; onCancel(): void }) {
  const s = tpv();
  const f = s.form;
  const shell = useShell();
  const [name, setName] = useState(provider?.name ?? "");
  const [kind, setKind] = useState<ProviderKind>(provider?.kind ?? "openai");
  const [baseUrl, setBaseUrl] = useState(provider?.baseUrl ?? "");
  const [apiKey, setApiKey] = useState("");
  const [removeKey, setRemoveKey] = useState(false);
  const [maxTokens, setMaxTokens] = useState(provider?.maxTokens ? String(provider.maxTokens) : "");
  const [models, setModels] = useState((provider?.models ?? []).map((m) => m.model).join("\n"));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const keyDropped = !!provider?.hasKey && !apiKey.trim() && leavesOrigin(provider.baseUrl, baseUrl.trim() || PUBLIC_BASE_URL[provider.kind]);
  const submit = async (e: Event) => {
    e.preventDefault();
    const max = parseMaxTokens(maxTokens);
    if (max === undefined) return setError(f.badMaxTokens);
    const input: ProviderInput = { baseUrl: baseUrl.trim(), maxTokens: max, models: modelsFromText(models, provider?.models) };
    if (apiKey.trim()) input.apiKey = apiKey.trim();
    else if (removeKey) input.apiKey = null;
    setBusy(true);
    setError(null);
    try {
      const saved = provider ? await providersApi.update(provider.id, input) : await providersApi.create({ ...input, name: name.trim(), kind, baseUrl: baseUrl.trim() || undefined });
      shell.toast(fmt(s.saved, { name: saved.name }), "info");
      onSaved(saved);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel-form provider-form" onSubmit={submit} aria-labelledby="provider-form-title">
      <h3 id="provider-form-title">{provider ? fmt(f.titleEdit, { name: provider.name }) : f.titleNew}</h3>
      <div class="field">
        <label for="provider-name">{f.name}</label>
        <input id="provider-name" required disabled={!!provider} title={f.nameHint} placeholder="my-llm" value={name} onInput={(e) => setName(inputValue(e))} />
      </div>
      <div class="field">
        <label for="provider-kind">{f.kind}</label>
        <select id="provider-kind" disabled={!!provider} value={kind} onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value as ProviderKind)}>
          {KINDS.map((k) => (
            <option key={k} value={k}>
              {s.kinds[k]}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="provider-url">{f.baseUrl}</label>
        <input id="provider-url" type="url" placeholder={f.baseUrlHint} value={baseUrl} onInput={(e) => setBaseUrl(inputValue(e))} />
      </div>
      <div class="field">
        <label for="provider-key">{f.apiKey}</label>
        <input id="provider-key" type="password" autocomplete="off" placeholder={provider?.hasKey && !keyDropped ? f.apiKeyKeep : ""} value={apiKey} onInput={(e) => setApiKey(inputValue(e))} />
        {keyDropped && (
          <p class="field-hint form-error provider-key-dropped" role="status">
            {f.keyDropped}
          </p>
        )}
      </div>
      {provider?.hasKey && (
        <label class="check">
          <input type="checkbox" id="provider-remove-key" checked={removeKey} onChange={(e) => setRemoveKey((e.currentTarget as HTMLInputElement).checked)} />
          {f.removeKey}
        </label>
      )}
      <div class="field">
        <label for="provider-max-tokens">{f.maxTokens}</label>
        <input id="provider-max-tokens" inputMode="numeric" placeholder={f.maxTokensHint} value={maxTokens} onInput={(e) => setMaxTokens(inputValue(e))} />
      </div>
      <div class="field">
        <label for="provider-models">{f.models}</label>
        <textarea id="provider-models" rows={4} placeholder={f.modelsHint} value={models} onInput={(e) => setModels((e.currentTarget as HTMLTextAreaElement).value)} />
      </div>
      <p class="form-error" role="alert">
        {error ?? ""}
      </p>
      <div class="dialog-actions">
        <button type="button" class="button" onClick={onCancel}>
          {f.cancel}
        </button>
        <button type="submit" class="button primary" disabled={busy}>
          {f.save}
        </button>
      </div>
    </form>
  );
}
