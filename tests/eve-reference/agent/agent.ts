// The reference agent: eve 0.80.1 with an OpenAI-compatible model served by the deterministic
// fake model (tests/eve-client/fake-model.mjs) at FAKE_MODEL_BASE_URL.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { defineAgent } from "eve";

const fakeModel = createOpenAICompatible({
  name: "fake",
  baseURL: process.env.FAKE_MODEL_BASE_URL ?? "http://127.0.0.1:4010/v1",
  apiKey: "fake-key",
  // The fake model then ends each stream with a usage chunk, as eve-chat asks for one too.
  includeUsage: true,
});

export default defineAgent({
  model: fakeModel("fake-model"),
  modelContextWindowTokens: 64_000,
});
