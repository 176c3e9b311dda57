// Deliberate differences between eve-chat's /eve/v1/* and the eve 0.80.1 reference, applied by the
// side-by-side harness (side-by-side.mjs, applyDifferences) to both records before they are
// compared. Every entry needs a `reason`; keep the list short and specific — a path that hides a
// whole event or a whole stream hides real protocol bugs too.
//
//   { scenario: "model failure", path: "streams.main.events.[type=step.failed].data.details",
//     reason: "our provider errors carry no AI SDK details (name, upstream*, responseBodySnippet)" }
//   { scenario: "*", path: "streams.*.headers.x-accel-buffering", reason: "…" }
//   { scenario: "error cases", apply(record) { … }, reason: "…" }
//
// Paths: dot-separated keys, array indexes, `*`, or `[field=value]` to pick array elements
// (`[type=…]` for events, `[label=…]` for steps). The value at the path is deleted on both sides.
export const DIFFERENCES = [];
