/**
 * The boundary without a server (tests/unit/run/support.ts): what it answers, and that it
 * schedules nothing where it must not.
 */
import { describe, expect, it } from 'vitest';
import { atBoundary } from '../../../workflows/run/boundary.js';
import { AGAIN, GO } from '../../../workflows/run/run.js';
import { testRun } from './support.js';

/** The desktop channel (on by default) takes every notification. */
const notified = (arg: unknown) => ({
  dedupeKey: (arg as { notification: { dedupeKey: string } }).notification.dedupeKey,
  results: [],
  delivered: 1,
  failed: 0,
});

describe('the boundary, server-less', () => {
  it('lets the next iteration start when nothing waits, and schedules nothing', async () => {
    const { run, seen } = testRun();
    expect(await atBoundary(run)).toBe(GO);
    expect(seen.activities).toEqual([]);
    expect(seen.waits).toEqual([]);
    expect(run.state.pause).toBeNull();
  });

  it('pauses a run whose spend reached its budget, names the command that raises it, and goes round', async () => {
    const { run, seen } = testRun({
      knobs: { budgetUsd: 5 },
      state: (s) => void (s.spend = { ...s.spend, usd: 5.5 }),
      activities: { 'people.notify': notified },
    });
    expect(await atBoundary(run)).toBe(AGAIN);
    expect(run.state.pause?.by).toBe('vigil');
    expect(run.state.pause?.reason).toContain('budget exceeded: $5.50 of $5.00');
    expect(run.state.pause?.reason).toContain('vigil budget vigil-test --usd N');
    // The person is told, and nothing else is scheduled.
    expect(seen.activities.map((a) => a.name)).toEqual(['people.notify']);
    expect(run.state.notifications.sent).toBe(1);
  });

  it('a run under its budget is not paused (control)', async () => {
    const { run } = testRun({ knobs: { budgetUsd: 5 }, state: (s) => void (s.spend = { ...s.spend, usd: 4.99 }) });
    expect(await atBoundary(run)).toBe(GO);
    expect(run.state.pause).toBeNull();
  });

  it("waits for a person's pause to end, then goes round with the run running again", async () => {
    const { run, seen } = testRun({
      // No deadline: the pause waits for a person alone (a deadline's timer is tests/workflow/pause-deadlines.test.ts's).
      knobs: { escalationDeadline: 0 },
      activities: { 'people.notify': notified },
      state: (s) => void (s.pause = { reason: 'lunch', by: 'alice', at: '2026-01-01T00:00:00.000Z' }),
      duringWait: (r) => void (r.state.pause = null),
    });
    expect(await atBoundary(run)).toBe(AGAIN);
    expect(seen.waits).toHaveLength(1);
    expect(seen.waits[0]).toMatchObject({ timeoutMs: null, ended: 'condition' });
    expect(run.status).toBe('running');
    expect(run.state.pause).toBeNull();
  });

  it('a stop that ends the pause leaves the run stopping', async () => {
    const { run } = testRun({
      knobs: { escalationDeadline: 0 },
      activities: { 'people.notify': notified },
      state: (s) => void (s.pause = { reason: 'lunch', by: 'alice', at: '2026-01-01T00:00:00.000Z' }),
      duringWait: (r) => void (r.stopRequest = { reason: 'done for today', by: 'alice', now: false }),
    });
    expect(await atBoundary(run)).toBe(AGAIN);
    expect(run.status).toBe('stopping');
  });
});

describe('the one-time grace at the cap, server-less (rules/grace.ts)', () => {
  /** A run at its cap (3) whose last iteration claimed and failed; `loopRules` as runs of this release have it. */
  const atCap = (input: { loopRules?: 1 } = { loopRules: 1 }, graceUsed = false) =>
    testRun({
      knobs: { maxIterations: 3 },
      input,
      state: (s) => {
        s.iteration = 3;
        s.lastFindings = 'Iteration 3 failed with exit code 1.';
        if (graceUsed) s.iterationGrace = { at: 3 };
        s.recentIterations = [3].map((iteration) => ({
          iteration,
          phase: 'VERIFY' as const,
          tier: 'development' as const,
          exitCode: 1,
          durationMs: 10,
          logPath: '/l',
          attempts: 1,
          claimed: true,
          changed: true,
          filesChangedSinceStart: 1,
          treeHash: 't3',
          at: '2026-01-01T00:00:00.000Z',
        }));
      },
    });

  it('grants one more iteration to a pending claim at the cap, says why, and keeps the failure in the findings', async () => {
    const { run, seen } = atCap();
    expect(await atBoundary(run)).toBe(GO);
    expect(run.state.iterationGrace).toEqual({ at: 3 });
    expect(run.state.lastFindings).toMatch(
      /^Your completion claim of iteration 3 was not judged .*\n\nIteration 3 failed with exit code 1\.$/s,
    );
    expect(seen.activities).toEqual([]);
  });

  it('adversarial: once granted, the cap is 4 and the run ends there (no second grace)', async () => {
    const { run } = atCap({ loopRules: 1 }, true);
    run.state.iteration = 4;
    // Ending the run asks its activities (the outcome's record), which this port does not answer: the run did not go on.
    await expect(atBoundary(run)).rejects.toThrow(/unexpected activity/);
    expect(run.state.iterationGrace).toEqual({ at: 3 });
  });

  it('a run started before the rule (no loopRules in its input) ends at its cap as it did', async () => {
    const { run } = atCap({});
    await expect(atBoundary(run)).rejects.toThrow(/unexpected activity/);
    expect(run.state.iterationGrace).toBeUndefined();
  });
});
