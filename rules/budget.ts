/**
 * Spend and budget (spec §1.12): what an agent call cost — its reported USD cost, else tokens
 * priced by model (USD per million tokens; unknown models are priced as `sonnet`; cache reads at
 * 0.1 x and cache writes at 1.25 x the model's input price) — whether the run's spend has reached
 * its budget, the one-time warning at 80 % of it, and what remains. A budget of 0 is no budget.
 */
export interface Usage {
  costUsd: number | null;
  inputTokens: number;
  outputTokens: number;
  model: string | null;
  /** Prompt-cache reads (claude `cache_read_tokens`); absent is 0. */
  cacheReadTokens?: number;
  /** Prompt-cache writes (claude `cache_creation_tokens`); absent is 0. */
  cacheWriteTokens?: number;
}

/** Cache reads and writes, priced relative to the model's input price. */
export const CACHE_READ_PRICE_FACTOR = 0.1;
export const CACHE_WRITE_PRICE_FACTOR = 1.25;

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

/** A token count as reported: absent, negative or not a number counts 0. */
const tokens = (n: number | undefined): number => (n !== undefined && Number.isFinite(n) && n > 0 ? n : 0);

export function costOf(u: Usage): number {
  if (u.costUsd !== null && Number.isFinite(u.costUsd) && u.costUsd >= 0) return u.costUsd;
  const p = priceOf(u.model);
  const input =
    u.inputTokens * p.input +
    tokens(u.cacheReadTokens) * p.input * CACHE_READ_PRICE_FACTOR +
    tokens(u.cacheWriteTokens) * p.input * CACHE_WRITE_PRICE_FACTOR;
  return (input + u.outputTokens * p.output) / 1_000_000;
}

export interface Spend {
  usd: number;
  inputTokens: number;
  outputTokens: number;
  calls: number;
  /** Absent is 0; carried once any call reported cache tokens. */
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /**
   * The part of it that orchestration cost (every call but the builder's: reviewers, the devil's
   * advocate, the checklist roles, council members); absent until the first such call.
   */
  orchestration?: { calls: number; usd: number };
}

/**
 * Spend after one more call (a call without a report adds nothing). The cache counters appear
 * only once non-zero, so a spend that never saw cache tokens keeps its original shape.
 */
export function addUsage(s: Spend, u: Usage | null): Spend {
  if (!u) return s;
  const cacheReadTokens = tokens(s.cacheReadTokens) + tokens(u.cacheReadTokens);
  const cacheWriteTokens = tokens(s.cacheWriteTokens) + tokens(u.cacheWriteTokens);
  return {
    ...s,
    usd: s.usd + costOf(u),
    inputTokens: s.inputTokens + u.inputTokens,
    outputTokens: s.outputTokens + u.outputTokens,
    calls: s.calls + 1,
    ...(cacheReadTokens > 0 || cacheWriteTokens > 0 ? { cacheReadTokens, cacheWriteTokens } : {}),
  };
}

/** Spend after one orchestration call (anyone's but the builder's): counted in the totals and in `orchestration`. */
export function addOrchestrationUsage<S extends Spend>(s: S, u: Usage | null): S {
  if (!u) return s;
  const o = s.orchestration ?? { calls: 0, usd: 0 };
  return { ...s, ...addUsage(s, u), orchestration: { calls: o.calls + 1, usd: o.usd + costOf(u) } };
}

/** Orchestration's share of the spend, 0 to 1 (by cost; by calls while nothing was priced); null before any call. */
export function orchestrationShare(s: Spend): number | null {
  const o = s.orchestration ?? { calls: 0, usd: 0 };
  if (s.usd > 0) return Math.min(1, o.usd / s.usd);
  return s.calls > 0 ? Math.min(1, o.calls / s.calls) : null;
}

/**
 * The spend after one agent call: its usage priced in, or — when the call reported none (a
 * `command` agent that writes no usage file, a CLI that printed none) — counted as a call of
 * unknown cost: a run's calls are never shown as free because nothing priced them.
 */
export function spendAfterCall(s: Spend & { unpricedCalls?: number }, u: Usage | null): Spend & { unpricedCalls?: number } {
  if (u) return addUsage(s, u);
  return { ...s, calls: s.calls + 1, unpricedCalls: (s.unpricedCalls ?? 0) + 1 };
}

/** Spend after `n` orchestration calls that reported no cost: counted in the totals and in `orchestration`, unpriced. */
export function addUnpricedOrchestration<S extends Spend & { unpricedCalls?: number }>(s: S, n: number): S {
  if (!(n > 0)) return s;
  const o = s.orchestration ?? { calls: 0, usd: 0 };
  return { ...s, calls: s.calls + n, unpricedCalls: (s.unpricedCalls ?? 0) + n, orchestration: { calls: o.calls + n, usd: o.usd } };
}

/** The calls that reported a cost: all of them but the unpriced. */
export function pricedCalls(s: Spend & { unpricedCalls?: number }): number {
  return Math.max(0, s.calls - (s.unpricedCalls ?? 0));
}

export function budgetExceeded(spendUsd: number, budgetUsd: number): boolean {
  return budgetUsd > 0 && spendUsd >= budgetUsd;
}

/**
 * True once: when spend is at or past 80 % of a non-zero budget but has not reached it (reaching
 * it is `budgetExceeded`'s), and the run has not been warned yet. The caller keeps `alreadyWarned`
 * (and may clear it when the budget is raised).
 */
export function budgetWarning(spendUsd: number, budgetUsd: number, alreadyWarned: boolean): boolean {
  if (alreadyWarned || !(budgetUsd > 0)) return false;
  // spend >= 0.8 x budget, compared as 5 x spend >= 4 x budget to avoid 0.8's binary rounding.
  return spendUsd * 5 >= budgetUsd * 4 && !budgetExceeded(spendUsd, budgetUsd);
}

/** USD left under a non-zero budget (never negative, to the micro-dollar), or null without one. */
export function remainingBudget(spendUsd: number, budgetUsd: number): number | null {
  if (!(budgetUsd > 0)) return null;
  return Math.max(0, Math.round((budgetUsd - spendUsd) * 1e6) / 1e6);
}

/**
 * The orchestration cap (knob `orchestrationBudgetShare`): reviewers, checklist roles and council
 * members may spend at most `share` of the budget. A completion check is not started when what
 * orchestration has spent, plus what one check has cost on average so far, would pass the cap —
 * the run pauses before the cap is exceeded, not after. Off when the share or the budget is 0.
 */
export function orchestrationCapped(
  spentUsd: number,
  checksSoFar: number,
  budgetUsd: number,
  share: number,
): { capped: boolean; capUsd: number; nextUsd: number } {
  const capUsd = budgetUsd > 0 && share > 0 ? Math.round(budgetUsd * share * 1e6) / 1e6 : 0;
  const nextUsd = checksSoFar > 0 ? spentUsd / checksSoFar : 0;
  return { capped: capUsd > 0 && (spentUsd >= capUsd || spentUsd + nextUsd > capUsd), capUsd, nextUsd };
}
