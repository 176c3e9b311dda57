// Build-time only (build.mjs): the shell as HTML, painted before any script runs.
import { renderToString } from "preact-render-to-string";
import { App } from "./shell/app";

export function renderShell(): string {
  return renderToString(<App initialPath="/" prerender />);
}
