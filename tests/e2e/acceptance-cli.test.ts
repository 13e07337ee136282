/**
 * `vigil start --acceptance DIR` as a person types it: a folder that does not exist, lies inside
 * the repository, holds no test file, or holds a Python or JavaScript file that does not parse is
 * refused with exit 2 and the reason, before anything reaches Temporal (no run starts: the
 * address is one nothing listens on, so a start would fail otherwise). Whole runs with acceptance
 * tests: tests/workflow/acceptance.test.ts. `--acceptance-from-prd` passes the same checks, and is
 * refused together with `--acceptance DIR` (or the knobs together) with exit 2; whole runs with it:
 * tests/workflow/acceptance-from-prd.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, SCRIPTED_AGENT } from '../support/harness.js';
import { runVigil, show } from './cli-helpers.js';
import { patient } from '../support/patience.js';

let root: string;
let repo: string;
let prd: string;

const start = (dir: string, ...extra: string[]) =>
  runVigil(
    ['start', prd, '--repo', repo, '--agent-command', `"${SCRIPTED_AGENT}"`, '--acceptance', dir, '--id', 'never-started', ...extra],
    {
      // Nothing listens here: a run that got past the checks would fail to connect (exit 4), not exit 2.
      TEMPORAL_ADDRESS: '127.0.0.1:1',
    },
  );

const folder = (name: string, files: Record<string, string>): string => {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const [f, text] of Object.entries(files)) writeFileSync(path.join(dir, f), text);
  return dir;
};

describe('vigil start --acceptance', () => {
  beforeAll(() => {
    assertBuilt();
    root = mkdtempSync(path.join(os.tmpdir(), 'vigil-acceptance-cli-'));
    repo = path.join(root, 'repo');
    mkdirSync(repo);
    writeFileSync(path.join(repo, 'gap.py'), 'def max_gap(xs):\n    return 0\n');
    execFileSync('git', ['init', '-q'], { cwd: repo });
    prd = path.join(root, 'PRD.md');
    writeFileSync(prd, '# Gap\n\nmax_gap(xs) is the largest value minus the smallest.\n');
  });

  it(
    'refuses bad input with exit 2 and the reason, and starts nothing',
    async () => {
      const cases: [string, RegExp][] = [
        [path.join(root, 'missing'), /no such folder/],
        [folder('repo/acc', { 'test_a.py': 'def test_a():\n    pass\n' }), /lies inside the repository/],
        [folder('none', { 'notes.md': '# cases\n' }), /holds no test file/],
        [folder('bad-py', { 'test_gap.py': 'def test_gap(:\n    assert True\n' }), /test_gap\.py does not parse: SyntaxError/],
        [folder('bad-js', { 'gap.test.mjs': 'test("x", () => {\n' }), /gap\.test\.mjs does not parse: SyntaxError/],
      ];
      const results = await Promise.all(cases.map(([dir]) => start(dir)));
      results.forEach((r, i) => {
        const [, reason] = cases[i] as [string, RegExp];
        expect(r.code, show(r)).toBe(2);
        expect(r.stderr).toMatch(reason);
        expect(r.stderr).toMatch(/--acceptance DIR/);
        expect(r.stdout).not.toContain('started run');
      });
      // The same check when the folder comes as the knob.
      const knob = await runVigil(
        ['start', prd, '--repo', repo, '--agent-command', `"${SCRIPTED_AGENT}"`, '--set', `acceptanceTests=${path.join(root, 'missing')}`],
        { TEMPORAL_ADDRESS: '127.0.0.1:1' },
      );
      expect(knob.code, show(knob)).toBe(2);
      expect(knob.stderr).toMatch(/no such folder/);
    },
    patient(60_000),
  );

  it(
    'an honest folder passes the checks (the start then fails only to reach the server)',
    async () => {
      const r = await start(
        folder('honest', { 'test_wall.py': 'from gap import max_gap\n\ndef test_mixed():\n    assert max_gap([-4, 1]) == 5\n' }),
      );
      expect(r.code, show(r)).not.toBe(2);
      expect(r.stderr).not.toMatch(/acceptance/);
    },
    patient(60_000),
  );

  it(
    '--acceptance-from-prd passes the checks alone, and is refused with --acceptance DIR (exit 2, the reason)',
    async () => {
      const noServer = { TEMPORAL_ADDRESS: '127.0.0.1:1' };
      const base = ['start', prd, '--repo', repo, '--agent-command', `"${SCRIPTED_AGENT}"`, '--id', 'never-started'];
      const alone = await runVigil([...base, '--acceptance-from-prd'], noServer);
      expect(alone.code, show(alone)).not.toBe(2);
      expect(alone.stderr).not.toMatch(/acceptance/);
      const honest = folder('honest-too', {
        'test_wall.py': 'from gap import max_gap\n\ndef test_mixed():\n    assert max_gap([-4, 1]) == 5\n',
      });
      const both = await runVigil([...base, '--acceptance-from-prd', '--acceptance', honest], noServer);
      expect(both.code, show(both)).toBe(2);
      expect(both.stderr).toMatch(/--acceptance-from-prd and --acceptance .*honest-too: a run has one set of acceptance tests/);
      expect(both.stderr).toMatch(/Leave out --acceptance to have them written/);
      expect(both.stdout).not.toContain('started run');
      // The same refusal when the two come as knobs.
      const knobs = await runVigil([...base, '--set', 'acceptanceFromPrd=true', '--set', `acceptanceTests=${honest}`], noServer);
      expect(knobs.code, show(knobs)).toBe(2);
      expect(knobs.stderr).toMatch(/a run has one set of acceptance tests/);
    },
    patient(60_000),
  );
});
