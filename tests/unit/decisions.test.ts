/**
 * Owns the unit tests of the pure decision modules in rules/: phase and tier
 * (spec §1.4), backoff (§1.10), caps (§1.2, §1.11), convergence tracking (§2.10) and the minimal
 * completion check, plus the outcome exit-code table and the carried-state schema of
 * schemas/run.ts that those decisions feed.
 */
import { describe, expect, it } from 'vitest';
import { defaultKnobs } from '../../schemas/knobs.js';
import {
  CompletionVerdictSchema,
  ConvergenceStateSchema,
  LIMITS,
  OUTCOME_EXIT_CODES,
  OUTCOME_STATUSES,
  RunStateSchema,
  type CompletionVerdict,
  type ConvergenceState,
  type Phase,
  type RunState,
  type Tier,
} from '../../schemas/run.js';
import { backoffSeconds, type BackoffKnobs } from '../../rules/backoff.js';
import { checkCaps, type CapsInput, type CapsKnobs, type CapVerdict } from '../../rules/caps.js';
import { describeRefusal, judgeCompletion, type CompletionFacts } from '../../rules/completion.js';
import { initialConvergence, trackConvergence } from '../../rules/convergence.js';
import { isUndeliveredNote, undeliveredNote } from '../../rules/undelivered-directives.js';
import { phaseFor, tierFor } from '../../rules/phase.js';

// ---------------------------------------------------------------------------------------------
// Phase and tier
// ---------------------------------------------------------------------------------------------

describe('phaseFor', () => {
  it.each<[number, Phase]>([
    [1, 'ACT'],
    [2, 'REFLECT'],
    [3, 'VERIFY'],
    [4, 'REASON'],
    [5, 'ACT'],
    [6, 'REFLECT'],
    [7, 'VERIFY'],
    [8, 'REASON'],
  ])('iteration %i is %s', (iteration, phase) => {
    expect(phaseFor(iteration)).toBe(phase);
  });

  it.each<[number, Phase]>([
    [0, 'REASON'],
    [-1, 'VERIFY'],
    [-2, 'REFLECT'],
    [-3, 'ACT'],
    [-4, 'REASON'],
    [-5, 'VERIFY'],
  ])('zero and negative iteration %i map into the cycle as %s (never undefined)', (iteration, phase) => {
    expect(phaseFor(iteration)).toBe(phase);
  });

  it('cycles with period 4 over a long run', () => {
    for (let i = 0; i < 1000; i++) {
      expect(phaseFor(i + 4)).toBe(phaseFor(i));
    }
    expect(phaseFor(10_001)).toBe('ACT');
  });
});

describe('tierFor', () => {
  const tiers: Tier[] = ['planning', 'development', 'fast'];

  it.each(tiers)('pins tier %s for every iteration when legacy rotation is off', (tier) => {
    for (let i = -4; i <= 8; i++) {
      expect(tierFor(i, { tier, legacyTierRotation: false })).toBe(tier);
    }
  });

  it.each<[number, Tier]>([
    [1, 'development'],
    [2, 'development'],
    [3, 'fast'],
    [4, 'planning'],
    [5, 'development'],
    [6, 'development'],
    [7, 'fast'],
    [8, 'planning'],
    [0, 'planning'],
    [-1, 'fast'],
    [-2, 'development'],
    [-3, 'development'],
    [-4, 'planning'],
  ])('legacy rotation: iteration %i uses tier %s regardless of the pinned tier', (iteration, expected) => {
    for (const tier of tiers) {
      expect(tierFor(iteration, { tier, legacyTierRotation: true })).toBe(expected);
    }
  });

  it('legacy rotation follows the phase: REASON planning, ACT/REFLECT development, VERIFY fast', () => {
    const byPhase: Record<Phase, Tier> = { REASON: 'planning', ACT: 'development', REFLECT: 'development', VERIFY: 'fast' };
    for (let i = 1; i <= 8; i++) {
      expect(tierFor(i, { tier: 'fast', legacyTierRotation: true })).toBe(byPhase[phaseFor(i)]);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Backoff
// ---------------------------------------------------------------------------------------------

describe('backoffSeconds', () => {
  const defaults: BackoffKnobs = { baseWaitSeconds: 60, maxWaitSeconds: 3600, backoffJitterSeconds: 30 };

  it('uses the knob registry defaults base 60, max 3600, jitter 30', () => {
    const k = defaultKnobs();
    expect({ baseWaitSeconds: k.baseWaitSeconds, maxWaitSeconds: k.maxWaitSeconds, backoffJitterSeconds: k.backoffJitterSeconds }).toEqual(
      defaults,
    );
  });

  // [nth failure, retry (failures before this one), min wait (unitRandom 0), max wait (unitRandom 0.999)]
  it.each<[number, number, number, number]>([
    [1, 0, 60, 89],
    [2, 1, 120, 149],
    [3, 2, 240, 269],
    [4, 3, 480, 509],
    [5, 4, 960, 989],
    [6, 5, 1920, 1949],
    [7, 6, 3600, 3600],
    [8, 7, 3600, 3600],
    [50, 49, 3600, 3600],
  ])('failure #%i (retry %i) waits %i..%i s with the defaults', (_nth, retry, low, high) => {
    expect(backoffSeconds(retry, defaults, 0)).toBe(low);
    expect(backoffSeconds(retry, defaults, 0.999)).toBe(high);
  });

  it('spec examples: first failure 60-89 s, second 120-149 s, and the ceiling 3600 s later on', () => {
    for (const u of [0, 0.1, 0.5, 0.9, 0.999]) {
      const first = backoffSeconds(0, defaults, u);
      const second = backoffSeconds(1, defaults, u);
      expect(first).toBeGreaterThanOrEqual(60);
      expect(first).toBeLessThanOrEqual(89);
      expect(second).toBeGreaterThanOrEqual(120);
      expect(second).toBeLessThanOrEqual(149);
      expect(backoffSeconds(10, defaults, u)).toBe(3600);
    }
  });

  it('adds floor(unitRandom * jitter) whole seconds', () => {
    expect(backoffSeconds(0, defaults, 0.5)).toBe(75);
    expect(backoffSeconds(0, defaults, 0.0333)).toBe(60); // 0.999 s of jitter floors to 0
    expect(backoffSeconds(0, defaults, 1 / 30)).toBe(61);
    expect(backoffSeconds(2, defaults, 0.25)).toBe(247);
  });

  it('keeps the jitter within [0, jitter - 1] and returns whole seconds for any unitRandom in [0, 1)', () => {
    for (let i = 0; i < 1000; i++) {
      const u = i / 1000;
      const w = backoffSeconds(1, defaults, u);
      expect(Number.isInteger(w)).toBe(true);
      expect(w).toBeGreaterThanOrEqual(120);
      expect(w).toBeLessThan(150);
    }
  });

  it('clamps an out-of-range unitRandom into [0, 1)', () => {
    expect(backoffSeconds(0, defaults, -0.5)).toBe(60);
    expect(backoffSeconds(0, defaults, 1)).toBe(89);
    expect(backoffSeconds(0, defaults, 7)).toBe(89);
  });

  it('treats a negative retry as 0', () => {
    expect(backoffSeconds(-1, defaults, 0)).toBe(60);
    expect(backoffSeconds(-100, defaults, 0.999)).toBe(89);
  });

  it('clamps to maxWaitSeconds, jitter included', () => {
    const k: BackoffKnobs = { baseWaitSeconds: 60, maxWaitSeconds: 100, backoffJitterSeconds: 30 };
    expect(backoffSeconds(0, k, 0.999)).toBe(89);
    expect(backoffSeconds(1, k, 0)).toBe(100);
    expect(backoffSeconds(1, k, 0.999)).toBe(100);
    expect(backoffSeconds(0, { ...k, maxWaitSeconds: 70 }, 0.999)).toBe(70);
    expect(backoffSeconds(0, { ...k, maxWaitSeconds: 0 }, 0.5)).toBe(0);
  });

  it('caps the exponent at 30: retry 30, 31 and 1000 give the same finite wait', () => {
    const k: BackoffKnobs = { baseWaitSeconds: 1, maxWaitSeconds: Number.MAX_SAFE_INTEGER, backoffJitterSeconds: 0 };
    expect(backoffSeconds(29, k, 0)).toBe(2 ** 29);
    expect(backoffSeconds(30, k, 0)).toBe(2 ** 30);
    expect(backoffSeconds(31, k, 0)).toBe(2 ** 30);
    expect(backoffSeconds(1000, k, 0)).toBe(2 ** 30);
    expect(backoffSeconds(Number.MAX_SAFE_INTEGER, k, 0)).toBe(2 ** 30);
  });

  it('does not overflow with retry 1000 and the largest allowed knobs', () => {
    const big: BackoffKnobs = { baseWaitSeconds: 86_400, maxWaitSeconds: 604_800, backoffJitterSeconds: 3600 };
    const w = backoffSeconds(1000, big, 0.999);
    expect(Number.isFinite(w)).toBe(true);
    expect(w).toBe(604_800);
    expect(backoffSeconds(1000, defaults, 0.5)).toBe(3600);
  });

  it('with base 0 waits only the jitter', () => {
    const k: BackoffKnobs = { baseWaitSeconds: 0, maxWaitSeconds: 3600, backoffJitterSeconds: 30 };
    expect(backoffSeconds(0, k, 0)).toBe(0);
    expect(backoffSeconds(5, k, 0)).toBe(0);
    expect(backoffSeconds(1000, k, 0)).toBe(0);
    expect(backoffSeconds(1000, k, 0.999)).toBe(29);
    expect(backoffSeconds(0, { ...k, backoffJitterSeconds: 0 }, 0.999)).toBe(0);
  });

  it('with jitter 0 is exactly base * 2^retry', () => {
    const k: BackoffKnobs = { baseWaitSeconds: 5, maxWaitSeconds: 3600, backoffJitterSeconds: 0 };
    expect([0, 1, 2, 3, 4, 9, 10].map((r) => backoffSeconds(r, k, 0.999))).toEqual([5, 10, 20, 40, 80, 2560, 3600]);
  });
});

// ---------------------------------------------------------------------------------------------
// Caps
// ---------------------------------------------------------------------------------------------

describe('checkCaps', () => {
  const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);
  const knobs: CapsKnobs = { maxIterations: 5, maxRetries: 3, maxDurationSeconds: 600 };
  const at = (over: Partial<CapsInput>): CapsInput => ({ iteration: 0, consecutiveFailures: 0, startedAtMs: T0, nowMs: T0, ...over });

  it('continues when nothing is at its limit', () => {
    expect(checkCaps(at({}), knobs)).toEqual({ kind: 'continue' });
    expect(checkCaps(at({ iteration: 4, consecutiveFailures: 2, nowMs: T0 + 599_999 }), knobs)).toEqual({ kind: 'continue' });
  });

  describe('consecutive failures', () => {
    it('fails exactly at maxRetries and continues just below', () => {
      expect(checkCaps(at({ consecutiveFailures: 2 }), knobs).kind).toBe('continue');
      const v = checkCaps(at({ consecutiveFailures: 3 }), knobs);
      expect(v.kind).toBe('failed');
      expect(v).toMatchObject({ reason: '3 consecutive failed iterations (maxRetries 3)' });
      expect(checkCaps(at({ consecutiveFailures: 4 }), knobs).kind).toBe('failed');
    });

    it('maxRetries 1 fails after the first failure', () => {
      expect(checkCaps(at({ consecutiveFailures: 0 }), { ...knobs, maxRetries: 1 }).kind).toBe('continue');
      expect(checkCaps(at({ consecutiveFailures: 1 }), { ...knobs, maxRetries: 1 }).kind).toBe('failed');
    });
  });

  describe('iterations', () => {
    it('stops exactly at maxIterations and continues just below', () => {
      expect(checkCaps(at({ iteration: 4 }), knobs).kind).toBe('continue');
      const v = checkCaps(at({ iteration: 5 }), knobs);
      expect(v).toEqual({ kind: 'max_iterations_reached', reason: 'iteration cap reached: 5 of 5' });
      expect(checkCaps(at({ iteration: 6 }), knobs).kind).toBe('max_iterations_reached');
    });

    it('checked before the increment: maxIterations 5 runs exactly 5 iterations', () => {
      let iteration = 0;
      let verdict: CapVerdict = { kind: 'continue' };
      const ran: number[] = [];
      for (let guard = 0; guard < 100; guard++) {
        verdict = checkCaps(at({ iteration }), knobs);
        if (verdict.kind !== 'continue') break;
        iteration += 1;
        ran.push(iteration);
      }
      expect(ran).toEqual([1, 2, 3, 4, 5]);
      expect(verdict.kind).toBe('max_iterations_reached');
    });

    it('maxIterations 1 runs exactly one iteration', () => {
      expect(checkCaps(at({ iteration: 0 }), { ...knobs, maxIterations: 1 }).kind).toBe('continue');
      expect(checkCaps(at({ iteration: 1 }), { ...knobs, maxIterations: 1 }).kind).toBe('max_iterations_reached');
    });
  });

  describe('wall clock', () => {
    it('stops exactly when elapsed reaches maxDurationSeconds and continues 1 ms before', () => {
      expect(checkCaps(at({ nowMs: T0 + 599_999 }), knobs).kind).toBe('continue');
      const v = checkCaps(at({ nowMs: T0 + 600_000 }), knobs);
      expect(v).toEqual({ kind: 'max_duration_reached', reason: 'wall-clock cap reached: 600s of 600s' });
      expect(checkCaps(at({ nowMs: T0 + 3_600_000 }), knobs)).toMatchObject({
        kind: 'max_duration_reached',
        reason: 'wall-clock cap reached: 3600s of 600s',
      });
    });

    it('maxDurationSeconds 0 turns the cap off, however long the run', () => {
      const off = { ...knobs, maxDurationSeconds: 0 };
      expect(checkCaps(at({ nowMs: T0 }), off).kind).toBe('continue');
      expect(checkCaps(at({ nowMs: T0 + 365 * 24 * 3600 * 1000 }), off).kind).toBe('continue');
    });

    it('a clock that reads before the start does not trip the cap', () => {
      expect(checkCaps(at({ nowMs: T0 - 10_000 }), knobs).kind).toBe('continue');
    });
  });

  describe('precedence', () => {
    const allOver = at({ iteration: 5, consecutiveFailures: 3, nowMs: T0 + 600_000 });

    it.each<[string, CapsInput, CapVerdict['kind']]>([
      ['all three hold -> failed', allOver, 'failed'],
      ['failures and iterations -> failed', at({ iteration: 5, consecutiveFailures: 3 }), 'failed'],
      ['failures and duration -> failed', at({ consecutiveFailures: 3, nowMs: T0 + 600_000 }), 'failed'],
      ['iterations and duration -> max_iterations_reached', at({ iteration: 5, nowMs: T0 + 600_000 }), 'max_iterations_reached'],
      ['only duration -> max_duration_reached', at({ nowMs: T0 + 600_000 }), 'max_duration_reached'],
    ])('%s', (_name, input, kind) => {
      expect(checkCaps(input, knobs).kind).toBe(kind);
    });

    it('with the duration cap off, iterations still win over nothing', () => {
      expect(checkCaps(allOver, { ...knobs, maxRetries: 10, maxDurationSeconds: 0 }).kind).toBe('max_iterations_reached');
      expect(checkCaps(allOver, { ...knobs, maxRetries: 10, maxIterations: 10 }).kind).toBe('max_duration_reached');
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Convergence
// ---------------------------------------------------------------------------------------------

describe('trackConvergence', () => {
  const feed = (hashes: string[], ringSize = 6, start: ConvergenceState = initialConvergence()) => {
    let state = start;
    const changes: boolean[] = [];
    const streaks: number[] = [];
    for (const h of hashes) {
      const r = trackConvergence(state, h, ringSize);
      state = r.state;
      changes.push(r.changed);
      streaks.push(r.state.consecutiveNoChange);
    }
    return { state, changes, streaks };
  };

  it('initial state has no hash, no streak and an empty ring', () => {
    expect(initialConvergence()).toEqual({ lastHash: null, consecutiveNoChange: 0, recentHashes: [], doneSignals: 0, totalDoneSignals: 0 });
    expect(initialConvergence()).not.toBe(initialConvergence());
  });

  it('counts the first observation (lastHash null) as a change', () => {
    const r = trackConvergence(initialConvergence(), 'aaa', 6);
    expect(r.changed).toBe(true);
    expect(r.state).toEqual({ lastHash: 'aaa', consecutiveNoChange: 0, recentHashes: ['aaa'], doneSignals: 0, totalDoneSignals: 0 });
  });

  it('a null lastHash resets a stale streak too', () => {
    const r = trackConvergence(
      { lastHash: null, consecutiveNoChange: 4, recentHashes: ['x'], doneSignals: 0, totalDoneSignals: 0 },
      'x',
      6,
    );
    expect(r.changed).toBe(true);
    expect(r.state.consecutiveNoChange).toBe(0);
  });

  it('the same hash as the previous one increments the no-change streak', () => {
    const { changes, streaks, state } = feed(['a', 'a', 'a', 'a']);
    expect(changes).toEqual([true, false, false, false]);
    expect(streaks).toEqual([0, 1, 2, 3]);
    expect(state.lastHash).toBe('a');
  });

  it('a different hash resets the streak to 0', () => {
    const { changes, streaks } = feed(['a', 'a', 'a', 'b', 'b', 'c']);
    expect(changes).toEqual([true, false, false, true, false, true]);
    expect(streaks).toEqual([0, 1, 2, 0, 1, 0]);
  });

  it('compares with the run-start hash stored as the initial lastHash', () => {
    const start: ConvergenceState = { lastHash: 'start', consecutiveNoChange: 0, recentHashes: [], doneSignals: 0, totalDoneSignals: 0 };
    expect(feed(['start'], 6, start)).toMatchObject({ changes: [false], streaks: [1] });
    expect(feed(['other'], 6, start)).toMatchObject({ changes: [true], streaks: [0] });
  });

  it('A,B,A oscillation counts as change every time (only the previous hash is compared)', () => {
    const { changes, streaks, state } = feed(['A', 'B', 'A', 'B', 'A']);
    expect(changes).toEqual([true, true, true, true, true]);
    expect(streaks).toEqual([0, 0, 0, 0, 0]);
    expect(state.recentHashes).toEqual(['A', 'B', 'A', 'B', 'A']);
  });

  it('keeps the ring bounded at ringSize 6, the last 6 hashes oldest first', () => {
    const hashes = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'h7', 'h8', 'h9'];
    let state = initialConvergence();
    for (const [i, h] of hashes.entries()) {
      state = trackConvergence(state, h, 6).state;
      expect(state.recentHashes).toEqual(hashes.slice(Math.max(0, i - 5), i + 1));
      expect(state.recentHashes.length).toBeLessThanOrEqual(6);
    }
    expect(state.recentHashes).toEqual(['h4', 'h5', 'h6', 'h7', 'h8', 'h9']);
  });

  it('records repeated hashes in the ring too', () => {
    expect(feed(['a', 'a', 'b']).state.recentHashes).toEqual(['a', 'a', 'b']);
  });

  it('shrinks an oversized ring to ringSize when the knob got smaller', () => {
    const start: ConvergenceState = {
      lastHash: 'f',
      consecutiveNoChange: 0,
      recentHashes: ['a', 'b', 'c', 'd', 'e', 'f'],
      doneSignals: 0,
      totalDoneSignals: 0,
    };
    const r = trackConvergence(start, 'g', 2);
    expect(r.state.recentHashes).toEqual(['f', 'g']);
  });

  it('does not mutate the input state', () => {
    const start: ConvergenceState = {
      lastHash: 'a',
      consecutiveNoChange: 2,
      recentHashes: ['a', 'a'],
      doneSignals: 0,
      totalDoneSignals: 0,
    };
    const copy = structuredClone(start);
    trackConvergence(start, 'a', 6);
    trackConvergence(start, 'b', 1);
    expect(start).toEqual(copy);
  });

  it('produces states that satisfy ConvergenceStateSchema over a long run', () => {
    const hashes = Array.from({ length: 500 }, (_, i) => `h${Math.floor(i / 3)}`);
    const { state } = feed(hashes, 100);
    expect(ConvergenceStateSchema.parse(state)).toEqual(state);
    expect(state.recentHashes).toHaveLength(100);
    expect(state.consecutiveNoChange).toBe(1); // h166 seen twice so far
  });
});

// ---------------------------------------------------------------------------------------------
// Completion
// ---------------------------------------------------------------------------------------------

describe('judgeCompletion', () => {
  const LOG = '/repo/.vigil/logs/tests-7.log';
  const green = { passed: true, logPath: LOG };
  const red = { passed: false, logPath: LOG };

  it.each<[string, CompletionFacts, CompletionVerdict['reason']]>([
    ['no diff, no tests', { iteration: 7, filesChangedSinceStart: 0, tests: null }, 'empty_diff'],
    ['no diff, green tests', { iteration: 7, filesChangedSinceStart: 0, tests: green }, 'empty_diff'],
    ['no diff, red tests (empty diff wins)', { iteration: 7, filesChangedSinceStart: 0, tests: red }, 'empty_diff'],
    ['diff, no tests configured', { iteration: 7, filesChangedSinceStart: 3, tests: null }, 'accepted'],
    ['diff, green tests', { iteration: 7, filesChangedSinceStart: 3, tests: green }, 'accepted'],
    ['diff, red tests', { iteration: 7, filesChangedSinceStart: 3, tests: red }, 'tests_red'],
    ['one file changed, green tests', { iteration: 1, filesChangedSinceStart: 1, tests: green }, 'accepted'],
  ])('%s -> %s', (_name, facts, reason) => {
    const v = judgeCompletion(facts);
    expect(v.reason).toBe(reason);
    expect(v.accepted).toBe(reason === 'accepted');
    expect(v.iteration).toBe(facts.iteration);
    expect(v.filesChangedSinceStart).toBe(facts.filesChangedSinceStart);
    expect(v.testsConfigured).toBe(facts.tests !== null);
    expect(v.testsPassed).toBe(facts.tests ? facts.tests.passed : null);
    expect(v.testLogPath).toBe(facts.tests ? facts.tests.logPath : null);
    expect(CompletionVerdictSchema.parse(v)).toEqual(v);
  });

  it('returns the full verdict record', () => {
    expect(judgeCompletion({ iteration: 4, filesChangedSinceStart: 2, tests: red })).toEqual({
      iteration: 4,
      accepted: false,
      reason: 'tests_red',
      testsConfigured: true,
      testsPassed: false,
      filesChangedSinceStart: 2,
      testLogPath: LOG,
    });
    expect(judgeCompletion({ iteration: 9, filesChangedSinceStart: 12, tests: null })).toEqual({
      iteration: 9,
      accepted: true,
      reason: 'accepted',
      testsConfigured: false,
      testsPassed: null,
      filesChangedSinceStart: 12,
      testLogPath: null,
    });
  });
});

describe('describeRefusal', () => {
  it('explains an empty diff with the iteration number', () => {
    const text = describeRefusal(
      judgeCompletion({ iteration: 6, filesChangedSinceStart: 0, tests: { passed: false, logPath: '/l/t.log' } }),
    );
    expect(text).toContain('iteration 6');
    expect(text).toContain('no changes since the run started');
    expect(text).not.toContain('test command failed');
    expect(text).not.toContain('/l/t.log');
  });

  it('explains red tests and names the log path when there is one', () => {
    const text = describeRefusal(
      judgeCompletion({ iteration: 11, filesChangedSinceStart: 2, tests: { passed: false, logPath: '/runs/r1/tests-11.log' } }),
    );
    expect(text).toContain('iteration 11');
    expect(text).toContain('the test command failed (log: /runs/r1/tests-11.log)');
    expect(text).toContain('Make the tests pass');
  });

  it('explains red tests without a log clause when there is no log path', () => {
    const v: CompletionVerdict = {
      iteration: 3,
      accepted: false,
      reason: 'tests_red',
      testsConfigured: true,
      testsPassed: false,
      filesChangedSinceStart: 1,
      testLogPath: null,
    };
    const text = describeRefusal(v);
    expect(text).toContain('the test command failed.');
    expect(text).not.toContain('log:');
    expect(describeRefusal({ ...v, testLogPath: '' })).not.toContain('log:');
  });

  it('is empty for an accepted claim', () => {
    expect(describeRefusal(judgeCompletion({ iteration: 2, filesChangedSinceStart: 1, tests: null }))).toBe('');
  });

  it('stays one paragraph', () => {
    for (const facts of [
      { iteration: 1, filesChangedSinceStart: 0, tests: null },
      { iteration: 1, filesChangedSinceStart: 5, tests: { passed: false, logPath: '/x.log' } },
    ]) {
      const text = describeRefusal(judgeCompletion(facts));
      expect(text.length).toBeGreaterThan(0);
      expect(text).not.toContain('\n');
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Outcomes and carried state (schemas/run.ts)
// ---------------------------------------------------------------------------------------------

describe('undeliveredNote', () => {
  const d = (by: string, text: string) => ({ by, text, at: '2026-01-02T03:04:05.000Z' });
  it('names who sent each directive and its first words, on one line', () => {
    expect(undeliveredNote([d('alice', 'Run   the\nlinter')])).toBe(
      '1 human directive(s) never reached a prompt, the run ended first (alice at 2026-01-02T03:04:05.000Z: "Run the linter")',
    );
  });
  it('clips a long directive to 60 characters and names only the first three', () => {
    const note = undeliveredNote([d('a', 'x'.repeat(500)), d('b', 'two'), d('c', 'three'), d('d', 'four'), d('e', 'five')]);
    expect(note).toContain(`"${'x'.repeat(59)}…"`);
    expect(note.startsWith('5 human directive(s)')).toBe(true);
    expect(note).toContain('c at 2026-01-02T03:04:05.000Z: "three"; and 2 more)');
    expect(note).not.toContain('four');
    expect(isUndeliveredNote(note)).toBe(true);
    expect(isUndeliveredNote('completion not independently verified: no test runner')).toBe(false);
  });
});

describe('OUTCOME_EXIT_CODES', () => {
  it('maps every outcome to the process contract: 0 done/stopped, 20 deterministic terminal, 1 failed', () => {
    expect(OUTCOME_EXIT_CODES).toEqual({
      council_approved: 0,
      completion_promise_fulfilled: 0,
      already_satisfied: 0,
      force_stopped: 20,
      stopped: 0,
      max_iterations_reached: 20,
      max_duration_reached: 20,
      agent_not_runnable: 20,
      repository_unavailable: 20,
      gate_stuck: 20,
      contract_error: 20,
      failed: 1,
      merged: 0,
      pr_closed: 20,
    });
    expect(Object.keys(OUTCOME_EXIT_CODES).sort()).toEqual([...OUTCOME_STATUSES].sort());
  });

  it('every cap verdict other than continue is an outcome status with an exit code', () => {
    const T0 = 1_700_000_000_000;
    const kinds = [
      checkCaps(
        { iteration: 0, consecutiveFailures: 9, startedAtMs: T0, nowMs: T0 },
        { maxIterations: 5, maxRetries: 3, maxDurationSeconds: 0 },
      ).kind,
      checkCaps(
        { iteration: 5, consecutiveFailures: 0, startedAtMs: T0, nowMs: T0 },
        { maxIterations: 5, maxRetries: 3, maxDurationSeconds: 0 },
      ).kind,
      checkCaps(
        { iteration: 0, consecutiveFailures: 0, startedAtMs: T0, nowMs: T0 + 10_000 },
        { maxIterations: 5, maxRetries: 3, maxDurationSeconds: 10 },
      ).kind,
    ];
    expect(kinds).toEqual(['failed', 'max_iterations_reached', 'max_duration_reached']);
    expect(kinds.map((k) => OUTCOME_EXIT_CODES[k as Exclude<CapVerdict['kind'], 'continue'>])).toEqual([1, 20, 20]);
  });
});

describe('RunStateSchema', () => {
  const valid = (): RunState =>
    RunStateSchema.parse({
      iteration: 3,
      consecutiveFailures: 1,
      startedAtMs: 1_700_000_000_000,
      runStart: { sha: 'abc123', treeHash: 'tree1', capturedAt: '2025-01-01T00:00:00.000Z' },
      convergence: { lastHash: 'tree2', consecutiveNoChange: 0, recentHashes: ['tree1', 'tree2'], doneSignals: 0, totalDoneSignals: 0 },
      pendingDirectives: [{ text: 'use pnpm', by: 'alice', at: '2025-01-01T00:01:00.000Z' }],
      pause: null,
      lastCompletion: null,
      lastFindings: null,
      recentIterations: [],
      invalidMessages: [],
      invalidMessageCount: 0,
      generations: 0,
      council: { rounds: 0, verdicts: [], forceReview: null },
      lastTests: null,
      lastEvidence: null,
    });

  it('accepts a carried state and round-trips it', () => {
    const s = valid();
    expect(RunStateSchema.parse(s)).toEqual(s);
    expect(RunStateSchema.safeParse({ ...s, runStart: null }).success).toBe(true);
    expect(RunStateSchema.safeParse({ ...s, runStart: { ...s.runStart, sha: null } }).success).toBe(true);
  });

  it('rejects negative counters', () => {
    expect(RunStateSchema.safeParse({ ...valid(), iteration: -1 }).success).toBe(false);
    expect(RunStateSchema.safeParse({ ...valid(), consecutiveFailures: -1 }).success).toBe(false);
    expect(RunStateSchema.safeParse({ ...valid(), iteration: 1.5 }).success).toBe(false);
  });

  it('bounds every carried array', () => {
    const record = {
      iteration: 1,
      phase: 'ACT',
      tier: 'development',
      exitCode: 0,
      durationMs: 10,
      logPath: '/l',
      attempts: 1,
      claimed: false,
      changed: true,
      filesChangedSinceStart: 1,
      treeHash: 't',
      at: '2025-01-01T00:00:00.000Z',
    };
    const s = valid();
    expect(RunStateSchema.safeParse({ ...s, recentIterations: Array(LIMITS.recentIterations).fill(record) }).success).toBe(true);
    expect(RunStateSchema.safeParse({ ...s, recentIterations: Array(LIMITS.recentIterations + 1).fill(record) }).success).toBe(false);
    const bad = { name: 'pause', kind: 'signal', error: 'x', at: 't' };
    expect(RunStateSchema.safeParse({ ...s, invalidMessages: Array(LIMITS.invalidMessages + 1).fill(bad) }).success).toBe(false);
    const d = s.pendingDirectives[0];
    expect(RunStateSchema.safeParse({ ...s, pendingDirectives: Array(51).fill(d) }).success).toBe(false);
    expect(RunStateSchema.safeParse({ ...s, convergence: { ...s.convergence, recentHashes: Array(101).fill('h') } }).success).toBe(false);
    expect(RunStateSchema.safeParse({ ...s, lastFindings: 'x'.repeat(LIMITS.findingChars * 4 + 1) }).success).toBe(false);
  });
});
