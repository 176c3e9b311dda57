// The sign-in modal (password mode: one password; accounts mode: email and password), a chunk of
// its own: it opens only when someone signs in, so it is not first-load JavaScript.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api";
import type { Viewer } from "../api/types";
import { describeError, t } from "../i18n";
import { accountsApi, looksLikeEmail } from "./accounts";

export function LoginModal(props: { accounts?: boolean; onClose(): void; onSignedIn(viewer: Viewer): void; onSignup?(): void }) {
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const dialog = useRef<HTMLDialogElement>(null);

  useEffect(() => {
    const d = dialog.current;
    if (d && !d.open) d.showModal();
  }, []);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!password || busy || (props.accounts && !email.trim())) return;
    if (props.accounts && !looksLikeEmail(email)) return setError(t.account.badEmail);
    setBusy(true);
    setError(null);
    try {
      const res = props.accounts ? await accountsApi.login(email.trim(), password) : await api.login(password);
      if (res.viewer) props.onSignedIn(res.viewer);
      else setError(t.auth.incomplete);
    } catch (err) {
      // The login's 401 means the credentials, not an expired session (errors.unauthorized).
      const wrong = err instanceof ApiError && err.status === 401;
      setError(wrong ? (props.accounts ? t.errors.invalid_credentials : t.auth.wrongPassword) : describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <dialog ref={dialog} class="login-modal" aria-labelledby="login-title" onCancel={(e) => { e.preventDefault(); props.onClose(); }}>
      <form onSubmit={submit}>
        <h2 id="login-title">{t.auth.signIn}</h2>
        <p class="muted">{props.accounts ? t.account.loginIntro : t.auth.loginIntro}</p>
        {props.accounts && (
          <>
            <label for="login-email">{t.account.email}</label>
            <input id="login-email" type="email" autocomplete="username" value={email} autoFocus onInput={(e) => setEmail((e.currentTarget as HTMLInputElement).value)} />
          </>
        )}
        <label for="login-password">{t.auth.password}</label>
        <input
          id="login-password"
          type="password"
          autocomplete="current-password"
          value={password}
          autoFocus={!props.accounts}
          onInput={(e) => setPassword((e.currentTarget as HTMLInputElement).value)}
        />
        <p class="form-error" role="alert">
          {error ?? ""}
        </p>
        {props.accounts && (
          <p class="login-links muted">
            {t.account.noAccount}{" "}
            <a href="/signup" class="signup-link" onClick={(e) => { e.preventDefault(); props.onSignup?.(); }}>
              {t.account.createAccount}
            </a>
            <br />
            {t.account.forgotPassword}
          </p>
        )}
        <div class="dialog-actions">
          <button type="button" class="button" onClick={props.onClose}>
            {t.auth.cancel}
          </button>
          <button type="submit" class="button primary" disabled={!password || busy || (!!props.accounts && !email.trim())}>
            {busy ? t.auth.signingIn : t.auth.signIn}
          </button>
        </div>
      </form>
    </dialog>
  );
}
