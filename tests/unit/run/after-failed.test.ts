/**
 * A failed iteration without a server (tests/unit/run/support.ts): its findings, the retry count,
 * the backoff on a durable timer that a message cuts short, and no wait once the retries are spent.
 */
import { describe, expect, it } from 'vitest';
import { type AgentResult, blankAgentResult } from '../../../schemas/activities.js';
import { afterFailedIteration } from '../../../workflows/run/after-failed.js';
import { AGAIN } from '../../../workflows/run/run.js';
import { testRun } from './support.js';

const failed = (over: Partial<AgentResult> = {}): AgentResult =>
  blankAgentResult({ exitCode: 2, attempt: 1, tail: 'Error: boom', ...over });

describe('a failed iteration, server-less', () => {
  it('records its findings, counts it, and backs off on a timer', async () => {
    const { run, seen } = testRun({ knobs: { baseWaitSeconds: 10 }, state: (s) => void (s.iteration = 3) });
    expect(await afterFailedIteration(run, failed())).toBe(AGAIN);
    expect(run.state.consecutiveFailures).toBe(1);
    expect(run.state.lastFindings).toContain('Iteration 3 failed with exit code 2');
    expect(run.state.lastFindings).toContain('Error: boom');
    expect(seen.waits).toHaveLength(1);
    expect(seen.waits[0]).toMatchObject({
      ended: 'timer',
      summary: expect.stringMatching(/^backoff \d+s after failed iteration 3$/) as string,
    });
    expect(seen.waits[0]?.timeoutMs).toBeGreaterThan(0);
    expect(run.status).toBe('running');
    expect(run.backoffUntil).toBeNull();
    expect(seen.activities).toEqual([]);
  });

  it('a pause cuts the backoff short', async () => {
    const { run, seen } = testRun({
      knobs: { baseWaitSeconds: 600 },
      duringWait: (r) => void (r.state.pause = { reason: 'look', by: 'dana', at: '2026-01-01T00:00:00.000Z' }),
    });
    expect(await afterFailedIteration(run, failed())).toBe(AGAIN);
    expect(seen.waits[0]?.ended).toBe('condition');
    expect(run.status).toBe('running');
  });

  it('does not wait once the retries are spent', async () => {
    const { run, seen } = testRun({ knobs: { maxRetries: 2 }, state: (s) => void (s.consecutiveFailures = 1) });
    expect(await afterFailedIteration(run, failed())).toBe(AGAIN);
    expect(run.state.consecutiveFailures).toBe(2);
    expect(seen.waits).toEqual([]);
  });
});
