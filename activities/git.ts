/**
 * The git primitives (lib/git.ts) as the activities use them: the same calls, with a repository
 * whose git an agent changed refused as a non-retryable UnsafeRepository failure
 * (activities/git-helper.ts), and a folder that is not a repository as NotAGitRepository.
 */
import { existsSync } from 'node:fs';
import { ApplicationFailure } from '@temporalio/common';
import { FAILURE_TYPES } from '../schemas/activities.js';
import * as lib from '../lib/git.js';
import { asFailure, runGit } from './git-helper.js';

export { checkpointAsk, EXCLUDE, IDENTITY } from '../lib/git.js';

export const git = (...a: Parameters<typeof lib.git>): Promise<string> => lib.git(...a).catch(asFailure);
export const objectExists = (cwd: string, spec: string): Promise<boolean> => lib.objectExists(cwd, spec).catch(asFailure);
export const headSha = (cwd: string): Promise<string | null> => lib.headSha(cwd).catch(asFailure);
export const refTarget = (repoPath: string, ref: string): Promise<string | null> => lib.refTarget(repoPath, ref).catch(asFailure);
export const workingTreeHash = (repoPath: string): Promise<string> => lib.workingTreeHash(repoPath).catch(asFailure);
export const changedPaths = (repoPath: string, from: string, to: string): Promise<string[]> =>
  lib.changedPaths(repoPath, from, to).catch(asFailure);
export const readAtTree = (...a: Parameters<typeof lib.readAtTree>): Promise<string | null> => lib.readAtTree(...a).catch(asFailure);

export function notAGitRepository(repoPath: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FAILURE_TYPES.notAGitRepository,
    nonRetryable: true,
    message: `not a git working tree: ${repoPath} (run \`git init\` there, or point --repo at a repository)`,
  });
}

export function missingRepository(repoPath: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FAILURE_TYPES.notAGitRepository,
    nonRetryable: true,
    message: `repository path does not exist: ${repoPath}`,
  });
}

export async function assertGitRepo(repoPath: string): Promise<void> {
  if (!existsSync(repoPath)) throw missingRepository(repoPath);
  const r = await runGit(repoPath, ['rev-parse', '--is-inside-work-tree']);
  if (r.exitCode !== 0 || r.stdout.trim() !== 'true') throw notAGitRepository(repoPath);
}
