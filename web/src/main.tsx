import { render } from "preact";
import { App } from "./app";
import "./styles.css";

// The prerendered shell is already on screen; render() reuses its nodes in place.
render(<App initialPath={location.pathname} />, document.getElementById("app")!);
