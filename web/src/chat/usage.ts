// Token usage per answer and per chat, from eve's `step.completed.usage` (every model call's
// input and output tokens) and `step.started.modelId`. The providers this app speaks
// (OpenAI-compatible, Anthropic) report tokens, not cost, so no cost is shown.

export interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
  /** The model of the turn's latest step. */
  model?: string;
}

const count = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0);

/** `usage` with the event `e` (of the turn `turnId`) counted; unchanged for other events. */
export function addUsage(usage: Record<string, TurnUsage>, e: { type: string; data?: any }, turnId: string | undefined): Record<string, TurnUsage> {
  if (!turnId) return usage;
  const prev = usage[turnId] ?? { inputTokens: 0, outputTokens: 0 };
  if (e.type === "step.started" && typeof e.data?.modelId === "string" && e.data.modelId) {
    return { ...usage, [turnId]: { ...prev, model: e.data.modelId } };
  }
  if (e.type === "step.completed" && e.data?.usage) {
    const u = e.data.usage;
    return { ...usage, [turnId]: { ...prev, inputTokens: prev.inputTokens + count(u.inputTokens), outputTokens: prev.outputTokens + count(u.outputTokens) } };
  }
  return usage;
}

/** The sum of `turns`. */
export function totalUsage(turns: TurnUsage[]): TurnUsage {
  return turns.reduce((a, t) => ({ inputTokens: a.inputTokens + t.inputTokens, outputTokens: a.outputTokens + t.outputTokens }), { inputTokens: 0, outputTokens: 0 });
}
