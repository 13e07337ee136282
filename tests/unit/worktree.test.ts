/**
 * The git of parallel streams against real repositories: the streams' base commit (the run-start
 * tree, uncommitted changes included), a task's worktree (idempotent, removed cleanly), merging a
 * stream's branch into the integration line with merge-tree (clean, conflicting with both sides
 * written out, a retry finding its own merge, an empty stream), and the merged tree written into
 * the working tree with the person's branch and index untouched; a stream's worktree deleted
 * mid-run made again from its last checkpoint, and never anything but Vigil's own worktree.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverRun } from '../../activities/deliver.js';
import {
  addWorktree,
  applyStreams,
  integrationRef,
  mergeStream,
  recreateWorktree,
  removeWorktree,
  streamBase,
  worktreePath,
} from '../../activities/worktree.js';

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

function repo(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vigil-worktree-'));
  dirs.push(dir);
  git(dir, 'init', '-q', '-b', 'main');
  writeFileSync(path.join(dir, 'README.md'), '# sample\n');
  writeFileSync(path.join(dir, 'shared.txt'), 'line one\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}

/** A stream's work: its worktree changed, then delivered on its run branch as a done stream does. */
async function streamWork(dir: string, run: string, task: string, base: string, files: Record<string, string>): Promise<string> {
  const wt = await addWorktree({ repoPath: dir, runId: run, task, base });
  for (const [f, c] of Object.entries(files)) writeFileSync(path.join(wt.path, f), c);
  const d = await deliverRun({ repoPath: wt.path, runId: `${run}--${task}`, message: `task ${task}\n` });
  return d.commit ?? '';
}

describe('streams in worktrees', () => {
  it('starts from the run-start tree, gives each task an idempotent worktree, merges clean streams, writes the result into the working tree only', async () => {
    const dir = repo();
    const head = git(dir, 'rev-parse', 'HEAD');
    writeFileSync(path.join(dir, 'wip.txt'), 'the person’s uncommitted work\n');
    // The run-start tree as Vigil hashes it: README, shared.txt and wip.txt.
    git(dir, 'add', '-A');
    const startTree = git(dir, 'write-tree');
    git(dir, 'reset', '-q');
    const base = await streamBase({ repoPath: dir, runId: 'r1', tree: startTree, parent: head });
    expect(await streamBase({ repoPath: dir, runId: 'r1', tree: startTree, parent: head })).toEqual(base);
    expect(git(dir, 'rev-parse', integrationRef('r1'))).toBe(base.commit);
    expect(git(dir, 'rev-parse', `${base.commit}^`)).toBe(head);

    const a = await addWorktree({ repoPath: dir, runId: 'r1', task: 'a', base: base.commit });
    expect(a).toEqual({ path: worktreePath(dir, 'r1', 'a'), created: true });
    expect(await addWorktree({ repoPath: dir, runId: 'r1', task: 'a', base: base.commit })).toEqual({ path: a.path, created: false });
    expect(readFileSync(path.join(a.path, 'wip.txt'), 'utf8')).toBe('the person’s uncommitted work\n');

    const aCommit = await streamWork(dir, 'r1', 'a', base.commit, { 'a.txt': 'A\n' });
    const bCommit = await streamWork(dir, 'r1', 'b', base.commit, { 'b.txt': 'B\n' });
    const m1 = await mergeStream({ repoPath: dir, runId: 'r1', task: 'a', childId: 'r1--a', into: base.commit });
    expect(m1).toMatchObject({ empty: false, conflict: null });
    expect(git(dir, 'rev-parse', `${m1.commit}^1`, `${m1.commit}^2`).split('\n')).toEqual([base.commit, aCommit]);
    // A retry of the same merge finds it on the line.
    expect(await mergeStream({ repoPath: dir, runId: 'r1', task: 'a', childId: 'r1--a', into: base.commit })).toEqual(m1);
    const m2 = await mergeStream({ repoPath: dir, runId: 'r1', task: 'b', childId: 'r1--b', into: m1.commit });
    expect(m2.conflict).toBeNull();
    expect(git(dir, 'rev-parse', `${m2.commit}^2`)).toBe(bCommit);
    expect(git(dir, 'rev-parse', integrationRef('r1'))).toBe(m2.commit);
    // A stream that delivered nothing has nothing to merge.
    expect(await mergeStream({ repoPath: dir, runId: 'r1', task: 'c', childId: 'r1--c', into: m2.commit })).toEqual({
      commit: m2.commit,
      empty: true,
      conflict: null,
    });

    for (const t of ['a', 'b']) expect(await removeWorktree({ repoPath: dir, runId: 'r1', task: t })).toEqual({ removed: true });
    expect(await removeWorktree({ repoPath: dir, runId: 'r1', task: 'a' })).toEqual({ removed: false });
    expect(
      git(dir, 'worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')),
    ).toEqual([`worktree ${dir}`]);

    const statusBefore = git(dir, 'status', '--porcelain');
    expect(await applyStreams({ repoPath: dir, runId: 'r1', commit: m2.commit })).toMatchObject({ files: expect.any(Number) });
    expect(['a.txt', 'b.txt', 'wip.txt'].map((f) => readFileSync(path.join(dir, f), 'utf8'))).toEqual([
      'A\n',
      'B\n',
      'the person’s uncommitted work\n',
    ]);
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(dir, 'diff', '--cached', '--name-only')).toBe('');
    expect(git(dir, 'status', '--porcelain')).toBe([statusBefore, '?? a.txt', '?? b.txt'].filter(Boolean).sort().join('\n'));
  });

  it('a conflicting stream is merged with its markers, both sides written out for the merge iteration', async () => {
    const dir = repo();
    const head = git(dir, 'rev-parse', 'HEAD');
    const base = await streamBase({ repoPath: dir, runId: 'r2', tree: git(dir, 'rev-parse', 'HEAD^{tree}'), parent: head });
    await streamWork(dir, 'r2', 'x', base.commit, { 'shared.txt': 'x was here\n' });
    await streamWork(dir, 'r2', 'y', base.commit, { 'shared.txt': 'y was here\n' });
    const mx = await mergeStream({ repoPath: dir, runId: 'r2', task: 'x', childId: 'r2--x', into: base.commit });
    const my = await mergeStream({ repoPath: dir, runId: 'r2', task: 'y', childId: 'r2--y', into: mx.commit });
    expect(my.conflict?.files).toEqual(['shared.txt']);
    expect(my.conflict?.summary).toBe('merging task y conflicted in shared.txt');
    expect(git(dir, 'show', `${my.commit}:shared.txt`)).toMatch(/^<<<<<<< [0-9a-f]+\nx was here\n=======\ny was here\n>>>>>>> [0-9a-f]+$/);
    const sides = readFileSync(my.conflict?.sidesPath ?? '', 'utf8');
    expect(my.conflict?.sidesPath).toBe(path.join(dir, '.vigil/runs/r2/merge-y.md'));
    expect(sides).toContain('### the run so far (ours)\n\n```\nx was here\n');
    expect(sides).toContain('### task y (theirs)\n\n```\ny was here\n');
    expect(sides).toContain('### where both started (base)\n\n```\nline one\n');
    expect(my.conflict?.excerpt).toBe(sides);
    expect(existsSync(path.join(dir, '.vigil/worktrees/r2/x'))).toBe(true);
  });

  it('a deleted worktree is made again at the stream’s start commit with its last checkpoint’s files; a present one is left alone', async () => {
    const dir = repo();
    const head = git(dir, 'rev-parse', 'HEAD');
    const base = await streamBase({ repoPath: dir, runId: 'r3', tree: git(dir, 'rev-parse', 'HEAD^{tree}'), parent: head });
    const wt = await addWorktree({ repoPath: dir, runId: 'r3', task: 'l', base: base.commit });
    // The stream's first iteration, and its checkpoint as Vigil keeps it (a commit under refs/vigil/).
    writeFileSync(path.join(wt.path, 'l.txt'), 'L\n');
    git(wt.path, 'add', '-A');
    const tree = git(wt.path, 'write-tree');
    git(wt.path, 'reset', '-q');
    const commit = git(wt.path, 'commit-tree', tree, '-m', 'checkpoint 1');
    git(dir, 'update-ref', 'refs/vigil/r3--l/1', commit);
    // Later work no checkpoint holds, then the folder is deleted.
    writeFileSync(path.join(wt.path, 'late.txt'), 'lost\n');
    rmSync(wt.path, { recursive: true, force: true });
    const ask = { worktree: wt.path, runId: 'r3', task: 'l', startSha: base.commit, checkpoint: { iteration: 1, commit, tree } };
    expect(await recreateWorktree(ask)).toEqual({ recreated: true, fromIteration: 1 });
    expect(readFileSync(path.join(wt.path, 'l.txt'), 'utf8')).toBe('L\n');
    expect(existsSync(path.join(wt.path, 'late.txt'))).toBe(false);
    expect(git(wt.path, 'rev-parse', 'HEAD')).toBe(base.commit);
    expect(git(dir, 'worktree', 'list', '--porcelain')).toContain(`worktree ${wt.path}`);
    // Control: a worktree that is there is left as it is (the agent's newer work kept).
    writeFileSync(path.join(wt.path, 'newer.txt'), 'kept\n');
    expect(await recreateWorktree(ask)).toEqual({ recreated: false, fromIteration: null });
    expect(readFileSync(path.join(wt.path, 'newer.txt'), 'utf8')).toBe('kept\n');
    // Without a checkpoint, the start commit's files.
    rmSync(wt.path, { recursive: true, force: true });
    expect(await recreateWorktree({ ...ask, checkpoint: null })).toEqual({ recreated: true, fromIteration: null });
    expect(existsSync(path.join(wt.path, 'l.txt'))).toBe(false);
    expect(readFileSync(path.join(wt.path, 'README.md'), 'utf8')).toBe('# sample\n');
    // The stream goes on there: delivered on its branch, merged like any stream.
    writeFileSync(path.join(wt.path, 'l.txt'), 'L again\n');
    expect((await deliverRun({ repoPath: wt.path, runId: 'r3--l', message: 'task l\n' })).commit).toEqual(expect.any(String));
    const m = await mergeStream({ repoPath: dir, runId: 'r3', task: 'l', childId: 'r3--l', into: base.commit });
    expect(m.conflict).toBeNull();
    expect(git(dir, 'show', `${m.commit}:l.txt`)).toBe('L again');
  });

  it(
    'makes nothing but Vigil’s own worktree of the task: another path is refused and left untouched; a lost repository is the ' +
      'repository’s failure',
    async () => {
      const dir = repo();
      const head = git(dir, 'rev-parse', 'HEAD');
      const ask = { runId: 'r4', task: 'l', startSha: head, checkpoint: null };
      // The person's repository itself, another task's folder, a path that only looks like one.
      for (const worktree of [dir, worktreePath(dir, 'r4', 'other'), `${worktreePath(dir, 'r4', 'l')}/..`]) {
        await expect(recreateWorktree({ ...ask, worktree })).rejects.toThrow(
          /is not Vigil's worktree of task l of run r4: nothing recreated/,
        );
      }
      // A folder inside the repository laid out like one is not a repository of its own.
      mkdirSync(path.join(dir, 'x'));
      writeFileSync(path.join(dir, 'x', 'keep.txt'), 'mine\n');
      await expect(recreateWorktree({ ...ask, worktree: worktreePath(path.join(dir, 'x'), 'r4', 'l') })).rejects.toMatchObject({
        type: 'NotAGitRepository',
      });
      expect(existsSync(path.join(dir, 'x', '.vigil'))).toBe(false);
      rmSync(path.join(dir, 'x'), { recursive: true });
      expect(readFileSync(path.join(dir, 'README.md'), 'utf8')).toBe('# sample\n');
      expect(git(dir, 'status', '--porcelain')).toBe('');
      expect(git(dir, 'worktree', 'list', '--porcelain')).not.toContain('.vigil/worktrees');
      // The run's repository gone: nothing to make the worktree in.
      const gone = repo();
      const wt = worktreePath(gone, 'r4', 'l');
      rmSync(gone, { recursive: true, force: true });
      await expect(recreateWorktree({ ...ask, worktree: wt })).rejects.toMatchObject({ type: 'NotAGitRepository' });
    },
  );
});
