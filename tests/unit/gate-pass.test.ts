/**
 * Tests of the gate pass activity (activities/gates/index.ts, `runGates`) on real repositories:
 * where the gates' full reports go (one file per compact pass, one per gate for older runs), what
 * the compact results leave out, and how the workflow names the report again
 * (workflows/gates-pass.ts, `gateResultOf`).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { afterEach, describe, expect, it } from 'vitest';
import { runGates } from '../../activities/gates/index.js';
import type { RunGatesInput, RunGatesResult } from '../../schemas/activities.js';
import { gateResultOf } from '../../workflows/gates-pass.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

// Built at run time so the source itself holds no credential-looking literal.
const KEY = `sk-${'Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7'}`;

/** A repository with one commit and, since it, a file holding a key and one without. */
function repository(): string {
  const repo = mkdtempSync(path.join(os.tmpdir(), 'vigil-gate-pass-'));
  dirs.push(repo);
  const git = (...args: string[]): string =>
    execFileSync('git', args, {
      cwd: repo,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t.invalid',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t.invalid',
      },
    }).trim();
  git('init', '-q', '-b', 'main');
  writeFileSync(path.join(repo, 'README.md'), '# app\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
  writeFileSync(path.join(repo, 'client.js'), `const key = '${KEY}';\n`);
  writeFileSync(path.join(repo, 'notes.md'), 'plain notes\n');
  return repo;
}

const RUN = 'run-gate-pass';
const pass = (repo: string, compact: boolean): RunGatesInput => ({
  runId: RUN,
  repoPath: repo,
  iteration: 3,
  groups: [['secret_scan', 'mock_integrity'], ['doc_coverage']],
  sinceTrees: {},
  timeoutSeconds: 60,
  coverageThreshold: 0,
  tests: null,
  ...(compact ? { compact: true } : {}),
});

const run = (input: RunGatesInput): Promise<RunGatesResult> =>
  new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') }).run(runGates, input) as Promise<RunGatesResult>;
const reportsOf = (repo: string): string[] => readdirSync(path.join(repo, '.vigil', 'runs', RUN, 'gates')).sort();

describe('the gate pass', () => {
  it('writes one report for a compact pass, which every result names once the workflow fills it in', async () => {
    const repo = repository();
    const out = await run(pass(repo, true));
    const file = path.join(repo, '.vigil', 'runs', RUN, 'gates', 'pass-0003.json');
    expect(reportsOf(repo)).toEqual(['pass-0003.json']);
    expect(out.reportFile).toBe(file);
    expect(out.reportDir).toBeUndefined();
    expect(out.results.map((r) => r.gate)).toEqual(['secret_scan', 'mock_integrity', 'doc_coverage']);
    for (const r of out.results) expect(r).not.toHaveProperty('reportPath');

    const report = JSON.parse(readFileSync(file, 'utf8')) as {
      iteration: number;
      treeHash: string;
      interrupted: boolean;
      gates: { gate: string; verdict: string; files: string[]; findings: { file: string | null }[] }[];
    };
    expect(report).toMatchObject({ iteration: 3, treeHash: out.treeHash, interrupted: false });
    expect(report.gates.map((g) => g.gate)).toEqual(['secret_scan', 'mock_integrity', 'doc_coverage']);
    const secrets = report.gates[0];
    expect(secrets?.verdict).toBe('fail');
    expect(secrets?.files.sort()).toEqual(['README.md', 'client.js', 'notes.md']);
    expect(secrets?.findings.map((f) => f.file)).toEqual(['client.js']);
    expect(readFileSync(file, 'utf8')).not.toContain(KEY);

    const filled = out.results.map((r) => gateResultOf(r, out, 3));
    expect(filled.map((r) => r.reportPath)).toEqual([file, file, file]);
    expect(filled[0]).toMatchObject({ gate: 'secret_scan', verdict: 'fail', treeHash: out.treeHash, iteration: 3, findingCount: 1 });
  });

  it('writes a report per gate for a pass of an older run, and names it in each result', async () => {
    const repo = repository();
    const out = await run(pass(repo, false));
    expect(reportsOf(repo)).toEqual(['doc_coverage-0003.json', 'mock_integrity-0003.json', 'secret_scan-0003.json']);
    expect(out.reportFile).toBeUndefined();
    for (const r of out.results) expect(r.reportPath).toBe(path.join(repo, '.vigil', 'runs', RUN, 'gates', `${r.gate}-0003.json`));
    const secrets = JSON.parse(readFileSync(path.join(repo, '.vigil', 'runs', RUN, 'gates', 'secret_scan-0003.json'), 'utf8')) as {
      files: string[];
      findings: unknown[];
    };
    expect(secrets.files.sort()).toEqual(['README.md', 'client.js', 'notes.md']);
    expect(secrets.findings).toHaveLength(1);
  });

  it('fills in the per-gate report of a compact result recorded before the one-report pass', () => {
    const out: RunGatesResult = {
      treeHash: 't',
      results: [{ gate: 'secret_scan', verdict: 'pass', reason: 'ok' }],
      tests: null,
      interrupted: false,
      reportDir: '/r/gates',
    };
    expect(gateResultOf(out.results[0] as RunGatesResult['results'][number], out, 12).reportPath).toBe('/r/gates/secret_scan-0012.json');
  });
});
