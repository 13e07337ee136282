/**
 * The dead letter (rules/dead-letter.ts, seed 001): the failure fingerprint and its
 * normalisation, dead-lettering once per fingerprint at the threshold, the bounds of the state,
 * and its schema.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEAD_LETTER_THRESHOLD,
  DeadLetterStateSchema,
  MAX_DEAD_LETTERS,
  MAX_ENTRY_ITERATIONS,
  MAX_TAIL_CHARS,
  MAX_TRACKED_FINGERPRINTS,
  failureFingerprint,
  initialDeadLetterState,
  normalisedTail,
  trackDeadLetter,
  type DeadLetterState,
  type FailureObservation,
} from '../../rules/dead-letter.js';

describe('failureFingerprint', () => {
  const attempt = (n: number): string =>
    [
      `[2026-11-22T12:0${n}:13.${n}21Z] starting attempt ${n}`,
      `\u001b[31mError: ENOENT: no such file or directory, open '/tmp/vigil-run-${n}abc/x.json'\u001b[0m`,
      `    at Object.openSync (node:fs:${600 + n}:3) pid ${4000 + n}`,
      `object ${n}f3e9a1c${n}d not found (request 0x7ff${n}a, id 5b0e7e0c-1d2b-4c3a-9f10-00000000000${n})`,
      `took ${n * 12}ms, timed out after ${n}.5s at 12:0${n}:59`,
      '',
      `C:\\Users\\ci\\AppData\\Local\\Temp\\run-${n}\\out.log missing; /var/folders/x${n}/T/y gone`,
    ].join('\n');

  it('is the same for failures that differ only in times, ids, temp paths, pids, durations and numbers', () => {
    expect(failureFingerprint('unknown', attempt(1))).toBe(failureFingerprint('unknown', attempt(2)));
    expect(failureFingerprint('unknown', attempt(1))).toMatch(/^unknown:[0-9a-f]{16}$/);
  });

  it('normalises the last 5 non-empty lines', () => {
    expect(normalisedTail(attempt(3))).toEqual([
      "Error: ENOENT: no such file or directory, open '<tmp>'",
      'at Object.openSync (node:fs:<n>:<n>) pid <n>',
      'object <hex> not found (request <hex>, id <id>)',
      'took <duration>, timed out after <duration> at <time>',
      '<tmp> missing; <tmp> gone',
    ]);
    expect(failureFingerprint('unknown', `different start\n${attempt(1)}`)).toBe(failureFingerprint('unknown', attempt(1)));
  });

  it('differs by error class and by message', () => {
    expect(failureFingerprint('auth_error', attempt(1))).not.toBe(failureFingerprint('unknown', attempt(1)));
    expect(failureFingerprint('unknown', 'Error: cannot find module a')).not.toBe(
      failureFingerprint('unknown', 'Error: cannot find module b'),
    );
    expect(failureFingerprint('  ', '')).toMatch(/^unknown:/);
  });
});

const obs = (over: Partial<FailureObservation> = {}): FailureObservation => ({
  fingerprint: 'unknown:0123456789abcdef',
  errorClass: 'unknown',
  tail: 'Error: boom',
  atIso: '2026-11-22T12:00:00Z',
  iteration: 1,
  ...over,
});

function trackMany(state: DeadLetterState, n: number, over: (i: number) => Partial<FailureObservation> = () => ({})) {
  let s = state;
  const lettered = [];
  for (let i = 1; i <= n; i++) {
    const r = trackDeadLetter(s, obs({ iteration: i, atIso: `2026-11-22T12:00:${String(i).padStart(2, '0')}Z`, ...over(i) }));
    s = r.state;
    if (r.deadLettered) lettered.push(r.deadLettered);
  }
  return { state: s, lettered };
}

describe('trackDeadLetter', () => {
  it('dead-letters on the 5th occurrence, with its history', () => {
    const four = trackMany(initialDeadLetterState(), DEAD_LETTER_THRESHOLD - 1);
    expect(four.lettered).toEqual([]);
    expect(four.state.entries).toEqual([]);
    const r = trackDeadLetter(four.state, obs({ iteration: 5, atIso: '2026-11-22T12:00:05Z', tail: 'Error: boom again' }));
    expect(r.deadLettered).toEqual({
      fingerprint: 'unknown:0123456789abcdef',
      errorClass: 'unknown',
      attempts: 5,
      firstAt: '2026-11-22T12:00:01Z',
      lastAt: '2026-11-22T12:00:05Z',
      iterations: [1, 2, 3, 4, 5],
      tail: 'Error: boom again',
    });
    expect(r.state.entries).toEqual([r.deadLettered]);
  });

  it('dead-letters once per fingerprint; later occurrences update the entry', () => {
    const { state, lettered } = trackMany(initialDeadLetterState(), 14);
    expect(lettered).toHaveLength(1);
    expect(state.entries).toHaveLength(1);
    expect(state.entries[0]).toMatchObject({
      attempts: 14,
      firstAt: '2026-11-22T12:00:01Z',
      lastAt: '2026-11-22T12:00:14Z',
      iterations: [5, 6, 7, 8, 9, 10, 11, 12, 13, 14],
    });
    expect(state.entries[0]?.iterations).toHaveLength(MAX_ENTRY_ITERATIONS);
  });

  it('counts fingerprints separately and honours another threshold', () => {
    let s = initialDeadLetterState();
    for (const fp of ['a:1', 'b:2', 'a:1']) s = trackDeadLetter(s, obs({ fingerprint: fp }), 3).state;
    expect(s.tracked.map((t) => [t.fingerprint, t.count])).toEqual([
      ['b:2', 1],
      ['a:1', 2],
    ]);
    expect(trackDeadLetter(s, obs({ fingerprint: 'a:1' }), 3).deadLettered?.attempts).toBe(3);
    expect(trackDeadLetter(initialDeadLetterState(), obs(), 1).deadLettered?.attempts).toBe(1);
    expect(trackDeadLetter(initialDeadLetterState(), obs(), 0).deadLettered?.attempts).toBe(1);
  });

  it('keeps the same iteration once when retried within it', () => {
    const { state } = trackMany(initialDeadLetterState(), 3, () => ({ iteration: 7 }));
    expect(state.tracked[0]?.iterations).toEqual([7]);
  });

  it('keeps its lists bounded, forgetting the least recently seen / oldest first', () => {
    const many = trackMany(initialDeadLetterState(), MAX_TRACKED_FINGERPRINTS + 5, (i) => ({ fingerprint: `c:${i}` }));
    expect(many.state.tracked).toHaveLength(MAX_TRACKED_FINGERPRINTS);
    expect(many.state.tracked[0]?.fingerprint).toBe('c:6');
    let s = initialDeadLetterState();
    for (let i = 0; i < MAX_DEAD_LETTERS + 3; i++) s = trackDeadLetter(s, obs({ fingerprint: `d:${i}` }), 1).state;
    expect(s.entries).toHaveLength(MAX_DEAD_LETTERS);
    expect(s.entries[0]?.fingerprint).toBe('d:3');
  });

  it('bounds the tail to its last 1000 characters', () => {
    const tail = `${'a'.repeat(MAX_TAIL_CHARS)}END`;
    const r = trackDeadLetter(initialDeadLetterState(), obs({ tail }), 1);
    expect(r.deadLettered?.tail).toHaveLength(MAX_TAIL_CHARS);
    expect(r.deadLettered?.tail.endsWith('END')).toBe(true);
  });

  it('never mutates its input', () => {
    const s = trackMany(initialDeadLetterState(), 5).state;
    const frozen = JSON.parse(JSON.stringify(s)) as DeadLetterState;
    trackDeadLetter(s, obs());
    expect(s).toEqual(frozen);
  });

  it('always produces a state that parses', () => {
    const observation = fc.record({
      fingerprint: fc.constantFrom('a:1', 'b:2', 'c:3', '', 'x'.repeat(300)),
      errorClass: fc.string({ maxLength: 200 }),
      tail: fc.string({ maxLength: 2000 }),
      atIso: fc.string({ maxLength: 100 }),
      iteration: fc.oneof(fc.integer({ min: -5, max: 10_000 }), fc.constant(Number.NaN)),
    });
    fc.assert(
      fc.property(fc.array(observation, { maxLength: 60 }), fc.integer({ min: -1, max: 6 }), (observations, threshold) => {
        let s = initialDeadLetterState();
        const lettered = new Set<string>();
        for (const o of observations) {
          const r = trackDeadLetter(s, o, threshold);
          s = r.state;
          if (r.deadLettered) {
            expect(lettered.has(r.deadLettered.fingerprint)).toBe(false);
            lettered.add(r.deadLettered.fingerprint);
          }
          expect(DeadLetterStateSchema.safeParse(s).success).toBe(true);
        }
      }),
    );
  });
});
