/**
 * Checkpoints in the repository: a commit of an inspected tree under a ref of the run, and the
 * restore of the working tree to one (for a rewind or a fork).
 *
 * Git runs through the worker's git helper (git-helper.ts), never spawned from the worker itself.
 * Nothing here touches the user's branch, HEAD, index or stash: commits are made with
 * `git commit-tree` from trees already in the object store (the inspection's `write-tree`), refs
 * live under `refs/vigil/`, and files are written from a temporary index.
 */
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RewindRepoInputSchema, type RewindRepoInput, type RewindRepoResult } from '../schemas/activities.js';
import { helperCheckpoint, runGit } from './git-helper.js';
import { assertGitRepo, changedPaths, checkpointAsk, git, workingTreeHash } from './git.js';

/** The object a ref points at, or null when there is no such ref. */
export async function refTarget(repoPath: string, ref: string): Promise<string | null> {
  const r = await runGit(repoPath, ['rev-parse', '--verify', '-q', ref]);
  const out = r.stdout.trim();
  return r.exitCode === 0 && out ? out : null;
}

/**
 * Makes `treeHash` a checkpoint: a commit (parent: `parent`, the previous checkpoint, when it
 * still exists) under `ref`, and deletes `prune` (checkpoints past the retention bound) in the same
 * ref transaction. Idempotent: a retry makes an equal commit and points the ref at it again.
 * (An iteration's inspection makes its checkpoint in the same helper round trip: checkpointAsk.)
 */
export async function createCheckpoint(
  repoPath: string,
  treeHash: string,
  parent: string | null,
  ref: string,
  message: string,
  prune: readonly string[] = [],
): Promise<{ commit: string; ref: string }> {
  return { commit: await helperCheckpoint(repoPath, treeHash, checkpointAsk(parent, ref, message, prune)), ref };
}

/**
 * Makes the working tree `toTree` (as `git add -A` sees it; `.vigil/` and ignored files are left
 * alone): files that differ are written from a temporary index, files `toTree` lacks are deleted.
 * Returns how many paths changed. Throws when the result does not hash to `toTree`.
 */
export async function restoreWorkingTree(repoPath: string, toTree: string, fromTree?: string): Promise<number> {
  const current = fromTree ?? (await workingTreeHash(repoPath));
  if (current === toTree) return 0;
  const status = (await git(repoPath, ['diff', '--name-status', '-z', '--no-renames', current, toTree])).split('\0').filter(Boolean);
  const remove: string[] = [];
  const write: string[] = [];
  for (let i = 0; i + 1 < status.length; i += 2) {
    const kind = status[i] as string;
    const file = status[i + 1] as string;
    if (kind === 'D') remove.push(file);
    else write.push(file);
  }
  const root = path.resolve(repoPath);
  for (const rel of remove) {
    const abs = path.resolve(root, rel);
    if (!abs.startsWith(`${root}${path.sep}`)) continue;
    rmSync(abs, { force: true, recursive: true });
    removeEmptyParents(root, path.dirname(abs));
  }
  if (write.length) {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'vigil-restore-'));
    try {
      const env = { GIT_INDEX_FILE: path.join(tmp, 'index') };
      await git(repoPath, ['read-tree', toTree], env);
      // A file where the tree has a folder (or the other way round) is removed first.
      for (const rel of write) {
        const parts = rel.split('/');
        for (let k = 1; k < parts.length; k++) {
          const dir = path.join(root, ...parts.slice(0, k));
          if (existsSync(dir) && !isDir(dir)) rmSync(dir, { force: true });
        }
        const abs = path.join(root, rel);
        if (isDir(abs)) rmSync(abs, { recursive: true, force: true });
      }
      await git(repoPath, ['checkout-index', '-f', '-z', '--stdin'], env, `${write.join('\0')}\0`);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  const after = await workingTreeHash(repoPath);
  if (after !== toTree) throw new Error(`the working tree could not be restored to ${toTree} (it hashes to ${after})`);
  return remove.length + write.length;
}

function isDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

function removeEmptyParents(root: string, dir: string): void {
  let d = dir;
  while (d.startsWith(`${root}${path.sep}`)) {
    try {
      if (readdirSync(d).length > 0) return;
      rmdirSync(d);
    } catch {
      return;
    }
    d = path.dirname(d);
  }
}

/**
 * The repository side of a rewind. Refuses (changing nothing) when the working tree holds changes
 * made since the run's last inspection, unless `force`. Otherwise keeps the tree as it is under
 * `savedRef` (the latest checkpoint itself when the tree is unchanged since, else a new commit on
 * top of it), deletes the checkpoint refs after the target (their commits stay reachable from the
 * saved ref), and restores the working tree to the target. A retry after a partial attempt (the
 * saved ref exists) only finishes the restore.
 */
export async function rewindRepo(raw: RewindRepoInput): Promise<RewindRepoResult> {
  const input = RewindRepoInputSchema.parse(raw);
  await assertGitRepo(input.repoPath);
  const current = await workingTreeHash(input.repoPath);
  const already = await refTarget(input.repoPath, input.savedRef);
  let savedCommit = already;
  if (savedCommit === null) {
    if (current !== input.lastTree && !input.force) {
      const files = await changedPaths(input.repoPath, input.lastTree, current);
      return { ok: false, files: files.slice(0, 20), count: files.length };
    }
    const latestTree = input.latest ? await refTarget(input.repoPath, `${input.latest}^{tree}`) : null;
    if (latestTree === current && input.latest) {
      // The latest checkpoint is the tree: the saved ref points at it, in one ref transaction with the drops.
      savedCommit = input.latest;
      const lines = [
        `update ${input.savedRef} ${savedCommit}`,
        ...input.drop.filter((r) => r !== input.savedRef).map((r) => `delete ${r}`),
      ];
      await git(input.repoPath, ['update-ref', '--stdin'], {}, `${lines.join('\n')}\n`);
    } else {
      savedCommit = (await createCheckpoint(input.repoPath, current, input.latest, input.savedRef, input.message, input.drop)).commit;
    }
  }
  const savedTree = (await refTarget(input.repoPath, `${savedCommit}^{tree}`)) ?? current;
  const changedFiles = await restoreWorkingTree(input.repoPath, input.target.tree, current);
  return { ok: true, savedCommit, savedTree, restoredTree: input.target.tree, changedFiles };
}

/** A checkpoint ref as the repository holds it (for `vigil checkpoints` without a worker). */
export interface CheckpointRef {
  ref: string;
  commit: string;
  tree: string;
  at: string;
  subject: string;
}

/** The refs under `prefix` (a run's `refs/vigil/<id>/`), oldest commit first. */
export async function listCheckpointRefs(repoPath: string, prefix: string): Promise<CheckpointRef[]> {
  const out = await git(repoPath, [
    'for-each-ref',
    '--sort=committerdate',
    '--format=%(refname)%00%(objectname)%00%(tree)%00%(committerdate:iso-strict)%00%(subject)',
    prefix,
  ]);
  return out
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [ref = '', commit = '', tree = '', at = '', subject = ''] = l.split('\0');
      return { ref, commit, tree, at, subject };
    });
}
