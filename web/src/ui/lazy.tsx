// A page that is a chunk of its own (the admin page, settings, sign-up and reset forms): most
// visits never open them, so they stay out of the first-load budget (docs/web.md).
import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import { describeError, fmt, t } from "../i18n";

/** A part of a page that is a chunk of its own: nothing until it is loaded (or if it fails). */
export const lazyPart = <P extends object>(load: () => Promise<ComponentType<P>>) => lazyPage(load, true);

export function lazyPage<P extends object>(load: () => Promise<ComponentType<P>>, quiet = false): ComponentType<P> {
  let loaded: ComponentType<P> | null = null;
  let pending: Promise<ComponentType<P>> | null = null;
  return function LazyPage(props: P) {
    const [, setTick] = useState(0);
    const [error, setError] = useState<string | null>(null);
    useEffect(() => {
      if (loaded) return;
      let live = true;
      (pending ??= load())
        .then((c) => {
          loaded = c;
          if (live) setTick((n) => n + 1);
        })
        .catch((err: unknown) => {
          // A chunk that could not be fetched (a deploy replaced it, the network dropped) is
          // tried again the next time the page opens.
          pending = null;
          if (live) setError(describeError(err));
        });
      return () => {
        live = false;
      };
    }, []);
    if (loaded) {
      const Page = loaded;
      return <Page {...props} />;
    }
    if (quiet) return null;
    return (
      <div class="page page-panel" aria-busy={!error}>
        <p class={error ? "form-error" : "muted"}>{error ? fmt(t.ui.loadFailed, { error }) : t.ui.loading}</p>
      </div>
    );
  };
}

