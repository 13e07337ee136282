/**
 * The rules of pytest's per-test map (rules/per-test-map.ts), on values: what a
 * zero-context diff says, when a change touches what runs at import, how a node id is named in
 * the JUnit report, and what a change selects. The real runs are in
 * tests/unit/affected-tests-runners.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { PerTestMap, TestReport } from '../../schemas/test-report.js';
import {
  EVERY_TEST,
  baselineOfTests,
  junitIdOfNode,
  parseZeroDiff,
  planPerTest,
  enclosingFunction,
  touchesImportTime,
} from '../../rules/per-test-map.js';

const DIFF = [
  'diff --git a/pkg/add.py b/pkg/add.py',
  'index 1..2 100644',
  '--- a/pkg/add.py',
  '+++ b/pkg/add.py',
  '@@ -6 +6 @@ def add(a, b):',
  '-    return a + b',
  '+    return b + a',
  '@@ -9,0 +10,3 @@',
  '+',
  '+def add3(a, b, c):',
  '+    return a + b + c',
  'diff --git a/pkg/gone.py b/pkg/gone.py',
  'deleted file mode 100644',
  '--- a/pkg/gone.py',
  '+++ /dev/null',
  '@@ -1,2 +0,0 @@',
  '-X = 1',
  '-Y = 2',
].join('\n');

// files: 0 pkg/add.py, 1 pkg/mul.py, 2 pkg/__init__.py; add.py's lines 1, 4 ran at import (`__all__`, `def add`).
const MAP: PerTestMap = {
  tree: 't0',
  iteration: 0,
  files: ['pkg/add.py', 'pkg/mul.py', 'pkg/__init__.py'],
  tests: {
    'tests/test_add.py::test_add': { '0': [6] },
    'tests/test_add.py::test_add_neg': { '0': [6] },
    'tests/test_add.py::test_sub': { '0': [10] },
    'tests/test_mixed.py::test_mixed_add': { '0': [6], '2': [3] },
    'tests/test_mixed.py::test_mixed_mul': { '1': [6] },
    'tests/test_mul.py::test_mul': { '1': [6] },
    'tests/test_doc.py::test_doc': {},
  },
  imports: { '0': [1, 4, 9], '1': [1, 2, 5], '2': [1, 2, 3] },
};
const ADD_PY =
  '__all__ = ["add", "sub"]\n\n\ndef add(a, b):\n    """Add two numbers."""\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n';
const GRAPH = {
  tests: {
    'tests/test_add.py': ['pkg/__init__.py', 'pkg/add.py', 'pkg/mul.py'],
    'tests/test_mixed.py': ['pkg/__init__.py', 'pkg/add.py', 'pkg/mul.py'],
    'tests/test_mul.py': ['pkg/__init__.py', 'pkg/add.py', 'pkg/mul.py'],
    'tests/test_doc.py': ['pkg/__init__.py', 'pkg/add.py', 'pkg/mul.py'],
  },
  dynamic: [],
};
const plan = (changed: string[] | null, diff: string, failing: string[] = []) =>
  planPerTest({
    map: MAP,
    changed,
    diffs: changed === null ? null : parseZeroDiff(diff),
    graph: GRAPH,
    failing,
    dynamic: [],
    oldTexts: new Map([['pkg/add.py', ADD_PY]]),
  });

describe("pytest's per-test map", () => {
  it('reads a zero-context diff: the old lines removed, the lines added, per file', () => {
    const d = parseZeroDiff(DIFF);
    expect(d.get('pkg/add.py')).toEqual({
      removed: [6],
      added: ['    return b + a', '', 'def add3(a, b, c):', '    return a + b + c'],
      after: [9],
    });
    expect(d.get('pkg/gone.py')).toEqual({ removed: [1, 2], added: [], after: [] });
  });

  it('tells a change inside a function from one of what runs at import', () => {
    expect(touchesImportTime({ removed: [6], added: ['    return b + a'], after: [] }, [1, 4])).toBe(false);
    // A new function appended binds a new name only.
    expect(touchesImportTime({ removed: [], added: ['', 'def add3(a, b, c):', '    return a + b + c'], after: [10] }, [1, 4])).toBe(false);
    // A changed `def` line (a signature, a default) ran at import.
    expect(touchesImportTime({ removed: [4], added: ['def add(a, b=1):'], after: [] }, [1, 4])).toBe(true);
    // An added top-level statement or a decorator runs at import.
    expect(touchesImportTime({ removed: [], added: ['FACTOR = 2'], after: [1] }, [])).toBe(true);
    expect(touchesImportTime({ removed: [], added: ['@functools.cache'], after: [3] }, [])).toBe(true);
    expect(touchesImportTime({ removed: [], added: ['# a comment', '    x = 1'], after: [5] }, [])).toBe(false);
  });

  it("names a node id as pytest's JUnit report does", () => {
    expect(junitIdOfNode('tests/test_more.py::ChunkedTests::test_even')).toBe('tests.test_more.ChunkedTests::test_even');
    expect(junitIdOfNode('tests/test_add.py::test_add[a::b-1]')).toBe('tests.test_add::test_add[a::b-1]');
  });

  it('finds the function a line is in, from its indentation; module level and class bodies are none', () => {
    const lines = ADD_PY.split('\n');
    expect(enclosingFunction(lines, 6)).toEqual([4, 6]);
    expect(enclosingFunction(lines, 4)).toEqual([4, 6]);
    expect(enclosingFunction(lines, 7)).toEqual([9, 10]);
    expect(enclosingFunction(lines, 1)).toBeNull();
    const cls = 'class A:\n    x = 1\n\n    def f(self):\n        if self:\n            return 1\n'.split('\n');
    expect(enclosingFunction(cls, 2)).toBeNull();
    expect(enclosingFunction(cls, 6)).toEqual([4, 6]);
  });

  it('a change inside a function selects the tests that executed that function, not those that only import its module', () => {
    const body = '--- a/pkg/add.py\n+++ b/pkg/add.py\n@@ -6 +6 @@\n-    return a + b\n+    return b + a\n';
    expect(plan(['pkg/add.py'], body)).toEqual({
      kind: 'tests',
      ids: ['tests/test_add.py::test_add', 'tests/test_add.py::test_add_neg', 'tests/test_mixed.py::test_mixed_add'],
      whole: [],
      count: 3,
      total: 7,
    });
    // A function appended after the last one: counted with it (sub's test), and nothing at import.
    const appended = '--- a/pkg/add.py\n+++ b/pkg/add.py\n@@ -10,0 +11,3 @@\n+\n+def add3(a, b, c):\n+    return a + b + c\n';
    expect(plan(['pkg/add.py'], appended)).toMatchObject({ kind: 'tests', ids: ['tests/test_add.py::test_sub'], count: 1 });
  });

  it('an import-time change selects every test file that imports the file; a changed test file and a failing one run whole', () => {
    const diff = '--- a/pkg/mul.py\n+++ b/pkg/mul.py\n@@ -2 +2 @@\n-FACTOR = 1\n+FACTOR = 2\n';
    expect(plan(['pkg/mul.py'], diff)).toEqual({ kind: 'none', reason: EVERY_TEST });
    const p = plan(['tests/test_mul.py'], '', ['tests/test_doc.py']);
    expect(p).toMatchObject({ kind: 'tests', ids: [], whole: ['tests/test_doc.py', 'tests/test_mul.py'], count: 2 });
  });

  it('a harness change, a file no graph covers, or an unknown change makes the map stale; nothing reached selects nothing', () => {
    expect(plan(['tests/conftest.py'], '')).toMatchObject({ kind: 'stale', reason: expect.stringMatching(/harness.*tests\/conftest\.py/) });
    expect(plan(['data/table.csv'], '')).toMatchObject({ kind: 'stale' });
    expect(plan(null, '')).toMatchObject({ kind: 'stale' });
    expect(plan(['__pycache__/x.pyc'], '')).toEqual({ kind: 'none', reason: 'no test executed or imports what changed' });
    expect(plan(['scripts/report.py'], '--- a/scripts/report.py\n+++ b/scripts/report.py\n@@ -1 +1 @@\n-print(3)\n+print(4)\n')).toEqual({
      kind: 'none',
      reason: 'no test executed or imports what changed',
    });
  });

  it('holds a selection to the baseline tests it kept and those of the files it ran whole', () => {
    const baseline: TestReport = {
      format: 'junit',
      complete: true,
      incomplete: null,
      tests: [
        { id: 'tests.test_add::test_add', status: 'passed' },
        { id: 'tests.test_mixed::test_mixed_mul', status: 'passed' },
        { id: 'tests.test_doc::test_doc', status: 'passed' },
      ],
    };
    const held = baselineOfTests(baseline, ['tests/test_add.py::test_add'], ['tests/test_doc.py']);
    expect(held.tests.map((t) => t.id)).toEqual(['tests.test_add::test_add', 'tests.test_doc::test_doc']);
  });
});
