import assert from "node:assert/strict";
import { test } from "node:test";
import { chooseModel, chosenModel, modelForMessage, modelsFromInfo } from "./models";

class MemoryStorage {
  map = new Map<string, string>();
  getItem(k: string) {
    return this.map.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.map.set(k, v);
  }
}

const info = {
  agent: {
    model: {
      id: "openai/a",
      providerOptions: {
        models: [
          { id: "openai/a", label: "Model A", provider: "openai" },
          { id: "anthropic/b", label: "Model B", provider: "anthropic" },
        ],
      },
    },
  },
};

test("the info document's list is the choice, and a foreign eve's one model stands alone", () => {
  assert.deepEqual(
    modelsFromInfo(info).map((m) => m.label),
    ["Model A", "Model B"],
  );
  assert.deepEqual(modelsFromInfo({ agent: { model: { id: "openai/gpt-x" } } }), [{ id: "openai/gpt-x", label: "gpt-x", provider: "openai" }]);
  assert.deepEqual(modelsFromInfo(null), []);
  assert.deepEqual(modelsFromInfo({ agent: { model: { providerOptions: { models: [{ label: "no id" }] } } } }), []);
});

test("a chat keeps its own model; new chats start on the last one chosen", () => {
  const store = new MemoryStorage() as unknown as Storage;
  const models = modelsFromInfo(info);
  assert.equal(chosenModel(models, "c1", store)?.id, "openai/a");
  chooseModel("anthropic/b", "c1", store);
  assert.equal(chosenModel(models, "c1", store)?.id, "anthropic/b");
  assert.equal(chosenModel(models, null, store)?.id, "anthropic/b");
  chooseModel("openai/a", "c2", store);
  assert.equal(chosenModel(models, "c1", store)?.id, "anthropic/b");
  assert.equal(modelForMessage(models, "c1", store), "anthropic/b");
  // A chat's first message pins the model it ran on.
  chooseModel("openai/a", null, store);
  assert.equal(modelForMessage(models, "c4", store), "openai/a");
  chooseModel("anthropic/b", "c5", store);
  assert.equal(chosenModel(models, "c4", store)?.id, "openai/a");
  // A model the owner no longer allows falls back to the default.
  chooseModel("gone/x", "c3", store);
  assert.equal(chosenModel(models, "c3", store)?.id, "openai/a");
  // One model: messages name none (a foreign eve never sees the extension).
  assert.equal(modelForMessage(models.slice(0, 1), "c1", store), undefined);
});
