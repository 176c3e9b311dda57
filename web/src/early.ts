// Loaded as a blocking <script src> in <head> (allowed by the CSP's script-src 'self'; no inline
// script): applies the desktop sidebar state from the `eve-chat-sidebar` cookie, the route's
// layout class and the UI language to <html> before the first paint, so none of them flashes.
import { ROUTE_CLASSES, routeClass, sidebarClosedFromCookie } from "./shell/layout";
import { initialLocale } from "./i18n/detect";
import { shell as enShell } from "./i18n/en";
import { shell as zhShell } from "./i18n/zh-CN";

const root = document.documentElement;
if (sidebarClosedFromCookie(document.cookie)) root.classList.add("sidebar-closed");
root.classList.remove(...ROUTE_CLASSES);
root.classList.add(routeClass(location.pathname));

let store: Storage | null = null;
try {
  store = localStorage;
} catch {
  // Storage disabled: the browser's language decides.
}
const lang = initialLocale(store, navigator.languages ?? [navigator.language]);
root.lang = lang;
if (lang === "zh-CN") translateShell();

/**
 * The shell is prerendered in English (build.mjs). In another language, its strings are swapped
 * as the parser inserts them: mutation observers run at the microtask checkpoint after each
 * parser step, before the browser can render, so the English text is never painted. Only the
 * prerendered shell is translated: the observer stops when parsing ends, before the app runs.
 */
function translateShell() {
  const zh = zhShell as Record<string, string>;
  const map = new Map(Object.entries(enShell).map(([k, en]) => [en, zh[k]!]));
  document.title = zhShell.documentTitle;
  const swap = (s: string): string | undefined => {
    const hit = map.get(s.trim());
    return hit === undefined ? undefined : s.replace(s.trim(), hit);
  };
  const visit = (node: Node) => {
    if (node.nodeType === Node.TEXT_NODE) {
      const next = swap(node.nodeValue ?? "");
      if (next !== undefined) node.nodeValue = next;
      return;
    }
    if (!(node instanceof Element)) return;
    for (const attr of ["placeholder", "aria-label", "title"]) {
      const v = node.getAttribute(attr);
      const next = v === null ? undefined : swap(v);
      if (next !== undefined) node.setAttribute(attr, next);
    }
    if (node instanceof HTMLOptionElement && node.value === lang) node.selected = true;
    for (const child of node.childNodes) visit(child);
  };
  const observer = new MutationObserver((records) => {
    for (const r of records) for (const n of r.addedNodes) visit(n);
  });
  observer.observe(root, { childList: true, subtree: true });
  document.addEventListener(
    "readystatechange",
    () => {
      for (const r of observer.takeRecords()) for (const n of r.addedNodes) visit(n);
      observer.disconnect();
    },
    { once: true },
  );
}
