/**
 * Owns the unit tests of the evidence gate's decision (rules/evidence.ts, spec §3):
 * every axis is judged, then the block decision is taken with its reason precedence; "cannot
 * tell" cases pass but are recorded; the master switch; and the block explanation for the next
 * prompt.
 */
import { describe, expect, it } from 'vitest';
import { defaultKnobs } from '../../schemas/knobs.js';
import {
  describeBlock,
  judgeEvidence,
  type BlockReason,
  type EvidenceFacts,
  type EvidenceKnobs,
  type EvidenceVerdict,
} from '../../rules/evidence.js';

type Tests = EvidenceFacts['tests'];
type Secrets = EvidenceFacts['secrets'];

const GREEN: Tests = { passed: true, timedOut: false, logPath: '/runs/r1/tests/iter-4.log' };
const RED: Tests = { passed: false, timedOut: false, logPath: '/runs/r1/tests/iter-4.log' };
const TIMED_OUT: Tests = { passed: false, timedOut: true, logPath: '/runs/r1/tests/iter-5.log' };
const LEAK = (n: number): NonNullable<Secrets> =>
  Array.from({ length: n }, (_, i) => ({ file: `src/config${i}.ts`, line: i + 3, kind: i % 2 ? 'GitHub token' : 'AWS access key id' }));

const facts = (over: Partial<EvidenceFacts> = {}): EvidenceFacts => ({
  baseline: 'run_start_commit',
  filesChanged: 3,
  tests: GREEN,
  secrets: [],
  ...over,
});
const ON: EvidenceKnobs = { evidenceGate: true, evidenceNoTestsAffirmative: false };

describe('judgeEvidence: decision and reason', () => {
  it.each<[string, Partial<EvidenceFacts>, BlockReason | null]>([
    ['changes, green tests, no secrets', {}, null],
    ['one changed file is enough', { filesChanged: 1 }, null],
    ['empty diff', { filesChanged: 0 }, 'empty_diff'],
    ['empty diff against a run-start tree (no commit yet) is conclusive', { filesChanged: 0, baseline: 'run_start_tree' }, 'empty_diff'],
    ['red tests', { tests: RED }, 'tests_red'],
    ['timed-out tests are red', { tests: TIMED_OUT }, 'tests_red'],
    ['empty diff and red tests', { filesChanged: 0, tests: RED }, 'empty_diff_and_tests_red'],
    ['empty diff and timed-out tests', { filesChanged: 0, tests: TIMED_OUT }, 'empty_diff_and_tests_red'],
    ['a secret in a changed file', { secrets: LEAK(1) }, 'secret_leak_in_changed_files'],
    ['many secrets', { secrets: LEAK(8) }, 'secret_leak_in_changed_files'],
    ['empty diff beats a secret', { filesChanged: 0, secrets: LEAK(1) }, 'empty_diff'],
    ['red tests beat a secret', { tests: RED, secrets: LEAK(2) }, 'tests_red'],
    ['every axis failing', { filesChanged: 0, tests: RED, secrets: LEAK(2) }, 'empty_diff_and_tests_red'],
    ['unreachable base: an empty diff does not block', { baseline: 'base_unreachable', filesChanged: 0 }, null],
    ['unreachable base: red tests still block', { baseline: 'base_unreachable', filesChanged: 0, tests: RED }, 'tests_red'],
    [
      'unreachable base: a secret still blocks',
      { baseline: 'base_unreachable', filesChanged: 0, secrets: LEAK(1) },
      'secret_leak_in_changed_files',
    ],
    ['no test command is not a block', { tests: null }, null],
    ['no test command and an empty diff', { tests: null, filesChanged: 0 }, 'empty_diff'],
    ['secret scan off is not a block', { secrets: null }, null],
    ['secret scan off and red tests', { secrets: null, tests: RED }, 'tests_red'],
  ])('%s -> %s', (_label, over, reason) => {
    const v = judgeEvidence(facts(over), ON);
    expect(v.reason).toBe(reason);
    expect(v.pass).toBe(reason === null);
    expect(v.enabled).toBe(true);
    if (v.pass) expect(v.failures).toEqual([]);
    else expect(v.failures.length).toBeGreaterThan(0);
  });

  it('the reason precedence holds over every combination of failing axes', () => {
    for (const baseline of ['run_start_commit', 'run_start_tree', 'base_unreachable'] as const) {
      for (const filesChanged of [0, 2]) {
        for (const tests of [GREEN, RED, TIMED_OUT, null]) {
          for (const secrets of [[], LEAK(1), null]) {
            const v = judgeEvidence({ baseline, filesChanged, tests, secrets }, ON);
            const empty = baseline !== 'base_unreachable' && filesChanged === 0;
            const red = tests !== null && !tests.passed;
            const leak = secrets !== null && secrets.length > 0;
            const expected: BlockReason | null =
              empty && red
                ? 'empty_diff_and_tests_red'
                : empty
                  ? 'empty_diff'
                  : red
                    ? 'tests_red'
                    : leak
                      ? 'secret_leak_in_changed_files'
                      : null;
            expect(v.reason, JSON.stringify({ baseline, filesChanged, tests, secrets })).toBe(expected);
            expect(v.pass).toBe(expected === null);
          }
        }
      }
    }
  });
});

describe('judgeEvidence: failures (every axis is listed)', () => {
  it('lists the empty diff', () => {
    expect(judgeEvidence(facts({ filesChanged: 0 }), ON).failures).toEqual(['no file differs from the run start']);
  });

  it('lists failed tests with the log path', () => {
    expect(judgeEvidence(facts({ tests: RED }), ON).failures).toEqual(['the test command failed (log: /runs/r1/tests/iter-4.log)']);
  });

  it('lists timed-out tests with the log path', () => {
    expect(judgeEvidence(facts({ tests: TIMED_OUT }), ON).failures).toEqual([
      'the test command timed out (log: /runs/r1/tests/iter-5.log)',
    ]);
  });

  it('lists each secret finding with kind, file and line', () => {
    expect(judgeEvidence(facts({ secrets: LEAK(2) }), ON).failures).toEqual([
      'possible AWS access key id in src/config0.ts:3',
      'possible GitHub token in src/config1.ts:4',
    ]);
  });

  it('lists at most 3 secret findings', () => {
    const v = judgeEvidence(facts({ secrets: LEAK(7) }), ON);
    expect(v.failures).toHaveLength(3);
    expect(v.failures.every((l) => l.startsWith('possible '))).toBe(true);
    expect(v.failures[2]).toBe('possible AWS access key id in src/config2.ts:5');
  });

  it('lists every failing axis even when an earlier one decides the reason, in axis order, at most 5', () => {
    const v = judgeEvidence(facts({ filesChanged: 0, tests: RED, secrets: LEAK(6) }), ON);
    expect(v.reason).toBe('empty_diff_and_tests_red');
    expect(v.failures).toEqual([
      'no file differs from the run start',
      'the test command failed (log: /runs/r1/tests/iter-4.log)',
      'possible AWS access key id in src/config0.ts:3',
      'possible GitHub token in src/config1.ts:4',
      'possible AWS access key id in src/config2.ts:5',
    ]);
  });

  it('an empty diff with secrets reports empty_diff but still lists the secret', () => {
    const v = judgeEvidence(facts({ filesChanged: 0, secrets: LEAK(1) }), ON);
    expect(v.reason).toBe('empty_diff');
    expect(v.failures).toEqual(['no file differs from the run start', 'possible AWS access key id in src/config0.ts:3']);
  });

  it('an unreachable base lists no diff failure', () => {
    const v = judgeEvidence(facts({ baseline: 'base_unreachable', filesChanged: 0, tests: RED }), ON);
    expect(v.failures).toEqual(['the test command failed (log: /runs/r1/tests/iter-4.log)']);
  });
});

describe('judgeEvidence: inconclusive cases pass but are listed', () => {
  it.each<[string, Partial<EvidenceFacts>, EvidenceKnobs, string[]]>([
    ['fully verified', {}, ON, []],
    ['no test command', { tests: null }, ON, ['no_test_runner']],
    ['no test command, counted as affirmative', { tests: null }, { ...ON, evidenceNoTestsAffirmative: true }, []],
    ['the affirmative knob does not touch a real test run', { tests: GREEN }, { ...ON, evidenceNoTestsAffirmative: true }, []],
    ['unreachable base with changes', { baseline: 'base_unreachable', filesChanged: 4 }, ON, ['base_unreachable']],
    ['unreachable base with an empty diff', { baseline: 'base_unreachable', filesChanged: 0 }, ON, ['base_unreachable']],
    ['secret scan disabled', { secrets: null }, ON, ['secret_scan_disabled']],
    [
      'all three, in axis order',
      { baseline: 'base_unreachable', tests: null, secrets: null },
      ON,
      ['base_unreachable', 'no_test_runner', 'secret_scan_disabled'],
    ],
    [
      'all but tests when no tests are affirmative',
      { baseline: 'base_unreachable', tests: null, secrets: null },
      { ...ON, evidenceNoTestsAffirmative: true },
      ['base_unreachable', 'secret_scan_disabled'],
    ],
    ['a conclusive run-start tree baseline is not inconclusive', { baseline: 'run_start_tree' }, ON, []],
  ])('%s -> %j', (_label, over, knobs, inconclusive) => {
    const v = judgeEvidence(facts(over), knobs);
    expect(v.pass).toBe(true);
    expect(v.inconclusive).toEqual(inconclusive);
  });

  it('inconclusive entries are recorded on a block too', () => {
    const v = judgeEvidence(facts({ baseline: 'base_unreachable', tests: RED, secrets: null }), ON);
    expect(v.pass).toBe(false);
    expect(v.reason).toBe('tests_red');
    expect(v.inconclusive).toEqual(['base_unreachable', 'secret_scan_disabled']);
  });

  it('an empty secret list is a conclusive clean scan', () => {
    expect(judgeEvidence(facts({ secrets: [] }), ON).inconclusive).not.toContain('secret_scan_disabled');
  });
});

describe('judgeEvidence: the master switch', () => {
  const OFF: EvidenceKnobs = { evidenceGate: false, evidenceNoTestsAffirmative: false };

  it.each<[string, Partial<EvidenceFacts>]>([
    ['clean facts', {}],
    ['every axis failing', { filesChanged: 0, tests: RED, secrets: LEAK(3) }],
    ['every axis inconclusive', { baseline: 'base_unreachable', tests: null, secrets: null }],
  ])('gate off passes with only evidence_gate_disabled (%s)', (_label, over) => {
    expect(judgeEvidence(facts(over), OFF)).toEqual<EvidenceVerdict>({
      pass: true,
      reason: null,
      failures: [],
      inconclusive: ['evidence_gate_disabled'],
      enabled: false,
    });
  });

  it('gate off ignores the no-tests knob', () => {
    expect(judgeEvidence(facts({ tests: null }), { evidenceGate: false, evidenceNoTestsAffirmative: true }).inconclusive).toEqual([
      'evidence_gate_disabled',
    ]);
  });

  it('the default knobs turn the gate on and treat no tests as inconclusive', () => {
    const k = defaultKnobs();
    const v = judgeEvidence(facts({ tests: null, filesChanged: 0 }), k);
    expect(v.enabled).toBe(true);
    expect(v.reason).toBe('empty_diff');
    expect(v.inconclusive).toEqual(['no_test_runner']);
  });
});

describe('describeBlock', () => {
  it('is empty for a pass', () => {
    expect(describeBlock(judgeEvidence(facts(), ON), 4)).toBe('');
    expect(describeBlock(judgeEvidence(facts({ tests: null, secrets: null }), ON), 4)).toBe('');
    expect(describeBlock(judgeEvidence(facts({ filesChanged: 0 }), { evidenceGate: false, evidenceNoTestsAffirmative: false }), 4)).toBe(
      '',
    );
  });

  it.each<[string, Partial<EvidenceFacts>, RegExp]>([
    ['empty diff', { filesChanged: 0 }, /nothing changed since the run started\.$/m],
    ['tests red', { tests: RED }, /: the tests fail\.$/m],
    ['both', { filesChanged: 0, tests: RED }, /nothing changed since the run started and the tests fail\.$/m],
    [
      'secret',
      { secrets: LEAK(1) },
      /a changed file appears to contain a credential; remove it and use configuration or environment variables\.$/m,
    ],
  ])('explains %s with the iteration and every failure as a bullet', (_label, over, what) => {
    const v = judgeEvidence(facts(over), ON);
    const text = describeBlock(v, 11);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^Completion was refused at iteration 11 by the evidence gate: /);
    expect(lines[0]).toMatch(what);
    expect(lines.slice(1)).toEqual(v.failures.map((f) => `- ${f}`));
  });

  it('quotes the test log path and each secret location', () => {
    const text = describeBlock(judgeEvidence(facts({ tests: RED, secrets: LEAK(2) }), ON), 3);
    expect(text).toContain('- the test command failed (log: /runs/r1/tests/iter-4.log)');
    expect(text).toContain('- possible AWS access key id in src/config0.ts:3');
    expect(text).toContain('- possible GitHub token in src/config1.ts:4');
  });
});
