// Reads the raw curl transcripts in ./recordings (copied verbatim from
// ../shared/eve-reference/recordings: exchanges with a real eve 0.80.1 agent) into
// { name, command, status, headers, body, lines, events }.
//
// A transcript is: `# command: …`, `# started: …`, a blank line, the response (`curl -i`: the
// status line, headers, a blank line, the body), then curl's own notes (`curl: (28) …`, `# curl
// exit code: …`). Recordings piped through `ts` carry a `[hh:mm:ss.mmm] ` prefix on every line.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// Found next to this module, or (when bundled into .test-build/) under the web/ directory.
export const recordingsDir =
  [join(dirname(fileURLToPath(import.meta.url)), "recordings"), join(dirname(fileURLToPath(import.meta.url)), "..", "test-fixtures", "recordings"), join(process.cwd(), "test-fixtures", "recordings")].find((d) =>
    existsSync(d),
  ) ?? "test-fixtures/recordings";

export function parseTranscript(name, text) {
  const raw = text.replace(/\r/g, "").split("\n").map((l) => l.replace(/^\[\d\d:\d\d:\d\d\.\d+\] ?/, ""));
  const command = (raw.find((l) => l.startsWith("# command: ")) ?? "").slice("# command: ".length);
  const start = raw.findIndex((l) => l.startsWith("HTTP/"));
  if (start < 0) return { name, command, status: 0, headers: {}, body: "", lines: [], events: [] };
  const status = Number(raw[start].split(" ")[1]);
  const headers = {};
  let i = start + 1;
  for (; i < raw.length && raw[i] !== ""; i++) {
    const c = raw[i].indexOf(":");
    headers[raw[i].slice(0, c).trim().toLowerCase()] = raw[i].slice(c + 1).trim();
  }
  const lines = [];
  for (i += 1; i < raw.length; i++) {
    const l = raw[i];
    if (l.startsWith("curl: (") || l.startsWith("# curl exit code")) break;
    lines.push(l);
  }
  // The transcript ends the body with the newline before curl's note; drop that empty tail.
  while (lines.length && lines[lines.length - 1] === "") lines.pop();
  const body = lines.length ? lines.join("\n") + "\n" : "";
  const events = [];
  for (const l of lines) {
    if (!l.trim()) continue;
    const v = JSON.parse(l);
    if (v && typeof v === "object" && typeof v.type === "string") events.push(v);
  }
  return { name, command, status, headers, body, lines, events };
}

export function loadRecordings() {
  return readdirSync(recordingsDir)
    .filter((f) => f.endsWith(".txt"))
    .sort()
    .map((f) => parseTranscript(f.replace(/\.txt$/, ""), readFileSync(join(recordingsDir, f), "utf8")));
}

/** The recorded streams: every transcript whose response carries `x-eve-stream-version`. */
export function loadStreams() {
  return loadRecordings().filter((r) => r.headers["x-eve-stream-version"] !== undefined);
}
