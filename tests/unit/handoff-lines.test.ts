/**
 * The attempts a handoff lists (rules/handoff-lines.ts): the seed's escalation file's "Attempts
 * Log", one line per recent iteration, the newest ten, what ran and what came of it.
 */
import { describe, expect, it } from 'vitest';
import { attemptLine, attemptsLog, HANDOFF_ATTEMPTS } from '../../rules/handoff-lines.js';
import type { IterationRecord } from '../../schemas/run.js';

const rec = (i: number, more: Partial<IterationRecord> = {}): IterationRecord => ({
  iteration: i,
  phase: 'ACT',
  tier: 'development',
  exitCode: 0,
  durationMs: 5_000,
  logPath: `log-${i}`,
  attempts: 1,
  claimed: false,
  changed: true,
  filesChangedSinceStart: 2,
  treeHash: 't',
  at: '2026-01-01T00:00:00Z',
  ...more,
});

describe('seed row escalation attempts log', () => {
  it('says what ran and what came of it, the watchdog and the sandbox included', () => {
    expect(
      attemptLine(rec(4, { provider: 'codex', model: 'gpt-5', exitCode: 124, changed: false, hung: 'no output for 15 min: ended' })),
    ).toBe('iteration 4 (ACT, tier development, codex gpt-5): failed (exit 124); no change; no output for 15 min: ended; 5s; log log-4');
    expect(attemptLine(rec(5, { limitHit: 'memory limit 4 GiB', durationMs: 3_600_000 }))).toContain('memory limit 4 GiB; 60m 00s');
  });

  it('keeps the newest ten, oldest first', () => {
    const log = attemptsLog(Array.from({ length: 14 }, (_, i) => rec(i + 1)));
    expect(log).toHaveLength(HANDOFF_ATTEMPTS);
    expect(log[0]).toMatch(/^iteration 5 /);
    expect(log.at(-1)).toMatch(/^iteration 14 /);
    expect(attemptsLog([])).toEqual([]);
  });
});
