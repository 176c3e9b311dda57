import { render } from "preact";
import { App } from "./app";
import "./styles.css";

// The prerendered shell is already on screen; render() reuses its nodes in place.
render(<App initialPath={location.pathname} />, document.getElementById("app")!);
// For tests/browser/perf.mjs: the app has rendered and handles input from here on.
performance.mark("eve-chat:interactive");
