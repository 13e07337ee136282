/**
 * Tests of activities/repo.ts against real git repositories in temporary directories: the working
 * tree hash (what it covers, what it ignores, that it never touches the user's index), the diff
 * summary of inspectRepo and the checks and side effects of prepareRun, and the git helper process
 * they run git in (one process, reused, restarted when it dies).
 */
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterEach, describe, expect, it } from 'vitest';
import { changedPaths, git as gitCommand, workingTreeHash } from '../../activities/git.js';
import { inspectRepo, inspectRepoChanges, prepareRun } from '../../activities/repo.js';
import { configureGitHelper, gitHelper, runGit } from '../../activities/git-helper.js';

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Vigil Test',
  GIT_AUTHOR_EMAIL: 'test@vigil.invalid',
  GIT_COMMITTER_NAME: 'Vigil Test',
  GIT_COMMITTER_EMAIL: 'test@vigil.invalid',
  GIT_TERMINAL_PROMPT: '0',
};

const dirs: string[] = [];

function tempDir(prefix = 'vigil-repo-test-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'commit.gpgsign=false', '-c', 'core.autocrlf=false', ...args], {
    cwd,
    env: GIT_ENV,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

function write(repo: string, rel: string, content: string | Buffer): void {
  const file = path.join(repo, rel);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
}

function newRepo(): string {
  const repo = tempDir();
  git(repo, 'init', '-q', '-b', 'main');
  return repo;
}

/** A repository with one commit: a.txt (3 lines), b.txt (2 lines), .gitignore ignoring *.log. */
function committedRepo(): { repo: string; sha: string } {
  const repo = newRepo();
  write(repo, 'a.txt', 'one\ntwo\nthree\n');
  write(repo, 'b.txt', 'bee\nbuzz\n');
  write(repo, '.gitignore', '*.log\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial');
  return { repo, sha: git(repo, 'rev-parse', 'HEAD') };
}

/** Tree id of the working tree computed independently, from a fresh index (no stat cache). */
function referenceTreeHash(repo: string): string {
  const tmp = tempDir('vigil-ref-index-');
  const env = { ...GIT_ENV, GIT_INDEX_FILE: path.join(tmp, 'index') };
  execFileSync('git', ['add', '-A'], { cwd: repo, env, stdio: 'ignore' });
  execFileSync('git', ['rm', '-r', '-q', '--cached', '--ignore-unmatch', '--', '.vigil'], { cwd: repo, env, stdio: 'ignore' });
  return execFileSync('git', ['write-tree'], { cwd: repo, env, encoding: 'utf8' }).trim();
}

async function failureOf(p: Promise<unknown>): Promise<ApplicationFailure> {
  try {
    await p;
  } catch (error) {
    expect(error).toBeInstanceOf(ApplicationFailure);
    return error as ApplicationFailure;
  }
  throw new Error('expected a failure');
}

describe('workingTreeHash', () => {
  it('is a 40-hex tree id, stable when nothing changes, and equals the committed tree for a clean checkout', async () => {
    const { repo } = committedRepo();
    const h1 = await workingTreeHash(repo);
    const h2 = await workingTreeHash(repo);
    expect(h1).toMatch(/^[0-9a-f]{40}$/);
    expect(h2).toBe(h1);
    expect(h1).toBe(git(repo, 'rev-parse', 'HEAD^{tree}'));
  });

  it('changes when a tracked file is modified (unstaged)', async () => {
    const { repo } = committedRepo();
    const before = await workingTreeHash(repo);
    appendFileSync(path.join(repo, 'a.txt'), 'four\n');
    const after = await workingTreeHash(repo);
    expect(after).not.toBe(before);
    expect(after).toBe(referenceTreeHash(repo));
  });

  it('includes staged changes, and staging an already-counted change does not change it', async () => {
    const { repo } = committedRepo();
    const before = await workingTreeHash(repo);
    write(repo, 'b.txt', 'bee\nbuzz\nhoney\n');
    const unstaged = await workingTreeHash(repo);
    git(repo, 'add', 'b.txt');
    const staged = await workingTreeHash(repo);
    expect(unstaged).not.toBe(before);
    expect(staged).toBe(unstaged);
    // Staged, then the working copy reverted: the working tree is what counts.
    write(repo, 'b.txt', 'bee\nbuzz\n');
    expect(await workingTreeHash(repo)).toBe(before);
  });

  it('changes when a file is staged that was not there before (staged new file)', async () => {
    const { repo } = committedRepo();
    const before = await workingTreeHash(repo);
    write(repo, 'src/new.ts', 'export const x = 1;\n');
    git(repo, 'add', 'src/new.ts');
    const after = await workingTreeHash(repo);
    expect(after).not.toBe(before);
    expect(after).toBe(referenceTreeHash(repo));
  });

  it('changes on an untracked, not ignored, new file', async () => {
    const { repo } = committedRepo();
    const before = await workingTreeHash(repo);
    write(repo, 'notes/untracked.md', '# hi\n');
    const after = await workingTreeHash(repo);
    expect(after).not.toBe(before);
    expect(git(repo, 'ls-tree', '-r', '--name-only', after)).toContain('notes/untracked.md');
  });

  it('changes when a tracked file is deleted', async () => {
    const { repo } = committedRepo();
    const before = await workingTreeHash(repo);
    unlinkSync(path.join(repo, 'b.txt'));
    const after = await workingTreeHash(repo);
    expect(after).not.toBe(before);
    expect(git(repo, 'ls-tree', '-r', '--name-only', after).split('\n')).not.toContain('b.txt');
  });

  it('ignores gitignored files (.gitignore and .git/info/exclude)', async () => {
    const { repo } = committedRepo();
    const before = await workingTreeHash(repo);
    write(repo, 'debug.log', 'noise\n');
    write(repo, 'deep/dir/other.log', 'noise\n');
    appendFileSync(path.join(repo, '.git/info/exclude'), 'scratch/\n');
    write(repo, 'scratch/tmp.txt', 'scratch\n');
    expect(await workingTreeHash(repo)).toBe(before);
  });

  it('ignores anything under .vigil/, even when it is not excluded by git', async () => {
    const { repo } = committedRepo();
    const before = await workingTreeHash(repo);
    write(repo, '.vigil/runs/r1/iteration-0001.log', 'agent output\n');
    write(repo, '.vigil/signals/COMPLETION_REQUESTED', '');
    expect(await workingTreeHash(repo)).toBe(before);
    write(repo, '.vigil/runs/r1/iteration-0001.log', 'more agent output\n');
    expect(await workingTreeHash(repo)).toBe(before);
    // A file merely named like the directory elsewhere is not excluded.
    write(repo, 'docs/.vigil-notes.md', 'kept\n');
    expect(await workingTreeHash(repo)).not.toBe(before);
  });

  it('ignores .vigil/ even if it was committed to the repository', async () => {
    const { repo } = committedRepo();
    const before = await workingTreeHash(repo);
    write(repo, '.vigil/committed.txt', 'oops\n');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'commit .vigil by mistake');
    expect(await workingTreeHash(repo)).toBe(before);
  });

  it('is unchanged by committing the same content', async () => {
    const { repo } = committedRepo();
    write(repo, 'a.txt', 'one\n2\nthree\n');
    write(repo, 'c.txt', 'new\n');
    const dirty = await workingTreeHash(repo);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'work');
    const committed = await workingTreeHash(repo);
    expect(committed).toBe(dirty);
    expect(committed).toBe(git(repo, 'rev-parse', 'HEAD^{tree}'));
  });

  it('returns to the original hash when a change is reverted (A -> B -> A)', async () => {
    const { repo } = committedRepo();
    const a1 = await workingTreeHash(repo);
    write(repo, 'a.txt', 'one\ntwo\nthree\nfour\n');
    write(repo, 'extra.txt', 'extra\n');
    const b = await workingTreeHash(repo);
    write(repo, 'a.txt', 'one\ntwo\nthree\n');
    rmSync(path.join(repo, 'extra.txt'));
    const a2 = await workingTreeHash(repo);
    expect(b).not.toBe(a1);
    expect(a2).toBe(a1);
  });

  it('tracks executable-bit changes', async () => {
    const { repo } = committedRepo();
    const before = await workingTreeHash(repo);
    execFileSync('chmod', ['+x', path.join(repo, 'a.txt')]);
    expect(await workingTreeHash(repo)).not.toBe(before);
  });

  it('works in a repository without commits, and in an empty one', async () => {
    const repo = newRepo();
    const empty = await workingTreeHash(repo);
    expect(empty).toBe('4b825dc642cb6eb9a060e54bf8d69288fbee4904'); // git's empty tree
    write(repo, 'first.txt', 'hello\n');
    const one = await workingTreeHash(repo);
    expect(one).not.toBe(empty);
    expect(one).toBe(referenceTreeHash(repo));
    expect(existsSync(path.join(repo, '.git/index'))).toBe(false);
  });

  it('never modifies the real index', async () => {
    const { repo } = committedRepo();
    write(repo, 'staged.txt', 'staged\n');
    git(repo, 'add', 'staged.txt');
    appendFileSync(path.join(repo, 'a.txt'), 'unstaged\n');
    write(repo, 'untracked.txt', 'untracked\n');
    write(repo, '.vigil/x.txt', 'x\n');
    const indexFile = path.join(repo, '.git/index');
    const cachedBefore = git(repo, 'diff', '--cached', '--name-only');
    const bytesBefore = readFileSync(indexFile);
    await workingTreeHash(repo);
    await inspectRepo({ repoPath: repo, runStartSha: null });
    expect(readFileSync(indexFile).equals(bytesBefore)).toBe(true);
    expect(git(repo, 'diff', '--cached', '--name-only')).toBe(cachedBefore);
    expect(cachedBefore).toBe('staged.txt');
    expect(git(repo, 'status', '--porcelain', '--untracked-files=all', '--', 'untracked.txt')).toBe('?? untracked.txt');
  });

  it('handles file names with spaces and unicode', async () => {
    const { repo } = committedRepo();
    const before = await workingTreeHash(repo);
    write(repo, 'dir with space/file name.txt', 'spaced\n');
    write(repo, 'ünïcødé – 文件.md', 'unicode\n');
    const after = await workingTreeHash(repo);
    expect(after).not.toBe(before);
    expect(after).toBe(referenceTreeHash(repo));
  });

  it('throws for a directory that is not a git repository', async () => {
    await expect(workingTreeHash(tempDir())).rejects.toThrow();
  });
});

describe('inspectRepo', () => {
  it('reports no changes right after the start', async () => {
    const { repo, sha } = committedRepo();
    const snap = await inspectRepo({ repoPath: repo, runStartSha: sha });
    expect(snap).toEqual({
      treeHash: git(repo, 'rev-parse', 'HEAD^{tree}'),
      head: sha,
      changedFiles: [],
      changedCount: 0,
      insertions: 0,
      deletions: 0,
      sinceLast: null,
      checkpoint: null,
    });
  });

  it('measures what one iteration changed against the previous tree, and spots dependency manifests', async () => {
    const { repo, sha } = committedRepo();
    const before = await workingTreeHash(repo);
    write(repo, 'a.txt', 'one\ntwo\nTHREE\nfour\n'); // 1 deletion, 2 insertions
    write(repo, 'package.json', '{"name":"x"}\n');
    const snap = await inspectRepo({ repoPath: repo, runStartSha: sha, previousTree: before });
    expect(snap.sinceLast).toEqual({ files: 2, lines: 4, manifestChanged: true, paths: ['a.txt', 'package.json'] });
    // A tree that no longer exists (pruned) is no reason to fail: nothing is measured.
    // A change to the core says so, for the tier ladder's structural triggers (rules/structural-change.ts).
    const mid = await workingTreeHash(repo);
    write(repo, 'src/core/engine.ts', 'export const engine = 1;\n');
    const core = await inspectRepo({ repoPath: repo, runStartSha: sha, previousTree: mid });
    expect(core.sinceLast?.structural).toEqual({ corePaths: ['src/core/engine.ts'], contracts: [], services: [] });
    const gone = await inspectRepo({ repoPath: repo, runStartSha: sha, previousTree: '0'.repeat(40) });
    expect(gone.sinceLast).toBeNull();
  });

  it('seed row sensitive-file: names the changed files that hold secrets among all of them, not only the 50 it lists', async () => {
    const { repo, sha } = committedRepo();
    const before = await workingTreeHash(repo);
    // An agent hiding a key behind 60 ordinary files (sorted after them), with a sample .env beside it.
    for (let i = 0; i < 60; i++) write(repo, `a/m${String(i).padStart(2, '0')}.ts`, `export const m = ${i};\n`);
    write(repo, 'z/deploy/prod.key', 'k\n');
    write(repo, 'z/.env.example', 'X=\n');
    const snap = await inspectRepo({ repoPath: repo, runStartSha: sha, previousTree: before });
    expect(snap.sinceLast?.paths).toHaveLength(50);
    expect(snap.sinceLast?.paths).not.toContain('z/deploy/prod.key');
    expect(snap.sinceLast?.sensitive).toEqual(['z/deploy/prod.key']);
    // The honest control: ordinary files only, no field at all.
    const mid = await workingTreeHash(repo);
    write(repo, 'src/environment.ts', 'export const env = 1;\n');
    expect((await inspectRepo({ repoPath: repo, runStartSha: sha, previousTree: mid })).sinceLast).not.toHaveProperty('sensitive');
  });

  it('counts files, insertions and deletions vs the run start, including untracked files', async () => {
    const { repo, sha } = committedRepo();
    write(repo, 'a.txt', 'one\nTWO\nthree\nfour\n'); // 1 line changed, 1 added: +2 -1
    write(repo, 'new.txt', 'n1\nn2\nn3\n'); // untracked: +3
    write(repo, 'staged.txt', 's1\n'); // staged: +1
    git(repo, 'add', 'staged.txt');
    const snap = await inspectRepo({ repoPath: repo, runStartSha: sha });
    expect([...snap.changedFiles].sort()).toEqual(['a.txt', 'new.txt', 'staged.txt']);
    expect(snap.changedCount).toBe(3);
    expect(snap.insertions).toBe(6);
    expect(snap.deletions).toBe(1);
    expect(snap.head).toBe(sha);
    expect(snap.treeHash).toBe(await workingTreeHash(repo));
  });

  it('counts committed work since the start and reports the new head', async () => {
    const { repo, sha } = committedRepo();
    write(repo, 'b.txt', 'bee\n'); // -1
    git(repo, 'commit', '-q', '-am', 'shrink b');
    const head = git(repo, 'rev-parse', 'HEAD');
    const snap = await inspectRepo({ repoPath: repo, runStartSha: sha });
    expect(head).not.toBe(sha);
    expect(snap.head).toBe(head);
    expect(snap.changedFiles).toEqual(['b.txt']);
    expect(snap.insertions).toBe(0);
    expect(snap.deletions).toBe(1);
  });

  it('ignores .vigil/ and gitignored files', async () => {
    const { repo, sha } = committedRepo();
    write(repo, '.vigil/runs/r/iteration-0001.log', 'lots\nof\nlines\n');
    write(repo, '.vigil/signals/COMPLETION_REQUESTED', '');
    write(repo, 'build.log', 'ignored\n');
    const snap = await inspectRepo({ repoPath: repo, runStartSha: sha });
    expect(snap.changedFiles).toEqual([]);
    expect(snap.changedCount).toBe(0);
    expect(snap.insertions + snap.deletions).toBe(0);
  });

  it('handles a deleted file', async () => {
    const { repo, sha } = committedRepo();
    unlinkSync(path.join(repo, 'a.txt'));
    const snap = await inspectRepo({ repoPath: repo, runStartSha: sha });
    expect(snap.changedFiles).toEqual(['a.txt']);
    expect(snap.insertions).toBe(0);
    expect(snap.deletions).toBe(3);
  });

  it('handles a binary file (listed, no line counts)', async () => {
    const { repo, sha } = committedRepo();
    write(repo, 'image.bin', Buffer.from([0, 1, 2, 3, 0, 255, 254, 0, 10, 0]));
    write(repo, 'b.txt', 'bee\nbuzz\nmore\n'); // +1
    const snap = await inspectRepo({ repoPath: repo, runStartSha: sha });
    expect([...snap.changedFiles].sort()).toEqual(['b.txt', 'image.bin']);
    expect(snap.changedCount).toBe(2);
    expect(snap.insertions).toBe(1);
    expect(snap.deletions).toBe(0);
  });

  it('diffs against the empty tree when the run-start sha is null', async () => {
    const repo = newRepo();
    write(repo, 'x.txt', '1\n2\n');
    write(repo, 'y/z.txt', '3\n');
    write(repo, '.vigil/runs/r/p.md', 'prompt\n');
    const snap = await inspectRepo({ repoPath: repo, runStartSha: null });
    expect(snap.head).toBeNull();
    expect([...snap.changedFiles].sort()).toEqual(['x.txt', 'y/z.txt']);
    expect(snap.changedCount).toBe(2);
    expect(snap.insertions).toBe(3);
    expect(snap.deletions).toBe(0);
  });

  it('uses the empty tree for a null start sha even when the repository has commits', async () => {
    const { repo, sha } = committedRepo();
    const snap = await inspectRepo({ repoPath: repo, runStartSha: null });
    expect(snap.head).toBe(sha);
    expect([...snap.changedFiles].sort()).toEqual(['.gitignore', 'a.txt', 'b.txt']);
    expect(snap.insertions).toBe(6);
  });

  it('reports names with spaces and unicode verbatim (no quoting)', async () => {
    const { repo, sha } = committedRepo();
    write(repo, 'dir with space/file name.txt', 'x\n');
    write(repo, 'ünïcødé – 文件.md', 'y\n');
    const snap = await inspectRepo({ repoPath: repo, runStartSha: sha });
    expect([...snap.changedFiles].sort()).toEqual(['dir with space/file name.txt', 'ünïcødé – 文件.md'].sort());
    expect(snap.insertions).toBe(2);
  });

  it('lists at most 50 files but counts all of them', async () => {
    const { repo, sha } = committedRepo();
    for (let i = 0; i < 60; i++) write(repo, `many/f${String(i).padStart(2, '0')}.txt`, `${i}\n`);
    const snap = await inspectRepo({ repoPath: repo, runStartSha: sha });
    expect(snap.changedFiles).toHaveLength(50);
    expect(snap.changedCount).toBe(60);
    expect(snap.insertions).toBe(60);
  });

  it('makes the checkpoint of a changed tree in the same round trip, leaving out a parent that is gone, and none of an unchanged tree', async () => {
    const { repo, sha } = committedRepo();
    write(repo, 'a.txt', 'changed\n');
    const ask = (parent: string | null, n: number, prune: string[] = []) => ({
      parent,
      ref: `refs/vigil/r/${n}`,
      message: `vigil checkpoint: run r, iteration ${n}\n`,
      prune,
    });
    const one = await inspectRepo({
      repoPath: repo,
      runStartSha: sha,
      previousTree: git(repo, 'rev-parse', 'HEAD^{tree}'),
      checkpoint: ask(null, 1),
    });
    expect(one.checkpoint).toEqual({ commit: git(repo, 'rev-parse', 'refs/vigil/r/1'), ref: 'refs/vigil/r/1' });
    expect(git(repo, 'rev-parse', 'refs/vigil/r/1^{tree}')).toBe(one.treeHash);
    expect(git(repo, 'log', '-1', '--format=%an <%ae>|%P', 'refs/vigil/r/1')).toBe('Vigil <vigil@vigil.invalid>|');

    // Unchanged since the previous tree: no checkpoint.
    const same = await inspectRepo({
      repoPath: repo,
      runStartSha: sha,
      previousTree: one.treeHash,
      checkpoint: ask(one.checkpoint?.commit ?? null, 2),
    });
    expect(same.checkpoint).toBeNull();
    expect(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/vigil/')).toBe('refs/vigil/r/1');

    // The previous checkpoint as parent, the retention bound's ref pruned in the same transaction.
    write(repo, 'b.txt', 'changed\n');
    const two = await inspectRepo({
      repoPath: repo,
      runStartSha: sha,
      previousTree: one.treeHash,
      checkpoint: ask(one.checkpoint?.commit ?? null, 2, ['refs/vigil/r/1']),
    });
    expect(git(repo, 'rev-parse', `${two.checkpoint?.commit}^`)).toBe(one.checkpoint?.commit);
    expect(git(repo, 'for-each-ref', '--format=%(refname)', 'refs/vigil/')).toBe('refs/vigil/r/2');

    // A parent that no longer exists (a rewound history, collected): a root commit instead.
    write(repo, 'c.txt', 'new\n');
    const three = await inspectRepo({
      repoPath: repo,
      runStartSha: sha,
      previousTree: two.treeHash,
      checkpoint: ask('0123456789abcdef0123456789abcdef01234567', 3),
    });
    expect(git(repo, 'log', '-1', '--format=%P', three.checkpoint?.commit ?? '')).toBe('');
    expect(git(repo, 'rev-parse', 'refs/vigil/r/3^{tree}')).toBe(three.treeHash);
  });

  it('lists every path changed since the previous tree as a diff of the two trees does (what the gate pass reuses)', async () => {
    const { repo, sha } = committedRepo();
    const before = await workingTreeHash(repo);
    write(repo, 'a.txt', 'one\n');
    unlinkSync(path.join(repo, 'b.txt'));
    write(repo, 'bin.dat', Buffer.from([0, 1, 2, 0, 255]));
    write(repo, 'dir with space/ünï.txt', 'x\n');
    for (let i = 0; i < 60; i++) write(repo, `many/f${i}.txt`, `${i}\n`);
    write(repo, 'ignored.log', 'no\n');
    const { snapshot, sinceLastPaths } = await inspectRepoChanges({ repoPath: repo, runStartSha: sha, previousTree: before });
    expect(sinceLastPaths).toHaveLength(64);
    expect([...(sinceLastPaths ?? [])].sort()).toEqual((await changedPaths(repo, before, snapshot.treeHash)).sort());
    expect((await inspectRepoChanges({ repoPath: repo, runStartSha: sha })).sinceLastPaths).toBeNull();
  });

  it('answers for a directory that stopped being a repository after an inspection, and for a new repository in its place', async () => {
    const { repo, sha } = committedRepo();
    expect((await inspectRepo({ repoPath: repo, runStartSha: sha })).treeHash).toBe(git(repo, 'rev-parse', 'HEAD^{tree}'));
    rmSync(path.join(repo, '.git'), { recursive: true, force: true });
    expect((await failureOf(inspectRepo({ repoPath: repo, runStartSha: null }))).type).toBe('NotAGitRepository');
    git(repo, 'init', '-q', '-b', 'main');
    write(repo, 'a.txt', 'again\n');
    expect((await inspectRepo({ repoPath: repo, runStartSha: null })).treeHash).toBe(referenceTreeHash(repo));
  });

  it('rejects a directory that is not a git repository with NotAGitRepository', async () => {
    const failure = await failureOf(inspectRepo({ repoPath: tempDir(), runStartSha: null }));
    expect(failure.type).toBe('NotAGitRepository');
    expect(failure.nonRetryable).toBe(true);
  });
});

describe('prepareRun', () => {
  it('returns HEAD, the tree hash and the artifact directory', async () => {
    const { repo, sha } = committedRepo();
    write(repo, 'dirty.txt', 'dirty\n');
    const result = await prepareRun({ repoPath: repo, runId: 'run-1' });
    expect(result.sha).toBe(sha);
    expect(result.treeHash).toBe(await workingTreeHash(repo));
    expect(result.treeHash).not.toBe(git(repo, 'rev-parse', 'HEAD^{tree}'));
    expect(result.artifactDir).toBe(path.join(repo, '.vigil', 'runs', 'run-1'));
    expect(existsSync(result.artifactDir)).toBe(true);
  });

  it('returns a null sha for a repository without commits', async () => {
    const repo = newRepo();
    write(repo, 'a.txt', 'a\n');
    const result = await prepareRun({ repoPath: repo, runId: 'r' });
    expect(result.sha).toBeNull();
    expect(result.treeHash).toBe(referenceTreeHash(repo));
  });

  it('keeps .vigil/ out of git status via info/exclude, written once after two calls', async () => {
    const { repo } = committedRepo();
    const exclude = path.join(repo, '.git/info/exclude');
    await prepareRun({ repoPath: repo, runId: 'r1' });
    const once = readFileSync(exclude, 'utf8');
    await prepareRun({ repoPath: repo, runId: 'r2' });
    const twice = readFileSync(exclude, 'utf8');
    expect(twice).toBe(once);
    expect(twice.split('\n').filter((l) => l.trim() === '/.vigil/')).toHaveLength(1);
    write(repo, '.vigil/runs/r1/log.txt', 'x\n');
    expect(git(repo, 'status', '--porcelain', '--untracked-files=all')).toBe('');
  });

  it("keeps aider's repository map out of the tree too, added to an exclude file written before it existed", async () => {
    const { repo } = committedRepo();
    const exclude = path.join(repo, '.git/info/exclude');
    writeFileSync(exclude, '# Vigil run artifacts\n/.vigil/\n');
    await prepareRun({ repoPath: repo, runId: 'r1' });
    await prepareRun({ repoPath: repo, runId: 'r2' });
    const lines = readFileSync(exclude, 'utf8').split('\n');
    expect(lines.filter((l) => l === '/.vigil/')).toHaveLength(1);
    expect(lines.filter((l) => l === '/.aider.tags.cache.v*/')).toHaveLength(1);
    write(repo, '.aider.tags.cache.v4/cache.db', 'x\n');
    expect(git(repo, 'status', '--porcelain', '--untracked-files=all')).toBe('');
  });

  it('appends to an existing exclude file without a trailing newline, and creates a missing one', async () => {
    const { repo } = committedRepo();
    const exclude = path.join(repo, '.git/info/exclude');
    writeFileSync(exclude, 'mine.tmp');
    await prepareRun({ repoPath: repo, runId: 'r' });
    const lines = readFileSync(exclude, 'utf8').split('\n');
    expect(lines[0]).toBe('mine.tmp');
    expect(lines).toContain('/.vigil/');

    const { repo: repo2 } = committedRepo();
    rmSync(path.join(repo2, '.git/info'), { recursive: true, force: true });
    await prepareRun({ repoPath: repo2, runId: 'r' });
    expect(readFileSync(path.join(repo2, '.git/info/exclude'), 'utf8')).toContain('/.vigil/\n');
  });

  it('does not touch the real index', async () => {
    const { repo } = committedRepo();
    write(repo, 'staged.txt', 'staged\n');
    git(repo, 'add', 'staged.txt');
    write(repo, 'untracked.txt', 'u\n');
    const indexFile = path.join(repo, '.git/index');
    const before = readFileSync(indexFile);
    await prepareRun({ repoPath: repo, runId: 'r' });
    expect(readFileSync(indexFile).equals(before)).toBe(true);
    expect(git(repo, 'diff', '--cached', '--name-only')).toBe('staged.txt');
  });

  it('throws a non-retryable NotAGitRepository for a directory that is not a repository', async () => {
    const dir = tempDir();
    const failure = await failureOf(prepareRun({ repoPath: dir, runId: 'r' }));
    expect(failure.type).toBe('NotAGitRepository');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain(dir);
    expect(existsSync(path.join(dir, '.vigil'))).toBe(false);
  });

  it('throws a non-retryable NotAGitRepository for a missing directory', async () => {
    const missing = path.join(tempDir(), 'does', 'not', 'exist');
    const failure = await failureOf(prepareRun({ repoPath: missing, runId: 'r' }));
    expect(failure.type).toBe('NotAGitRepository');
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain(missing);
    expect(existsSync(missing)).toBe(false);
  });
});

describe('workingTreeHash and racily clean index entries', () => {
  it('sees a same-size edit made in the same second the file was staged', async () => {
    const repo = newRepo();
    write(repo, 'f.txt', 'aaaa\n');
    git(repo, 'add', 'f.txt');
    write(repo, 'f.txt', 'bbbb\n'); // same size, same second: the index entry looks clean
    await new Promise((r) => setTimeout(r, 1100));
    expect(await workingTreeHash(repo)).toBe(referenceTreeHash(repo));
  });
});

describe('the git helper', () => {
  it('runs every git command of an inspection in one long-lived process, reused across calls', async () => {
    const { repo, sha } = committedRepo();
    await inspectRepo({ repoPath: repo, runStartSha: sha });
    const pid = gitHelper.pid;
    const started = gitHelper.started;
    expect(pid).not.toBeNull();
    expect(pid).not.toBe(process.pid);
    write(repo, 'c.txt', 'sea\n');
    const snap = await inspectRepo({ repoPath: repo, runStartSha: sha });
    await workingTreeHash(repo);
    expect(snap.changedFiles).toEqual(['c.txt']);
    expect(snap.treeHash).toBe(referenceTreeHash(repo));
    expect(gitHelper.pid).toBe(pid);
    expect(gitHelper.started).toBe(started);
  });

  it('runs at the niceness it was given, and so do the git commands it starts', async () => {
    const { repo } = committedRepo();
    const niceOf = (stat: string): number => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    try {
      gitHelper.stop();
      configureGitHelper({ niceness: 3 });
      await workingTreeHash(repo);
      expect(niceOf(readFileSync(`/proc/${gitHelper.pid}/stat`, 'utf8'))).toBe(3);
      // The running helper takes a new niceness at once.
      configureGitHelper({ niceness: 7 });
      expect(niceOf(readFileSync(`/proc/${gitHelper.pid}/stat`, 'utf8'))).toBe(7);
      // A git alias run by a shell: the process it starts reads its own niceness.
      const r = await runGit(repo, ['-c', 'alias.nice=!cat /proc/self/stat', 'nice']);
      expect(r.exitCode).toBe(0);
      expect(niceOf(r.stdout)).toBe(7);
    } finally {
      configureGitHelper({ niceness: 0 });
      gitHelper.stop();
    }
    await workingTreeHash(repo);
    expect(niceOf(readFileSync(`/proc/${gitHelper.pid}/stat`, 'utf8'))).toBe(niceOf(readFileSync('/proc/self/stat', 'utf8')));
    expect(() => configureGitHelper({ niceness: 20 })).toThrow(/from 0 to 19, got 20/);
  });

  it("never fails a request because an earlier helper's exit is noticed late (a busy machine)", async () => {
    const { repo } = committedRepo();
    const gone = async (pid: number): Promise<void> => {
      while (existsSync(`/proc/${pid}`)) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, 50)); // its exit handled, and what that handler set off
    };
    // Two stopped helpers whose exits are held back (SIGSTOP: their SIGTERM waits), and the
    // helper started after them held too, so that its request is still in flight when each of
    // the two dies in turn: a request sent again after the first exit is then still in flight at
    // the second. Each exit may fail only its own requests.
    const held: number[] = [];
    for (let i = 0; i < 2; i++) {
      await workingTreeHash(repo);
      const pid = gitHelper.pid as number;
      process.kill(pid, 'SIGSTOP');
      held.push(pid);
      gitHelper.stop();
    }
    const started = gitHelper.started;
    const pending = runGit(repo, ['rev-parse', 'HEAD']);
    const next = gitHelper.pid as number;
    process.kill(next, 'SIGSTOP');
    try {
      for (const pid of held) {
        process.kill(pid, 'SIGCONT');
        await gone(pid);
      }
    } finally {
      process.kill(next, 'SIGCONT');
    }
    const r = await pending;
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^[0-9a-f]{40}$/);
    expect(gitHelper.pid).toBe(next);
    expect(gitHelper.started).toBe(started + 1);
    await expect(workingTreeHash(repo)).resolves.toBe(referenceTreeHash(repo));
  });

  it('answers concurrent requests, each with its own answer', async () => {
    const a = committedRepo();
    const b = committedRepo();
    write(b.repo, 'only-b.txt', 'b\n');
    const [ha, hb, sa, sb] = await Promise.all([
      workingTreeHash(a.repo),
      workingTreeHash(b.repo),
      inspectRepo({ repoPath: a.repo, runStartSha: a.sha }),
      inspectRepo({ repoPath: b.repo, runStartSha: b.sha }),
    ]);
    expect(ha).toBe(referenceTreeHash(a.repo));
    expect(hb).toBe(referenceTreeHash(b.repo));
    expect(sa.changedCount).toBe(0);
    expect(sb.changedFiles).toEqual(['only-b.txt']);
  });

  it('hashes an unchanged tree again without losing its object, and a tree changed while a hash runs afresh', async () => {
    const { repo } = committedRepo();
    write(repo, 'scratch.txt', 'one\n');
    const first = await workingTreeHash(repo);
    expect(first).toBe(referenceTreeHash(repo));
    // The tree made of an untracked file is referenced by nothing: a collection removes it.
    const loose = path.join(repo, '.git', 'objects', first.slice(0, 2), first.slice(2));
    expect(existsSync(loose)).toBe(true);
    unlinkSync(loose);
    expect(await workingTreeHash(repo)).toBe(first);
    expect(git(repo, 'cat-file', '-t', first)).toBe('tree');
    // Requests that come while a hash runs get one begun after them: they see the change.
    const before = workingTreeHash(repo);
    write(repo, 'scratch.txt', 'two\n');
    const [, after, again] = await Promise.all([before, workingTreeHash(repo), workingTreeHash(repo)]);
    expect(after).toBe(referenceTreeHash(repo));
    expect(again).toBe(after);
    expect(after).not.toBe(first);
    // A same-size edit in the same second is seen, though the index bytes before it were the same.
    write(repo, 'scratch.txt', 'six\n');
    expect(await workingTreeHash(repo)).toBe(referenceTreeHash(repo));
  });

  it('keeps its scratch indexes in one folder of its own, removed when it stops, and removes the folder of a helper that was killed', async () => {
    const { repo } = committedRepo();
    await workingTreeHash(repo);
    const pid = gitHelper.pid as number;
    const mine = (p: number): string[] => readdirSync(os.tmpdir()).filter((n) => n.startsWith(`vigil-git-helper-${p}-`));
    expect(mine(pid)).toHaveLength(1);
    // Pids above the kernel's limit are never running: one folder untouched for 11 minutes, one just used.
    const orphan = path.join(os.tmpdir(), 'vigil-git-helper-4194305-left');
    const recent = path.join(os.tmpdir(), 'vigil-git-helper-4194306-busy');
    for (const dir of [orphan, recent]) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'index-1'), 'stale');
    }
    const old = new Date(Date.now() - 11 * 60_000);
    utimesSync(orphan, old, old);
    try {
      process.kill(pid, 'SIGTERM');
      for (let i = 0; i < 50 && gitHelper.pid === pid; i++) await new Promise((r) => setTimeout(r, 20));
      expect(mine(pid)).toEqual([]);
      await workingTreeHash(repo);
      const next = gitHelper.pid as number;
      expect(next).not.toBe(pid);
      expect(mine(next)).toHaveLength(1);
      expect(existsSync(orphan)).toBe(false);
      // A folder used within the last ten minutes may be a live helper's of another pid namespace.
      expect(existsSync(recent)).toBe(true);
      // Its own folder removed under it (a cleaner of old temporary files): made again.
      rmSync(path.join(os.tmpdir(), mine(next)[0] as string), { recursive: true, force: true });
      write(repo, 'after-clean.txt', 'x\n');
      expect(await workingTreeHash(repo)).toBe(referenceTreeHash(repo));
      expect(mine(next)).toHaveLength(1);
    } finally {
      rmSync(recent, { recursive: true, force: true });
    }
  });

  it('is restarted after it was killed, and the next inspection answers as before', async () => {
    const { repo, sha } = committedRepo();
    const first = await inspectRepo({ repoPath: repo, runStartSha: sha });
    const pid = gitHelper.pid as number;
    const started = gitHelper.started;
    process.kill(pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    expect(gitHelper.pid).toBeNull();
    const again = await inspectRepo({ repoPath: repo, runStartSha: sha });
    expect(again).toEqual(first);
    expect(gitHelper.pid).not.toBeNull();
    expect(gitHelper.pid).not.toBe(pid);
    expect(gitHelper.started).toBe(started + 1);
  });

  it('sends a request lost with a killed helper again to the new one', async () => {
    const { repo, sha } = committedRepo();
    await inspectRepo({ repoPath: repo, runStartSha: sha });
    const pid = gitHelper.pid as number;
    const pending = inspectRepo({ repoPath: repo, runStartSha: sha });
    process.kill(pid, 'SIGKILL');
    const snap = await pending;
    expect(snap.treeHash).toBe(referenceTreeHash(repo));
    expect(gitHelper.pid).not.toBe(pid);
  });

  it("outlives a git that exits before reading its input (EPIPE): the failure is git's, the helper keeps running", async () => {
    const { repo } = committedRepo();
    const pid = (await workingTreeHash(repo), gitHelper.pid);
    const started = gitHelper.started;
    // More than a pipe holds, to a commit-tree that fails on its missing parent before reading any.
    const r = await runGit(
      repo,
      ['commit-tree', '-p', '0123456789abcdef0123456789abcdef01234567', git(repo, 'rev-parse', 'HEAD^{tree}')],
      undefined,
      'x'.repeat(1 << 20),
    );
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toMatch(/0123456789abcdef/);
    expect(gitHelper.pid).toBe(pid);
    expect(gitHelper.started).toBe(started);
    expect(await workingTreeHash(repo)).toBe(referenceTreeHash(repo));
  });

  it('reports a git failure with the command and its message, and keeps running', async () => {
    const { repo } = committedRepo();
    const pid = (await workingTreeHash(repo), gitHelper.pid);
    await expect(gitCommand(repo, ['cat-file', '-p', 'no-such-object'])).rejects.toThrow(
      /git cat-file -p no-such-object failed in .* \(exit 128\)/,
    );
    expect(gitHelper.pid).toBe(pid);
  });
});
