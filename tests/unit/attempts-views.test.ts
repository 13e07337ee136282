/**
 * What the CLI and the console say of a run with attempts: `vigil status` with each running
 * attempt's own state, the lines `vigil watch` prints as it changes, and the runs list's words.
 */
import { describe, expect, it } from 'vitest';
import type { AttemptsStatus } from '../../schemas/attempts.js';
import { attemptsLines, liveAttempts } from '../../cli/attempts-status.js';
import { progressLines } from '../../cli/attempts.js';
import { attemptsRowStatus } from '../../cli/console/attempts-section.js';

const row = (n: number, state: 'running' | 'ended', status: string | null = null) => ({
  n,
  workflowId: `r-attempt-${n}`,
  provider: 'claude',
  model: '',
  budgetUsd: 5,
  state,
  status,
  reason: null,
  findings: null,
  iterations: state === 'ended' ? 3 : null,
  spendUsd: state === 'ended' ? 1 : null,
});

const base: AttemptsStatus = {
  runId: 'r',
  phase: 'running',
  attempts: [row(1, 'running'), row(2, 'ended', 'force_stopped')],
  winner: null,
  why: null,
  branch: null,
  outcome: null,
};

describe('a run with attempts, as said', () => {
  it("status: a running attempt's own state where its run answered, else running", async () => {
    const s: AttemptsStatus = { ...base, paused: { by: 'alice', reason: 'lunch' }, budgetUsd: 10 };
    const live = await liveAttempts(s, async (id) => {
      expect(id).toBe('r-attempt-1');
      return { status: 'paused', iteration: 4, spend: { usd: 0.5 }, budgetUsd: 4.5, pause: { by: 'alice' } };
    });
    const lines = attemptsLines(s, live);
    expect(lines[0]).toBe('run r (2 attempts): running, paused (by alice)');
    expect(lines[1]).toBe('  attempt 1: paused (by alice), iteration 4, $0.50 of $4.50 · claude · r-attempt-1');
    expect(lines[2]).toContain('attempt 2: force_stopped, 3 iteration(s)');
    expect(lines).toContain('  budget    : $10.00 for all the attempts');
    // No answer (no worker): said as running, never guessed.
    const silent = await liveAttempts(s, () => Promise.reject(new Error('no worker')));
    expect(attemptsLines(s, silent)[1]).toBe('  attempt 1: running · claude · r-attempt-1');
  });

  it('watch: a line for a pause, a resume and a stop', () => {
    const paused = { ...base, paused: { by: 'alice', reason: '' } };
    expect(progressLines(base, paused)).toEqual(['paused by alice: every running attempt told']);
    expect(progressLines(paused, { ...base, paused: null })).toEqual(['resumed: every running attempt told']);
    expect(progressLines(base, { ...base, stopping: { by: 'bob', reason: '', now: false } })).toEqual([
      'stopping (by bob): no winner is delivered',
    ]);
  });

  it("the console's runs list: the phase, a pick waited for, the outcome and winner", () => {
    expect(attemptsRowStatus(base)).toBe('2 attempts: running');
    expect(attemptsRowStatus({ ...base, phase: 'waiting_for_pick' })).toBe('2 attempts: pick an attempt');
    expect(
      attemptsRowStatus({ ...base, phase: 'ended', winner: 1, outcome: { status: 'council_approved', reason: '', exitCode: 0 } }),
    ).toBe('2 attempts: council_approved (attempt 1)');
    expect(attemptsRowStatus(null)).toBe('attempts (no worker answered)');
  });
});
