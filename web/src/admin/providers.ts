// The Providers tab's data (issue 22, docs/runtime.md): the `/api/admin/providers*` shapes
// and calls, and the tab's pure decisions (the models typed in a form, a model added from a
// test). Only the tab's chunk imports this module.
import { request } from "../api";

export type ProviderKind = "openai" | "anthropic";

export interface ProviderModel {
  model: string;
  label?: string;
  enabled: boolean;
  contextTokens?: number;
  /** The deployment's variables offer the same id: this entry is not used. */
  shadowed?: boolean;
}

export interface Provider {
  id: string;
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  hasKey: boolean;
  keyUnreadable: boolean;
  maxTokens: number | null;
  models: ProviderModel[];
  createdAt: string;
  updatedAt: string;
}

export interface ProviderList {
  bootstrap: { id: string; label: string }[];
  providers: Provider[];
  secretsKeySet: boolean;
}

export interface ProviderTest {
  ok: boolean;
  status?: number;
  message: string;
  models?: string[];
}

export interface ProviderInput {
  name?: string;
  kind?: ProviderKind;
  baseUrl?: string;
  /** A new key; `null` removes the stored one; absent keeps it. */
  apiKey?: string | null;
  maxTokens?: number | null;
  models?: ProviderModel[];
}

/** The base URL the server stores for an empty field (`eve_runtime::providers::OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`). */
export const PUBLIC_BASE_URL: Record<ProviderKind, string> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
};

const enc = encodeURIComponent;

export const providersApi = {
  list: () => request<ProviderList>("GET", "/api/admin/providers"),
  create: (input: ProviderInput) => request<Provider>("POST", "/api/admin/providers", input),
  update: (id: string, input: ProviderInput) => request<Provider>("PATCH", `/api/admin/providers/${enc(id)}`, input),
  remove: (id: string) => request<void>("DELETE", `/api/admin/providers/${enc(id)}`),
  test: (id: string) => request<ProviderTest>("POST", `/api/admin/providers/${enc(id)}/test`, {}),
};

/**
 * The models typed one per line (or comma-separated), in order and once each; an id the
 * provider already lists keeps its label and switch, a new one is offered.
 */
export function modelsFromText(text: string, current: ProviderModel[] = []): ProviderModel[] {
  const seen = new Set<string>();
  const out: ProviderModel[] = [];
  for (const raw of text.split(/[\n,]/)) {
    const model = raw.trim();
    if (!model || seen.has(model)) continue;
    seen.add(model);
    const known = current.find((m) => m.model === model);
    out.push(known ? strip(known) : { model, enabled: true });
  }
  return out;
}

/** A model as a request sends it (the listing's `shadowed` mark left out). */
function strip({ shadowed: _, ...m }: ProviderModel): ProviderModel {
  return m;
}

/** The list with model `model` switched on or off. */
export function withEnabled(models: ProviderModel[], model: string, enabled: boolean): ProviderModel[] {
  return models.map((m) => strip(m.model === model ? { ...m, enabled } : m));
}

/** The list with `model` (one the provider's test listed) added, offered. */
export function withModel(models: ProviderModel[], model: string): ProviderModel[] {
  if (models.some((m) => m.model === model)) return models.map(strip);
  return [...models.map(strip), { model, enabled: true }];
}

/** A max-tokens field: empty is the provider's default (`null`), else a positive integer. */
export function parseMaxTokens(text: string): number | null | undefined {
  const s = text.trim();
  if (!s) return null;
  if (!/^\d+$/.test(s)) return undefined;
  const n = Number(s);
  return n > 0 && Number.isSafeInteger(n) ? n : undefined;
}
