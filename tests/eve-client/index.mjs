// `node --test tests/eve-client/` runs this folder as one module (package.json "main"), since
// Node >= 21 takes test-runner arguments as file globs and does not search a folder given by
// name. It loads every suite of the folder; `node --test tests/eve-client/*.test.mjs` runs them
// as separate files instead.
import "./client.test.mjs";
import "./side-by-side.test.mjs";
