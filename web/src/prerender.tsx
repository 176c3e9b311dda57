// Build-time only (build.mjs): the shell as HTML, painted before any script runs.
import { renderToString } from "preact-render-to-string";
import { App } from "./shell/app";

/** The shell at `path`: "/" for index.html, an unknown path for 404.html (the not-found view
 * inside the app shell, which the app then takes over like any page). */
export function renderShell(path = "/"): string {
  return renderToString(<App initialPath={path} prerender />);
}
