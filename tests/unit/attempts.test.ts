/**
 * Attempts from the start: the pick rule among approved attempts, each attempt's budget, the
 * cycled agents and models, VIGIL_ATTEMPT's source, what `vigil start --attempts` says, and the
 * VigilStatus search attribute a run with attempts keeps.
 */
import { describe, expect, it } from 'vitest';
import {
  attemptBudget,
  attemptOf,
  attemptsPullRequestBody,
  attemptsSearchStatus,
  liveAttemptBudget,
  bestUnapproved,
  cycled,
  multiplierMessage,
  pickAttempt,
  pickReason,
  type AttemptFacts,
} from '../../rules/attempts.js';

const a = (n: number, status: string, findings: number, iterations: number, spendUsd: number): AttemptFacts => ({
  n,
  status,
  findings,
  iterations,
  spendUsd,
});

describe('pickAttempt', () => {
  it('picks among approved attempts only: fewest findings, then iterations, then spend', () => {
    expect(pickAttempt([a(1, 'force_stopped', 0, 1, 0), a(2, 'council_approved', 2, 1, 0.1), a(3, 'council_approved', 1, 9, 9)])?.n).toBe(
      3,
    );
    expect(pickAttempt([a(1, 'council_approved', 0, 4, 0.1), a(2, 'council_approved', 0, 3, 5)])?.n).toBe(2);
    expect(pickAttempt([a(1, 'council_approved', 0, 3, 0.5), a(2, 'completion_promise_fulfilled', 0, 3, 0.2)])?.n).toBe(2);
    // A full tie: the lowest number, so the choice never depends on the order the attempts ended in.
    expect(pickAttempt([a(2, 'council_approved', 0, 3, 1), a(1, 'council_approved', 0, 3, 1)])?.n).toBe(1);
  });

  it('adversarial: an attempt approved with a blocking finding waived does not beat a clean one, however cheaper and quicker', () => {
    // Attempt 1 got a person to waive its blocking finding and ended in one iteration for nothing;
    // its finding was still found, so the clean attempt 2 wins.
    const waived = a(1, 'council_approved', 1, 1, 0);
    const clean = a(2, 'council_approved', 0, 6, 3.5);
    expect(pickAttempt([waived, clean])?.n).toBe(2);
    expect(pickAttempt([clean, waived])?.n).toBe(2);
  });

  it('control: the only approved attempt wins, and none approved picks none', () => {
    const facts = [a(1, 'max_iterations_reached', 0, 10, 1), a(2, 'council_approved', 3, 2, 1)];
    const w = pickAttempt(facts);
    expect(w?.n).toBe(2);
    expect(pickReason(facts, w as AttemptFacts)).toBe('attempt 2 was the only one approved');
    expect(pickAttempt([a(1, 'force_stopped', 0, 10, 1), a(2, 'failed', 0, 2, 0), a(3, 'stopped', 0, 1, 0)])).toBeNull();
    expect(bestUnapproved([a(1, 'failed', 0, 2, 0), a(2, 'force_stopped', 0, 10, 1)])?.n).toBe(2);
  });
});

describe('attempt helpers', () => {
  it('shares the budget so that all attempts together stay within it', () => {
    expect(attemptBudget(10, 3)).toBe(3.33);
    expect(attemptBudget(10, 3) * 3).toBeLessThanOrEqual(10);
    expect(attemptBudget(0, 3)).toBe(0);
  });

  it('a new budget: what the ended attempts did not spend, shared by the running ones; never more than the budget in all', () => {
    // $30 for three, one ended having spent $3: the two running get $13.50 each.
    expect(liveAttemptBudget(30, 3, 2)).toBe(13.5);
    expect(3 + 2 * liveAttemptBudget(30, 3, 2)).toBeLessThanOrEqual(30);
    expect(liveAttemptBudget(10, 0, 3) * 3).toBeLessThanOrEqual(10);
    // Nothing left (the ended ones spent it all): a cent each, so the running ones pause on their budget at once, never "no budget".
    expect(liveAttemptBudget(5, 6, 2)).toBe(0.01);
    expect(liveAttemptBudget(0, 6, 2)).toBe(0);
  });

  it("a pull request's body lists every attempt and says which won and why", () => {
    const body = attemptsPullRequestBody({
      runId: 'r1',
      prdTitle: 'Feature',
      winner: 2,
      why: 'the council picked attempt 2',
      attempts: [
        { n: 1, status: 'max_iterations_reached', iterations: 5, findings: 0, spendUsd: 1, provider: 'claude', model: '' },
        { n: 2, status: 'council_approved', iterations: 4, findings: 0, spendUsd: 2, provider: 'codex', model: 'o3' },
      ],
    });
    expect(body).toContain('delivers attempt 2: the council picked attempt 2');
    expect(body).toContain('| 1 | max_iterations_reached | 5 | 0 | $1.00 | claude |');
    expect(body).toContain('| 2 (winner) | council_approved | 4 | 0 | $2.00 | codex o3 |');
  });

  it('cycles agents and models over the attempts', () => {
    expect([1, 2, 3, 4].map((n) => cycled(['claude', 'codex'], n))).toEqual(['claude', 'codex', 'claude', 'codex']);
    expect(cycled([], 2)).toBeUndefined();
  });

  it('knows an attempt by its run id and its worktree together, never by the id alone', () => {
    expect(attemptOf('r1-attempt-2', '/repo/.vigil/worktrees/r1/attempt-2')).toBe(2);
    expect(attemptOf('r1-attempt-2', '/repo/.vigil/worktrees/r1/attempt-2/')).toBe(2);
    // A run a person named like an attempt, in an ordinary repository: no VIGIL_ATTEMPT.
    expect(attemptOf('r1-attempt-2', '/repo')).toBeNull();
    expect(attemptOf('r1-attempt-2', '/repo/.vigil/worktrees/r1/attempt-3')).toBeNull();
    expect(attemptOf('r1', '/repo/.vigil/worktrees/r1/attempt-2')).toBeNull();
  });

  it('says the multiplier and the budget rule before starting', () => {
    expect(multiplierMessage(3, 30)).toBe(
      '3 attempts: up to 3× the spend of one run; the budget covers all of them: each attempt gets $10.00 of $30.00.',
    );
    expect(multiplierMessage(2, 0)).toContain('2 attempts: up to 2× the spend of one run; no budget is set');
  });
});

describe('attemptsSearchStatus', () => {
  const s = (phase: string, more: { paused?: unknown; stopping?: unknown; outcome?: { status: string } | null } = {}) =>
    attemptsSearchStatus({ phase, outcome: null, ...more });
  it('says what a single run would: starting, running, paused (also while a pick is waited for), stopping, the outcome', () => {
    expect(s('starting')).toBe('starting');
    for (const phase of ['running', 'picking', 'comparing', 'delivering']) expect(s(phase)).toBe('running');
    expect(s('waiting_for_pick')).toBe('paused');
    expect(s('running', { paused: { by: 'alice', reason: '' } })).toBe('paused');
    expect(s('running', { paused: null, stopping: null })).toBe('running');
    // A stop wins over a pause: the run is ending.
    expect(s('running', { paused: { by: 'alice' }, stopping: { by: 'bob' } })).toBe('stopping');
    expect(s('ended', { outcome: { status: 'council_approved' } })).toBe('council_approved');
    expect(s('ended', { outcome: { status: 'stopped' }, stopping: { by: 'bob' } })).toBe('stopped');
  });
});
