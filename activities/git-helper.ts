/**
 * The git helper (lib/git-helper.ts) as the activities use it: the same calls, with a repository
 * whose git an agent changed refused in Temporal's terms — a non-retryable UnsafeRepository
 * failure, over which the run pauses or ends (rules/repository.ts).
 */
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES } from '../schemas/activities.js';
import * as lib from '../lib/git-helper.js';

export { configureGitHelper, gitHelper, type CheckpointAsk, type GitInspection, type GitRun } from '../lib/git-helper.js';

/** The refusal of a repository whose git an agent changed: the run pauses or ends over it (rules/repository.ts). */
export function unsafeGit(repoPath: string, findings: readonly string[]): ApplicationFailure {
  return ApplicationFailure.create({
    type: FAILURE_TYPES.unsafeRepository,
    nonRetryable: true,
    message: new lib.UnsafeRepositoryError(repoPath, findings).message,
  });
}

/** Rethrows the library's refusal as the activities' failure; any other error as it is. */
export function asFailure(err: unknown): never {
  if (err instanceof lib.UnsafeRepositoryError) throw unsafeGit(err.repoPath, err.findings);
  throw err;
}

/** The environment for git commands in `cwd` (lib/git-helper.ts), the refusal as a failure. */
export function gitEnvFor(cwd: string): Record<string, string> {
  try {
    return lib.gitEnvFor(cwd);
  } catch (err) {
    return asFailure(err);
  }
}

export const runGit = (...a: Parameters<typeof lib.runGit>): Promise<lib.GitRun> => lib.runGit(...a).catch(asFailure);
export const helperTreeHash = (cwd: string): Promise<string> => lib.helperTreeHash(cwd).catch(asFailure);
export const helperInspect = (...a: Parameters<typeof lib.helperInspect>): Promise<lib.GitInspection> =>
  lib.helperInspect(...a).catch(asFailure);
export const helperCheckpoint = (...a: Parameters<typeof lib.helperCheckpoint>): Promise<string> =>
  lib.helperCheckpoint(...a).catch(asFailure);
