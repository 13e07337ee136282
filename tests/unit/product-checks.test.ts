/**
 * The product checks' pure parts and the kept app check file (activities/gates/product-checks.ts):
 * the verdict rules (a command that did not run, was killed by a signal or overran is red), the
 * benchmark's measurement, the 2× rule, and the start copy that an agent's rewrite does not reach.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appCheckPlan,
  checkVerdict,
  interpreterOf,
  keepStartAppCheck,
  keptAppCheck,
  parseMeasurement,
  perfVerdict,
} from '../../activities/gates/product-checks.js';
import type { ToolRun } from '../../lib/gates/tools.js';

const run = (o: Partial<ToolRun>): ToolRun => ({
  exitCode: 0,
  timedOut: false,
  aborted: false,
  stdout: '',
  stderr: '',
  truncated: false,
  spawnError: null,
  ...o,
});

describe('checkVerdict', () => {
  const v = (r: Partial<ToolRun>) => checkVerdict('app_check', 'sh probe.sh', run(r), 'booting\nlistening on 3000\n', 300, 'log: /x.log');
  it('exit 0 passes, naming its log', () => {
    expect(v({})).toMatchObject({ verdict: 'pass', reason: 'the app check `sh probe.sh` passed (exit 0; log: /x.log)' });
  });
  it('any other exit, a signal, a timeout, a command that cannot start: red, with the log named and its tail', () => {
    expect(v({ exitCode: 1 })).toMatchObject({ verdict: 'fail', reason: 'the app check `sh probe.sh` failed (exit 1)' });
    expect(v({ exitCode: null })).toMatchObject({
      verdict: 'fail',
      reason: 'the app check `sh probe.sh` was killed by a signal before it finished',
    });
    expect(v({ exitCode: null, timedOut: true }).reason).toMatch(/did not finish within 300s/);
    expect(v({ exitCode: 127 }).reason).toMatch(/could not start \(exit 127/);
    expect(v({ exitCode: null, spawnError: 'sh: ENOENT' }).reason).toMatch(/could not start \(sh: ENOENT\)/);
    expect(v({ exitCode: 2 }).findings?.[0]?.message).toMatch(/log: \/x\.log; log tail: booting \| listening on 3000/);
  });
});

describe('the benchmark', () => {
  it('reads its last line: a number or {"value": n}, positive', () => {
    expect(parseMeasurement('warming up\n12.5\n')).toBe(12.5);
    expect(parseMeasurement('{"value": 3e2, "unit": "ms"}\n')).toBe(300);
    expect(parseMeasurement('12 ms\n')).toBeNull();
    expect(parseMeasurement('0\n')).toBeNull();
    expect(parseMeasurement('{"value": "fast"}')).toBeNull();
    expect(parseMeasurement('')).toBeNull();
  });
  it('blocks at twice the baseline, not below', () => {
    expect(perfVerdict('node bench.js', 100, 199, 'log: l').verdict).toBe('pass');
    const slow = perfVerdict('node bench.js', 100, 200, 'log: l');
    expect(slow.verdict).toBe('fail');
    expect(slow.reason).toMatch(/performance regression: `node bench.js` measured 200 against 100 on the start tree \(2\.00×\)/);
  });
});

describe('the app check file', () => {
  const saved = process.env.VIGIL_HOME;
  let root = '';
  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'vigil-app-check-'));
    process.env.VIGIL_HOME = path.join(root, 'home');
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.VIGIL_HOME;
    else process.env.VIGIL_HOME = saved;
  });

  it('is kept as the run starts; a rewrite afterwards changes nothing', () => {
    const repo = path.join(root, 'repo');
    mkdirSync(path.join(repo, '.vigil'), { recursive: true });
    writeFileSync(path.join(repo, '.vigil/app-check.sh'), 'curl -fsS localhost:3000/health\n');
    keepStartAppCheck(repo, 'run-1');
    writeFileSync(path.join(repo, '.vigil/app-check.sh'), 'exit 0\n');
    keepStartAppCheck(repo, 'run-1');
    expect(keptAppCheck('run-1')).toMatchObject({ name: 'app-check.sh', text: 'curl -fsS localhost:3000/health\n' });
    const plan = appCheckPlan('', 'run-1');
    expect(plan).toMatchObject({
      label: '.vigil/app-check.sh (as the run started)',
      env: { VIGIL_APP_CHECK_TEXT: 'curl -fsS localhost:3000/health\n' },
    });
  });

  it('none at the start: not applicable; a run from before they were kept says so; the knob wins over the file', () => {
    const bare = path.join(root, 'bare');
    mkdirSync(bare, { recursive: true });
    keepStartAppCheck(bare, 'run-2');
    expect(appCheckPlan('', 'run-2')).toEqual({ none: expect.stringMatching(/^not applicable: no app check/) as string });
    expect(appCheckPlan('', 'run-never-kept')).toEqual({ none: expect.stringMatching(/before app check files were kept/) as string });
    expect(appCheckPlan('sh probe.sh', 'run-1')).toMatchObject({ label: 'sh probe.sh' });
  });

  it('runs by its extension, else by its #! line', () => {
    expect(interpreterOf('app-check.py')).toBe('python3');
    expect(interpreterOf('app-check.mjs')).toBe('node');
    expect(interpreterOf('app-check.sh')).toBe('sh');
    expect(interpreterOf('app-check.rb')).toBeNull();
  });
});
