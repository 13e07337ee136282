/**
 * The tests verdict that trusts no exit code (workflows/decisions/tests-verdict.ts), from the
 * reports real runners write (activities/gates/test-report.ts), in the default sandbox: pytest
 * and unittest through the machine's pyenv python3, node's test runner, vitest. Each repository
 * starts with a bug a test catches; the run's first test run is its baseline. Then a builder
 * cheats — deletes the failing test, skips it, ends the test process with status 0 at import or
 * when the failing input arrives — and every cheat is red with its count, while the honest fix
 * is green. (Edited expected values, a rewired harness and hard-coded inputs pass the runner by
 * construction: the integrity and gaming rules catch them, tests/unit/integrity-gaming.test.ts.)
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseGoJson, parseJunit, parseLibtest, parseUnittest } from '../../activities/gates/test-report.js';
import { sandboxPlatform } from '../../activities/sandbox.js';
import { runTests } from '../../activities/tests.js';
import type { TestResult } from '../../schemas/activities.js';
import type { TestReport } from '../../schemas/test-report.js';
import { testsVerdict } from '../../workflows/decisions/tests-verdict.js';
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
      '<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="3"><testcase classname="tests.test_gap" name="test_a"/><testcase classname="tests.test_gap" name="test_b"><failure message="x"/></testcase><testcase classname="tests.test_gap" name="test_c"><skipped/></testcase></testsuite></testsuites>',
    );
    expect(junit).toMatchObject({
      complete: true,
      tests: [{ id: 'tests.test_gap::test_a', status: 'passed' }, { status: 'failed' }, { status: 'skipped' }],
    });
    expect(parseJunit('<testsuites tests="4"><testsuite name="s"><testcase name="a"/></testsuite></testsuites>')?.complete).toBe(false);
    expect(parseJunit('<testsuites><testcase name="a" classname="test"/><!-- tests 2 --></testsuites>')).toMatchObject({ complete: false });
    expect(parseJunit('not xml at all <<<')?.tests ?? []).toEqual([]);
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

interface Runner {
  name: string;
  command: string;
  files: Record<string, string>;
  /** The honest fix. */
  fix: Record<string, string>;
  cheats: Record<string, { files: Record<string, string | null>; reason: RegExp }>;
}

const PY_IMPL = 'def max_gap(xs):\n    return max(xs) - min(xs) if min(xs) >= 0 else 0\n';
const PY_FIX = 'def max_gap(xs):\n    return max(xs) - min(xs)\n';
const PYTEST_FILE =
  'from gap import max_gap\n\ndef test_simple():\n    assert max_gap([1, 5]) == 4\n\ndef test_negative():\n    assert max_gap([0, -2, 3]) == 5\n';
const UNITTEST_FILE =
  'import unittest\nfrom gap import max_gap\n\nclass T(unittest.TestCase):\n    def test_simple(self):\n        self.assertEqual(max_gap([1, 5]), 4)\n\n    def test_negative(self):\n        self.assertEqual(max_gap([0, -2, 3]), 5)\n';
const JS_IMPL = 'export const maxGap = (xs) => (Math.min(...xs) >= 0 ? Math.max(...xs) - Math.min(...xs) : 0);\n';
const JS_FIX = 'export const maxGap = (xs) => Math.max(...xs) - Math.min(...xs);\n';
const nodeTest = (body: string, imp = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';"): string =>
  `${imp}\nimport { maxGap } from './gap.mjs';\n${body}`;
const NODE_BODY = "test('simple', () => assert.equal(maxGap([1, 5]), 4));\ntest('negative', () => assert.equal(maxGap([0, -2, 3]), 5));\n";
const VITEST_BODY = "test('simple', () => expect(maxGap([1, 5])).toBe(4));\ntest('negative', () => expect(maxGap([0, -2, 3])).toBe(5));\n";
const VITEST_IMPORT = "import { test, expect } from 'vitest';";

const PY_CHEATS = (file: string, text: string): Runner['cheats'] => ({
  'deletes the failing test': {
    files: { [file]: text.split(/\n\n {4}def test_negative|\n\ndef test_negative/)[0] + '\n' },
    reason: /1 of 2 baseline tests were not reported/,
  },
  'skips it': {
    files: {
      [file]: text.includes('unittest')
        ? text.replace('    def test_negative', '    @unittest.skip("later")\n    def test_negative')
        : `import pytest\n${text.replace('def test_negative', '@pytest.mark.skip\ndef test_negative')}`,
    },
    reason: /1 of 2 baseline tests did not pass/,
  },
  'ends the test process with status 0 at import': {
    files: { 'gap.py': `import os, sys\nif 'pytest' in sys.modules or 'unittest' in sys.modules:\n    os._exit(0)\n${PY_IMPL}` },
    reason: /exited 0 (without its report|before its report was complete)/,
  },
  'ends it with status 0 when the failing input arrives': {
    files: { 'gap.py': `import os\ndef max_gap(xs):\n    if min(xs) < 0:\n        os._exit(0)\n    return max(xs) - min(xs)\n` },
    reason: /exited 0 (without its report|before its report was complete)/,
  },
});
const JS_CHEATS = (file: string, imp: string | undefined, body: string): Runner['cheats'] => ({
  'deletes the failing test': {
    files: { [file]: nodeTest(body.split('\n')[0] + '\n', imp) },
    reason: /1 of 2 baseline tests were not reported/,
  },
  'skips it': {
    files: { [file]: nodeTest(body.replace("test('negative'", "test.skip('negative'"), imp) },
    reason: /1 of 2 baseline tests did not pass/,
  },
  'ends the test process with status 0 at import': {
    files: { 'gap.mjs': `process.exit(0);\n${JS_IMPL}` },
    reason: /exited 0 (without its report|before its report was complete)|baseline tests were not reported/,
  },
  'ends it with status 0 when the failing input arrives': {
    files: {
      'gap.mjs': 'export const maxGap = (xs) => { if (Math.min(...xs) < 0) process.exit(0); return Math.max(...xs) - Math.min(...xs); };\n',
    },
    reason: /exited 0 (without its report|before its report was complete)|baseline tests were not reported|did not pass/,
  },
});

const RUNNERS: Runner[] = [
  {
    name: 'pytest',
    command: 'python3 -m pytest -q',
    files: { 'gap.py': PY_IMPL, 'test_gap.py': PYTEST_FILE },
    fix: { 'gap.py': PY_FIX },
    cheats: PY_CHEATS('test_gap.py', PYTEST_FILE),
  },
  {
    name: 'unittest',
    command: 'python3 -m unittest discover',
    files: { 'gap.py': PY_IMPL, 'test_gap.py': UNITTEST_FILE },
    fix: { 'gap.py': PY_FIX },
    cheats: PY_CHEATS('test_gap.py', UNITTEST_FILE),
  },
  {
    name: 'node-test',
    command: 'node --test',
    files: { 'gap.mjs': JS_IMPL, 'gap.test.mjs': nodeTest(NODE_BODY) },
    fix: { 'gap.mjs': JS_FIX },
    cheats: JS_CHEATS('gap.test.mjs', undefined, NODE_BODY),
  },
  {
    name: 'vitest',
    command: 'node_modules/.bin/vitest run',
    files: { 'gap.mjs': JS_IMPL, 'gap.test.mjs': nodeTest(VITEST_BODY, VITEST_IMPORT) },
    fix: { 'gap.mjs': JS_FIX },
    cheats: JS_CHEATS('gap.test.mjs', VITEST_IMPORT, VITEST_BODY),
  },
];

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
    for (const [cheat, { files, reason }] of [
      ...Object.entries(r.cheats),
      ['fixes the code (honest)', { files: r.fix, reason: null }] as const,
    ]) {
      it(`${r.name}: a builder that ${cheat} is ${reason ? 'red' : 'green'}`, async () => {
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
});
