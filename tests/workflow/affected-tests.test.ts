/**
 * Affected tests between completion checks, the whole suite at each check, against the suite's
 * real Temporal server with a scripted agent, real git, pytest through the machine's python3 and
 * the default sandbox. The repository has three modules with a test file each, and a script a
 * fourth test runs as a process (no test imports it).
 *
 * The agent, as an adversary, changes the add module and, beside it, breaks the script, then
 * claims done. Its iteration's tests gate runs the add tests alone (asserted from pytest's own
 * `-rA` lines in the test log) and passes; the completion check runs the full suite, which fails
 * on the script's test, and the claim is refused. The honest fix of the next iteration is judged
 * by the full suite again, and the run ends done on it: its evidence line counts every baseline
 * test. With the knob at 1 the same run tests the full suite every time (the control).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { coverageDir } from '../../lib/gates/pytest-map.js';
import type { Knobs } from '../../schemas/knobs.js';
import {
  assertBuilt,
  createTestEnv,
  makeRepo,
  makeWorker,
  ROOT,
  runInput,
  startRun,
  status,
  uniqueId,
  writeScenario,
  type TestEnv,
} from '../support/harness.js';

let env: TestEnv;
beforeAll(async () => {
  assertBuilt();
  // coverage.py as the bootstrap installs it: pytest selects by its per-test map.
  execFileSync(path.join(ROOT, 'scripts/install-test-tools.sh'), { encoding: 'utf8', timeout: 300_000 });
  env = await createTestEnv();
});
afterAll(async () => {
  await env?.close();
});

const FILES: Record<string, string> = {
  'calc/__init__.py': '',
  'calc/add.py': '"""Addition."""\n\n\ndef add(a, b):\n    """The sum."""\n    return a + b\n',
  'calc/mul.py': '"""Multiplication."""\n\n\ndef mul(a, b):\n    """The product."""\n    return a * b\n',
  'calc/div.py': '"""Division."""\n\n\ndef div(a, b):\n    """The quotient."""\n    return a / b\n',
  'scripts/report.py': 'print("total: 3")\n',
  'tests/test_add.py':
    'from calc.add import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_add_neg():\n    assert add(-1, -2) == -3\n',
  'tests/test_mul.py': 'from calc.mul import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n',
  'tests/test_div.py': 'from calc.div import div\n\n\ndef test_div():\n    assert div(6, 3) == 2\n',
  'tests/test_report.py':
    'import subprocess\nimport sys\n\n\ndef test_report():\n    out = subprocess.run([sys.executable, "scripts/report.py"], ' +
    'capture_output=True, text=True).stdout\n    assert out == "total: 3\\n"\n',
  '.gitignore': '__pycache__/\n',
};
const ADD3 =
  '"""Addition."""\n\n\ndef add(a, b):\n    """The sum."""\n    return a + b\n\n\ndef add3(a, b, c):\n    """The sum of three."""\n    return a + b + c\n';

// The code review, the PRD checklist and the council are off: the claim is judged by the quality
// gates and the evidence gate, which are what read the tests (the default-knobs matrix covers the
// rest with the knob at its default).
const KNOBS: Partial<Knobs> = {
  testCommand: 'python3 -m pytest -q -rA',
  codeReview: false,
  prdChecklist: false,
  councilEnabled: false,
  gateTimeoutSeconds: 60,
  maxIterations: 4,
};

/** The sections of a test log, one per test run, each with the pytest node ids it reports passed or failed. */
function runsInLog(repo: string, runId: string, iteration: number): string[][] {
  const log = readFileSync(path.join(repo, '.vigil/runs', runId, `tests-${String(iteration).padStart(4, '0')}.log`), 'utf8');
  return log
    .split(/^=== vigil: tests for iteration /m)
    .slice(1)
    .map((s) => [...s.matchAll(/^(?:PASSED|FAILED) (tests\/\S+)/gm)].map((m) => m[1] as string).sort());
}

async function run(knobs: Partial<Knobs>) {
  const repo = makeRepo({ files: FILES });
  const file = writeScenario(repo, {
    version: 1,
    iterations: [
      // The adversary: a change to the add module, and beside it a broken script no test imports.
      { writes: { 'calc/add.py': ADD3, 'scripts/report.py': 'print("total: 4")\n' }, claim: 'file' },
      { writes: { 'scripts/report.py': 'print("total: 3")\n' }, claim: 'file' },
    ],
  });
  const tq = uniqueId('affected');
  const worker = await makeWorker(env, tq);
  const runId = uniqueId('affected');
  return worker.runUntil(async () => {
    const handle = await startRun(env, tq, runInput(repo, file, { ...KNOBS, ...knobs }), runId);
    const outcome = await handle.result();
    return { outcome, snap: await status(handle), repo, runId };
  });
}

const ALL = [
  'tests/test_add.py::test_add',
  'tests/test_add.py::test_add_neg',
  'tests/test_div.py::test_div',
  'tests/test_mul.py::test_mul',
  'tests/test_report.py::test_report',
];

describe('affected tests between completion checks', () => {
  it('an iteration runs the tests its change affects; the completion check runs everything and refuses what they missed', async () => {
    const { outcome, repo, runId } = await run({});
    expect(outcome, outcome.reason).toMatchObject({ status: 'completion_promise_fulfilled', iteration: 2 });
    // The baseline: the full suite on the tree the run started with.
    expect(runsInLog(repo, runId, 0)).toEqual([ALL]);
    // Iteration 1: the gate pass after the agent ran the add tests alone, and passed; the completion
    // check ran the full suite on the same tree, and the script's test failed.
    const [partial, check] = runsInLog(repo, runId, 1);
    expect(partial).toEqual(['tests/test_add.py::test_add', 'tests/test_add.py::test_add_neg']);
    expect(check).toEqual(ALL);
    const prompts = path.join(repo, '.vigil/runs', runId, 'iteration-0002.prompt.md');
    const second = readFileSync(prompts, 'utf8');
    expect(second).toContain('QUALITY GATE FAILURES');
    expect(second).toMatch(/tests FAILED[^]*test_report/);
    // Iteration 2: the test that failed is selected with the change, then the check's full suite
    // passes. pytest's per-test map (recorded by the baseline) selects against everything changed
    // since it was recorded: the add tests too.
    expect(coverageDir(), 'coverage.py installed').not.toBeNull();
    const [partial2, check2] = runsInLog(repo, runId, 2);
    expect(partial2).toEqual(['tests/test_add.py::test_add', 'tests/test_add.py::test_add_neg', 'tests/test_report.py::test_report']);
    expect(check2).toEqual(ALL);
    // What done rests on counts every baseline test, never the partial run's.
    expect(outcome.notes[0]).toMatch(/^evidence: baseline tests 5 of 5 passed /);
  });

  it('with affectedTestsFullEvery at 1 every test run is the full suite (the control)', async () => {
    // The knob turned off, to show the selection above is the knob's doing.
    const { outcome, repo, runId } = await run({ affectedTestsFullEvery: 1 });
    expect(outcome, outcome.reason).toMatchObject({ status: 'completion_promise_fulfilled', iteration: 2 });
    // Iteration 1: the gate pass's full suite fails already, and the check reuses that run of the tree.
    expect(runsInLog(repo, runId, 1)).toEqual([ALL]);
  });
});
