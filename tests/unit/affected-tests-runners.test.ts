/**
 * Affected tests with real runners, real git and the default sandbox (activities/tests.ts with
 * activities/gates/affected-tests.ts): pytest and unittest through the machine's python3, node's
 * test runner (`node --test`, the test files named), vitest from this
 * checkout (in its own `vitest related` mode), jest 29.7.0 (`--findRelatedTests`; installed into a
 * cache by scripts/install-test-runners.sh, not a dependency of Vigil) and the machine's go (the
 * packages `go list` says import the change). Each repository has three modules with tests each,
 * and a script a fourth test runs as a process or reads (no test imports it). The run's first test run is its baseline and makes the
 * test map; then, asserted from the runner's own report: a change to one module runs that
 * module's tests and not the others; a change no import reaches, made beside it, is missed by the
 * partial run and caught by the full suite (what every completion check runs,
 * tests/workflow/affected-tests.test.ts); a harness change, a missing map and a map due for its
 * refresh run everything.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pad } from '../../activities/artifacts.js';
import { parseJunit } from '../../lib/gates/test-report.js';
import { sandboxPlatform } from '../../lib/sandbox-host.js';
import { runTests } from '../../activities/tests.js';
import type { RunTestsInput, TestResult } from '../../schemas/activities.js';
import { git, ROOT } from '../support/harness.js';
import { patient } from '../support/patience.js';
import { privateRunDir } from '../../lib/paths.js';

interface Repo {
  name: string;
  command: string;
  files: Record<string, string>;
  /** A harmless change to the add module (a new function), and the same breaking the script. */
  touchAdd: Record<string, string>;
  breakScript: Record<string, string>;
  fixScript: Record<string, string>;
  harness: Record<string, string>;
  /** How many tests the add module has. */
  addTests: number;
  /** What a selection counts (Go: packages). */
  unit: 'files' | 'packages';
  /** The node_modules the repository links to (null: none). */
  modules: () => string | null;
  /** How the runner's reason names its own selection mode, if it has one. */
  mode: string;
  harnessFile: string;
  /** pytest: selected by its per-test map (coverage.py), counted in tests. */
  perTest?: boolean;
}

const PY_REPO: Repo = {
  name: 'pytest',
  command: 'python3 -m pytest -q',
  files: {
    'calc/__init__.py': '',
    'calc/add.py': 'def add(a, b):\n    return a + b\n',
    'calc/mul.py': 'def mul(a, b):\n    return a * b\n',
    'calc/div.py': 'def div(a, b):\n    return a / b\n',
    'scripts/report.py': 'print("total: 3")\n',
    'tests/test_add.py':
      'from calc.add import add\n\ndef test_add():\n    assert add(1, 2) == 3\n\ndef test_add_neg():\n    assert add(-1, -2) == -3\n',
    'tests/test_mul.py': 'from calc.mul import mul\n\ndef test_mul():\n    assert mul(2, 3) == 6\n',
    'tests/test_div.py': 'from calc.div import div\n\ndef test_div():\n    assert div(6, 3) == 2\n',
    'tests/test_report.py':
      'import subprocess, sys\n\ndef test_report():\n    out = subprocess.run([sys.executable, "scripts/report.py"], ' +
      'capture_output=True, text=True).stdout\n    assert out == "total: 3\\n"\n',
  },
  touchAdd: { 'calc/add.py': 'def add(a, b):\n    return a + b\n\n\ndef add3(a, b, c):\n    return a + b + c\n' },
  breakScript: { 'scripts/report.py': 'print("total: 4")\n' },
  fixScript: { 'scripts/report.py': 'print("total: 3")\n' },
  harness: { 'tests/conftest.py': '# shared fixtures\n' },
  addTests: 2,
  unit: 'files',
  modules: () => null,
  mode: '',
  harnessFile: 'tests/conftest.py',
  perTest: true,
};

const JS_REPO: Repo = {
  name: 'vitest',
  command: 'node_modules/.bin/vitest run',
  files: {
    'package.json': JSON.stringify({ name: 'calc', type: 'module', private: true }),
    'src/add.mjs': 'export const add = (a, b) => a + b;\n',
    'src/mul.mjs': 'export const mul = (a, b) => a * b;\n',
    'src/div.mjs': 'export const div = (a, b) => a / b;\n',
    'scripts/report.mjs': "console.log('total: 3');\n",
    'tests/add.test.mjs':
      "import { expect, it } from 'vitest';\nimport { add } from '../src/add.mjs';\nit('adds', () => expect(add(1, " +
      "2)).toBe(3));\nit('adds negatives', () => expect(add(-1, -2)).toBe(-3));\n",
    'tests/mul.test.mjs':
      "import { expect, it } from 'vitest';\nimport { mul } from '../src/mul.mjs';\nit('muls', () => expect(mul(2, 3)).toBe(6));\n",
    'tests/div.test.mjs':
      "import { expect, it } from 'vitest';\nimport { div } from '../src/div.mjs';\nit('divs', () => expect(div(6, 3)).toBe(2));\n",
    'tests/report.test.mjs':
      "import { execFileSync } from 'node:child_process';\nimport { expect, it } from 'vitest';\nit('reports', () => " +
      "expect(execFileSync(process.execPath, ['scripts/report.mjs'], { encoding: 'utf8' })).toBe('total: 3\\n'), 60_000);\n",
  },
  touchAdd: { 'src/add.mjs': 'export const add = (a, b) => a + b;\nexport const add3 = (a, b, c) => a + b + c;\n' },
  breakScript: { 'scripts/report.mjs': "console.log('total: 4');\n" },
  fixScript: { 'scripts/report.mjs': "console.log('total: 3');\n" },
  // 'reports' starts a Node process, so it has a time limit of its own (here and for jest): the
  // runners' default of 5 s is missed by a sandboxed Node start on a loaded machine.
  // A harness file vitest itself does not need to load here (a vitest.config would be bundled into
  // node_modules/.vite-temp, which this rig links read-only from the checkout).
  harness: { 'tsconfig.json': '{ "compilerOptions": { "strict": true } }\n' },
  addTests: 2,
  unit: 'files',
  modules: () => path.join(ROOT, 'node_modules'),
  mode: ' (vitest related)',
  harnessFile: 'tsconfig.json',
};

/** jest from the cache scripts/install-test-runners.sh fills (installed on first use). */
let jestModules: string | null = null;
const JEST_REPO: Repo = {
  name: 'jest',
  command: 'node_modules/.bin/jest',
  files: {
    'package.json': JSON.stringify({ name: 'calc', private: true }),
    'src/add.js': 'exports.add = (a, b) => a + b;\n',
    'src/mul.js': 'exports.mul = (a, b) => a * b;\n',
    'src/div.js': 'exports.div = (a, b) => a / b;\n',
    'scripts/report.js': "console.log('total: 3');\n",
    'tests/add.test.js':
      "const { add } = require('../src/add');\nit('adds', () => expect(add(1, 2)).toBe(3));\nit('adds negatives', () => expect(add(-1, -2)).toBe(-3));\n",
    'tests/mul.test.js': "const { mul } = require('../src/mul');\nit('muls', () => expect(mul(2, 3)).toBe(6));\n",
    'tests/div.test.js': "const { div } = require('../src/div');\nit('divs', () => expect(div(6, 3)).toBe(2));\n",
    'tests/report.test.js':
      "const { execFileSync } = require('node:child_process');\nit('reports', () => expect(execFileSync(process.execPath, " +
      "['scripts/report.js'], { encoding: 'utf8' })).toBe('total: 3\\n'), 60_000);\n",
  },
  touchAdd: { 'src/add.js': 'exports.add = (a, b) => a + b;\nexports.add3 = (a, b, c) => a + b + c;\n' },
  breakScript: { 'scripts/report.js': "console.log('total: 4');\n" },
  fixScript: { 'scripts/report.js': "console.log('total: 3');\n" },
  harness: { 'jest.config.json': '{ "testEnvironment": "node" }\n' },
  addTests: 2,
  unit: 'files',
  modules: () => jestModules,
  mode: ' (jest related)',
  harnessFile: 'jest.config.json',
};

const unittestCase = (cls: string, body: string): string => `import unittest\n\n\nclass ${cls}(unittest.TestCase):\n${body}`;
const UNITTEST_REPO: Repo = {
  name: 'unittest',
  command: 'python3 -m unittest',
  files: {
    'calc/__init__.py': '',
    'calc/add.py': 'def add(a, b):\n    return a + b\n',
    'calc/mul.py': 'def mul(a, b):\n    return a * b\n',
    'calc/div.py': 'def div(a, b):\n    return a / b\n',
    'scripts/report.py': 'print("total: 3")\n',
    'tests/__init__.py': '',
    'tests/test_add.py': `from calc.add import add\n${unittestCase(
      'TestAdd',
      '    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n\n    def test_add_neg(self):\n        self.assertEqual(add(-1, -2), -3)\n',
    )}`,
    'tests/test_mul.py': `from calc.mul import mul\n${unittestCase('TestMul', '    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n')}`,
    'tests/test_div.py': `from calc.div import div\n${unittestCase('TestDiv', '    def test_div(self):\n        self.assertEqual(div(6, 3), 2)\n')}`,
    'tests/test_report.py': `import subprocess\nimport sys\n${unittestCase(
      'TestReport',
      '    def test_report(self):\n' +
        '        out = subprocess.run([sys.executable, "scripts/report.py"], capture_output=True, text=True).stdout\n' +
        '        self.assertEqual(out, "total: 3\\n")\n',
    )}`,
  },
  touchAdd: PY_REPO.touchAdd,
  breakScript: PY_REPO.breakScript,
  fixScript: PY_REPO.fixScript,
  harness: { 'pyproject.toml': '[project]\nname = "calc"\n' },
  addTests: 2,
  unit: 'files',
  modules: () => null,
  mode: '',
  harnessFile: 'pyproject.toml',
};

const NODE_REPO: Repo = {
  name: 'node-test',
  command: 'node --test',
  files: {
    'package.json': JSON.stringify({ name: 'calc', private: true }),
    'src/add.mjs': 'export const add = (a, b) => a + b;\n',
    'src/mul.mjs': 'export const mul = (a, b) => a * b;\n',
    'src/div.mjs': 'export const div = (a, b) => a / b;\n',
    'scripts/report.mjs': "console.log('total: 3');\n",
    'tests/add.test.mjs':
      "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add } from " +
      "'../src/add.mjs';\ntest('adds', () => assert.equal(add(1, 2), 3));\ntest('adds negatives', () => assert.equal(add(-1, " +
      '-2), -3));\n',
    'tests/mul.test.mjs':
      "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { mul } from " +
      "'../src/mul.mjs';\ntest('muls', () => assert.equal(mul(2, 3), 6));\n",
    'tests/div.test.mjs':
      "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { div } from " +
      "'../src/div.mjs';\ntest('divs', () => assert.equal(div(6, 3), 2));\n",
    'tests/report.test.mjs':
      "import { execFileSync } from 'node:child_process';\nimport { test } from 'node:test';\nimport assert from " +
      "'node:assert/strict';\ntest('reports', () => assert.equal(execFileSync(process.execPath, ['scripts/report.mjs'], { " +
      "encoding: 'utf8' }), 'total: 3\\n'));\n",
  },
  touchAdd: { 'src/add.mjs': 'export const add = (a, b) => a + b;\nexport const add3 = (a, b, c) => a + b + c;\n' },
  breakScript: { 'scripts/report.mjs': "console.log('total: 4');\n" },
  fixScript: { 'scripts/report.mjs': "console.log('total: 3');\n" },
  harness: { 'package.json': JSON.stringify({ name: 'calc', private: true, type: 'module' }) },
  addTests: 2,
  unit: 'files',
  modules: () => null,
  mode: '',
  harnessFile: 'package.json',
};

const goMain = (n: number): string => `package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("total: ${n}") }\n`;
const goPkg = (name: string, op: string): string =>
  `package ${name}\n\nfunc ${name[0]?.toUpperCase()}${name.slice(1)}(a, b int) int { return a ${op} b }\n`;
const GO_REPO: Repo = {
  name: 'go',
  command: 'go test ./...',
  files: {
    'go.mod': 'module example.com/calc\n\ngo 1.21\n',
    'add/add.go': goPkg('add', '+'),
    'mul/mul.go': goPkg('mul', '*'),
    'div/div.go': goPkg('div', '/'),
    'cmd/report/main.go': goMain(3),
    'add/add_test.go':
      'package add\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 ' +
      '{\n\t\tt.Fatal("1+2")\n\t}\n}\n\nfunc TestAddNeg(t *testing.T) {\n\tif Add(-1, -2) != -3 ' +
      '{\n\t\tt.Fatal("-1-2")\n\t}\n}\n',
    'mul/mul_test.go':
      'package mul\n\nimport "testing"\n\nfunc TestMul(t *testing.T) {\n\tif Mul(2, 3) != 6 {\n\t\tt.Fatal("2*3")\n\t}\n}\n',
    'div/div_test.go':
      'package div\n\nimport "testing"\n\nfunc TestDiv(t *testing.T) {\n\tif Div(6, 3) != 2 {\n\t\tt.Fatal("6/3")\n\t}\n}\n',
    // The report's test reads the command's source: no import reaches it.
    'report/report_test.go':
      'package report\n\nimport (\n\t"os"\n\t"strings"\n\t"testing"\n)\n\nfunc TestReport(t *testing.T) {\n\tsrc, err := ' +
      'os.ReadFile("../cmd/report/main.go")\n\tif err != nil || !strings.Contains(string(src), "total: 3") ' +
      '{\n\t\tt.Fatal("report")\n\t}\n}\n',
  },
  touchAdd: { 'add/add.go': `${goPkg('add', '+')}\nfunc Add3(a, b, c int) int { return a + b + c }\n` },
  breakScript: { 'cmd/report/main.go': goMain(4) },
  fixScript: { 'cmd/report/main.go': goMain(3) },
  harness: { 'go.mod': 'module example.com/calc\n\ngo 1.21\n\n// a comment\n' },
  addTests: 2,
  unit: 'packages',
  modules: () => null,
  mode: '',
  harnessFile: 'go.mod',
};

describe.runIf(sandboxPlatform().problem === null)('affected tests with real runners in the default sandbox', () => {
  const saved = { ...process.env };
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'vigil-affected-'));
    process.env.VIGIL_HOME = path.join(root, 'vigil-home');
    process.env.VIGIL_SANDBOX = 'auto';
    jestModules = execFileSync(path.join(ROOT, 'scripts/install-test-runners.sh'), { encoding: 'utf8', timeout: 300_000 }).trim();
    // coverage.py for pytest's per-test map, in the cache the worker reads it from.
    execFileSync(path.join(ROOT, 'scripts/install-test-tools.sh'), { encoding: 'utf8', timeout: 300_000 });
    // vitest comes from this checkout's node_modules and jest from the cache, linked into the
    // repository as a project's own would be installed.
    process.env.VIGIL_SANDBOX_READABLE = [realpathSync(path.join(ROOT, 'node_modules')), realpathSync(jestModules)].join(':');
  }, patient(300_000));
  afterAll(() => {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    rmSync(root, { recursive: true, force: true });
  });

  const write = (repo: string, files: Record<string, string>): void => {
    for (const [f, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(repo, f)), { recursive: true });
      writeFileSync(path.join(repo, f), text);
    }
  };
  // Limits, not what is tested: a run's first sandboxed `go test` builds the standard library into
  // the run's own cache (tens of seconds on an idle machine, minutes on a loaded one).
  const run = (input: Omit<RunTestsInput, 'timeoutSeconds'>): Promise<TestResult> =>
    new MockActivityEnvironment({ attempt: 1 }, { logger: new DefaultLogger('ERROR') }).run(runTests, {
      timeoutSeconds: 600,
      ...input,
    }) as Promise<TestResult>;

  for (const r of [PY_REPO, UNITTEST_REPO, NODE_REPO, JS_REPO, JEST_REPO, GO_REPO]) {
    it(
      `${r.name}: one module's change runs its tests only; the full suite catches what the selection cannot see`,
      async () => {
        const repo = path.join(root, r.name);
        mkdirSync(repo);
        write(repo, r.files);
        const modules = r.modules();
        if (modules) symlinkSync(modules, path.join(repo, 'node_modules'));
        git(repo, 'init', '-q');
        const runId = `affected-${r.name}`;
        const at = (iteration: number, scope?: 'affected') => ({
          runId,
          repoPath: repo,
          command: r.command,
          iteration,
          ...(scope ? { scope, fullEvery: 3 } : {}),
        });

        const base = await run({ ...at(0), recordBaseline: true });
        expect(base.report, base.reason).toMatchObject({ total: 5, passed: 5, failed: 0 });

        // An honest change to the add module: its tests run, the others do not (the runner's report lists 2 tests).
        write(repo, r.touchAdd);
        const one = await run(at(1, 'affected'));
        expect(one.verdict, one.reason).toBe('pass');
        expect(one.selection).toEqual({ files: 1, of: 4, ...(r.perTest ? { tests: { ran: 2, of: 5 } } : {}) });
        expect(one.report).toMatchObject({ total: r.addTests, passed: r.addTests, baselineTotal: r.addTests, baselinePassed: r.addTests });
        const picked = r.perTest ? `2 of 5 tests affected (per-test map): ` : `1 of 4 test ${r.unit} affected${r.mode}: `;
        expect(one.reason.startsWith(picked), one.reason).toBe(true);

        // The adversary: beside the add module, it breaks the script no test imports. The partial run
        // cannot see it (it runs the add tests alone)...
        write(repo, r.breakScript);
        const missed = await run(at(2, 'affected'));
        expect(missed.selection).toMatchObject({ files: 1, of: 4 });
        expect(missed.report?.total).toBe(r.addTests);
        expect(missed.verdict, missed.reason).toBe('pass');
        // ...the full suite, as every completion check runs it, does.
        const check = await run(at(2));
        expect(check.selection ?? null).toBeNull();
        expect(check.verdict, check.reason).toBe('fail');
        expect(check.report).toMatchObject({ total: 5, failed: 1 });
        expect(check.reason).toMatch(/report/);

        // Once fixed, a test that failed in the last run is selected with what changed, until it passes.
        write(repo, r.fixScript);
        const after = await run(at(3, 'affected'));
        expect(after.reason).toMatch(
          /^full suite \(no test file imports what changed\)|^1 of 4 test (files|packages) affected|^3 of 5 tests affected/,
        );
        expect(after.verdict, after.reason).toBe('pass');

        // A harness change runs everything.
        write(repo, r.harness);
        const harness = await run(at(4, 'affected'));
        expect(harness.selection ?? null).toBeNull();
        // pytest's per-test map is stale too: this full run records it anew.
        const recorded = r.perTest ? '; recording the per-test map' : '';
        expect(
          harness.reason.startsWith(`full suite (a test harness or configuration file changed: ${r.harnessFile}${recorded}): `),
          harness.reason,
        ).toBe(true);
        expect(harness.report).toMatchObject({ total: 5, passed: 5 });

        // The map is due for its refresh every `fullEvery` (3) iterations.
        write(repo, r.touchAdd);
        const due = await run(at(7, 'affected'));
        expect(due.reason).toMatch(/^full suite \(every 3 iterations; the last full run was at iteration 4\): /);
        expect(due.report?.total).toBe(5);

        // A run without a map (its first test run on this worker) runs everything.
        const fresh = await run({ ...at(1, 'affected'), runId: `${runId}-no-map` });
        expect(fresh.reason.startsWith(`full suite (no test map yet${recorded}): `), fresh.reason).toBe(true);
        expect(fresh.report?.total).toBe(5);
      },
      patient(900_000),
    );
  }

  it("jest: its own graph adds a test Vigil's reading of imports misses (a moduleNameMapper alias), and the run is held to it", async () => {
    const repo = path.join(root, 'jest-alias');
    mkdirSync(repo);
    write(repo, {
      ...JEST_REPO.files,
      // `@calc/mul` looks like a package from outside to Vigil's graph; jest maps it to src/mul.js.
      'package.json': JSON.stringify({ name: 'calc', private: true, jest: { moduleNameMapper: { '^@calc/(.*)$': '<rootDir>/src/$1' } } }),
      'tests/alias.test.js': "const { mul } = require('@calc/mul');\nit('muls by alias', () => expect(mul(3, 3)).toBe(9));\n",
    });
    symlinkSync(jestModules as string, path.join(repo, 'node_modules'));
    git(repo, 'init', '-q');
    const at = (iteration: number, scope?: 'affected') => ({
      runId: 'affected-jest-alias',
      repoPath: repo,
      command: JEST_REPO.command,
      iteration,
      ...(scope ? { scope, fullEvery: 5 } : {}),
    });
    const base = await run({ ...at(0), recordBaseline: true });
    expect(base.report, base.reason).toMatchObject({ total: 6, passed: 6 });

    // The mul module changes and breaks what only the aliased test checks: jest selects that test too.
    write(repo, { 'src/mul.js': 'exports.mul = (a, b) => (a === 3 ? 0 : a * b);\n' });
    const one = await run(at(1, 'affected'));
    expect(one.reason.startsWith('2 of 5 test files affected (jest related): '), one.reason).toBe(true);
    expect(one.selection).toEqual({ files: 2, of: 5 });
    expect(one.report).toMatchObject({ total: 2, failed: 1, baselineTotal: 2 });
    expect(one.report?.failing).toEqual([expect.stringMatching(/tests\/alias\.test\.js::muls by alias$/)]);
    expect(one.verdict).toBe('fail');
  });

  /** A package whose `__init__` imports every module, as more-itertools': every test file imports all of it. */
  const PKG_FILES: Record<string, string> = {
    'pkg/__init__.py': 'from .add import *  # noqa\nfrom .mul import *  # noqa\nfrom .div import *  # noqa\n',
    'pkg/add.py': '__all__ = ["add"]\n\n\ndef add(a, b):\n    """Add two numbers."""\n    return a + b\n',
    'pkg/mul.py': '__all__ = ["mul"]\nFACTOR = 1\n\n\ndef mul(a, b):\n    return a * b * FACTOR\n',
    'pkg/div.py': '__all__ = ["div"]\n\n\ndef div(a, b):\n    return a / b\n',
    'tests/test_add.py':
      'from pkg import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_add_neg():\n    assert add(-1, -2) == -3\n',
    'tests/test_mixed.py':
      'import pkg\n\n\ndef test_mixed_add():\n    assert pkg.add(2, 2) == 4\n\n\ndef test_mixed_mul():\n    assert pkg.mul(2, 2) == 4\n',
    'tests/test_mul.py': 'from pkg import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n',
    // Reads add's docstring without calling into pkg/add.py: its per-test map does not hold that file.
    'tests/test_div.py':
      'import pkg\n\n\ndef test_div():\n    assert pkg.div(6, 3) == 2\n\n\ndef test_add_documented():\n    assert "Add" in pkg.add.__doc__\n',
  };
  /** The tests a run's JUnit report lists: what pytest ran. */
  const ranIn = (runId: string, iteration: number): string[] =>
    (parseJunit(readFileSync(path.join(privateRunDir(runId), 'test-reports', `${pad(iteration)}-1`, 'pytest.xml'), 'utf8'))?.tests ?? [])
      .map((t) => t.id)
      .sort();

  it(
    'pytest: the per-test map selects the tests that executed a change where every test imports the whole package; an ' +
      'import-time change, what the map cannot see, and a missing coverage.py are each handled',
    async () => {
      const repo = path.join(root, 'pytest-pkg');
      mkdirSync(repo);
      write(repo, PKG_FILES);
      git(repo, 'init', '-q');
      const runId = 'affected-pytest-pkg';
      const at = (iteration: number, scope?: 'affected') => ({
        runId,
        repoPath: repo,
        command: PY_REPO.command,
        iteration,
        ...(scope ? { scope, fullEvery: 10 } : {}),
      });
      // The baseline records the map.
      const base = await run({ ...at(0), recordBaseline: true });
      expect(base.report, base.reason).toMatchObject({ total: 7, passed: 7 });
      expect(base.reason.startsWith('full suite (recording the per-test map): '), base.reason).toBe(true);

      // A change inside add's body: the three tests that ran it, and none of the others (by imports: all seven).
      write(repo, { 'pkg/add.py': PKG_FILES['pkg/add.py']!.replace('return a + b', 'return b + a') });
      const one = await run(at(1, 'affected'));
      expect(one.reason.startsWith('3 of 7 tests affected (per-test map): '), one.reason).toBe(true);
      expect(one.selection).toEqual({ files: 2, of: 4, tests: { ran: 3, of: 7 } });
      expect(one.verdict, one.reason).toBe('pass');
      expect(one.report).toMatchObject({ total: 3, passed: 3, baselineTotal: 3, baselinePassed: 3 });
      expect(ranIn(runId, 1)).toEqual(['tests.test_add::test_add', 'tests.test_add::test_add_neg', 'tests.test_mixed::test_mixed_add']);

      // The adversary: it rewrites add's docstring, which only a test outside the selection checks.
      // The partial run passes (the three tests that run add)...
      write(repo, {
        'pkg/add.py': PKG_FILES['pkg/add.py']!.replace('Add two numbers.', 'Sum of two numbers.').replace('return a + b', 'return b + a'),
      });
      const missed = await run(at(2, 'affected'));
      expect(missed.reason.startsWith('3 of 7 tests affected (per-test map): '), missed.reason).toBe(true);
      expect(missed.verdict, missed.reason).toBe('pass');
      // ...the full suite of the completion check does not, and does not record (the map stays).
      const check = await run(at(2));
      expect(check.verdict, check.reason).toBe('fail');
      expect(check.report).toMatchObject({ total: 7, failed: 1 });
      expect(check.report?.failing).toEqual(['tests.test_div::test_add_documented']);
      expect(check.reason).not.toMatch(/recording/);
      write(repo, { 'pkg/add.py': PKG_FILES['pkg/add.py']! });

      // A change of what runs at import (a module-level constant): every test that imports it, so everything, recorded anew.
      write(repo, { 'pkg/mul.py': PKG_FILES['pkg/mul.py']!.replace('FACTOR = 1', 'FACTOR = 2') });
      const imported = await run(at(3, 'affected'));
      expect(imported.reason.startsWith('full suite (every test is affected; recording the per-test map): '), imported.reason).toBe(true);
      expect(imported.report).toMatchObject({ total: 7, failed: 2 });
      write(repo, { 'pkg/mul.py': PKG_FILES['pkg/mul.py']! });

      // Without coverage.py the tests are selected by imports, as before, and the line says so.
      const saved = process.env.VIGIL_TEST_TOOLS_DIR;
      process.env.VIGIL_TEST_TOOLS_DIR = path.join(root, 'no-tools');
      try {
        const other = { runId: `${runId}-no-coverage`, repoPath: repo, command: PY_REPO.command };
        const b = await run({ ...other, iteration: 0, recordBaseline: true });
        expect(b.reason).not.toMatch(/recording/);
        write(repo, { 'pkg/add.py': PKG_FILES['pkg/add.py']!.replace('return a + b', 'return b + a') });
        const c = await run({ ...other, iteration: 1, scope: 'affected', fullEvery: 10 });
        expect(
          c.reason.startsWith(
            'full suite (every test file is affected; by imports: no per-test map: coverage.py is not installed (scripts/install-test-tools.sh)): ',
          ),
          c.reason,
        ).toBe(true);
        expect(c.report?.total).toBe(7);
      } finally {
        if (saved === undefined) delete process.env.VIGIL_TEST_TOOLS_DIR;
        else process.env.VIGIL_TEST_TOOLS_DIR = saved;
      }
    },
    patient(300_000),
  );
});
