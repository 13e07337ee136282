/**
 * Spend and budget (spec §1.12): what an agent call cost — its reported USD cost, else tokens
 * priced by model (USD per million tokens; unknown models are priced as `sonnet`) — and whether
 * the run's spend has reached its budget. A budget of 0 is no budget.
 */
export interface Usage {
  costUsd: number | null;
  inputTokens: number;
  outputTokens: number;
  model: string | null;
}

/** USD per 1M input / output tokens. */
export const PRICES: Readonly<Record<string, { input: number; output: number }>> = {
  fable: { input: 10, output: 50 },
  opus: { input: 5, output: 25 },
  sonnet: { input: 3, output: 15 },
  haiku: { input: 1, output: 5 },
  'gpt-5.3-codex': { input: 1.75, output: 14 },
  'gpt-5.6-sol': { input: 2.5, output: 20 },
  'gpt-5.6-terra': { input: 1.5, output: 12 },
  'gpt-5.6-luna': { input: 0.5, output: 4 },
};

function priceOf(model: string | null): { input: number; output: number } {
  const m = (model ?? '').toLowerCase();
  const key = Object.keys(PRICES).find((k) => m.includes(k));
  return PRICES[key ?? 'sonnet'] as { input: number; output: number };
}

export function costOf(u: Usage): number {
  if (u.costUsd !== null && Number.isFinite(u.costUsd) && u.costUsd >= 0) return u.costUsd;
  const p = priceOf(u.model);
  return (u.inputTokens * p.input + u.outputTokens * p.output) / 1_000_000;
}

export interface Spend {
  usd: number;
  inputTokens: number;
  outputTokens: number;
  calls: number;
}

export function addUsage(s: Spend, u: Usage | null): Spend {
  if (!u) return s;
  return { usd: s.usd + costOf(u), inputTokens: s.inputTokens + u.inputTokens, outputTokens: s.outputTokens + u.outputTokens, calls: s.calls + 1 };
}

export function budgetExceeded(spendUsd: number, budgetUsd: number): boolean {
  return budgetUsd > 0 && spendUsd >= budgetUsd;
}
