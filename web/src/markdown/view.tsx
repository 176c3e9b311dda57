// The transcript's Markdown seam, in the first-load bundle; the renderer behind it (marked,
// DOMPurify, markdown.ts: about a third of the app's JavaScript) is a chunk of its own (issue 35).
//
// Why both a preload and a plain-text fallback: `preloadMarkdown` (main.tsx) asks for the chunk
// right after the app's first render, before the app has even asked who is signed in, and a
// chat's events are only fetched once that answer is in, so on a cold load of /chat/:id the
// renderer is normally there before there is an answer to render. Holding the transcript back
// until it is would tie the chat's first paint to a second download; so when the chunk is
// slower (or its fetch failed), an answer is shown as plain text, set with `textContent`, which
// never parses HTML: nothing unsanitised reaches the DOM, only ever DOMPurify's output does.
import type { MarkdownView } from "./markdown";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
// Here rather than in markdown.ts: esbuild writes a lazy chunk's CSS to a file nothing loads.
import "./markdown.css";

type Renderer = typeof import("./markdown");

let renderer: Renderer | null = null;
let pending: Promise<Renderer> | null = null;

/** The renderer chunk, fetched once; a failed fetch (a deploy replaced it, the network
 * dropped) is tried again by the next caller. */
export function loadMarkdown(): Promise<Renderer> {
  return (pending ??= import("./markdown").then(
    (m) => (renderer = m),
    (err: unknown) => {
      pending = null;
      throw err;
    },
  ));
}

/** Starts fetching the renderer without waiting for it (see the opening comment). */
export function preloadMarkdown() {
  loadMarkdown().catch(() => {
    // Each MarkdownBlock asks again; until one succeeds, answers stay plain text.
  });
}

// Preact owns the container; MarkdownView owns its children (rendered block by block).
export function MarkdownBlock({ text }: { text: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const view = useRef<MarkdownView | null>(null);
  const [ready, setReady] = useState(renderer);
  useEffect(() => {
    if (ready) return;
    let live = true;
    loadMarkdown().then(
      (m) => live && setReady(m),
      () => {},
    );
    return () => {
      live = false;
    };
  }, [ready]);
  useLayoutEffect(() => {
    const root = ref.current!;
    if (!ready) {
      root.textContent = text;
      return;
    }
    if (!view.current) {
      root.replaceChildren();
      view.current = new ready.MarkdownView(root);
    }
    view.current.update(text);
  }, [text, ready]);
  useLayoutEffect(() => () => view.current?.dispose(), []);
  return <div class={ready ? "markdown" : "markdown markdown-plain"} ref={ref} />;
}
