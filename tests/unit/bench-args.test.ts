/**
 * The benches read their flags before anything starts: `--help` prints the usage, and a bad flag
 * or value ends the bench at once (exit 2) with one line that names it, then the usage — never a
 * stack trace, never a server started for a bench that cannot run. The compiled benches are run.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, ROOT } from '../support/harness.js';

beforeAll(() => assertBuilt());

function bench(name: string, ...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'dist/bench', `${name}.js`), ...args], { encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('bench flags', () => {
  it('--help prints every flag of the main bench and exits 0', () => {
    const r = bench('run', '--help');
    expect(r.code).toBe(0);
    for (const flag of [
      '--iterations',
      '--knobs',
      '--concurrent',
      '--agent-jitter',
      '--slots',
      '--workflow-slots',
      '--git-niceness',
      '--dump-histories',
      '--server-config',
    ])
      expect(r.stdout).toContain(flag);
  });

  it.each([
    [['--iterations', 'ten'], /^bench: --iterations must be an integer, at least 1, got "ten"$/m],
    [['--agent-jitter', '1'], /^bench: --agent-jitter must be a number, at least 0, at most 0\.999, got "1"$/m],
    [['--knobs', 'fast'], /^bench: --knobs: no knob set "fast" \(minimal, default\)$/m],
    [['--git-niceness', '20'], /^bench: --git-niceness must be an integer, at least 0, at most 19, got "20"$/m],
    [['--nope'], /^bench: Unknown option '--nope'/m],
  ])('%j ends the bench with exit 2 and says what is wrong', (args, message) => {
    const r = bench('run', ...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain('usage: npm run bench');
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('npm run bench (bench/all.js) hands options to the main bench, its help and its refusals included', () => {
    const help = bench('all', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('npm run bench without options runs every bench');
    const bad = bench('all', '--iterations', 'ten');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^bench: --iterations must be an integer, at least 1, got "ten"$/m);
  });

  it('the latency benches check their numbers and choices too', () => {
    const stop = bench('stop-latency', '--runs', '0');
    expect(stop.code).toBe(2);
    expect(stop.stderr).toMatch(/^stop-latency: --runs must be an integer, at least 1, got "0"$/m);
    const store = bench('stop-latency', '--store', 'maybe');
    expect(store.code).toBe(2);
    expect(store.stderr).toMatch(/^stop-latency: --store: "maybe" is not on or off$/m);
    const cli = bench('cli-latency', '--trials', '2.5');
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/^cli-latency: --trials must be an integer, at least 1, got "2\.5"$/m);
  });
});
