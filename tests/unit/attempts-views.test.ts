/**
 * What the CLI and the console say of a run with attempts: `vigil status` with each running
 * attempt's own state, the lines `vigil watch` prints as it changes, the runs list's words, and the
 * inbox's "pick an attempt" card, with the line it shows when the runs with attempts could not be
 * listed (a real client whose server is not there: the list fails as it would).
 */
import { Client, Connection } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import type { AttemptsStatus } from '../../schemas/attempts.js';
import { patient } from '../support/patience.js';
import { attemptsLines, liveAttempts } from '../../cli/attempts-status.js';
import { progressLines } from '../../cli/attempts.js';
import { attemptsRowStatus, pickCards, runningAttempts } from '../../cli/console/attempts-section.js';

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

describe("the inbox's pick card", () => {
  const waiting: AttemptsStatus = {
    ...base,
    runId: 'r<x>',
    phase: 'waiting_for_pick',
    attempts: [row(1, 'ended', 'council_approved'), row(2, 'ended', 'council_approved')],
    why: "the council split; waiting for a person's pick: vigil pick r <1|2>",
    comparison: { picks: [], packPath: '/p', decidedBy: 'rule', split: true, pickFrom: [1, 2] },
  };

  it('shows a run that waits for a pick with a button per attempt to pick from, its id escaped', () => {
    const out = String(pickCards([waiting]));
    expect(out).toContain('data-run="r&lt;x&gt;" data-kind="pick"');
    expect(out).toContain('pick an attempt');
    expect(out).toContain('hx-post="/runs/r%3Cx%3E/pick"');
    expect(out.match(/<button name="attempt" value="\d" data-attempt="\d">Pick attempt \d<\/button>/g)).toHaveLength(2);
    expect(out).not.toContain('attempts could not be listed');
  });

  it('says when the runs with attempts could not be listed, with or without cards', () => {
    expect(String(pickCards([], 'run-a: no worker answered its status within 5 s'))).toContain(
      '<p class="problem" id="attempts-problem">attempts could not be listed: run-a: no worker answered its status within 5 s</p>',
    );
    expect(String(pickCards([waiting], 'x'))).toContain('data-kind="pick"');
  });

  it(
    'reports a list that failed as the problem, not as no run',
    async () => {
      // Nothing listens on port 1: the list fails at once (no retries asked of the client).
      const connection = await Connection.lazy({ address: '127.0.0.1:1', interceptors: [] });
      try {
        const r = await runningAttempts(new Client({ connection, namespace: 'default' }));
        expect(r.statuses).toEqual([]);
        expect(r.problem).toMatch(/^the list of running runs failed: .+/);
      } finally {
        await connection.close();
      }
    },
    patient(30_000),
  );
});
