/**
 * releaseRunFiles, as a run closes: the run's sandbox homes and signal folders in VIGIL_HOME go,
 * read-only folders a CLI left in them included (a Go module cache: chmod'ed only when the removal
 * is refused), while the run's other private files stay; a second call finds nothing and says so.
 * Run as root, the first removal is never refused (root ignores the folders' modes), so only other
 * users take the chmod path here.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { releaseRunFiles } from '../../lib/sandbox.js';

let home: string;
const saved = process.env.VIGIL_HOME;
beforeAll(() => {
  home = mkdtempSync(path.join(os.tmpdir(), 'vigil-release-'));
  process.env.VIGIL_HOME = home;
});
afterAll(() => {
  if (saved === undefined) delete process.env.VIGIL_HOME;
  else process.env.VIGIL_HOME = saved;
  rmSync(home, { recursive: true, force: true });
});

it("removes the run's sandbox homes and signal folders, read-only folders in them included, and keeps its logs", async () => {
  const run = path.join(home, 'private', 'run-release');
  const cache = path.join(run, 'sandbox-home', 'command', 'go', 'pkg', 'mod', 'example.com', 'm@v1.0.0');
  mkdirSync(cache, { recursive: true });
  writeFileSync(path.join(cache, 'go.mod'), 'module example.com/m\n');
  writeFileSync(path.join(run, 'sandbox-home', 'command', '.gitconfig'), '[user]\n');
  chmodSync(cache, 0o555);
  chmodSync(path.dirname(cache), 0o555);
  mkdirSync(path.join(run, 'call-signals', 'call-1'), { recursive: true });
  writeFileSync(path.join(run, 'memory-judge.log'), 'the judge said\n');

  const r = await releaseRunFiles({ runId: 'run-release' });
  expect(r).toEqual({ removed: ['private/run-release/sandbox-home', 'private/run-release/call-signals'], problem: null });
  expect(readdirSync(run)).toEqual(['memory-judge.log']);

  expect(await releaseRunFiles({ runId: 'run-release' })).toEqual({ removed: [], problem: null });
  expect(existsSync(path.join(run, 'memory-judge.log'))).toBe(true);
});
