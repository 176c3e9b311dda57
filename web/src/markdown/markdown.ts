// Assistant Markdown: marked renders, DOMPurify sanitises (script, handlers, javascript: URLs and
// foreign embeds never survive); links open in a new tab without an opener.
//
// While an answer streams, `MarkdownView` renders each top-level block once, when it can no
// longer change (markdown-blocks.ts), and re-renders only the tail on every delta. Every piece
// of HTML it inserts, including the highlighter's, goes through the sanitiser first. Code blocks
// get a copy button (our own element, added after sanitising) and are highlighted once they are
// complete, with highlight.ts, highlight.js and its grammars loaded on first use.
//
// A chunk of its own, loaded through view.tsx (the transcript's seam, which also holds its CSS).
import DOMPurify from "dompurify";
import { Marked } from "marked";
import { BlockSplitter, MARKED_OPTIONS, isClosedFence, type Block } from "./blocks";

import { t } from "../i18n";

const marked = new Marked(MARKED_OPTIONS);

const PURIFY = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed"],
  FORBID_ATTR: ["style"],
};

let hooked = false;
function ensureHooks() {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A") {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    }
  });
}

function renderBlock(block: Block): DocumentFragment {
  ensureHooks();
  const html = block.tokens.length ? (marked.parser(block.tokens) as string) : "";
  return DOMPurify.sanitize(html, { ...PURIFY, RETURN_DOM_FRAGMENT: true });
}

/** Committed blocks per chunk (see MarkdownView.chunkFor). */
const CHUNK_BLOCKS = 16;

/** How long the "Copied" state stays visible. */
const COPIED_MS = 2000;

/** The language named by a fenced block's info string (marked's `language-<x>` class). */
function fenceLanguage(code: Element): string | null {
  for (const c of code.classList) if (c.startsWith("language-")) return c.slice("language-".length);
  return null;
}

export class MarkdownView {
  private splitter = new BlockSplitter();
  private tail: Node[] = [];
  private chunk: HTMLElement | null = null;
  private chunkBlocks = 0;
  private timers = new Set<ReturnType<typeof setTimeout>>();

  constructor(private readonly root: HTMLElement) {
    root.addEventListener("click", (e) => {
      const button = (e.target as Element | null)?.closest?.("button.code-copy");
      if (button instanceof HTMLButtonElement && root.contains(button)) void this.copy(button);
    });
  }

  update(text: string) {
    const { reset, added, tail } = this.splitter.update(text);
    if (reset) {
      this.root.replaceChildren();
      this.tail = [];
      this.chunk = null;
    }
    for (const node of this.tail) node.parentNode?.removeChild(node);
    for (const block of added) {
      const frag = renderBlock(block);
      this.decorate(frag, true);
      this.chunkFor().appendChild(frag);
    }
    const frag = renderBlock(tail);
    this.decorate(frag, isClosedFence(tail.tokens.find((t) => t.type !== "space")));
    this.tail = [...frag.childNodes];
    this.root.appendChild(frag);
  }

  /**
   * Committed blocks go into chunks of CHUNK_BLOCKS, each skipped by the browser while off
   * screen (`content-visibility` in markdown.css): a frame then walks a few dozen chunks instead
   * of every block of a long answer.
   */
  private chunkFor(): HTMLElement {
    if (!this.chunk || this.chunkBlocks >= CHUNK_BLOCKS) {
      this.chunk = document.createElement("div");
      this.chunk.className = "md-chunk";
      this.root.appendChild(this.chunk);
      this.chunkBlocks = 0;
    }
    this.chunkBlocks++;
    return this.chunk;
  }

  dispose() {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private decorate(frag: DocumentFragment, complete: boolean) {
    for (const pre of frag.querySelectorAll("pre")) {
      const code = pre.querySelector("code");
      if (!code) continue;
      const lang = fenceLanguage(code);
      const wrap = document.createElement("div");
      wrap.className = "code-block";
      const bar = document.createElement("div");
      bar.className = "code-bar";
      const label = document.createElement("span");
      label.className = "code-lang";
      label.textContent = lang ?? "";
      const button = document.createElement("button");
      button.type = "button";
      button.className = "code-copy";
      button.textContent = t.markdown.copy;
      button.setAttribute("aria-label", t.markdown.copyLabel);
      bar.append(label, button);
      pre.replaceWith(wrap);
      wrap.append(bar, pre);
      // The grammar table is a chunk too: most pages never show a code block.
      if (complete && lang) void import("./highlight").then((h) => h.highlightInto(code, lang, DOMPurify));
    }
  }

  private async copy(button: HTMLButtonElement) {
    const code = button.closest(".code-block")?.querySelector("pre code");
    if (!code) return;
    let ok = true;
    try {
      await navigator.clipboard.writeText(code.textContent ?? "");
    } catch {
      ok = false;
    }
    button.textContent = ok ? t.markdown.copied : t.markdown.copyFailed;
    button.classList.toggle("copied", ok);
    button.classList.toggle("failed", !ok);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      button.textContent = t.markdown.copy;
      button.classList.remove("copied", "failed");
    }, COPIED_MS);
    this.timers.add(timer);
  }
}
