/**
 * Checkpoints in the repository: a commit of an inspected tree under a ref of the run, and the
 * restore of the working tree to one (for a rewind or a fork); the making and restoring are
 * lib/checkpoints.ts, the rewind activity is here.
 *
 * Git runs through the worker's git helper (lib/git-helper.ts), never spawned from the worker itself.
 * Nothing here touches the user's branch, HEAD, index or stash: commits are made with
 * `git commit-tree` from trees already in the object store (the inspection's `write-tree`), refs
 * live under `refs/vigil/`, and files are written from a temporary index.
 */
import { RewindRepoInputSchema, type RewindRepoInput, type RewindRepoResult } from '../schemas/activities.js';
import { asFailure } from './git-helper.js';
import * as lib from '../lib/checkpoints.js';
import { assertGitRepo, changedPaths, git, refTarget, workingTreeHash } from './git.js';

/** A checkpoint commit of a tree under a ref (lib/checkpoints.ts), a changed repository's git refused as a failure. */
export const createCheckpoint = (...a: Parameters<typeof lib.createCheckpoint>): Promise<{ commit: string; ref: string }> =>
  lib.createCheckpoint(...a).catch(asFailure);

/** The working tree put back to a tree (lib/checkpoints.ts), a changed repository's git refused as a failure. */
export const restoreWorkingTree = (...a: Parameters<typeof lib.restoreWorkingTree>): Promise<number> =>
  lib.restoreWorkingTree(...a).catch(asFailure);

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
