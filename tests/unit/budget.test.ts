/**
 * Spend and budget (workflows/decisions/budget.ts, spec §1.12).
 */
import { describe, expect, it } from 'vitest';
import { addUsage, budgetExceeded, costOf } from '../../workflows/decisions/budget.js';

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
});

describe('addUsage and budgetExceeded', () => {
  it('accumulates spend, ignores calls without a report, and trips at exactly the budget', () => {
    let s = { usd: 0, inputTokens: 0, outputTokens: 0, calls: 0 };
    s = addUsage(s, { costUsd: 0.5, inputTokens: 10, outputTokens: 20, model: null });
    s = addUsage(s, null);
    s = addUsage(s, { costUsd: 0.5, inputTokens: 5, outputTokens: 5, model: null });
    expect(s).toEqual({ usd: 1, inputTokens: 15, outputTokens: 25, calls: 2 });
    expect(budgetExceeded(s.usd, 1)).toBe(true);
    expect(budgetExceeded(s.usd, 1.01)).toBe(false);
    expect(budgetExceeded(s.usd, 0)).toBe(false); // no budget
  });
});
