/**
 * Checkpoints of a run's working tree, as the run's inspection, a rewind and `vigil checkpoints`
 * make and restore them: a checkpoint commit of a tree under a ref, and the working tree put back
 * to a tree (`.vigil/` and ignored files left alone). Through the git helper (lib/git-helper.ts).
 */
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { helperCheckpoint } from './git-helper.js';
import { checkpointAsk, git, workingTreeHash } from './git.js';

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
