/**
 * The one line `vigil status`, `watch` and the console say of a run: a paused run names how to
 * resume it once, whether or not its pause reason already does.
 */
import { describe, expect, it } from 'vitest';
import { gatesLine, statusLine } from '../../cli/follow.js';
import { GateResultSchema } from '../../schemas/gates.js';
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

  it('adds what the pause still waits for: its reminder, re-route and deadline', () => {
    const T = Date.parse('2026-11-30T10:00:00.000Z');
    const iso = (h: number): string => new Date(T + h * 3_600_000).toISOString();
    const s = paused('escalation (dead letter): x');
    s.pause = {
      ...(s.pause as NonNullable<StatusSnapshot['pause']>),
      at: iso(0),
      deadlines: {
        remindAt: iso(4),
        rerouteAt: iso(24),
        deadlineAt: iso(72),
        onDeadline: 'stop',
        reminded: iso(4),
        rerouted: null,
        answered: null,
      },
    };
    expect(statusLine(s, null, T + 6 * 3_600_000)).toBe(
      'paused by vigil: escalation (dead letter): x (resume with `vigil resume run-1`) · reminder sent 2 h ago; re-routed in 18 h; stops in 66 h',
    );
  });
});

describe('gatesLine', () => {
  const gate = (gate: string, verdict: string, reason: string) =>
    GateResultSchema.parse({ gate, verdict, reason, treeHash: 'a'.repeat(40), iteration: 2 });

  it('marks a gate that checked nothing with a dash, not a tick: no build to run is no evidence', () => {
    const line = gatesLine(
      [
        gate('static_analysis', 'pass', 'no problems'),
        gate('build', 'pass', 'not applicable: no build detected (set buildCommand to name one)'),
        gate('tests', 'fail', 'node-test: 1 failed'),
      ],
      2,
    );
    expect(line).toBe('quality gates on iteration 2: ✓ static analysis · – build · ✗ tests — tests: node-test: 1 failed');
    expect(gatesLine([gate('build', 'pass', 'builds (`npm run build` exited 0)')], 2)).toBe('quality gates on iteration 2: ✓ build');
  });
});
