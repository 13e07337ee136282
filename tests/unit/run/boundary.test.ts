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
