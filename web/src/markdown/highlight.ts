// Syntax highlighting for complete code blocks: highlight.js core and each grammar are loaded
// with dynamic import() the first time a block needs them (separate chunks, not first-load JS).
// A fence naming a language not listed here stays plain text.
// DOMPurify comes from markdown.ts, the only caller: imported here too, esbuild would move it
// into a chunk shared by both, and the renderer would take two round trips to load (view.tsx).
import type { DOMPurify } from "dompurify";

type Grammar = { default: import("highlight.js").LanguageFn };

const GRAMMARS: Record<string, () => Promise<Grammar>> = {
  bash: () => import("highlight.js/lib/languages/bash"),
  c: () => import("highlight.js/lib/languages/c"),
  cpp: () => import("highlight.js/lib/languages/cpp"),
  csharp: () => import("highlight.js/lib/languages/csharp"),
  css: () => import("highlight.js/lib/languages/css"),
  dart: () => import("highlight.js/lib/languages/dart"),
  diff: () => import("highlight.js/lib/languages/diff"),
  dockerfile: () => import("highlight.js/lib/languages/dockerfile"),
  elixir: () => import("highlight.js/lib/languages/elixir"),
  go: () => import("highlight.js/lib/languages/go"),
  graphql: () => import("highlight.js/lib/languages/graphql"),
  haskell: () => import("highlight.js/lib/languages/haskell"),
  ini: () => import("highlight.js/lib/languages/ini"),
  java: () => import("highlight.js/lib/languages/java"),
  javascript: () => import("highlight.js/lib/languages/javascript"),
  json: () => import("highlight.js/lib/languages/json"),
  kotlin: () => import("highlight.js/lib/languages/kotlin"),
  lua: () => import("highlight.js/lib/languages/lua"),
  makefile: () => import("highlight.js/lib/languages/makefile"),
  markdown: () => import("highlight.js/lib/languages/markdown"),
  perl: () => import("highlight.js/lib/languages/perl"),
  php: () => import("highlight.js/lib/languages/php"),
  powershell: () => import("highlight.js/lib/languages/powershell"),
  python: () => import("highlight.js/lib/languages/python"),
  r: () => import("highlight.js/lib/languages/r"),
  ruby: () => import("highlight.js/lib/languages/ruby"),
  rust: () => import("highlight.js/lib/languages/rust"),
  scala: () => import("highlight.js/lib/languages/scala"),
  scss: () => import("highlight.js/lib/languages/scss"),
  sql: () => import("highlight.js/lib/languages/sql"),
  swift: () => import("highlight.js/lib/languages/swift"),
  typescript: () => import("highlight.js/lib/languages/typescript"),
  xml: () => import("highlight.js/lib/languages/xml"),
  yaml: () => import("highlight.js/lib/languages/yaml"),
};

/** Fence names (lower case) → the grammar that highlights them. */
const ALIASES: Record<string, string> = {
  "bash": "bash",
  "sh": "bash",
  "shell": "bash",
  "zsh": "bash",
  "console": "bash",
  "c": "c",
  "h": "c",
  "cpp": "cpp",
  "c++": "cpp",
  "cc": "cpp",
  "cxx": "cpp",
  "hpp": "cpp",
  "csharp": "csharp",
  "cs": "csharp",
  "c#": "csharp",
  "css": "css",
  "dart": "dart",
  "diff": "diff",
  "patch": "diff",
  "dockerfile": "dockerfile",
  "docker": "dockerfile",
  "elixir": "elixir",
  "ex": "elixir",
  "exs": "elixir",
  "go": "go",
  "golang": "go",
  "graphql": "graphql",
  "gql": "graphql",
  "haskell": "haskell",
  "hs": "haskell",
  "ini": "ini",
  "toml": "ini",
  "java": "java",
  "javascript": "javascript",
  "js": "javascript",
  "jsx": "javascript",
  "mjs": "javascript",
  "cjs": "javascript",
  "json": "json",
  "jsonc": "json",
  "kotlin": "kotlin",
  "kt": "kotlin",
  "lua": "lua",
  "makefile": "makefile",
  "make": "makefile",
  "mk": "makefile",
  "markdown": "markdown",
  "md": "markdown",
  "perl": "perl",
  "pl": "perl",
  "php": "php",
  "powershell": "powershell",
  "ps1": "powershell",
  "python": "python",
  "py": "python",
  "r": "r",
  "ruby": "ruby",
  "rb": "ruby",
  "rust": "rust",
  "rs": "rust",
  "scala": "scala",
  "scss": "scss",
  "sql": "sql",
  "swift": "swift",
  "typescript": "typescript",
  "ts": "typescript",
  "tsx": "typescript",
  "xml": "xml",
  "html": "xml",
  "svg": "xml",
  "xhtml": "xml",
  "yaml": "yaml",
  "yml": "yaml",
};

/** Larger blocks stay plain: highlighting them would be one long task on the main thread. */
const MAX_HIGHLIGHT_CHARS = 100_000;

/** The grammar for a fence's language name, or null for plain text. */
export function grammarFor(fence: string): string | null {
  return Object.hasOwn(ALIASES, fence.toLowerCase()) ? ALIASES[fence.toLowerCase()] : null;
}

let core: Promise<typeof import("highlight.js/lib/core").default> | null = null;
const loading = new Map<string, Promise<void>>();
/** highlight.js output by grammar and source, so a re-rendered tail is not highlighted again. */
const cache = new Map<string, string>();
const CACHE_MAX = 200;

async function load(name: string) {
  core ??= import("highlight.js/lib/core").then((m) => m.default);
  const hljs = await core;
  let pending = loading.get(name);
  if (!pending) {
    pending = GRAMMARS[name]().then((g) => {
      if (!hljs.getLanguage(name)) hljs.registerLanguage(name, g.default);
    });
    loading.set(name, pending);
  }
  await pending;
  return hljs;
}

/** Replaces the text of `code` with its highlighted, sanitised markup, unless the element was
 * re-rendered or removed meanwhile. Failures (a chunk that does not load) leave it plain. */
export async function highlightInto(code: Element, fence: string, purify: DOMPurify): Promise<void> {
  const name = grammarFor(fence);
  const source = code.textContent ?? "";
  if (!name || source.length > MAX_HIGHLIGHT_CHARS) return;
  const key = name + "\0" + source;
  let html = cache.get(key);
  if (html === undefined) {
    try {
      const hljs = await load(name);
      html = purify.sanitize(hljs.highlight(source, { language: name, ignoreIllegals: true }).value, {
        ALLOWED_TAGS: ["span"],
        ALLOWED_ATTR: ["class"],
      });
    } catch {
      return;
    }
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
    cache.set(key, html);
  }
  if (code.textContent !== source) return;
  code.innerHTML = html;
  code.classList.add("hljs");
  code.setAttribute("data-highlighted", name);
}
