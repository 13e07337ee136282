/**
 * Affected tests between completion checks: the rules (rules/affected-tests.ts)
 * as pure functions — what a file imports, the import graph of the test files, which test files
 * a change selects and when the full suite runs instead, the baseline a partial run is held to —
 * each with an honest control and an agent trying to slip a change past the selection. The real
 * runners' side is tests/unit/affected-tests-runners.test.ts; the completion check's full suite
 * is tests/workflow/affected-tests.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { TestMap, TestReport } from '../../schemas/test-report.js';
import {
  baselineOfSelection,
  goGraph,
  idInFile,
  importGraph,
  importsOf,
  isTestFile,
  mapAfterPartialRun,
  mapOfFullRun,
  planTests,
  type ImportGraph,
} from '../../rules/affected-tests.js';
import { selectionCommand } from '../../rules/selection-command.js';
import { inBaselineForm } from '../../lib/gates/node-test-reporter.js';

const PY: Record<string, string> = {
  'calc/__init__.py': 'from .add import add\n',
  'calc/add.py': 'def add(a, b):\n    return a + b\n',
  'calc/mul.py': 'from calc import helpers\n\ndef mul(a, b):\n    return helpers.times(a, b)\n',
  'calc/helpers.py': 'def times(a, b):\n    return a * b\n',
  'calc/div.py': 'def div(a, b):\n    return a / b\n',
  'tests/test_add.py': 'from calc.add import add\n\ndef test_add():\n    assert add(1, 2) == 3\n',
  'tests/test_mul.py': 'import calc.mul as m\n\ndef test_mul():\n    assert m.mul(2, 3) == 6\n',
  'tests/test_div.py': 'from calc import (\n    div,\n)\n\ndef test_div():\n    assert div.div(6, 3) == 2\n',
};
const JS: Record<string, string> = {
  'src/add.ts': 'export const add = (a: number, b: number) => a + b;\n',
  'src/mul.ts': "import { times } from './util/times.js';\nexport const mul = (a: number, b: number) => times(a, b);\n",
  'src/util/times.ts': 'export const times = (a: number, b: number) => a * b;\n',
  'src/div.ts': 'export const div = (a: number, b: number) => a / b;\n',
  'tests/add.test.ts':
    "import { expect, it } from 'vitest';\nimport { add } from '../src/add';\nit('adds', () => expect(add(1, 2)).toBe(3));\n",
  'tests/mul.test.ts':
    "import { expect, it } from 'vitest';\nimport { mul } from '../src/mul.js';\nit('muls', () => expect(mul(2, 3)).toBe(6));\n",
  'tests/div.test.ts':
    "import { expect, it, vi } from 'vitest';\nvi.mock('../src/add');\nconst { div } = await " +
    "import('../src/div.js');\nit('divs', () => expect(div(6, 3)).toBe(2));\n",
};
const texts = (files: Record<string, string>): Map<string, string> => new Map(Object.entries(files));
const report = (ids: [string, 'passed' | 'failed' | 'skipped'][]): TestReport => ({
  format: 'junit',
  complete: true,
  incomplete: null,
  tests: ids.map(([id, status]) => ({ id, status })),
});
const PY_REPORT = report([
  ['tests.test_add::test_add', 'passed'],
  ['tests.test_mul::test_mul', 'passed'],
  ['tests.test_div::test_div', 'failed'],
]);

describe('what a file imports', () => {
  it('reads Python imports: plain, dotted, aliased, relative, parenthesised over lines; a computed one is dynamic', () => {
    expect(importsOf('import os, calc.mul as m\nfrom . import add\nfrom ..pkg import (\n  a,\n  b as c,\n)\n', 'py')).toEqual({
      specs: ['os', 'calc.mul', '.', '.add', '..pkg', '..pkg.a', '..pkg.b'].filter((s) => s !== '.'),
      dynamic: false,
    });
    expect(importsOf("import importlib\nmod = importlib.import_module('calc.' + name)\n", 'py').dynamic).toBe(true);
    expect(importsOf('m = __import__(name)\n', 'py').dynamic).toBe(true);
  });

  it('reads JS/TS imports: from, bare, require, literal dynamic import, vi.mock; a computed import is dynamic', () => {
    const r = importsOf(
      "import a from './a';\nexport { b } from \"../b.js\";\nimport './side';\nconst c = require('./c');\nconst d = await import('./d');\nvi.mock('./e');\n",
      'js',
    );
    expect(r).toEqual({ specs: ['./a', '../b.js', './side', './c', './d', './e'], dynamic: false });
    expect(importsOf('const m = await import(`./plugins/${name}.js`);\n', 'js').dynamic).toBe(true);
    expect(importsOf('const m = require(name);\n', 'js').dynamic).toBe(true);
    expect(importsOf('// see require(name) in the docs\n', 'js').dynamic).toBe(false);
  });
});

describe('the import graph of the test files', () => {
  it('follows Python imports through the repository (package inits, rootdir-relative, transitive)', () => {
    const g = importGraph(texts(PY), 'py');
    expect(Object.keys(g.tests)).toEqual(['tests/test_add.py', 'tests/test_div.py', 'tests/test_mul.py']);
    expect(g.tests['tests/test_add.py']).toEqual(['calc/__init__.py', 'calc/add.py']);
    // test_mul reaches helpers only through calc/mul.py.
    expect(g.tests['tests/test_mul.py']).toEqual(['calc/__init__.py', 'calc/add.py', 'calc/helpers.py', 'calc/mul.py']);
    expect(g.tests['tests/test_div.py']).toContain('calc/div.py');
    expect(g.dynamic).toEqual([]);
  });

  it('follows JS/TS imports (.js written for .ts, extensionless, vi.mock, literal dynamic import)', () => {
    const g = importGraph(texts(JS), 'js');
    expect(g.tests['tests/add.test.ts']).toEqual(['src/add.ts']);
    expect(g.tests['tests/mul.test.ts']).toEqual(['src/mul.ts', 'src/util/times.ts']);
    expect(g.tests['tests/div.test.ts']).toEqual(['src/add.ts', 'src/div.ts']);
  });

  it("each runner's own test files: unittest's discovery (test*.py), node's test runner (its default patterns and test folders)", () => {
    expect(isTestFile('tests/tests_helpers.py', 'py', 'unittest')).toBe(true);
    expect(isTestFile('tests/helpers.py', 'py', 'unittest')).toBe(false);
    expect(isTestFile('tests/helpers_test.py', 'py', 'unittest')).toBe(false);
    for (const f of ['test.js', 'src/test-add.mjs', 'src/add.test.cjs', 'src/add-test.js', 'src/add_test.mjs', 'test/helpers/setup.js'])
      expect(isTestFile(f, 'js', 'node-test'), f).toBe(true);
    for (const f of ['src/add.mjs', 'tests/helpers.mjs', 'src/add.test.ts', 'src/latest.js'])
      expect(isTestFile(f, 'js', 'node-test'), f).toBe(false);
    const g = importGraph(
      new Map([
        ['src/add.mjs', 'export const add = (a, b) => a + b;\n'],
        ['test/add.mjs', "import { add } from '../src/add.mjs';\n"],
        ['src/add.test.ts', "import { add } from './add.mjs';\n"],
      ]),
      'js',
      'node-test',
    );
    expect(g.tests).toEqual({ 'test/add.mjs': ['src/add.mjs'] });
  });

  it('an agent hiding a dependency behind a computed import or an alias makes that test always selected', () => {
    const g = importGraph(
      texts({
        ...JS,
        'tests/plugin.test.ts': "const name = 'div';\nconst m = await import(`../src/${name}.js`);\n",
        'tests/alias.test.ts': "import { add } from 'src/add';\n",
      }),
      'js',
    );
    expect(g.dynamic).toEqual(['tests/alias.test.ts', 'tests/plugin.test.ts']);
    expect(g.aliased).toEqual(['tests/alias.test.ts']);
    // A runner that selects by its own module graph (vitest related, jest --findRelatedTests) resolves
    // the alias itself: only the computed import stays always selected.
    const report = (ids: string[]): TestReport => ({
      format: 'junit',
      complete: true,
      incomplete: null,
      tests: ids.map((id) => ({ id: `${id}::t`, status: 'passed' as const })),
    });
    const map = mapOfFullRun({
      runner: 'vitest',
      command: 'vitest run',
      tree: 't',
      iteration: 0,
      graph: g,
      report: report(Object.keys(g.tests)),
    });
    const plan = (runnerGraph: boolean) =>
      planTests({
        lang: 'js',
        map,
        runner: 'vitest',
        command: 'vitest run',
        iteration: 1,
        fullEvery: 5,
        changed: ['src/util/times.ts'],
        graph: g,
        runnerGraph,
      });
    expect(plan(false)).toMatchObject({ files: ['tests/alias.test.ts', 'tests/mul.test.ts', 'tests/plugin.test.ts'] });
    expect(plan(true)).toMatchObject({ files: ['tests/mul.test.ts', 'tests/plugin.test.ts'] });
  });
});

describe('idInFile and the baseline a partial run is held to', () => {
  it('matches pytest’s dotted modules (and classes) and vitest’s file paths, never a neighbour', () => {
    expect(idInFile('tests.test_add::test_add', 'tests/test_add.py')).toBe(true);
    expect(idInFile('tests.test_add.TestK::test_x', 'tests/test_add.py')).toBe(true);
    expect(idInFile('tests.test_added::test_x', 'tests/test_add.py')).toBe(false);
    expect(idInFile('tests/add.test.ts::adds', 'tests/add.test.ts')).toBe(true);
    expect(idInFile('/abs/repo/tests/add.test.ts::adds', 'tests/add.test.ts')).toBe(true);
    expect(idInFile('tests/madd.test.ts::adds', 'tests/add.test.ts')).toBe(false);
    // unittest's `module.Class.test`, and node's test runner as Vigil's reporter names it.
    expect(idInFile('tests.test_add.TestAdd.test_add', 'tests/test_add.py')).toBe(true);
    expect(idInFile('tests.test_added.TestAdd.test_add', 'tests/test_add.py')).toBe(false);
    expect(idInFile('test/add.test.mjs::suite > adds', 'test/add.test.mjs')).toBe(true);
  });

  it('keeps the baseline tests of the selected files only', () => {
    expect(baselineOfSelection(PY_REPORT, ['tests/test_mul.py']).tests).toEqual([{ id: 'tests.test_mul::test_mul', status: 'passed' }]);
  });
});

describe("node's tests named by their file, and a baseline recorded before", () => {
  const report: TestReport = {
    format: 'junit',
    complete: true,
    incomplete: null,
    tests: [
      { id: 'test/add.test.mjs::adds', status: 'passed' },
      { id: 'test/mul.test.mjs::mul > muls', status: 'failed' },
    ],
  };
  it("a baseline of node's own reporter (`test::name`) is compared by each test's own name; one of Vigil's as it is", () => {
    const old: TestReport = { ...report, tests: [{ id: 'test::adds', status: 'passed' }] };
    expect(inBaselineForm(report, old)?.tests).toEqual([
      { id: 'test::adds', status: 'passed' },
      { id: 'test::muls', status: 'failed' },
    ]);
    expect(inBaselineForm(report, report)).toBe(report);
    expect(inBaselineForm(report, null)).toBe(report);
  });
});

describe('which tests run', () => {
  const graph: ImportGraph = importGraph(texts(PY), 'py');
  const map: TestMap = mapOfFullRun({ runner: 'pytest', command: 'pytest -q', tree: 't0', iteration: 0, graph, report: PY_REPORT });
  const plan = (changed: string[] | null, over: Partial<Parameters<typeof planTests>[0]> = {}) =>
    planTests({ lang: 'py', map, runner: 'pytest', command: 'pytest -q', iteration: 2, fullEvery: 5, changed, graph, ...over });

  it('a full run’s map: the graph of the files it reported, and the files that failed', () => {
    expect(Object.keys(map.tests)).toEqual(['tests/test_add.py', 'tests/test_div.py', 'tests/test_mul.py']);
    expect(map.failing).toEqual(['tests/test_div.py']);
    expect(mapAfterPartialRun(map, ['tests/test_div.py'], report([['tests.test_div::test_div', 'passed']])).failing).toEqual([]);
  });

  it('a change to one module selects the tests that import it, and those failing since the last run', () => {
    expect(plan(['calc/helpers.py'])).toEqual({ kind: 'affected', files: ['tests/test_div.py', 'tests/test_mul.py'], total: 3 });
    const green = { ...map, failing: [] };
    expect(plan(['calc/helpers.py'], { map: green })).toEqual({ kind: 'affected', files: ['tests/test_mul.py'], total: 3 });
    expect(plan(['tests/test_add.py'], { map: green })).toEqual({ kind: 'affected', files: ['tests/test_add.py'], total: 3 });
  });

  it('the full suite: no map, another command, an unknown diff, every N iterations, the knob at 1', () => {
    expect(plan(['calc/add.py'], { map: null })).toEqual({ kind: 'full', reason: 'no test map yet' });
    expect(plan(['calc/add.py'], { command: 'pytest -x' }).kind).toBe('full');
    expect(plan(null)).toEqual({ kind: 'full', reason: 'what changed since the last full run is unknown' });
    expect(plan(['calc/div.py'], { iteration: 5 })).toEqual({
      kind: 'full',
      reason: 'every 5 iterations; the last full run was at iteration 0',
    });
    expect(plan(['calc/div.py'], { iteration: 4 }).kind).toBe('affected');
    expect(plan(['calc/div.py'], { fullEvery: 1 }).kind).toBe('full');
  });

  it('the full suite: a harness or configuration file, a file no graph covers, a test file added or gone, everything affected', () => {
    expect(plan(['calc/div.py', 'tests/conftest.py'])).toMatchObject({
      kind: 'full',
      reason: expect.stringMatching(/harness.*conftest\.py/),
    });
    for (const f of ['pytest.ini', 'pyproject.toml', 'setup.cfg', 'tox.ini', 'requirements-dev.txt'])
      expect(plan(['calc/div.py', f]).kind, f).toBe('full');
    // A data file a test reads is not an import: no graph can say which tests read it.
    expect(plan(['calc/div.py', 'calc/table.json'])).toMatchObject({
      kind: 'full',
      reason: 'calc/table.json changed, which no import graph covers',
    });
    const withNew = importGraph(texts({ ...PY, 'tests/test_new.py': 'def test_new():\n    pass\n' }), 'py');
    expect(plan(['tests/test_new.py'], { graph: withNew })).toMatchObject({
      kind: 'full',
      reason: 'a test file was added: tests/test_new.py',
    });
    const rest = Object.fromEntries(Object.entries(PY).filter(([f]) => f !== 'tests/test_div.py'));
    expect(plan(['tests/test_div.py'], { graph: importGraph(texts(rest), 'py') })).toMatchObject({
      reason: 'a test file is gone: tests/test_div.py',
    });
    expect(plan(['calc/__init__.py'])).toEqual({ kind: 'full', reason: 'every test file is affected', bySelection: true });
    // What the runners leave behind as they run is not a change of the code.
    expect(plan(['calc/div.py', 'calc/__pycache__/div.cpython-312.pyc', '.pytest_cache/v/cache/lastfailed', '.coverage']).kind).toBe(
      'affected',
    );
  });

  it('an agent whose change no test imports gets the full suite, not an empty selection', () => {
    const green = { ...map, failing: [] };
    const unimported = importGraph(texts({ ...PY, 'scripts/report.py': 'print(1)\n' }), 'py');
    expect(plan(['scripts/report.py'], { map: green, graph: unimported })).toEqual({
      kind: 'full',
      reason: 'no test file imports what changed',
      bySelection: true,
    });
  });

  it('an agent that removes an import from a test still has the test selected by the map of the last full run', () => {
    // test_mul no longer imports calc.mul (so the graph of the tree now misses it) while calc/mul.py changes.
    const cut = importGraph(texts({ ...PY, 'tests/test_mul.py': 'def test_mul():\n    assert True\n' }), 'py');
    const green = { ...map, failing: [] };
    expect(plan(['calc/mul.py', 'tests/test_mul.py'], { map: green, graph: cut })).toMatchObject({ files: ['tests/test_mul.py'] });
    expect(plan(['calc/helpers.py'], { map: green, graph: cut })).toMatchObject({ files: ['tests/test_mul.py'] });
  });
});

describe('Go: the packages the go tool says import the change', () => {
  // What `go list` says of a module: calc/add, calc/mul importing calc/internal/times, a report
  // command no package imports, and an external test package of mul importing add.
  const GO = goGraph([
    { importPath: 'example.com/calc/add', files: ['add/add.go'], testFiles: ['add/add_test.go'], imports: [], testImports: ['testing'] },
    {
      importPath: 'example.com/calc/mul',
      files: ['mul/mul.go'],
      testFiles: ['mul/mul_test.go', 'mul/x_test.go'],
      imports: ['example.com/calc/internal/times', 'fmt'],
      testImports: ['testing', 'example.com/calc/add'],
    },
    { importPath: 'example.com/calc/internal/times', files: ['internal/times/times.go'], testFiles: [], imports: [], testImports: [] },
    { importPath: 'example.com/calc/cmd/report', files: ['cmd/report/main.go'], testFiles: [], imports: ['fmt'], testImports: [] },
  ]);
  const report = (ids: string[]): TestReport => ({
    format: 'go-json',
    complete: true,
    incomplete: null,
    tests: ids.map((id) => ({ id, status: 'passed' as const })),
  });
  const map = mapOfFullRun({
    runner: 'go-test',
    command: 'go test ./...',
    tree: 't0',
    iteration: 0,
    graph: GO,
    report: report(['example.com/calc/add::TestAdd', 'example.com/calc/mul::TestMul']),
  });
  const plan = (changed: string[]) =>
    planTests({ lang: 'go', map, runner: 'go-test', command: 'go test ./...', iteration: 1, fullEvery: 5, changed, graph: GO });

  it('one entry per package with tests: its files and those of the module packages it and its tests import', () => {
    expect(GO.tests).toEqual({
      'example.com/calc/add': ['add/add.go', 'add/add_test.go'],
      'example.com/calc/mul': ['add/add.go', 'internal/times/times.go', 'mul/mul.go', 'mul/mul_test.go', 'mul/x_test.go'],
    });
    expect(GO.dynamic).toEqual([]);
    expect(Object.keys(map.tests)).toEqual(['example.com/calc/add', 'example.com/calc/mul']);
  });

  it('a change selects the packages that import it; go.mod, go.sum and data files run everything', () => {
    expect(plan(['internal/times/times.go'])).toEqual({ kind: 'affected', files: ['example.com/calc/mul'], total: 2 });
    expect(plan(['add/add.go'])).toEqual({ kind: 'full', reason: 'every test file is affected', bySelection: true });
    expect(plan(['cmd/report/main.go'])).toEqual({ kind: 'full', reason: 'no test file imports what changed', bySelection: true });
    for (const f of ['go.mod', 'go.sum', 'go.work']) expect(plan(['internal/times/times.go', f]).kind, f).toBe('full');
    expect(plan(['internal/times/times.go', 'mul/testdata/golden.txt']).kind).toBe('full');
  });
});

describe('the command that runs a selection', () => {
  const files = ['tests/add.test.ts'];
  const changed = ['src/add.ts'];
  it('pytest and an npm script take the test files; vitest run and jest their own related-tests mode; go the packages', () => {
    expect(selectionCommand('pytest', 'python3 -m pytest -q', ['tests/test_add.py'], ['calc/add.py'])).toEqual({
      command: 'python3 -m pytest -q tests/test_add.py',
      mode: 'files',
    });
    expect(selectionCommand('vitest', 'npm test', files, changed)).toEqual({ command: 'npm test -- tests/add.test.ts', mode: 'files' });
    expect(selectionCommand('vitest', 'npx --no-install vitest run --reporter=junit', files, changed)).toEqual({
      command: 'npx --no-install vitest related --run --reporter=junit src/add.ts tests/add.test.ts',
      mode: 'related',
    });
    expect(selectionCommand('jest', 'npm test', files, changed)).toEqual({
      command: 'npm test -- --findRelatedTests src/add.ts tests/add.test.ts',
      mode: 'related',
    });
    expect(selectionCommand('go-test', 'go test -race ./...', ['example.com/m/a', 'example.com/m/b'], [])).toEqual({
      command: 'go test -race example.com/m/a example.com/m/b',
      mode: 'packages',
    });
  });

  it("unittest takes a name pattern per test file (discovery cannot take files); node's test runner the files", () => {
    expect(selectionCommand('unittest', 'python3 -m unittest discover -v', ['tests/test_add.py', 'tests/sub/test_b.py'], [])).toEqual({
      command: "python3 -m unittest discover -v -k 'tests.test_add.*' -k 'tests.sub.test_b.*'",
      mode: 'files',
    });
    expect(selectionCommand('node-test', 'node --test', ['test/add.test.mjs'], ['src/add.mjs'])).toEqual({
      command: 'node --test test/add.test.mjs',
      mode: 'files',
    });
    expect(selectionCommand('node-test', 'npm test', ['test/add.test.mjs'], [])).toEqual({
      command: 'npm test -- test/add.test.mjs',
      mode: 'files',
    });
    // An agent naming a file to close the quote.
    expect(selectionCommand('unittest', 'python3 -m unittest', ["tests/test_a'.py"], [])).toBeNull();
  });

  it('a command that cannot take a selection, or a name that cannot be passed, runs the full suite', () => {
    expect(selectionCommand('pytest', 'pytest -q && echo done', files, changed)).toBeNull();
    expect(selectionCommand('go-test', 'go test ./a/... ./b/...', ['example.com/m/a'], [])).toBeNull();
    expect(selectionCommand('go-test', 'go test ./... ./...', ['example.com/m/a'], [])).toBeNull();
    // An agent naming a file to smuggle a shell word onto the command line.
    expect(selectionCommand('jest', 'jest', files, ['src/$(touch pwned).js'])).toBeNull();
    expect(selectionCommand('vitest', 'vitest run', files, ['src/a b.ts'])).toBeNull();
  });
});
