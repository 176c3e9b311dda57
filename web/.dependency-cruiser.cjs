// The web app's import rules, checked by `npm run check:imports` (the first step of `npm test`,
// which tests/browser/run and so CI run): no import cycle anywhere in web/, and the chat's core
// (the eve client and reducer, the event log, branches, the runtime) depends on nothing above it.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "A cycle makes a module impossible to read, test or lazy-load on its own.",
      from: {},
      to: { circular: true },
    },
    {
      name: "chat-core-below-pages",
      severity: "error",
      comment:
        "The chat's core (chat/*.ts: the eve client and reducer, the event log, branches, the runtime) " +
        "is what every page builds on; it may use the API client, the catalogues and itself, never a page or the shell.",
      from: { path: "^src/chat/[^/]+\\.ts$", pathNot: "\\.test\\.ts$" },
      to: { path: "^src/", pathNot: "^src/(chat/[^/]+\\.ts|api/|i18n/)" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js", ".mjs"] },
  },
};
