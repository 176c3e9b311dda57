// The admin page (`/admin`, docs/accounts.md): users (search, invite, disable / enable, role,
// reset link, delete), usage with a 30-day chart, quotas, which models members may use, model
// providers, MCP servers, the audit log and the system settings (docs/runtime.md; in local-dev,
// where the one local developer is the admin and there are no accounts, only settings,
// providers, MCP servers, usage and audit). Only for admins: a member sees "not allowed" (and
// the server answers 403 to every admin route anyway). Admins manage accounts; nothing here
// reads anyone's chats.
import { useEffect, useReducer, useState } from "preact/hooks";
import {
  accountIdOf,
  adminApi,
  byModel,
  chartBars,
  enabledAdmins,
  lastDays,
  MB,
  parseQuota,
  quotaInput,
  userListReducer,
  type ChartDay,
} from "./data";
import type { AdminUser, AuditEntry, CreatedInvite, InviteSummary, ModelDay, QuotaLimits, ResetLink, UsageReport, UserUsage } from "../account/accounts";
import type { Role } from "../api/types";
import { useShell } from "../shell/context";
import { loadModels, type ModelOption } from "../chat/models";
import { describeError, fmt, formatBytes, formatCompact, formatDate, formatDateTime, formatDay, formatNumber, formatRelative, t } from "../i18n";
import { tset } from "../i18n/admin-settings";
import { tad } from "../i18n/admin-page";
import { ConfirmDialog, DataTable, OnceSecret, PanelPage } from "../ui/widgets";
import { lazyPart } from "../ui/lazy";
import { tm } from "../i18n/admin-mcp";
import { tpv } from "../i18n/admin-providers";

// Providers and MCP servers (issue 22): chunks of their own, with their strings.
const ProvidersTab = lazyPart(() => import("./providers-tab").then((m) => m.ProvidersTab));
const McpServersTab = lazyPart(() => import("./mcp-tab").then((m) => m.McpServersTab));

const TABS = ["users", "usage", "quotas", "models", "providers", "mcp", "audit", "settings"] as const;
type Tab = (typeof TABS)[number];
/** In local-dev there are no accounts: the tabs that manage them are left out. */
const LOCAL_DEV_TABS: readonly Tab[] = ["settings", "providers", "mcp", "usage", "audit"];
const tabLabel = (x: Tab) => (x === "settings" ? tset().tab : x === "mcp" ? tm().tab : x === "providers" ? tpv().tab : tad().tabs[x]);

/** The Settings tab (issue 22): a chunk of its own, loaded when first shown. */
const SettingsTab = lazyPart(() => import("./settings-tab").then((m) => m.SettingsTab));
const ROLES: Role[] = ["member", "admin"];
const inputValue = (e: Event) => (e.currentTarget as HTMLInputElement).value;
const absolute = (url: string) => (/^https?:\/\//.test(url) ? url : new URL(url, location.origin).href);
const roleName = (r: string) => t.account.roles[r] ?? r;

export function AdminPage() {
  const shell = useShell();
  const tabs: readonly Tab[] = shell.authMode === "local-dev" ? LOCAL_DEV_TABS : TABS;
  const [tab, setTab] = useState<Tab>(() => (tabs as readonly string[]).find((x) => x === new URLSearchParams(location.search).get("tab")) as Tab ?? tabs[0]);
  if (shell.viewer === undefined || (shell.viewer && shell.authMode === "accounts" && shell.account === undefined)) {
    return (
      <PanelPage title={tad().title}>
        <p class="muted">{t.ui.loading}</p>
      </PanelPage>
    );
  }
  if (!shell.isAdmin) {
    return (
      <PanelPage title={tad().notAllowedTitle}>
        <p class="admin-not-allowed" role="alert">
          {tad().notAllowed}
        </p>
      </PanelPage>
    );
  }
  const choose = (next: Tab) => {
    setTab(next);
    history.replaceState(null, "", next === tabs[0] ? "/admin" : `/admin?tab=${next}`);
  };
  return (
    <PanelPage title={tad().title} wide>
      <div class="tabs" role="tablist" aria-label={tad().title}>
        {tabs.map((x) => (
          <button key={x} type="button" role="tab" id={`tab-${x}`} class={`tab${tab === x ? " active" : ""}`} aria-selected={tab === x} aria-controls={`panel-${x}`} onClick={() => choose(x)}>
            {tabLabel(x)}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} class="tab-panel">
        {tab === "users" && <UsersTab />}
        {tab === "usage" && <UsageTab />}
        {tab === "quotas" && <QuotasTab />}
        {tab === "models" && <ModelsTab />}
        {tab === "providers" && <ProvidersTab />}
        {tab === "mcp" && <McpServersTab />}
        {tab === "audit" && <AuditTab />}
        {tab === "settings" && <SettingsTab />}
      </div>
    </PanelPage>
  );
}

// ---- users ---------------------------------------------------------------------------------

function UsersTab() {
  const shell = useShell();
  const [list, dispatch] = useReducer(userListReducer, { users: [], nextCursor: null, q: "" });
  const [query, setQuery] = useState("");
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ text: string; value: string } | null>(null);
  const [deleting, setDeleting] = useState<AdminUser | null>(null);
  const [deleteError, setDeleteError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [invitesKey, setInvitesKey] = useState(0);

  const load = (q: string, cursor: string | null) => {
    setLoading(true);
    adminApi
      .users(q, cursor)
      .then((page) => dispatch({ type: "page", q, page, append: !!cursor }))
      .catch((err) => setError(fmt(t.ui.loadFailed, { error: describeError(err) })))
      .finally(() => setLoading(false));
  };
  useEffect(() => {
    const timer = setTimeout(() => load(query.trim(), null), query ? 250 : 0);
    return () => clearTimeout(timer);
  }, [query]);

  const act = async (run: () => Promise<void>) => {
    if (busy) return;
    setBusy(true);
    try {
      await run();
    } catch (err) {
      shell.toast(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  const update = (u: AdminUser, patch: { role?: Role; disabled?: boolean }) =>
    act(async () => {
      try {
        const next = await adminApi.updateUser(u.id, patch);
        dispatch({ type: "updated", user: next });
        const msg = patch.role ? fmt(tad().roleChanged, { email: u.email, role: roleName(patch.role) }) : fmt(patch.disabled ? tad().disabledDone : tad().enabledDone, { email: u.email });
        shell.toast(msg, "info");
      } catch (err) {
        // Refused (e.g. 409 last_admin): the row is drawn again as the server keeps it, so the
        // role select does not keep showing the choice that did not happen.
        dispatch({ type: "updated", user: { ...u } });
        throw err;
      }
    });
  const reset = (u: AdminUser) =>
    act(async () => {
      const link: ResetLink = await adminApi.resetLink(u.id);
      setSecret({ text: fmt(tad().resetCreated, { email: u.email, when: formatDateTime(link.expiresAt) }), value: absolute(link.url) });
    });
  const remove = async (u: AdminUser) => {
    setBusy(true);
    try {
      await adminApi.deleteUser(u.id);
      dispatch({ type: "removed", id: u.id });
      setDeleting(null);
      shell.toast(fmt(tad().deleted, { email: u.email }), "info");
    } catch (err) {
      setDeleteError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  const admins = enabledAdmins(list.users);
  const me = shell.account?.id;
  return (
    <div class="admin-users">
      <InviteForm
        onCreated={(inv) => {
          setSecret({ text: fmt(tad().inviteCreated, { role: roleName(inv.role), when: formatDateTime(inv.expiresAt) }), value: absolute(inv.url) });
          setInvitesKey((k) => k + 1);
        }}
      />
      {secret && <OnceSecret label={t.ui.copy} value={secret.value} warning={secret.text} onDone={() => setSecret(null)} doneLabel={tad().close} />}
      <Invites key={invitesKey} />
      <div class="field search-field">
        <label for="user-search">{tad().search}</label>
        <input id="user-search" type="search" placeholder={tad().searchPlaceholder} value={query} onInput={(e) => setQuery(inputValue(e))} />
      </div>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      {!loading && list.users.length === 0 && <p class="muted">{tad().noUsers}</p>}
      {list.users.length > 0 && (
        <DataTable kind="user-table" columns={[tad().email, tad().name, tad().role, t.ui.status, tad().created, tad().lastActive, t.ui.actions]}>
          {list.users.map((u) => {
            const lastAdmin = u.role === "admin" && !u.disabled && admins <= 1;
            return (
              <tr key={u.id} data-user-id={u.id} data-email={u.email} class={u.disabled ? "user-disabled" : undefined}>
                <td class="user-email">
                  {u.email}
                  {u.id === me && <span class="muted"> ({tad().you})</span>}
                </td>
                <td>{u.displayName ?? ""}</td>
                <td>
                  <select class="user-role" aria-label={fmt(tad().roleOf, { email: u.email })} value={u.role} disabled={busy} title={lastAdmin ? tad().lastAdminWarning : undefined} onChange={(e) => void update(u, { role: (e.currentTarget as HTMLSelectElement).value as Role })}>
                    {ROLES.map((r) => (
                      <option key={r} value={r}>
                        {roleName(r)}
                      </option>
                    ))}
                  </select>
                </td>
                <td class="user-status">{u.disabled ? tad().disabled : tad().active}</td>
                <td title={formatDateTime(u.createdAt)}>{formatDate(u.createdAt)}</td>
                <td title={u.lastActiveAt ? formatDateTime(u.lastActiveAt) : undefined}>{u.lastActiveAt ? formatRelative(u.lastActiveAt) : "—"}</td>
                <td class="row-buttons">
                  <button type="button" class="button small user-toggle" disabled={busy} title={lastAdmin && !u.disabled ? tad().lastAdminWarning : undefined} onClick={() => void update(u, { disabled: !u.disabled })}>
                    {u.disabled ? tad().enable : tad().disable}
                  </button>
                  <button type="button" class="button small user-reset" disabled={busy} onClick={() => void reset(u)}>
                    {tad().resetLink}
                  </button>
                  <button type="button" class="button small danger user-delete" disabled={busy} onClick={() => { setDeleteError(null); setDeleting(u); }}>
                    {tad().delete}
                  </button>
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
      {list.nextCursor && (
        <button type="button" class="button" disabled={loading} onClick={() => load(list.q, list.nextCursor)}>
          {tad().loadMore}
        </button>
      )}
      {deleting && (
        <ConfirmDialog
          title={fmt(tad().deleteTitle, { email: deleting.email })}
          body={tad().deleteWarning}
          confirmLabel={tad().deleteConfirm}
          typed={deleting.email}
          typedLabel={fmt(tad().deleteType, { email: deleting.email })}
          danger
          busy={busy}
          error={deleteError}
          onConfirm={() => void remove(deleting)}
          onCancel={() => setDeleting(null)}
        />
      )}
    </div>
  );
}

function InviteForm({ onCreated }: { onCreated(inv: CreatedInvite): void }) {
  const [role, setRole] = useState<Role>("member");
  const [email, setEmail] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onCreated(await adminApi.createInvite(role, email.trim() || undefined));
      setEmail("");
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="panel-section" aria-labelledby="invite-heading">
      <h2 id="invite-heading">{tad().inviteTitle}</h2>
      <form class="panel-form inline-form invite-form" onSubmit={submit}>
        <div class="field">
          <label for="invite-role">{tad().role}</label>
          <select id="invite-role" value={role} onChange={(e) => setRole((e.currentTarget as HTMLSelectElement).value as Role)}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {roleName(r)}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="invite-email">{tad().inviteEmail}</label>
          <input id="invite-email" type="email" title={tad().inviteEmailHint} value={email} onInput={(e) => setEmail(inputValue(e))} />
        </div>
        <button type="submit" class="button primary" disabled={busy}>
          {tad().createInvite}
        </button>
      </form>
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}

function Invites() {
  const shell = useShell();
  const [invites, setInvites] = useState<InviteSummary[] | null>(null);
  const reload = () => adminApi.invites().then((r) => setInvites(r.invites.filter((i) => !i.usedAt && Date.parse(i.expiresAt) > Date.now())), () => setInvites([]));
  useEffect(() => void reload(), []);
  if (!invites) return null;
  return (
    <section class="panel-section invites" aria-labelledby="invites-heading">
      <h2 id="invites-heading">{tad().invites}</h2>
      {invites.length === 0 ? (
        <p class="muted">{tad().noInvites}</p>
      ) : (
        <ul class="invite-list">
          {invites.map((i) => (
            <li key={i.id} data-invite-id={i.id}>
              <span>
                {roleName(i.role)} · {i.email ?? tad().anyEmail} · <span title={formatDateTime(i.expiresAt)}>{formatDate(i.expiresAt)}</span>
              </span>
              <button
                type="button"
                class="button small ghost"
                onClick={() =>
                  adminApi.revokeInvite(i.id).then(
                    () => {
                      shell.toast(tad().inviteRevoked, "info");
                      void reload();
                    },
                    (err) => shell.toast(describeError(err)),
                  )
                }
              >
                {tad().revokeInvite}
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

// ---- usage ---------------------------------------------------------------------------------

function useUsage(): { report: UsageReport | null; error: string | null; reload(): void } {
  const [report, setReport] = useState<UsageReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = () => adminApi.usage(30).then(setReport, (err) => setError(fmt(t.ui.loadFailed, { error: describeError(err) })));
  useEffect(() => void reload(), []);
  return { report, error, reload };
}

/** Tokens per day as stacked bars (input below, output on top): an inline SVG, no library. */
export function TokenChart({ days, label }: { days: ChartDay[]; label?: string }) {
  const W = 600;
  const H = 120;
  const { bars } = chartBars(days, W, H);
  const total = days.reduce((a, d) => a + d.tokensIn + d.tokensOut, 0);
  return (
    <figure class="token-chart">
      <figcaption>
        {label ?? tad().chartTitle}
        <span class="chart-legend">
          <span class="legend-in" aria-hidden="true" /> {tad().legendIn} <span class="legend-out" aria-hidden="true" /> {tad().legendOut}
        </span>
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H + 1}`} role="img" aria-label={fmt(tad().chartLabel, { total: formatNumber(total) })} preserveAspectRatio="none">
        {bars.map((b, i) => (
          <g key={b.day} class="bar" data-day={b.day} data-total={b.total}>
            <title>{fmt(tad().barTitle, { day: formatDay(b.day), input: formatNumber(days[i]!.tokensIn), output: formatNumber(days[i]!.tokensOut) })}</title>
            <rect class="bar-hit" x={b.x} y={0} width={b.width} height={H} />
            <rect class="bar-in" x={b.x} y={H - b.inHeight} width={b.width} height={b.inHeight} />
            <rect class="bar-out" x={b.x} y={H - b.inHeight - b.outHeight} width={b.width} height={b.outHeight} />
          </g>
        ))}
        <line class="chart-axis" x1={0} y1={H} x2={W} y2={H} />
      </svg>
      {/* Outside the SVG, which stretches to the width: text in it would stretch too. */}
      {bars.length > 0 && (
        <div class="chart-ticks" aria-hidden="true">
          <span>{formatDay(bars[0]!.day)}</span>
          <span>{formatDay(bars[bars.length - 1]!.day)}</span>
        </div>
      )}
    </figure>
  );
}

function UsageTab() {
  const { report, error } = useUsage();
  const [detail, setDetail] = useState<UserUsage | null>(null);
  if (error) return <p class="form-error" role="alert">{error}</p>;
  if (!report) return <p class="muted">{t.ui.loading}</p>;
  const users = [...report.users].sort((a, b) => b.tokensIn + b.tokensOut - (a.tokensIn + a.tokensOut) || (a.email ?? a.principal).localeCompare(b.email ?? b.principal));
  return (
    <div class="admin-usage">
      <TokenChart days={lastDays(report.days, 30, Date.now())} />
      {users.length === 0 ? (
        <p class="muted">{tad().noUsage}</p>
      ) : (
        <DataTable kind="usage-table" columns={[tad().user, { label: tad().chats, num: true }, { label: tad().storage, num: true }, { label: tad().attachments, num: true }, { label: tad().tokensIn, num: true }, { label: tad().tokensOut, num: true }, tad().lastActive]}>
          {users.map((u) => {
            const who = u.email ?? u.principal;
            const id = accountIdOf(u.principal);
            return (
              <tr key={u.principal} data-principal={u.principal} class={detail?.principal === u.principal ? "selected" : undefined}>
                <td>
                  {id ? (
                    <button type="button" class="link-button" aria-label={fmt(tad().showUsage, { user: who })} onClick={() => setDetail(detail?.principal === u.principal ? null : u)}>
                      {who}
                    </button>
                  ) : (
                    who
                  )}
                </td>
                <td class="num">{formatNumber(u.chats)}</td>
                <td class="num">{formatBytes(u.storageBytes)}</td>
                <td class="num">{formatBytes(u.attachmentBytes)}</td>
                <td class="num" title={formatNumber(u.tokensIn)}>{formatCompact(u.tokensIn)}</td>
                <td class="num" title={formatNumber(u.tokensOut)}>{formatCompact(u.tokensOut)}</td>
                <td title={u.lastActiveAt ? formatDateTime(u.lastActiveAt) : undefined}>{u.lastActiveAt ? formatRelative(u.lastActiveAt) : "—"}</td>
              </tr>
            );
          })}
        </DataTable>
      )}
      {detail && <UserUsageDetail user={detail} />}
    </div>
  );
}

function UserUsageDetail({ user }: { user: UserUsage }) {
  const [rows, setRows] = useState<ModelDay[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const id = accountIdOf(user.principal)!;
  useEffect(() => {
    setRows(null);
    adminApi.userUsage(id, 30).then((r) => setRows(r.days), (err) => setError(describeError(err)));
  }, [id]);
  const who = user.email ?? user.principal;
  return (
    <section class="panel-section user-usage" aria-label={fmt(tad().userUsageTitle, { user: who })}>
      <h2>{fmt(tad().userUsageTitle, { user: who })}</h2>
      {error && <p class="form-error">{error}</p>}
      {rows && (
        <>
          <TokenChart days={lastDays(rows, 30, Date.now())} label={fmt(tad().userUsageTitle, { user: who })} />
          <DataTable kind="model-table" columns={[tad().model, { label: tad().tokensIn, num: true }, { label: tad().tokensOut, num: true }, { label: tad().calls, num: true }]}>
            {byModel(rows).map((m) => (
              <tr key={m.model}>
                <td>{m.model}</td>
                <td class="num">{formatNumber(m.tokensIn)}</td>
                <td class="num">{formatNumber(m.tokensOut)}</td>
                <td class="num">{formatNumber(m.calls)}</td>
              </tr>
            ))}
          </DataTable>
        </>
      )}
    </section>
  );
}

// ---- quotas --------------------------------------------------------------------------------

function QuotasTab() {
  const { report, error } = useUsage();
  if (error) return <p class="form-error" role="alert">{error}</p>;
  if (!report) return <p class="muted">{t.ui.loading}</p>;
  const accounts = report.users.filter((u) => accountIdOf(u.principal));
  return (
    <div class="admin-quotas">
      <p class="muted">{tad().quotasIntro}</p>
      <DataTable kind="quota-table" columns={[tad().user, tad().tokensPerDay, tad().storageMb, { label: t.ui.actions, hidden: true }]}>
        {accounts.map((u) => (
          <QuotaRow key={u.principal} user={u} defaults={report.defaults ?? {}} />
        ))}
      </DataTable>
    </div>
  );
}

function QuotaRow({ user, defaults }: { user: UserUsage; defaults: QuotaLimits }) {
  const shell = useShell();
  const [tokens, setTokens] = useState(quotaInput(user.quota.tokensPerDay));
  const [storage, setStorage] = useState(quotaInput(user.quota.storageBytes, MB));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const who = user.email ?? user.principal;
  const placeholder = (v: number | null | undefined, unit = 1) => (v ? quotaInput(v, unit) : tad().noLimit);
  const save = async (e: Event) => {
    e.preventDefault();
    const tokensPerDay = parseQuota(tokens);
    const storageBytes = parseQuota(storage, MB);
    if (tokensPerDay === undefined || storageBytes === undefined) return setError(tad().quotaInvalid);
    setBusy(true);
    setError(null);
    try {
      await adminApi.setQuota(accountIdOf(user.principal)!, { tokensPerDay, storageBytes });
      shell.toast(fmt(tad().quotaSaved, { user: who }), "info");
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  const form = `quota-${user.principal.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  return (
    <tr data-principal={user.principal}>
      <td>
        {who}
        {error && <p class="form-error">{error}</p>}
      </td>
      <td>
        <input form={form} class="quota-tokens" inputMode="numeric" aria-label={`${tad().tokensPerDay} · ${who}`} placeholder={placeholder(defaults.tokensPerDay)} value={tokens} onInput={(e) => setTokens(inputValue(e))} />
      </td>
      <td>
        <input form={form} class="quota-storage" inputMode="decimal" aria-label={`${tad().storageMb} · ${who}`} placeholder={placeholder(defaults.storageBytes, MB)} value={storage} onInput={(e) => setStorage(inputValue(e))} />
      </td>
      <td>
        <form id={form} onSubmit={save}>
          <button type="submit" class="button small" disabled={busy}>
            {tad().save}
          </button>
        </form>
      </td>
    </tr>
  );
}

// ---- models --------------------------------------------------------------------------------

function ModelsTab() {
  const shell = useShell();
  const [models, setModels] = useState<ModelOption[] | null>(null);
  const [allowed, setAllowed] = useState<string[] | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    // The route answers the configured models to choose from; the agent's list is the fallback.
    adminApi.models().then(
      (m) => {
        setAllowed(m.memberModels);
        if (m.models?.length) setModels(m.models.map((o) => ({ ...o, provider: "" })));
        else void loadModels().then(setModels);
      },
      (err) => setError(fmt(t.ui.loadFailed, { error: describeError(err) })),
    );
  }, []);
  if (error && allowed === undefined) return <p class="form-error" role="alert">{error}</p>;
  if (!models || allowed === undefined) return <p class="muted">{t.ui.loading}</p>;
  if (models.length === 0) return <p class="muted">{tad().noModels}</p>;
  const toggle = (id: string, on: boolean) => {
    const base = allowed ?? models.map((m) => m.id);
    setAllowed(on ? [...base.filter((x) => x !== id), id] : base.filter((x) => x !== id));
  };
  const save = async (e: Event) => {
    e.preventDefault();
    if (allowed && allowed.length === 0) return setError(tad().atLeastOneModel);
    setBusy(true);
    setError(null);
    try {
      const next = await adminApi.setModels(allowed);
      setAllowed(next.memberModels);
      shell.toast(tad().modelsSaved, "info");
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="admin-models panel-form" onSubmit={save}>
      <p class="muted">{tad().modelsIntro}</p>
      <label class="check">
        <input type="checkbox" id="models-all" checked={allowed === null} onChange={(e) => setAllowed((e.currentTarget as HTMLInputElement).checked ? null : models.map((m) => m.id))} />
        {tad().allModels}
      </label>
      <fieldset class="model-checks" disabled={allowed === null}>
        <legend class="sr-only">{tad().tabs.models}</legend>
        {models.map((m) => (
          <label key={m.id} class="check">
            <input type="checkbox" data-model={m.id} checked={allowed === null || allowed.includes(m.id)} onChange={(e) => toggle(m.id, (e.currentTarget as HTMLInputElement).checked)} />
            {m.label} <span class="muted">{m.id}</span>
          </label>
        ))}
      </fieldset>
      <p class="form-error" role="alert">
        {error ?? ""}
      </p>
      <div class="dialog-actions">
        <button type="submit" class="button primary" disabled={busy}>
          {tad().save}
        </button>
      </div>
    </form>
  );
}

// ---- audit ---------------------------------------------------------------------------------

function AuditTab() {
  const [entries, setEntries] = useState<AuditEntry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const load = (from: string | null) => {
    setLoading(true);
    adminApi
      .audit(from)
      .then((page) => {
        setEntries((list) => {
          const seen = new Set(list.map((e) => String(e.id)));
          return [...(from ? list : []), ...page.entries.filter((e) => !from || !seen.has(String(e.id)))];
        });
        setCursor(page.nextCursor ?? null);
      })
      .catch((err) => setError(fmt(t.ui.loadFailed, { error: describeError(err) })))
      .finally(() => setLoading(false));
  };
  useEffect(() => load(null), []);
  return (
    <div class="admin-audit">
      {error && (
        <p class="form-error" role="alert">
          {error}
        </p>
      )}
      {!loading && entries.length === 0 && <p class="muted">{tad().noEntries}</p>}
      {entries.length > 0 && (
        <DataTable kind="audit-table" columns={[tad().at, tad().actor, tad().action, tad().target, tad().detail]}>
          {entries.map((e) => (
            <tr key={e.id} data-action={e.action}>
              <td>{formatDateTime(typeof e.at === "number" ? new Date(e.at).toISOString() : e.at)}</td>
              <td>{e.actor ?? tad().system}</td>
              <td>{tad().auditActions[e.action] ?? tm().auditActions[e.action] ?? tpv().auditActions[e.action] ?? e.action}</td>
              <td>{e.target ?? ""}</td>
              <td class="audit-detail">{e.detail === undefined || e.detail === null ? "" : typeof e.detail === "string" ? e.detail : JSON.stringify(e.detail)}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {cursor && (
        <button type="button" class="button" disabled={loading} onClick={() => load(cursor)}>
          {tad().older}
        </button>
      )}
    </div>
  );
}
