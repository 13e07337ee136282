/**
 * Counting failing tests from a runner's output (rules/test-output.ts), for the
 * tier ladder's "more than 3 failing tests" trigger.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { countFailingTests } from '../../rules/test-output.js';

describe('countFailingTests', () => {
  it('reads the real output of node --test', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-node-test-'));
    mkdirSync(path.join(dir, 'test'));
    writeFileSync(
      path.join(dir, 'test/x.test.mjs'),
      "import { test } from 'node:test';\nimport assert from 'node:assert';\n" +
        "test('a', () => assert.equal(1, 2));\ntest('b', () => {});\ntest('c', () => assert.ok(false));\ntest('d', () => " +
        "assert.ok(false));\ntest('e', () => assert.ok(false));\n",
    );
    let out = '';
    try {
      execFileSync('node', ['--test'], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      out = String((err as { stdout?: string }).stdout ?? '');
    }
    expect(countFailingTests(out)).toBe(4);
  });

  it.each([
    ['pytest', '============ 3 failed, 12 passed in 0.52s ============', 3],
    ['vitest', ' Test Files  1 failed | 4 passed (5)\n      Tests  7 failed | 90 passed (97)', 7],
    ['jest', 'Tests:       2 failed, 40 passed, 42 total', 2],
    ['cargo', 'test result: FAILED. 8 passed; 5 failed; 0 ignored', 5],
    ['plain closing line', 'vitest: 10 passed, 0 failed', 0],
    ['go test failures', '--- FAIL: TestA (0.00s)\n--- FAIL: TestB (0.00s)\nFAIL\nFAIL\texample.com/x\t0.01s', 2],
    ['go test all green', 'ok  \texample.com/x\t0.01s', 0],
    ['the last summary wins', '# fail 9\n...\n# fail 1', 1],
  ])('%s', (_name, output, expected) => {
    expect(countFailingTests(output)).toBe(expected);
  });

  it('says "unknown" for output without a known summary', () => {
    expect(countFailingTests('all good, trust me')).toBeNull();
    expect(countFailingTests('')).toBeNull();
  });
});
