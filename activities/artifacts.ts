/**
 * Where a run keeps its files inside the repository: `.vigil/runs/<workflowId>/` holds prompts,
 * per-iteration agent logs and test logs; `.vigil/signals/` holds files agents write to talk to
 * Vigil. `.vigil/` is excluded from tree hashes and diffs and added to `.git/info/exclude`.
 * Folders are private and never links (see safe-files.ts): a repository that plants a link there
 * is refused, not followed.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES } from '../schemas/activities.js';
import { runDirPath, safeSegment, VIGIL_DIR } from '../schemas/paths.js';
import { ensurePrivateDir, UnsafePathError } from '../lib/safe-files.js';
import { privateRunDir, vigilHome } from '../lib/paths.js';

export { safeSegment, VIGIL_DIR };

export function runDir(repoPath: string, runId: string): string {
  return path.normalize(runDirPath(repoPath, runId));
}

/** Fails the activity for good (the workflow decides what a lost repository means for the run). */
export function repositoryGone(repoPath: string): never {
  throw ApplicationFailure.create({
    type: FAILURE_TYPES.notAGitRepository,
    nonRetryable: true,
    message: `the repository is gone: ${repoPath} does not exist (moved or deleted?)`,
  });
}

/** Fails the activity for good when the repository is gone. */
export function requireRepository(repoPath: string): void {
  if (!existsSync(repoPath)) repositoryGone(repoPath);
}

/** Creates (if needed) and returns a private folder under the repository, refusing links. */
export function ensureRepoDir(repoPath: string, dir: string): string {
  requireRepository(repoPath);
  try {
    return ensurePrivateDir(path.resolve(repoPath), path.resolve(dir));
  } catch (err) {
    if (err instanceof UnsafePathError) {
      throw ApplicationFailure.create({ type: FAILURE_TYPES.unsafeRepository, nonRetryable: true, message: err.message });
    }
    throw err;
  }
}

export function ensurePrivateRunDir(runId: string): string {
  const home = vigilHome();
  mkdirSync(home, { recursive: true, mode: 0o700 });
  return ensurePrivateDir(home, privateRunDir(runId));
}

export function ensureRunDir(repoPath: string, runId: string): string {
  return ensureRepoDir(repoPath, runDir(repoPath, runId));
}

export function signalPath(repoPath: string, name: string): string {
  return path.join(repoPath, VIGIL_DIR, 'signals', name);
}

export const pad = (n: number): string => String(n).padStart(4, '0');
