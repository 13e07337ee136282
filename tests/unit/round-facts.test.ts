/**
 * The repository facts a council round and a code review start from, against real repositories:
 * the council's evidence pack (activities/evidence.ts: status, recent commits, the diff's stat and
 * names against the run start, each baseline) and the review's diff (activities/review.ts). Both
 * ask git their independent questions side by side; what they write must not depend on the order
 * the answers come in.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterEach, describe, expect, it } from 'vitest';
import { collectEvidence } from '../../activities/evidence.js';
import { workingTreeHash } from '../../activities/git.js';
import { prepareReview } from '../../activities/review.js';
import { git, makeRepo, writePrd } from '../support/harness.js';

const repos: string[] = [];
afterEach(() => {
  for (const r of repos.splice(0)) rmSync(r, { recursive: true, force: true });
});

function repo(opts: Parameters<typeof makeRepo>[0] = {}): string {
  const r = makeRepo(opts);
  repos.push(r);
  return r;
}

const evidenceInput = (
  repoPath: string,
  over: Partial<Parameters<typeof collectEvidence>[0]> = {},
): Parameters<typeof collectEvidence>[0] => ({
  runId: 'run-1',
  repoPath,
  prdPath: writePrd('# PRD\n\nMake a.txt say hello.\n'),
  round: 1,
  iteration: 4,
  runStartSha: null,
  runStartTree: null,
  secretScan: true,
  testSummary: 'tests: 3 passed',
  convergenceSummary: null,
  ...over,
});

describe('collectEvidence', () => {
  it('packs the status, the recent commits and the changes since the run-start commit', async () => {
    const r = repo({ files: { 'a.txt': 'one\n', 'b.txt': 'bee\n' } });
    const start = git(r, 'rev-parse', 'HEAD');
    writeFileSync(path.join(r, 'a.txt'), 'hello\n');
    git(r, 'commit', '-q', '-am', 'say hello');
    writeFileSync(path.join(r, 'c.txt'), 'new\n');
    writeFileSync(path.join(r, 'key.txt'), 'AKIAABCDEFGHIJKLMNOP\n');
    const facts = await collectEvidence(evidenceInput(r, { runStartSha: start }));
    expect(facts.baseline).toBe('run_start_commit');
    expect(facts.treeHash).toBe(await workingTreeHash(r));
    expect([...facts.changedFiles].sort()).toEqual(['a.txt', 'c.txt', 'key.txt']);
    expect(facts.filesChanged).toBe(3);
    expect(facts.secrets?.map((s) => s.file)).toEqual(['key.txt']);
    const pack = readFileSync(facts.evidencePath, 'utf8');
    expect(pack).toContain('# Evidence for council round 1 (iteration 4)');
    expect(pack).toContain('Make a.txt say hello.');
    expect(pack).toMatch(/## Git status\n\n```\n\?\? c\.txt\n\?\? key\.txt\n```/);
    expect(pack).toMatch(/## Recent commits\n\n```\n[0-9a-f]+ say hello\n[0-9a-f]+ initial\n```/);
    expect(pack).toContain('## Changes since the run started (run start commit; 3 file(s))');
    expect(pack).toMatch(/ a\.txt +\| 2 \+-\n/);
    expect(pack).toContain('tests: 3 passed');
    expect(pack).toContain('- AWS access key id in key.txt:1');
    // Nothing lifted: no section of it.
    expect(pack).not.toContain('lifted by a person or the PRD checklist');
  });

  it('shows the council the findings a person or the checklist lifted, beside what lifted them', async () => {
    const r = repo({ files: { 'a.txt': 'one\n' } });
    const start = git(r, 'rev-parse', 'HEAD');
    writeFileSync(path.join(r, 'a.txt'), 'hello\n');
    const lifted =
      '- test_mutation: baseline assertion changed in tests/test_gap.py:4 [lifted: asked for by checklist item REQ-2] — REQ-2: use [1, 6]';
    const pack = readFileSync(
      (await collectEvidence(evidenceInput(r, { runStartSha: start, liftedFindings: lifted }))).evidencePath,
      'utf8',
    );
    expect(pack).toMatch(
      /## Test changes lifted by a person or the PRD checklist\n\n.*Judge whether the PRD really asks for it\.\n\n- test_mutation: /,
    );
    expect(pack).toContain(lifted);
  });

  it('falls back to the run-start tree, then to HEAD, and says so; a repository without commits has none to show', async () => {
    const r = repo({ files: { 'a.txt': 'one\n' } });
    const startTree = await workingTreeHash(r);
    writeFileSync(path.join(r, 'b.txt'), 'b\n');
    expect((await collectEvidence(evidenceInput(r, { runStartTree: startTree }))).baseline).toBe('run_start_tree');
    const gone = await collectEvidence(evidenceInput(r, { runStartSha: '0123456789abcdef0123456789abcdef01234567' }));
    expect(gone.baseline).toBe('base_unreachable');
    expect(gone.changedFiles).toEqual(['b.txt']);

    const empty = repo({ commit: false, files: { 'x.txt': 'x\n' } });
    const none = await collectEvidence(evidenceInput(empty));
    expect(none.baseline).toBe('base_unreachable');
    expect(none.changedFiles).toEqual(['x.txt']);
    const pack = readFileSync(none.evidencePath, 'utf8');
    expect(pack).toMatch(/## Recent commits\n\n```\n\(no commits\)\n```/);
    expect(pack).toMatch(/## Git status\n\n```\n\?\? x\.txt\n```/);
  });

  it('fails as NotAGitRepository for a folder that is not a repository', async () => {
    const r = repo();
    rmSync(path.join(r, '.git'), { recursive: true, force: true });
    const err = await collectEvidence(evidenceInput(r)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).type).toBe('NotAGitRepository');
  });
});

describe('prepareReview', () => {
  const input = (repoPath: string, over: Partial<Parameters<typeof prepareReview>[0]> = {}): Parameters<typeof prepareReview>[0] => ({
    runId: 'run-1',
    repoPath,
    round: 2,
    runStartSha: null,
    runStartTree: null,
    maxDiffBytes: 100_000,
    ...over,
  });

  it('writes the diff since the run start on the tree it hashed, from the commit, the tree or the empty tree', async () => {
    const r = repo({ files: { 'a.txt': 'one\n' } });
    const start = git(r, 'rev-parse', 'HEAD');
    const startTree = await workingTreeHash(r);
    writeFileSync(path.join(r, 'a.txt'), 'two\n');
    writeFileSync(path.join(r, 'auth.ts'), 'export const password = check();\n');
    const byCommit = await prepareReview(input(r, { runStartSha: start }));
    expect(byCommit.treeHash).toBe(await workingTreeHash(r));
    expect(byCommit.files).toEqual(['a.txt', 'auth.ts']);
    expect(byCommit.refused).toBeNull();
    const diff = readFileSync(byCommit.diffPath, 'utf8');
    expect(diff).toContain('-one\n+two');
    expect(diff).toContain('+export const password = check();');
    expect(byCommit.keywords).toContain('password');
    expect((await prepareReview(input(r, { runStartTree: startTree }))).files).toEqual(['a.txt', 'auth.ts']);
    // Neither start known: everything is new.
    expect((await prepareReview(input(r))).files).toEqual(['a.txt', 'auth.ts']);
  });

  it('refuses an empty change and a diff over the cap', async () => {
    const r = repo({ files: { 'a.txt': 'one\n' } });
    const start = git(r, 'rev-parse', 'HEAD');
    expect((await prepareReview(input(r, { runStartSha: start }))).refused).toBe(
      'nothing to review: no file changed since the run started',
    );
    writeFileSync(path.join(r, 'a.txt'), 'x'.repeat(5000));
    const big = await prepareReview(input(r, { runStartSha: start, maxDiffBytes: 1000 }));
    expect(big.refused).toMatch(/^the diff is too big to review \(\d+ bytes, the cap is 1000; knob reviewMaxDiffBytes\)$/);
    expect(readFileSync(big.diffPath, 'utf8')).toBe(`(refused: ${big.refused})\n`);
  });
});
