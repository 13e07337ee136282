/**
 * Tests of activities/gates/test-runner.ts: test-runner detection on throw-away repositories of
 * each kind (spec §5.1 "Test suite detection"), and the reading of runner output into counts and a
 * verdict — zero tests executed is never a pass. Includes real runs of node --test and python's
 * unittest (always present here) so the parser is checked against real output, and a linear-time
 * check on 64 KiB of adversarial output.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { detectTestRunner, summarizeTestOutput } from '../../lib/gates/test-runner.js';
import { findBinary } from '../../lib/find-binary.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function repo(files: Record<string, string>, executables: string[] = []): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-tr-test-'));
  dirs.push(dir);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  for (const rel of executables) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), '#!/bin/sh\n');
    chmodSync(path.join(dir, rel), 0o755);
  }
  return dir;
}

const pkg = (extra: Record<string, unknown>): string => JSON.stringify({ name: 'p', version: '1.0.0', ...extra });
const PLACEHOLDER = 'echo "Error: no test specified" && exit 1';
const pytestInstalled = spawnSync('python3', ['-c', 'import pytest'], { stdio: 'ignore', timeout: 10_000 }).status === 0;

describe('detectTestRunner', () => {
  it.each<[string, string]>([
    ['vitest run', 'vitest'],
    ['tsc -p . && vitest run --coverage', 'vitest'],
    ['jest --ci', 'jest'],
    ['mocha "test/**/*.js"', 'mocha'],
    ['node --test test/', 'node-test'],
    ['node --experimental-vm-modules --test', 'node-test'],
    ['make check', 'npm-test'],
  ])('package.json scripts.test %j -> npm test (%s)', (script, runner) => {
    const dir = repo({ 'package.json': pkg({ scripts: { test: script } }) });
    expect(detectTestRunner(dir)).toMatchObject({ runner, command: 'npm test --silent' });
  });

  it("ignores npm's placeholder test script", () => {
    const dir = repo({ 'package.json': pkg({ scripts: { test: PLACEHOLDER } }) });
    expect(detectTestRunner(dir)).toBeNull();
  });

  it.each<[string, string, string]>([
    ['vitest', 'vitest', 'npx --no-install vitest run'],
    ['jest', 'jest', 'npx --no-install jest --passWithNoTests --forceExit'],
    ['mocha', 'mocha', 'npx --no-install mocha'],
  ])('no test script but node_modules/.bin/%s -> %s', (bin, runner, command) => {
    const dir = repo({ 'package.json': pkg({ scripts: { test: PLACEHOLDER } }) }, [`node_modules/.bin/${bin}`]);
    expect(detectTestRunner(dir)).toMatchObject({ runner, command });
  });

  it('npm workspaces without a root test script -> every workspace', () => {
    const dir = repo({ 'package.json': pkg({ workspaces: ['packages/*'] }) });
    expect(detectTestRunner(dir)).toMatchObject({ runner: 'npm-workspaces', command: 'npm test --workspaces --if-present' });
  });

  it('a root test script wins over workspaces', () => {
    const dir = repo({ 'package.json': pkg({ workspaces: ['packages/*'], scripts: { test: 'vitest run' } }) });
    expect(detectTestRunner(dir)).toMatchObject({ runner: 'vitest', command: 'npm test --silent' });
  });

  it('turbo.json uses turbo only when it is installed locally', () => {
    const withTurbo = repo({ 'package.json': pkg({ workspaces: ['apps/*'] }), 'turbo.json': '{}' }, ['node_modules/.bin/turbo']);
    expect(detectTestRunner(withTurbo)).toMatchObject({ runner: 'turbo', command: 'npx --no-install turbo run test' });
    const without = repo({ 'package.json': pkg({}), 'turbo.json': '{}' });
    expect(detectTestRunner(without)).toMatchObject({ runner: 'npm-workspaces', command: 'npm test --workspaces --if-present' });
  });

  it('pnpm-workspace.yaml: pnpm when installed, else npm workspaces', () => {
    const dir = repo({ 'package.json': pkg({}), 'pnpm-workspace.yaml': "packages:\n  - 'packages/*'\n" });
    if (findBinary('pnpm'))
      expect(detectTestRunner(dir)).toMatchObject({ runner: 'pnpm-workspaces', command: 'pnpm -r --if-present run test' });
    else expect(detectTestRunner(dir)).toMatchObject({ runner: 'npm-workspaces', command: 'npm test --workspaces --if-present' });
  });

  it('Python test files -> pytest when importable, else unittest', () => {
    const layouts: Record<string, string>[] = [
      { 'tests/test_a.py': 'def test_a():\n    assert True\n' },
      { 'test_b.py': '' },
      { 'tests/unit/test_c.py': '' },
    ];
    for (const files of layouts) {
      const dir = repo(files);
      if (pytestInstalled) expect(detectTestRunner(dir)).toMatchObject({ runner: 'pytest', command: 'python3 -m pytest --tb=short -q' });
      else expect(detectTestRunner(dir)).toMatchObject({ runner: 'unittest', command: 'python3 -m unittest discover -v' });
    }
  });

  it('pytest configuration without test files -> pytest only when importable', () => {
    const configs: Record<string, string>[] = [
      { 'pyproject.toml': '[tool.pytest.ini_options]\naddopts = "-q"\n' },
      { 'pytest.ini': '[pytest]\n' },
      { 'tox.ini': '[testenv]\ncommands = pytest\n' },
    ];
    for (const files of configs) {
      const dir = repo(files);
      if (pytestInstalled) expect(detectTestRunner(dir)?.runner).toBe('pytest');
      else expect(detectTestRunner(dir)).toBeNull();
    }
  });

  it('a pyproject.toml that does not mention pytest, without tests, is not a test suite', () => {
    expect(detectTestRunner(repo({ 'pyproject.toml': '[project]\nname = "x"\n' }))).toBeNull();
  });

  it('a JS repo with a tests/ folder of .js files is not a Python suite', () => {
    expect(detectTestRunner(repo({ 'package.json': pkg({}), 'tests/a.test.js': '' }))).toBeNull();
  });

  it('go.mod -> go test, Cargo.toml -> cargo test', () => {
    expect(detectTestRunner(repo({ 'go.mod': 'module m\n' }))).toMatchObject({ runner: 'go-test', command: 'go test ./...' });
    expect(detectTestRunner(repo({ 'Cargo.toml': '[package]\nname = "x"\n' }))).toMatchObject({
      runner: 'cargo-test',
      command: 'cargo test',
    });
  });

  it('nothing runnable -> null (also an unreadable package.json)', () => {
    expect(detectTestRunner(repo({}))).toBeNull();
    expect(detectTestRunner(repo({ 'README.md': '# x\n', 'src/main.c': 'int main(){}\n' }))).toBeNull();
    expect(detectTestRunner(repo({ 'package.json': '{ not json' }))).toBeNull();
  });
});

describe('summarizeTestOutput', () => {
  type Case = [string, string, string, number, { passed: number | null; failed: number | null; ran: number | null; verdict: string }];
  const cases: Case[] = [
    // vitest
    [
      'vitest fail',
      'vitest',
      ' FAIL  src/a.test.ts > math > adds\n\n Test Files  1 failed | 2 passed (3)\n      Tests  3 failed | 9 passed (12)\n   Duration  1.2s\n',
      1,
      { passed: 9, failed: 3, ran: 12, verdict: 'fail' },
    ],
    [
      'vitest pass',
      'vitest',
      ' Test Files  3 passed (3)\n      Tests  12 passed (12)\n',
      0,
      { passed: 12, failed: 0, ran: 12, verdict: 'pass' },
    ],
    ['vitest skipped only', 'vitest', '      Tests  4 skipped (4)\n', 0, { passed: 0, failed: 0, ran: 0, verdict: 'inconclusive' }],
    [
      'vitest no files',
      'vitest',
      'No test files found, exiting with code 1\n',
      1,
      { passed: 0, failed: 0, ran: 0, verdict: 'inconclusive' },
    ],
    [
      'vitest no files, passWithNoTests',
      'vitest',
      'No test files found, exiting with code 0\n',
      0,
      { passed: 0, failed: 0, ran: 0, verdict: 'inconclusive' },
    ],
    [
      'vitest with colours',
      'vitest',
      '\x1b[2m      Tests \x1b[22m \x1b[1m\x1b[31m1 failed\x1b[39m\x1b[22m\x1b[2m | \x1b[22m\x1b[1m\x1b[32m2 passed\x1b[39m\x1b[22m\x1b[90m (3)\x1b[39m\n',
      1,
      { passed: 2, failed: 1, ran: 3, verdict: 'fail' },
    ],
    // jest
    [
      'jest fail',
      'jest',
      'Test Suites: 1 failed, 1 total\nTests:       1 failed, 4 passed, 5 total\nSnapshots:   0 total\n',
      1,
      { passed: 4, failed: 1, ran: 5, verdict: 'fail' },
    ],
    [
      'jest pass',
      'jest',
      'Test Suites: 2 passed, 2 total\nTests:       5 passed, 5 total\n',
      0,
      { passed: 5, failed: 0, ran: 5, verdict: 'pass' },
    ],
    ['jest none', 'jest', 'No tests found, exiting with code 0\n', 0, { passed: 0, failed: 0, ran: 0, verdict: 'inconclusive' }],
    [
      'jest none, exit 1',
      'jest',
      'No tests found, exiting with code 1\nRun with `--passWithNoTests` to exit with code 0\n',
      1,
      { passed: 0, failed: 0, ran: 0, verdict: 'inconclusive' },
    ],
    // node --test
    [
      'node tap fail',
      'node-test',
      'not ok 2 - adds\n1..2\n# tests 5\n# suites 0\n# pass 4\n# fail 1\n# cancelled 0\n',
      1,
      { passed: 4, failed: 1, ran: 5, verdict: 'fail' },
    ],
    ['node tap zero', 'node-test', '1..0\n# tests 0\n# pass 0\n# fail 0\n', 0, { passed: 0, failed: 0, ran: 0, verdict: 'inconclusive' }],
    [
      'node spec pass',
      'node-test',
      '✔ adds (0.5ms)\nℹ tests 3\nℹ suites 0\nℹ pass 3\nℹ fail 0\nℹ duration_ms 40.1\n',
      0,
      { passed: 3, failed: 0, ran: 3, verdict: 'pass' },
    ],
    // mocha
    [
      'mocha fail',
      'mocha',
      '  9 passing (20ms)\n  1 failing\n\n  1) suite\n       works:\n',
      1,
      { passed: 9, failed: 1, ran: 10, verdict: 'fail' },
    ],
    ['mocha pass', 'mocha', '  3 passing (5ms)\n  1 pending\n', 0, { passed: 3, failed: 0, ran: 3, verdict: 'pass' }],
    ['mocha zero', 'mocha', '\n  0 passing (1ms)\n\n', 0, { passed: 0, failed: 0, ran: 0, verdict: 'inconclusive' }],
    ['mocha no files', 'mocha', 'Error: No test files found: "test"\n', 1, { passed: 0, failed: 0, ran: 0, verdict: 'inconclusive' }],
    // pytest
    [
      'pytest fail',
      'pytest',
      'FAILED tests/test_a.py::test_x - assert 1 == 2\n==== 3 failed, 9 passed, 1 warning in 0.10s ====\n',
      1,
      { passed: 9, failed: 3, ran: 12, verdict: 'fail' },
    ],
    [
      'pytest -q pass',
      'pytest',
      '.........                                 [100%]\n9 passed in 0.03s\n',
      0,
      { passed: 9, failed: 0, ran: 9, verdict: 'pass' },
    ],
    ['pytest errors', 'pytest', '=== 1 error in 0.20s ===\n', 2, { passed: 0, failed: 1, ran: 1, verdict: 'fail' }],
    ['pytest no tests', 'pytest', '\nno tests ran in 0.01s\n', 5, { passed: 0, failed: 0, ran: 0, verdict: 'inconclusive' }],
    [
      'pytest framed no tests',
      'pytest',
      '============================ no tests ran in 0.01s =============================\n',
      5,
      { passed: 0, failed: 0, ran: 0, verdict: 'inconclusive' },
    ],
    ['pytest exit 5, no summary', 'pytest', '', 5, { passed: null, failed: null, ran: 0, verdict: 'inconclusive' }],
    // unittest
    [
      'unittest pass',
      'unittest',
      'test_a (t.T.test_a) ... ok\n\n----------------------------------------------------------------------\nRan 5 tests in 0.001s\n\nOK\n',
      0,
      { passed: 5, failed: 0, ran: 5, verdict: 'pass' },
    ],
    ['unittest skipped', 'unittest', 'Ran 5 tests in 0.001s\n\nOK (skipped=2)\n', 0, { passed: 3, failed: 0, ran: 3, verdict: 'pass' }],
    [
      'unittest fail',
      'unittest',
      'FAIL: test_b (t.T.test_b)\n----\nRan 5 tests in 0.002s\n\nFAILED (failures=1, errors=1)\n',
      1,
      { passed: 3, failed: 2, ran: 5, verdict: 'fail' },
    ],
    ['unittest zero (old)', 'unittest', 'Ran 0 tests in 0.000s\n\nOK\n', 0, { passed: 0, failed: 0, ran: 0, verdict: 'inconclusive' }],
    [
      'unittest zero (3.12+)',
      'unittest',
      'Ran 0 tests in 0.000s\n\nNO TESTS RAN\n',
      5,
      { passed: 0, failed: 0, ran: 0, verdict: 'inconclusive' },
    ],
    // go test
    [
      'go pass',
      'go-test',
      'ok  \texample.com/m\t0.002s\nok  \texample.com/m/sub\t(cached)\n',
      0,
      { passed: null, failed: 0, ran: null, verdict: 'pass' },
    ],
    [
      'go fail',
      'go-test',
      '--- FAIL: TestAdd (0.00s)\n    add_test.go:9: got 3\nFAIL\nFAIL\texample.com/m\t0.002s\nFAIL\n',
      1,
      { passed: null, failed: 1, ran: null, verdict: 'fail' },
    ],
    [
      'go -v',
      'go-test',
      '=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- FAIL: TestB (0.00s)\n    --- FAIL: TestB/sub ' +
        '(0.00s)\nFAIL\nFAIL\texample.com/m\t0.002s\n',
      1,
      { passed: 1, failed: 1, ran: 2, verdict: 'fail' },
    ],
    [
      'go no test files',
      'go-test',
      '?   \texample.com/m\t[no test files]\n',
      0,
      { passed: null, failed: 0, ran: 0, verdict: 'inconclusive' },
    ],
    [
      'go no tests to run',
      'go-test',
      'ok  \texample.com/m\t0.002s [no tests to run]\n',
      0,
      { passed: null, failed: 0, ran: 0, verdict: 'inconclusive' },
    ],
    [
      'go build failure',
      'go-test',
      '# example.com/m\n./a.go:3:1: syntax error\nFAIL\texample.com/m [build failed]\n',
      1,
      { passed: null, failed: 0, ran: null, verdict: 'fail' },
    ],
    [
      'go build failure next to a package without tests',
      'go-test',
      '?   \texample.com/m/a\t[no test files]\nFAIL\texample.com/m/b [build failed]\n',
      1,
      { passed: null, failed: 0, ran: null, verdict: 'fail' },
    ],
    // cargo test
    [
      'cargo pass',
      'cargo-test',
      'running 3 tests\ntest result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n   ' +
        'Doc-tests x\nrunning 0 tests\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in ' +
        '0.00s\n',
      0,
      { passed: 3, failed: 0, ran: 3, verdict: 'pass' },
    ],
    [
      'cargo fail',
      'cargo-test',
      'test tests::it_works ... FAILED\ntest result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\n',
      101,
      { passed: 1, failed: 2, ran: 3, verdict: 'fail' },
    ],
    [
      'cargo zero',
      'cargo-test',
      'running 0 tests\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n',
      0,
      { passed: 0, failed: 0, ran: 0, verdict: 'inconclusive' },
    ],
    // runners whose output we cannot read
    ['unknown pass', 'npm-test', 'all good\n', 0, { passed: null, failed: null, ran: null, verdict: 'pass' }],
    ['unknown fail', 'npm-test', 'boom\n', 1, { passed: null, failed: null, ran: null, verdict: 'fail' }],
    ['npm script wrapping vitest', 'npm-test', '      Tests  2 passed (2)\n', 0, { passed: 2, failed: 0, ran: 2, verdict: 'pass' }],
    ['plain closing line', 'command', 'summary: 4 passed, 1 failed\n', 1, { passed: 4, failed: 1, ran: 5, verdict: 'fail' }],
    [
      'TAP under an unknown runner is not go',
      'npm-workspaces',
      'ok 1 - adds\nok 2 - subtracts\n# tests 2\n# pass 2\n# fail 0\n',
      0,
      { passed: 2, failed: 0, ran: 2, verdict: 'pass' },
    ],
  ];

  it.each(cases)('%s', (_name, runner, output, exit, want) => {
    const s = summarizeTestOutput(runner, output, exit);
    expect({ passed: s.passed, failed: s.failed, ran: s.ran, verdict: s.verdict }).toEqual(want);
    expect(s.reason).not.toMatch(/\n/);
    expect(s.reason).not.toMatch(/\d\.\d+ ?m?s\b/); // no durations: the reason must be stable
    expect(summarizeTestOutput(runner, output, exit)).toEqual(s);
  });

  it('reasons name the counts and the first failing test', () => {
    expect(summarizeTestOutput('go-test', '--- FAIL: TestAdd (0.01s)\nFAIL\texample.com/m\t0.002s\n', 1).reason).toBe(
      'go-test: 1 failed (exit 1); first: TestAdd',
    );
    expect(summarizeTestOutput('pytest', 'FAILED tests/test_a.py::test_x - assert 1 == 2\n3 failed, 9 passed in 1.23s\n', 1).reason).toBe(
      'pytest: 3 failed, 9 passed (exit 1); first: tests/test_a.py::test_x',
    );
    expect(summarizeTestOutput('vitest', ' × adds 2ms\n      Tests  1 failed (1)\n', 1).reason).toBe(
      'vitest: 1 failed, 0 passed (exit 1); first: adds',
    );
    expect(summarizeTestOutput('pytest', 'no tests ran in 0.00s\n', 5).reason).toBe('pytest: no tests ran (exit 5)');
    expect(summarizeTestOutput('node-test', '# tests 0\n# pass 0\n# fail 0\n', 0).reason).toBe('node-test: zero tests ran');
    expect(summarizeTestOutput('npm-test', 'done\n', 0).reason).toBe('npm-test: exit 0 (counts unknown)');
    expect(summarizeTestOutput('jest', 'Tests:       5 passed, 5 total\n', 0).reason).toBe('jest: 0 failed, 5 passed');
  });

  it('exit 0 with failures counted is still a failure', () => {
    expect(summarizeTestOutput('pytest', '1 failed, 2 passed in 0.1s\n', 0).verdict).toBe('fail');
  });

  it('reads only the end of very long output', () => {
    const noise = 'x'.repeat(200_000);
    const s = summarizeTestOutput('vitest', `      Tests  9 failed (9)\n${noise}\n      Tests  2 passed (2)\n`, 0);
    expect(s).toMatchObject({ passed: 2, failed: 0, verdict: 'pass' });
  });

  it('is linear on 64 KiB of adversarial output for every runner', () => {
    const K = 64 * 1024;
    const inputs = [
      'Tests '.repeat(K / 6),
      ` Tests:${' '.repeat(K - 10)}x`,
      '='.repeat(K),
      `${'= '.repeat(K / 2)}`,
      `${'1 passed, '.repeat(K / 10)}`,
      `${'1 passed, '.repeat(K / 10 - 1)}in 0.1s`,
      `ok ${'\t'.repeat(K - 10)}x`,
      `ok  \tpkg\t${'1'.repeat(K - 20)}`,
      '\n'.repeat(K),
      'x\n'.repeat(K / 2),
      '\x1b['.repeat(K / 2),
      `\x1b[${';'.repeat(K - 3)}`,
      `--- FAIL: ${'a'.repeat(K - 12)}`,
      `Ran ${'9'.repeat(K - 10)}`,
      `${'9 '.repeat(K / 2)}`,
      `test result: ok. ${'1'.repeat(K - 30)}`,
      `not ok 1 - ${'#'.repeat(K - 12)}`,
      ` FAIL ${' 1'.repeat(K / 2 - 4)}`,
      Array.from({ length: K / 16 }, (_, i) => `  ${i} passing (${i}ms)`).join('\n'),
    ];
    const runners = ['vitest', 'jest', 'mocha', 'node-test', 'pytest', 'unittest', 'go-test', 'cargo-test', 'npm-test'];
    for (const input of inputs) {
      for (const runner of runners) {
        const started = performance.now();
        const s = summarizeTestOutput(runner, input, 1);
        const ms = performance.now() - started;
        // quadratic behaviour on 64 KiB would take much longer; the bound leaves room for a busy machine
        expect(ms, `${runner} on ${JSON.stringify(input.slice(0, 20))}`).toBeLessThan(2000);
        expect(s.reason.length).toBeLessThanOrEqual(300);
      }
    }
  });
});

describe('summarizeTestOutput on real runner output', () => {
  it('node --test: failing, passing and empty suites', () => {
    const dir = repo({
      'fail.test.mjs':
        "import test from 'node:test';\nimport assert from 'node:assert';\ntest('adds', () => assert.equal(1 + 1, " +
        "2));\ntest('breaks', () => assert.equal(1, 2));\n",
      'pass.test.mjs': "import test from 'node:test';\ntest('a', () => {});\ntest('b', () => {});\n",
      'empty/README.md': 'no test files here\n',
    });
    const run = (args: string[], cwd = dir): ReturnType<typeof summarizeTestOutput> => {
      const r = spawnSync(process.execPath, ['--test', ...args], {
        cwd,
        encoding: 'utf8',
        timeout: 30_000,
        env: { ...process.env, NO_COLOR: '1' },
      });
      return summarizeTestOutput('node-test', `${r.stdout}${r.stderr}`, r.status ?? 1);
    };
    expect(run(['fail.test.mjs'])).toMatchObject({ passed: 1, failed: 1, ran: 2, verdict: 'fail' });
    expect(run(['pass.test.mjs'])).toMatchObject({ passed: 2, failed: 0, ran: 2, verdict: 'pass' });
    expect(run([], path.join(dir, 'empty'))).toMatchObject({ ran: 0, verdict: 'inconclusive' }); // no test file found
  });

  it('python unittest (the detected command): failing, passing and empty suites', () => {
    const run = (files: Record<string, string>): ReturnType<typeof summarizeTestOutput> => {
      const dir = repo(files);
      const r = spawnSync('python3', ['-m', 'unittest', 'discover', '-v'], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 30_000,
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
      });
      return summarizeTestOutput('unittest', `${r.stdout}${r.stderr}`, r.status ?? 1);
    };
    const body = (ok: boolean): string =>
      `import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertTrue(True)\n    def ` +
      `test_b(self):\n        self.assertTrue(${ok ? 'True' : 'False'})\n`;
    const failing = run({ 'test_x.py': body(false) });
    expect(failing).toMatchObject({ passed: 1, failed: 1, ran: 2, verdict: 'fail' });
    expect(failing.reason).toMatch(/^unittest: 1 failed, 1 passed \(exit 1\); first: test_b/);
    expect(run({ 'test_x.py': body(true) })).toMatchObject({ passed: 2, failed: 0, ran: 2, verdict: 'pass' });
    expect(run({ 'other.py': 'x = 1\n' })).toMatchObject({ ran: 0, verdict: 'inconclusive' });
  });

  it('pytest when installed: failing suite and exit 5 on no tests', () => {
    if (!pytestInstalled) {
      expect(summarizeTestOutput('pytest', '', 5).verdict).toBe('inconclusive');
      return;
    }
    const run = (files: Record<string, string>): ReturnType<typeof summarizeTestOutput> => {
      const dir = repo(files);
      const r = spawnSync('python3', ['-m', 'pytest', '--tb=short', '-q', '-p', 'no:cacheprovider'], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
      });
      return summarizeTestOutput('pytest', `${r.stdout}${r.stderr}`, r.status ?? 1);
    };
    expect(run({ 'test_a.py': 'def test_a():\n    assert 1 == 2\n\ndef test_b():\n    pass\n' })).toMatchObject({
      passed: 1,
      failed: 1,
      ran: 2,
      verdict: 'fail',
    });
    expect(run({ 'x.py': 'x = 1\n' })).toMatchObject({ ran: 0, verdict: 'inconclusive' });
  });
});
