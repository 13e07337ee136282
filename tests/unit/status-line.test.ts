/**
 * The one line `vigil status`, `watch` and the console say of a run: a paused run names how to
 * resume it once, whether or not its pause reason already does.
 */
import { describe, expect, it } from 'vitest';
import { statusLine } from '../../cli/follow.js';
import type { StatusSnapshot } from '../../schemas/status.js';

const paused = (reason: string | null): StatusSnapshot =>
  ({
    workflowId: 'run-1',
    iteration: 2,
    agentRunning: false,
    outcome: null,
    recentIterations: [],
    pause: { by: 'vigil', reason },
  }) as unknown as StatusSnapshot;

describe('statusLine of a paused run', () => {
  it('adds how to resume', () => {
    expect(statusLine(paused('gate failing 3 times'))).toBe('paused by vigil: gate failing 3 times (resume with `vigil resume run-1`)');
    expect(statusLine(paused(null))).toBe('paused by vigil (resume with `vigil resume run-1`)');
  });

  it('says it once where the reason already names the command', () => {
    const reason = 'authentication failed for provider codex: 401. Fix the credentials where the worker runs, then `vigil resume run-1`';
    const line = statusLine(paused(reason));
    expect(line).toBe(`paused by vigil: ${reason}`);
    expect(line.match(/vigil resume run-1/g)).toHaveLength(1);
  });
});
