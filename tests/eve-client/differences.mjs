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
export const DIFFERENCES = [
  {
    scenario: "approval: two calls of one step, then a reset while one waits",
    apply(record) {
      for (const stream of Object.values(record.streams ?? {})) {
        const merged = [];
        for (const e of stream.events ?? []) {
          const last = merged.at(-1);
          if (e.type === "actions.requested" && last?.type === "actions.requested" && last.data?.stepIndex === e.data?.stepIndex) {
            last.data = { ...last.data, actions: [...last.data.actions, ...e.data.actions] };
          } else merged.push(structuredClone(e));
        }
        stream.events = merged;
      }
    },
    reason: "a step with several tool calls: eve streams one actions.requested per call as each call's input completes, eve-chat one for the step once the model's answer is complete (docs/approvals.md)",
  },
  {
    scenario: "*",
    path: "streams.*.events.*.data.trace",
    reason: "eve-chat has no tracing backend: it omits the optional W3C `trace` of session.started / turn.started (docs/eve-protocol.md)",
  },
  {
    scenario: "model failure",
    apply(record) {
      for (const stream of Object.values(record.streams ?? {})) {
        for (const e of stream.events ?? []) {
          if (["step.failed", "turn.failed", "session.failed"].includes(e.type)) delete e.data?.details;
        }
      }
    },
    reason: "the details of a failed model call are the AI SDK's in eve (errorId, upstream*, responseBodySnippet); ours carry only the provider's message",
  },
  {
    scenario: "model failure",
    apply(record) {
      for (const stream of Object.values(record.streams ?? {})) {
        for (const e of stream.events ?? []) {
          if (["step.failed", "turn.failed", "session.failed"].includes(e.type) && e.data) delete e.data.message;
        }
      }
    },
    reason: "issue 12: eve streams the provider's own error text; eve-chat streams a generic \"The model provider returned an error.\" and logs the provider's words (they can name accounts, quotas or internal hosts)",
  },
  {
    scenario: "error cases",
    apply(record) {
      for (const step of record.steps ?? []) delete step.headers?.["cache-control"];
    },
    reason: "eve-chat sends cache-control: no-store on every JSON answer, errors included; eve's router leaves it off",
  },
];
