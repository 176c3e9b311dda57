// The models a chat may run on: `/eve/v1/info` lists what the owner allows (llm_models, under
// agent.model.providerOptions.models; a foreign eve reports just its one agent.model.id). The
// choice is kept per chat in localStorage (the last one chosen is the default for new chats)
// and sent as `model` with each message; the agent keeps a session on its model otherwise.

export interface ModelOption {
  id: string;
  label: string;
  provider: string;
}

/** The models an info document lists, the default first. */
export function modelsFromInfo(info: unknown): ModelOption[] {
  const model = (info as { agent?: { model?: { id?: unknown; providerOptions?: { models?: unknown } } } } | null)?.agent?.model;
  const listed = model?.providerOptions?.models;
  if (Array.isArray(listed)) {
    const out: ModelOption[] = [];
    for (const m of listed) {
      if (m && typeof m.id === "string" && m.id) {
        out.push({ id: m.id, label: typeof m.label === "string" && m.label ? m.label : m.id, provider: typeof m.provider === "string" ? m.provider : m.id.split("/")[0] });
      }
    }
    if (out.length) return out;
  }
  if (typeof model?.id === "string" && model.id) return [{ id: model.id, label: model.id.split("/").slice(1).join("/") || model.id, provider: model.id.split("/")[0] }];
  return [];
}

import { rememberUploadPolicy } from "./attachments";

const KEY = "eve-chat.model";
const chatKey = (chatId: string) => `${KEY}.${chatId}`;

function storage(): Storage | null {
  try {
    return typeof localStorage === "undefined" ? null : localStorage;
  } catch {
    return null;
  }
}

/** Accounts mode: the account's default model (settings), after this browser's own choice. */
let accountDefault: string | null = null;

export function setAccountDefaultModel(id: string | null): void {
  accountDefault = id;
}

/** The model chosen for `chatId` (or, without one, for new chats), if it is still allowed:
 * the chat's own, else the last one chosen in this browser, else the account's default. */
export function chosenModel(models: ModelOption[], chatId: string | null, store: Storage | null = storage()): ModelOption | undefined {
  const ids = [chatId && store?.getItem(chatKey(chatId)), store?.getItem(KEY), accountDefault];
  for (const id of ids) {
    const hit = id ? models.find((m) => m.id === id) : undefined;
    if (hit) return hit;
  }
  return models[0];
}

/** Remembers `modelId` for `chatId` (and as the default for new chats). */
export function chooseModel(modelId: string, chatId: string | null, store: Storage | null = storage()): void {
  try {
    if (chatId) store?.setItem(chatKey(chatId), modelId);
    store?.setItem(KEY, modelId);
  } catch {
    // Storage full or refused: the choice lasts for this page only.
  }
}

/** The `model` a message of `chatId` names: only when there is a choice to make. */
export function modelForMessage(models: ModelOption[], chatId: string, store: Storage | null = storage()): string | undefined {
  if (models.length < 2) return undefined;
  const id = chosenModel(models, chatId, store)?.id;
  // The chat's first message pins it, so choosing another model elsewhere leaves it alone.
  if (id && !store?.getItem(chatKey(chatId))) {
    try {
      store?.setItem(chatKey(chatId), id);
    } catch {
      // Not kept: the chat follows the default.
    }
  }
  return id;
}

let loaded: Promise<ModelOption[]> | null = null;
let current: ModelOption[] = [];

/** The allowed models (fetched once per page; an error is an empty list, tried again later). */
export function loadModels(): Promise<ModelOption[]> {
  loaded ??= fetch("/eve/v1/info", { credentials: "same-origin", headers: { accept: "application/json" } })
    .then((r) => (r.ok ? r.json() : Promise.reject(new Error(String(r.status)))))
    .then((info) => {
      rememberUploadPolicy(info);
      return (current = modelsFromInfo(info));
    })
    .catch(() => {
      loaded = null;
      return [];
    });
  return loaded;
}

/** What [`loadModels`] found so far. */
export function knownModels(): ModelOption[] {
  return current;
}
