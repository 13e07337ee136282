/**
 * The one completion-check rule (rules/completion-check.ts): whatever refuses a
 * check, the safety valves see a rejected evaluation, and their reason names the real cause.
 */
import { describe, expect, it } from 'vitest';
import { afterRefusal, causeLabel, checksLine, emptyDiffRefusal, recordCheck } from '../../rules/completion-check.js';
import { CHECK_CAUSES, emptyCompletionChecks, type ConvergenceState } from '../../schemas/run.js';
import { defaultKnobs } from '../../schemas/knobs.js';

const conv = (over: Partial<ConvergenceState> = {}): ConvergenceState => ({
  lastHash: 'h',
  consecutiveNoChange: 0,
  recentHashes: [],
  doneSignals: 0,
  totalDoneSignals: 0,
  ...over,
});
const knobs = defaultKnobs();

describe('emptyDiffRefusal', () => {
  it('refuses a tree with no file changed since the run started, and only that', () => {
    expect(emptyDiffRefusal(0)).toBe('no file changed since the run started');
    expect(emptyDiffRefusal(1)).toBeNull();
    expect(emptyDiffRefusal(40)).toBeNull();
  });
});

describe('afterRefusal: every refusal is a rejected evaluation for the valves', () => {
  it.each(CHECK_CAUSES)('a stagnant run refused by %s is force-stopped at twice the stagnation limit, naming no change first', (cause) => {
    const at9 = afterRefusal(conv({ consecutiveNoChange: 9 }), { iteration: 9, trigger: 'circuit_breaker', cause, reason: 'x' }, knobs);
    expect(at9.end).toBe(false);
    const at10 = afterRefusal(
      conv({ consecutiveNoChange: 10 }),
      { iteration: 10, trigger: 'circuit_breaker', cause, reason: 'why it refused' },
      knobs,
    );
    expect(at10.end).toBe(true);
    if (at10.end) {
      expect(at10.reason).toMatch(/^stopped without approval: no change for 10 iterations in a row/);
      expect(at10.reason).toContain(`the last completion check was refused by ${causeLabel(cause)}: why it refused`);
    }
  });

  it('ten claims without approval stop the run whatever refused them, and say so', () => {
    const r = afterRefusal(
      conv({ totalDoneSignals: 10, doneSignals: 10 }),
      { iteration: 10, trigger: 'claim', cause: 'quality_gates', reason: 'doc coverage: no README' },
      knobs,
    );
    expect(r.end).toBe(true);
    if (r.end)
      expect(r.reason).toBe(
        'stopped without approval: 10 completion claims without approval (doneSignalLimit 10); the last completion check was ' +
          'refused by the quality gates: doc coverage: no README',
      );
  });

  it('records what refused the check', () => {
    const r = afterRefusal(
      conv(),
      { iteration: 4, trigger: 'tests_green', cause: 'code_review', reason: 'blocked by security-sentinel' },
      knobs,
    );
    expect(r).toEqual({
      end: false,
      check: { iteration: 4, trigger: 'tests_green', approved: false, cause: 'code_review', reason: 'blocked by security-sentinel' },
    });
  });

  it('follows the knobs', () => {
    const k = { stagnationLimit: 2, doneSignalLimit: 3 };
    expect(
      afterRefusal(conv({ consecutiveNoChange: 4 }), { iteration: 4, trigger: 'circuit_breaker', cause: 'evidence', reason: 'x' }, k).end,
    ).toBe(true);
    expect(afterRefusal(conv({ totalDoneSignals: 3 }), { iteration: 3, trigger: 'claim', cause: 'evidence', reason: 'x' }, k).end).toBe(
      true,
    );
    expect(
      afterRefusal(
        conv({ totalDoneSignals: 2, consecutiveNoChange: 3 }),
        { iteration: 3, trigger: 'claim', cause: 'evidence', reason: 'x' },
        k,
      ).end,
    ).toBe(false);
  });
});

describe('recordCheck and checksLine', () => {
  it('counts checks, refusals by cause, and keeps the last', () => {
    let c = emptyCompletionChecks();
    expect(checksLine(c)).toBeNull();
    c = recordCheck(c, {
      iteration: 3,
      trigger: 'claim',
      approved: false,
      cause: 'evidence',
      reason: 'no file changed since the run started',
    });
    c = recordCheck(c, {
      iteration: 4,
      trigger: 'claim',
      approved: false,
      cause: 'evidence',
      reason: 'no file changed since the run started',
    });
    c = recordCheck(c, { iteration: 5, trigger: 'interval', approved: false, cause: 'council', reason: '1 of 3 approve, 2 needed' });
    expect(c).toMatchObject({ total: 3, refused: 3, byCause: { evidence: 2, council: 1 } });
    expect(checksLine(c)).toBe(
      'completion checks: 3 (3 refused); the last, at iteration 5 (interval), refused by the council: 1 of 3 approve, 2 needed',
    );
    c = recordCheck(c, { iteration: 6, trigger: 'claim', approved: true, cause: null, reason: 'council approved, 3 of 3' });
    expect(c).toMatchObject({ total: 4, refused: 3 });
    expect(checksLine(c)).toBe('completion checks: 4 (3 refused); the last, at iteration 6 (claim), approved');
  });
});
