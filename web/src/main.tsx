import { render } from "preact";
import { App } from "./shell/app";
import { setLocale, startLocale } from "./i18n";
import { preloadMarkdown } from "./markdown/view";
import "./styles.css";

// The same choice the early script made for the prerendered shell; its catalogue first (a
// chunk of its own unless English), falling back to English if that chunk cannot be loaded.
await setLocale(startLocale()).catch(() => setLocale("en"));
// The prerendered shell is already on screen; render() reuses its nodes in place.
render(<App initialPath={location.pathname} />, document.getElementById("app")!);
// Before the app asks for the viewer and so before any chat is fetched: an answer on screen is
// then normally Markdown from its first paint (markdown/view.tsx says why not await it here).
preloadMarkdown();
// For tests/browser/perf.mjs: the app has rendered and handles input from here on.
performance.mark("eve-chat:interactive");
