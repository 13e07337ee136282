/**
 * Owns the unit tests of activities/gates/test-integrity.ts: gate 5 (mock integrity) and gate 6
 * (test mutation). The pure detectors are fed JS/TS and Python test files, each pattern both ways
 * (a fake test is caught, a real one is not); the activities run on real temporary repositories,
 * and the mutation gate reads the previous iteration's tree from a real git commit. Adversarial
 * 512 KiB inputs check that every scan stays linear.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  assertionShape,
  isImplementationFile,
  isTestFile,
  lineMultisetDiff,
  mockIntegrityGate,
  mockProblems,
  mutationProblems,
  pythonLocalModules,
  safeRelPath,
  testMutationGate,
} from '../../activities/gates/test-integrity.js';
import { GateResultSchema, type FindingInput } from '../../schemas/gates.js';

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Vigil Test',
  GIT_AUTHOR_EMAIL: 'test@vigil.invalid',
  GIT_COMMITTER_NAME: 'Vigil Test',
  GIT_COMMITTER_EMAIL: 'test@vigil.invalid',
  GIT_TERMINAL_PROMPT: '0',
};

const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-integrity-test-'));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'commit.gpgsign=false', '-c', 'core.autocrlf=false', ...args], {
    cwd,
    env: GIT_ENV,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

function write(repo: string, rel: string, content: string): void {
  const file = path.join(repo, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
}

/** A real JS test: imports the code under test and asserts computed values. */
const REAL_JS_TEST = [
  "import { describe, expect, it } from 'vitest';",
  "import { add } from '../src/math.js';",
  '',
  "describe('add', () => {",
  "  it('adds', () => {",
  '    expect(add(1, 2)).toBe(3);',
  '    expect(add(-1, 1)).toBe(0);',
  '  });',
  '});',
  '',
].join('\n');

const REAL_PY_TEST = [
  'from mypkg.core import add',
  '',
  '',
  'def test_add():',
  '    assert add(1, 2) == 3',
  '    assert add(-1, 1) == 0',
  '',
].join('\n');

const high = (fs: FindingInput[]): FindingInput[] => fs.filter((f) => f.severity === 'high');
const messagesOf = (fs: FindingInput[]): string[] => fs.map((f) => f.message);

/** A JS test file with the import and wrapper of REAL_JS_TEST around `body` (body starts on line 6). */
function jsTest(body: string): string {
  return [
    "import { describe, expect, it } from 'vitest';",
    "import { add } from '../src/math.js';",
    '',
    "describe('x', () => {",
    "  it('works', () => {",
    body,
    '  });',
    '});',
    '',
  ].join('\n');
}

function pyTest(body: string): string {
  return ['from mypkg.core import add', '', '', 'def test_x():', body, ''].join('\n');
}

const LOCAL = new Set(['mypkg']);

// ---------------------------------------------------------------------------------------------
// isTestFile and paths
// ---------------------------------------------------------------------------------------------

describe('isTestFile', () => {
  it.each([
    'src/a.test.ts',
    'src/a.spec.tsx',
    'lib/a.test.mjs',
    'src/__tests__/a.ts',
    'test/a.js',
    'tests/unit/a.ts',
    'pkg/tests/helpers.cjs',
    'test_core.py',
    'pkg/test_core.py',
    'pkg/core_test.py',
    'tests/conftest.py',
  ])('%s is a test file', (p) => {
    expect(isTestFile(p)).toBe(true);
  });

  it.each([
    'src/a.ts',
    'src/testing.ts',
    'src/contest.py',
    'test/data.json',
    'tests/README.md',
    'src/attest.js',
    'pkg/testing_utils.py',
    'test/a.py',
    'docs/spec.md',
  ])('%s is not a test file', (p) => {
    expect(isTestFile(p)).toBe(false);
  });

  it('treats code that is not a test as implementation, and docs as neither', () => {
    expect(isImplementationFile('src/math.ts')).toBe(true);
    expect(isImplementationFile('pkg/core.py')).toBe(true);
    expect(isImplementationFile('tests/a.test.ts')).toBe(false);
    expect(isImplementationFile('README.md')).toBe(false);
    expect(isImplementationFile('package.json')).toBe(false);
  });

  it('refuses paths that leave the repository', () => {
    expect(safeRelPath('../etc/passwd')).toBeNull();
    expect(safeRelPath('/etc/passwd')).toBeNull();
    expect(safeRelPath('a/../../b')).toBeNull();
    expect(safeRelPath('')).toBeNull();
    expect(safeRelPath('./tests/a.test.ts')).toBe('tests/a.test.ts');
    expect(safeRelPath('a/b/../c.ts')).toBe('a/c.ts');
  });
});

// ---------------------------------------------------------------------------------------------
// mockProblems
// ---------------------------------------------------------------------------------------------

describe('mockProblems: JS/TS', () => {
  it('finds nothing in a real test that imports ../src and asserts computed values', () => {
    expect(mockProblems('tests/math.test.ts', REAL_JS_TEST)).toEqual([]);
  });

  it.each([
    'expect(true).toBe(true);',
    'expect(1).toBe(1);',
    'expect(x).toBe(x);',
    'expect(result).toEqual(result);',
    'expect(a.b).toStrictEqual(a.b);',
    "expect('ok').toBe('ok');",
    'expect(true).toBeTruthy();',
    'expect(null).toBeNull();',
    'expect(x).to.equal(x);',
    'assert.ok(true);',
    'assert(true);',
    'assert.equal(1, 1);',
    'assert.strictEqual(value, value);',
    'assert.deepStrictEqual(obj, obj, "same");',
  ])('flags the tautology %s (high, at its line)', (assertion) => {
    const found = mockProblems('tests/math.test.ts', jsTest(`    ${assertion}`));
    expect(found).toEqual([
      { gate: 'mock_integrity', severity: 'high', file: 'tests/math.test.ts', line: 6, message: `tautological assertion: ${assertion}` },
    ]);
  });

  it.each([
    'expect(add(1, 2)).toBe(3);',
    'expect(x).toBe(y);',
    'expect(x).not.toBe(x);',
    'expect(total).toEqual(1);',
    'expect(false).toBe(true);',
    'assert.equal(add(1, 1), 2);',
    'assert.ok(result);',
    "expect(x).toBe('x');",
  ])('does not flag the real assertion %s', (assertion) => {
    expect(mockProblems('tests/math.test.ts', jsTest(`    ${assertion}`))).toEqual([]);
  });

  it('ignores tautologies in comments', () => {
    expect(mockProblems('tests/math.test.ts', jsTest('    // expect(true).toBe(true);\n    expect(add(2, 2)).toBe(4);'))).toEqual([]);
  });

  it('flags a test that imports no project code (high, line 1)', () => {
    const content = [
      "import { expect, it } from 'vitest';",
      "import _ from 'lodash';",
      '',
      "it('maps', () => {",
      '  expect(_.map([1], (n) => n * 2)).toEqual([2]);',
      '});',
      '',
    ].join('\n');
    expect(mockProblems('tests/a.test.ts', content)).toEqual([
      {
        gate: 'mock_integrity',
        severity: 'high',
        file: 'tests/a.test.ts',
        line: 1,
        message: 'test imports no source under test: no import of the project code (relative path, package name or local module)',
      },
    ]);
  });

  it('accepts imports of the package by its own name, require, dynamic import and aliases', () => {
    const body = "it('x', () => {\n  expect(f(2)).toBe(4);\n});\n";
    const head = "import { expect, it } from 'vitest';\n";
    expect(mockProblems('tests/a.test.ts', `${head}import { f } from 'my-lib';\n${body}`, { packageName: 'my-lib' })).toEqual([]);
    expect(mockProblems('tests/a.test.ts', `${head}import { f } from '@acme/lib/sub';\n${body}`, { packageName: '@acme/lib' })).toEqual([]);
    expect(mockProblems('tests/a.test.js', `const { f } = require('../lib/f');\n${body}`)).toEqual([]);
    expect(mockProblems('tests/a.test.ts', `${head}const { f } = await import('../src/f.js');\n${body}`)).toEqual([]);
    expect(mockProblems('tests/a.test.ts', `${head}import { f } from '@/lib/f';\n${body}`)).toEqual([]);
    expect(mockProblems('tests/a.test.ts', `${head}import type { T } from 'vitest'; import { f } from '../src/f.js';\n${body}`)).toEqual(
      [],
    );
    // The package name of another project is not ours.
    expect(
      messagesOf(high(mockProblems('tests/a.test.ts', `${head}import { f } from 'my-lib';\n${body}`, { packageName: 'other' }))),
    ).toEqual(['test imports no source under test: no import of the project code (relative path, package name or local module)']);
  });

  it('does not judge helper files without test cases', () => {
    expect(mockProblems('tests/helpers.ts', "import os from 'node:os';\nexport const tmp = os.tmpdir();\n")).toEqual([]);
  });

  it('flags test cases without a single assertion (medium, at the first test case)', () => {
    const content = [
      "import { it } from 'vitest';",
      "import { add } from '../src/math.js';",
      '',
      "it('runs', () => {",
      '  add(1, 2);',
      '});',
      "it('runs again', () => {",
      '  add(2, 2);',
      '});',
      '',
    ].join('\n');
    expect(mockProblems('tests/math.test.ts', content)).toEqual([
      {
        gate: 'mock_integrity',
        severity: 'medium',
        file: 'tests/math.test.ts',
        line: 4,
        message: 'test file has no assertions: 2 test case(s), 0 assertion lines',
      },
    ]);
  });

  it('does not count skipped or todo cases as test cases', () => {
    expect(
      mockProblems(
        'tests/math.test.ts',
        "import { it } from 'vitest';\nimport '../src/math.js';\nit.todo('later');\nit.skip('off', () => {});\n",
      ),
    ).toEqual([]);
  });

  it('flags more internal mocks than assertions (medium), not mocks of external modules', () => {
    const internal = [
      "import { expect, it, vi } from 'vitest';",
      "import { run } from '../src/service.js';",
      "vi.mock('../src/db.js');",
      "vi.mock('../src/cache.js', () => ({ get: vi.fn() }));",
      "it('runs', async () => {",
      '  expect(await run()).toBe(2);',
      '});',
      '',
    ].join('\n');
    expect(mockProblems('tests/service.test.ts', internal)).toEqual([
      {
        gate: 'mock_integrity',
        severity: 'medium',
        file: 'tests/service.test.ts',
        line: 3,
        message: 'internal mocks outnumber assertions: 2 line(s) mock project modules, 1 assertion line(s)',
      },
    ]);
    const external = internal.replace("'../src/db.js'", "'node:fs'").replace("'../src/cache.js'", "'axios'");
    expect(mockProblems('tests/service.test.ts', external)).toEqual([]);
    // As many assertions as mocks: not outnumbered.
    expect(
      mockProblems(
        'tests/service.test.ts',
        internal.replace('  expect(await run()).toBe(2);', '  expect(await run()).toBe(2);\n  expect(await run()).not.toBe(3);'),
      ),
    ).toEqual([]);
  });

  it('yields nothing for files that are not JS/TS or Python', () => {
    expect(mockProblems('tests/data.json', '{"expect(true).toBe(true)": 1}')).toEqual([]);
  });
});

describe('mockProblems: Python', () => {
  it('finds nothing in a real pytest test of a local module', () => {
    expect(mockProblems('tests/test_core.py', REAL_PY_TEST, { localModules: LOCAL })).toEqual([]);
  });

  it.each([
    '    assert True',
    '    assert 1 == 1',
    '    assert x == x',
    '    assert result.value == result.value, "same"',
    "    assert 'a' == 'a'",
    '    assert x is x',
    '    assert (True)',
  ])('flags the tautology %s', (assertion) => {
    const found = mockProblems('tests/test_core.py', pyTest(assertion), { localModules: LOCAL });
    expect(found).toEqual([
      {
        gate: 'mock_integrity',
        severity: 'high',
        file: 'tests/test_core.py',
        line: 5,
        message: `tautological assertion: ${assertion.trim()}`,
      },
    ]);
  });

  it.each([
    'self.assertTrue(True)',
    'self.assertEqual(a, a)',
    'self.assertEqual(1, 1, "msg")',
    'self.assertIsNone(None)',
    'self.assertFalse(False)',
  ])('flags the unittest tautology %s', (assertion) => {
    const content = [
      'import unittest',
      'from mypkg import core',
      '',
      'class T(unittest.TestCase):',
      '    def test_x(self):',
      `        ${assertion}`,
      '',
    ].join('\n');
    expect(mockProblems('tests/test_core.py', content, { localModules: LOCAL })).toEqual([
      { gate: 'mock_integrity', severity: 'high', file: 'tests/test_core.py', line: 6, message: `tautological assertion: ${assertion}` },
    ]);
  });

  it.each([
    '    assert add(1, 2) == 3',
    '    assert x == y',
    '    assert result',
    '    assert True is not False or add(1, 1)',
    '    self.assertEqual(add(1, 1), 2)',
    '    assert x == x + 1',
  ])('does not flag the real assertion %s', (assertion) => {
    expect(high(mockProblems('tests/test_core.py', pyTest(assertion), { localModules: LOCAL }))).toEqual([]);
  });

  it('flags a test that imports only the standard library and third parties', () => {
    const content = [
      'import os',
      'import json, sys',
      'from collections import OrderedDict',
      '',
      'def test_env():',
      '    assert os.sep in ("/", "\\\\")',
      '',
    ].join('\n');
    expect(messagesOf(mockProblems('tests/test_env.py', content, { localModules: LOCAL }))).toEqual([
      'test imports no source under test: no import of the project code (relative path, package name or local module)',
    ]);
  });

  it('accepts relative imports and local modules among others on one line', () => {
    const body = '\ndef test_x():\n    assert f(2) == 4\n';
    expect(mockProblems('pkg/tests/test_f.py', `from .f import f${body}`, { localModules: new Set() })).toEqual([]);
    expect(mockProblems('tests/test_f.py', `import os, mypkg.f as f${body}`, { localModules: LOCAL })).toEqual([]);
    expect(mockProblems('tests/test_f.py', `from mypkg import f${body}`, { localModules: LOCAL })).toEqual([]);
  });

  it('skips the import check when the local modules are unknown', () => {
    expect(mockProblems('tests/test_env.py', 'import os\n\ndef test_x():\n    assert os.getcwd()\n')).toEqual([]);
  });

  it('counts patches of objects bound to local modules by an import', () => {
    const content = [
      'from unittest import mock',
      'import mypkg.store as st',
      'from mypkg import core, util as u',
      '',
      "@mock.patch.object(core, 'db')",
      "@mock.patch.object(st, 'conn')",
      'def test_run(conn, db, monkeypatch):',
      "    monkeypatch.setattr(u, 'now', lambda: 0)",
      '    assert core.run() == 1',
      '',
    ].join('\n');
    expect(mockProblems('tests/test_core.py', content, { localModules: LOCAL })).toEqual([
      {
        gate: 'mock_integrity',
        severity: 'medium',
        file: 'tests/test_core.py',
        line: 5,
        message: 'internal mocks outnumber assertions: 3 line(s) mock project modules, 1 assertion line(s)',
      },
    ]);
    // The same patches of a third-party module bound to a name: not internal.
    const external = content
      .replace('import mypkg.store as st', 'import requests as st')
      .replace('from mypkg import core, util as u', 'from mypkg import core\nimport time as u');
    expect(messagesOf(mockProblems('tests/test_core.py', external, { localModules: LOCAL }))).toEqual([]);
  });

  it('flags pytest functions without assertions and patches of local modules outnumbering assertions', () => {
    const noAssert = 'from mypkg import core\n\ndef test_runs():\n    core.run()\n';
    expect(mockProblems('tests/test_core.py', noAssert, { localModules: LOCAL })).toEqual([
      {
        gate: 'mock_integrity',
        severity: 'medium',
        file: 'tests/test_core.py',
        line: 3,
        message: 'test file has no assertions: 1 test case(s), 0 assertion lines',
      },
    ]);
    const mocked = [
      'from unittest import mock',
      'from unittest.mock import MagicMock',
      'from mypkg import core',
      '',
      "@mock.patch('mypkg.core.db')",
      "@mock.patch('mypkg.core.cache')",
      'def test_run(cache, db):',
      '    core.client = MagicMock()',
      '    assert core.run() == 1',
      '',
    ].join('\n');
    expect(mockProblems('tests/test_core.py', mocked, { localModules: LOCAL })).toEqual([
      {
        gate: 'mock_integrity',
        severity: 'medium',
        file: 'tests/test_core.py',
        line: 5,
        message: 'internal mocks outnumber assertions: 3 line(s) mock project modules, 1 assertion line(s)',
      },
    ]);
    // Patching third-party modules is ordinary isolation.
    const external = mocked
      .replace("'mypkg.core.db'", "'requests.get'")
      .replace("'mypkg.core.cache'", "'os.environ'")
      .replace('    core.client = MagicMock()\n', '');
    expect(mockProblems('tests/test_core.py', external, { localModules: LOCAL })).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// mutationProblems
// ---------------------------------------------------------------------------------------------

describe('assertionShape and lineMultisetDiff', () => {
  it('replaces literals by a placeholder and keeps them apart', () => {
    const a = assertionShape('expect(add(1, 2)).toBe(3);');
    const b = assertionShape('  expect(add(1, 2)).toBe(4);');
    expect(a.shape).toBe(b.shape);
    expect(a.literals).not.toBe(b.literals);
    expect(assertionShape("assert greet('bob') == 'hi bob'").literals.split('\u0000')).toEqual(["'bob'", "'hi bob'"]);
    expect(assertionShape('expect(x1).toBe(y)').literals).toBe('');
  });

  it('diffs lines as multisets with line numbers', () => {
    const d = lineMultisetDiff('a\nb\nb\nc\n', 'b\na\nc\nd\n');
    expect(d.removed).toEqual([{ text: 'b', line: 3 }]);
    expect(d.added).toEqual([{ text: 'd', line: 4 }]);
  });
});

describe('mutationProblems', () => {
  const impl = { file: 'src/math.ts', before: 'export const add = (a, b) => a + b;\n', after: 'export const add = (a, b) => a + b + 1;\n' };
  const fitted = REAL_JS_TEST.replace('expect(add(1, 2)).toBe(3);', 'expect(add(1, 2)).toBe(4);');

  it('flags an expected value changed alongside the implementation (high, at the new line)', () => {
    expect(mutationProblems([impl, { file: 'tests/math.test.ts', before: REAL_JS_TEST, after: fitted }])).toEqual([
      {
        gate: 'test_mutation',
        severity: 'high',
        file: 'tests/math.test.ts',
        line: 6,
        message: 'assertion value changed alongside the implementation (test-fitting): expect(add(1, 2)).toBe(4);',
      },
    ]);
  });

  it('flags a changed Python expected value', () => {
    const before = REAL_PY_TEST;
    const after = before.replace('assert add(1, 2) == 3', 'assert add(1, 2) == 4');
    const found = mutationProblems([
      { file: 'mypkg/core.py', before: 'x = 1\n', after: 'x = 2\n' },
      { file: 'tests/test_core.py', before, after },
    ]);
    expect(found.map((f) => [f.severity, f.line, f.message])).toEqual([
      ['high', 5, 'assertion value changed alongside the implementation (test-fitting): assert add(1, 2) == 4'],
    ]);
  });

  it('does not flag a test change when no implementation changed (docs and config do not count)', () => {
    const readme = { file: 'README.md', before: 'a\n', after: 'b\n' };
    const pkg = { file: 'package.json', before: '{}', after: '{"a":1}' };
    expect(mutationProblems([readme, pkg, { file: 'tests/math.test.ts', before: REAL_JS_TEST, after: fitted }])).toEqual([]);
  });

  it('does not flag new assertions, renamed variables or unchanged implementations', () => {
    const added = REAL_JS_TEST.replace(
      '    expect(add(-1, 1)).toBe(0);',
      '    expect(add(-1, 1)).toBe(0);\n    expect(add(2, 2)).toBe(4);',
    );
    expect(mutationProblems([impl, { file: 'tests/math.test.ts', before: REAL_JS_TEST, after: added }])).toEqual([]);
    const renamed = REAL_JS_TEST.replace('expect(add(1, 2)).toBe(3);', 'expect(add(1, 2)).toBe(three);');
    expect(high(mutationProblems([impl, { file: 'tests/math.test.ts', before: REAL_JS_TEST, after: renamed }]))).toEqual([]);
    const same = { ...impl, after: impl.before };
    expect(mutationProblems([same, { file: 'tests/math.test.ts', before: REAL_JS_TEST, after: fitted }])).toEqual([]);
  });

  it('flags assertions removed from an existing test alongside the implementation', () => {
    const removed = REAL_JS_TEST.replace('    expect(add(-1, 1)).toBe(0);\n', '');
    expect(mutationProblems([impl, { file: 'tests/math.test.ts', before: REAL_JS_TEST, after: removed }])).toEqual([
      {
        gate: 'test_mutation',
        severity: 'high',
        file: 'tests/math.test.ts',
        line: null,
        message: 'assertions removed: 1 assertion line(s) fewer alongside implementation changes (first at line 7 before the change)',
      },
    ]);
    // Without an implementation change, trimming a test is not test-fitting.
    expect(mutationProblems([{ file: 'tests/math.test.ts', before: REAL_JS_TEST, after: removed }])).toEqual([]);
  });

  it('flags a deleted test file unless its assertions moved to a new test file', () => {
    const deleted = { file: 'tests/math.test.ts', before: REAL_JS_TEST, after: null };
    expect(mutationProblems([impl, deleted])).toEqual([
      {
        gate: 'test_mutation',
        severity: 'high',
        file: 'tests/math.test.ts',
        line: null,
        message: 'assertions removed: test file deleted with 2 assertion line(s) alongside implementation changes',
      },
    ]);
    expect(mutationProblems([impl, deleted, { file: 'tests/add.test.ts', before: null, after: REAL_JS_TEST }])).toEqual([]);
  });

  it('reports low assertion density (low) for changed test files, advisory', () => {
    const filler = Array.from({ length: 20 }, (_, i) => `    const v${i} = add(${i}, 1);`).join('\n');
    const sparse = jsTest(`${filler}\n    expect(v0).toBe(1);`);
    expect(mutationProblems([{ file: 'tests/math.test.ts', before: null, after: sparse }])).toEqual([
      {
        gate: 'test_mutation',
        severity: 'low',
        file: 'tests/math.test.ts',
        line: null,
        message: 'low assertion density: 1 assertion line(s) in 27 lines of test code (below 1 per 15)',
      },
    ]);
    expect(mutationProblems([{ file: 'tests/math.test.ts', before: null, after: REAL_JS_TEST }])).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// The activities, on real repositories
// ---------------------------------------------------------------------------------------------

function jsRepo(): string {
  const repo = tempDir();
  write(repo, 'package.json', JSON.stringify({ name: 'math-lib', version: '1.0.0' }));
  write(repo, 'src/math.ts', 'export const add = (a: number, b: number): number => a + b;\n');
  write(repo, 'tests/math.test.ts', REAL_JS_TEST);
  return repo;
}

describe('mockIntegrityGate', () => {
  it('passes when no test file changed', async () => {
    const repo = jsRepo();
    const r = await mockIntegrityGate({ repoPath: repo, files: ['src/math.ts', 'README.md'] });
    expect(r).toMatchObject({ gate: 'mock_integrity', verdict: 'pass', reason: 'no test file changed', findings: [], findingCount: 0 });
    expect(GateResultSchema.parse(r).verdict).toBe('pass');
  });

  it('passes a real test', async () => {
    const repo = jsRepo();
    const r = await mockIntegrityGate({ repoPath: repo, files: ['tests/math.test.ts', 'src/math.ts'] });
    expect(r).toMatchObject({ verdict: 'pass', reason: '1 changed test file(s) checked; 0 advisory finding(s)', findingCount: 0 });
  });

  it('fails on a tautology with a stable one-line reason', async () => {
    const repo = jsRepo();
    write(
      repo,
      'tests/a.test.ts',
      "import { expect, it } from 'vitest';\nimport { add } from '../src/math.js';\nit('x', () => { expect(true).toBe(true); expect(add(1, 1)).toBe(2); });\n",
    );
    const first = await mockIntegrityGate({ repoPath: repo, files: ['tests/math.test.ts', 'tests/a.test.ts'] });
    const second = await mockIntegrityGate({ repoPath: repo, files: ['tests/a.test.ts', 'tests/math.test.ts'] });
    expect(first.verdict).toBe('fail');
    expect(first.reason).toBe('tautological assertion in tests/a.test.ts:3');
    expect(second.reason).toBe(first.reason);
    expect(first.findings?.[0]).toMatchObject({ severity: 'high', file: 'tests/a.test.ts', line: 3 });
    expect(GateResultSchema.parse(first).findingCount).toBe(1);
  });

  it('uses the package name from package.json', async () => {
    const repo = jsRepo();
    write(
      repo,
      'tests/pkg.test.ts',
      "import { expect, it } from 'vitest';\nimport { add } from 'math-lib';\nit('x', () => { expect(add(1, 1)).toBe(2); });\n",
    );
    expect((await mockIntegrityGate({ repoPath: repo, files: ['tests/pkg.test.ts'] })).verdict).toBe('pass');
    write(repo, 'package.json', JSON.stringify({ name: 'other-lib' }));
    const r = await mockIntegrityGate({ repoPath: repo, files: ['tests/pkg.test.ts'] });
    expect(r).toMatchObject({ verdict: 'fail', reason: 'test imports no source under test in tests/pkg.test.ts:1' });
  });

  it('keeps medium findings as advisory on a pass', async () => {
    const repo = jsRepo();
    write(
      repo,
      'tests/b.test.ts',
      "import { it } from 'vitest';\nimport { add } from '../src/math.js';\nit('runs', () => { add(1, 1); });\n",
    );
    const r = await mockIntegrityGate({ repoPath: repo, files: ['tests/b.test.ts'] });
    expect(r.verdict).toBe('pass');
    expect(r.reason).toBe('1 changed test file(s) checked; 1 advisory finding(s)');
    expect(r.findings).toEqual([
      {
        gate: 'mock_integrity',
        severity: 'medium',
        file: 'tests/b.test.ts',
        line: 3,
        message: 'test file has no assertions: 1 test case(s), 0 assertion lines',
      },
    ]);
  });

  it('finds the local Python modules of the repository and judges Python tests with them', async () => {
    const repo = tempDir();
    write(repo, 'src/mypkg/__init__.py', '');
    write(repo, 'src/mypkg/core.py', 'def add(a, b):\n    return a + b\n');
    write(repo, 'tools.py', 'X = 1\n');
    write(repo, 'docs/conf.py', '');
    write(repo, 'tests/__init__.py', '');
    write(repo, 'tests/test_core.py', REAL_PY_TEST);
    write(repo, 'tests/test_env.py', 'import os\n\ndef test_env():\n    assert os.getcwd()\n');
    expect([...pythonLocalModules(repo)].sort()).toEqual(['mypkg', 'tools']);
    const r = await mockIntegrityGate({ repoPath: repo, files: ['tests/__init__.py', 'tests/test_core.py', 'tests/test_env.py'] });
    expect(r).toMatchObject({ verdict: 'fail', reason: 'test imports no source under test in tests/test_env.py:1', findingCount: 1 });
  });

  it('ignores paths outside the repository and does not follow a linked test file', async () => {
    const repo = jsRepo();
    const outside = tempDir();
    write(outside, 'evil.test.ts', "it('x', () => { expect(true).toBe(true); });\n");
    symlinkSync(path.join(outside, 'evil.test.ts'), path.join(repo, 'tests/link.test.ts'));
    const r = await mockIntegrityGate({
      repoPath: repo,
      files: ['../outside.test.ts', '/etc/x.test.ts', 'tests/link.test.ts', 'node_modules/x/test/a.js'],
    });
    expect(r.verdict).toBe('pass');
    expect(r.reason).toBe('0 changed test file(s) checked, 1 not readable; 1 advisory finding(s)');
    expect(r.findings?.[0]).toMatchObject({
      severity: 'medium',
      file: 'tests/link.test.ts',
      message: 'test file not checked: link.test.ts is a symbolic link; ignored',
    });
  });
});

describe('testMutationGate (real git)', () => {
  /** A committed repository; returns it with the tree and commit of the "previous iteration". */
  function committed(): { repo: string; tree: string; commit: string } {
    const repo = jsRepo();
    write(repo, 'tests/test_core.py', REAL_PY_TEST);
    write(repo, 'mypkg/core.py', 'def add(a, b):\n    return a + b\n');
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'before');
    return { repo, tree: git(repo, 'rev-parse', 'HEAD^{tree}'), commit: git(repo, 'rev-parse', 'HEAD') };
  }

  it('fails when an expected value changes alongside the implementation, with a stable reason', async () => {
    const { repo, tree, commit } = committed();
    write(repo, 'src/math.ts', 'export const add = (a: number, b: number): number => a + b + 1;\n');
    write(repo, 'tests/math.test.ts', REAL_JS_TEST.replace('toBe(3)', 'toBe(4)'));
    const files = ['src/math.ts', 'tests/math.test.ts'];
    const r = await testMutationGate({ repoPath: repo, files, beforeTree: tree });
    expect(r.verdict).toBe('fail');
    expect(r.reason).toBe('assertion value changed alongside the implementation (test-fitting) in tests/math.test.ts:6');
    expect(r.findings).toEqual([
      {
        gate: 'test_mutation',
        severity: 'high',
        file: 'tests/math.test.ts',
        line: 6,
        message: 'assertion value changed alongside the implementation (test-fitting): expect(add(1, 2)).toBe(4);',
      },
    ]);
    expect((await testMutationGate({ repoPath: repo, files: [...files].reverse(), beforeTree: tree })).reason).toBe(r.reason);
    // A commit works as the previous state too.
    expect((await testMutationGate({ repoPath: repo, files, beforeTree: commit })).reason).toBe(r.reason);
  });

  it('fails on a Python expected value changed alongside the implementation', async () => {
    const { repo, tree } = committed();
    write(repo, 'mypkg/core.py', 'def add(a, b):\n    return a + b + 1\n');
    write(repo, 'tests/test_core.py', REAL_PY_TEST.replace('== 3', '== 4'));
    const r = await testMutationGate({ repoPath: repo, files: ['mypkg/core.py', 'tests/test_core.py'], beforeTree: tree });
    expect(r).toMatchObject({
      verdict: 'fail',
      reason: 'assertion value changed alongside the implementation (test-fitting) in tests/test_core.py:5',
    });
  });

  it('passes when only the test changed', async () => {
    const { repo, tree } = committed();
    write(repo, 'tests/math.test.ts', REAL_JS_TEST.replace('toBe(3)', 'toBe(4)'));
    const r = await testMutationGate({ repoPath: repo, files: ['tests/math.test.ts'], beforeTree: tree });
    expect(r).toMatchObject({ verdict: 'pass', reason: '1 changed test file(s) compared; 0 advisory finding(s)', findingCount: 0 });
  });

  it('fails when assertions are removed alongside the implementation', async () => {
    const { repo, tree } = committed();
    write(repo, 'src/math.ts', 'export const add = (a: number, b: number): number => a - b;\n');
    write(repo, 'tests/math.test.ts', REAL_JS_TEST.replace('    expect(add(1, 2)).toBe(3);\n', ''));
    const r = await testMutationGate({ repoPath: repo, files: ['src/math.ts', 'tests/math.test.ts'], beforeTree: tree });
    expect(r).toMatchObject({ verdict: 'fail', reason: 'assertions removed in tests/math.test.ts' });
  });

  it('passes when no test file changed, and treats everything as new without a previous tree', async () => {
    const { repo } = committed();
    write(repo, 'src/math.ts', 'export const add = (a: number, b: number): number => b + a;\n');
    expect(await testMutationGate({ repoPath: repo, files: ['src/math.ts'], beforeTree: null })).toMatchObject({
      verdict: 'pass',
      reason: 'no test file changed',
    });
    write(repo, 'tests/math.test.ts', REAL_JS_TEST.replace('toBe(3)', 'toBe(4)'));
    expect(await testMutationGate({ repoPath: repo, files: ['src/math.ts', 'tests/math.test.ts'], beforeTree: null })).toMatchObject({
      verdict: 'pass',
    });
  });

  it('is inconclusive when the previous tree is unknown or looks like an option', async () => {
    const { repo } = committed();
    write(repo, 'tests/math.test.ts', REAL_JS_TEST.replace('toBe(3)', 'toBe(4)'));
    for (const beforeTree of ['0123456789abcdef0123456789abcdef01234567', '--output=/tmp/x']) {
      const r = await testMutationGate({ repoPath: repo, files: ['tests/math.test.ts'], beforeTree });
      expect(r).toMatchObject({ verdict: 'inconclusive', reason: 'previous tree not found in the repository; cannot compare test files' });
    }
  });

  it('treats a deleted test file as removed assertions alongside an implementation change', async () => {
    const { repo, tree } = committed();
    write(repo, 'src/math.ts', 'export const add = (a: number, b: number): number => a * b;\n');
    unlinkSync(path.join(repo, 'tests/math.test.ts'));
    write(repo, 'tests/other.test.ts', REAL_JS_TEST.replace("it('adds'", "it('still adds'"));
    // The file list names the deleted file too: its assertions reappear in other.test.ts (a move).
    const moved = await testMutationGate({
      repoPath: repo,
      files: ['src/math.ts', 'tests/math.test.ts', 'tests/other.test.ts'],
      beforeTree: tree,
    });
    expect(moved.verdict).toBe('pass');
    unlinkSync(path.join(repo, 'tests/other.test.ts'));
    write(repo, 'tests/other.test.ts', REAL_JS_TEST.replace('    expect(add(-1, 1)).toBe(0);\n', ''));
    const lost = await testMutationGate({
      repoPath: repo,
      files: ['src/math.ts', 'tests/math.test.ts', 'tests/other.test.ts'],
      beforeTree: tree,
    });
    expect(lost).toMatchObject({ verdict: 'fail', reason: 'assertions removed in tests/math.test.ts' });
  });
});

// ---------------------------------------------------------------------------------------------
// Linear time on adversarial input
// ---------------------------------------------------------------------------------------------

describe('adversarial 512 KiB inputs', () => {
  const SIZE = 512 * 1024;
  const fill = (unit: string): string => unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE);
  const inputs: Record<string, string> = {
    'one line of expect(': fill('expect(x).toBe('),
    'lines of expect( with long operands': fill(`expect(${'a'.repeat(3000)}\n`),
    'unterminated quotes': fill(`expect('${'"'.repeat(600)}\n`),
    'assert with spaces': fill(`assert ${' '.repeat(1000)}x ==${' '.repeat(1000)}\n`),
    'python imports': fill(`import ${'a, '.repeat(900)}\n`),
    'dotted identifiers': fill(`assert ${'a.'.repeat(1500)} == x\n`),
    'mock calls': fill(`vi.mock('${'.'.repeat(2000)}\n`),
    literals: fill(`expect(${"1, 'a', 0x1f, ".repeat(200)}\n`),
    'no newlines at all': fill('aaaaaaaaaa'),
    'test cases': fill("it('x', () => {\n"),
  };

  it.each(Object.keys(inputs))('%s: both detectors finish in under a second', (name) => {
    const content = inputs[name] ?? '';
    for (const file of ['tests/a.test.ts', 'tests/test_a.py']) {
      const t0 = performance.now();
      mockProblems(file, content, { localModules: LOCAL, packageName: 'pkg' });
      mutationProblems([
        { file: 'src/a.ts', before: '', after: 'x' },
        { file, before: content, after: `${content.slice(0, SIZE / 2)}\n${content.slice(SIZE / 2 + 10)}` },
      ]);
      expect(performance.now() - t0).toBeLessThan(4000);
    }
  });
});
