/**
 * Spend and budget (rules/budget.ts, spec §1.12): reported cost or tokens priced by
 * model (cache reads at 0.1 x, writes at 1.25 x the input price), accumulated spend with its cache
 * counters, the budget limit, the one-time 80 % warning and the remaining budget.
 */
import { describe, expect, it } from 'vitest';
import {
  addOrchestrationUsage,
  addUsage,
  budgetExceeded,
  budgetWarning,
  costOf,
  orchestrationCapped,
  orchestrationShare,
  remainingBudget,
  type Spend,
} from '../../rules/budget.js';

describe('costOf', () => {
  it('prefers the reported cost, else prices tokens by model (per million)', () => {
    expect(costOf({ costUsd: 0.42, inputTokens: 1_000_000, outputTokens: 1_000_000, model: 'opus' })).toBe(0.42);
    expect(costOf({ costUsd: null, inputTokens: 1_000_000, outputTokens: 1_000_000, model: 'claude-opus-4' })).toBe(30);
    expect(costOf({ costUsd: null, inputTokens: 2_000_000, outputTokens: 0, model: 'haiku' })).toBe(2);
    expect(costOf({ costUsd: null, inputTokens: 1_000_000, outputTokens: 1_000_000, model: 'gpt-5.6-luna' })).toBe(4.5);
    // Unknown or missing model: priced as sonnet.
    expect(costOf({ costUsd: null, inputTokens: 1_000_000, outputTokens: 1_000_000, model: null })).toBe(18);
    expect(costOf({ costUsd: Number.NaN, inputTokens: 1_000_000, outputTokens: 0, model: 'mystery' })).toBe(3);
  });

  it('prices cache reads at 0.1 x and cache writes at 1.25 x the input price', () => {
    expect(costOf({ costUsd: null, inputTokens: 0, outputTokens: 0, model: 'opus', cacheReadTokens: 1_000_000 })).toBeCloseTo(0.5, 12);
    expect(costOf({ costUsd: null, inputTokens: 0, outputTokens: 0, model: 'opus', cacheWriteTokens: 1_000_000 })).toBeCloseTo(6.25, 12);
    expect(
      costOf({
        costUsd: null,
        inputTokens: 1_000_000,
        outputTokens: 1_000_000,
        model: 'sonnet',
        cacheReadTokens: 2_000_000,
        cacheWriteTokens: 400_000,
      }),
    ).toBeCloseTo(3 + 15 + 0.6 + 1.5, 12);
    // A reported cost already includes the cache.
    expect(costOf({ costUsd: 0.1, inputTokens: 0, outputTokens: 0, model: 'opus', cacheReadTokens: 1_000_000 })).toBe(0.1);
    // Nonsense cache counts count 0.
    expect(
      costOf({ costUsd: null, inputTokens: 0, outputTokens: 0, model: 'opus', cacheReadTokens: -5, cacheWriteTokens: Number.NaN }),
    ).toBe(0);
  });
});

describe('addUsage and budgetExceeded', () => {
  it('accumulates spend, ignores calls without a report, and trips at exactly the budget', () => {
    let s: Spend = { usd: 0, inputTokens: 0, outputTokens: 0, calls: 0 };
    s = addUsage(s, { costUsd: 0.5, inputTokens: 10, outputTokens: 20, model: null });
    s = addUsage(s, null);
    s = addUsage(s, { costUsd: 0.5, inputTokens: 5, outputTokens: 5, model: null });
    // No cache tokens seen: the original shape.
    expect(s).toEqual({ usd: 1, inputTokens: 15, outputTokens: 25, calls: 2 });
    expect(budgetExceeded(s.usd, 1)).toBe(true);
    expect(budgetExceeded(s.usd, 1.01)).toBe(false);
    expect(budgetExceeded(s.usd, 0)).toBe(false); // no budget
  });

  it('carries the cache counters once a call reports them', () => {
    let s: Spend = { usd: 0, inputTokens: 0, outputTokens: 0, calls: 0 };
    s = addUsage(s, { costUsd: null, inputTokens: 0, outputTokens: 0, model: 'opus', cacheReadTokens: 1_000_000 });
    expect(s).toEqual({ usd: 0.5, inputTokens: 0, outputTokens: 0, calls: 1, cacheReadTokens: 1_000_000, cacheWriteTokens: 0 });
    s = addUsage(s, { costUsd: 0, inputTokens: 1, outputTokens: 1, model: null, cacheWriteTokens: 10 });
    s = addUsage(s, { costUsd: 0, inputTokens: 1, outputTokens: 1, model: null });
    expect(s).toMatchObject({ calls: 3, cacheReadTokens: 1_000_000, cacheWriteTokens: 10 });
  });
});

describe('budgetWarning', () => {
  it('warns once, from 80 % of a non-zero budget until it is reached', () => {
    expect(budgetWarning(7.99, 10, false)).toBe(false);
    expect(budgetWarning(8, 10, false)).toBe(true);
    expect(budgetWarning(2.4, 3, false)).toBe(true); // 0.8 x 3 is 2.4000000000000004 in floating point
    expect(budgetWarning(9.99, 10, false)).toBe(true);
    expect(budgetWarning(9.99, 10, true)).toBe(false); // already warned
    expect(budgetWarning(10, 10, false)).toBe(false); // exceeded: budgetExceeded's case
    expect(budgetWarning(100, 0, false)).toBe(false); // no budget
  });
});

describe('remainingBudget', () => {
  it('is what is left under a budget, never negative, and null without one', () => {
    expect(remainingBudget(0.9, 1)).toBe(0.1);
    expect(remainingBudget(0, 25)).toBe(25);
    expect(remainingBudget(30, 25)).toBe(0);
    expect(remainingBudget(3, 0)).toBeNull();
  });
});

describe('orchestration spend', () => {
  const zero: Spend = { usd: 0, inputTokens: 0, outputTokens: 0, calls: 0 };
  const call = (costUsd: number | null) => ({ costUsd, inputTokens: 1000, outputTokens: 100, model: 'sonnet' });

  it('counts a reviewing call in the totals and in orchestration; the builder only in the totals', () => {
    let s = addUsage(zero, call(0.3)); // the builder
    expect(s.orchestration).toBeUndefined();
    s = addOrchestrationUsage(s, call(0.1));
    s = addOrchestrationUsage(s, call(null)); // priced by tokens: 1000 x 3 + 100 x 15 per million
    expect(s.calls).toBe(3);
    expect(s.usd).toBeCloseTo(0.4045, 10);
    expect(s.orchestration).toEqual({ calls: 2, usd: expect.closeTo(0.1045, 10) as number });
    expect(addOrchestrationUsage(s, null)).toBe(s);
  });

  it("gives orchestration's share by cost, by calls while nothing is priced, none before a call", () => {
    expect(orchestrationShare(zero)).toBeNull();
    const s = addOrchestrationUsage(addUsage(zero, call(0.3)), call(0.1));
    expect(orchestrationShare(s)).toBeCloseTo(0.25, 10);
    expect(orchestrationShare({ ...zero, calls: 4, orchestration: { calls: 3, usd: 0 } })).toBe(0.75);
  });
});

describe('the orchestration cap', () => {
  it('holds a completion check that would take orchestration past its share of the budget', () => {
    // $10 budget, 30 %: $3 for reviewers, checklist roles and council; two checks cost $2.40 so far.
    expect(orchestrationCapped(2.4, 2, 10, 0.3)).toEqual({ capped: true, capUsd: 3, nextUsd: 1.2 });
    expect(orchestrationCapped(1.2, 2, 10, 0.3)).toEqual({ capped: false, capUsd: 3, nextUsd: 0.6 });
    // Already at the cap: held even before the first check is priced.
    expect(orchestrationCapped(3, 0, 10, 0.3).capped).toBe(true);
    expect(orchestrationCapped(2.99, 0, 10, 0.3).capped).toBe(false);
  });

  it('is off without a share or without a budget', () => {
    expect(orchestrationCapped(100, 5, 10, 0).capped).toBe(false);
    expect(orchestrationCapped(100, 5, 0, 0.3)).toEqual({ capped: false, capUsd: 0, nextUsd: 20 });
  });
});
