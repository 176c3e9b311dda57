// Accounts mode's own pages (docs/accounts.md): sign-up (the first admin with the setup token,
// an invitation link, or open sign-up), a reset link's form, and the settings page (account,
// password, API tokens — tokens in every mode with a sign-in). A chunk of its own.
import type { ComponentChildren, ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import {
  accountsApi,
  hasSignIn,
  looksLikeEmail,
  parseTokenDays,
  passwordProblem,
  PASSWORD_MAX,
  PASSWORD_MIN,
  inviteTokenFrom,
  refusalKey,
  resetTokenFrom,
  sortTokens,
  tokenState,
  TOKEN_DAYS_DEFAULT,
  type AccountSettings,
  type ApiTokenInfo,
  type CreatedToken,
  type InviteInfo,
  type PasswordProblem,
} from "./accounts";
import { ApiError } from "../api";
import { useShell } from "../shell/context";
import { chooseModel, loadModels, type ModelOption } from "../chat/models";
import { describeError, fmt, formatDate, formatDateTime, formatRelative, LANGUAGE_NAMES, LOCALES, t } from "../i18n";
import { tac } from "../i18n/account-page";
import { ConfirmDialog, DataTable, OnceSecret, PanelPage } from "../ui/widgets";

/** Skills (issue 22): a chunk of its own, for every principal (local-dev too). Loaded here
 * rather than with `lazyPart`, which would move ./lazy into a chunk the first load shares. */
function SkillsSection() {
  const [Section, setSection] = useState<ComponentType | null>(null);
  useEffect(() => {
    let live = true;
    import("../skills/skills").then(
      (m) => live && setSection(() => m.SkillsSection),
      () => {},
    );
    return () => {
      live = false;
    };
  }, []);
  return Section ? <Section /> : null;
}

const inputValue = (e: Event) => (e.currentTarget as HTMLInputElement).value;

/** The text for a password the form will not send. */
export function passwordMessage(p: PasswordProblem): string | null {
  if (p === "tooShort") return fmt(tac().tooShort, { min: PASSWORD_MIN });
  if (p === "tooLong") return fmt(tac().tooLong, { max: PASSWORD_MAX });
  if (p === "mismatch") return tac().mismatch;
  return null;
}

function Field(props: { id: string; label: string; children: ComponentChildren; hint?: string }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children}
      {props.hint && <p class="field-hint muted">{props.hint}</p>}
    </div>
  );
}

/** A form's end: its outcome line and its submit button. The line is there before anything
 * is said, so that a screen reader announces it: an error as an alert; with `ok` (a form
 * that reports success), `ok` as a status. */
function FormEnd(props: { error: string | null; ok?: string; busy: boolean; label: string; busyLabel: string }) {
  const failed = props.error !== null || props.ok === undefined;
  return (
    <>
      <p class={failed ? "form-error" : "form-ok"} role={failed ? "alert" : "status"}>
        {props.error ?? props.ok ?? ""}
      </p>
      <div class="dialog-actions">
        <button type="submit" class="button primary" disabled={props.busy}>
          {props.busy ? props.busyLabel : props.label}
        </button>
      </div>
    </>
  );
}

function NewPasswordFields(props: { password: string; repeat: string; onPassword(v: string): void; onRepeat(v: string): void }) {
  return (
    <>
      <Field id="new-password" label={tac().newPassword} hint={fmt(tac().passwordHint, { min: PASSWORD_MIN, max: PASSWORD_MAX })}>
        <input id="new-password" type="password" autocomplete="new-password" value={props.password} onInput={(e) => props.onPassword(inputValue(e))} />
      </Field>
      <Field id="repeat-password" label={tac().repeatPassword}>
        <input id="repeat-password" type="password" autocomplete="new-password" value={props.repeat} onInput={(e) => props.onRepeat(inputValue(e))} />
      </Field>
    </>
  );
}

/** A refusal in this page's words (`refusalKey`), else the server's error as usual. */
function refusal(err: unknown, what: Parameters<typeof refusalKey>[2]): string {
  const key = err instanceof ApiError ? refusalKey(err.code, err.status, what) : null;
  return key ? t.errors[key] : describeError(err);
}

/** `/signup` (the first admin, open sign-up) and `/invite#token=<token>` (an invitation). */
export function SignupPage(props: { invitation?: boolean }) {
  const shell = useShell();
  const [invite] = useState(() => inviteTokenFrom(location.hash, location.search));
  const [info, setInfo] = useState<InviteInfo | null>(null);
  const [inviteError, setInviteError] = useState<string | null>(null);
  const [email, setEmail] = useState("");
  const [displayName, setDisplayName] = useState("");
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const [setupToken, setSetupToken] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const firstAdmin = !invite && !props.invitation && !!shell.setup?.accountsNeedAdmin;

  useEffect(() => {
    if (!invite) return;
    accountsApi.invite(invite).then(
      (i) => {
        setInfo(i);
        if (i.email) setEmail(i.email);
      },
      (err) => setInviteError(describeError(err)),
    );
  }, [invite]);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (busy) return;
    const problem = !looksLikeEmail(email) ? t.account.badEmail : passwordMessage(passwordProblem(password, repeat));
    if (problem) return setError(problem);
    if (firstAdmin && !setupToken.trim()) return setError(tac().setupTokenRequired);
    setBusy(true);
    setError(null);
    try {
      const res = await accountsApi.signup({
        email: email.trim(),
        password,
        ...(displayName.trim() ? { displayName: displayName.trim() } : {}),
        ...(invite ? { inviteToken: invite } : firstAdmin ? { setupToken: setupToken.trim() } : {}),
      });
      if (!res.viewer) return setError(t.auth.incomplete);
      shell.signedIn(res.viewer);
      shell.refreshSetup();
      shell.navigate("/", { replace: true });
    } catch (err) {
      setError(refusal(err, invite ? "invite" : firstAdmin ? "setup" : "open"));
    } finally {
      setBusy(false);
    }
  };

  const title = firstAdmin ? tac().firstAdminTitle : tac().signupTitle;
  if (props.invitation && !invite) {
    return (
      <PanelPage title={title}>
        <p class="form-error signup-error" role="alert">
          {tac().inviteMissing}
        </p>
      </PanelPage>
    );
  }
  if (invite && inviteError) {
    return (
      <PanelPage title={title}>
        <p class="form-error signup-error" role="alert">
          {inviteError}
        </p>
      </PanelPage>
    );
  }
  if (invite && !info) {
    return (
      <PanelPage title={title}>
        <p class="muted" aria-busy="true">
          {tac().inviteChecking}
        </p>
      </PanelPage>
    );
  }
  return (
    <PanelPage title={title}>
      <form class="panel-form signup-form" onSubmit={submit} noValidate>
        {info ? (
          <p class="muted invite-info">
            {fmt(tac().inviteIntro, { role: t.account.roles[info.role] ?? info.role })} {info.email ? fmt(tac().inviteFor, { email: info.email }) + " " : ""}
            {fmt(tac().inviteExpires, { when: formatDateTime(info.expiresAt) })}
          </p>
        ) : (
          <p class="muted">{firstAdmin ? fmt(tac().firstAdminIntro, { variable: "admin_setup_token" }) : tac().openSignupIntro}</p>
        )}
        {firstAdmin && (
          <Field id="setup-token" label={tac().setupToken}>
            <input id="setup-token" type="password" autocomplete="off" value={setupToken} onInput={(e) => setSetupToken(inputValue(e))} />
          </Field>
        )}
        <Field id="signup-email" label={t.account.email}>
          <input id="signup-email" type="email" autocomplete="username" value={email} readOnly={!!info?.email} onInput={(e) => setEmail(inputValue(e))} />
        </Field>
        <Field id="signup-name" label={tac().displayNameOptional}>
          <input id="signup-name" autocomplete="name" maxLength={100} value={displayName} onInput={(e) => setDisplayName(inputValue(e))} />
        </Field>
        <NewPasswordFields password={password} repeat={repeat} onPassword={setPassword} onRepeat={setRepeat} />
        <FormEnd error={error} busy={busy} label={tac().create} busyLabel={tac().creating} />
        {!firstAdmin && (
          <p class="muted login-links">
            {tac().haveAccount}{" "}
            <a href="/" onClick={(e) => { e.preventDefault(); shell.navigate("/"); shell.requestSignIn(); }}>
              {tac().signIn}
            </a>
          </p>
        )}
      </form>
    </PanelPage>
  );
}

/** `/reset#token=<token>`: a one-time link an admin made. */
export function ResetPage() {
  const shell = useShell();
  const [token] = useState(() => resetTokenFrom(location.hash, location.search));
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (!token) {
    return (
      <PanelPage title={tac().resetTitle}>
        <p class="form-error" role="alert">
          {tac().resetMissing}
        </p>
      </PanelPage>
    );
  }
  const submit = async (e: Event) => {
    e.preventDefault();
    if (busy) return;
    const problem = passwordMessage(passwordProblem(password, repeat));
    if (problem) return setError(problem);
    setBusy(true);
    setError(null);
    try {
      const res = await accountsApi.reset(token, password);
      if (!res.viewer) return setError(t.auth.incomplete);
      shell.signedIn(res.viewer);
      shell.navigate("/", { replace: true });
    } catch (err) {
      // The server answers a spent or unknown link `invite_invalid`: it is this reset link.
      setError(refusal(err, "reset"));
    } finally {
      setBusy(false);
    }
  };
  return (
    <PanelPage title={tac().resetTitle}>
      <form class="panel-form reset-form" onSubmit={submit} noValidate>
        <p class="muted">{tac().resetIntro}</p>
        <NewPasswordFields password={password} repeat={repeat} onPassword={setPassword} onRepeat={setRepeat} />
        <FormEnd error={error} busy={busy} label={tac().resetSave} busyLabel={tac().saving} />
      </form>
    </PanelPage>
  );
}

/** `/settings`: the account (accounts mode), its password, and API tokens. */
export function SettingsPage() {
  const shell = useShell();
  const v = shell.viewer;
  if (v === undefined) {
    return (
      <PanelPage title={t.account.settingsTitle}>
        <p class="muted">{t.ui.loading}</p>
      </PanelPage>
    );
  }
  if (v === null || !hasSignIn(v.mode)) {
    return (
      <PanelPage title={t.account.settingsTitle}>
        <p class="muted">{v === null ? tac().signInFirst : tac().noSettings}</p>
        {v === null && (
          <button type="button" class="button primary" onClick={() => shell.requestSignIn()}>
            {t.auth.signIn}
          </button>
        )}
        {v !== null && <SkillsSection />}
      </PanelPage>
    );
  }
  return (
    <PanelPage title={t.account.settingsTitle}>
      {shell.account && <AccountSection account={shell.account} />}
      {shell.account && <PasswordSection />}
      <TokensSection />
      <SkillsSection />
      {shell.isAdmin && (
        <p>
          <a class="button" href="/admin" onClick={(e) => { e.preventDefault(); shell.navigate("/admin"); }}>
            {t.account.adminLink}
          </a>
        </p>
      )}
    </PanelPage>
  );
}

function AccountSection({ account }: { account: AccountSettings }) {
  const shell = useShell();
  const [displayName, setDisplayName] = useState(account.displayName ?? "");
  const [language, setLanguage] = useState(account.language ?? "");
  const [model, setModel] = useState(account.defaultModel ?? "");
  const [models, setModels] = useState<ModelOption[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);

  useEffect(() => {
    let live = true;
    void loadModels().then((list) => live && setModels(list));
    return () => {
      live = false;
    };
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      const next = await accountsApi.updateAccount({ displayName: displayName.trim(), language: language || null, defaultModel: model || null });
      // The new default applies to new chats in this browser at once.
      if (next.defaultModel) chooseModel(next.defaultModel, null);
      shell.setAccount(next);
      setSaved(true);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel-section" aria-labelledby="account-heading">
      <h2 id="account-heading">{tac().accountSection}</h2>
      <p class="muted">{fmt(tac().signedInAs, { name: account.email, role: t.account.roles[account.role] ?? account.role })}</p>
      <form class="panel-form account-form" onSubmit={submit}>
        <Field id="account-name" label={tac().displayName}>
          <input id="account-name" maxLength={100} value={displayName} onInput={(e) => setDisplayName(inputValue(e))} />
        </Field>
        <Field id="account-language" label={tac().language}>
          <select id="account-language" value={language} onChange={(e) => setLanguage((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">{tac().languageBrowser}</option>
            {LOCALES.map((l) => (
              <option key={l} value={l} lang={l}>
                {LANGUAGE_NAMES[l]}
              </option>
            ))}
          </select>
        </Field>
        <Field id="account-model" label={tac().defaultModel}>
          <select id="account-model" value={model} onChange={(e) => setModel((e.currentTarget as HTMLSelectElement).value)}>
            <option value="">{tac().defaultModelServer}</option>
            {models.map((m) => (
              <option key={m.id} value={m.id}>
                {m.label}
              </option>
            ))}
            {model && !models.some((m) => m.id === model) && <option value={model}>{model}</option>}
          </select>
        </Field>
        <FormEnd error={error} ok={saved ? tac().saved : ""} busy={busy} label={tac().save} busyLabel={tac().saving} />
      </form>
    </section>
  );
}

function PasswordSection() {
  const [current, setCurrent] = useState("");
  const [password, setPassword] = useState("");
  const [repeat, setRepeat] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setDone(false);
    const problem = !current ? t.errors.wrong_password : passwordMessage(passwordProblem(password, repeat));
    if (problem) return setError(problem);
    setBusy(true);
    setError(null);
    try {
      await accountsApi.changePassword(current, password);
      setCurrent("");
      setPassword("");
      setRepeat("");
      setDone(true);
    } catch (err) {
      // Here a 401 is the current password, not the sign-in (which the cookie still holds).
      const wrong = err instanceof ApiError && (err.status === 401 || err.code === "invalid_credentials");
      setError(wrong ? t.errors.wrong_password : describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="panel-section" aria-labelledby="password-heading">
      <h2 id="password-heading">{tac().passwordSection}</h2>
      <form class="panel-form password-form" onSubmit={submit} noValidate>
        <Field id="current-password" label={tac().currentPassword}>
          <input id="current-password" type="password" autocomplete="current-password" value={current} onInput={(e) => setCurrent(inputValue(e))} />
        </Field>
        <NewPasswordFields password={password} repeat={repeat} onPassword={setPassword} onRepeat={setRepeat} />
        <FormEnd error={error} ok={done ? tac().passwordChanged : ""} busy={busy} label={tac().changePassword} busyLabel={tac().saving} />
      </form>
    </section>
  );
}

function TokensSection() {
  const shell = useShell();
  const [list, setList] = useState<ApiTokenInfo[] | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [name, setName] = useState("");
  const [days, setDays] = useState(String(TOKEN_DAYS_DEFAULT));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<CreatedToken | null>(null);
  const [revoking, setRevoking] = useState<ApiTokenInfo | null>(null);
  const [revokeError, setRevokeError] = useState<string | null>(null);

  const reload = () =>
    accountsApi.tokens().then(
      (r) => setList(r.tokens),
      (err) => setLoadError(fmt(tac().tokens.loadFailed, { error: describeError(err) })),
    );
  useEffect(() => void reload(), []);

  const create = async (e: Event) => {
    e.preventDefault();
    if (busy) return;
    const n = parseTokenDays(days);
    if (!name.trim()) return setError(tac().tokens.nameRequired);
    if (n === null) return setError(tac().tokens.daysInvalid);
    setBusy(true);
    setError(null);
    try {
      const made = await accountsApi.createToken(name.trim(), n);
      setCreated(made);
      setList((l) => [made.info, ...(l ?? []).filter((x) => x.id !== made.info.id)]);
      setName("");
      setDays(String(TOKEN_DAYS_DEFAULT));
    } catch (err) {
      setError(refusal(err, "token"));
    } finally {
      setBusy(false);
    }
  };

  const revoke = async (token: ApiTokenInfo) => {
    setBusy(true);
    try {
      await accountsApi.revokeToken(token.id);
      setRevoking(null);
      setRevokeError(null);
      shell.toast(fmt(tac().tokens.revoked, { name: token.name }), "info");
      await reload();
    } catch (err) {
      setRevokeError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  const now = Date.now();
  return (
    <section class="panel-section tokens" aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">{tac().tokens.title}</h2>
      <p class="muted">{fmt(tac().tokens.intro, { header: "Authorization: Bearer …" })}</p>
      {created && (
        <OnceSecret title={fmt(tac().tokens.newTitle, { name: created.info.name })} label={fmt(tac().tokens.newTitle, { name: created.info.name })} value={created.token} warning={tac().tokens.newWarning} onDone={() => setCreated(null)} />
      )}
      <form class="panel-form inline-form token-form" onSubmit={create} noValidate>
        <Field id="token-name" label={tac().tokens.name}>
          <input id="token-name" maxLength={100} value={name} onInput={(e) => setName(inputValue(e))} />
        </Field>
        <Field id="token-days" label={tac().tokens.expiresIn}>
          <input id="token-days" type="number" min={1} max={365} step={1} inputMode="numeric" value={days} onInput={(e) => setDays(inputValue(e))} />
        </Field>
        <button type="submit" class="button primary" disabled={busy}>
          {busy ? tac().tokens.creating : tac().tokens.create}
        </button>
      </form>
      <p class="form-error" role="alert">
        {error ?? loadError ?? ""}
      </p>
      {list && list.length === 0 && <p class="muted">{tac().tokens.none}</p>}
      {list && list.length > 0 && (
        <DataTable kind="token-table" columns={[tac().tokens.name, tac().tokens.created, tac().tokens.expires, tac().tokens.lastUsed, t.ui.status, { label: t.ui.actions, hidden: true }]}>
          {sortTokens(list, now).map((tok) => {
            const state = tokenState(tok, now);
            return (
              <tr key={tok.id} data-token-id={tok.id} class={`token-${state}`}>
                <td class="token-name">{tok.name}</td>
                <td title={formatDateTime(tok.createdAt)}>{formatDate(tok.createdAt)}</td>
                <td title={formatDateTime(tok.expiresAt)}>{formatDate(tok.expiresAt)}</td>
                <td title={tok.lastUsedAt ? formatDateTime(tok.lastUsedAt) : undefined}>{tok.lastUsedAt ? formatRelative(tok.lastUsedAt, now) : tac().tokens.never}</td>
                <td class="token-state">{tac().tokens.states[state]}</td>
                <td>
                  {state === "active" && (
                    <button type="button" class="button small danger" aria-label={fmt(tac().tokens.revokeLabel, { name: tok.name })} onClick={() => { setRevokeError(null); setRevoking(tok); }}>
                      {tac().tokens.revoke}
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </DataTable>
      )}
      {revoking && (
        <ConfirmDialog
          title={fmt(tac().tokens.revokeLabel, { name: revoking.name })}
          body={fmt(tac().tokens.confirmRevoke, { name: revoking.name })}
          confirmLabel={tac().tokens.revoke}
          danger
          busy={busy}
          error={revokeError}
          onConfirm={() => void revoke(revoking)}
          onCancel={() => setRevoking(null)}
        />
      )}
    </section>
  );
}
