/**
 * The tests verdict that trusts no exit code (rules/tests-verdict.ts), from the
 * reports real runners write (lib/gates/test-report.ts), in the default sandbox: pytest
 * and unittest through the machine's pyenv python3, node's test runner, vitest. Each repository
 * starts with a bug a test catches; the run's first test run is its baseline. Then a builder
 * plays each cheat of the corpus (tests/support/cheat-corpus.ts): the ones the runner can see (a
 * deleted or skipped test, a test process ended with status 0 at import or when the failing input
 * arrives) are red with their count; the ones it cannot (an edited expected value, a rewired
 * harness, a hard-coded input, a value read from the caller's source) are shown to really pass
 * it, which is why the integrity and gaming rules exist (tests/unit/integrity-gaming.test.ts); the
 * honest fixes are green.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGoJson, parseJunit, parseLibtest, parseUnittest } from '../../lib/gates/test-report.js';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { runTests } from '../../activities/tests.js';
import type { TestResult } from '../../schemas/activities.js';
import type { TestReport } from '../../schemas/test-report.js';
import { testsVerdict } from '../../rules/tests-verdict.js';
import { RUNNERS } from '../support/cheat-corpus.js';
import { git, ROOT } from '../support/harness.js';

const summary = { verdict: 'pass', reason: 'x: exit 0 (counts unknown)' } as const;
const report = (tests: [string, 'passed' | 'failed' | 'skipped' | 'error'][], complete = true): TestReport => ({
  format: 'junit',
  complete,
  incomplete: complete ? null : 'cut short',
  tests: tests.map(([id, status]) => ({ id, status })),
});
const BASE = report([
  ['t::simple', 'passed'],
  ['t::negative', 'failed'],
  ['t::windows_only', 'skipped'],
]);
const judge = (r: TestReport | null, exitCode = 0, expected = true) =>
  testsVerdict({ runner: 'pytest', exitCode, timedOut: false, report: r, baseline: BASE, expected, summary });

describe('the verdict against the baseline', () => {
  it('is green only when every baseline test ran and passed (one skipped at the start may stay skipped)', () => {
    const ok = judge(
      report([
        ['t::simple', 'passed'],
        ['t::negative', 'passed'],
        ['t::windows_only', 'skipped'],
        ['t::new', 'passed'],
      ]),
    );
    expect(ok).toMatchObject({ verdict: 'pass', reason: 'pytest: 3 passed, 1 skipped (from its report; 3 of 3 baseline tests passed)' });
  });

  it('is red, with the count, for a missing report, an incomplete one, a deleted or skipped baseline test, or a failure', () => {
    expect(judge(null).reason).toBe('pytest: the test process exited 0 without its report: 0 of 3 baseline tests reported');
    expect(judge(report([['t::simple', 'passed']], false), 0).reason).toBe(
      'pytest: the test process exited 0 before its report was complete (cut short): 1 of 3 baseline tests reported',
    );
    expect(
      judge(
        report([
          ['t::simple', 'passed'],
          ['t::windows_only', 'skipped'],
        ]),
      ).reason,
    ).toMatch(/^pytest: 1 of 3 baseline tests were not reported \(deleted, renamed or never run\): t::negative$/);
    expect(
      judge(
        report([
          ['t::simple', 'passed'],
          ['t::negative', 'skipped'],
          ['t::windows_only', 'skipped'],
        ]),
      ).reason,
    ).toMatch(/1 of 3 baseline tests did not pass .*: t::negative$/);
    expect(
      judge(
        report([
          ['t::simple', 'passed'],
          ['t::negative', 'passed'],
          ['t::windows_only', 'skipped'],
          ['t::new', 'failed'],
        ]),
        1,
      ).reason,
    ).toBe('pytest: 1 failed, 2 passed (exit 1); first: t::new');
    for (const r of [null, report([], false)]) expect(judge(r).verdict).toBe('fail');
  });

  it('without a baseline: a report alone is judged, and a runner that should have written one and did not is red', () => {
    const noBase = (r: TestReport | null, expected: boolean) =>
      testsVerdict({ runner: 'pytest', exitCode: 0, timedOut: false, report: r, baseline: null, expected, summary });
    expect(noBase(null, true).verdict).toBe('fail');
    expect(noBase(null, false)).toMatchObject({ verdict: 'pass', reason: 'x: exit 0 (counts unknown)' });
    expect(noBase(report([]), true).verdict).toBe('inconclusive');
  });
});

describe('reading the runners’ reports', () => {
  it('reads JUnit XML (pytest, nested suites, node’s comment count), go -json, libtest and unittest -v', () => {
    const junit = parseJunit(
      '<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="3"><testcase classname="tests.test_gap" ' +
        'name="test_a"/><testcase classname="tests.test_gap" name="test_b"><failure message="x"/></testcase><testcase ' +
        'classname="tests.test_gap" name="test_c"><skipped/></testcase></testsuite></testsuites>',
    );
    expect(junit).toMatchObject({
      complete: true,
      tests: [{ id: 'tests.test_gap::test_a', status: 'passed' }, { status: 'failed' }, { status: 'skipped' }],
    });
    expect(parseJunit('<testsuites tests="4"><testsuite name="s"><testcase name="a"/></testsuite></testsuites>')?.complete).toBe(false);
    expect(parseJunit('<testsuites><testcase name="a" classname="test"/><!-- tests 2 --></testsuites>')).toMatchObject({ complete: false });
    expect(parseJunit('not xml at all <<<')?.tests ?? []).toEqual([]);
    // pytest 9 counts subtests in `tests` (as pytest 9.2 writes it: 3 tests, 5 subtests passed),
    // and a failed subtest as a failure of its test.
    const subtests =
      '<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="8">' +
      '<testcase classname="test_s" name="test_sub" /><testcase classname="test_s.T" name="test_u" /><testcase classname="test_s" name="test_plain">' +
      '<failure message="contains 1 failed subtest">contains 1 failed subtest</failure></testcase></testsuite></testsuites>';
    expect(parseJunit(subtests)).toMatchObject({
      complete: true,
      tests: [
        { id: 'test_s::test_sub', status: 'passed' },
        { id: 'test_s.T::test_u', status: 'passed' },
        { id: 'test_s::test_plain', status: 'failed' },
      ],
    });
    // Another writer's count that is more than it lists stays incomplete, and so does pytest's that is less.
    expect(
      parseJunit('<testsuites name="other"><testsuite name="s" tests="3"><testcase name="a"/></testsuite></testsuites>')?.complete,
    ).toBe(false);
    expect(
      parseJunit(
        '<testsuites name="pytest tests"><testsuite name="pytest" tests="1"><testcase name="a"/><testcase name="b"/></testsuite></testsuites>',
      )?.complete,
    ).toBe(false);
    const go = [
      '{"Action":"run","Package":"m/p","Test":"TestA"}',
      '{"Action":"pass","Package":"m/p","Test":"TestA"}',
      '{"Action":"run","Package":"m/p","Test":"TestB"}',
    ].join('\n');
    expect(parseGoJson(go)).toMatchObject({
      complete: false,
      tests: [
        { id: 'm/p::TestA', status: 'passed' },
        { id: 'm/p::TestB', status: 'error' },
      ],
    });
    expect(parseGoJson(`${go}\n{"Action":"fail","Package":"m/p","Test":"TestB"}\n{"Action":"fail","Package":"m/p"}`)?.complete).toBe(true);
    expect(parseLibtest('running 2 tests\ntest a ... ok\ntest b ... FAILED\n\ntest result: FAILED. 1 passed; 1 failed;')).toMatchObject({
      complete: true,
      tests: [
        { id: 'a', status: 'passed' },
        { id: 'b', status: 'failed' },
      ],
    });
    expect(parseLibtest('running 2 tests\ntest a ... ok\n')?.complete).toBe(false);
    const ut = 'test_a (t.T.test_a) ... ok\ntest_b (t.T.test_b)\nDoc line ... FAIL\n\nRan 2 tests in 0.001s\n\nFAILED (failures=1)\n';
    expect(parseUnittest(ut)).toMatchObject({
      complete: true,
      tests: [
        { id: 't.T.test_a', status: 'passed' },
        { id: 't.T.test_b', status: 'failed' },
      ],
    });
    expect(parseUnittest('test_a (t.T.test_a) ... ok\n')?.complete).toBe(false);
  });
});

describe.runIf(sandboxPlatform().problem === null)('real runners in the default sandbox, against their baseline', () => {
  const saved = { ...process.env };
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'vigil-tests-verdict-'));
    process.env.VIGIL_HOME = path.join(root, 'vigil-home');
    process.env.VIGIL_SANDBOX = 'auto';
    // vitest comes from this checkout's node_modules, linked into each repository as a project's own
    // would be installed: the sandbox shows that folder as it shows a user's.
    process.env.VIGIL_SANDBOX_READABLE = realpathSync(path.join(ROOT, 'node_modules'));
  });
  afterAll(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    rmSync(root, { recursive: true, force: true });
  });

  const write = (repo: string, files: Record<string, string | null>): void => {
    for (const [f, text] of Object.entries(files)) {
      if (text === null) rmSync(path.join(repo, f), { force: true });
      else writeFileSync(path.join(repo, f), text);
    }
  };
  let runs = 0;
  const run = (runId: string, repo: string, command: string, recordBaseline = false): Promise<TestResult> =>
    new MockActivityEnvironment({ attempt: 1 }, { logger: new DefaultLogger('ERROR') }).run(runTests, {
      runId,
      repoPath: repo,
      command,
      iteration: (runs += 1),
      timeoutSeconds: 120,
      ...(recordBaseline ? { recordBaseline: true } : {}),
    }) as Promise<TestResult>;

  for (const r of RUNNERS) {
    for (const [cheat, { files, runner: reason }] of [
      ...Object.entries(r.cheats),
      ['fixes the code (honest)', { files: r.fix, runner: null }] as const,
      ['fixes the code and adds a test (honest)', { files: r.fixWithTest, runner: null }] as const,
    ]) {
      // A cheat the runner cannot see passes it: the corpus proves each such cheat really works,
      // and the integrity and gaming rules stop it (tests/unit/integrity-gaming.test.ts).
      it(`${r.name}: a builder that ${cheat} is ${reason ? 'red' : 'green to the runner'}`, async () => {
        const repo = path.join(root, `${r.name}-${cheat.replace(/\W+/g, '-')}`);
        mkdirSync(repo);
        write(repo, r.files);
        if (r.name === 'vitest') symlinkSync(path.join(ROOT, 'node_modules'), path.join(repo, 'node_modules'));
        git(repo, 'init', '-q');
        const runId = `verdict-${r.name}-${runs}`;
        const base = await run(runId, repo, r.command, true);
        expect(base.report, base.reason).toMatchObject({ total: 2, passed: 1, failed: 1 });
        write(repo, files);
        const after = await run(runId, repo, r.command);
        if (reason) {
          expect(after.verdict, after.reason).toBe('fail');
          expect(after.reason).toMatch(reason);
        } else {
          expect(after.verdict, after.reason).toBe('pass');
          expect(after.reason).toMatch(/2 of 2 baseline tests passed/);
        }
      });
    }
  }

  // pytest 9's subtests (as more-itertools' suite has them): its report counts them in `tests`.
  it('pytest: a suite with subtests is green when they pass, and red when one fails', async () => {
    const repo = path.join(root, 'pytest-subtests');
    mkdirSync(repo);
    const suite = (limit: number): Record<string, string> => ({
      'test_sub.py':
        `def test_sub(subtests):\n    for i in range(3):\n        with subtests.test(i=i):\n            assert i < ${limit}\n\n` +
        'def test_plain():\n    assert True\n',
    });
    write(repo, suite(3));
    git(repo, 'init', '-q');
    const base = await run('verdict-subtests', repo, 'python3 -m pytest -q', true);
    expect(base.verdict, base.reason).toBe('pass');
    expect(base.report, base.reason).toMatchObject({ total: 2, passed: 2, failed: 0 });
    write(repo, suite(2));
    const after = await run('verdict-subtests', repo, 'python3 -m pytest -q');
    expect(after.verdict, after.reason).toBe('fail');
    expect(after.report).toMatchObject({ total: 2, failed: 1 });
  });
});
