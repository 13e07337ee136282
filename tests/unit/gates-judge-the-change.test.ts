/**
 * The gates judge the change, not the legacy (activities/gates/change-scope.ts): on a real
 * repository with pre-existing problems in the file the agent touches — undocumented exports of a
 * publishable package, a lint error, a credential-looking fixture — a gate pass with the run's
 * start tree blocks only on lines the run wrote. The honest control appends clean, documented
 * code and passes every gate, the old problems listed as already in the base tree; the agent
 * whose own lines carry the same problems is refused by each gate; an agent that leaves a file
 * that does not parse is refused wherever the parser reports it; and without a start tree the
 * legacy blocks as before. The gate pass is the real activity (sandboxed as the worker's default
 * is), eslint the project's own.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterEach, describe, expect, it } from 'vitest';
import { parseZeroContextDiff, scopeFindings, unquoteGitPath, wroteLine } from '../../activities/gates/change-scope.js';
import { runGates } from '../../activities/gates/index.js';
import type { RunGatesInput, RunGatesResult } from '../../schemas/activities.js';
import type { GateResult } from '../../schemas/gates.js';
import { git, ROOT } from '../support/harness.js';
import { patient } from '../support/patience.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

// Built at run time so the source itself holds no credential-looking literal.
const OLD_KEY = `sk-${'Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7'}`;
const NEW_KEY = `sk-${'Zy8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0'}`;

const LEGACY = `export function legacy() {
  var x = 1;
  return x;
}

export const SAMPLE_TOKEN = '${OLD_KEY}';
`;

const HONEST = `
/** Doubles a number. */
export function double(n) {
  return n * 2;
}
`;

const DIRTY = `
export function triple(n) {
  var y = n * 3;
  return y;
}
const second = '${NEW_KEY}';
`;

/** A publishable package whose src/lib.js already has every problem; returns the repository and its start tree. */
function legacyRepository(): { repo: string; startTree: string } {
  const repo = mkdtempSync(path.join(os.tmpdir(), 'vigil-judge-change-'));
  dirs.push(repo);
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(repo, 'README.md'), '# lib\n');
  writeFileSync(path.join(repo, 'package.json'), JSON.stringify({ name: 'legacy-lib', version: '1.0.0', type: 'module' }));
  writeFileSync(path.join(repo, 'eslint.config.mjs'), "export default [{ rules: { 'no-var': 'error' } }];\n");
  writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n.vigil/\n');
  mkdirSync(path.join(repo, 'src'));
  writeFileSync(path.join(repo, 'src', 'lib.js'), LEGACY);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'legacy');
  mkdirSync(path.join(repo, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(path.join(ROOT, 'node_modules', '.bin', 'eslint'), path.join(repo, 'node_modules', '.bin', 'eslint'));
  return { repo, startTree: git(repo, 'rev-parse', 'HEAD^{tree}') };
}

const GATES = ['static_analysis', 'secret_scan', 'doc_coverage'] as const;

const pass = (repo: string, startTree: string | null): Promise<RunGatesResult> => {
  const input: RunGatesInput = {
    runId: 'run-judge-change',
    repoPath: repo,
    iteration: 2,
    groups: [[...GATES]],
    sinceTrees: {},
    timeoutSeconds: 120,
    coverageThreshold: 0,
    tests: null,
    // As workflows/gates-pass.ts asks: each gate looks at what changed since it last passed, else the start.
    ...(startTree !== null ? { runStartTree: startTree, sinceDefault: startTree } : {}),
  };
  return new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') }).run(runGates, input) as Promise<RunGatesResult>;
};

const byGate = (out: RunGatesResult): Record<string, GateResult> => Object.fromEntries(out.results.map((r) => [r.gate, r as GateResult]));

describe('gates judge the change, not the legacy', () => {
  it(
    'passes an agent whose own lines are clean, listing what was already there as advisory',
    async () => {
      const { repo, startTree } = legacyRepository();
      appendFileSync(path.join(repo, 'src', 'lib.js'), HONEST);
      const gates = byGate(await pass(repo, startTree));
      for (const g of GATES) expect(gates[g]?.verdict, `${g}: ${gates[g]?.reason}`).toBe('pass');
      expect(gates.static_analysis?.reason).toMatch(/1 already in the base tree \(advisory\)$/);
      expect(gates.secret_scan?.reason).toMatch(/no credentials in 1 changed file\(s\); 1 already in the base tree \(advisory\)$/);
      expect(gates.doc_coverage?.reason).toMatch(/2 undocumented export\(s\); 2 already in the base tree \(advisory\)$/);
      const legacy = GATES.flatMap((g) => gates[g]?.findings ?? []);
      expect(legacy.length).toBe(4);
      for (const f of legacy) {
        expect(f.severity).toBe('info');
        expect(f.message).toMatch(/^already in the base tree: /);
        expect(f.file).toBe('src/lib.js');
        expect(f.line).toBeLessThanOrEqual(6);
      }
    },
    patient(120_000),
  );

  it(
    'refuses an agent whose own lines carry the same problems, in every gate',
    async () => {
      const { repo, startTree } = legacyRepository();
      appendFileSync(path.join(repo, 'src', 'lib.js'), HONEST + DIRTY);
      const gates = byGate(await pass(repo, startTree));
      for (const g of GATES) expect(gates[g]?.verdict, `${g}: ${gates[g]?.reason}`).toBe('fail');
      expect(gates.static_analysis?.reason).toMatch(/^1 error in 1 file: src\/lib\.js:14 Unexpected var/);
      expect(gates.secret_scan?.reason).toMatch(
        /^1 possible credential in changed files, first: .* in src\/lib\.js:17; 1 already in the base tree/,
      );
      expect(gates.doc_coverage?.reason).toMatch(/triple/);
      // The blocking finding comes first; the legacy ones stay listed behind it.
      expect(gates.secret_scan?.findings.map((f) => [f.line, f.severity])).toEqual([
        [17, 'high'],
        [6, 'info'],
      ]);
    },
    patient(120_000),
  );

  it(
    'refuses a file that no longer parses wherever the parser reports it, even on a line the agent did not write',
    async () => {
      const { repo, startTree } = legacyRepository();
      const file = path.join(repo, 'src', 'lib.js');
      // An opening brace left unclosed at the top: the parser reports the end of the file, a legacy line.
      writeFileSync(file, `/** Opens. */\nexport function opens() {\n${LEGACY}`);
      const sa = byGate(await pass(repo, startTree)).static_analysis;
      expect(sa?.verdict).toBe('fail');
      expect(sa?.findings[0]).toMatchObject({ severity: 'high', file: 'src/lib.js' });
      expect(sa?.findings[0]?.line).toBeGreaterThan(2);
    },
    patient(120_000),
  );

  it(
    'without the run’s start tree, judges every line of the changed files, as before',
    async () => {
      const { repo } = legacyRepository();
      appendFileSync(path.join(repo, 'src', 'lib.js'), HONEST);
      const gates = byGate(await pass(repo, null));
      for (const g of GATES) expect(gates[g]?.verdict, `${g}: ${gates[g]?.reason}`).toBe('fail');
    },
    patient(120_000),
  );
});

describe('the lines a run wrote', () => {
  it('reads the new side of each hunk of a zero-context diff, a new file whole, a deleted one not at all', () => {
    const diff = [
      'diff --git src/a.js src/a.js',
      'index 1111111..2222222 100644',
      '--- src/a.js',
      '+++ src/a.js',
      '@@ -3 +3 @@ x',
      '-old',
      '+new',
      '@@ -10,0 +11,4 @@ y',
      '+a',
      '@@ -20,2 +24,0 @@ z',
      '-gone',
      'diff --git "sp ace\\tand\\303\\251" "sp ace\\tand\\303\\251"',
      'new file mode 100644',
      '--- /dev/null',
      '+++ "sp ace\\tand\\303\\251"',
      '@@ -0,0 +1,2 @@',
      '+1',
      '+2',
      'diff --git old.js old.js',
      'deleted file mode 100644',
      '--- old.js',
      '+++ /dev/null',
      '@@ -1,3 +0,0 @@',
    ].join('\n');
    const lines = parseZeroContextDiff(diff);
    expect([...lines]).toEqual([
      [
        'src/a.js',
        [
          [3, 3],
          [11, 14],
        ],
      ],
      ['sp ace\tandé', [[1, 2]]],
    ]);
    expect(unquoteGitPath('"a\\"b\\\\c"')).toBe('a"b\\c');
    expect(unquoteGitPath('plain')).toBe('plain');
    expect([2, 3, 4, 10, 11, 14, 15].map((n) => wroteLine(lines, 'src/a.js', n))).toEqual([false, true, false, false, true, true, false]);
    expect(wroteLine(lines, 'src/a.js', null)).toBe(true);
    expect(wroteLine(lines, 'untouched.js', null)).toBe(false);
  });

  it('makes findings on lines the run did not write advisory, and leaves the others and file-less ones alone', () => {
    const lines = new Map([['a.js', [[5, 6]] as [number, number][]]]);
    const scope = { lines, startRoot: new Set<string>() };
    const findings = [
      { gate: 'doc_coverage' as const, severity: 'high' as const, file: 'a.js', line: 5, message: 'new' },
      { gate: 'doc_coverage' as const, severity: 'high' as const, file: 'a.js', line: 1, message: 'old' },
      { gate: 'doc_coverage' as const, severity: 'high' as const, file: 'b.js', line: 1, message: 'untouched file' },
      { gate: 'doc_coverage' as const, severity: 'high' as const, file: null, line: null, message: 'README' },
    ];
    const out = scopeFindings(findings, scope);
    expect(out.legacy).toBe(2);
    expect(out.findings.map((f) => `${f.severity} ${f.message}`)).toEqual([
      'high new',
      'info already in the base tree: old',
      'info already in the base tree: untouched file',
      'high README',
    ]);
    expect(scopeFindings(findings, undefined).findings).toEqual(findings);
    expect(scopeFindings(findings, scope, (f) => f.message !== 'old').legacy).toBe(1);
  });
});
