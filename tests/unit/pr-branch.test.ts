/**
 * A followed pull request's branch brought onto its moved base (activities/pr-branch.ts), against
 * real repositories and a real bare remote whose main another clone moves: rebased (the run's
 * commit on the new base, the working tree the new tree, the person's branch and index untouched,
 * and a retry making nothing new), merged (a merge commit on top of the old tip), already current,
 * and a conflict aborted with its files named and nothing moved.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverRun } from '../../activities/deliver.js';
import { updatePrBranch } from '../../activities/pr-branch.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'P',
  GIT_AUTHOR_EMAIL: 'p@example.invalid',
  GIT_COMMITTER_NAME: 'P',
  GIT_COMMITTER_EMAIL: 'p@example.invalid',
};
const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'commit.gpgsign=false', ...args], { cwd, env: ENV, encoding: 'utf8' }).trim();
const tmp = (prefix: string): string => {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
};

/** A repository on main with a bare remote, and a run's delivered branch (a.txt) pushed to it. */
async function delivered(): Promise<{ repo: string; remote: string; branch: string; tip: string }> {
  const remote = tmp('vigil-pr-remote-');
  git(remote, 'init', '-q', '--bare');
  const repo = tmp('vigil-pr-repo-');
  git(repo, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(repo, 'README.md'), '# r\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'start');
  git(repo, 'remote', 'add', 'origin', remote);
  git(repo, 'push', '-q', 'origin', 'main');
  writeFileSync(path.join(repo, 'a.txt'), 'the run\n');
  const d = await deliverRun({ repoPath: repo, runId: 'r1', message: 'the run' });
  git(repo, 'push', '-q', 'origin', `${d.branch}:${d.branch}`);
  return { repo, remote, branch: d.branch as string, tip: d.commit as string };
}

/** Another clone moves main: `file` written, committed and pushed. */
function moveBase(remote: string, file: string, text: string): string {
  const other = tmp('vigil-pr-other-');
  git(other, 'clone', '-q', '-b', 'main', remote, '.');
  writeFileSync(path.join(other, file), text);
  git(other, 'add', file);
  git(other, 'commit', '-q', '-m', `base: ${file}`);
  git(other, 'push', '-q', 'origin', 'main');
  return git(other, 'rev-parse', 'HEAD');
}

describe('updatePrBranch', () => {
  it('rebases the run branch onto the moved base, writes the new tree into the working tree, and a retry makes nothing new', async () => {
    const { repo, remote, branch, tip } = await delivered();
    const main = git(repo, 'rev-parse', 'main');
    const base = moveBase(remote, 'b.txt', 'base\n');
    const r = await updatePrBranch({ repoPath: repo, runId: 'r1', branch, mode: 'rebase' });
    expect(r).toMatchObject({ result: 'updated', base: 'main', previous: tip, files: [] });
    expect(git(repo, 'rev-parse', branch)).toBe(r.commit);
    expect(git(repo, 'rev-parse', `${r.commit}^`)).toBe(base);
    expect(git(repo, 'show', `${r.commit}:a.txt`)).toBe('the run');
    expect(readFileSync(path.join(repo, 'b.txt'), 'utf8')).toBe('base\n');
    expect(readFileSync(path.join(repo, 'a.txt'), 'utf8')).toBe('the run\n');
    // The person's branch and index are untouched; the scratch worktree is gone.
    expect(git(repo, 'rev-parse', 'main')).toBe(main);
    expect(git(repo, 'diff', '--cached', '--name-only')).toBe('');
    expect(existsSync(path.join(repo, '.vigil/worktrees/r1/pr-update'))).toBe(false);
    expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(1);
    // Retried (a lost worker): already on the base, the same commit, nothing new.
    const again = await updatePrBranch({ repoPath: repo, runId: 'r1', branch, mode: 'rebase' });
    expect(again).toMatchObject({ result: 'current', commit: r.commit, tree: r.tree });
  });

  it('the same rebase makes the same commit (fixed dates), so a retry from scratch finds it', async () => {
    const { repo, remote, branch, tip } = await delivered();
    moveBase(remote, 'b.txt', 'base\n');
    const first = await updatePrBranch({ repoPath: repo, runId: 'r1', branch, mode: 'rebase' });
    // As if the first attempt died before its ref moved: the branch back where it was.
    git(repo, 'update-ref', `refs/heads/${branch}`, tip);
    const second = await updatePrBranch({ repoPath: repo, runId: 'r1', branch, mode: 'rebase' });
    expect(second).toMatchObject({ result: 'updated', commit: first.commit });
  });

  it('merge: the base merged into the branch, a merge commit on top of the old tip', async () => {
    const { repo, remote, branch, tip } = await delivered();
    const base = moveBase(remote, 'b.txt', 'base\n');
    const r = await updatePrBranch({ repoPath: repo, runId: 'r1', branch, mode: 'merge' });
    expect(r.result).toBe('updated');
    expect(git(repo, 'rev-parse', `${r.commit}^1`)).toBe(tip);
    expect(git(repo, 'rev-parse', `${r.commit}^2`)).toBe(base);
    expect(readFileSync(path.join(repo, 'b.txt'), 'utf8')).toBe('base\n');
  });

  it('a branch already on its base is left as it is', async () => {
    const { repo, branch, tip } = await delivered();
    const r = await updatePrBranch({ repoPath: repo, runId: 'r1', branch, mode: 'rebase' });
    expect(r).toMatchObject({ result: 'current', commit: tip });
  });

  it('a conflict is aborted: its files named, the branch, the working tree and the worktrees as they were', async () => {
    const { repo, remote, branch, tip } = await delivered();
    moveBase(remote, 'a.txt', 'the base wrote this\n');
    for (const mode of ['rebase', 'merge'] as const) {
      const r = await updatePrBranch({ repoPath: repo, runId: 'r1', branch, mode });
      expect(r).toMatchObject({ result: 'conflict', files: ['a.txt'], commit: tip });
      expect(r.note).toContain('conflicts in a.txt');
      expect(git(repo, 'rev-parse', branch)).toBe(tip);
      expect(readFileSync(path.join(repo, 'a.txt'), 'utf8')).toBe('the run\n');
      expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(1);
    }
  });

  it('without a remote it says why, and moves nothing', async () => {
    const { repo, branch, tip } = await delivered();
    git(repo, 'remote', 'remove', 'origin');
    const r = await updatePrBranch({ repoPath: repo, runId: 'r1', branch, mode: 'rebase' });
    expect(r).toMatchObject({ result: 'failed', note: 'the repository has no remote: the base cannot be fetched' });
    expect(git(repo, 'rev-parse', branch)).toBe(tip);
  });

  it('the base the run kept is the one moved onto, whatever branch the person is on now', async () => {
    const { repo, remote, branch } = await delivered();
    const base = moveBase(remote, 'b.txt', 'base\n');
    // The person has since moved to a branch of their own (the base the run would otherwise guess).
    git(repo, 'checkout', '-q', '-b', 'elsewhere');
    const r = await updatePrBranch({ repoPath: repo, runId: 'r1', branch, mode: 'rebase', base: 'main' });
    expect(r).toMatchObject({ result: 'updated', base: 'main' });
    expect(git(repo, 'rev-parse', `${branch}^`)).toBe(base);
    // The control: without the kept base the person's branch is taken for it, and there is nothing to move onto.
    const guessed = await updatePrBranch({ repoPath: repo, runId: 'r1', branch, mode: 'rebase' });
    expect(guessed).toMatchObject({ result: 'failed', base: 'elsewhere' });
  });

  it("a detached HEAD and no remote HEAD known here: the base is the remote's default branch, as the remote says", async () => {
    const { repo, remote, branch } = await delivered();
    git(remote, 'symbolic-ref', 'HEAD', 'refs/heads/main');
    const base = moveBase(remote, 'b.txt', 'base\n');
    git(repo, 'checkout', '-q', '--detach');
    const r = await updatePrBranch({ repoPath: repo, runId: 'r1', branch, mode: 'rebase' });
    expect(r).toMatchObject({ result: 'updated', base: 'main' });
    expect(git(repo, 'rev-parse', `${branch}^`)).toBe(base);
  });
});
