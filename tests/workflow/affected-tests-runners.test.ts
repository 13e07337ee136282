/**
 * Affected tests between completion checks for unittest and node's test runner, against the
 * suite's real Temporal server with a scripted agent, real git, the machine's python3 and node,
 * and the default sandbox (pytest's own run is tests/workflow/affected-tests.test.ts). Each
 * repository has three modules with a test file each, and a script a fourth test runs as a
 * process (no test imports it).
 *
 * The agent, as an adversary, changes the add module and, beside it, breaks the script, then
 * claims done. Its iteration's tests gate runs the add tests alone (asserted from the runner's
 * own lines in the test log: unittest's `-v` lines, node's spec reporter) and passes; the
 * completion check runs the full suite, which fails on the script's test, and the claim is
 * refused. The fix of the next iteration is judged by the full suite again, and the run ends done.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Knobs } from '../../schemas/knobs.js';
import {
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  runInput,
  startRun,
  uniqueId,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';
import { patient } from '../support/patience.js';

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  env = await createTestEnv();
});
afterAll(async () => {
  await env?.close();
});

interface Case {
  runner: string;
  command: string;
  files: Record<string, string>;
  touchAdd: Record<string, string>;
  breakScript: Record<string, string>;
  fixScript: Record<string, string>;
  /** The tests a section of the test log reports, by the runner's own lines. */
  ran: (section: string) => string[];
  all: string[];
  add: string[];
}

const unittestCase = (imports: string, cls: string, body: string): string =>
  `import unittest\n${imports}\n\n\nclass ${cls}(unittest.TestCase):\n${body}`;

const UNITTEST: Case = {
  runner: 'unittest',
  command: 'python3 -m unittest',
  files: {
    'calc/__init__.py': '',
    'calc/add.py': '"""Addition."""\n\n\ndef add(a, b):\n    """The sum."""\n    return a + b\n',
    'calc/mul.py': '"""Multiplication."""\n\n\ndef mul(a, b):\n    """The product."""\n    return a * b\n',
    'calc/div.py': '"""Division."""\n\n\ndef div(a, b):\n    """The quotient."""\n    return a / b\n',
    'scripts/report.py': 'print("total: 3")\n',
    'tests/__init__.py': '',
    'tests/test_add.py': unittestCase(
      'from calc.add import add',
      'TestAdd',
      '    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n\n    def test_add_neg(self):\n        self.assertEqual(add(-1, -2), -3)\n',
    ),
    'tests/test_mul.py': unittestCase(
      'from calc.mul import mul',
      'TestMul',
      '    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n',
    ),
    'tests/test_div.py': unittestCase(
      'from calc.div import div',
      'TestDiv',
      '    def test_div(self):\n        self.assertEqual(div(6, 3), 2)\n',
    ),
    'tests/test_report.py': unittestCase(
      'import subprocess\nimport sys',
      'TestReport',
      '    def test_report(self):\n        out = subprocess.run([sys.executable, "scripts/report.py"], capture_output=True, ' +
        'text=True).stdout\n        self.assertEqual(out, "total: 3\\n")\n',
    ),
    '.gitignore': '__pycache__/\n',
  },
  touchAdd: {
    'calc/add.py':
      '"""Addition."""\n\n\ndef add(a, b):\n    """The sum."""\n    return a + b\n\n\ndef add3(a, b, c):\n    """The sum of three."""\n    return a + b + c\n',
  },
  breakScript: { 'scripts/report.py': 'print("total: 4")\n' },
  fixScript: { 'scripts/report.py': 'print("total: 3")\n' },
  ran: (s) => [...new Set([...s.matchAll(/^test\w* \(([\w.]+)\) \.\.\. /gm)].map((m) => m[1] as string))].sort(),
  all: [
    'tests.test_add.TestAdd.test_add',
    'tests.test_add.TestAdd.test_add_neg',
    'tests.test_div.TestDiv.test_div',
    'tests.test_mul.TestMul.test_mul',
    'tests.test_report.TestReport.test_report',
  ],
  add: ['tests.test_add.TestAdd.test_add', 'tests.test_add.TestAdd.test_add_neg'],
};

const nodeTest = (imports: string, body: string): string =>
  `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\n${imports}\n${body}`;

const NODE: Case = {
  runner: 'node-test',
  command: 'node --test',
  files: {
    'package.json': JSON.stringify({ name: 'calc', private: true }),
    'src/add.mjs': '/** The sum. */\nexport const add = (a, b) => a + b;\n',
    'src/mul.mjs': '/** The product. */\nexport const mul = (a, b) => a * b;\n',
    'src/div.mjs': '/** The quotient. */\nexport const div = (a, b) => a / b;\n',
    'scripts/report.mjs': "console.log('total: 3');\n",
    'test/add.test.mjs': nodeTest(
      "import { add } from '../src/add.mjs';",
      "test('adds', () => assert.equal(add(1, 2), 3));\ntest('adds negatives', () => assert.equal(add(-1, -2), -3));\n",
    ),
    'test/mul.test.mjs': nodeTest("import { mul } from '../src/mul.mjs';", "test('muls', () => assert.equal(mul(2, 3), 6));\n"),
    'test/div.test.mjs': nodeTest("import { div } from '../src/div.mjs';", "test('divs', () => assert.equal(div(6, 3), 2));\n"),
    'test/report.test.mjs': nodeTest(
      "import { execFileSync } from 'node:child_process';",
      "test('reports', () => assert.equal(execFileSync(process.execPath, ['scripts/report.mjs'], { encoding: 'utf8' }), 'total: 3\\n'));\n",
    ),
  },
  touchAdd: {
    'src/add.mjs':
      '/** The sum. */\nexport const add = (a, b) => a + b;\n/** The sum of three. */\nexport const add3 = (a, b, c) => a + b + c;\n',
  },
  breakScript: { 'scripts/report.mjs': "console.log('total: 4');\n" },
  fixScript: { 'scripts/report.mjs': "console.log('total: 3');\n" },
  // The spec reporter's `✔ name (…ms)` and `✖ name (…ms)` (a failure is listed again at the end).
  ran: (s) => [...new Set([...s.matchAll(/^\s*[✔✖] (.+?) \(\d[\d.]*m?s\)/gm)].map((m) => m[1] as string))].sort(),
  all: ['adds', 'adds negatives', 'divs', 'muls', 'reports'],
  add: ['adds', 'adds negatives'],
};

// The code review, the PRD checklist and the council are off: the claim is judged by the quality
// gates and the evidence gate, which are what read the tests (the default-knobs matrix covers the
// rest with the knob at its default).
const KNOBS: Partial<Knobs> = { codeReview: false, prdChecklist: false, councilEnabled: false, gateTimeoutSeconds: 60, maxIterations: 4 };

/** The sections of a test log, one per test run, each with the tests the runner's lines report. */
function runsInLog(c: Case, repo: string, runId: string, iteration: number): string[][] {
  const log = readFileSync(path.join(repo, '.vigil/runs', runId, `tests-${String(iteration).padStart(4, '0')}.log`), 'utf8');
  return log
    .split(/^=== vigil: tests for iteration /m)
    .slice(1)
    .map((s) => c.ran(s));
}

describe('affected tests between completion checks: unittest and node --test', () => {
  for (const c of [UNITTEST, NODE]) {
    it(
      `${c.runner}: an iteration runs the tests its change affects; the completion check runs everything and refuses what they missed`,
      async () => {
        const repo = makeRepo({ files: c.files });
        const file = writeScenario(repo, {
          version: 1,
          iterations: [
            { writes: { ...c.touchAdd, ...c.breakScript }, claim: 'file' },
            { writes: c.fixScript, claim: 'file' },
          ],
        });
        const tq = uniqueId('affected-runners');
        const worker = await makeWorker(env, tq);
        const runId = uniqueId('affected-runners');
        const outcome = await worker.runUntil(async () => {
          const handle = await startRun(env, tq, runInput(repo, file, { ...KNOBS, testCommand: c.command }), runId);
          return handle.result();
        });
        expect(outcome, outcome.reason).toMatchObject({ status: 'completion_promise_fulfilled', iteration: 2 });
        // The baseline: the full suite on the tree the run started with.
        expect(runsInLog(c, repo, runId, 0)).toEqual([c.all]);
        // Iteration 1: the gate pass ran the add tests alone, and passed; the completion check ran
        // the full suite on the same tree, and the script's test failed.
        const [partial, check] = runsInLog(c, repo, runId, 1);
        expect(partial).toEqual(c.add);
        expect(check).toEqual(c.all);
        const second = readFileSync(path.join(repo, '.vigil/runs', runId, 'iteration-0002.prompt.md'), 'utf8');
        expect(second).toContain('QUALITY GATE FAILURES');
        expect(second).toMatch(/tests FAILED[^]*report/);
        // Iteration 2: the check's full suite passes; what done rests on counts every baseline test.
        expect(runsInLog(c, repo, runId, 2).at(-1)).toEqual(c.all);
        expect(outcome.notes[0]).toMatch(/^evidence: baseline tests 5 of 5 passed /);
      },
      patient(240_000),
    );
  }
});
