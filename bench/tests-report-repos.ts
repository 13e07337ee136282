/**
 * The small repositories the tests-report bench (bench/tests-report.ts) times a test run on: one
 * per runner (pytest, unittest, node's test runner, vitest), each a module and a few test files
 * whose tests all pass, committed with git. Generated, so the suite's size is a flag of the bench.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export type RunnerName = 'pytest' | 'unittest' | 'node-test' | 'vitest';
export const RUNNER_NAMES: readonly RunnerName[] = ['pytest', 'unittest', 'node-test', 'vitest'];

export interface BenchRepo {
  runner: RunnerName;
  /** The command a person types (and the run's configured test command). */
  command: string;
  dir: string;
  tests: number;
}

/** Test files per repository; the tests are spread over them. */
const FILES = 4;

const PY_MODULE = [
  'def mean(xs):',
  '    return sum(xs) / len(xs)',
  '',
  'def slug(text):',
  "    return '-'.join(text.lower().split())",
  '',
  'def primes(n):',
  '    return [k for k in range(2, n) if all(k % d for d in range(2, int(k ** 0.5) + 1))]',
  '',
].join('\n');

const JS_MODULE = [
  'export const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;',
  "export const slug = (text) => text.toLowerCase().split(/\\s+/).filter(Boolean).join('-');",
  'export const primes = (n) => {',
  '  const out = [];',
  '  for (let k = 2; k < n; k++) {',
  '    let prime = true;',
  '    for (let d = 2; d * d <= k; d++) if (k % d === 0) prime = false;',
  '    if (prime) out.push(k);',
  '  }',
  '  return out;',
  '};',
  '',
].join('\n');

/** Test i's body: [python expression that must be true, JS expression pair for an equality]. */
function testCase(i: number): { py: string; js: [string, string] } {
  switch (i % 3) {
    case 0:
      return { py: `mean([${i}, ${i + 1}, ${i + 2}]) == ${i + 1}`, js: [`mean([${i}, ${i + 1}, ${i + 2}])`, `${i + 1}`] };
    case 1:
      return { py: `slug('Item  ${i} Here') == 'item-${i}-here'`, js: [`slug('Item  ${i} Here')`, `'item-${i}-here'`] };
    default:
      return { py: `primes(${i + 10})[0] == 2`, js: [`primes(${i + 10})[0]`, '2'] };
  }
}

/** Which tests go in file f: every FILES-th, starting at f. */
const testsOf = (f: number, total: number): number[] => Array.from({ length: total }, (_, i) => i).filter((i) => i % FILES === f);

function pytestFile(ids: number[]): string {
  return ['from calc import mean, slug, primes', '', ...ids.map((i) => `def test_case_${i}():\n    assert ${testCase(i).py}\n`)].join('\n');
}

function unittestFile(f: number, ids: number[]): string {
  const methods = ids.map((i) => `    def test_case_${i}(self):\n        self.assertTrue(${testCase(i).py})\n`);
  return ['import unittest', 'from calc import mean, slug, primes', '', '', `class TestCalc${f}(unittest.TestCase):`, ...methods].join(
    '\n',
  );
}

function jsFile(ids: number[], runner: 'node-test' | 'vitest'): string {
  const head =
    runner === 'vitest'
      ? "import { test, expect } from 'vitest';"
      : "import { test } from 'node:test';\nimport assert from 'node:assert/strict';";
  const line = (i: number): string => {
    const [got, want] = testCase(i).js;
    return runner === 'vitest'
      ? `test('case ${i}', () => expect(${got}).toBe(${want}));`
      : `test('case ${i}', () => assert.equal(${got}, ${want}));`;
  };
  return [head, "import { mean, slug, primes } from './calc.mjs';", '', ...ids.map(line), ''].join('\n');
}

const git = (cwd: string, ...args: string[]): void => {
  execFileSync('git', args, {
    cwd,
    stdio: 'ignore',
    env: { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' },
  });
};

/**
 * A committed repository for `runner` with `tests` passing tests in `dir`. vitest comes from
 * `nodeModules` (the checkout's own): the repository gets a node_modules folder of its own
 * holding a link to it (its cache, node_modules/.vite, is then the repository's, not the checkout's).
 */
export function makeRepo(runner: RunnerName, dir: string, tests: number, nodeModules: string): BenchRepo {
  mkdirSync(dir, { recursive: true });
  const files: Record<string, string> = {};
  const pkg = (script: string): string => `${JSON.stringify({ name: 'calc', type: 'module', private: true, scripts: { test: script } })}\n`;
  let command: string;
  for (let f = 0; f < FILES; f++) {
    const ids = testsOf(f, tests);
    if (ids.length === 0) continue;
    if (runner === 'pytest') files[`test_calc_${f}.py`] = pytestFile(ids);
    else if (runner === 'unittest') files[`test_calc_${f}.py`] = unittestFile(f, ids);
    else files[`calc_${f}.test.mjs`] = jsFile(ids, runner);
  }
  if (runner === 'pytest' || runner === 'unittest') {
    files['calc.py'] = PY_MODULE;
    command = runner === 'pytest' ? 'python3 -m pytest -q' : 'python3 -m unittest discover';
  } else if (runner === 'node-test') {
    files['calc.mjs'] = JS_MODULE;
    files['package.json'] = pkg('node --test');
    command = 'node --test';
  } else {
    files['calc.mjs'] = JS_MODULE;
    files['package.json'] = pkg('vitest run');
    files['.gitignore'] = 'node_modules/\n';
    mkdirSync(path.join(dir, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(path.join(nodeModules, 'vitest'), path.join(dir, 'node_modules', 'vitest'));
    symlinkSync(path.join(nodeModules, 'vitest', 'vitest.mjs'), path.join(dir, 'node_modules', '.bin', 'vitest'));
    command = 'node_modules/.bin/vitest run';
  }
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'calc');
  return { runner, command, dir, tests };
}
