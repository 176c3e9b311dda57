// The eval `eve eval --url` runs against eve-chat with an API token (cli-token.check.mjs).
import { defineEvalConfig } from "eve/evals";

export default defineEvalConfig({});
