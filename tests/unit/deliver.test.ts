/**
 * Delivery of a done run against real git repositories: the work is committed on `vigil/<run>`
 * from the working tree as it is (untracked files included, `.vigil/` and ignored files left out),
 * while the user's branch, index and working tree stay exactly as they were; a retried delivery
 * finds its own commit; a tree equal to HEAD delivers nothing. And the pure rules: who delivers,
 * the commit message.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverRun, runBranch } from '../../activities/deliver.js';
import { delivers, deliveryMessage } from '../../workflows/decisions/delivery.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const ENV = { ...process.env, GIT_AUTHOR_NAME: 'Person', GIT_AUTHOR_EMAIL: 'p@example.invalid', GIT_COMMITTER_NAME: 'Person', GIT_COMMITTER_EMAIL: 'p@example.invalid' };
const git = (cwd: string, ...args: string[]): string => execFileSync('git', ['-c', 'commit.gpgsign=false', ...args], { cwd, env: ENV, encoding: 'utf8' }).trim();

function repo(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-deliver-'));
  dirs.push(dir);
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(dir, 'README.md'), '# sample\n');
  writeFileSync(path.join(dir, '.gitignore'), 'build/\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}

describe('deliverRun', () => {
  it('commits the work on the run branch and leaves the branch, index and working tree alone', async () => {
    const dir = repo();
    const head = git(dir, 'rev-parse', 'HEAD');
    writeFileSync(path.join(dir, 'README.md'), '# sample\n\nNow with docs.\n');
    mkdirSync(path.join(dir, 'src'));
    writeFileSync(path.join(dir, 'src/feature.js'), 'export const feature = 1;\n');
    git(dir, 'add', 'README.md'); // something the person staged
    mkdirSync(path.join(dir, '.vigil/runs'), { recursive: true });
    writeFileSync(path.join(dir, '.vigil/runs/log.txt'), 'run log\n');
    mkdirSync(path.join(dir, 'build'));
    writeFileSync(path.join(dir, 'build/out.js'), 'ignored\n');
    const statusBefore = git(dir, 'status', '--porcelain');

    const d = await deliverRun({ repoPath: dir, runId: 'run-42', message: 'Feature\n\nDelivered by Vigil.\n' });
    expect(d).toEqual({ branch: 'vigil/run-42', commit: git(dir, 'rev-parse', 'vigil/run-42'), files: 2, skipped: null });
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(dir, 'symbolic-ref', '--short', 'HEAD')).toBe('main');
    expect(git(dir, 'status', '--porcelain')).toBe(statusBefore);
    expect(git(dir, 'log', '-1', '--format=%P%n%an%n%B', 'vigil/run-42')).toBe(`${head}\nVigil\nFeature\n\nDelivered by Vigil.`);
    expect(git(dir, 'ls-tree', '-r', '--name-only', 'vigil/run-42').split('\n')).toEqual(['.gitignore', 'README.md', 'src/feature.js']);
    expect(git(dir, 'show', 'vigil/run-42:README.md')).toBe('# sample\n\nNow with docs.');

    // A retried delivery finds its own commit.
    expect(await deliverRun({ repoPath: dir, runId: 'run-42', message: 'again\n' })).toEqual(d);
  });

  it('delivers nothing when the tree is HEAD’s', async () => {
    const dir = repo();
    expect(await deliverRun({ repoPath: dir, runId: 'r', message: 'm\n' })).toEqual({ branch: null, commit: null, files: 0, skipped: 'the working tree is the same as HEAD: nothing to deliver' });
    expect(git(dir, 'branch', '--list', 'vigil/*')).toBe('');
  });

  it('names the branch after the run, as git allows', () => {
    expect(runBranch('demo-2026')).toBe('vigil/demo-2026');
    expect(runBranch('a b..c~^:d.lock')).toBe('vigil/a-b.c---d-lock');
    expect(runBranch('..')).toBe('vigil/run');
  });
});

describe('who delivers, and the message', () => {
  it('delivers only a run that ended done, unless delivery is off', () => {
    expect(delivers('council_approved', 'branch')).toBe(true);
    expect(delivers('completion_promise_fulfilled', 'branch')).toBe(true);
    expect(delivers('force_stopped', 'branch')).toBe(false);
    expect(delivers('stopped', 'branch')).toBe(false);
    expect(delivers('max_iterations_reached', 'branch')).toBe(false);
    expect(delivers('council_approved', 'none')).toBe(false);
  });

  it('says what the run did in the commit message', () => {
    const m = deliveryMessage({ prdTitle: '  Slugify   helper ', workflowId: 'run-7', status: 'council_approved', reason: 'council approved at iteration 4 (round 2, 3 of 3)', iterations: 4, spendUsd: 1.234, calls: 9, notes: ['completion not independently verified: no test command'] });
    expect(m).toBe(
      'Slugify helper\n\nDelivered by Vigil run run-7: council_approved after 4 iteration(s).\n\ncouncil approved at iteration 4 (round 2, 3 of 3)\n\n- completion not independently verified: no test command\n\nSpend: $1.23 over 9 priced agent call(s).\nReport: vigil report run-7\n',
    );
  });
});
